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

/* Plans with dq_slices partial dQ slices and checks the layout. */
static void plan_sliced(const sdpa_problem_desc_t *p, const sdpa_shape_t *shape,
                        sdpa_bwd_mode_t mode, int64_t dq_slices, sdpa_bwd_scratch_t *s)
{
    sdpa_status_t status = sdpa_bwd_scratch_plan(p, shape, mode, dq_slices, s);
    ck_assert_msg(status == SDPA_SUCCESS, "%s", sdpa_error_message());
    ck_assert_int_eq(s->mode, mode);
    ck_assert_int_eq(s->dq_slices, dq_slices);
    assert_layout_sound(s);
}

static void plan(const sdpa_problem_desc_t *p, const sdpa_shape_t *shape, sdpa_bwd_mode_t mode,
                 sdpa_bwd_scratch_t *s)
{
    plan_sliced(p, shape, mode, 0, s);
}

/* What a scratch plan holds: which sums go through f32 scratch, atomics or
 * partials, the bytes of the dQ, dK and dV regions, and how many fills. */
typedef struct {
    int dq_f32_scratch, dkv_f32_scratch, dkv_atomic, dkv_partials;
    size_t dq_bytes, dk_bytes, dv_bytes;
    uint32_t num_fills;
} scratch_expect_t;

static void assert_scratch(const sdpa_bwd_scratch_t *s, const scratch_expect_t *e)
{
    ck_assert_int_eq(s->dq_f32_scratch, e->dq_f32_scratch);
    ck_assert_int_eq(s->dkv_f32_scratch, e->dkv_f32_scratch);
    ck_assert_int_eq(s->dkv_atomic, e->dkv_atomic);
    ck_assert_int_eq(s->dkv_partials, e->dkv_partials);
    ck_assert_uint_eq(s->dq.bytes, e->dq_bytes);
    ck_assert_uint_eq(s->dk.bytes, e->dk_bytes);
    ck_assert_uint_eq(s->dv.bytes, e->dv_bytes);
    ck_assert_uint_eq(s->num_fills, e->num_fills);
}

/* Fill i zeroes bytes of buffer from offset. */
static void assert_fill(const sdpa_bwd_scratch_t *s, uint32_t i, sdpa_bwd_buffer_t buffer,
                        size_t offset, size_t bytes)
{
    ck_assert_int_eq(s->fills[i].buffer, buffer);
    ck_assert_uint_eq(s->fills[i].offset, offset);
    ck_assert_uint_eq(s->fills[i].bytes, bytes);
}

START_TEST(atomic_f16_without_gqa)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t shape;
    fixture_backward_problem(SDPA_DTYPE_F16, 2, 4, 4, 100, 300, 64, &p, &shape);
    sdpa_bwd_scratch_t s;
    plan(&p, &shape, SDPA_BWD_MODE_ATOMIC, &s);
    assert_scratch(&s, &(scratch_expect_t){1, 0, 0, 0, 2 * 4 * 100 * 64 * 4, 0, 0, 1});
    ck_assert_uint_eq(s.dq.offset, 0);
    ck_assert_uint_eq(s.d_i.offset, 204800); /* 204800 is a multiple of 256 */
    ck_assert_uint_eq(s.d_i.bytes, 2 * 4 * 100 * 4);
    ck_assert_uint_eq(s.strides.offset, 204800 + 3328); /* 3200 rounded up to 256 */
    ck_assert_uint_eq(s.total_bytes, 204800 + 3328 + 256);
    assert_fill(&s, 0, SDPA_BWD_BUFFER_SCRATCH, s.dq.offset, s.dq.bytes);
}
END_TEST

