/*
 * t_errors.c - error paths: bad stype, NULL pointers and handles, handles of
 * the wrong kind, unknown kernel names, SPIR-V that fails to build,
 * invalid enumerations, command lists in the wrong state, bad kernel
 * arguments and memory requests, unsupported features. None may crash;
 * each must return the specified code. Lifetimes and wild handles are in
 * t_lifetime.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec_table.h"
#include "ze_test.h"

START_TEST(bad_stype)
{
    const ze_test_env_t *e = ze_test_env();
    ze_context_desc_t context_desc = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC};
    ze_context_handle_t context = NULL;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ARGUMENT,
              zeContextCreate(e->driver, &context_desc, &context));
    ze_device_properties_t props = {.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES};
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeDeviceGetProperties(e->device, &props));
    ze_device_compute_properties_t compute = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeDeviceGetComputeProperties(e->device, &compute));

    ze_module_desc_t module_desc = ze_test_probe_module_desc(16);
    module_desc.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC;
    ze_module_handle_t module = NULL;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ARGUMENT,
              zeModuleCreate(e->context, e->device, &module_desc, &module, NULL));

    ze_kernel_desc_t kernel_desc = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
                                    .pKernelName = "add_one"};
    ze_kernel_handle_t kernel = NULL;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ARGUMENT,
              zeKernelCreate(ze_test_probe_module(16, NULL), &kernel_desc, &kernel));

    ze_device_mem_alloc_desc_t mem_desc = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    void *ptr = NULL;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ARGUMENT,
              zeMemAllocDevice(e->context, &mem_desc, 64, 0, e->device, &ptr));
    ze_host_mem_alloc_desc_t host_desc = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ARGUMENT,
              zeMemAllocHost(e->context, &host_desc, 64, 0, &ptr));

    ze_command_queue_desc_t queue_desc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC};
    ze_command_queue_handle_t queue = NULL;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ARGUMENT,
              zeCommandQueueCreate(e->context, e->device, &queue_desc, &queue));
    ze_command_list_handle_t list = NULL;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ARGUMENT,
              zeCommandListCreateImmediate(e->context, e->device, &queue_desc, &list));
    ze_command_list_desc_t list_desc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC};
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ARGUMENT,
              zeCommandListCreate(e->context, e->device, &list_desc, &list));

    ze_event_pool_desc_t pool_desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .count = 1};
    ze_event_pool_handle_t pool = NULL;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ARGUMENT,
              zeEventPoolCreate(e->context, &pool_desc, 0, NULL, &pool));
    pool = ze_test_event_pool(1, 0);
    ze_event_desc_t event_desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC};
    ze_event_handle_t event = NULL;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeEventCreate(pool, &event_desc, &event));
    ZE_OK(zeEventPoolDestroy(pool));

    void *buf = ze_test_alloc_shared(64);
    ze_memory_allocation_properties_t alloc_props = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC};
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ARGUMENT,
              zeMemGetAllocProperties(e->context, buf, &alloc_props, NULL));
    ze_test_free(buf);

    kernel = ze_test_kernel(ze_test_probe_module(16, NULL), "add_one");
    ze_kernel_properties_t kernel_props = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeKernelGetProperties(kernel, &kernel_props));
    ZE_OK(zeKernelDestroy(kernel));
}
END_TEST

START_TEST(null_pointers)
{
    const ze_test_env_t *e = ze_test_env();
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeDriverGet(NULL, NULL));
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeDeviceGet(e->driver, NULL, NULL));
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeDeviceGetProperties(e->device, NULL));
    ze_context_desc_t context_desc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_POINTER,
              zeContextCreate(e->driver, &context_desc, NULL));
    ze_context_handle_t context = NULL;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeContextCreate(e->driver, NULL, &context));
    ze_module_handle_t module = NULL;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_POINTER,
              zeModuleCreate(e->context, e->device, NULL, &module, NULL));
    ze_module_desc_t module_desc = ze_test_probe_module_desc(16);
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_POINTER,
              zeModuleCreate(e->context, e->device, &module_desc, NULL, NULL));
    module_desc.pInputModule = NULL;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_POINTER,
              zeModuleCreate(e->context, e->device, &module_desc, &module, NULL));
    ze_device_mem_alloc_desc_t mem_desc = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_POINTER,
              zeMemAllocDevice(e->context, &mem_desc, 64, 0, e->device, NULL));
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeMemFree(e->context, NULL));
    ze_kernel_desc_t kernel_desc = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = NULL};
    ze_kernel_handle_t kernel = NULL;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_POINTER,
              zeKernelCreate(ze_test_probe_module(16, NULL), &kernel_desc, &kernel));
    kernel_desc.pKernelName = "add_one";
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_POINTER,
              zeKernelCreate(ze_test_probe_module(16, NULL), &kernel_desc, NULL));
    kernel = ze_test_kernel(ze_test_probe_module(16, NULL), "add_one");
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_POINTER,
              zeCommandListAppendLaunchKernel(e->sync_list, kernel, NULL, NULL, 0, NULL));
    uint32_t x;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_POINTER,
              zeKernelSuggestGroupSize(kernel, 64, 1, 1, &x, NULL, &x));
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeKernelGetProperties(kernel, NULL));
    ZE_OK(zeKernelDestroy(kernel));
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_POINTER,
              zeCommandListAppendMemoryCopy(e->sync_list, NULL, &x, 4, NULL, 0, NULL));
    /* A wait count without a wait list. */
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_SIZE,
              zeCommandListAppendBarrier(e->sync_list, NULL, 2, NULL));
}
END_TEST

