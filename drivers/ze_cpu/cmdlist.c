/*
 * cmdlist.c - command lists: every append is validated, then recorded with
 * a snapshot of what Level Zero says is captured at append time (kernel
 * arguments, group size, fill pattern, wait lists).
 *
 * Regular lists keep the recording until reset and are replayed by queues.
 * A synchronous immediate list replays each append at once on the
 * caller's thread; an asynchronous one moves each append's recording to
 * its own worker.
 *
 * An append validates its arguments, then begin_command takes the list's
 * lock and records the command, the caller fills it in (nothing can fail
 * there), and end_command takes the references the command holds, runs it
 * on an immediate list and releases the lock.
 */
#include <stdlib.h>
#include <string.h>

#include "ze_cpu.h"

typedef struct cpu_ze_command_list list_t;

static ze_result_t create_list(struct cpu_ze_context *context, list_t **out)
{
    list_t *list = calloc(1, sizeof *list);
    if (list == NULL)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    list->context = context;
    pthread_mutex_init(&list->lock, NULL);
    atomic_init(&list->executions, 0);
    *out = list;
    return ZE_RESULT_SUCCESS;
}

/* Frees what create_list and zeCommandListCreateImmediate made. */
static void free_list(list_t *list)
{
    if (list->exec != NULL) {
        cpu_ze_executor_fini(list->exec);
        free(list->exec);
    }
    if (list->sync_queue != NULL)
        clReleaseCommandQueue(list->sync_queue);
    cpu_ze_recording_free(&list->rec);
    pthread_mutex_destroy(&list->lock);
    free(list);
}

static ze_result_t publish_list(list_t *list, ze_command_list_handle_t *phCommandList)
{
    ze_result_t result = cpu_ze_handle_publish(list, CPU_ZE_KIND_LIST);
    if (result != ZE_RESULT_SUCCESS) {
        free_list(list);
        return result;
    }
    cpu_ze_context_retain(list->context);
    *phCommandList = (ze_command_list_handle_t)list;
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeCommandListCreate, ze_context_handle_t hContext, ze_device_handle_t hDevice,
             const ze_command_list_desc_t *desc, ze_command_list_handle_t *phCommandList)
{
    CPU_ZE_CHECK_HANDLE(hContext, CPU_ZE_KIND_CONTEXT);
    CPU_ZE_CHECK_DEVICE(hDevice);
    CPU_ZE_CHECK_CREATE_DESC(desc, ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, phCommandList);
    if (desc->flags & ~(ze_command_list_flags_t)0x7)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ENUMERATION, "zeCommandListCreate: flags = 0x%x",
                           desc->flags);
    if (desc->commandQueueGroupOrdinal != 0)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                           "zeCommandListCreate: commandQueueGroupOrdinal = %u, the device has "
                           "one group",
                           desc->commandQueueGroupOrdinal);
    list_t *list;
    ze_result_t result = create_list((struct cpu_ze_context *)hContext, &list);
    if (result != ZE_RESULT_SUCCESS)
        return result;
    return publish_list(list, phCommandList);
}

/* ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS: each append completes before it
 * returns. DEFAULT and ASYNCHRONOUS: appends run in order on a worker. */
CPU_ZE_ENTRY(zeCommandListCreateImmediate, ze_context_handle_t hContext, ze_device_handle_t hDevice,
             const ze_command_queue_desc_t *altdesc, ze_command_list_handle_t *phCommandList)
{
    CPU_ZE_CHECK_QUEUE_CREATE(hContext, hDevice, altdesc, phCommandList,
                              "zeCommandListCreateImmediate");
    struct cpu_ze_context *context = (struct cpu_ze_context *)hContext;
    list_t *list;
    ze_result_t result = create_list(context, &list);
    if (result != ZE_RESULT_SUCCESS)
        return result;
    list->immediate = true;
    list->synchronous = altdesc->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
    if (list->synchronous) {
        cl_int err;
        list->sync_queue =
                clCreateCommandQueueWithProperties(context->cl, cpu_ze.engine.device, NULL, &err);
        if (list->sync_queue == NULL)
            result = cpu_ze_fail(ZE_RESULT_ERROR_UNKNOWN, "clCreateCommandQueueWithProperties: %s",
                                 cpu_ze_cl_error_name(err));
    } else {
        list->exec = calloc(1, sizeof *list->exec);
        result = list->exec ? cpu_ze_executor_init(list->exec, context)
                            : ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        if (result != ZE_RESULT_SUCCESS) {
            free(list->exec);
            list->exec = NULL;
        }
    }
    if (result != ZE_RESULT_SUCCESS) {
        free_list(list);
        return result;
    }
    return publish_list(list, phCommandList);
}