START_TEST(atomic_f32_adds_into_dense_outputs)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t shape;
    fixture_backward_problem(SDPA_DTYPE_F32, 2, 8, 2, 33, 65, 40, &p, &shape);
    sdpa_bwd_scratch_t s;
    plan(&p, &shape, SDPA_BWD_MODE_ATOMIC, &s);
    assert_scratch(&s, &(scratch_expect_t){0, 0, 1, 0, 0, 0, 0, 3});
    ck_assert_uint_eq(s.d_i.offset, 0);
    assert_fill(&s, 0, SDPA_BWD_BUFFER_DIFF_Q, 0, 2 * 8 * 33 * 40 * 4);
    assert_fill(&s, 1, SDPA_BWD_BUFFER_DIFF_K, 0, 2 * 2 * 65 * 40 * 4);
    assert_fill(&s, 2, SDPA_BWD_BUFFER_DIFF_V, 0, 2 * 2 * 65 * 40 * 4);

    /* Without GQA only dQ is summed. */
    fixture_backward_problem(SDPA_DTYPE_F32, 2, 8, 8, 33, 65, 40, &p, &shape);
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
    fixture_backward_problem(SDPA_DTYPE_F32, 1, 4, 2, 16, 32, 64, &p, &shape);
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
    fixture_backward_problem(SDPA_DTYPE_BF16, 1, 32, 8, 128, 128, 128, &p, &shape);
    sdpa_bwd_scratch_t s;
    plan(&p, &shape, SDPA_BWD_MODE_ATOMIC, &s);
    assert_scratch(&s, &(scratch_expect_t){1, 1, 1, 0, 32 * 128 * 128 * 4, 8 * 128 * 128 * 4,
                                           8 * 128 * 128 * 4, 3});
    ck_assert_uint_eq(s.d_i.bytes, 32 * 128 * 4);
    ck_assert_uint_eq(s.total_bytes,
                      s.dq.bytes + s.dk.bytes + s.dv.bytes + s.d_i.bytes + s.strides.bytes);
}
END_TEST

START_TEST(deterministic_with_gqa_uses_partials_and_no_fills)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t shape;
    fixture_backward_problem(SDPA_DTYPE_F16, 2, 12, 4, 77, 99, 80, &p, &shape);
    p.deterministic = 1;
    ck_assert_int_eq(sdpa_bwd_mode_of(&p), SDPA_BWD_MODE_DETERMINISTIC);
    sdpa_bwd_scratch_t s;
    plan(&p, &shape, SDPA_BWD_MODE_DETERMINISTIC, &s);
    /* One slice per query head: [B, Hq, Sk, D]. */
    assert_scratch(
            &s, &(scratch_expect_t){0, 1, 0, 1, 0, 2 * 12 * 99 * 80 * 4, 2 * 12 * 99 * 80 * 4, 0});

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
    fixture_backward_problem(SDPA_DTYPE_F16, 2, 4, 4, 100, 300, 64, &p, &shape);
    sdpa_bwd_scratch_t s;
    plan(&p, &shape, SDPA_BWD_MODE_DETERMINISTIC, &s);
    assert_scratch(&s, &(scratch_expect_t){0, 0, 0, 0, 0, 0, 0, 0});
    ck_assert_uint_eq(s.d_i.offset, 0);
    ck_assert_uint_eq(s.total_bytes, 3328 + 256);
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
    shape = (sdpa_shape_t){INT32_MAX, INT32_MAX, 1, INT32_MAX, INT32_MAX, INT32_MAX, 512, 512};
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
    fixture_backward_problem(SDPA_DTYPE_F16, 1, 64, 1, 64, 1 << 20, 128, &p, &shape);
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

/* Partial dQ slices (bwd_scratch.h): region dq holds [B, Hq, slices, Sq, D]
 * f32, written whole by the main kernel, in either mode: no dQ fill. */
START_TEST(dq_slices_replace_the_dq_sums_in_both_modes)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t shape;
    fixture_backward_problem(SDPA_DTYPE_F16, 2, 4, 2, 100, 300, 64, &p, &shape);
    sdpa_bwd_scratch_t s;
    plan_sliced(&p, &shape, SDPA_BWD_MODE_ATOMIC, 3, &s);
    ck_assert(s.dq_f32_scratch);
    ck_assert_uint_eq(s.dq.offset, 0);
    ck_assert_uint_eq(s.dq.bytes, (size_t)2 * 4 * 3 * 100 * 64 * 4);
    /* GQA's atomic dK/dV sums keep their fills; dQ has none. */
    ck_assert(s.dkv_atomic && s.dkv_f32_scratch);
    ck_assert_uint_eq(s.num_fills, 2);
    for (uint32_t i = 0; i < s.num_fills; i++)
        ck_assert_uint_ne(s.fills[i].offset, s.dq.offset);

    /* f32 dense diff_q: the slices still go to the scratch. */
    fixture_make_backward(&p, SDPA_DTYPE_F32);
    plan_sliced(&p, &shape, SDPA_BWD_MODE_ATOMIC, 3, &s);
    ck_assert(s.dq_f32_scratch);
    ck_assert_uint_eq(s.dq.bytes, (size_t)2 * 4 * 3 * 100 * 64 * 4);
    ck_assert_uint_eq(s.num_fills, 2); /* diff_k, diff_v only */
    ck_assert_int_ne(s.fills[0].buffer, SDPA_BWD_BUFFER_DIFF_Q);
    ck_assert_int_ne(s.fills[1].buffer, SDPA_BWD_BUFFER_DIFF_Q);

    /* Deterministic: slices beside GQA's dK/dV partials, nothing filled. */
    p.deterministic = 1;
    plan(&p, &shape, SDPA_BWD_MODE_DETERMINISTIC, &s);
    ck_assert_uint_eq(s.dq.bytes, 0);
    plan_sliced(&p, &shape, SDPA_BWD_MODE_DETERMINISTIC, 3, &s);
    ck_assert(s.dkv_partials);
    ck_assert_uint_eq(s.dq.bytes, (size_t)2 * 4 * 3 * 100 * 64 * 4);
    ck_assert_uint_eq(s.dk.bytes, (size_t)2 * 4 * 300 * 64 * 4);
    ck_assert_uint_eq(s.num_fills, 0);
}
END_TEST

