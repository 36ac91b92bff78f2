/*
 * cp_device.c - what both passes append to the ring's command list: views
 * of the caller's tensors, barriers, merges, the staging of the rank's own
 * block and the loading of a received one.
 *
 * Every operation appended here waits for everything appended before it (a
 * barrier first): the ring's work is a chain, and a Level Zero list is not
 * in order unless told so.
 */
#include "cp_internal.h"
#include "error.h"

int64_t cp_chunk_offset(const sdpa_cp_t *cp, const sdpa_tensor_desc_t *t, int chunk)
{
    return chunk * cp->chunk_len * t->strides[2];
}

const void *cp_advance(const sdpa_cp_t *cp, const void *pointer, int64_t elements)
{
    return pointer ? (const char *)pointer + elements * (int64_t)cp->elem_bytes : NULL;
}

sdpa_status_t cp_barrier(sdpa_cp_t *cp)
{
    ze_result_t result = zeCommandListAppendBarrier(cp->list, NULL, 0, NULL);
    return result == ZE_RESULT_SUCCESS ? SDPA_SUCCESS
                                       : cp_ze_failure(result, "zeCommandListAppendBarrier");
}

sdpa_status_t cp_merge(sdpa_cp_t *cp, sdpa_primitive_t *merge, const void *const *states,
                       const float *const *states_lse, void *dst, float *dst_lse)
{
    sdpa_status_t status = cp_barrier(cp);
    if (status != SDPA_SUCCESS)
        return status;
    sdpa_merge_args_t a = {.struct_size = sizeof(a),
                           .struct_version = SDPA_MERGE_ARGS_VERSION,
                           .states = states,
                           .states_lse = states_lse,
                           .dst = dst,
                           .dst_lse = dst_lse,
                           .command_list = cp->list};
    status = cp->be->merge_execute(merge, &a);
    return status == SDPA_SUCCESS ? status : cp_backend_failure(cp, status, "merge_execute");
}

/* One of the rank's K or V into the host ring buffer at dst: a copy when
 * the caller's tensor is dense, else the packing merge. */
static sdpa_status_t stage(sdpa_cp_t *cp, sdpa_primitive_t *pack, const void *src, void *dst)
{
    if (pack) {
        const void *states[1] = {src};
        const float *lse[1] = {cp->zero_lse};
        return cp_merge(cp, pack, states, lse, dst, NULL);
    }
    ze_result_t result =
            zeCommandListAppendMemoryCopy(cp->list, dst, src, cp->block_bytes, NULL, 0, NULL);
    return result == ZE_RESULT_SUCCESS ? SDPA_SUCCESS
                                       : cp_ze_failure(result, "zeCommandListAppendMemoryCopy");
}

sdpa_status_t cp_stage_own_block(sdpa_cp_t *cp, const sdpa_exec_args_t *args)
{
    char *ring = cp->ring[0];
    sdpa_status_t status;
    if ((status = cp_barrier(cp)) || (status = stage(cp, cp->pack_k, args->k, ring)) ||
        (status = stage(cp, cp->pack_v, args->v, ring + cp->block_bytes)))
        return status;
    return cp_signal_after(cp, cp->staged);
}

sdpa_status_t cp_load_block(sdpa_cp_t *cp, int slot)
{
    sdpa_status_t status = cp_barrier(cp);
    if (status != SDPA_SUCCESS)
        return status;
    ze_result_t result = zeCommandListAppendMemoryCopy(cp->list, cp->kv_dev, cp->ring[slot],
                                                       2 * cp->block_bytes, NULL, 0, NULL);
    return result == ZE_RESULT_SUCCESS ? SDPA_SUCCESS
                                       : cp_ze_failure(result, "zeCommandListAppendMemoryCopy");
}

/* The K and V of a task's key chunk at a step: the caller's (step 0) or
 * kv_dev's. */
static void task_kv(const sdpa_cp_t *cp, const sdpa_exec_args_t *args, int step, int k_chunk,
                    const void **k, const void **v)
{
    if (step == 0) {
        *k = cp_advance(cp, args->k, cp_chunk_offset(cp, &cp->problem.k, k_chunk));
        *v = cp_advance(cp, args->v, cp_chunk_offset(cp, &cp->problem.v, k_chunk));
        return;
    }
    /* kv_dev: the dense block, K then V; a chunk is chunk_len rows of D. */
    int64_t offset = k_chunk * cp->chunk_len * cp->head_size;
    *k = cp_advance(cp, cp->kv_dev, offset);
    *v = cp_advance(cp, (const char *)cp->kv_dev + cp->block_bytes, offset);
}

void cp_task_args(const sdpa_cp_t *cp, const sdpa_exec_args_t *args, int step,
                  const cp_task_t *task, sdpa_exec_args_t *a)
{
    *a = (sdpa_exec_args_t){.struct_size = sizeof(*a), .struct_version = SDPA_EXEC_ARGS_VERSION};
    a->q = cp_advance(cp, args->q, cp_chunk_offset(cp, &cp->problem.q, task->q_chunk));
    task_kv(cp, args, step, task->k_chunk, &a->k, &a->v);
    a->scale = args->scale;
    a->scale_ptr = args->scale_ptr;
    a->command_list = cp->list;
}

sdpa_status_t cp_execute_task(sdpa_cp_t *cp, int step, const cp_task_t *task,
                              const sdpa_exec_args_t *a)
{
    int source = step == 0 ? CP_KV_CALLER : CP_KV_RING;
    int mask = task->mask == SDPA_MASK_NONE ? CP_MASK_NONE : CP_MASK_DIAGONAL;
    sdpa_status_t status = cp_barrier(cp);
    if (status != SDPA_SUCCESS)
        return status;
    status = cp->be->primitive_execute(cp->attn[source][mask], a);
    return status == SDPA_SUCCESS ? status
                                  : cp_backend_failure(cp, status, "primitive_execute");
}

sdpa_status_t cp_wait_staged(sdpa_cp_t *cp)
{
    if (cp->failure != SDPA_SUCCESS)
        return SDPA_SUCCESS; /* the event may never come */
    double start = cp_now();
    ze_result_t result = zeEventHostSynchronize(cp->staged, UINT64_MAX);
    if (result == ZE_RESULT_SUCCESS)
        result = zeEventHostReset(cp->staged);
    cp->stats.host_seconds += cp_now() - start;
    return result == ZE_RESULT_SUCCESS ? SDPA_SUCCESS
                                       : cp_ze_failure(result, "zeEventHostSynchronize(staged)");
}

sdpa_status_t cp_finish(sdpa_cp_t *cp, const sdpa_exec_args_t *args)
{
    double started = cp_now();
    if (cp->failure == SDPA_SUCCESS && args->signal_event) {
        ze_result_t result = zeCommandListAppendBarrier(cp->list, args->signal_event, 0, NULL);
        if (result != ZE_RESULT_SUCCESS)
            cp_note_failure(cp, cp_ze_failure(result, "zeCommandListAppendBarrier"));
    }
    /* After a break, drain what the device was given: a signal appended
     * already comes after all of it. */
    if (!cp_device_failed(cp) && !cp->step_done_armed)
        cp_note_failure(cp, cp_signal_after(cp, cp->step_done));
    cp_note_failure(cp, cp_wait_device(cp, cp->step_done, started, NULL, 0));
    return cp->failure;
}
