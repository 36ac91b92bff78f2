/* test_bwd_scratch.c - backward scratch layouts and zero fills, atomic and
 * deterministic. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "bwd_plan.h"
#include "bwd_scratch.h"
#include "core_fixtures.h"
#include "error.h"

/* Regions are aligned, inside total_bytes, and pairwise disjoint. */
static void assert_layout_sound(const sdpa_bwd_scratch_t *s)
{
    const sdpa_scratch_region_t *regions[] = {&s->dq, &s->dk, &s->dv, &s->d_i, &s->strides};
    const size_t n = sizeof(regions) / sizeof(regions[0]);
    for (size_t i = 0; i < n; i++) {
        if (regions[i]->bytes == 0)
            continue;
        ck_assert_uint_eq(regions[i]->offset % SDPA_BWD_SCRATCH_ALIGNMENT, 0);
        ck_assert_uint_le(regions[i]->offset + regions[i]->bytes, s->total_bytes);
        for (size_t j = i + 1; j < n; j++) {
            if (regions[j]->bytes == 0)
                continue;
            int disjoint = regions[i]->offset + regions[i]->bytes <= regions[j]->offset ||
                           regions[j]->offset + regions[j]->bytes <= regions[i]->offset;
            ck_assert_msg(disjoint, "regions %zu and %zu overlap", i, j);
        }
    }
    ck_assert_uint_eq(s->strides.bytes, SDPA_BWD_STRIDES_COUNT * sizeof(int64_t));
    for (uint32_t i = 0; i < s->num_fills; i++)
        if (s->fills[i].buffer == SDPA_BWD_BUFFER_SCRATCH)
            ck_assert_uint_le(s->fills[i].offset + s->fills[i].bytes, s->total_bytes);
}

static void plan(const sdpa_problem_desc_t *p, const sdpa_shape_t *shape, sdpa_bwd_mode_t mode,
                 sdpa_bwd_scratch_t *s)
{
    sdpa_status_t status = sdpa_bwd_scratch_plan(p, shape, mode, 0, s);
    ck_assert_msg(status == SDPA_SUCCESS, "%s", sdpa_error_message());
    ck_assert_int_eq(s->mode, mode);
    assert_layout_sound(s);
}

START_TEST(atomic_f16_without_gqa)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t shape;
    fixture_problem(SDPA_DTYPE_F16, 2, 4, 4, 100, 300, 64, &p, &shape);
    fixture_make_backward(&p, SDPA_DTYPE_F16);
    sdpa_bwd_scratch_t s;
    plan(&p, &shape, SDPA_BWD_MODE_ATOMIC, &s);
    ck_assert(s.dq_f32_scratch);
    ck_assert(!s.dkv_f32_scratch);
    ck_assert(!s.dkv_atomic);
    ck_assert(!s.dkv_partials);
    ck_assert_uint_eq(s.dq.offset, 0);
    ck_assert_uint_eq(s.dq.bytes, 2 * 4 * 100 * 64 * 4);
    ck_assert_uint_eq(s.dk.bytes, 0);
    ck_assert_uint_eq(s.dv.bytes, 0);
    ck_assert_uint_eq(s.d_i.offset, 204800); /* 204800 is a multiple of 256 */
    ck_assert_uint_eq(s.d_i.bytes, 2 * 4 * 100 * 4);
    ck_assert_uint_eq(s.strides.offset, 204800 + 3328); /* 3200 rounded up to 256 */
    ck_assert_uint_eq(s.total_bytes, 204800 + 3328 + 256);
    ck_assert_uint_eq(s.num_fills, 1);
    ck_assert_int_eq(s.fills[0].buffer, SDPA_BWD_BUFFER_SCRATCH);
    ck_assert_uint_eq(s.fills[0].offset, s.dq.offset);
    ck_assert_uint_eq(s.fills[0].bytes, s.dq.bytes);
}
END_TEST

START_TEST(atomic_f32_adds_into_dense_outputs)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t shape;
    fixture_problem(SDPA_DTYPE_F32, 2, 8, 2, 33, 65, 40, &p, &shape);
    fixture_make_backward(&p, SDPA_DTYPE_F32);
    sdpa_bwd_scratch_t s;
    plan(&p, &shape, SDPA_BWD_MODE_ATOMIC, &s);
    ck_assert(!s.dq_f32_scratch);
    ck_assert(!s.dkv_f32_scratch);
    ck_assert(s.dkv_atomic);
    ck_assert_uint_eq(s.dq.bytes + s.dk.bytes + s.dv.bytes, 0);
    ck_assert_uint_eq(s.d_i.offset, 0);
    ck_assert_uint_eq(s.num_fills, 3);
    ck_assert_int_eq(s.fills[0].buffer, SDPA_BWD_BUFFER_DIFF_Q);
    ck_assert_uint_eq(s.fills[0].bytes, 2 * 8 * 33 * 40 * 4);
    ck_assert_int_eq(s.fills[1].buffer, SDPA_BWD_BUFFER_DIFF_K);
    ck_assert_uint_eq(s.fills[1].bytes, 2 * 2 * 65 * 40 * 4);
    ck_assert_int_eq(s.fills[2].buffer, SDPA_BWD_BUFFER_DIFF_V);
    ck_assert_uint_eq(s.fills[2].bytes, 2 * 2 * 65 * 40 * 4);
    for (int i = 0; i < 3; i++)
        ck_assert_uint_eq(s.fills[i].offset, 0);

    /* Without GQA only dQ is summed. */
    fixture_problem(SDPA_DTYPE_F32, 2, 8, 8, 33, 65, 40, &p, &shape);
    fixture_make_backward(&p, SDPA_DTYPE_F32);
    plan(&p, &shape, SDPA_BWD_MODE_ATOMIC, &s);
    ck_assert_uint_eq(s.num_fills, 1);
    ck_assert_int_eq(s.fills[0].buffer, SDPA_BWD_BUFFER_DIFF_Q);
}
END_TEST