START_TEST(null_and_wrong_handles)
{
    const ze_test_env_t *e = ze_test_env();
    ze_device_properties_t props = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeDeviceGetProperties(NULL, &props));
    ze_context_desc_t context_desc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    ze_context_handle_t context = NULL;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeContextCreate(NULL, &context_desc, &context));
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeKernelSetGroupSize(NULL, 1, 1, 1));
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeEventHostSignal(NULL));
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeFenceQueryStatus(NULL));
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeCommandListClose(NULL));
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeModuleDestroy(NULL));
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeContextDestroy(NULL));

    /* Live handles of another kind: refused, not misread. */
    ze_module_handle_t module = ze_test_probe_module(16, NULL);
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
              zeKernelSetGroupSize((ze_kernel_handle_t)module, 1, 1, 1));
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeEventHostSignal((ze_event_handle_t)module));
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
              zeContextDestroy((ze_context_handle_t)e->sync_list));
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
              zeDeviceGetProperties((ze_device_handle_t)e->context, &props));
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
              zeCommandListAppendBarrier((ze_command_list_handle_t)module, NULL, 0, NULL));
}
END_TEST

START_TEST(unknown_kernel_name)
{
    ze_kernel_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = "no_such"};
    ze_kernel_handle_t kernel = NULL;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_KERNEL_NAME,
              zeKernelCreate(ze_test_probe_module(16, NULL), &desc, &kernel));
    ck_assert_ptr_null(kernel);
}
END_TEST

/* zeModuleCreate of words that must fail: MODULE_BUILD_FAILURE, no module,
 * and a log that says why. */
static void expect_build_failure(const char *what, const void *code, size_t size,
                                 const ze_module_constants_t *constants, const char *log_mentions)
{
    const ze_test_env_t *e = ze_test_env();
    ze_module_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
                             .format = ZE_MODULE_FORMAT_IL_SPIRV,
                             .inputSize = size,
                             .pInputModule = code,
                             .pConstants = constants};
    ze_module_handle_t module = (ze_module_handle_t)&desc;
    ze_module_build_log_handle_t log = NULL;
    ZE_EXPECT(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE,
              zeModuleCreate(e->context, e->device, &desc, &module, &log));
    ck_assert_ptr_null(module);
    ck_assert_ptr_nonnull(log);
    size_t log_size = 0;
    ZE_OK(zeModuleBuildLogGetString(log, &log_size, NULL));
    char *text = malloc(log_size);
    ZE_OK(zeModuleBuildLogGetString(log, &log_size, text));
    printf("%s: build log: %s", what, text);
    fflush(stdout);
    ck_assert_uint_gt(strlen(text), 0);
    ck_assert_msg(strstr(text, log_mentions) != NULL, "%s: log lacks \"%s\"", what, log_mentions);
    free(text);
    ZE_OK(zeModuleBuildLogDestroy(log));
}

