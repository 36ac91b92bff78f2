/* test_config_env.c - strict parsing of SDPA_CONFIG, QUANTIZED_SDPA_CONFIG
 * and BWD_SDPA_CONFIG. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "config_env.h"
#include "core_fixtures.h"
#include "error.h"

#define FWD_FORMAT SDPA_FWD_CONFIG_FORMAT

static sdpa_status_t parse8(const char *text, int values[8])
{
    return sdpa_config_parse_ints("SDPA_CONFIG", text, FWD_FORMAT, values, 8);
}

/* Asserts that text is refused and the message says why, quotes text and
 * states the format. */
static void assert_refused(const char *text, const char *quoted, const char *why)
{
    int values[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
    ck_assert_int_eq(parse8(text, values), SDPA_ERROR_INVALID_CONFIG);
    const char *msg = sdpa_error_message();
    char expect[256];
    snprintf(expect, sizeof(expect), "SDPA_CONFIG = \"%s\": ", quoted);
    ck_assert_msg(strstr(msg, expect) == msg, "message \"%s\" lacks \"%s\"", msg, expect);
    ck_assert_msg(strstr(msg, why), "message \"%s\" lacks \"%s\"", msg, why);
    ck_assert_msg(strstr(msg, "expected 8 integers in 1..1024 separated by commas: " FWD_FORMAT),
                  "message \"%s\" lacks the format", msg);
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(values[i], -1); /* untouched */
}

START_TEST(valid_values)
{
    int v[8];
    ck_assert_int_eq(parse8("16,16,32,16,4,2,4,2", v), SDPA_SUCCESS);
    static const int expected[8] = {16, 16, 32, 16, 4, 2, 4, 2};
    ck_assert_mem_eq(v, expected, sizeof(expected));
    ck_assert_int_eq(parse8(" 1 ,\t2,3 , 4,5,6,7,+8\t", v), SDPA_SUCCESS);
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(v[i], i + 1);
    ck_assert_int_eq(parse8("1024,1,1,1,1,1,1,0001", v), SDPA_SUCCESS);
    ck_assert_int_eq(v[0], 1024);
    ck_assert_int_eq(v[7], 1);
}
END_TEST

START_TEST(wrong_item_counts)
{
    assert_refused("16,16,16", "16,16,16", "it has 3 items");
    assert_refused("1,2,3,4,5,6,7,8,9", "1,2,3,4,5,6,7,8,9", "it has 9 items");
    assert_refused("1,2,3,4,5,6,7,8,", "1,2,3,4,5,6,7,8,", "it has 9 items");
    assert_refused("16", "16", "it has 1 item;");
    assert_refused("   ", "   ", "it has 1 item;");
    /* Spaces instead of commas are not separators. */
    assert_refused("16 16 16 16 16 16 16 16", "16 16 16 16 16 16 16 16", "it has 1 item;");
}
END_TEST

START_TEST(junk)
{
    assert_refused("16,16,x,16,1,1,1,1", "16,16,x,16,1,1,1,1",
                   "item 3 (\"x\") is not a decimal integer");
    assert_refused("16,16,1.5,16,1,1,1,1", "16,16,1.5,16,1,1,1,1",
                   "item 3 (\"1.5\") is not a decimal integer");
    assert_refused("0x10,16,16,16,1,1,1,1", "0x10,16,16,16,1,1,1,1",
                   "item 1 (\"0x10\") is not a decimal integer");
    assert_refused("16,,16,16,1,1,1,1", "16,,16,16,1,1,1,1",
                   "item 2 (\"\") is not a decimal integer");
    assert_refused("16,16,16,16,1,1,1,1 2", "16,16,16,16,1,1,1,1 2",
                   "item 8 (\"1 2\") is not a decimal integer");
    assert_refused("16,16,16,16,1,1,1,-", "16,16,16,16,1,1,1,-",
                   "item 8 (\"-\") is not a decimal integer");
    assert_refused("16,16,16,16,1,1,1,1;", "16,16,16,16,1,1,1,1;",
                   "item 8 (\"1;\") is not a decimal integer");
}
END_TEST

START_TEST(out_of_range)
{
    assert_refused("-16,16,16,16,1,1,1,1", "-16,16,16,16,1,1,1,1",
                   "item 1 (\"-16\") is not positive");
    assert_refused("16,16,16,16,0,1,1,1", "16,16,16,16,0,1,1,1", "item 5 (\"0\") is not positive");
    assert_refused("16,16,16,16,1,1,1,1025", "16,16,16,16,1,1,1,1025",
                   "item 8 (\"1025\") is larger than 1024");
    assert_refused("99999999999999999999999,1,1,1,1,1,1,1", "99999999999999999999999,1,1,1,1,1,1,1",
                   "item 1 (\"99999999999999999999999\") is larger than 1024");
    assert_refused("1,1,1,1,1,1,1,-99999999999999999999999",
                   "1,1,1,1,1,1,1,-99999999999999999999999",
                   "item 8 (\"-99999999999999999999999\") is not positive");
}
END_TEST

START_TEST(unprintable_and_long_values_quoted_safely)
{
    assert_refused("16,16,\x01,16,1,1,1,1", "16,16,?,16,1,1,1,1", "item 3 (\"?\")");
    char long_value[400];
    memset(long_value, '7', sizeof(long_value) - 1);
    long_value[sizeof(long_value) - 1] = '\0';
    int v[8];
    ck_assert_int_eq(parse8(long_value, v), SDPA_ERROR_INVALID_CONFIG);
    const char *msg = sdpa_error_message();
    ck_assert_ptr_nonnull(strstr(msg, "77777...\": it has 1 item"));
    ck_assert_uint_lt(strlen(msg), 400);
}
END_TEST

START_TEST(env_forward_variable_depends_on_quantization)
{
    sdpa_fwd_config_t c;
    int found = -1;
    const char *name = NULL;
    fixture_setenv("SDPA_CONFIG", NULL);
    fixture_setenv("QUANTIZED_SDPA_CONFIG", NULL);
    ck_assert_int_eq(sdpa_fwd_config_from_env(0, &c, &found, &name), SDPA_SUCCESS);
    ck_assert_int_eq(found, 0);
    ck_assert_str_eq(name, "SDPA_CONFIG");

    fixture_setenv("SDPA_CONFIG", "16,16,32,16,4,2,4,2");
    ck_assert_int_eq(sdpa_fwd_config_from_env(0, &c, &found, &name), SDPA_SUCCESS);
    ck_assert_int_eq(found, 1);
    ck_assert_int_eq(c.unroll_m_vs, 32);
    ck_assert_int_eq(c.wg_m_kq, 4);
    ck_assert_int_eq(c.wg_n_vs, 2);
    /* A quantized problem ignores SDPA_CONFIG ... */
    ck_assert_int_eq(sdpa_fwd_config_from_env(1, &c, &found, &name), SDPA_SUCCESS);
    ck_assert_int_eq(found, 0);
    ck_assert_str_eq(name, "QUANTIZED_SDPA_CONFIG");
    /* ... and reads QUANTIZED_SDPA_CONFIG, which the others ignore. */
    fixture_setenv("SDPA_CONFIG", NULL);
    fixture_setenv("QUANTIZED_SDPA_CONFIG", "8,8,8,8,1,1,1,1");
    ck_assert_int_eq(sdpa_fwd_config_from_env(1, &c, &found, NULL), SDPA_SUCCESS);
    ck_assert_int_eq(found, 1);
    ck_assert_int_eq(c.unroll_m_kq, 8);
    ck_assert_int_eq(sdpa_fwd_config_from_env(0, &c, &found, NULL), SDPA_SUCCESS);
    ck_assert_int_eq(found, 0);

    /* Empty means unset; garbage is an error naming the variable. */
    fixture_setenv("QUANTIZED_SDPA_CONFIG", "");
    ck_assert_int_eq(sdpa_fwd_config_from_env(1, &c, &found, NULL), SDPA_SUCCESS);
    ck_assert_int_eq(found, 0);
    fixture_setenv("QUANTIZED_SDPA_CONFIG", "8,8");
    ck_assert_int_eq(sdpa_fwd_config_from_env(1, &c, &found, NULL), SDPA_ERROR_INVALID_CONFIG);
    ck_assert_int_eq(found, 0);
    ck_assert_ptr_eq(strstr(sdpa_error_message(), "QUANTIZED_SDPA_CONFIG = \"8,8\": it has 2"),
                     sdpa_error_message());
    fixture_setenv("QUANTIZED_SDPA_CONFIG", NULL);
}
END_TEST

START_TEST(env_backward)
{
    sdpa_bwd_config_t c;
    int found = -1;
    fixture_setenv("BWD_SDPA_CONFIG", NULL);
    ck_assert_int_eq(sdpa_bwd_config_from_env(&c, &found), SDPA_SUCCESS);
    ck_assert_int_eq(found, 0);
    fixture_setenv("BWD_SDPA_CONFIG", "16,32,16,16,32,32,2,4,4,2,2,4");
    ck_assert_int_eq(sdpa_bwd_config_from_env(&c, &found), SDPA_SUCCESS);
    ck_assert_int_eq(found, 1);
    ck_assert_int_eq(c.unroll_n_bcbr, 32);
    ck_assert_int_eq(c.wg_n_bcbr, 4);
    ck_assert_int_eq(c.wg_n_dbr, 4);
    /* The forward format is not enough. */
    fixture_setenv("BWD_SDPA_CONFIG", "16,16,32,16,4,2,4,2");
    ck_assert_int_eq(sdpa_bwd_config_from_env(&c, &found), SDPA_ERROR_INVALID_CONFIG);
    const char *msg = sdpa_error_message();
    ck_assert_ptr_eq(strstr(msg, "BWD_SDPA_CONFIG = \"16,16,32,16,4,2,4,2\": it has 8 items; "
                                 "expected 12 integers"),
                     msg);
    ck_assert_ptr_nonnull(strstr(msg, SDPA_BWD_CONFIG_FORMAT));
    fixture_setenv("BWD_SDPA_CONFIG", NULL);
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_ONCE(valid_values),
            TEST_ONCE(wrong_item_counts),
            TEST_ONCE(junk),
            TEST_ONCE(out_of_range),
            TEST_ONCE(unprintable_and_long_values_quoted_safely),
            TEST_ONCE(env_forward_variable_depends_on_quantization),
            TEST_ONCE(env_backward),
    };
    const test_suite_t suite = {.name = "config_env"};
    return test_run_table(&suite, tests, TEST_COUNT(tests));
}
