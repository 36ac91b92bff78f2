/*
 * t_native.c - native binaries: zeModuleGetNativeBinary of a specialized
 * module, a module created from it (in the same and in another context)
 * that keeps the constants and the kernels' argument kinds, and every
 * broken binary refused with ZE_RESULT_ERROR_INVALID_NATIVE_BINARY: bad
 * magic, another container version, truncated, corrupted, another engine,
 * a program binary the engine cannot load, SPIR-V passed as native.
 *
 * The container's layout is the one doc/cpu-driver.md documents ("Native
 * binaries"); the test rewrites fields at those offsets and recomputes the
 * documented checksum (FNV-1a 64 of the payload) where it must get past it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ze_test.h"

enum { HEADER_BYTES = 32, VERSION_AT = 8, CHECKSUM_AT = 24, IDENTITY_AT = HEADER_BYTES + 4 };

static const probe_constants_t constants = {-77, 4000000000u, -(1LL << 41), 2.5f, true};

/* The native binary of module, as a new buffer of *size bytes. */
static uint8_t *native_of(ze_module_handle_t module, size_t *size)
{
    *size = 0;
    ZE_OK(zeModuleGetNativeBinary(module, size, NULL));
    ck_assert_uint_gt(*size, HEADER_BYTES);
    uint8_t *bytes = malloc(*size);
    ck_assert_ptr_nonnull(bytes);
    size_t got = *size;
    ZE_OK(zeModuleGetNativeBinary(module, &got, bytes));
    ck_assert_uint_eq(got, *size);
    return bytes;
}

static ze_result_t create_native(ze_context_handle_t context, const uint8_t *bytes, size_t size,
                                 ze_module_handle_t *module, char **log_text)
{
    ze_module_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
                             .format = ZE_MODULE_FORMAT_NATIVE,
                             .inputSize = size,
                             .pInputModule = bytes};
    ze_module_build_log_handle_t log = NULL;
    *module = NULL;
    ze_result_t result = zeModuleCreate(context, ze_test_env()->device, &desc, module, &log);
    if (log_text != NULL) {
        size_t log_size = 0;
        ZE_OK(zeModuleBuildLogGetString(log, &log_size, NULL));
        *log_text = malloc(log_size);
        ZE_OK(zeModuleBuildLogGetString(log, &log_size, *log_text));
    }
    if (log != NULL)
        ZE_OK(zeModuleBuildLogDestroy(log));
    return result;
}

START_TEST(native_binary_round_trip)
{
    const ze_test_env_t *e = ze_test_env();
    size_t size = 0;
    uint8_t *bytes = native_of(ze_test_probe_module(16, &constants), &size);
    printf("native binary of spec_probe.0.16: %zu bytes\n", size);

    ze_module_handle_t module = NULL;
    ZE_OK(create_native(e->context, bytes, size, &module, NULL));
    /* spec_probe writes its constants through a pointer argument: the
     * constants baked into the binary, and the argument still known to be
     * a pointer. */
    ze_test_expect_constants("module from the native binary", module, &constants);

    /* The same kernels, with their parameter counts and sub-group size. */
    uint32_t count = 0;
    ZE_OK(zeModuleGetKernelNames(module, &count, NULL));
    ck_assert_uint_eq(count, 6);
    ze_kernel_handle_t kernel = ze_test_kernel(module, "many_args");
    ze_kernel_properties_t kp = {.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES};
    ZE_OK(zeKernelGetProperties(kernel, &kp));
    ck_assert_uint_eq(kp.numKernelArgs, 45);
    ZE_OK(zeKernelDestroy(kernel));
    kernel = ze_test_kernel(module, "subgroup_probe");
    ZE_OK(zeKernelGetProperties(kernel, &kp));
    ck_assert_uint_eq(kp.requiredSubgroupSize, 16);
    ZE_OK(zeKernelDestroy(kernel));

    /* A module from a native binary hands out a native binary too, and it
     * loads in another context of the driver. */
    size_t again_size = 0;
    uint8_t *again = native_of(module, &again_size);
    ze_context_desc_t cdesc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    ze_context_handle_t other = NULL;
    ZE_OK(zeContextCreate(e->driver, &cdesc, &other));
    ze_module_handle_t copy = NULL;
    ZE_OK(create_native(other, again, again_size, &copy, NULL));
    ZE_OK(zeModuleDestroy(copy));
    ZE_OK(zeContextDestroy(other));

    /* A buffer too small for the binary. */
    size_t small = size - 1;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_SIZE, zeModuleGetNativeBinary(module, &small, again));
    free(again);
    ZE_OK(zeModuleDestroy(module));
    free(bytes);
}
END_TEST