/* Waits a moment for executions that are finishing; false if the list is
 * still in use after that. */
static bool wait_idle(list_t *list)
{
    if (list->exec != NULL)
        return cpu_ze_executor_wait(list->exec, CPU_ZE_IN_USE_GRACE_NS) != ZE_RESULT_NOT_READY;
    return cpu_ze_counter_wait_zero(&list->executions, CPU_ZE_IN_USE_GRACE_NS);
}

/* Refuses while the list is executing (after waiting a moment for an
 * execution that is finishing): a queue's worker is reading it. What the
 * list recorded drops its references (kernels, event pools), which may
 * free objects whose handles were destroyed before. */
CPU_ZE_ENTRY(zeCommandListDestroy, ze_command_list_handle_t hCommandList)
{
    CPU_ZE_CHECK_HANDLE(hCommandList, CPU_ZE_KIND_LIST);
    list_t *list = (list_t *)hCommandList;
    if (!wait_idle(list))
        return cpu_ze_fail(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE,
                           "zeCommandListDestroy: the list is still executing");
    CPU_ZE_RETIRE_HANDLE(hCommandList, CPU_ZE_KIND_LIST);
    pthread_mutex_lock(&list->lock); /* let an append in progress finish */
    pthread_mutex_unlock(&list->lock);
    struct cpu_ze_context *context = list->context;
    free_list(list);
    cpu_ze_context_release(context);
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeCommandListClose, ze_command_list_handle_t hCommandList)
{
    CPU_ZE_CHECK_HANDLE(hCommandList, CPU_ZE_KIND_LIST);
    list_t *list = (list_t *)hCommandList;
    pthread_mutex_lock(&list->lock);
    if (!list->immediate)
        list->closed = true;
    pthread_mutex_unlock(&list->lock);
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeCommandListReset, ze_command_list_handle_t hCommandList)
{
    CPU_ZE_CHECK_HANDLE(hCommandList, CPU_ZE_KIND_LIST);
    list_t *list = (list_t *)hCommandList;
    pthread_mutex_lock(&list->lock);
    ze_result_t result = ZE_RESULT_SUCCESS;
    if (wait_idle(list)) {
        cpu_ze_recording_clear(&list->rec);
        list->closed = false;
    } else {
        result = cpu_ze_fail(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE,
                             "zeCommandListReset: the list is still executing");
    }
    pthread_mutex_unlock(&list->lock);
    return result;
}

ze_result_t cpu_ze_list_admit(struct cpu_ze_command_list *list, struct cpu_ze_context *context,
                              uint32_t index)
{
    ze_result_t result = ZE_RESULT_SUCCESS;
    pthread_mutex_lock(&list->lock);
    if (list->immediate)
        result = cpu_ze_fail(ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE,
                             "zeCommandQueueExecuteCommandLists: list %u is immediate", index);
    else if (!list->closed)
        result = cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                             "zeCommandQueueExecuteCommandLists: list %u is not closed", index);
    else if (list->context != context)
        result = cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                             "zeCommandQueueExecuteCommandLists: list %u belongs to another "
                             "context",
                             index);
    else
        atomic_fetch_add(&list->executions, 1);
    pthread_mutex_unlock(&list->lock);
    return result;
}

/* --- Appending ----------------------------------------------------------------------- */

static ze_result_t check_events(ze_event_handle_t signal, uint32_t num_waits,
                                ze_event_handle_t *waits, const char *caller)
{
    if (signal != NULL)
        CPU_ZE_CHECK_HANDLE(signal, CPU_ZE_KIND_EVENT);
    if (num_waits > 0 && waits == NULL)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_SIZE,
                           "%s: numWaitEvents = %u, phWaitEvents = NULL", caller, num_waits);
    for (uint32_t i = 0; i < num_waits; i++)
        CPU_ZE_CHECK_HANDLE(waits[i], CPU_ZE_KIND_EVENT);
    return ZE_RESULT_SUCCESS;
}

/* Takes the list's lock and records a command of kind with its events
 * (already validated) and extra_bytes of arena space at *extra_offset for
 * the caller to fill. Returns the command with the lock held, for
 * end_command; or NULL with *result set and the lock released (closed
 * list, out of memory: the recording is left as it was). */
