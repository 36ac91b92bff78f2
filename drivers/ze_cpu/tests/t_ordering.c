/*
 * t_ordering.c - ordering with events, fences and barriers: regular lists
 * on queues, immediate lists (synchronous and asynchronous), waits on
 * events the host signals after the submission, event reset and reuse,
 * timestamps and their query into memory.
 *
 * Each "gate" test checks that nothing ran while the gate was closed
 * (sleeping a little first, so an ordering bug has time to show), then
 * opens it and checks the results.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ze_test.h"

enum { N = 4096, GROUP = 64 };

typedef struct buffers {
    int32_t *a, *b, *c;
} buffers_t;

static buffers_t make_buffers(void)
{
    buffers_t bufs = {ze_test_alloc_shared(N * sizeof(int32_t)),
                      ze_test_alloc_shared(N * sizeof(int32_t)),
                      ze_test_alloc_shared(N * sizeof(int32_t))};
    for (int i = 0; i < N; i++) {
        bufs.a[i] = i;
        bufs.b[i] = bufs.c[i] = -1;
    }
    return bufs;
}

static void free_buffers(buffers_t *bufs)
{
    ze_test_free(bufs->c);
    ze_test_free(bufs->b);
    ze_test_free(bufs->a);
}

/* add_one with src -> dst captured. */
static void append_add_one(ze_command_list_handle_t list, ze_kernel_handle_t kernel,
                           const int32_t *src, int32_t *dst, ze_event_handle_t signal,
                           uint32_t num_waits, ze_event_handle_t *waits)
{
    ZE_OK(zeKernelSetArgumentValue(kernel, 0, sizeof src, &src));
    ZE_OK(zeKernelSetArgumentValue(kernel, 1, sizeof dst, &dst));
    ZE_OK(zeKernelSetGroupSize(kernel, GROUP, 1, 1));
    ze_group_count_t groups = {N / GROUP, 1, 1};
    ZE_OK(zeCommandListAppendLaunchKernel(list, kernel, &groups, signal, num_waits, waits));
}

static void expect_values(const int32_t *buf, int32_t offset)
{
    for (int i = 0; i < N; i++)
        ck_assert_msg(buf[i] == i + offset, "buf[%d] = %d, expected %d", i, buf[i], i + offset);
}

static void expect_untouched(const int32_t *buf)
{
    for (int i = 0; i < N; i++)
        ck_assert_msg(buf[i] == -1, "buf[%d] = %d: written before its wait event", i, buf[i]);
}

/* What the tests start from: add_one, the three buffers, and a pool of
 * num_events events (none: no pool). */
typedef struct rig {
    ze_kernel_handle_t kernel;
    buffers_t bufs;
    ze_event_pool_handle_t pool;
    ze_event_handle_t events[3];
    uint32_t num_events;
} rig_t;

static rig_t rig_open(uint32_t num_events, ze_event_pool_flags_t pool_flags)
{
    rig_t r = {.kernel = ze_test_kernel(ze_test_probe_module(16, NULL), "add_one"),
               .bufs = make_buffers(),
               .num_events = num_events};
    ck_assert_uint_le(num_events, sizeof r.events / sizeof r.events[0]);
    if (num_events > 0)
        r.pool = ze_test_event_pool(num_events, pool_flags);
    for (uint32_t i = 0; i < num_events; i++)
        r.events[i] = ze_test_event(r.pool, i);
    return r;
}

static void rig_close(rig_t *r)
{
    for (uint32_t i = r->num_events; i-- > 0;)
        ZE_OK(zeEventDestroy(r->events[i]));
    if (r->pool)
        ZE_OK(zeEventPoolDestroy(r->pool));
    free_buffers(&r->bufs);
    ZE_OK(zeKernelDestroy(r->kernel));
}

/* A regular list waits on an event the host signals after the execute call;
 * then events, fence and list are reset and the whole thing runs again. */
