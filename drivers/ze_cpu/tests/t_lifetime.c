/*
 * t_lifetime.c - destruction orders real programs use, the refusals that
 * remain, and handles that are not (or no longer) handles.
 *
 * The orders come from public Level Zero programs: the loader's zello_world
 * destroys its context first, then its command list, event and pool;
 * Intel's conformance suite (level-zero-tests) destroys contexts while event
 * pools live (their pool objects are destroyed last), modules before their
 * kernels, and modules while a command list that ran still records a launch
 * (the barrier tests, ze_peak's kernel latency). Each is reproduced here
 * with our own code, and what the objects do afterwards is checked.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ze_test.h"

/* A context of its own, with the objects a program makes in it. */
typedef struct world {
    ze_context_handle_t context;
    ze_module_handle_t module;
    ze_kernel_handle_t kernel; /* add_one, arguments set to buf and buf + 64 */
    int32_t *buf;              /* 128 shared ints: 0..63 then zeros */
    ze_command_list_handle_t list;
    ze_command_queue_handle_t queue;
    ze_fence_handle_t fence;
    ze_event_pool_handle_t pool;
    ze_event_handle_t event;
} world_t;

static void make_world(world_t *w)
{
    const ze_test_env_t *e = ze_test_env();
    memset(w, 0, sizeof *w);
    ze_context_desc_t context_desc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    ZE_OK(zeContextCreate(e->driver, &context_desc, &w->context));
    ze_module_desc_t module_desc = ze_test_probe_module_desc(16);
    ZE_OK(zeModuleCreate(w->context, e->device, &module_desc, &w->module, NULL));
    w->kernel = ze_test_kernel(w->module, "add_one");
    ze_device_mem_alloc_desc_t device_desc = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
    ze_host_mem_alloc_desc_t host_desc = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    ZE_OK(zeMemAllocShared(w->context, &device_desc, &host_desc, 128 * sizeof(int32_t), 64,
                           e->device, (void **)&w->buf));
    for (int i = 0; i < 128; i++)
        w->buf[i] = i < 64 ? i : 0;
    int32_t *dst = w->buf + 64;
    ZE_OK(zeKernelSetArgumentValue(w->kernel, 0, sizeof w->buf, &w->buf));
    ZE_OK(zeKernelSetArgumentValue(w->kernel, 1, sizeof dst, &dst));
    ZE_OK(zeKernelSetGroupSize(w->kernel, 64, 1, 1));
    ze_command_list_desc_t list_desc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC};
    ZE_OK(zeCommandListCreate(w->context, e->device, &list_desc, &w->list));
    ze_command_queue_desc_t queue_desc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC};
    ZE_OK(zeCommandQueueCreate(w->context, e->device, &queue_desc, &w->queue));
    ze_fence_desc_t fence_desc = {.stype = ZE_STRUCTURE_TYPE_FENCE_DESC};
    ZE_OK(zeFenceCreate(w->queue, &fence_desc, &w->fence));
    ze_event_pool_desc_t pool_desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
                                      .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
                                      .count = 2};
    ZE_OK(zeEventPoolCreate(w->context, &pool_desc, 0, NULL, &w->pool));
    w->event = ze_test_event(w->pool, 0);
}

/* Destroys what is left of the world (fields set to NULL are gone),
 * children first. */
static void destroy_world(world_t *w)
{
    if (w->kernel != NULL)
        ZE_OK(zeKernelDestroy(w->kernel));
    if (w->module != NULL)
        ZE_OK(zeModuleDestroy(w->module));
    if (w->list != NULL)
        ZE_OK(zeCommandListDestroy(w->list));
    if (w->buf != NULL)
        ZE_OK(zeMemFree(w->context, w->buf));
    ZE_OK(zeEventDestroy(w->event));
    ZE_OK(zeEventPoolDestroy(w->pool));
    ZE_OK(zeFenceDestroy(w->fence));
    ZE_OK(zeCommandQueueDestroy(w->queue));
    ZE_OK(zeContextDestroy(w->context));
}

/* Records "launch add_one, signal event" in the world's list and closes it. */
static void record_launch(world_t *w)
{
    ze_group_count_t one = {1, 1, 1};
    ZE_OK(zeCommandListAppendLaunchKernel(w->list, w->kernel, &one, w->event, 0, NULL));
    ZE_OK(zeCommandListClose(w->list));
}