static cpu_ze_command_t *begin_command(list_t *list, cpu_ze_command_kind_t kind,
                                       ze_event_handle_t signal, uint32_t num_waits,
                                       ze_event_handle_t *waits, size_t extra_bytes,
                                       size_t *extra_offset, ze_result_t *result,
                                       const char *caller)
{
    pthread_mutex_lock(&list->lock);
    *result = ZE_RESULT_SUCCESS;
    if (!list->immediate && list->closed)
        *result = cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ARGUMENT, "%s: the command list is closed",
                              caller);
    else if (!list->immediate && atomic_load(&list->executions) > 0)
        *result = cpu_ze_fail(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE,
                              "%s: the command list is executing", caller);
    if (*result != ZE_RESULT_SUCCESS) {
        pthread_mutex_unlock(&list->lock);
        return NULL;
    }

    cpu_ze_recording_t *rec = &list->rec;
    size_t arena_mark = rec->arena_used, waits_offset = 0;
    cpu_ze_command_t *cmd = NULL;
    void *copy = NULL;
    if (num_waits > 0)
        copy = cpu_ze_recording_reserve(rec, num_waits * sizeof(struct cpu_ze_event *),
                                        &waits_offset);
    if (num_waits == 0 || copy != NULL) {
        if (copy != NULL)
            memcpy(copy, waits, num_waits * sizeof(struct cpu_ze_event *));
        if (extra_bytes == 0 || cpu_ze_recording_reserve(rec, extra_bytes, extra_offset) != NULL)
            cmd = cpu_ze_recording_push(rec);
    }
    if (cmd == NULL) {
        rec->arena_used = arena_mark;
        pthread_mutex_unlock(&list->lock);
        *result = cpu_ze_fail(ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", caller);
        return NULL;
    }
    cmd->kind = kind;
    cmd->num_waits = num_waits;
    cmd->waits_offset = waits_offset;
    cmd->signal = (struct cpu_ze_event *)signal;
    return cmd;
}

/* Ends what begin_command began: the command (now complete) takes its
 * references; an immediate list runs it (a synchronous one before the lock
 * is released, so its replay reads a recording nobody else touches; an
 * asynchronous one hands the recording to its worker). Returns the
 * result. */
static ze_result_t end_command(list_t *list, const cpu_ze_command_t *cmd)
{
    ze_result_t result = ZE_RESULT_SUCCESS;
    cpu_ze_command_retain(&list->rec, cmd);
    if (list->immediate && list->synchronous) {
        result = cpu_ze_replay(&list->rec, list->sync_queue);
        cpu_ze_recording_clear(&list->rec);
    } else if (list->immediate) {
        cpu_ze_job_t *job = calloc(1, sizeof *job);
        cpu_ze_recording_t *owned = malloc(sizeof *owned);
        if (job == NULL || owned == NULL) {
            free(job);
            free(owned);
            cpu_ze_recording_clear(&list->rec);
            result = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        } else {
            *owned = list->rec; /* the worker frees it after running it */
            memset(&list->rec, 0, sizeof list->rec);
            job->owned = owned;
            cpu_ze_executor_submit(list->exec, job);
        }
    }
    pthread_mutex_unlock(&list->lock);
    return result;
}

#define CHECK_EVENTS(signal, num_waits, waits)                                                     \
    do {                                                                                           \
        ze_result_t r_ = check_events(signal, num_waits, waits, __func__);                         \
        if (r_ != ZE_RESULT_SUCCESS)                                                               \
            return r_;                                                                             \
    } while (0)

