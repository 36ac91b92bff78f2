/*
 * event.c - event pools, events, and the signal/wait primitive that events
 * and fences share.
 *
 * A signalled flag is an atomic word: signal stores 1 with release order,
 * queries load it with acquire order, so whatever the signaller wrote
 * (kernel results after clFinish, timestamps) is visible to whoever sees
 * the flag set. Blocking waits sleep on one process-wide condition
 * variable; signals are rare next to kernel launches, so it never
 * contends.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "ze_cpu.h"

static pthread_mutex_t flag_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t flag_cond;
static pthread_once_t flag_once = PTHREAD_ONCE_INIT;

static void init_flag_cond(void)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&flag_cond, &attr);
    pthread_condattr_destroy(&attr);
}

void cpu_ze_flag_signal(atomic_uint *flag)
{
    pthread_once(&flag_once, init_flag_cond);
    pthread_mutex_lock(&flag_lock);
    atomic_store_explicit(flag, 1, memory_order_release);
    pthread_cond_broadcast(&flag_cond);
    pthread_mutex_unlock(&flag_lock);
}

bool cpu_ze_deadline(uint64_t timeout_ns, struct timespec *deadline)
{
    /* Beyond a century is forever (and could overflow the deadline). */
    const uint64_t century_ns = 100ull * 365 * 24 * 3600 * 1000000000ull;
    if (timeout_ns >= century_ns)
        return false;
    clock_gettime(CLOCK_MONOTONIC, deadline);
    uint64_t ns = (uint64_t)deadline->tv_nsec + timeout_ns % 1000000000u;
    deadline->tv_sec += (time_t)(timeout_ns / 1000000000u + ns / 1000000000u);
    deadline->tv_nsec = (long)(ns % 1000000000u);
    return true;
}

ze_result_t cpu_ze_flag_wait(atomic_uint *flag, uint64_t timeout_ns)
{
    if (atomic_load_explicit(flag, memory_order_acquire))
        return ZE_RESULT_SUCCESS;
    if (timeout_ns == 0)
        return ZE_RESULT_NOT_READY;
    pthread_once(&flag_once, init_flag_cond);
    struct timespec deadline;
    bool bounded = cpu_ze_deadline(timeout_ns, &deadline);
    pthread_mutex_lock(&flag_lock);
    while (!atomic_load_explicit(flag, memory_order_acquire)) {
        if (!bounded)
            pthread_cond_wait(&flag_cond, &flag_lock);
        else if (pthread_cond_timedwait(&flag_cond, &flag_lock, &deadline) == ETIMEDOUT)
            break;
    }
    pthread_mutex_unlock(&flag_lock);
    return atomic_load_explicit(flag, memory_order_acquire) ? ZE_RESULT_SUCCESS
                                                            : ZE_RESULT_NOT_READY;
}

void cpu_ze_counter_release(atomic_int *counter)
{
    pthread_once(&flag_once, init_flag_cond);
    pthread_mutex_lock(&flag_lock);
    atomic_fetch_sub_explicit(counter, 1, memory_order_release);
    pthread_cond_broadcast(&flag_cond);
    pthread_mutex_unlock(&flag_lock);
}

bool cpu_ze_counter_wait_zero(atomic_int *counter, uint64_t timeout_ns)
{
    pthread_once(&flag_once, init_flag_cond);
    struct timespec deadline;
    bool bounded = cpu_ze_deadline(timeout_ns, &deadline);
    pthread_mutex_lock(&flag_lock);
    while (atomic_load_explicit(counter, memory_order_acquire) > 0) {
        if (!bounded)
            pthread_cond_wait(&flag_cond, &flag_lock);
        else if (pthread_cond_timedwait(&flag_cond, &flag_lock, &deadline) == ETIMEDOUT)
            break;
    }
    bool zero = atomic_load_explicit(counter, memory_order_acquire) <= 0;
    pthread_mutex_unlock(&flag_lock);
    return zero;
}