/* Runs the world's list on its queue with its fence; checks add_one ran. */
static void run_and_check(world_t *w)
{
    memset(w->buf + 64, 0, 64 * sizeof(int32_t));
    ZE_OK(zeFenceReset(w->fence));
    ZE_OK(zeEventHostReset(w->event));
    ZE_OK(zeCommandQueueExecuteCommandLists(w->queue, 1, &w->list, w->fence));
    ZE_OK(zeFenceHostSynchronize(w->fence, UINT64_MAX));
    ZE_OK(zeEventQueryStatus(w->event));
    for (int i = 0; i < 64; i++)
        ck_assert_int_eq(w->buf[64 + i], i + 1);
}

/* Issue 11, item 1: once the kernel handle is gone, a list that recorded a
 * launch of it (closed and never run, or run and synchronized) must not
 * keep the module from being destroyed, and still runs correctly. */
START_TEST(module_destroyed_while_a_list_records_a_launch)
{
    for (int ran_before = 0; ran_before < 2; ran_before++) {
        world_t w;
        make_world(&w);
        record_launch(&w);
        if (ran_before)
            run_and_check(&w);
        ZE_OK(zeKernelDestroy(w.kernel));
        ZE_OK(zeModuleDestroy(w.module));
        run_and_check(&w); /* the recorded launch kept what it needs */
        ZE_OK(zeCommandListReset(w.list));
        w.kernel = NULL;
        w.module = NULL;
        destroy_world(&w);
    }
}
END_TEST

/* The conformance suite's EventProfilingTests tear down the module before
 * its kernel: the kernel keeps working until it is destroyed. */
START_TEST(module_destroyed_before_its_kernel)
{
    world_t w;
    make_world(&w);
    ZE_OK(zeModuleDestroy(w.module));
    ze_kernel_properties_t props = {.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES};
    ZE_OK(zeKernelGetProperties(w.kernel, &props));
    ck_assert_uint_eq(props.numKernelArgs, 2);
    record_launch(&w);
    run_and_check(&w);
    ZE_OK(zeKernelDestroy(w.kernel));
    run_and_check(&w);
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeModuleDestroy(w.module));
    ze_kernel_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = "add_one"};
    ze_kernel_handle_t kernel = NULL;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeKernelCreate(w.module, &desc, &kernel));
    w.kernel = NULL;
    w.module = NULL;
    destroy_world(&w);
}
END_TEST

/* Issue 11, item 2: zello_world and the conformance fixtures destroy the
 * context while its objects live. The context handle dies; every object
 * created in it keeps working and can still be destroyed, in any order. */
START_TEST(context_destroyed_before_its_objects)
{
    const ze_test_env_t *e = ze_test_env();
    world_t w;
    make_world(&w);
    record_launch(&w);
    ze_command_queue_desc_t immediate_desc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                              .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS};
    ze_command_list_handle_t immediate = NULL;
    ZE_OK(zeCommandListCreateImmediate(w.context, e->device, &immediate_desc, &immediate));

    ZE_OK(zeContextDestroy(w.context));
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeContextGetStatus(w.context));
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeContextDestroy(w.context));
    ze_command_list_desc_t list_desc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC};
    ze_command_list_handle_t list = NULL;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
              zeCommandListCreate(w.context, e->device, &list_desc, &list));
    /* Memory of the context lives with it: its handle cannot free it. */
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeMemFree(w.context, w.buf));

    run_and_check(&w);
    /* An immediate list of the dead context still runs appends. */
    memset(w.buf + 64, 0, 64 * sizeof(int32_t));
    ze_group_count_t one = {1, 1, 1};
    ZE_OK(zeEventHostReset(w.event));
    ZE_OK(zeCommandListAppendLaunchKernel(immediate, w.kernel, &one, w.event, 0, NULL));
    ZE_OK(zeEventHostSynchronize(w.event, UINT64_MAX));
    ck_assert_int_eq(w.buf[64 + 63], 64);

    /* zello_world's order after the context: list, event, pool; the rest
     * parents first. */
    ZE_OK(zeCommandListDestroy(immediate));
    ZE_OK(zeEventPoolDestroy(w.pool)); /* before its event */
    ZE_OK(zeEventHostSignal(w.event));
    ZE_OK(zeEventQueryStatus(w.event));
    ZE_OK(zeEventDestroy(w.event));
    ZE_OK(zeCommandQueueDestroy(w.queue)); /* before its fence */
    ZE_OK(zeFenceQueryStatus(w.fence));
    ZE_OK(zeFenceDestroy(w.fence));
    ZE_OK(zeModuleDestroy(w.module));
    ZE_OK(zeCommandListDestroy(w.list));
    ZE_OK(zeKernelDestroy(w.kernel)); /* the last object: the context goes */
}
END_TEST

