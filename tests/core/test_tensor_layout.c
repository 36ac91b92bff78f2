/* test_tensor_layout.c - row alignment, density and extent of tensors. */
#include <check.h>
#include <stdio.h>
#include <stdint.h>

#include "check_main.h"
#include "core_fixtures.h"
#include "size_math.h"
#include "tensor_layout.h"

static sdpa_tensor_desc_t strided(sdpa_dtype_t dtype, const int64_t dims[4],
                                  const int64_t strides[4])
{
    sdpa_tensor_desc_t t = {dtype,
                            {dims[0], dims[1], dims[2], dims[3]},
                            {strides[0], strides[1], strides[2], strides[3]}};
    return t;
}

/* Dense tensors: the alignment their rows (D elements apart) allow. */
static const struct dense_rows {
    sdpa_dtype_t dtype;
    int64_t dims[4];
    int alignment;
} dense_rows[] = {
        {SDPA_DTYPE_F16, {2, 8, 100, 64}, 128}, /* rows 128 bytes apart (the cap) */
        {SDPA_DTYPE_F16, {2, 8, 100, 40}, 16},  /* 80 bytes */
        {SDPA_DTYPE_F16, {2, 8, 100, 33}, 2},   /* 66 bytes */
        {SDPA_DTYPE_F32, {2, 8, 100, 3}, 4},    /* 12 bytes */
        {SDPA_DTYPE_U8, {1, 1, 10, 24}, 8},     /* 24 bytes */
        {SDPA_DTYPE_U4, {1, 1, 10, 24}, 4},     /* 12 bytes */
        {SDPA_DTYPE_F16, {1, 1, 1, 33}, 128},   /* one row of one matrix: unconstrained */
};

START_TEST(alignment_of_dense_rows)
{
    const struct dense_rows *r = &dense_rows[_i];
    sdpa_tensor_desc_t t = fixture_tensor(r->dtype, r->dims[0], r->dims[1], r->dims[2], r->dims[3]);
    ck_assert_int_eq(sdpa_tensor_row_alignment(&t), r->alignment);
}
END_TEST

START_TEST(alignment_counts_batch_and_head_strides)
{
    /* Rows 128 bytes apart, but heads start 130 * 64 + 1 elements apart. */
    sdpa_tensor_desc_t t =
            strided(SDPA_DTYPE_F16, (int64_t[]){2, 4, 130, 64}, (int64_t[]){4 * 8321, 8321, 64, 1});
    ck_assert_int_eq(sdpa_tensor_row_alignment(&t), 2);
    /* ... unless there is only one head and one batch. */
    t.dims[0] = t.dims[1] = 1;
    ck_assert_int_eq(sdpa_tensor_row_alignment(&t), 128);
    /* Interleaved heads ([B, S, H, D] in memory): row stride H * D. */
    t = strided(SDPA_DTYPE_BF16, (int64_t[]){2, 12, 100, 80},
                (int64_t[]){100 * 12 * 80, 80, 12 * 80, 1});
    ck_assert_int_eq(sdpa_tensor_row_alignment(&t), 32); /* heads 160 bytes apart */
    /* A broadcast (stride 0) axis does not constrain. */
    t = strided(SDPA_DTYPE_F32, (int64_t[]){4, 8, 16, 32}, (int64_t[]){0, 0, 32, 1});
    ck_assert_int_eq(sdpa_tensor_row_alignment(&t), 128);
}
END_TEST

START_TEST(alignment_of_transposed_and_strided)
{
    /* Transposed K [B, H, S, D] stored [B, H, D, S]: rows run along S. */
    sdpa_tensor_desc_t t = strided(SDPA_DTYPE_F16, (int64_t[]){1, 2, 300, 64},
                                   (int64_t[]){2 * 64 * 300, 64 * 300, 1, 300});
    ck_assert_int_eq(sdpa_tensor_row_alignment(&t), 8); /* 600 bytes */
    /* No unit stride at all: every element's offset counts. */
    t = strided(SDPA_DTYPE_F32, (int64_t[]){1, 1, 16, 16}, (int64_t[]){512, 512, 32, 2});
    ck_assert_int_eq(sdpa_tensor_row_alignment(&t), 8);
}
END_TEST

