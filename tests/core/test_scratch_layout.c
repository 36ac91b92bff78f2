/* test_scratch_layout.c - scratch regions (scratch_layout.h): aligned,
 * overflow-checked, and the split-KV decode scratch laid out with them. */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "check_main.h"
#include "decode_plan.h"
#include "error.h"
#include "scratch_layout.h"
#include "size_math.h"

/* Regions start at multiples of the alignment, right after the last. */
START_TEST(regions_are_aligned_and_packed)
{
    size_t end = 0;
    sdpa_scratch_region_t a, b, c, d;
    ck_assert(sdpa_scratch_append(&end, &a, 10, sizeof(float)));
    ck_assert_uint_eq(a.offset, 0);
    ck_assert_uint_eq(a.bytes, 40);
    ck_assert_uint_eq(end, 40);
    ck_assert(sdpa_scratch_append(&end, &b, 64, sizeof(float)));
    ck_assert_uint_eq(b.offset, SDPA_SCRATCH_ALIGNMENT);
    ck_assert_uint_eq(b.bytes, 256);
    ck_assert_uint_eq(end, 512);
    /* At an aligned end: no padding. An empty region is absent. */
    ck_assert(sdpa_scratch_append(&end, &c, 0, sizeof(double)));
    ck_assert_uint_eq(c.offset, 512);
    ck_assert_uint_eq(c.bytes, 0);
    ck_assert(sdpa_scratch_append(&end, &d, 3, sizeof(int64_t)));
    ck_assert_uint_eq(d.offset, 512);
    ck_assert_uint_eq(end, 536);
}
END_TEST

/* A region past the largest buffer, or of a saturated count, fails and
 * leaves the layout as it was. */
START_TEST(overflow_fails_and_touches_nothing)
{
    const sdpa_scratch_region_t before = {7, 9};
    sdpa_scratch_region_t r = before;
    size_t end = 100;
    ck_assert(!sdpa_scratch_append(&end, &r, SDPA_SIZE_OVERFLOW, 1));
    ck_assert(!sdpa_scratch_append(&end, &r, UINT64_MAX / 2, sizeof(float)));
    ck_assert(!sdpa_scratch_append(&end, &r, SDPA_MAX_BUFFER_BYTES, 1)); /* + 256 of padding */
    ck_assert_uint_eq(end, 100);
    ck_assert_uint_eq(r.offset, before.offset);
    ck_assert_uint_eq(r.bytes, before.bytes);
    end = (size_t)SDPA_MAX_BUFFER_BYTES;
    ck_assert(!sdpa_scratch_append(&end, &r, 0, 1)); /* aligning alone passes the limit */
    ck_assert_uint_eq(end, (size_t)SDPA_MAX_BUFFER_BYTES);
    /* Exactly up to the limit passes. */
    end = 0;
    ck_assert(sdpa_scratch_append(&end, &r, SDPA_MAX_BUFFER_BYTES, 1));
    ck_assert_uint_eq(end, (size_t)SDPA_MAX_BUFFER_BYTES);
}
END_TEST

/* Split-KV decode: n f32 states, then the n log-sum-exps at the next
 * aligned offset; nothing unsplit; a refusal naming the split count where
 * the states would not fit a buffer. */
START_TEST(decode_split_scratch)
{
    sdpa_shape_t s = {3, 5, 1, 5, 1, 100, 8, 40}; /* 15 rows of Dv = 40 (D = 8) */
    size_t bytes = 1, lse = 1;
    ck_assert_int_eq(sdpa_decode_scratch_plan(&s, 1, &bytes, &lse), SDPA_SUCCESS);
    ck_assert_uint_eq(bytes, 0);
    ck_assert_uint_eq(lse, 0);
    ck_assert_int_eq(sdpa_decode_scratch_plan(&s, 3, &bytes, &lse), SDPA_SUCCESS);
    const size_t states = 3 * 15 * 40 * sizeof(float); /* 7200: not a multiple of 256 */
    ck_assert_uint_eq(lse, (states + 255) / 256 * 256);
    ck_assert_uint_eq(bytes, lse + 3 * 15 * sizeof(float));

    const sdpa_shape_t huge = {INT32_MAX, INT32_MAX, 1, INT32_MAX, 1, 1, 512, 512};
    ck_assert_int_eq(sdpa_decode_scratch_plan(&huge, 16, &bytes, &lse), SDPA_ERROR_UNSUPPORTED);
    ck_assert_msg(strstr(sdpa_error_message(), "num_splits = 16") != NULL, "%s",
                  sdpa_error_message());
    ck_assert_uint_eq(bytes, 0);
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_ONCE(regions_are_aligned_and_packed),
            TEST_ONCE(overflow_fails_and_touches_nothing),
            TEST_ONCE(decode_split_scratch),
    };
    const test_suite_t suite = {.name = "scratch_layout"};
    return test_run_table(&suite, tests, TEST_COUNT(tests));
}