START_TEST(spirv_that_fails_to_build)
{
    size_t size;
    const uint8_t *code = ze_test_probe_spirv(16, &size);
    uint32_t *words = malloc(size);
    memcpy(words, code, size);

    /* A capability no device has: the engine's compiler refuses it. */
    size_t at = 5;
    while (at < size / 4 && (words[at] & 0xffff) != 17 /* OpCapability */)
        at += words[at] >> 16;
    ck_assert_uint_lt(at, size / 4);
    words[at + 1] = 65529;
    expect_build_failure("unknown capability", words, size, NULL, "capability");

    /* Not SPIR-V at all; and SPIR-V cut short. */
    memset(words, 0x42, size);
    expect_build_failure("not SPIR-V", words, size, NULL, "not a SPIR-V module");
    memcpy(words, code, size);
    expect_build_failure("truncated", words, size / 2, NULL, "runs past the end");

    /* A SpecId the module does not have (as Intel's GPU driver, a failure). */
    uint32_t ids[1] = {99};
    int32_t value = 1;
    const void *values[1] = {&value};
    ze_module_constants_t constants = {1, ids, values};
    expect_build_failure("unknown SpecId", code, size, &constants, "99");
    free(words);
}
END_TEST

START_TEST(invalid_enumerations)
{
    const ze_test_env_t *e = ze_test_env();
    ze_module_desc_t module_desc = ze_test_probe_module_desc(16);
    module_desc.format = (ze_module_format_t)7;
    ze_module_handle_t module = NULL;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ENUMERATION,
              zeModuleCreate(e->context, e->device, &module_desc, &module, NULL));

    ze_command_queue_desc_t queue_desc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                          .mode = (ze_command_queue_mode_t)9};
    ze_command_queue_handle_t queue = NULL;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ENUMERATION,
              zeCommandQueueCreate(e->context, e->device, &queue_desc, &queue));
    queue_desc.mode = ZE_COMMAND_QUEUE_MODE_DEFAULT;
    queue_desc.priority = (ze_command_queue_priority_t)9;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ENUMERATION,
              zeCommandQueueCreate(e->context, e->device, &queue_desc, &queue));
    queue_desc.priority = ZE_COMMAND_QUEUE_PRIORITY_NORMAL;
    queue_desc.flags = 0x100;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ENUMERATION,
              zeCommandQueueCreate(e->context, e->device, &queue_desc, &queue));

    ze_command_list_desc_t list_desc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC,
                                        .flags = 0x100};
    ze_command_list_handle_t list = NULL;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ENUMERATION,
              zeCommandListCreate(e->context, e->device, &list_desc, &list));

    ze_event_pool_desc_t pool_desc = {
            .stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, .flags = 0x80, .count = 1};
    ze_event_pool_handle_t pool = NULL;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ENUMERATION,
              zeEventPoolCreate(e->context, &pool_desc, 0, NULL, &pool));

    ze_device_mem_alloc_desc_t mem_desc = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC,
                                           .flags = 0x100};
    void *ptr = NULL;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ENUMERATION,
              zeMemAllocDevice(e->context, &mem_desc, 64, 0, e->device, &ptr));

    ze_context_desc_t context_desc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC, .flags = 0x2};
    ze_context_handle_t context = NULL;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ENUMERATION,
              zeContextCreate(e->driver, &context_desc, &context));

    ze_kernel_desc_t kernel_desc = {
            .stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .flags = 0x10, .pKernelName = "add_one"};
    ze_kernel_handle_t kernel = NULL;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ENUMERATION,
              zeKernelCreate(ze_test_probe_module(16, NULL), &kernel_desc, &kernel));
    kernel = ze_test_kernel(ze_test_probe_module(16, NULL), "add_one");
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ENUMERATION, zeKernelSetCacheConfig(kernel, 0x8));
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ENUMERATION, zeKernelSetIndirectAccess(kernel, 0x8));
    ZE_OK(zeKernelSetIndirectAccess(kernel, ZE_KERNEL_INDIRECT_ACCESS_FLAG_DEVICE));
    ze_kernel_indirect_access_flags_t flags = 0;
    ZE_OK(zeKernelGetIndirectAccess(kernel, &flags));
    ck_assert_uint_eq(flags, ZE_KERNEL_INDIRECT_ACCESS_FLAG_DEVICE);
    ZE_OK(zeKernelDestroy(kernel));

    queue = ze_test_queue(ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
    ze_fence_desc_t fence_desc = {.stype = ZE_STRUCTURE_TYPE_FENCE_DESC, .flags = 0x4};
    ze_fence_handle_t fence = NULL;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ENUMERATION, zeFenceCreate(queue, &fence_desc, &fence));
    ZE_OK(zeCommandQueueDestroy(queue));

    void *buf = ze_test_alloc_shared(64);
    ZE_EXPECT(
            ZE_RESULT_ERROR_INVALID_ENUMERATION,
            zeCommandListAppendMemAdvise(e->sync_list, e->device, buf, 64, (ze_memory_advice_t)99));
    ZE_OK(zeCommandListAppendMemAdvise(e->sync_list, e->device, buf, 64,
                                       ZE_MEMORY_ADVICE_SET_READ_MOSTLY));
    ze_test_free(buf);
}
END_TEST