/* What is still refused: destroying or resetting what is executing (a
 * queue's worker reads it; waiting could hang on an event nobody
 * signals), and a second live event in one pool slot. */
START_TEST(objects_in_use_are_refused)
{
    world_t w;
    make_world(&w);
    ze_event_handle_t gate = ze_test_event(w.pool, 1);
    ze_event_desc_t twice_desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .index = 1};
    ze_event_handle_t twice = NULL;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeEventCreate(w.pool, &twice_desc, &twice));
    ze_group_count_t one = {1, 1, 1};
    ZE_OK(zeCommandListAppendLaunchKernel(w.list, w.kernel, &one, NULL, 1, &gate));
    ZE_OK(zeCommandListClose(w.list));
    ZE_OK(zeCommandQueueExecuteCommandLists(w.queue, 1, &w.list, w.fence));
    ZE_EXPECT(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE, zeCommandListReset(w.list));
    ZE_EXPECT(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE, zeCommandListDestroy(w.list));
    ZE_EXPECT(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE, zeFenceDestroy(w.fence));
    ZE_EXPECT(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE, zeCommandQueueDestroy(w.queue));
    /* Parents may go while it waits. */
    ZE_OK(zeKernelDestroy(w.kernel));
    ZE_OK(zeModuleDestroy(w.module));
    ZE_OK(zeContextDestroy(w.context));
    ck_assert_int_eq(w.buf[64], 0);
    ZE_OK(zeEventHostSignal(gate));
    ZE_OK(zeFenceHostSynchronize(w.fence, UINT64_MAX));
    for (int i = 0; i < 64; i++)
        ck_assert_int_eq(w.buf[64 + i], i + 1);
    ZE_OK(zeCommandListReset(w.list));
    ZE_OK(zeCommandListDestroy(w.list));
    ZE_OK(zeFenceDestroy(w.fence));
    ZE_OK(zeCommandQueueDestroy(w.queue));
    ZE_OK(zeEventDestroy(gate));
    ZE_OK(zeEventDestroy(w.event));
    ZE_OK(zeEventPoolDestroy(w.pool));
}
END_TEST

/* Every entry point that takes a handle refuses bad (a pointer that is not
 * a live handle of the right kind) with INVALID_NULL_HANDLE. */
