/*
 * test_driver_engine.c - how the CPU driver finds its OpenCL engine
 * (engine_choice.c): ZE_CPU_OPENCL_ENGINE as a library, a directory or a
 * prefix, overriding OCL_ICD_VENDORS; the user's OCL_ICD_VENDORS otherwise
 * honoured; "system" skipping the configured default; a wrong value failing
 * zeInit. The loader and ocl-icd read their environment once per process, so
 * every case runs in its own forked child (forced, whatever CK_FORK says),
 * and this program never initializes Level Zero itself.
 *
 * Another library may call OpenCL first (Open MPI's hwloc does, in
 * MPI_Init): the ICD loader has then read OCL_ICD_VENDORS already, and the
 * driver must still find the engine it chose (it opens the library itself).
 *
 * The engine is the one configure found (ZE_CPU_DEFAULT_ENGINE); a build
 * configured --with-opencl-engine=system has none to point at and skips.
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <check.h>
#include <level_zero/ze_api.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "config.h"

#define NO_SUCH_ENGINE "/nonexistent/sdpa-ze/engine"

/* The configured engine library, one directory up (lib/) or two (prefix). */
static const char *engine_path(int levels_up)
{
    static char path[3][PATH_MAX]; /* the library's path is absolute */
    char *p = path[levels_up];
    snprintf(p, PATH_MAX, "%s", ZE_CPU_DEFAULT_ENGINE);
    for (int i = 0; i < levels_up; i++) {
        char *slash = strrchr(p, '/');
        if (slash != NULL && slash != p)
            *slash = '\0';
    }
    return p;
}

/* Sets (value non-NULL) or unsets the two variables the driver reads. */
static void set_engine_env(const char *engine, const char *vendors)
{
    if (engine)
        setenv("ZE_CPU_OPENCL_ENGINE", engine, 1);
    else
        unsetenv("ZE_CPU_OPENCL_ENGINE");
    if (vendors)
        setenv("OCL_ICD_VENDORS", vendors, 1);
    else
        unsetenv("OCL_ICD_VENDORS");
}

/* zeInit succeeds and the loader lists the CPU driver with its CPU device. */
static void assert_driver_found(void)
{
    ze_result_t r = zeInit(0);
    ck_assert_msg(r == ZE_RESULT_SUCCESS, "zeInit: 0x%x (ZE_CPU_OPENCL_ENGINE=%s)", (unsigned)r,
                  getenv("ZE_CPU_OPENCL_ENGINE") ? getenv("ZE_CPU_OPENCL_ENGINE") : "(unset)");
    uint32_t count = 1;
    ze_driver_handle_t driver = NULL;
    ck_assert_int_eq(zeDriverGet(&count, &driver), ZE_RESULT_SUCCESS);
    ck_assert_uint_eq(count, 1);
    ze_device_handle_t device = NULL;
    ck_assert_int_eq(zeDeviceGet(driver, &count, &device), ZE_RESULT_SUCCESS);
    ze_device_properties_t props = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
    ck_assert_int_eq(zeDeviceGetProperties(device, &props), ZE_RESULT_SUCCESS);
    ck_assert_int_eq(props.type, ZE_DEVICE_TYPE_CPU);
}

/* The driver's device computes: a context and a USM allocation of it. */
static void assert_device_works(void)
{
    uint32_t count = 1;
    ze_driver_handle_t driver = NULL;
    ck_assert_int_eq(zeDriverGet(&count, &driver), ZE_RESULT_SUCCESS);
    ze_device_handle_t device = NULL;
    ck_assert_int_eq(zeDeviceGet(driver, &count, &device), ZE_RESULT_SUCCESS);
    ze_context_desc_t cd = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    ze_context_handle_t context = NULL;
    ck_assert_int_eq(zeContextCreate(driver, &cd, &context), ZE_RESULT_SUCCESS);
    ze_host_mem_alloc_desc_t hd = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    void *p = NULL;
    ck_assert_int_eq(zeMemAllocHost(context, &hd, 4096, 64, &p), ZE_RESULT_SUCCESS);
    ck_assert_int_eq(zeMemFree(context, p), ZE_RESULT_SUCCESS);
    ck_assert_int_eq(zeContextDestroy(context), ZE_RESULT_SUCCESS);
}

/* Makes the ICD loader read its vendor list now, with vendors as
 * OCL_ICD_VENDORS (a file that does not exist: no platform), as a library
 * that calls OpenCL before zeInit would; then restores engine and unsets
 * OCL_ICD_VENDORS, as if the user had never set it. */
