/*
 * t_hooks.c - the driver's extension functions (zex_cpu.h), reached through
 * the loader's zeDriverGetExtensionFunctionAddress: call counts that cover
 * every function of the driver's tables, and fault injection that fails
 * exactly the nth call of one function, over all threads, without side
 * effects.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ze_test.h"
#include "zex_cpu.h"

static void *extension(const char *name)
{
    void *fn = NULL;
    ZE_OK(zeDriverGetExtensionFunctionAddress(ze_test_env()->driver, name, &fn));
    ck_assert_ptr_nonnull(fn);
    return fn;
}

static zex_cpu_fault_inject_fn fault_inject(void)
{
    return (zex_cpu_fault_inject_fn)extension(ZEX_CPU_FAULT_INJECT_NAME);
}

static zex_cpu_call_counts_fn call_counts(void)
{
    return (zex_cpu_call_counts_fn)extension(ZEX_CPU_CALL_COUNTS_NAME);
}

/* How many times the process called the driver's function name. */
static uint64_t calls_of(const char *name)
{
    zex_cpu_call_counts_fn counts = call_counts();
    uint32_t n = 0;
    ZE_OK(counts(&n, NULL, NULL));
    const char **names = calloc(n, sizeof *names);
    uint64_t *calls = calloc(n, sizeof *calls);
    ZE_OK(counts(&n, names, calls));
    uint64_t result = UINT64_MAX;
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            result = calls[i];
    free(names);
    free(calls);
    ck_assert_msg(result != UINT64_MAX, "zexCpuCallCounts lacks %s", name);
    return result;
}

START_TEST(extension_functions_are_found)
{
    const ze_test_env_t *e = ze_test_env();
    void *fn = (void *)&fn;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ARGUMENT,
              zeDriverGetExtensionFunctionAddress(e->driver, "zexNoSuchFunction", &fn));
    ck_assert_ptr_null(fn);
    ck_assert_ptr_ne(extension(ZEX_CPU_FAULT_INJECT_NAME), extension(ZEX_CPU_CALL_COUNTS_NAME));
}
END_TEST

/* Every name is a function the loader exports (so it is spelled as in
 * ze_api.h), each appears once, and the two-call protocol holds. */
START_TEST(call_counts_cover_the_tables)
{
    zex_cpu_call_counts_fn counts = call_counts();
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_NULL_POINTER, counts(NULL, NULL, NULL));
    uint32_t n = 0;
    ZE_OK(counts(&n, NULL, NULL));
    printf("zexCpuCallCounts: %u functions\n", n);
    ck_assert_uint_ge(n, 120);
    const char **names = calloc(n + 1, sizeof *names);
    uint64_t *calls = calloc(n + 1, sizeof *calls);
    uint32_t asked = n + 1;
    ZE_OK(counts(&asked, names, calls));
    ck_assert_uint_eq(asked, n);
    for (uint32_t i = 0; i < n; i++) {
        ck_assert_msg(dlsym(RTLD_DEFAULT, names[i]) != NULL, "%s is not a loader export", names[i]);
        for (uint32_t j = 0; j < i; j++)
            ck_assert_msg(strcmp(names[i], names[j]) != 0, "%s listed twice", names[i]);
    }
    /* A short array gets a prefix; only the counts may be asked for. */
    asked = 2;
    memset(calls, 0xff, (n + 1) * sizeof *calls);
    ZE_OK(counts(&asked, NULL, calls));
    ck_assert_uint_eq(asked, 2);
    ck_assert_uint_ne(calls[0], UINT64_MAX);
    ck_assert_uint_eq(calls[2], UINT64_MAX);
    free(names);
    free(calls);

    /* Each call counts once, failed calls included. */
    uint64_t before = calls_of("zeKernelCreate");
    ze_kernel_handle_t kernel = ze_test_kernel(ze_test_probe_module(16, NULL), "add_one");
    ze_kernel_desc_t bad = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = "no_such"};
    ze_kernel_handle_t none = NULL;
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_KERNEL_NAME,
              zeKernelCreate(ze_test_probe_module(16, NULL), &bad, &none));
    ck_assert_uint_eq(calls_of("zeKernelCreate"), before + 2);
    uint64_t images = calls_of("zeImageCreate");
    ze_image_desc_t image_desc = {.stype = ZE_STRUCTURE_TYPE_IMAGE_DESC};
    ze_image_handle_t image = NULL;
    ZE_EXPECT(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE,
              zeImageCreate(ze_test_env()->context, ze_test_env()->device, &image_desc, &image));
    ck_assert_uint_eq(calls_of("zeImageCreate"), images + 1);
    ZE_OK(zeKernelDestroy(kernel));
}
END_TEST

