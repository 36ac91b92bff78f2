/* test_philox.c - host Philox4x32-10 against the Random123 known-answer
 * vectors, and the dropout counter layout and keep rule of sdpa.h. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "check_main.h"
#include "philox.h"

/* Random123 kat_vectors, "philox4x32 10" lines: counter[4], key[2] -> out[4]. */
static const struct {
    uint32_t counter[4], key[2], expected[4];
} known_answers[] = {
        {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
        {{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
         {0xffffffffu, 0xffffffffu},
         {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
        {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
         {0xa4093822u, 0x299f31d0u},
         {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}},
};

START_TEST(test_known_answers)
{
    uint32_t out[4];
    sdpa_philox4x32_10(known_answers[_i].counter, known_answers[_i].key, out);
    for (int w = 0; w < 4; w++)
        ck_assert_msg(out[w] == known_answers[_i].expected[w],
                      "vector %d word %d: got 0x%08x, expected 0x%08x", _i, w, out[w],
                      known_answers[_i].expected[w]);
}
END_TEST

/* Word n of the stream is word n % 4 of the block at counter offset + n / 4
 * (low 32 bits first), keyed by the seed (low 32 bits first). */
START_TEST(test_counter_layout)
{
    const uint64_t seed = 0x243f6a8885a308d3ull, offset = 0x13198a2e03707344ull;
    for (uint64_t n = 0; n < 64; n += 7) {
        uint64_t c = offset + n / 4;
        uint32_t counter[4] = {(uint32_t)c, (uint32_t)(c >> 32), 0, 0};
        uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
        uint32_t block[4];
        sdpa_philox4x32_10(counter, key, block);
        ck_assert_uint_eq(sdpa_dropout_word(seed, offset, n), block[n % 4]);
    }
    /* Counter 0, key 0 is the first known answer. */
    ck_assert_uint_eq(sdpa_dropout_word(0, 0, 0), 0x6627e8d5u);
    ck_assert_uint_eq(sdpa_dropout_word(0, 0, 3), 0x9b00dbd8u);
    /* The 64-bit counter wraps. */
    ck_assert_uint_eq(sdpa_dropout_word(0, UINT64_MAX, 4), sdpa_dropout_word(0, 0, 0));
}
END_TEST

START_TEST(test_keep_rule)
{
    /* uniform = (word >> 8) * 2^-24, kept iff uniform >= p */
    ck_assert_int_eq(sdpa_dropout_keep(0x80000000u, 0.5f), 1);        /* exactly 0.5 */
    ck_assert_int_eq(sdpa_dropout_keep(0x7fffffffu, 0.5f), 0);        /* 0.5 - 2^-24 */
    ck_assert_int_eq(sdpa_dropout_keep(0x800000ffu, 0.5f), 1);        /* low 8 bits ignored */
    ck_assert_int_eq(sdpa_dropout_keep(0x00000000u, 0.0f), 1);        /* p = 0 keeps all */
    ck_assert_int_eq(sdpa_dropout_keep(0x000000ffu, 1e-9f), 0);       /* uniform 0 < p */
    ck_assert_int_eq(sdpa_dropout_keep(0xffffffffu, 0.99999994f), 1); /* 1 - 2^-24 */
}
END_TEST

START_TEST(test_keep_run_matches_words)
{
    const uint64_t seed = 42, offset = 5;
    const float p = 0.3f;
    uint8_t keep[37];
    for (uint64_t n0 = 0; n0 < 6; n0++) { /* every alignment within a block */
        sdpa_dropout_keep_run(seed, offset, n0, 37, p, keep);
        for (int i = 0; i < 37; i++)
            ck_assert_int_eq(
                    keep[i],
                    sdpa_dropout_keep(sdpa_dropout_word(seed, offset, n0 + (uint64_t)i), p));
    }
}
END_TEST

START_TEST(test_keep_fraction)
{
    enum { count = 200000 };
    uint8_t *keep = malloc(count);
    ck_assert_ptr_nonnull(keep);
    const float probabilities[] = {0.1f, 0.5f, 0.9f};
    for (int t = 0; t < 3; t++) {
        sdpa_dropout_keep_run(1234567, 0, 0, count, probabilities[t], keep);
        long kept = 0;
        for (int i = 0; i < count; i++)
            kept += keep[i];
        double fraction = (double)kept / count;
        /* binomial standard deviation < 0.0012 here; allow 5 sigma */
        ck_assert_double_eq_tol(fraction, 1.0 - probabilities[t], 0.006);
    }
    free(keep);
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_LOOP(test_known_answers, (int)TEST_COUNT(known_answers)),
            TEST_ONCE(test_counter_layout),
            TEST_ONCE(test_keep_rule),
            TEST_ONCE(test_keep_run_matches_words),
            TEST_ONCE(test_keep_fraction),
    };
    const test_suite_t suite = {.name = "philox"};
    return test_run_table(&suite, tests, TEST_COUNT(tests));
}
