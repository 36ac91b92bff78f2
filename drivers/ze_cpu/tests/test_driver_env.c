/*
 * test_driver_env.c - environment variables the driver reads when it is
 * loaded or initialized, each in its own process: Check forks one per
 * test, before the loader has loaded anything.
 *
 * ZE_CPU_OPENCL_PLATFORM naming a platform that does not exist: the driver
 * refuses zeInit (ZE_RESULT_ERROR_UNINITIALIZED) and the loader reports no
 * driver. ZE_CPU_FAIL=function:nth[:result] arms a fault when the driver is
 * loaded, for programs that cannot call zexCpuFaultInject.
 */
#include <check.h>
#include <level_zero/ze_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zex_cpu.h"

START_TEST(no_platform_no_driver)
{
    setenv("ZE_CPU_OPENCL_PLATFORM", "no such OpenCL platform", 1);
    ze_result_t r = zeInit(0);
    printf("zeInit with ZE_CPU_OPENCL_PLATFORM=\"no such OpenCL platform\": 0x%x\n", (unsigned)r);
    ck_assert_int_eq(r, ZE_RESULT_ERROR_UNINITIALIZED);
    /* The loader unloads a driver whose zeInit failed but keeps calling its
     * table; the driver is linked -z nodelete so that this answers. */
    uint32_t count = 5;
    r = zeDriverGet(&count, NULL);
    printf("zeDriverGet: 0x%x, %u drivers\n", (unsigned)r, count);
    ck_assert_int_eq(r, ZE_RESULT_SUCCESS);
    ck_assert_uint_eq(count, 0);
}
END_TEST

START_TEST(environment_arms_a_fault)
{
    /* Call 2 of zeContextCreate gives ZE_RESULT_ERROR_DEVICE_LOST. */
    setenv("ZE_CPU_FAIL", "zeContextCreate:2:0x70000001", 1);
    ck_assert_int_eq(zeInit(0), ZE_RESULT_SUCCESS);
    uint32_t count = 1;
    ze_driver_handle_t driver = NULL;
    ck_assert_int_eq(zeDriverGet(&count, &driver), ZE_RESULT_SUCCESS);
    ze_context_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    ze_context_handle_t contexts[3] = {NULL, NULL, NULL};
    ck_assert_int_eq(zeContextCreate(driver, &desc, &contexts[0]), ZE_RESULT_SUCCESS);
    ck_assert_int_eq(zeContextCreate(driver, &desc, &contexts[1]), ZE_RESULT_ERROR_DEVICE_LOST);
    ck_assert_ptr_null(contexts[1]);
    ck_assert_int_eq(zeContextCreate(driver, &desc, &contexts[2]), ZE_RESULT_SUCCESS);

    zex_cpu_call_counts_fn counts = NULL;
    ck_assert_int_eq(
            zeDriverGetExtensionFunctionAddress(driver, ZEX_CPU_CALL_COUNTS_NAME, (void **)&counts),
            ZE_RESULT_SUCCESS);
    uint32_t n = 0;
    ck_assert_int_eq(counts(&n, NULL, NULL), ZE_RESULT_SUCCESS);
    const char **names = calloc(n, sizeof *names);
    uint64_t *calls = calloc(n, sizeof *calls);
    ck_assert_int_eq(counts(&n, names, calls), ZE_RESULT_SUCCESS);
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(names[i], "zeContextCreate") == 0)
            ck_assert_uint_eq(calls[i], 3);
    free(names);
    free(calls);
    ck_assert_int_eq(zeContextDestroy(contexts[0]), ZE_RESULT_SUCCESS);
    ck_assert_int_eq(zeContextDestroy(contexts[2]), ZE_RESULT_SUCCESS);
}
END_TEST

int main(void)
{
    const char *driver = getenv("SDPA_ZE_DRIVER");
    if (driver != NULL && strcmp(driver, "system") == 0)
        return 77; /* these tests check the CPU driver */
    Suite *s = suite_create("environment");
    TCase *tc = tcase_create("load");
    tcase_add_test(tc, no_platform_no_driver);
    tcase_add_test(tc, environment_arms_a_fault);
    suite_add_tcase(s, tc);
    SRunner *runner = srunner_create(s);
    if (srunner_fork_status(runner) == CK_NOFORK) {
        printf("SKIP: each test needs a process of its own (CK_FORK=no)\n");
        srunner_free(runner);
        return 77;
    }
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