/* Calls 1 and 3 succeed, call 2 fails with the armed result and leaves
 * its output alone and creates nothing. */
START_TEST(fault_fails_the_nth_call_only)
{
    const ze_test_env_t *e = ze_test_env();
    zex_cpu_fault_inject_fn inject = fault_inject();
    ze_event_pool_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, .count = 4};
    ze_event_pool_handle_t pools[3];
    ze_event_pool_handle_t untouched = (ze_event_pool_handle_t)&desc;
    uint64_t before = calls_of("zeEventPoolCreate");
    ZE_OK(inject("zeEventPoolCreate", 2, ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY));
    ZE_OK(zeEventPoolCreate(e->context, &desc, 0, NULL, &pools[0]));
    pools[1] = untouched;
    ZE_EXPECT(ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY,
              zeEventPoolCreate(e->context, &desc, 0, NULL, &pools[1]));
    ck_assert_ptr_eq(pools[1], untouched);
    ZE_OK(zeEventPoolCreate(e->context, &desc, 0, NULL, &pools[2]));
    ck_assert_uint_eq(calls_of("zeEventPoolCreate"), before + 3);
    ZE_OK(zeEventPoolDestroy(pools[0]));
    ZE_OK(zeEventPoolDestroy(pools[2]));

    /* A failed launch append leaves the list usable and the result right. */
    ze_kernel_handle_t kernel = ze_test_kernel(ze_test_probe_module(16, NULL), "add_one");
    int32_t *buf = ze_test_alloc_shared(128 * sizeof *buf);
    int32_t *dst = buf + 64;
    memset(buf, 0, 128 * sizeof *buf);
    for (int i = 0; i < 64; i++)
        buf[i] = i;
    ZE_OK(zeKernelSetArgumentValue(kernel, 0, sizeof buf, &buf));
    ZE_OK(zeKernelSetArgumentValue(kernel, 1, sizeof dst, &dst));
    ZE_OK(zeKernelSetGroupSize(kernel, 64, 1, 1));
    ze_group_count_t one = {1, 1, 1};
    ZE_OK(inject("zeCommandListAppendLaunchKernel", 1, ZE_RESULT_ERROR_DEVICE_LOST));
    ZE_EXPECT(ZE_RESULT_ERROR_DEVICE_LOST,
              zeCommandListAppendLaunchKernel(e->sync_list, kernel, &one, NULL, 0, NULL));
    ck_assert_int_eq(dst[5], 0); /* nothing ran */
    ZE_OK(zeCommandListAppendLaunchKernel(e->sync_list, kernel, &one, NULL, 0, NULL));
    for (int i = 0; i < 64; i++)
        ck_assert_int_eq(dst[i], i + 1);
    ze_test_free(buf);
    ZE_OK(zeKernelDestroy(kernel));
}
END_TEST

