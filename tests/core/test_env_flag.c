/* test_env_flag.c - the one reading of a boolean environment variable
 * (sdpa_env_flag). */
#include <check.h>
#include <stdlib.h>

#include "check_main.h"
#include "env_flag.h"

#define VAR "SDPA_TEST_ENV_FLAG"

START_TEST(unset_and_empty_give_the_default)
{
    unsetenv(VAR);
    ck_assert_int_eq(sdpa_env_flag(VAR, 0), 0);
    ck_assert_int_eq(sdpa_env_flag(VAR, 1), 1);
    setenv(VAR, "", 1);
    ck_assert_int_eq(sdpa_env_flag(VAR, 0), 0);
    ck_assert_int_eq(sdpa_env_flag(VAR, 1), 1);
}
END_TEST

START_TEST(off_words_in_any_case)
{
    static const char *const off[] = {"0", "off", "OFF", "No", "false", "FALSE"};
    for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++) {
        setenv(VAR, off[i], 1);
        ck_assert_msg(sdpa_env_flag(VAR, 1) == 0, "%s", off[i]);
    }
}
END_TEST

START_TEST(anything_else_is_on)
{
    static const char *const on[] = {"1", "on", "yes", "true", "2", "00", "offline", " 0"};
    for (size_t i = 0; i < sizeof(on) / sizeof(on[0]); i++) {
        setenv(VAR, on[i], 1);
        ck_assert_msg(sdpa_env_flag(VAR, 0) == 1, "%s", on[i]);
    }
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_ONCE(unset_and_empty_give_the_default),
            TEST_ONCE(off_words_in_any_case),
            TEST_ONCE(anything_else_is_on),
    };
    const test_suite_t suite = {.name = "env_flag"};
    return test_run_table(&suite, tests, TEST_COUNT(tests));
}