CPU_ZE_ENTRY(zeEventPoolCreate, ze_context_handle_t hContext, const ze_event_pool_desc_t *desc,
             uint32_t numDevices, ze_device_handle_t *phDevices,
             ze_event_pool_handle_t *phEventPool)
{
    CPU_ZE_CHECK_HANDLE(hContext, CPU_ZE_KIND_CONTEXT);
    CPU_ZE_CHECK_CREATE_DESC(desc, ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, phEventPool);
    if (desc->flags & ~(ze_event_pool_flags_t)0x7)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ENUMERATION, "zeEventPoolCreate: flags = 0x%x",
                           desc->flags);
    if (desc->count == 0)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_SIZE, "zeEventPoolCreate: count = 0");
    if (numDevices > 0 && phDevices == NULL)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_SIZE,
                           "zeEventPoolCreate: numDevices = %u and phDevices = NULL", numDevices);
    for (uint32_t i = 0; i < numDevices; i++)
        CPU_ZE_CHECK_DEVICE(phDevices[i]);

    struct cpu_ze_event_pool *pool = calloc(1, sizeof *pool);
    struct cpu_ze_event *events = calloc(desc->count, sizeof *events);
    if (pool == NULL || events == NULL) {
        free(pool);
        free(events);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    struct cpu_ze_context *context = (struct cpu_ze_context *)hContext;
    pool->context = context;
    pool->flags = desc->flags;
    pool->count = desc->count;
    pool->events = events;
    for (uint32_t i = 0; i < desc->count; i++)
        events[i].pool = pool;
    atomic_init(&pool->refs, 1);
    ze_result_t result = cpu_ze_handle_publish(pool, CPU_ZE_KIND_POOL);
    if (result != ZE_RESULT_SUCCESS) {
        free(events);
        free(pool);
        return result;
    }
    cpu_ze_context_retain(context);
    *phEventPool = (ze_event_pool_handle_t)pool;
    return ZE_RESULT_SUCCESS;
}

void cpu_ze_pool_retain(struct cpu_ze_event_pool *pool)
{
    atomic_fetch_add_explicit(&pool->refs, 1, memory_order_relaxed);
}

void cpu_ze_pool_release(struct cpu_ze_event_pool *pool)
{
    if (atomic_fetch_sub_explicit(&pool->refs, 1, memory_order_acq_rel) != 1)
        return;
    struct cpu_ze_context *context = pool->context;
    free(pool->events);
    free(pool);
    cpu_ze_context_release(context);
}

/* Always succeeds on a live handle: events still alive, and commands
 * recorded with them, keep the pool's slots until they are destroyed. */
CPU_ZE_ENTRY(zeEventPoolDestroy, ze_event_pool_handle_t hEventPool)
{
    CPU_ZE_CHECK_HANDLE(hEventPool, CPU_ZE_KIND_POOL);
    CPU_ZE_RETIRE_HANDLE(hEventPool, CPU_ZE_KIND_POOL);
    struct cpu_ze_event_pool *pool = (struct cpu_ze_event_pool *)hEventPool;
    int others = atomic_load(&pool->refs) - 1;
    if (others > 0)
        cpu_ze_note("zeEventPoolDestroy: %d events or recorded commands still use the pool; its "
                    "slots live until they are destroyed",
                    others);
    cpu_ze_pool_release(pool);
    return ZE_RESULT_SUCCESS;
}

/* The event lives in the pool's slot desc->index, which must be free: two
 * live events in one slot would share one state. */
