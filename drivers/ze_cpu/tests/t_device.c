/*
 * t_device.c - initialization, driver and device queries, and the engine's
 * capability table as the driver reports it (printed for doc/cpu-driver.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ze_test.h"

static bool library_loaded(const char *name)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4096];
    bool found = false;
    while (maps != NULL && !found && fgets(line, sizeof line, maps) != NULL)
        found = strstr(line, name) != NULL;
    if (maps != NULL)
        fclose(maps);
    return found;
}

START_TEST(init_is_idempotent)
{
    ZE_OK(zeInit(0));
    ZE_OK(zeInit(0));
    uint32_t count = 0;
    ZE_OK(zeDriverGet(&count, NULL));
    ck_assert_uint_eq(count, 1); /* ZE_ENABLE_ALT_DRIVERS names only ours */
    const ze_test_env_t *e = ze_test_env();
    ze_driver_handle_t again = NULL;
    count = 1;
    ZE_OK(zeDriverGet(&count, &again));
    ck_assert_ptr_eq(again, e->driver);

    ze_api_version_t version = 0;
    ZE_OK(zeDriverGetApiVersion(e->driver, &version));
    ck_assert_uint_eq(version, ZE_API_VERSION_1_4);
    ze_driver_properties_t props = {.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES};
    ZE_OK(zeDriverGetProperties(e->driver, &props));
    ck_assert_uint_ne(props.driverVersion, 0);
    ze_driver_ipc_properties_t ipc = {.stype = ZE_STRUCTURE_TYPE_DRIVER_IPC_PROPERTIES};
    ZE_OK(zeDriverGetIpcProperties(e->driver, &ipc));
    ck_assert_uint_eq(ipc.flags, 0);

    uint32_t num_ext = 0;
    ZE_OK(zeDriverGetExtensionProperties(e->driver, &num_ext, NULL));
    ze_driver_extension_properties_t ext[4];
    memset(ext, 0, sizeof ext);
    uint32_t asked = 4;
    ZE_OK(zeDriverGetExtensionProperties(e->driver, &asked, ext));
    ck_assert_uint_eq(asked, num_ext);
    for (uint32_t i = 0; i < num_ext; i++)
        printf("extension %s %u.%u\n", ext[i].name, ZE_MAJOR_VERSION(ext[i].version),
               ZE_MINOR_VERSION(ext[i].version));

#ifdef SDPA_TEST_VALIDATION_LAYER
    ck_assert_msg(library_loaded("libze_validation_layer"),
                  "ZE_ENABLE_VALIDATION_LAYER=1 but the layer is not loaded");
#endif
    printf("validation layer: %s\n",
           library_loaded("libze_validation_layer") ? "loaded" : "not loaded");
}
END_TEST

START_TEST(device_properties)
{
    const ze_test_env_t *e = ze_test_env();
    const ze_device_properties_t *p = &e->properties;
    ck_assert_int_eq(p->type, ZE_DEVICE_TYPE_CPU);
    ck_assert_uint_gt(strlen(p->name), 0);
    ck_assert_uint_gt(p->maxMemAllocSize, 0);
    ck_assert_uint_eq(p->timerResolution, 1); /* ns with the 1.0 stype */
    printf("device: %s (ZE_DEVICE_TYPE_CPU), vendor 0x%x, %u cores, max allocation %.1f GiB\n",
           p->name, p->vendorId, p->numSubslicesPerSlice, (double)p->maxMemAllocSize / (1u << 30));

    ze_device_properties_t p12 = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2};
    ZE_OK(zeDeviceGetProperties(e->device, &p12));
    ck_assert_uint_eq(p12.timerResolution, 1000000000u); /* cycles per second */

    uint32_t count = 7;
    ZE_OK(zeDeviceGetSubDevices(e->device, &count, NULL));
    ck_assert_uint_eq(count, 0);

    count = 0;
    ZE_OK(zeDeviceGetCommandQueueGroupProperties(e->device, &count, NULL));
    ck_assert_uint_eq(count, 1);
    ze_command_queue_group_properties_t group = {
            .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES};
    ZE_OK(zeDeviceGetCommandQueueGroupProperties(e->device, &count, &group));
    ck_assert(group.flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE);
    ck_assert(group.flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY);
    ck_assert_uint_ge(group.numQueues, 1);
    ck_assert_uint_ge(group.maxMemoryFillPatternSize, 16);

    count = 0;
    ZE_OK(zeDeviceGetMemoryProperties(e->device, &count, NULL));
    ck_assert_uint_eq(count, 1);
    ze_device_memory_properties_t mem = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES};
    ZE_OK(zeDeviceGetMemoryProperties(e->device, &count, &mem));
    ck_assert_uint_ge(mem.totalSize, p->maxMemAllocSize);

    ze_device_memory_access_properties_t access = {
            .stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_ACCESS_PROPERTIES};
    ZE_OK(zeDeviceGetMemoryAccessProperties(e->device, &access));
    ck_assert(access.deviceAllocCapabilities & ZE_MEMORY_ACCESS_CAP_FLAG_RW);
    ck_assert(access.hostAllocCapabilities & ZE_MEMORY_ACCESS_CAP_FLAG_RW);
    ck_assert(access.sharedSingleDeviceAllocCapabilities & ZE_MEMORY_ACCESS_CAP_FLAG_RW);

    count = 0;
    ZE_OK(zeDeviceGetCacheProperties(e->device, &count, NULL));
    ze_device_cache_properties_t cache = {.stype = ZE_STRUCTURE_TYPE_DEVICE_CACHE_PROPERTIES};
    if (count > 0)
        ZE_OK(zeDeviceGetCacheProperties(e->device, &count, &cache));

    ze_device_image_properties_t image = {.stype = ZE_STRUCTURE_TYPE_DEVICE_IMAGE_PROPERTIES};
    ZE_OK(zeDeviceGetImageProperties(e->device, &image));
    ck_assert_uint_eq(image.maxImageDims2D, 0); /* images are not supported */

    ze_bool_t peer = 0;
    ZE_OK(zeDeviceCanAccessPeer(e->device, e->device, &peer));
    ck_assert(peer);
    ZE_OK(zeDeviceGetStatus(e->device));

    uint64_t host0, dev0, host1, dev1;
    ZE_OK(zeDeviceGetGlobalTimestamps(e->device, &host0, &dev0));
    ze_test_sleep_ms(2);
    ZE_OK(zeDeviceGetGlobalTimestamps(e->device, &host1, &dev1));
    ck_assert_uint_ge(dev1 - dev0, 2000000u); /* ns */
}
END_TEST

