/*
 * check_main.h - what every suite program's main does: a table of tests
 * becomes a Check test case, the suite runs, the result becomes the exit
 * status. Header-only, so that drivers/ze_cpu's tests use it too.
 */
#ifndef SDPA_TESTS_CHECK_MAIN_H
#define SDPA_TESTS_CHECK_MAIN_H

#include <check.h>
#include <stddef.h>

/* One row of a test table: a Check test and, for a loop test, how many
 * values of _i it runs with (0: a plain test, run once). */
typedef struct test_entry {
    const TTest *test;
    int loops;
} test_entry_t;

/* The two kinds of row: a test run once, a loop test run n times. */
#define TEST_ONCE(test)                                                                            \
    {                                                                                              \
        (test), 0                                                                                  \
    }
#define TEST_LOOP(test, n)                                                                         \
    {                                                                                              \
        (test), (n)                                                                                \
    }

/* The number of rows of a table (an array, not a pointer). */
#define TEST_COUNT(table) (sizeof(table) / sizeof((table)[0]))

/* Adds to suite a test case called name with the count tests of table and
 * a timeout of timeout seconds (0: Check's, CK_DEFAULT_TIMEOUT); returns
 * it, for fixtures. */
static inline TCase *test_add_case(Suite *suite, const char *name, double timeout,
                                   const test_entry_t *table, size_t count)
{
    TCase *tc = tcase_create(name);
    if (timeout > 0)
        tcase_set_timeout(tc, timeout);
    for (size_t i = 0; i < count; i++) {
        if (table[i].loops > 0)
            tcase_add_loop_test(tc, table[i].test, 0, table[i].loops);
        else
            tcase_add_test(tc, table[i].test);
    }
    suite_add_tcase(suite, tc);
    return tc;
}

/* Runs every test of suite (which it frees, with its runner) and returns 0
 * if all passed, else 1: `return test_run_suite(suite);`. */
static inline int test_run_suite(Suite *suite)
{
    SRunner *runner = srunner_create(suite);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? 1 : 0;
}

/* A suite program of one test case: its name (the suite's and the case's),
 * its timeout in seconds (0: Check's, CK_DEFAULT_TIMEOUT) and its
 * fixtures, NULL where none: open and close once for the case (Check's
 * unchecked fixture), setup and teardown around each test (checked). */
typedef struct test_suite {
    const char *name;
    double timeout;
    SFun open, close;
    SFun setup, teardown;
} test_suite_t;

/* The suite of desc with the table's tests in its one case; the case in
 * *tc unless tc is NULL, to add more. */
static inline Suite *test_suite_of(const test_suite_t *desc, const test_entry_t *table,
                                   size_t count, TCase **tc)
{
    Suite *suite = suite_create(desc->name);
    TCase *the_case = test_add_case(suite, desc->name, desc->timeout, table, count);
    if (desc->open || desc->close)
        tcase_add_unchecked_fixture(the_case, desc->open, desc->close);
    if (desc->setup || desc->teardown)
        tcase_add_checked_fixture(the_case, desc->setup, desc->teardown);
    if (tc)
        *tc = the_case;
    return suite;
}

/* The whole main of most suite programs: builds the suite of desc with the
 * table's tests and runs it as test_run_suite does. */
static inline int test_run_table(const test_suite_t *desc, const test_entry_t *table, size_t count)
{
    return test_run_suite(test_suite_of(desc, table, count, NULL));
}

#endif /* SDPA_TESTS_CHECK_MAIN_H */