START_TEST(dq_slices_refused_with_varlen_or_below_zero)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t shape;
    sdpa_bwd_scratch_t s;
    fixture_backward_problem(SDPA_DTYPE_F16, 2, 4, 4, 100, 300, 64, &p, &shape);
    ck_assert_int_eq(sdpa_bwd_scratch_plan(&p, &shape, SDPA_BWD_MODE_ATOMIC, -1, &s),
                     SDPA_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(sdpa_error_message(), "dq_slices = -1"));
    p.varlen.enabled = 1;
    ck_assert_int_eq(sdpa_bwd_scratch_plan(&p, &shape, SDPA_BWD_MODE_ATOMIC, 2, &s),
                     SDPA_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(sdpa_error_message(), "dq_slices = 2"));
}
END_TEST

/* The choice (bwd_plan.h): ceil(Sk / Bc) slices up to
 * SDPA_BWD_DQ_PARTIALS_MAX_SLICES and SDPA_BWD_DQ_PARTIALS_MAX_BYTES, none
 * with varlen. */
START_TEST(dq_slices_bound)
{
    sdpa_device_info_t cpu;
    fixture_cpu_device(&cpu);
    sdpa_problem_desc_t p;
    sdpa_shape_t shape;
    fixture_backward_problem(SDPA_DTYPE_F16, 2, 4, 4, 100, 8 * 64, 64, &p, &shape);
    ck_assert_int_eq(SDPA_BWD_DQ_PARTIALS_MAX_SLICES, 8);
    ck_assert_int_eq(sdpa_bwd_dq_slices_for(&p, &shape, &cpu, 64), 8);
    ck_assert_int_eq(sdpa_bwd_dq_slices_for(&p, &shape, &cpu, 128), 4);
    ck_assert_int_eq(sdpa_bwd_dq_slices_for(&p, &shape, &cpu, 1000), 1);
    shape.k_len = 8 * 64 + 1; /* 9 key blocks */
    ck_assert_int_eq(sdpa_bwd_dq_slices_for(&p, &shape, &cpu, 64), 0);
    ck_assert_int_eq(sdpa_bwd_dq_slices_for(&p, &shape, &cpu, 128), 5);

    /* Bytes: 8 slices of B * Hq * Sq * D f32 = 256 MiB exactly, then one
     * query more. */
    shape = (sdpa_shape_t){1, 8, 8, 1, 8192, 8 * 64, 128, 128};
    ck_assert_uint_eq((uint64_t)8 * 8 * 8192 * 128 * 4, SDPA_BWD_DQ_PARTIALS_MAX_BYTES);
    ck_assert_int_eq(sdpa_bwd_dq_slices_for(&p, &shape, &cpu, 64), 8);
    shape.q_len = 8193;
    ck_assert_int_eq(sdpa_bwd_dq_slices_for(&p, &shape, &cpu, 64), 0);
    ck_assert_int_eq(sdpa_bwd_dq_slices_for(&p, &shape, &cpu, 128), 4);

    shape.q_len = 100;
    p.varlen.enabled = 1;
    ck_assert_int_eq(sdpa_bwd_dq_slices_for(&p, &shape, &cpu, 64), 0);

    /* GPUs: deterministic mode only (atomic mode measured on the CPU only). */
    p.varlen.enabled = 0;
    sdpa_device_info_t gpu;
    fixture_gpu_device(SDPA_DEVICE_CLASS_XE_HPG, &gpu);
    ck_assert_int_eq(sdpa_bwd_dq_slices_for(&p, &shape, &gpu, 64), 0);
    p.deterministic = 1;
    ck_assert_int_eq(sdpa_bwd_dq_slices_for(&p, &shape, &gpu, 64), 8);
    ck_assert_int_eq(sdpa_bwd_dq_slices_for(&p, &shape, &cpu, 64), 8);
}
END_TEST