static void print_fp_flags(const char *what, ze_device_fp_flags_t f)
{
    printf("  %-5s %s%s%s%s%s%s%s\n", what, f ? "" : "(none)",
           f & ZE_DEVICE_FP_FLAG_DENORM ? "denorm " : "",
           f & ZE_DEVICE_FP_FLAG_INF_NAN ? "inf-nan " : "",
           f & ZE_DEVICE_FP_FLAG_ROUND_TO_NEAREST ? "rte " : "",
           f & ZE_DEVICE_FP_FLAG_ROUND_TO_ZERO ? "rtz " : "",
           f & ZE_DEVICE_FP_FLAG_ROUND_TO_INF ? "rti " : "",
           f & ZE_DEVICE_FP_FLAG_FMA ? "fma" : "");
}

/* The capability table of doc/cpu-driver.md, as the driver reports it. */
START_TEST(capability_table)
{
    const ze_test_env_t *e = ze_test_env();
    ze_device_compute_properties_t compute = {.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES};
    ZE_OK(zeDeviceGetComputeProperties(e->device, &compute));
    ze_float_atomic_ext_properties_t atomics = {
            .stype = ZE_STRUCTURE_TYPE_FLOAT_ATOMIC_EXT_PROPERTIES};
    ze_device_module_properties_t module = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES,
                                            .pNext = &atomics};
    ZE_OK(zeDeviceGetModuleProperties(e->device, &module));
    ze_device_memory_access_properties_t access = {
            .stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_ACCESS_PROPERTIES};
    ZE_OK(zeDeviceGetMemoryAccessProperties(e->device, &access));

    bool sg8 = false, sg16 = false;
    printf("capabilities of %s through the CPU driver:\n", e->properties.name);
    printf("  SPIR-V up to %u.%u\n", ZE_MAJOR_VERSION(module.spirvVersionSupported),
           ZE_MINOR_VERSION(module.spirvVersionSupported));
    printf("  sub-group sizes:");
    for (uint32_t i = 0; i < compute.numSubGroupSizes; i++) {
        printf(" %u", compute.subGroupSizes[i]);
        sg8 |= compute.subGroupSizes[i] == 8;
        sg16 |= compute.subGroupSizes[i] == 16;
    }
    printf("\n  max work-group size %u (%u x %u x %u), local memory %u bytes\n",
           compute.maxTotalGroupSize, compute.maxGroupSizeX, compute.maxGroupSizeY,
           compute.maxGroupSizeZ, compute.maxSharedLocalMemory);
    printf("  module flags:%s%s%s%s\n", module.flags & ZE_DEVICE_MODULE_FLAG_FP16 ? " fp16" : "",
           module.flags & ZE_DEVICE_MODULE_FLAG_FP64 ? " fp64" : "",
           module.flags & ZE_DEVICE_MODULE_FLAG_INT64_ATOMICS ? " int64-atomics" : "",
           module.flags & ZE_DEVICE_MODULE_FLAG_DP4A ? " dp4a" : "");
    print_fp_flags("fp16", module.fp16flags);
    print_fp_flags("fp32", module.fp32flags);
    print_fp_flags("fp64", module.fp64flags);
    printf("  float atomics (fp16/fp32/fp64 flags): 0x%x 0x%x 0x%x\n", atomics.fp16Flags,
           atomics.fp32Flags, atomics.fp64Flags);
    printf("  USM caps host/device/shared/system: 0x%x 0x%x 0x%x 0x%x\n",
           access.hostAllocCapabilities, access.deviceAllocCapabilities,
           access.sharedSingleDeviceAllocCapabilities, access.sharedSystemAllocCapabilities);
    printf("  max kernel argument bytes %u, printf buffer %u bytes\n", module.maxArgumentsSize,
           module.printfBufferSize);

    /* What the attention kernels need. */
    ck_assert_uint_ge(module.spirvVersionSupported, ZE_MAKE_VERSION(1, 2));
    ck_assert_msg(sg8 && sg16, "sub-group sizes 8 and 16 are both needed");
    ck_assert_uint_ge(compute.maxTotalGroupSize, 256);
    ck_assert_uint_ge(compute.maxSharedLocalMemory, 64 * 1024);
    ck_assert(module.flags & ZE_DEVICE_MODULE_FLAG_FP16);
    ck_assert(module.fp32flags & ZE_DEVICE_FP_FLAG_ROUND_TO_NEAREST);
    ck_assert_uint_ge(module.maxArgumentsSize, 45 * 8);
    fflush(stdout);
}
END_TEST

Suite *driver_device_suite(void)
{
    const test_entry_t tests[] = {
            TEST_ONCE(init_is_idempotent),
            TEST_ONCE(device_properties),
            TEST_ONCE(capability_table),
    };
    Suite *s = suite_create("device");
    test_add_case(s, "queries", 0, tests, TEST_COUNT(tests));
    return s;
}