START_TEST(fault_rearm_disarm_and_refusals)
{
    zex_cpu_fault_inject_fn inject = fault_inject();
    ze_event_pool_handle_t pool = ze_test_event_pool(1, 0);
    ze_event_handle_t event = ze_test_event(pool, 0);
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ARGUMENT, inject("zeNoSuchFunction", 1, 0));
    ZE_EXPECT(ZE_RESULT_ERROR_INVALID_ARGUMENT, inject("zeEventHostSignal", 0, 0));
    /* Arming again replaces: the first fault never fires. */
    ZE_OK(inject("zeEventHostSignal", 1, ZE_RESULT_ERROR_DEVICE_LOST));
    ZE_OK(inject("zeEventQueryStatus", 1, ZE_RESULT_ERROR_DEVICE_LOST));
    ZE_OK(zeEventHostSignal(event));
    ZE_EXPECT(ZE_RESULT_ERROR_DEVICE_LOST, zeEventQueryStatus(event));
    ZE_OK(zeEventQueryStatus(event));
    /* NULL disarms. */
    ZE_OK(inject("zeEventHostReset", 1, ZE_RESULT_ERROR_DEVICE_LOST));
    ZE_OK(inject(NULL, 0, ZE_RESULT_SUCCESS));
    ZE_OK(zeEventHostReset(event));
    ZE_EXPECT(ZE_RESULT_NOT_READY, zeEventQueryStatus(event));
    /* Functions the driver does not implement can fail differently too. */
    ZE_OK(inject("zeImageDestroy", 1, ZE_RESULT_ERROR_DEVICE_LOST));
    ZE_EXPECT(ZE_RESULT_ERROR_DEVICE_LOST, zeImageDestroy(NULL));
    ZE_OK(zeEventDestroy(event));
    ZE_OK(zeEventPoolDestroy(pool));
}
END_TEST

enum { HOOK_THREADS = 4, HOOK_CALLS = 500 };

typedef struct query_thread {
    pthread_t thread;
    ze_event_handle_t event;
    int failures;
} query_thread_t;

static void *query_many(void *arg)
{
    query_thread_t *t = arg;
    for (int i = 0; i < HOOK_CALLS; i++)
        if (zeEventQueryStatus(t->event) != ZE_RESULT_SUCCESS)
            t->failures++;
    return NULL;
}

/* The countdown is shared by all threads: one call of 2000 fails. */
START_TEST(fault_counts_calls_of_all_threads)
{
    zex_cpu_fault_inject_fn inject = fault_inject();
    ze_event_pool_handle_t pool = ze_test_event_pool(1, 0);
    ze_event_handle_t event = ze_test_event(pool, 0);
    ZE_OK(zeEventHostSignal(event));
    ZE_OK(inject("zeEventQueryStatus", HOOK_THREADS * HOOK_CALLS / 2 + 7,
                 ZE_RESULT_ERROR_DEVICE_LOST));
    query_thread_t threads[HOOK_THREADS];
    for (int i = 0; i < HOOK_THREADS; i++) {
        threads[i] = (query_thread_t){.event = event};
        ck_assert_int_eq(pthread_create(&threads[i].thread, NULL, query_many, &threads[i]), 0);
    }
    int failures = 0;
    for (int i = 0; i < HOOK_THREADS; i++) {
        pthread_join(threads[i].thread, NULL);
        failures += threads[i].failures;
    }
    ck_assert_int_eq(failures, 1);
    ZE_OK(zeEventDestroy(event));
    ZE_OK(zeEventPoolDestroy(pool));
}
END_TEST

Suite *driver_hooks_suite(void)
{
    const test_entry_t tests[] = {
            TEST_ONCE(extension_functions_are_found),
            TEST_ONCE(call_counts_cover_the_tables),
            TEST_ONCE(fault_fails_the_nth_call_only),
            TEST_ONCE(fault_rearm_disarm_and_refusals),
            TEST_ONCE(fault_counts_calls_of_all_threads),
    };
    Suite *s = suite_create("hooks");
    test_add_case(s, "extension", 0, tests, TEST_COUNT(tests));
    return s;
}