static uint64_t fnv1a64(const uint8_t *bytes, size_t size)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a 64's offset basis */
    for (size_t i = 0; i < size; i++)
        h = (h ^ bytes[i]) * 1099511628211ull;
    return h;
}

static void reseal(uint8_t *bytes, size_t size)
{
    uint64_t sum = fnv1a64(bytes + HEADER_BYTES, size - HEADER_BYTES);
    memcpy(bytes + CHECKSUM_AT, &sum, sizeof sum);
}

/* Expects bytes refused as a native binary, with a log that names why. */
static void expect_refused(const char *what, const uint8_t *bytes, size_t size, const char *reason)
{
    ze_module_handle_t module = NULL;
    char *log = NULL;
    ze_result_t result = create_native(ze_test_env()->context, bytes, size, &module, &log);
    printf("%s: %s: %s", what, ze_result_name(result), log);
    ck_assert_msg(result == ZE_RESULT_ERROR_INVALID_NATIVE_BINARY, "%s: %s", what,
                  ze_result_name(result));
    ck_assert_ptr_null(module);
    ck_assert_msg(strstr(log, reason) != NULL, "%s: the log does not say \"%s\": %s", what, reason,
                  log);
    free(log);
}

START_TEST(broken_native_binaries_are_refused)
{
    size_t size = 0;
    const uint8_t *good = native_of(ze_test_probe_module(16, &constants), &size);
    uint8_t *bad = malloc(size);

    memcpy(bad, good, size);
    bad[0] ^= 0xff;
    expect_refused("bad magic", bad, size, "bad magic");

    memcpy(bad, good, size);
    bad[VERSION_AT] += 1;
    expect_refused("next container version", bad, size, "container version");

    expect_refused("truncated by one byte", good, size - 1, "present");
    expect_refused("truncated to half", good, size / 2, "present");
    expect_refused("header only", good, HEADER_BYTES, "present");
    expect_refused("shorter than a header", good, HEADER_BYTES - 1, "truncated");

    memcpy(bad, good, size);
    bad[size / 2] ^= 0x10;
    expect_refused("one bit flipped", bad, size, "checksum");

    /* Another engine: the identity string differs, the checksum is right. */
    memcpy(bad, good, size);
    bad[IDENTITY_AT] ^= 0x20;
    reseal(bad, size);
    expect_refused("another engine", bad, size, "another engine");

    /* A well-formed container whose program binary the engine cannot load:
     * the ELF header of the program binary, at its end, zeroed. */
    uint64_t cl_size = 0;
    memcpy(bad, good, size);
    size_t cl_at = size;
    for (size_t at = HEADER_BYTES; at + 8 <= size; at++) {
        memcpy(&cl_size, bad + at, 8);
        if (cl_size > 0 && at + 8 + cl_size == size) {
            cl_at = at + 8;
            break;
        }
    }
    ck_assert_uint_lt(cl_at, size);
    memset(bad + cl_at, 0, 64);
    reseal(bad, size);
    expect_refused("program binary zeroed", bad, size, "clCreateProgramWithBinary");

    /* SPIR-V is not a native binary. */
    size_t spirv_size = 0;
    const uint8_t *spirv = ze_test_probe_spirv(16, &spirv_size);
    expect_refused("SPIR-V as native", spirv, spirv_size, "bad magic");

    free(bad);
    free((void *)good);
}
END_TEST

Suite *driver_native_suite(void)
{
    const test_entry_t tests[] = {
            TEST_ONCE(native_binary_round_trip),
            TEST_ONCE(broken_native_binaries_are_refused),
    };
    Suite *s = suite_create("native");
    test_add_case(s, "binaries", 0, tests, TEST_COUNT(tests));
    return s;
}