static void expect_refused_everywhere(void *bad, const world_t *w)
{
    const ze_test_env_t *e = ze_test_env();
    const ze_result_t refused = ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    ze_context_handle_t context = bad;
    ze_module_handle_t module = bad;
    ze_kernel_handle_t kernel = bad;
    ze_command_list_handle_t list = bad;
    ze_command_queue_handle_t queue = bad;
    ze_fence_handle_t fence = bad;
    ze_event_pool_handle_t pool = bad;
    ze_event_handle_t event = bad;
    ze_module_build_log_handle_t log = bad;
    uint32_t x = 0, y = 0, z = 0;
    size_t size = 0;
    void *ptr = NULL;
    ze_group_count_t one = {1, 1, 1};

    ZE_EXPECT(refused, zeContextGetStatus(context));
    ze_host_mem_alloc_desc_t host_desc = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    ZE_EXPECT(refused, zeMemAllocHost(context, &host_desc, 64, 64, &ptr));
    ze_command_list_desc_t list_desc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC};
    ze_command_list_handle_t new_list = NULL;
    ZE_EXPECT(refused, zeCommandListCreate(context, e->device, &list_desc, &new_list));
    ze_event_pool_desc_t pool_desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, .count = 1};
    ze_event_pool_handle_t new_pool = NULL;
    ZE_EXPECT(refused, zeEventPoolCreate(context, &pool_desc, 0, NULL, &new_pool));

    ZE_EXPECT(refused, zeKernelSuggestGroupSize(kernel, 64, 1, 1, &x, &y, &z));
    ZE_EXPECT(refused, zeKernelSetArgumentValue(kernel, 0, sizeof ptr, &ptr));
    ZE_EXPECT(refused, zeKernelSetGroupSize(kernel, 1, 1, 1));
    ze_kernel_properties_t kernel_props = {.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES};
    ZE_EXPECT(refused, zeKernelGetProperties(kernel, &kernel_props));
    ZE_EXPECT(refused, zeKernelGetName(kernel, &size, NULL));
    ZE_EXPECT(refused, zeModuleGetKernelNames(module, &x, NULL));
    ze_kernel_desc_t kernel_desc = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC,
                                    .pKernelName = "add_one"};
    ze_kernel_handle_t new_kernel = NULL;
    ZE_EXPECT(refused, zeKernelCreate(module, &kernel_desc, &new_kernel));
    ZE_EXPECT(refused, zeModuleBuildLogGetString(log, &size, NULL));

    ZE_EXPECT(refused, zeCommandListAppendLaunchKernel(w->list, kernel, &one, NULL, 0, NULL));
    ZE_EXPECT(refused, zeCommandListAppendLaunchKernel(list, w->kernel, &one, NULL, 0, NULL));
    ZE_EXPECT(refused, zeCommandListAppendBarrier(w->list, event, 0, NULL));
    ZE_EXPECT(refused, zeCommandListAppendBarrier(w->list, NULL, 1, &event));
    ZE_EXPECT(refused, zeCommandListAppendSignalEvent(w->list, event));
    ZE_EXPECT(refused, zeCommandListAppendQueryKernelTimestamps(w->list, 1, &event, w->buf, NULL,
                                                                NULL, 0, NULL));
    ZE_EXPECT(refused, zeCommandListClose(list));
    ZE_EXPECT(refused, zeCommandQueueExecuteCommandLists(queue, 1, &list, NULL));
    ZE_EXPECT(refused, zeCommandQueueExecuteCommandLists(w->queue, 1, &list, NULL));
    ZE_EXPECT(refused, zeCommandQueueSynchronize(queue, 0));
    ZE_EXPECT(refused, zeFenceQueryStatus(fence));
    ZE_EXPECT(refused, zeFenceHostSynchronize(fence, 0));
    ze_fence_desc_t fence_desc = {.stype = ZE_STRUCTURE_TYPE_FENCE_DESC};
    ze_fence_handle_t new_fence = NULL;
    ZE_EXPECT(refused, zeFenceCreate(queue, &fence_desc, &new_fence));
    ZE_EXPECT(refused, zeEventHostSignal(event));
    ZE_EXPECT(refused, zeEventQueryStatus(event));
    ze_kernel_timestamp_result_t ts;
    ZE_EXPECT(refused, zeEventQueryKernelTimestamp(event, &ts));
    ze_event_desc_t event_desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC};
    ze_event_handle_t new_event = NULL;
    ZE_EXPECT(refused, zeEventCreate(pool, &event_desc, &new_event));

    ZE_EXPECT(refused, zeKernelDestroy(kernel));
    ZE_EXPECT(refused, zeModuleDestroy(module));
    ZE_EXPECT(refused, zeModuleBuildLogDestroy(log));
    ZE_EXPECT(refused, zeCommandListReset(list));
    ZE_EXPECT(refused, zeCommandListDestroy(list));
    ZE_EXPECT(refused, zeFenceDestroy(fence));
    ZE_EXPECT(refused, zeCommandQueueDestroy(queue));
    ZE_EXPECT(refused, zeEventDestroy(event));
    ZE_EXPECT(refused, zeEventPoolDestroy(pool));
    ZE_EXPECT(refused, zeContextDestroy(context));
}

/* Issue 11, item 3: a pointer that never was a handle is refused, not
 * followed. The page below is inaccessible, so reading through it (as a
 * magic-number check would) kills the test; the heap block holds what the
 * driver's objects used to start with; then small integers, a stack
 * address, handles of another kind and destroyed handles. */
