/*
 * fence.c - fences: a flag the queue's worker signals after an execution
 * (zeCommandQueueExecuteCommandLists) has completed.
 */
#include <stdlib.h>

#include "ze_cpu.h"

CPU_ZE_ENTRY(zeFenceCreate, ze_command_queue_handle_t hCommandQueue, const ze_fence_desc_t *desc,
             ze_fence_handle_t *phFence)
{
    CPU_ZE_CHECK_HANDLE(hCommandQueue, CPU_ZE_KIND_QUEUE);
    CPU_ZE_CHECK_CREATE_DESC(desc, ZE_STRUCTURE_TYPE_FENCE_DESC, phFence);
    if (desc->flags & ~(ze_fence_flags_t)ZE_FENCE_FLAG_SIGNALED)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ENUMERATION, "zeFenceCreate: flags = 0x%x",
                           desc->flags);
    struct cpu_ze_fence *fence = calloc(1, sizeof *fence);
    if (fence == NULL)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    struct cpu_ze_command_queue *queue = (struct cpu_ze_command_queue *)hCommandQueue;
    fence->queue = queue;
    atomic_init(&fence->signalled, (desc->flags & ZE_FENCE_FLAG_SIGNALED) ? 1u : 0u);
    atomic_init(&fence->pending, 0);
    ze_result_t result = cpu_ze_handle_publish(fence, CPU_ZE_KIND_FENCE);
    if (result != ZE_RESULT_SUCCESS) {
        free(fence);
        return result;
    }
    *phFence = (ze_fence_handle_t)fence;
    return ZE_RESULT_SUCCESS;
}

/* Refuses while a submitted execution will still signal the fence (after
 * waiting a moment for one that is finishing): the worker would write into
 * freed memory. The fence needs nothing of its queue, which may be
 * destroyed first. */
CPU_ZE_ENTRY(zeFenceDestroy, ze_fence_handle_t hFence)
{
    CPU_ZE_CHECK_HANDLE(hFence, CPU_ZE_KIND_FENCE);
    struct cpu_ze_fence *fence = (struct cpu_ze_fence *)hFence;
    if (!cpu_ze_counter_wait_zero(&fence->pending, CPU_ZE_IN_USE_GRACE_NS))
        return cpu_ze_fail(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE,
                           "zeFenceDestroy: an execution will still signal the fence");
    CPU_ZE_RETIRE_HANDLE(hFence, CPU_ZE_KIND_FENCE);
    free(fence);
    return ZE_RESULT_SUCCESS;
}

/* timeout in ns: UINT64_MAX waits forever, 0 only queries. */
CPU_ZE_ENTRY(zeFenceHostSynchronize, ze_fence_handle_t hFence, uint64_t timeout)
{
    CPU_ZE_CHECK_HANDLE(hFence, CPU_ZE_KIND_FENCE);
    return cpu_ze_flag_wait(&((struct cpu_ze_fence *)hFence)->signalled, timeout);
}

CPU_ZE_ENTRY(zeFenceQueryStatus, ze_fence_handle_t hFence)
{
    CPU_ZE_CHECK_HANDLE(hFence, CPU_ZE_KIND_FENCE);
    return cpu_ze_flag_wait(&((struct cpu_ze_fence *)hFence)->signalled, 0);
}

CPU_ZE_ENTRY(zeFenceReset, ze_fence_handle_t hFence)
{
    CPU_ZE_CHECK_HANDLE(hFence, CPU_ZE_KIND_FENCE);
    atomic_store_explicit(&((struct cpu_ze_fence *)hFence)->signalled, 0, memory_order_release);
    return ZE_RESULT_SUCCESS;
}
