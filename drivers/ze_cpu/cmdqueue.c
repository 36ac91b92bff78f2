/*
 * cmdqueue.c - command queues: an executor (in-order OpenCL queue + worker
 * thread) that replays the submitted command lists in submission order.
 */
#include <stdlib.h>

#include "ze_cpu.h"

ze_result_t cpu_ze_check_queue_desc(const ze_command_queue_desc_t *desc, const char *caller)
{
    CPU_ZE_CHECK_POINTER(desc);
    CPU_ZE_CHECK_STYPE(desc, ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC);
    if (desc->flags & ~(ze_command_queue_flags_t)ZE_COMMAND_QUEUE_FLAG_EXPLICIT_ONLY)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ENUMERATION, "%s: desc->flags = 0x%x", caller,
                           desc->flags);
    if ((unsigned)desc->mode > ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ENUMERATION, "%s: desc->mode = %d", caller,
                           (int)desc->mode);
    if ((unsigned)desc->priority > ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_HIGH)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ENUMERATION, "%s: desc->priority = %d", caller,
                           (int)desc->priority);
    if (desc->ordinal != 0 || desc->index != 0)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                           "%s: ordinal = %u, index = %u; the device has one queue group with "
                           "one queue",
                           caller, desc->ordinal, desc->index);
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeCommandQueueCreate, ze_context_handle_t hContext, ze_device_handle_t hDevice,
             const ze_command_queue_desc_t *desc, ze_command_queue_handle_t *phCommandQueue)
{
    CPU_ZE_CHECK_QUEUE_CREATE(hContext, hDevice, desc, phCommandQueue, "zeCommandQueueCreate");
    struct cpu_ze_command_queue *queue = calloc(1, sizeof *queue);
    if (queue == NULL)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    struct cpu_ze_context *context = (struct cpu_ze_context *)hContext;
    ze_result_t result = cpu_ze_executor_init(&queue->exec, context);
    if (result != ZE_RESULT_SUCCESS) {
        free(queue);
        return result;
    }
    queue->context = context;
    queue->mode = desc->mode;
    result = cpu_ze_handle_publish(queue, CPU_ZE_KIND_QUEUE);
    if (result != ZE_RESULT_SUCCESS) {
        cpu_ze_executor_fini(&queue->exec);
        free(queue);
        return result;
    }
    cpu_ze_context_retain(context);
    *phCommandQueue = (ze_command_queue_handle_t)queue;
    return ZE_RESULT_SUCCESS;
}

/* Refuses while executions have not finished (after waiting a moment for
 * ones that are finishing): they may wait on events nobody will signal,
 * so waiting longer could hang the program. Fences of the queue may
 * outlive it. */
CPU_ZE_ENTRY(zeCommandQueueDestroy, ze_command_queue_handle_t hCommandQueue)
{
    CPU_ZE_CHECK_HANDLE(hCommandQueue, CPU_ZE_KIND_QUEUE);
    struct cpu_ze_command_queue *queue = (struct cpu_ze_command_queue *)hCommandQueue;
    if (cpu_ze_executor_wait(&queue->exec, CPU_ZE_IN_USE_GRACE_NS) == ZE_RESULT_NOT_READY)
        return cpu_ze_fail(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE,
                           "zeCommandQueueDestroy: executions are still running");
    CPU_ZE_RETIRE_HANDLE(hCommandQueue, CPU_ZE_KIND_QUEUE);
    struct cpu_ze_context *context = queue->context;
    cpu_ze_executor_fini(&queue->exec);
    free(queue);
    cpu_ze_context_release(context);
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeCommandQueueExecuteCommandLists, ze_command_queue_handle_t hCommandQueue,
             uint32_t numCommandLists, ze_command_list_handle_t *phCommandLists,
             ze_fence_handle_t hFence)
{
    CPU_ZE_CHECK_HANDLE(hCommandQueue, CPU_ZE_KIND_QUEUE);
    CPU_ZE_CHECK_POINTER(phCommandLists);
    if (numCommandLists == 0)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_SIZE,
                           "zeCommandQueueExecuteCommandLists: numCommandLists = 0");
    struct cpu_ze_command_queue *queue = (struct cpu_ze_command_queue *)hCommandQueue;
    for (uint32_t i = 0; i < numCommandLists; i++)
        CPU_ZE_CHECK_HANDLE(phCommandLists[i], CPU_ZE_KIND_LIST);
    struct cpu_ze_fence *fence = NULL;
    if (hFence != NULL) {
        CPU_ZE_CHECK_HANDLE(hFence, CPU_ZE_KIND_FENCE);
        fence = (struct cpu_ze_fence *)hFence;
        if (fence->queue != queue)
            return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                               "zeCommandQueueExecuteCommandLists: the fence belongs to another "
                               "queue");
    }

    /* The caller's array may be a temporary (the loader's copy): keep ours. */
    cpu_ze_job_t *job = calloc(1, sizeof *job);
    struct cpu_ze_command_list **lists = malloc(numCommandLists * sizeof *lists);
    if (job == NULL || lists == NULL) {
        free(job);
        free(lists);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    for (uint32_t i = 0; i < numCommandLists; i++) {
        lists[i] = (struct cpu_ze_command_list *)phCommandLists[i];
        ze_result_t result = cpu_ze_list_admit(lists[i], queue->context, i);
        if (result != ZE_RESULT_SUCCESS) {
            while (i-- > 0)
                cpu_ze_counter_release(&lists[i]->executions);
            free(job);
            free(lists);
            return result;
        }
    }
    job->lists = lists;
    job->num_lists = numCommandLists;
    job->fence = fence;
    if (fence != NULL)
        atomic_fetch_add(&fence->pending, 1);
    cpu_ze_executor_submit(&queue->exec, job);
    if (queue->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS)
        return cpu_ze_executor_wait(&queue->exec, UINT64_MAX);
    return ZE_RESULT_SUCCESS;
}

/* timeout in ns: UINT64_MAX waits forever, 0 only queries. Reports the
 * first execution failure since the last synchronize. */
CPU_ZE_ENTRY(zeCommandQueueSynchronize, ze_command_queue_handle_t hCommandQueue, uint64_t timeout)
{
    CPU_ZE_CHECK_HANDLE(hCommandQueue, CPU_ZE_KIND_QUEUE);
    return cpu_ze_executor_wait(&((struct cpu_ze_command_queue *)hCommandQueue)->exec, timeout);
}