START_TEST(queue_waits_for_host_event)
{
    rig_t r = rig_open(2, 0);
    ze_event_handle_t gate = r.events[0], done = r.events[1];
    ze_command_queue_handle_t queue = ze_test_queue(ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
    ze_fence_desc_t fence_desc = {.stype = ZE_STRUCTURE_TYPE_FENCE_DESC};
    ze_fence_handle_t fence;
    ZE_OK(zeFenceCreate(queue, &fence_desc, &fence));
    ze_command_list_handle_t list = ze_test_list();
    ZE_OK(zeCommandListAppendWaitOnEvents(list, 1, &gate));
    append_add_one(list, r.kernel, r.bufs.a, r.bufs.b, done, 0, NULL);
    ZE_OK(zeCommandListClose(list));

    for (int round = 0; round < 2; round++) {
        ZE_OK(zeCommandQueueExecuteCommandLists(queue, 1, &list, fence));
        ze_test_sleep_ms(50);
        ZE_EXPECT(ZE_RESULT_NOT_READY, zeEventQueryStatus(done));
        ZE_EXPECT(ZE_RESULT_NOT_READY, zeFenceQueryStatus(fence));
        ZE_EXPECT(ZE_RESULT_NOT_READY, zeFenceHostSynchronize(fence, 1000000));
        ZE_EXPECT(ZE_RESULT_NOT_READY, zeCommandQueueSynchronize(queue, 0));
        expect_untouched(r.bufs.b);

        ZE_OK(zeEventHostSignal(gate));
        ZE_OK(zeFenceHostSynchronize(fence, UINT64_MAX));
        ZE_OK(zeEventQueryStatus(done));
        expect_values(r.bufs.b, 1 + round);

        /* Reuse: reset everything, make the input differ. */
        ZE_OK(zeEventHostReset(gate));
        ZE_OK(zeEventHostReset(done));
        ZE_OK(zeFenceReset(fence));
        ZE_EXPECT(ZE_RESULT_NOT_READY, zeEventQueryStatus(done));
        for (int i = 0; i < N; i++) {
            r.bufs.a[i] = i + 1;
            r.bufs.b[i] = -1;
        }
    }
    ZE_OK(zeCommandQueueSynchronize(queue, UINT64_MAX));
    ZE_OK(zeCommandListDestroy(list));
    ZE_OK(zeFenceDestroy(fence));
    ZE_OK(zeCommandQueueDestroy(queue));
    rig_close(&r);
}
END_TEST

/* fill -> barrier -> a+1 -> barrier -> +1 -> barrier -> copy to the host. */
START_TEST(barriers_order_a_chain)
{
    rig_t r = rig_open(0, 0);
    int32_t *host = malloc(N * sizeof *host);
    ze_command_list_handle_t list = ze_test_list();
    const int32_t seven = 7;
    ZE_OK(zeCommandListAppendMemoryFill(list, r.bufs.a, &seven, sizeof seven, N * sizeof(int32_t),
                                        NULL, 0, NULL));
    ZE_OK(zeCommandListAppendBarrier(list, NULL, 0, NULL));
    append_add_one(list, r.kernel, r.bufs.a, r.bufs.b, NULL, 0, NULL);
    ZE_OK(zeCommandListAppendBarrier(list, NULL, 0, NULL));
    append_add_one(list, r.kernel, r.bufs.b, r.bufs.c, NULL, 0, NULL);
    const void *ranges[1] = {r.bufs.c};
    const size_t sizes[1] = {N * sizeof(int32_t)};
    ZE_OK(zeCommandListAppendMemoryRangesBarrier(list, 1, sizes, ranges, NULL, 0, NULL));
    ZE_OK(zeCommandListAppendMemoryCopy(list, host, r.bufs.c, N * sizeof(int32_t), NULL, 0, NULL));
    ZE_OK(zeCommandListClose(list));
    ze_command_queue_handle_t queue = ze_test_queue(ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
    ZE_OK(zeCommandQueueExecuteCommandLists(queue, 1, &list, NULL)); /* synchronous: done */
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(host[i], 9);
    ZE_OK(zeCommandListDestroy(list));
    ZE_OK(zeCommandQueueDestroy(queue));
    free(host);
    rig_close(&r);
}
END_TEST

/* Events between commands of one list, and a reset appended at its end. */
START_TEST(events_inside_a_list)
{
    rig_t r = rig_open(3, 0);
    ze_event_handle_t e1 = r.events[0], e2 = r.events[1], e3 = r.events[2];
    ze_command_list_handle_t list = ze_test_list();
    append_add_one(list, r.kernel, r.bufs.a, r.bufs.b, e1, 0, NULL);
    append_add_one(list, r.kernel, r.bufs.b, r.bufs.c, e2, 1, &e1);
    ZE_OK(zeCommandListAppendSignalEvent(list, e3));
    ZE_OK(zeCommandListAppendEventReset(list, e1));
    ZE_OK(zeCommandListClose(list));
    ze_command_queue_handle_t queue = ze_test_queue(ZE_COMMAND_QUEUE_MODE_DEFAULT);
    ZE_OK(zeCommandQueueExecuteCommandLists(queue, 1, &list, NULL));
    ZE_OK(zeEventHostSynchronize(e3, UINT64_MAX));
    ZE_OK(zeEventQueryStatus(e2));
    expect_values(r.bufs.c, 2);
    ZE_OK(zeCommandQueueSynchronize(queue, UINT64_MAX));
    ZE_EXPECT(ZE_RESULT_NOT_READY, zeEventQueryStatus(e1)); /* reset by the list */
    ZE_OK(zeCommandListDestroy(list));
    ZE_OK(zeCommandQueueDestroy(queue));
    rig_close(&r);
}
END_TEST

/* Queue 2 waits on queue 1, queue 1 on the host; submitted in reverse. */
START_TEST(events_across_queues)
{
    rig_t r = rig_open(3, 0);
    ze_kernel_handle_t k1 = r.kernel,
                       k2 = ze_test_kernel(ze_test_probe_module(16, NULL), "add_one");
    ze_event_handle_t gate = r.events[0], mid = r.events[1], done = r.events[2];
    ze_command_list_handle_t l1 = ze_test_list(), l2 = ze_test_list();
    append_add_one(l1, k1, r.bufs.a, r.bufs.b, mid, 1, &gate);
    append_add_one(l2, k2, r.bufs.b, r.bufs.c, done, 1, &mid);
    ZE_OK(zeCommandListClose(l1));
    ZE_OK(zeCommandListClose(l2));
    ze_command_queue_handle_t q1 = ze_test_queue(ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
    ze_command_queue_handle_t q2 = ze_test_queue(ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
    ZE_OK(zeCommandQueueExecuteCommandLists(q2, 1, &l2, NULL));
    ZE_OK(zeCommandQueueExecuteCommandLists(q1, 1, &l1, NULL));
    ze_test_sleep_ms(30);
    expect_untouched(r.bufs.b);
    expect_untouched(r.bufs.c);
    ZE_OK(zeEventHostSignal(gate));
    ZE_OK(zeEventHostSynchronize(done, UINT64_MAX));
    expect_values(r.bufs.c, 2);
    ZE_OK(zeCommandQueueSynchronize(q1, UINT64_MAX));
    ZE_OK(zeCommandQueueSynchronize(q2, UINT64_MAX));
    ZE_OK(zeCommandListDestroy(l2));
    ZE_OK(zeCommandListDestroy(l1));
    ZE_OK(zeCommandQueueDestroy(q2));
    ZE_OK(zeCommandQueueDestroy(q1));
    ZE_OK(zeKernelDestroy(k2));
    rig_close(&r);
}
END_TEST

/* An asynchronous immediate list returns at once, runs in order, and may
 * wait on the host; events are reused after a reset appended to it. */
START_TEST(async_immediate_list)
{
    rig_t r = rig_open(2, 0);
    ze_event_handle_t gate = r.events[0], done = r.events[1];
    ze_command_list_handle_t list = ze_test_immediate_list(ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
    for (int round = 0; round < 2; round++) {
        append_add_one(list, r.kernel, r.bufs.a, r.bufs.b, NULL, 1, &gate);
        append_add_one(list, r.kernel, r.bufs.b, r.bufs.c, done, 0, NULL);
        ze_test_sleep_ms(30);
        ZE_EXPECT(ZE_RESULT_NOT_READY, zeEventQueryStatus(done));
        expect_untouched(r.bufs.c);
        ZE_OK(zeEventHostSignal(gate));
        ZE_OK(zeEventHostSynchronize(done, UINT64_MAX));
        expect_values(r.bufs.c, 2 + round);
        for (int i = 0; i < N; i++) /* safe: done was signalled after both kernels */
            r.bufs.a[i] = i + 1, r.bufs.b[i] = r.bufs.c[i] = -1;
        /* Reset done on the list; its worker then signals the (host-reset)
         * gate, so seeing the gate means the reset has happened. */
        ZE_OK(zeEventHostReset(gate));
        ZE_OK(zeCommandListAppendEventReset(list, done));
        ZE_OK(zeCommandListAppendBarrier(list, gate, 0, NULL));
        ZE_OK(zeEventHostSynchronize(gate, UINT64_MAX));
        ZE_EXPECT(ZE_RESULT_NOT_READY, zeEventQueryStatus(done));
        ZE_OK(zeEventHostReset(gate));
    }
    ZE_OK(zeCommandListDestroy(list));
    rig_close(&r);
}
END_TEST

/* A synchronous immediate list: every append is complete when it returns. */
START_TEST(sync_immediate_list)
{
    rig_t r = rig_open(1, 0);
    ze_command_list_handle_t list = ze_test_env()->sync_list;
    ze_event_handle_t done = r.events[0];
    const int32_t ten = 10;
    ZE_OK(zeCommandListAppendMemoryFill(list, r.bufs.a, &ten, sizeof ten, N * sizeof(int32_t), NULL,
                                        0, NULL));
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(r.bufs.a[i], 10);
    append_add_one(list, r.kernel, r.bufs.a, r.bufs.b, done, 0, NULL);
    ZE_OK(zeEventQueryStatus(done));
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(r.bufs.b[i], 11);
    rig_close(&r);
}
END_TEST

static void *signal_later(void *event)
{
    ze_test_sleep_ms(40);
    zeEventHostSignal((ze_event_handle_t)event);
    return NULL;
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0->tv_nsec);
}

/* Host synchronize: 0 queries, a timeout waits that long, UINT64_MAX waits
 * for a signal from another thread. */
START_TEST(host_synchronize_timeouts)
{
    ze_event_pool_handle_t pool = ze_test_event_pool(1, 0);
    ze_event_handle_t event = ze_test_event(pool, 0);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ZE_EXPECT(ZE_RESULT_NOT_READY, zeEventHostSynchronize(event, 0));
    ZE_EXPECT(ZE_RESULT_NOT_READY, zeEventHostSynchronize(event, 20000000)); /* 20 ms */
    ck_assert(seconds_since(&t0) >= 0.019);
    pthread_t thread;
    ck_assert_int_eq(pthread_create(&thread, NULL, signal_later, event), 0);
    ZE_OK(zeEventHostSynchronize(event, UINT64_MAX));
    pthread_join(thread, NULL);
    ZE_OK(zeEventHostSynchronize(event, 0));

    ze_command_queue_handle_t queue = ze_test_queue(ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
    ze_fence_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_FENCE_DESC, .flags = ZE_FENCE_FLAG_SIGNALED};
    ze_fence_handle_t fence;
    ZE_OK(zeFenceCreate(queue, &desc, &fence));
    ZE_OK(zeFenceQueryStatus(fence));
    ZE_OK(zeFenceReset(fence));
    ZE_EXPECT(ZE_RESULT_NOT_READY, zeFenceHostSynchronize(fence, 0));
    ZE_OK(zeFenceDestroy(fence));
    ZE_OK(zeCommandQueueSynchronize(queue, 0)); /* nothing submitted */
    ZE_OK(zeCommandQueueDestroy(queue));
    ZE_OK(zeEventDestroy(event));
    ZE_OK(zeEventPoolDestroy(pool));
}
END_TEST

START_TEST(timestamps)
{
    rig_t r = rig_open(1, ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP);
    ze_event_handle_t event = r.events[0];
    uint64_t *stamps = ze_test_alloc_host(2 * sizeof *stamps);
    ze_command_list_handle_t list = ze_test_env()->sync_list;
    ZE_OK(zeCommandListAppendWriteGlobalTimestamp(list, &stamps[0], NULL, 0, NULL));
    append_add_one(list, r.kernel, r.bufs.a, r.bufs.b, event, 0, NULL);
    ZE_OK(zeCommandListAppendWriteGlobalTimestamp(list, &stamps[1], NULL, 0, NULL));
    ze_kernel_timestamp_result_t ts;
    ZE_OK(zeEventQueryKernelTimestamp(event, &ts));
    ck_assert_uint_le(stamps[0], ts.global.kernelStart);
    ck_assert_uint_le(ts.global.kernelStart, ts.global.kernelEnd);
    ck_assert_uint_le(ts.global.kernelEnd, stamps[1]);
    ck_assert_uint_eq(ts.context.kernelStart, ts.global.kernelStart);
    printf("add_one over %d items: %.1f us by its event's timestamps\n", N,
           (double)(ts.global.kernelEnd - ts.global.kernelStart) / 1e3);
    ZE_OK(zeEventHostReset(event));
    ZE_EXPECT(ZE_RESULT_NOT_READY, zeEventQueryKernelTimestamp(event, &ts));
    ze_test_free(stamps);
    rig_close(&r);
}
END_TEST

/* zeCommandListAppendQueryKernelTimestamps writes what
 * zeEventQueryKernelTimestamp returns, at the offsets given (or packed),
 * once its wait events are signalled. The conformance suite's pattern:
 * the query waits on the very event it reads. */
START_TEST(query_kernel_timestamps)
{
    rig_t r = rig_open(2, ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP);
    ze_event_handle_t *events = r.events;
    const size_t stride = sizeof(ze_kernel_timestamp_result_t);
    /* Reversed, and the second at an offset that is not 8-byte aligned. */
    const size_t offsets[2] = {stride + 4, 0};
    /* Room for two layouts: [0, 2 stride + 4) and 2 stride + 4 onwards. */
    const size_t dst_size = 4 * stride + 4;
    uint8_t *dst = ze_test_alloc_host(dst_size);
    memset(dst, 0xab, dst_size);
    ze_command_queue_handle_t queue = ze_test_queue(ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
    ze_command_list_handle_t list = ze_test_list();
    append_add_one(list, r.kernel, r.bufs.a, r.bufs.b, events[0], 0, NULL);
    append_add_one(list, r.kernel, r.bufs.b, r.bufs.c, events[1], 1, &events[0]);
    ZE_OK(zeCommandListAppendQueryKernelTimestamps(list, 2, events, dst, offsets, NULL, 2, events));
    ZE_OK(zeCommandListAppendQueryKernelTimestamps(list, 2, events, dst + 2 * stride + 4, NULL,
                                                   NULL, 1, &events[1]));
    ZE_OK(zeCommandListClose(list));
    ZE_OK(zeCommandQueueExecuteCommandLists(queue, 1, &list, NULL));
    ZE_OK(zeCommandQueueSynchronize(queue, UINT64_MAX));
    expect_values(r.bufs.c, 2);
    for (int i = 0; i < 2; i++) {
        ze_kernel_timestamp_result_t expected, written, packed;
        ZE_OK(zeEventQueryKernelTimestamp(events[i], &expected));
        memcpy(&written, dst + offsets[i], stride);
        memcpy(&packed, dst + 2 * stride + 4 + (size_t)i * stride, stride);
        ck_assert_mem_eq(&written, &expected, stride);
        ck_assert_mem_eq(&packed, &expected, stride);
        ck_assert_uint_gt(expected.global.kernelStart, 0);
        ck_assert_uint_le(expected.global.kernelStart, expected.global.kernelEnd);
    }
    ze_kernel_timestamp_result_t first, second;
    memcpy(&first, dst + offsets[0], stride);
    memcpy(&second, dst + offsets[1], stride);
    ck_assert_uint_le(first.global.kernelEnd, second.global.kernelStart); /* in order */
    ck_assert_uint_eq(dst[stride], 0xab); /* the 4 bytes of padding stay */

    /* An event of a pool without kernel timestamps gives the time of its
     * signal as start and end (ze_peak queries one). */
    ze_event_pool_handle_t plain_pool = ze_test_event_pool(1, 0);
    ze_event_handle_t plain = ze_test_event(plain_pool, 0);
    ZE_OK(zeCommandListReset(list));
    append_add_one(list, r.kernel, r.bufs.a, r.bufs.b, plain, 0, NULL);
    ZE_OK(zeCommandListAppendQueryKernelTimestamps(list, 1, &plain, dst, NULL, NULL, 1, &plain));
    ZE_OK(zeCommandListClose(list));
    ze_kernel_timestamp_result_t plain_ts;
    uint64_t host_before, device_before;
    ZE_OK(zeDeviceGetGlobalTimestamps(ze_test_env()->device, &host_before, &device_before));
    ZE_OK(zeCommandQueueExecuteCommandLists(queue, 1, &list, NULL));
    ZE_OK(zeCommandQueueSynchronize(queue, UINT64_MAX));
    ZE_OK(zeEventQueryKernelTimestamp(plain, &plain_ts));
    ck_assert_mem_eq(dst, &plain_ts, stride);
    ck_assert_uint_eq(plain_ts.global.kernelStart, plain_ts.global.kernelEnd);
    ck_assert_uint_ge(plain_ts.global.kernelStart, device_before);
    ZE_OK(zeEventDestroy(plain));
    ZE_OK(zeEventPoolDestroy(plain_pool));

    /* On a synchronous immediate list, after the event it reads. */
    ze_command_list_handle_t sync = ze_test_env()->sync_list;
    ZE_OK(zeEventHostReset(events[0]));
    append_add_one(sync, r.kernel, r.bufs.a, r.bufs.b, events[0], 0, NULL);
    ZE_OK(zeCommandListAppendQueryKernelTimestamps(sync, 1, events, dst, NULL, NULL, 1, events));
    ze_kernel_timestamp_result_t expected;
    ZE_OK(zeEventQueryKernelTimestamp(events[0], &expected));
    ck_assert_mem_eq(dst, &expected, stride);

    ZE_OK(zeCommandListDestroy(list));
    ZE_OK(zeCommandQueueDestroy(queue));
    ze_test_free(dst);
    rig_close(&r);
}
END_TEST

Suite *driver_ordering_suite(void)
{
    const test_entry_t tests[] = {
            TEST_ONCE(queue_waits_for_host_event), TEST_ONCE(barriers_order_a_chain),
            TEST_ONCE(events_inside_a_list),       TEST_ONCE(events_across_queues),
            TEST_ONCE(async_immediate_list),       TEST_ONCE(sync_immediate_list),
            TEST_ONCE(host_synchronize_timeouts),  TEST_ONCE(timestamps),
            TEST_ONCE(query_kernel_timestamps),
    };
    Suite *s = suite_create("ordering");
    test_add_case(s, "events", 0, tests, TEST_COUNT(tests));
    return s;
}