START_TEST(atomic_f32_strided_outputs_use_scratch)
{
    /* dQ and dK are views with padded rows: filling their span would
     * clobber the padding, which may be someone else's data. */
    sdpa_problem_desc_t p;
    sdpa_shape_t shape;
    fixture_problem(SDPA_DTYPE_F32, 1, 4, 2, 16, 32, 64, &p, &shape);
    fixture_make_backward(&p, SDPA_DTYPE_F32);
    p.diff_q.strides[2] = 72;
    p.diff_q.strides[1] = 72 * 16;
    p.diff_q.strides[0] = 4 * 72 * 16;
    sdpa_bwd_scratch_t s;
    plan(&p, &shape, SDPA_BWD_MODE_ATOMIC, &s);
    ck_assert(s.dq_f32_scratch);
    ck_assert(!s.dkv_f32_scratch);
    ck_assert_uint_eq(s.num_fills, 3);
    ck_assert_int_eq(s.fills[0].buffer, SDPA_BWD_BUFFER_SCRATCH);
    ck_assert_int_eq(s.fills[1].buffer, SDPA_BWD_BUFFER_DIFF_K);

    p.diff_v.strides[1] *= 2; /* every other head of a larger buffer */
    plan(&p, &shape, SDPA_BWD_MODE_ATOMIC, &s);
    ck_assert(s.dkv_f32_scratch);
    ck_assert_uint_eq(s.dk.bytes, 2 * 32 * 64 * 4);
    ck_assert_uint_eq(s.dv.bytes, 2 * 32 * 64 * 4);
    ck_assert_uint_eq(s.num_fills, 3);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(s.fills[i].buffer, SDPA_BWD_BUFFER_SCRATCH);
    ck_assert_uint_eq(s.fills[1].offset, s.dk.offset);
    ck_assert_uint_eq(s.fills[2].offset, s.dv.offset);
    ck_assert_uint_eq(s.fills[2].bytes, s.dv.bytes);
}
END_TEST

START_TEST(atomic_bf16_with_gqa)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t shape;
    fixture_problem(SDPA_DTYPE_BF16, 1, 32, 8, 128, 128, 128, &p, &shape);
    fixture_make_backward(&p, SDPA_DTYPE_BF16);
    sdpa_bwd_scratch_t s;
    plan(&p, &shape, SDPA_BWD_MODE_ATOMIC, &s);
    ck_assert(s.dq_f32_scratch && s.dkv_f32_scratch && s.dkv_atomic);
    ck_assert_uint_eq(s.dq.bytes, 32 * 128 * 128 * 4);
    ck_assert_uint_eq(s.dk.bytes, 8 * 128 * 128 * 4);
    ck_assert_uint_eq(s.dv.bytes, 8 * 128 * 128 * 4);
    ck_assert_uint_eq(s.d_i.bytes, 32 * 128 * 4);
    ck_assert_uint_eq(s.num_fills, 3);
    ck_assert_uint_eq(s.total_bytes,
                      s.dq.bytes + s.dk.bytes + s.dv.bytes + s.d_i.bytes + s.strides.bytes);
}
END_TEST

START_TEST(deterministic_with_gqa_uses_partials_and_no_fills)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t shape;
    fixture_problem(SDPA_DTYPE_F16, 2, 12, 4, 77, 99, 80, &p, &shape);
    fixture_make_backward(&p, SDPA_DTYPE_F16);
    p.deterministic = 1;
    ck_assert_int_eq(sdpa_bwd_mode_of(&p), SDPA_BWD_MODE_DETERMINISTIC);
    sdpa_bwd_scratch_t s;
    plan(&p, &shape, SDPA_BWD_MODE_DETERMINISTIC, &s);
    ck_assert(!s.dq_f32_scratch);
    ck_assert(!s.dkv_atomic);
    ck_assert(s.dkv_partials);
    ck_assert(s.dkv_f32_scratch);
    ck_assert_uint_eq(s.dq.bytes, 0);
    /* One slice per query head: [B, Hq, Sk, D]. */
    ck_assert_uint_eq(s.dk.bytes, 2 * 12 * 99 * 80 * 4);
    ck_assert_uint_eq(s.dv.bytes, 2 * 12 * 99 * 80 * 4);
    ck_assert_uint_eq(s.num_fills, 0);

    /* f32 outputs change nothing: still no atomics, still partials. */
    fixture_make_backward(&p, SDPA_DTYPE_F32);
    plan(&p, &shape, SDPA_BWD_MODE_DETERMINISTIC, &s);
    ck_assert(s.dkv_partials);
    ck_assert_uint_eq(s.num_fills, 0);
}
END_TEST

