/*
 * cp_forward.c - the forward ring.
 *
 * Step t (0 .. N - 1): the rank holds the K/V block of rank r - t (its own
 * at step 0, read from the caller's tensors; later a received block in
 * kv_dev). It appends its tasks (cp_schedule.h) - for each, a training
 * forward of one query chunk over one key chunk into part_o and part_lse,
 * then the merge of that partial result into the chunk's running f32 O and
 * LSE - and, while the device runs them, sends the block it holds to the
 * next rank and receives the next one from the previous rank. The running
 * LSE is the cp workspace (or own_lse); the running O is acc_o, in f32 so
 * that N merges round only once at the end, when acc_o is converted into
 * the caller's O.
 *
 * A partial O has the problem's dtype (the forward writes q's dtype); with
 * f16 or bf16 it is first widened to f32 (a merge of one state) so that the
 * merge with the running O, whose states share one dtype, stays in f32.
 */
#include "cp_internal.h"

/* Appends the merge of the partial result now in part_o / part_lse into
 * chunk a's running O and LSE. */
static sdpa_status_t merge_partial(sdpa_cp_t *cp, int first, void *acc_o, float *acc_lse)
{
    const float *part_lse[1] = {cp->part_lse};
    if (first) {
        const void *part[1] = {cp->part_o};
        return cp_merge(cp, cp->merge_first, part, part_lse, acc_o, acc_lse);
    }
    const void *partial = cp->part_o;
    if (cp->dtype != SDPA_DTYPE_F32) {
        const void *part[1] = {cp->part_o};
        /* The LSE is written back in place (a merge of one state keeps it). */
        sdpa_status_t status =
                cp_merge(cp, cp->merge_first, part, part_lse, cp->tmp_o, (float *)cp->part_lse);
        if (status != SDPA_SUCCESS)
            return status;
        partial = cp->tmp_o;
    }
    const void *states[2] = {acc_o, partial};
    const float *lse[2] = {acc_lse, cp->part_lse};
    return cp_merge(cp, cp->merge_two, states, lse, acc_o, acc_lse);
}

/* Appends one step's tasks. first[a]: chunk a has no partial result yet. */
static sdpa_status_t append_step(sdpa_cp_t *cp, const sdpa_exec_args_t *args, int step,
                                 float *lse_base, int first[CP_MAX_CHUNKS])
{
    const size_t o_chunk = (size_t)(cp->batch * cp->q_heads * cp->chunk_len * cp->head_size);
    const size_t lse_chunk = (size_t)(cp->batch * cp->q_heads * cp->chunk_len);
    cp_task_t tasks[CP_MAX_TASKS];
    int count = cp_step_tasks(cp->layout, cp->causal, cp->ranks, cp->rank, step, tasks);
    for (int i = 0; i < count; i++) {
        const cp_task_t *task = &tasks[i];
        sdpa_exec_args_t a;
        cp_task_args(cp, args, step, task, &a);
        a.dst = cp->part_o;
        a.workspace = cp->part_lse;
        sdpa_status_t status = cp_execute_task(cp, step, task, &a);
        if (status != SDPA_SUCCESS)
            return status;
        int q = task->q_chunk;
        status = merge_partial(cp, first[q], (float *)cp->acc_o + q * o_chunk,
                               lse_base + q * lse_chunk);
        if (status != SDPA_SUCCESS)
            return status;
        first[q] = 0;
    }
    return cp_signal_after(cp, cp->step_done);
}

/* Appends the conversion of every chunk's running O into the caller's O. */
static sdpa_status_t write_output(sdpa_cp_t *cp, const sdpa_exec_args_t *args)
{
    const size_t o_chunk = (size_t)(cp->batch * cp->q_heads * cp->chunk_len * cp->head_size);
    for (int a = 0; a < cp->chunks; a++) {
        const void *states[1] = {(float *)cp->acc_o + a * o_chunk};
        const float *lse[1] = {cp->zero_lse};
        void *dst = (void *)cp_advance(cp, args->dst, cp_chunk_offset(cp, &cp->problem.dst, a));
        sdpa_status_t status = cp_merge(cp, cp->to_dst, states, lse, dst, NULL);
        if (status != SDPA_SUCCESS)
            return status;
    }
    return SDPA_SUCCESS;
}

sdpa_status_t cp_forward(sdpa_cp_t *cp, const sdpa_exec_args_t *args)
{
    float *lse_base = cp->training ? args->workspace : cp->own_lse;
    int first[CP_MAX_CHUNKS] = {1, 1};
    cp_transfer_t kv = {.count = 0};
    const size_t block_pair = 2 * cp->block_bytes;

    if (cp->ranks > 1)
        CP_DEVICE(cp, cp_stage_own_block(cp, args));
    for (int step = 0; step < cp->ranks; step++) {
        double started = cp_now();
        cp->step = step;
        CP_DEVICE(cp, append_step(cp, args, step, lse_base, first));
        int slot = step % 2, more = step + 1 < cp->ranks;
        if (more) {
            if (step == 0)
                CP_ALWAYS(cp, cp_wait_staged(cp));
            CP_ALWAYS(cp, cp_post_recv(cp, &kv, cp->ring[1 - slot], block_pair, CP_TAG_KV));
            CP_ALWAYS(cp, cp_post_send(cp, &kv, cp->ring[slot], block_pair, CP_TAG_KV));
        }
        cp_transfer_t *pending[1] = {&kv};
        CP_ALWAYS(cp, cp_wait_device(cp, cp->step_done, started, pending, 1));
        CP_ALWAYS(cp, cp_transfer_wait(cp, &kv));
        if (more)
            CP_DEVICE(cp, cp_load_block(cp, 1 - slot));
        cp->stats.steps++;
    }
    CP_DEVICE(cp, write_output(cp, args));
    cp_transfer_t *const transfers[1] = {&kv};
    cp_transfers_abandon(cp, transfers, 1); /* after a break */
    return cp_finish(cp, args);
}
