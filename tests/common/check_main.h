/*
 * check_main.h - the end of every suite program's main: run the suite with
 * Check and turn the result into the exit status.
 */
#ifndef SDPA_TESTS_CHECK_MAIN_H
#define SDPA_TESTS_CHECK_MAIN_H

#include <check.h>

/* Runs every test of suite (which it frees, with its runner) and returns 0
 * if all passed, else 1: `return test_run_suite(suite);`. */
int test_run_suite(Suite *suite);

#endif /* SDPA_TESTS_CHECK_MAIN_H */