static void icd_loader_reads_first(const char *engine)
{
    set_engine_env(NULL, NO_SUCH_ENGINE ".icd");
    cl_uint platforms = 7;
    clGetPlatformIDs(0, NULL, &platforms);
    ck_assert_uint_eq(platforms, 0);
    set_engine_env(engine, NULL);
}

/* zeInit fails and the loader lists no driver. */
static void assert_no_driver(void)
{
    ck_assert_int_eq(zeInit(0), ZE_RESULT_ERROR_UNINITIALIZED);
    uint32_t count = 5;
    ck_assert_int_eq(zeDriverGet(&count, NULL), ZE_RESULT_SUCCESS);
    ck_assert_uint_eq(count, 0);
}

/* The driver pointed ocl-icd at the configured library, by absolute path. */
static void assert_vendors_is_engine(void)
{
    char expected[PATH_MAX];
    ck_assert_ptr_nonnull(realpath(ZE_CPU_DEFAULT_ENGINE, expected));
    const char *vendors = getenv("OCL_ICD_VENDORS");
    ck_assert_ptr_nonnull(vendors);
    ck_assert_str_eq(vendors, expected);
}

START_TEST(engine_names_the_library)
{
    set_engine_env(engine_path(0), NULL);
    assert_driver_found();
    assert_vendors_is_engine();
}
END_TEST

START_TEST(engine_names_the_library_directory)
{
    set_engine_env(engine_path(1), NULL);
    assert_driver_found();
    assert_vendors_is_engine();
}
END_TEST

START_TEST(engine_names_the_prefix)
{
    set_engine_env(engine_path(2), NULL);
    assert_driver_found();
    assert_vendors_is_engine();
}
END_TEST

START_TEST(engine_overrides_vendors)
{
    set_engine_env(engine_path(2), NO_SUCH_ENGINE ".icd");
    assert_driver_found();
    assert_vendors_is_engine();
}
END_TEST

START_TEST(engine_naming_nothing_fails_init)
{
    set_engine_env(NO_SUCH_ENGINE, NULL);
    assert_no_driver();
}
END_TEST

START_TEST(default_engine_when_nothing_is_set)
{
    set_engine_env(NULL, NULL);
    assert_driver_found();
    assert_vendors_is_engine();
}
END_TEST

/* The configured default, after the ICD loader has read its (empty) list. */
START_TEST(default_engine_after_the_icd_loader_read)
{
    icd_loader_reads_first(NULL);
    assert_driver_found();
    assert_device_works();
}
END_TEST

/* ZE_CPU_OPENCL_ENGINE, after the ICD loader has read its (empty) list. */
START_TEST(engine_after_the_icd_loader_read)
{
    icd_loader_reads_first(engine_path(2));
    assert_driver_found();
    assert_device_works();
}
END_TEST

/* The user's OCL_ICD_VENDORS wins over the configured default: a wrong one
 * leaves the driver without a platform. */
START_TEST(user_vendors_beat_the_default)
{
    set_engine_env(NULL, NO_SUCH_ENGINE ".icd");
    assert_no_driver();
}
END_TEST

START_TEST(system_takes_vendors)
{
    set_engine_env("system", ZE_CPU_DEFAULT_ENGINE);
    assert_driver_found();
}
END_TEST

/* "system" never falls back to the configured default. */
START_TEST(system_skips_the_default)
{
    set_engine_env("system", NO_SUCH_ENGINE ".icd");
    assert_no_driver();
}
END_TEST

int main(void)
{
    const char *driver = getenv("SDPA_ZE_DRIVER");
    if (driver != NULL && strcmp(driver, "system") == 0)
        return 77; /* these tests check the CPU driver */
    if (ZE_CPU_DEFAULT_ENGINE[0] == '\0') {
        printf("SKIP: configured --with-opencl-engine=system: no engine library to point at\n");
        return 77;
    }
    const test_entry_t tests[] = {
            TEST_ONCE(engine_names_the_library),
            TEST_ONCE(engine_names_the_library_directory),
            TEST_ONCE(engine_names_the_prefix),
            TEST_ONCE(engine_overrides_vendors),
            TEST_ONCE(engine_naming_nothing_fails_init),
            TEST_ONCE(default_engine_when_nothing_is_set),
            TEST_ONCE(default_engine_after_the_icd_loader_read),
            TEST_ONCE(engine_after_the_icd_loader_read),
            TEST_ONCE(user_vendors_beat_the_default),
            TEST_ONCE(system_takes_vendors),
            TEST_ONCE(system_skips_the_default),
    };
    const test_suite_t suite = {.name = "engine"};
    setenv("CK_FORK", "yes", 1); /* one process per case */
    return test_run_table(&suite, tests, TEST_COUNT(tests));
}