CPU_ZE_ENTRY(zeCommandListAppendLaunchKernel, ze_command_list_handle_t hCommandList,
             ze_kernel_handle_t hKernel, const ze_group_count_t *pLaunchFuncArgs,
             ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
             ze_event_handle_t *phWaitEvents)
{
    CPU_ZE_CHECK_HANDLE(hCommandList, CPU_ZE_KIND_LIST);
    CPU_ZE_CHECK_HANDLE(hKernel, CPU_ZE_KIND_KERNEL);
    CPU_ZE_CHECK_POINTER(pLaunchFuncArgs);
    CHECK_EVENTS(hSignalEvent, numWaitEvents, phWaitEvents);
    list_t *list = (list_t *)hCommandList;
    struct cpu_ze_kernel *kernel = (struct cpu_ze_kernel *)hKernel;
    if (kernel->module->context != list->context)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                           "zeCommandListAppendLaunchKernel: the kernel belongs to another "
                           "context");
    for (uint32_t i = 0; i < kernel->num_args; i++)
        if (!kernel->arg_is_set[i])
            return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                               "zeCommandListAppendLaunchKernel: %s: argument %u was never set",
                               kernel->info->name, i);

    ze_result_t result;
    size_t values_offset = 0;
    cpu_ze_command_t *cmd =
            begin_command(list, CPU_ZE_CMD_LAUNCH, hSignalEvent, numWaitEvents, phWaitEvents,
                          kernel->values_size, &values_offset, &result, __func__);
    if (cmd == NULL)
        return result;
    memcpy(list->rec.arena + values_offset, kernel->values, kernel->values_size);
    cmd->u.launch.kernel = kernel;
    cmd->u.launch.values_offset = values_offset;
    cmd->u.launch.groups[0] = pLaunchFuncArgs->groupCountX;
    cmd->u.launch.groups[1] = pLaunchFuncArgs->groupCountY;
    cmd->u.launch.groups[2] = pLaunchFuncArgs->groupCountZ;
    memcpy(cmd->u.launch.group_size, kernel->group_size, sizeof kernel->group_size);
    return end_command(list, cmd);
}

/* The source is read when the copy executes, as on a GPU. */
CPU_ZE_ENTRY(zeCommandListAppendMemoryCopy, ze_command_list_handle_t hCommandList, void *dstptr,
             const void *srcptr, size_t size, ze_event_handle_t hSignalEvent,
             uint32_t numWaitEvents, ze_event_handle_t *phWaitEvents)
{
    CPU_ZE_CHECK_HANDLE(hCommandList, CPU_ZE_KIND_LIST);
    CPU_ZE_CHECK_POINTER(dstptr);
    CPU_ZE_CHECK_POINTER(srcptr);
    CHECK_EVENTS(hSignalEvent, numWaitEvents, phWaitEvents);
    list_t *list = (list_t *)hCommandList;
    uintptr_t dst = (uintptr_t)dstptr, src = (uintptr_t)srcptr;
    if (size > 0 && dst < src + size && src < dst + size)
        return cpu_ze_fail(ZE_RESULT_ERROR_OVERLAPPING_REGIONS,
                           "zeCommandListAppendMemoryCopy: %p and %p overlap (%zu bytes)", dstptr,
                           srcptr, size);
    ze_result_t result;
    cpu_ze_command_t *cmd = begin_command(list, CPU_ZE_CMD_COPY, hSignalEvent, numWaitEvents,
                                          phWaitEvents, 0, NULL, &result, __func__);
    if (cmd == NULL)
        return result;
    cmd->u.copy.dst = dstptr;
    cmd->u.copy.src = srcptr;
    cmd->u.copy.size = size;
    return end_command(list, cmd);
}

/* The pattern (a power of two up to 128 bytes) is copied at append time; a
 * size that is not a multiple of it ends with a partial pattern. */
CPU_ZE_ENTRY(zeCommandListAppendMemoryFill, ze_command_list_handle_t hCommandList, void *ptr,
             const void *pattern, size_t pattern_size, size_t size, ze_event_handle_t hSignalEvent,
             uint32_t numWaitEvents, ze_event_handle_t *phWaitEvents)
{
    CPU_ZE_CHECK_HANDLE(hCommandList, CPU_ZE_KIND_LIST);
    CPU_ZE_CHECK_POINTER(ptr);
    CPU_ZE_CHECK_POINTER(pattern);
    CHECK_EVENTS(hSignalEvent, numWaitEvents, phWaitEvents);
    list_t *list = (list_t *)hCommandList;
    if (pattern_size == 0 || pattern_size > 128 || (pattern_size & (pattern_size - 1)) != 0)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_SIZE,
                           "zeCommandListAppendMemoryFill: pattern_size = %zu (a power of two "
                           "up to 128)",
                           pattern_size);
    ze_result_t result;
    size_t pattern_offset = 0;
    cpu_ze_command_t *cmd =
            begin_command(list, CPU_ZE_CMD_FILL, hSignalEvent, numWaitEvents, phWaitEvents,
                          pattern_size, &pattern_offset, &result, __func__);
    if (cmd == NULL)
        return result;
    memcpy(list->rec.arena + pattern_offset, pattern, pattern_size);
    cmd->u.fill.dst = ptr;
    cmd->u.fill.size = size;
    cmd->u.fill.pattern_offset = pattern_offset;
    cmd->u.fill.pattern_size = pattern_size;
    return end_command(list, cmd);
}