START_TEST(density)
{
    sdpa_tensor_desc_t t = fixture_tensor(SDPA_DTYPE_F32, 2, 3, 4, 5);
    ck_assert(sdpa_tensor_is_dense(&t));
    ck_assert_int_eq(sdpa_tensor_elements(&t), 120);
    /* Permuted but gap-free: dense. */
    t = strided(SDPA_DTYPE_F32, (int64_t[]){2, 3, 4, 5}, (int64_t[]){60, 5, 15, 1});
    ck_assert(sdpa_tensor_is_dense(&t));
    /* Padded rows: not dense. */
    t = strided(SDPA_DTYPE_F32, (int64_t[]){2, 3, 4, 5}, (int64_t[]){96, 32, 8, 1});
    ck_assert(!sdpa_tensor_is_dense(&t));
    /* A view of every other head (a Q/K/V slice of a fused buffer). */
    t = strided(SDPA_DTYPE_F32, (int64_t[]){2, 3, 4, 5}, (int64_t[]){120, 40, 5, 1});
    ck_assert(!sdpa_tensor_is_dense(&t));
    /* Overlapping (broadcast) axes: not dense. */
    t = strided(SDPA_DTYPE_F32, (int64_t[]){2, 3, 4, 5}, (int64_t[]){0, 20, 5, 1});
    ck_assert(!sdpa_tensor_is_dense(&t));
    /* Size-1 axes may have any stride. */
    t = strided(SDPA_DTYPE_F32, (int64_t[]){1, 3, 1, 5}, (int64_t[]){999, 5, 7, 1});
    ck_assert(sdpa_tensor_is_dense(&t));
}
END_TEST

START_TEST(span)
{
    sdpa_tensor_desc_t t = fixture_tensor(SDPA_DTYPE_F16, 2, 3, 4, 5);
    ck_assert_uint_eq(sdpa_tensor_span_bytes(&t), 240);
    t = fixture_tensor(SDPA_DTYPE_U4, 1, 1, 3, 5); /* 15 nibbles -> 8 bytes */
    ck_assert_uint_eq(sdpa_tensor_span_bytes(&t), 8);
    t = strided(SDPA_DTYPE_F32, (int64_t[]){2, 3, 4, 5}, (int64_t[]){96, 32, 8, 1});
    ck_assert_uint_eq(sdpa_tensor_span_bytes(&t), (96 + 64 + 24 + 4 + 1) * 4);
    t.dtype = SDPA_DTYPE_UNDEF;
    ck_assert_uint_eq(sdpa_tensor_span_bytes(&t), 0);
    /* 4 GiB exactly, and beyond what 64 bits hold. */
    t = fixture_tensor(SDPA_DTYPE_F16, 1, 64, 65536, 512);
    ck_assert_uint_eq(sdpa_tensor_span_bytes(&t), (uint64_t)1 << 32);
    t = strided(SDPA_DTYPE_F32, (int64_t[]){INT32_MAX, 2, 1, 1},
                (int64_t[]){INT64_MAX / 2, INT64_MAX / 2, 0, 0});
    ck_assert_uint_eq(sdpa_tensor_span_bytes(&t), UINT64_MAX);
}
END_TEST

START_TEST(sizes_saturate)
{
    /* Dense f32 [2^30, 2^24, 1, 512]: 2^63 elements, one more than int64
     * holds (density and the element count must not overflow on the way). */
    const int64_t b = (int64_t)1 << 30, h = (int64_t)1 << 24;
    sdpa_tensor_desc_t t =
            strided(SDPA_DTYPE_F32, (int64_t[]){b, h, 1, 512}, (int64_t[]){h * 512, 512, 512, 1});
    ck_assert(sdpa_tensor_is_dense(&t));
    ck_assert_int_eq(sdpa_tensor_elements(&t), INT64_MAX);
    ck_assert_uint_eq(sdpa_tensor_span_bytes(&t), SDPA_SIZE_OVERFLOW);
    /* The same as s4: 2^62 bytes, exact. */
    t.dtype = SDPA_DTYPE_S4;
    ck_assert_uint_eq(sdpa_tensor_span_bytes(&t), (uint64_t)1 << 62);

    /* Byte counts whose bit count would not fit in 64 bits. */
    ck_assert_uint_eq(sdpa_size_bytes((uint64_t)1 << 61, 32), (uint64_t)1 << 63);
    ck_assert_uint_eq(sdpa_size_bytes(((uint64_t)1 << 62) + 3, 4), ((uint64_t)1 << 61) + 2);
    ck_assert_uint_eq(sdpa_size_bytes((uint64_t)1 << 62, 32), SDPA_SIZE_OVERFLOW);
    ck_assert_uint_eq(sdpa_size_bytes(SDPA_SIZE_OVERFLOW, 8), SDPA_SIZE_OVERFLOW);
    ck_assert_uint_eq(sdpa_size_add(SDPA_SIZE_OVERFLOW, 0), SDPA_SIZE_OVERFLOW);
    ck_assert_uint_eq(sdpa_size_product((int64_t[]){3, -1}, 2), SDPA_SIZE_OVERFLOW);
    ck_assert_uint_eq(sdpa_size_span_elements((int64_t[]){2, 3, 4, 5}, (int64_t[]){96, 32, 8, 1}),
                      96 + 64 + 24 + 4 + 1);
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_LOOP(alignment_of_dense_rows, (int)TEST_COUNT(dense_rows)),
            TEST_ONCE(alignment_counts_batch_and_head_strides),
            TEST_ONCE(alignment_of_transposed_and_strided),
            TEST_ONCE(density),
            TEST_ONCE(span),
            TEST_ONCE(sizes_saturate),
    };
    const test_suite_t suite = {.name = "tensor_layout"};
    return test_run_table(&suite, tests, TEST_COUNT(tests));
}
