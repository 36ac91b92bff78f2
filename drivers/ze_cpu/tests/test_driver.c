/*
 * test_driver.c - the CPU Level Zero driver's test suite, run through the
 * real loader (ZE_ENABLE_ALT_DRIVERS, set by tests/Makefile.am).
 *
 * Built twice: test_driver, and test_driver_validation with
 * SDPA_TEST_VALIDATION_LAYER defined, which turns on the loader's
 * validation layer before the loader starts, so every test also passes
 * with the layer in front of the driver.
 *
 * Run under valgrind with CK_FORK=no (make check-valgrind-driver): the
 * tests then share one environment, destroyed before exit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ze_test.h"

int main(void)
{
    const char *driver = getenv("SDPA_ZE_DRIVER");
    if (driver != NULL && strcmp(driver, "system") == 0) {
        printf("SKIP: these tests check the CPU driver (SDPA_ZE_DRIVER=%s)\n", driver);
        return 77;
    }
#ifdef SDPA_TEST_VALIDATION_LAYER
    setenv("ZE_ENABLE_VALIDATION_LAYER", "1", 1);
    printf("ZE_ENABLE_VALIDATION_LAYER=1\n");
#endif
    SRunner *runner = srunner_create(driver_device_suite());
    srunner_add_suite(runner, driver_memory_suite());
    srunner_add_suite(runner, driver_module_suite());
    srunner_add_suite(runner, driver_kernel_suite());
    srunner_add_suite(runner, driver_ordering_suite());
    srunner_add_suite(runner, driver_errors_suite());
    srunner_add_suite(runner, driver_lifetime_suite());
    srunner_add_suite(runner, driver_hooks_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    ze_test_teardown();
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