START_TEST(deterministic_without_gqa_needs_only_d_i)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t shape;
    fixture_problem(SDPA_DTYPE_F16, 2, 4, 4, 100, 300, 64, &p, &shape);
    fixture_make_backward(&p, SDPA_DTYPE_F16);
    sdpa_bwd_scratch_t s;
    plan(&p, &shape, SDPA_BWD_MODE_DETERMINISTIC, &s);
    ck_assert(!s.dkv_partials && !s.dkv_f32_scratch && !s.dq_f32_scratch);
    ck_assert_uint_eq(s.dq.bytes + s.dk.bytes + s.dv.bytes, 0);
    ck_assert_uint_eq(s.d_i.offset, 0);
    ck_assert_uint_eq(s.total_bytes, 3328 + 256);
    ck_assert_uint_eq(s.num_fills, 0);
    /* Atomic mode needs more for the same problem. */
    sdpa_bwd_scratch_t atomic;
    plan(&p, &shape, SDPA_BWD_MODE_ATOMIC, &atomic);
    ck_assert_uint_gt(atomic.total_bytes, s.total_bytes);
}
END_TEST

START_TEST(refusals)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t shape;
    sdpa_bwd_scratch_t s;
    fixture_problem(SDPA_DTYPE_F16, 2, 4, 4, 100, 300, 64, &p, &shape);
    ck_assert_int_eq(sdpa_bwd_scratch_plan(&p, &shape, SDPA_BWD_MODE_ATOMIC, 0, &s),
                     SDPA_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(sdpa_error_message(), "prop_kind = 0"));

    /* Sizes beyond the address space (dims as large as a checked problem
     * allows). */
    fixture_make_backward(&p, SDPA_DTYPE_F16);
    shape = (sdpa_shape_t){INT32_MAX, INT32_MAX, 1, INT32_MAX, INT32_MAX, INT32_MAX, 512};
    ck_assert_int_eq(sdpa_bwd_scratch_plan(&p, &shape, SDPA_BWD_MODE_ATOMIC, 0, &s),
                     SDPA_ERROR_UNSUPPORTED);
    ck_assert_ptr_nonnull(
            strstr(sdpa_error_message(), "would exceed the largest addressable buffer"));
}
END_TEST

START_TEST(scratch_past_max_alloc_is_refused)
{
    /* Deterministic GQA: f32 partials [B, Hq, Sk, D] for dK and dV, 2 x 32
     * GiB here, more than the CPU device's 6 GiB allocations. */
    sdpa_problem_desc_t p;
    sdpa_shape_t shape;
    fixture_problem(SDPA_DTYPE_F16, 1, 64, 1, 64, 1 << 20, 128, &p, &shape);
    fixture_make_backward(&p, SDPA_DTYPE_F16);
    p.deterministic = 1;
    sdpa_device_info_t device;
    fixture_cpu_device(&device);
    sdpa_bwd_plan_t plan;
    ck_assert_int_eq(sdpa_bwd_plan_make(&p, &shape, &device, &plan), SDPA_ERROR_UNSUPPORTED);
    ck_assert_msg(strstr(sdpa_error_message(), "exceeds the device's largest allocation, "
                                               "6442450944 bytes (maxMemAllocSize)") != NULL,
                  "%s", sdpa_error_message());
    /* A device with larger allocations plans it. */
    device.max_alloc_bytes = (uint64_t)1 << 40;
    ck_assert_int_eq(sdpa_bwd_plan_make(&p, &shape, &device, &plan), SDPA_SUCCESS);
    ck_assert_uint_gt(plan.scratch.total_bytes, (uint64_t)64 << 30);
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("bwd_scratch");
    TCase *tc = tcase_create("bwd_scratch");
    tcase_add_test(tc, atomic_f16_without_gqa);
    tcase_add_test(tc, atomic_f32_adds_into_dense_outputs);
    tcase_add_test(tc, atomic_f32_strided_outputs_use_scratch);
    tcase_add_test(tc, atomic_bf16_with_gqa);
    tcase_add_test(tc, deterministic_with_gqa_uses_partials_and_no_fills);
    tcase_add_test(tc, deterministic_without_gqa_needs_only_d_i);
    tcase_add_test(tc, refusals);
    tcase_add_test(tc, scratch_past_max_alloc_is_refused);
    suite_add_tcase(suite, tc);
    return test_run_suite(suite);
}