CPU_ZE_ENTRY(zeEventCreate, ze_event_pool_handle_t hEventPool, const ze_event_desc_t *desc,
             ze_event_handle_t *phEvent)
{
    CPU_ZE_CHECK_HANDLE(hEventPool, CPU_ZE_KIND_POOL);
    CPU_ZE_CHECK_CREATE_DESC(desc, ZE_STRUCTURE_TYPE_EVENT_DESC, phEvent);
    if ((desc->signal | desc->wait) & ~(ze_event_scope_flags_t)0x7)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ENUMERATION,
                           "zeEventCreate: signal = 0x%x, wait = 0x%x", desc->signal, desc->wait);
    struct cpu_ze_event_pool *pool = (struct cpu_ze_event_pool *)hEventPool;
    if (desc->index >= pool->count)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                           "zeEventCreate: index = %u, pool has %u events", desc->index,
                           pool->count);
    struct cpu_ze_event *event = &pool->events[desc->index];
    /* Claiming the slot is the check: publishing an address that is live
     * fails atomically. */
    ze_result_t result = cpu_ze_handle_publish(event, CPU_ZE_KIND_EVENT);
    if (result == ZE_RESULT_ERROR_INVALID_ARGUMENT)
        return cpu_ze_fail(result, "zeEventCreate: index %u already holds a live event",
                           desc->index);
    if (result != ZE_RESULT_SUCCESS)
        return result;
    atomic_store_explicit(&event->signalled, 0, memory_order_release);
    event->start_ns = event->end_ns = 0;
    cpu_ze_pool_retain(pool);
    *phEvent = (ze_event_handle_t)event;
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeEventDestroy, ze_event_handle_t hEvent)
{
    CPU_ZE_CHECK_HANDLE(hEvent, CPU_ZE_KIND_EVENT);
    CPU_ZE_RETIRE_HANDLE(hEvent, CPU_ZE_KIND_EVENT);
    cpu_ze_pool_release(((struct cpu_ze_event *)hEvent)->pool);
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeEventHostSignal, ze_event_handle_t hEvent)
{
    CPU_ZE_CHECK_HANDLE(hEvent, CPU_ZE_KIND_EVENT);
    struct cpu_ze_event *event = (struct cpu_ze_event *)hEvent;
    event->start_ns = event->end_ns = cpu_ze_now_ns();
    cpu_ze_flag_signal(&event->signalled);
    return ZE_RESULT_SUCCESS;
}

/* timeout in ns: UINT64_MAX waits forever, 0 only queries. */
CPU_ZE_ENTRY(zeEventHostSynchronize, ze_event_handle_t hEvent, uint64_t timeout)
{
    CPU_ZE_CHECK_HANDLE(hEvent, CPU_ZE_KIND_EVENT);
    return cpu_ze_flag_wait(&((struct cpu_ze_event *)hEvent)->signalled, timeout);
}

CPU_ZE_ENTRY(zeEventQueryStatus, ze_event_handle_t hEvent)
{
    CPU_ZE_CHECK_HANDLE(hEvent, CPU_ZE_KIND_EVENT);
    return cpu_ze_flag_wait(&((struct cpu_ze_event *)hEvent)->signalled, 0);
}

CPU_ZE_ENTRY(zeEventHostReset, ze_event_handle_t hEvent)
{
    CPU_ZE_CHECK_HANDLE(hEvent, CPU_ZE_KIND_EVENT);
    atomic_store_explicit(&((struct cpu_ze_event *)hEvent)->signalled, 0, memory_order_release);
    return ZE_RESULT_SUCCESS;
}

/* Host-clock nanoseconds around the signalling command (see
 * zeDeviceGetProperties: timerResolution 1 ns, 64 valid bits); global and
 * context stamps are the same clock. An event of a pool without
 * ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP answers too, with the time of its
 * signal as start and end: Intel's driver does not refuse it, and ze_peak's
 * immediate-list latency test queries such an event. */
void cpu_ze_event_timestamps(const struct cpu_ze_event *event, ze_kernel_timestamp_result_t *result)
{
    (void)atomic_load_explicit(&event->signalled, memory_order_acquire);
    result->global.kernelStart = result->context.kernelStart = event->start_ns;
    result->global.kernelEnd = result->context.kernelEnd = event->end_ns;
}

CPU_ZE_ENTRY(zeEventQueryKernelTimestamp, ze_event_handle_t hEvent,
             ze_kernel_timestamp_result_t *dstptr)
{
    CPU_ZE_CHECK_HANDLE(hEvent, CPU_ZE_KIND_EVENT);
    CPU_ZE_CHECK_POINTER(dstptr);
    struct cpu_ze_event *event = (struct cpu_ze_event *)hEvent;
    if (!cpu_ze_event_has_timestamps(event))
        cpu_ze_note("zeEventQueryKernelTimestamp: the pool lacks "
                    "ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP: the time of the signal, twice");
    if (!atomic_load_explicit(&event->signalled, memory_order_acquire))
        return ZE_RESULT_NOT_READY;
    cpu_ze_event_timestamps(event, dstptr);
    return ZE_RESULT_SUCCESS;
}