START_TEST(command_list_states)
{
    const ze_test_env_t *e = ze_test_env();
    ze_command_queue_handle_t queue = ze_test_queue(ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
    ze_command_list_handle_t list = ze_test_list();
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ARGUMENT,
              zeCommandQueueExecuteCommandLists(queue, 1, &list, NULL)); /* not closed */
    ZE_OK(zeCommandListClose(list));
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeCommandListAppendBarrier(list, NULL, 0, NULL));
    ZE_OK(zeCommandListReset(list));
    ZE_OK(zeCommandListAppendBarrier(list, NULL, 0, NULL));
    ZE_OK(zeCommandListClose(list));
    ZE_OK(zeCommandQueueExecuteCommandLists(queue, 1, &list, NULL));
    ZE_OK(zeCommandQueueSynchronize(queue, UINT64_MAX));
    ze_command_list_handle_t immediate = e->sync_list;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE,
              zeCommandQueueExecuteCommandLists(queue, 1, &immediate, NULL));
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_SIZE,
              zeCommandQueueExecuteCommandLists(queue, 0, &list, NULL));
    ze_command_queue_desc_t queue_desc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                          .ordinal = 1};
    ze_command_queue_handle_t other = NULL;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ARGUMENT,
              zeCommandQueueCreate(e->context, e->device, &queue_desc, &other));
    ZE_OK(zeCommandListDestroy(list));
    ZE_OK(zeCommandQueueDestroy(queue));
}
END_TEST

START_TEST(kernel_argument_errors)
{
    ze_device_compute_properties_t compute = {.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES};
    ZE_OK(zeDeviceGetComputeProperties(ze_test_env()->device, &compute));
    ze_kernel_handle_t kernel = ze_test_kernel(ze_test_probe_module(16, NULL), "local_reverse");
    void *ptr = NULL;
    int32_t value = 0;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX,
              zeKernelSetArgumentValue(kernel, 3, sizeof ptr, &ptr));
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE,
              zeKernelSetArgumentValue(kernel, 0, 4, &value));
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeKernelSetArgumentValue(kernel, 2, 64, &value));
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE,
              zeKernelSetArgumentValue(kernel, 2, 0, NULL));
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE,
              zeKernelSetArgumentValue(kernel, 2, (size_t)compute.maxSharedLocalMemory + 1, NULL));
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION, zeKernelSetGroupSize(kernel, 0, 1, 1));
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION,
              zeKernelSetGroupSize(kernel, compute.maxTotalGroupSize, 2, 1));
    uint32_t x, y, z;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION,
              zeKernelSuggestGroupSize(kernel, 0, 1, 1, &x, &y, &z));
    /* Argument 2 never set: the launch is refused before anything runs. */
    ZE_OK(zeKernelSetArgumentValue(kernel, 0, sizeof ptr, &ptr));
    ZE_OK(zeKernelSetArgumentValue(kernel, 1, sizeof ptr, &ptr));
    ze_group_count_t groups = {1, 1, 1};
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ARGUMENT,
              zeCommandListAppendLaunchKernel(ze_test_env()->sync_list, kernel, &groups, NULL, 0,
                                              NULL));
    ZE_OK(zeKernelDestroy(kernel));
}
END_TEST