static ze_result_t append_barrier(list_t *list, ze_event_handle_t signal, uint32_t num_waits,
                                  ze_event_handle_t *waits, const char *caller)
{
    ze_result_t result;
    cpu_ze_command_t *cmd = begin_command(list, CPU_ZE_CMD_BARRIER, signal, num_waits, waits, 0,
                                          NULL, &result, caller);
    return cmd == NULL ? result : end_command(list, cmd);
}

CPU_ZE_ENTRY(zeCommandListAppendBarrier, ze_command_list_handle_t hCommandList,
             ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
             ze_event_handle_t *phWaitEvents)
{
    CPU_ZE_CHECK_HANDLE(hCommandList, CPU_ZE_KIND_LIST);
    CHECK_EVENTS(hSignalEvent, numWaitEvents, phWaitEvents);
    return append_barrier((list_t *)hCommandList, hSignalEvent, numWaitEvents, phWaitEvents,
                          __func__);
}

/* Execution is in order and memory coherent: a ranges barrier is a barrier. */
CPU_ZE_ENTRY(zeCommandListAppendMemoryRangesBarrier, ze_command_list_handle_t hCommandList,
             uint32_t numRanges, const size_t *pRangeSizes, const void **pRanges,
             ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
             ze_event_handle_t *phWaitEvents)
{
    CPU_ZE_CHECK_HANDLE(hCommandList, CPU_ZE_KIND_LIST);
    if (numRanges > 0) {
        CPU_ZE_CHECK_POINTER(pRangeSizes);
        CPU_ZE_CHECK_POINTER(pRanges);
    }
    CHECK_EVENTS(hSignalEvent, numWaitEvents, phWaitEvents);
    return append_barrier((list_t *)hCommandList, hSignalEvent, numWaitEvents, phWaitEvents,
                          __func__);
}

CPU_ZE_ENTRY(zeCommandListAppendSignalEvent, ze_command_list_handle_t hCommandList,
             ze_event_handle_t hEvent)
{
    CPU_ZE_CHECK_HANDLE(hCommandList, CPU_ZE_KIND_LIST);
    CPU_ZE_CHECK_HANDLE(hEvent, CPU_ZE_KIND_EVENT);
    return append_barrier((list_t *)hCommandList, hEvent, 0, NULL, __func__);
}

CPU_ZE_ENTRY(zeCommandListAppendWaitOnEvents, ze_command_list_handle_t hCommandList,
             uint32_t numEvents, ze_event_handle_t *phEvents)
{
    CPU_ZE_CHECK_HANDLE(hCommandList, CPU_ZE_KIND_LIST);
    CPU_ZE_CHECK_POINTER(phEvents);
    CHECK_EVENTS(NULL, numEvents, phEvents);
    return append_barrier((list_t *)hCommandList, NULL, numEvents, phEvents, __func__);
}

CPU_ZE_ENTRY(zeCommandListAppendEventReset, ze_command_list_handle_t hCommandList,
             ze_event_handle_t hEvent)
{
    CPU_ZE_CHECK_HANDLE(hCommandList, CPU_ZE_KIND_LIST);
    CPU_ZE_CHECK_HANDLE(hEvent, CPU_ZE_KIND_EVENT);
    list_t *list = (list_t *)hCommandList;
    ze_result_t result;
    cpu_ze_command_t *cmd =
            begin_command(list, CPU_ZE_CMD_EVENT_RESET, NULL, 0, NULL, 0, NULL, &result, __func__);
    if (cmd == NULL)
        return result;
    cmd->u.reset = (struct cpu_ze_event *)hEvent;
    return end_command(list, cmd);
}

/* Writes the device clock (host monotonic ns) once earlier work is done. */
CPU_ZE_ENTRY(zeCommandListAppendWriteGlobalTimestamp, ze_command_list_handle_t hCommandList,
             uint64_t *dstptr, ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
             ze_event_handle_t *phWaitEvents)
{
    CPU_ZE_CHECK_HANDLE(hCommandList, CPU_ZE_KIND_LIST);
    CPU_ZE_CHECK_POINTER(dstptr);
    CHECK_EVENTS(hSignalEvent, numWaitEvents, phWaitEvents);
    list_t *list = (list_t *)hCommandList;
    ze_result_t result;
    cpu_ze_command_t *cmd = begin_command(list, CPU_ZE_CMD_TIMESTAMP, hSignalEvent, numWaitEvents,
                                          phWaitEvents, 0, NULL, &result, __func__);
    if (cmd == NULL)
        return result;
    cmd->u.timestamp_dst = dstptr;
    return end_command(list, cmd);
}