START_TEST(wild_and_destroyed_handles_are_refused)
{
    world_t w;
    make_world(&w);
    void *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(page, MAP_FAILED);
    uint32_t *lookalike = malloc(4096);
    const uint32_t old_magics[] = {0x5a454358, 0x5a455155, 0x5a454c53, 0x5a454645, 0x5a45504c,
                                   0x5a454556, 0x5a454d44, 0x5a45424c, 0x5a454b4e};
    int stack_word = 0;
    void *wild[] = {page,
                    (uint8_t *)page + 64,
                    (void *)(uintptr_t)1,
                    (void *)(uintptr_t)0x1000,
                    (void *)~(uintptr_t)0,
                    &stack_word,
                    lookalike};
    for (size_t i = 0; i < sizeof wild / sizeof wild[0]; i++) {
        for (size_t m = 0; m < sizeof old_magics / sizeof old_magics[0]; m++) {
            for (size_t k = 0; k < 1024; k++)
                lookalike[k] = old_magics[m];
            expect_refused_everywhere(wild[i], &w);
            if (wild[i] != lookalike)
                break;
        }
    }
    /* A live handle of another kind is not a handle of this kind. */
    expect_refused_everywhere(ze_test_env()->device, &w);
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
              zeKernelSuggestGroupSize((ze_kernel_handle_t)w.module, 64, 1, 1, &(uint32_t){0},
                                       &(uint32_t){0}, &(uint32_t){0}));
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeEventHostSignal((ze_event_handle_t)w.pool));
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
              zeCommandListClose((ze_command_list_handle_t)w.queue));
    /* Destroyed handles, each kind. */
    destroy_world(&w);
    void *destroyed[] = {w.kernel, w.module, w.list, w.fence, w.queue, w.event, w.pool, w.context};
    world_t live;
    make_world(&live);
    for (size_t i = 0; i < sizeof destroyed / sizeof destroyed[0]; i++)
        if (destroyed[i] != live.kernel && destroyed[i] != live.module &&
            destroyed[i] != live.list && destroyed[i] != live.fence && destroyed[i] != live.queue &&
            destroyed[i] != live.event && destroyed[i] != live.pool &&
            destroyed[i] != live.context) /* not reused */
            expect_refused_everywhere(destroyed[i], &live);
    destroy_world(&live);
    free(lookalike);
    munmap(page, 4096);
}
END_TEST

/* Issue 11, item 2: a descriptor whose stype was never set (0, which no
 * structure type has) is accepted, as Intel's driver does; a wrong stype
 * is still refused (t_errors.c, bad_stype). */
START_TEST(unset_stype_is_accepted)
{
    const ze_test_env_t *e = ze_test_env();
    ze_host_mem_alloc_desc_t host_desc = {0};
    void *ptr = NULL;
    ZE_OK(zeMemAllocHost(e->context, &host_desc, 64, 64, &ptr));
    ze_device_mem_alloc_desc_t device_desc = {0};
    void *shared = NULL;
    ZE_OK(zeMemAllocShared(e->context, &device_desc, &host_desc, 64, 64, e->device, &shared));
    ze_memory_allocation_properties_t alloc_props = {0};
    ZE_OK(zeMemGetAllocProperties(e->context, ptr, &alloc_props, NULL));
    ck_assert_int_eq(alloc_props.type, ZE_MEMORY_TYPE_HOST);
    ze_device_properties_t props = {0};
    ZE_OK(zeDeviceGetProperties(e->device, &props));
    ck_assert_int_eq(props.type, ZE_DEVICE_TYPE_CPU);
    ck_assert_uint_eq(props.timerResolution, 1); /* the 1.0 meaning: ns per tick */
    ze_event_pool_desc_t pool_desc = {.count = 1};
    ze_event_pool_handle_t pool = NULL;
    ZE_OK(zeEventPoolCreate(e->context, &pool_desc, 0, NULL, &pool));
    ze_event_desc_t event_desc = {0};
    ze_event_handle_t event = NULL;
    ZE_OK(zeEventCreate(pool, &event_desc, &event));
    ZE_OK(zeEventDestroy(event));
    ZE_OK(zeEventPoolDestroy(pool));
    ZE_OK(zeMemFree(e->context, shared));
    ZE_OK(zeMemFree(e->context, ptr));
}
END_TEST

Suite *driver_lifetime_suite(void)
{
    const test_entry_t tests[] = {
            TEST_ONCE(module_destroyed_while_a_list_records_a_launch),
            TEST_ONCE(module_destroyed_before_its_kernel),
            TEST_ONCE(context_destroyed_before_its_objects),
            TEST_ONCE(objects_in_use_are_refused),
            TEST_ONCE(wild_and_destroyed_handles_are_refused),
            TEST_ONCE(unset_stype_is_accepted),
    };
    Suite *s = suite_create("lifetime");
    test_add_case(s, "orders", 0, tests, TEST_COUNT(tests));
    return s;
}