/* The plan of a problem within the bound: slices in both modes, no dQ
 * pass, the postprocess summing a head's slices in order, the constant
 * set; past the bound, today's paths. */
START_TEST(plan_chooses_dq_slices)
{
    sdpa_device_info_t device;
    fixture_cpu_device(&device);
    sdpa_problem_desc_t p;
    sdpa_shape_t shape;
    sdpa_bwd_plan_t plan;
    for (int det = 0; det <= 1; det++) {
        fixture_backward_problem(SDPA_DTYPE_F16, 2, 4, 4, 100, 200, 64, &p, &shape);
        p.deterministic = det;
        ck_assert_int_eq(sdpa_bwd_plan_make(&p, &shape, &device, &plan), SDPA_SUCCESS);
        const int64_t bc = (int64_t)plan.config.unroll_m_bcbr * plan.config.wg_m_bcbr;
        const int64_t slices = (200 + bc - 1) / bc;
        ck_assert_int_eq(plan.scratch.dq_slices, slices);
        ck_assert(!plan.dq_pass);
        ck_assert_int_eq(plan.dq_target, SDPA_BWD_TARGET_SCRATCH);
        ck_assert(sdpa_spec_values_get_bool(&plan.constants, SDPA_SC_DQ_PARTIALS));
        ck_assert_ptr_nonnull(strstr(plan.config_string, " dq-slices "));
        /* Slice kb of head h is "head" h * slices + kb of DQ's strides. */
        ck_assert_int_eq(plan.strides[SDPA_BWD_STRIDE_DQ + 0], 4 * slices * 100 * 64);
        ck_assert_int_eq(plan.strides[SDPA_BWD_STRIDE_DQ + 1], 100 * 64);
        ck_assert_int_eq(plan.strides[SDPA_BWD_STRIDE_DQ + 2], 64);
        ck_assert_int_eq(plan.strides[SDPA_BWD_STRIDE_DQ + 3], 1);
        ck_assert_uint_eq(plan.num_posts, 1);
        const sdpa_bwd_post_t *post = &plan.posts[0];
        ck_assert_int_eq(post->dst, SDPA_BWD_BUFFER_DIFF_Q);
        ck_assert_int_eq(post->args.SLICES, slices);
        ck_assert_int_eq(post->args.SLICE_STRIDE, 100 * 64);
        ck_assert_int_eq(post->args.SRC_S0, 4 * slices * 100 * 64);
        ck_assert_int_eq(post->args.SRC_S1, slices * 100 * 64);
        ck_assert_int_eq(post->args.SRC_S2, 64);
        ck_assert_int_eq(post->args.SRC_S3, 1);
        ck_assert_uint_eq(post->group_count[1], 4);
        ck_assert_uint_eq(post->group_count[2], 2);

        /* Past the bound: the atomic sums, or the dQ pass. */
        shape.k_len = bc * SDPA_BWD_DQ_PARTIALS_MAX_SLICES + 1;
        p.k.dims[2] = p.v.dims[2] = p.diff_k.dims[2] = p.diff_v.dims[2] = shape.k_len;
        ck_assert_int_eq(sdpa_bwd_plan_make(&p, &shape, &device, &plan), SDPA_SUCCESS);
        ck_assert_int_eq(plan.scratch.dq_slices, 0);
        ck_assert_int_eq(plan.dq_pass, det);
        ck_assert_int_eq(plan.dq_target, det ? SDPA_BWD_TARGET_NONE : SDPA_BWD_TARGET_SCRATCH);
        ck_assert(!sdpa_spec_values_get_bool(&plan.constants, SDPA_SC_DQ_PARTIALS));
        ck_assert_ptr_null(strstr(plan.config_string, "dq-slices"));
    }
}
END_TEST