/*
 * Writes, once earlier work is done (and the wait events are signalled),
 * each event's ze_kernel_timestamp_result_t to dstptr + pOffsets[i] (or
 * dstptr + i * sizeof(ze_kernel_timestamp_result_t) without pOffsets), as
 * zeEventQueryKernelTimestamp would return it. The events and offsets are
 * copied at append time.
 */
CPU_ZE_ENTRY(zeCommandListAppendQueryKernelTimestamps, ze_command_list_handle_t hCommandList,
             uint32_t numEvents, ze_event_handle_t *phEvents, void *dstptr, const size_t *pOffsets,
             ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
             ze_event_handle_t *phWaitEvents)
{
    CPU_ZE_CHECK_HANDLE(hCommandList, CPU_ZE_KIND_LIST);
    if (numEvents > 0)
        CPU_ZE_CHECK_POINTER(phEvents);
    CPU_ZE_CHECK_POINTER(dstptr);
    CHECK_EVENTS(hSignalEvent, numWaitEvents, phWaitEvents);
    for (uint32_t i = 0; i < numEvents; i++)
        CPU_ZE_CHECK_HANDLE(phEvents[i], CPU_ZE_KIND_EVENT);
    list_t *list = (list_t *)hCommandList;
    size_t events_bytes = (size_t)numEvents * sizeof(struct cpu_ze_event *);
    size_t extra = events_bytes + (size_t)numEvents * sizeof(size_t), events_offset = 0;
    ze_result_t result;
    cpu_ze_command_t *cmd =
            begin_command(list, CPU_ZE_CMD_QUERY_TIMESTAMPS, hSignalEvent, numWaitEvents,
                          phWaitEvents, extra, &events_offset, &result, __func__);
    if (cmd == NULL)
        return result;
    uint8_t *arena = list->rec.arena;
    memcpy(arena + events_offset, phEvents, events_bytes);
    size_t *offsets = (size_t *)(void *)(arena + events_offset + events_bytes);
    for (uint32_t i = 0; i < numEvents; i++)
        offsets[i] = pOffsets != NULL ? pOffsets[i] : i * sizeof(ze_kernel_timestamp_result_t);
    cmd->u.query.num_events = numEvents;
    cmd->u.query.events_offset = events_offset;
    cmd->u.query.dst = dstptr;
    cmd->u.query.offsets_offset = events_offset + events_bytes;
    return end_command(list, cmd);
}

/* Memory is host memory: prefetch and advice are accepted hints. They are
 * not recorded, but a closed list still refuses them. */
static ze_result_t accept_hint(list_t *list, const char *caller)
{
    ze_result_t result;
    pthread_mutex_lock(&list->lock);
    result = !list->immediate && list->closed
                     ? cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                                   "%s: the command list is closed", caller)
                     : ZE_RESULT_SUCCESS;
    pthread_mutex_unlock(&list->lock);
    return result;
}

CPU_ZE_ENTRY(zeCommandListAppendMemoryPrefetch, ze_command_list_handle_t hCommandList,
             const void *ptr, size_t size)
{
    CPU_ZE_CHECK_HANDLE(hCommandList, CPU_ZE_KIND_LIST);
    CPU_ZE_CHECK_POINTER(ptr);
    return accept_hint((list_t *)hCommandList, __func__);
}

CPU_ZE_ENTRY(zeCommandListAppendMemAdvise, ze_command_list_handle_t hCommandList,
             ze_device_handle_t hDevice, const void *ptr, size_t size, ze_memory_advice_t advice)
{
    CPU_ZE_CHECK_HANDLE(hCommandList, CPU_ZE_KIND_LIST);
    CPU_ZE_CHECK_DEVICE(hDevice);
    CPU_ZE_CHECK_POINTER(ptr);
    if ((unsigned)advice > ZE_MEMORY_ADVICE_BIAS_UNCACHED)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ENUMERATION,
                           "zeCommandListAppendMemAdvise: advice = %d", (int)advice);
    return accept_hint((list_t *)hCommandList, __func__);
}