START_TEST(memory_errors)
{
    const ze_test_env_t *e = ze_test_env();
    ze_device_mem_alloc_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
    void *ptr = NULL;
    ZE_EXPECT(ZE_RESULT_ERROR_UNSUPPORTED_SIZE,
              zeMemAllocDevice(e->context, &desc, 0, 0, e->device, &ptr));
    ZE_EXPECT(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT,
              zeMemAllocDevice(e->context, &desc, 64, 3, e->device, &ptr));
    ZE_EXPECT(ZE_RESULT_ERROR_UNSUPPORTED_SIZE,
              zeMemAllocDevice(e->context, &desc, (size_t)e->properties.maxMemAllocSize + 1, 0,
                               e->device, &ptr));
    desc.ordinal = 1;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ARGUMENT,
              zeMemAllocDevice(e->context, &desc, 64, 0, e->device, &ptr));

    int on_stack[4];
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeMemFree(e->context, on_stack));
    uint8_t *buf = ze_test_alloc_device(256);
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeMemFree(e->context, buf + 16));

    uint8_t pattern[256] = {0};
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_SIZE,
              zeCommandListAppendMemoryFill(e->sync_list, buf, pattern, 3, 96, NULL, 0, NULL));
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_SIZE,
              zeCommandListAppendMemoryFill(e->sync_list, buf, pattern, 256, 256, NULL, 0, NULL));
    ZE_EXPECT(ZE_RESULT_ERROR_OVERLAPPING_REGIONS,
              zeCommandListAppendMemoryCopy(e->sync_list, buf, buf + 8, 64, NULL, 0, NULL));
    ze_test_free(buf);
}
END_TEST

START_TEST(unsupported_features)
{
    const ze_test_env_t *e = ze_test_env();
    ze_image_desc_t image_desc = {.stype = ZE_STRUCTURE_TYPE_IMAGE_DESC,
                                  .type = ZE_IMAGE_TYPE_2D,
                                  .format = {.layout = ZE_IMAGE_FORMAT_LAYOUT_8},
                                  .width = 16,
                                  .height = 16,
                                  .depth = 1};
    ze_image_handle_t image = NULL;
    ZE_EXPECT(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE,
              zeImageCreate(e->context, e->device, &image_desc, &image));

    void *buf = ze_test_alloc_device(64);
    ze_ipc_mem_handle_t ipc;
    ZE_EXPECT(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, zeMemGetIpcHandle(e->context, buf, &ipc));
    ze_copy_region_t region = {0, 0, 0, 8, 1, 1};
    ZE_EXPECT(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE,
              zeCommandListAppendMemoryCopyRegion(e->sync_list, buf, &region, 8, 0, buf, &region, 8,
                                                  0, NULL, 0, NULL));
    ze_test_free(buf);
}
END_TEST

Suite *driver_errors_suite(void)
{
    const test_entry_t tests[] = {
            TEST_ONCE(bad_stype),
            TEST_ONCE(null_pointers),
            TEST_ONCE(null_and_wrong_handles),
            TEST_ONCE(unknown_kernel_name),
            TEST_ONCE(spirv_that_fails_to_build),
            TEST_ONCE(invalid_enumerations),
            TEST_ONCE(command_list_states),
            TEST_ONCE(kernel_argument_errors),
            TEST_ONCE(memory_errors),
            TEST_ONCE(unsupported_features),
    };
    Suite *s = suite_create("errors");
    test_add_case(s, "refusals", 0, tests, TEST_COUNT(tests));
    return s;
}