/* Slices that the device cannot allocate fall back to today's paths. */
START_TEST(dq_slices_past_max_alloc_fall_back)
{
    sdpa_device_info_t device;
    fixture_cpu_device(&device);
    sdpa_problem_desc_t p;
    sdpa_shape_t shape;
    sdpa_bwd_plan_t plan;
    fixture_backward_problem(SDPA_DTYPE_F16, 2, 4, 4, 100, 200, 64, &p, &shape);
    p.deterministic = 1;
    ck_assert_int_eq(sdpa_bwd_plan_make(&p, &shape, &device, &plan), SDPA_SUCCESS);
    ck_assert_int_gt(plan.scratch.dq_slices, 0);
    device.max_alloc_bytes = plan.scratch.total_bytes - 1;
    ck_assert_int_eq(sdpa_bwd_plan_make(&p, &shape, &device, &plan), SDPA_SUCCESS);
    ck_assert_int_eq(plan.scratch.dq_slices, 0);
    ck_assert(plan.dq_pass);
}
END_TEST

/* Tensor t laid out with its sequence axis contiguous: head-dim elements
 * seq apart (t's heads keep their size, so the layout stays valid). */
static void sequence_contiguous(sdpa_tensor_desc_t *t, int64_t seq)
{
    t->strides[3] = seq;
    t->strides[2] = 1;
}

/* The plan of p, and its BWD_UNIT_D_STRIDES. */
static int unit_d_strides_of(const sdpa_problem_desc_t *p, const sdpa_shape_t *shape,
                             sdpa_bwd_plan_t *plan)
{
    sdpa_device_info_t device;
    fixture_cpu_device(&device);
    ck_assert_int_eq(sdpa_bwd_plan_make(p, shape, &device, plan), SDPA_SUCCESS);
    return sdpa_spec_values_get_bool(&plan->constants, SDPA_SC_BWD_UNIT_D_STRIDES);
}

/* BWD_UNIT_D_STRIDES follows the strides the main and dQ kernels see: set
 * for dense tensors; cleared by an input or a directly written gradient
 * whose head-dim stride is not 1; still set when such a gradient goes
 * through a dense f32 buffer of the scratch. */
START_TEST(unit_d_strides_constant)
{
    sdpa_problem_desc_t p, t;
    sdpa_shape_t shape;
    sdpa_bwd_plan_t plan;
    fixture_backward_problem(SDPA_DTYPE_F16, 1, 2, 2, 64, 64, 32, &p, &shape);
    ck_assert(unit_d_strides_of(&p, &shape, &plan));

    t = p; /* transposed K */
    sequence_contiguous(&t.k, 64);
    ck_assert(!unit_d_strides_of(&t, &shape, &plan));

    t = p; /* dO with its head dimension strided (every other element) */
    for (int axis = 0; axis < 4; axis++)
        t.diff_dst.strides[axis] *= 2;
    ck_assert(!unit_d_strides_of(&t, &shape, &plan));

    t = p; /* dK, f16 without GQA: written directly by the main kernel */
    sequence_contiguous(&t.diff_k, 64);
    ck_assert(!unit_d_strides_of(&t, &shape, &plan));
    ck_assert_int_eq(plan.dkv_target, SDPA_BWD_TARGET_OUTPUT);

    t = p; /* dQ, atomic: added into dense f32 slices of the scratch */
    sequence_contiguous(&t.diff_q, 64);
    ck_assert(unit_d_strides_of(&t, &shape, &plan));
    ck_assert_int_eq(plan.dq_target, SDPA_BWD_TARGET_SCRATCH);
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_ONCE(atomic_f16_without_gqa),
            TEST_ONCE(atomic_f32_adds_into_dense_outputs),
            TEST_ONCE(atomic_f32_strided_outputs_use_scratch),
            TEST_ONCE(atomic_bf16_with_gqa),
            TEST_ONCE(deterministic_with_gqa_uses_partials_and_no_fills),
            TEST_ONCE(deterministic_without_gqa_needs_only_d_i),
            TEST_ONCE(refusals),
            TEST_ONCE(scratch_past_max_alloc_is_refused),
            TEST_ONCE(dq_slices_replace_the_dq_sums_in_both_modes),
            TEST_ONCE(dq_slices_refused_with_varlen_or_below_zero),
            TEST_ONCE(dq_slices_bound),
            TEST_ONCE(plan_chooses_dq_slices),
            TEST_ONCE(dq_slices_past_max_alloc_fall_back),
            TEST_ONCE(unit_d_strides_constant),
    };
    const test_suite_t suite = {.name = "bwd_scratch"};
    return test_run_table(&suite, tests, TEST_COUNT(tests));
}
