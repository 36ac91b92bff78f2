/*
 * test_driver_noplatform.c - without a usable OpenCL platform the CPU
 * driver refuses zeInit (ZE_RESULT_ERROR_UNINITIALIZED) and the loader
 * reports no driver. ZE_CPU_OPENCL_PLATFORM names a platform that does not
 * exist; it must be set before the loader initializes, hence a program of
 * its own.
 */
#include <check.h>
#include <level_zero/ze_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int main(void)
{
    const char *driver = getenv("SDPA_ZE_DRIVER");
    if (driver != NULL && strcmp(driver, "system") == 0)
        return 77; /* these tests check the CPU driver */
    Suite *s = suite_create("noplatform");
    TCase *tc = tcase_create("init");
    tcase_add_test(tc, no_platform_no_driver);
    suite_add_tcase(s, tc);
    SRunner *runner = srunner_create(s);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
