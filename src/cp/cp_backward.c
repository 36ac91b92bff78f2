/*
 * cp_backward.c - the backward ring.
 *
 * The forward left, for every local query row, the log-sum-exp over all S
 * keys (the cp workspace) and the final O. With those, the backward of one
 * query chunk over one key chunk is exactly that chunk pair's share of the
 * gradients: P = exp(s - LSE) are the probabilities of the whole row and
 * D_i = rowsum(dO o O) that of the whole output, so each task is one
 * backward execution of the sdpa primitive, and the gradients are sums of
 * the tasks' results.
 *
 * Step t: the rank holds the K/V block of rank r - t and computes its tasks
 * over it (dQ, dK, dV of each task to host USM, in the problem's dtype).
 * Meanwhile the block goes on to the next rank. Once the device is done the
 * rank appends step t + 1 (the next block is loaded by then) and, while the
 * device runs it, adds its step-t dQ to its own accumulator, waits for the
 * f32 dK/dV accumulator of the step-t block from the previous rank (which
 * added its share at its step t - 1), adds its dK/dV to it and sends it on.
 * Steps alternate between two sets of task buffers for that. The wait for
 * an accumulator is a true dependency on the previous rank's progress: run
 * behind the next step's compute, it hides a lag of up to one step. After N
 * steps each accumulator has visited every rank and the last send brings it
 * home. The additions happen in ring order (ranks r, r + 1, ... for block r)
 * and task order, so with the deterministic backward every result is
 * bit-identical from run to run.
 */
#include <string.h>

#include "cp_internal.h"

/* Appends one step's tasks; their gradients go to part_d*[step % 2][task]. */
static sdpa_status_t append_step(sdpa_cp_t *cp, const sdpa_exec_args_t *args, int step,
                                 const cp_task_t *tasks, int count)
{
    const int set = step % 2;
    const size_t lse_chunk = (size_t)(cp->batch * cp->q_heads * cp->chunk_len);
    const sdpa_problem_desc_t *p = &cp->problem;
    for (int i = 0; i < count; i++) {
        const cp_task_t *task = &tasks[i];
        int q = task->q_chunk;
        sdpa_exec_args_t a;
        cp_task_args(cp, args, step, task, &a);
        a.dst = (void *)cp_advance(cp, args->dst, cp_chunk_offset(cp, &p->dst, q));
        a.workspace = (float *)args->workspace + q * lse_chunk;
        a.diff_dst = cp_advance(cp, args->diff_dst, cp_chunk_offset(cp, &p->diff_dst, q));
        a.diff_q = cp->part_dq[set][i];
        a.diff_k = cp->part_dk[set][i];
        a.diff_v = cp->part_dv[set][i];
        sdpa_status_t status = cp_execute_task(cp, step, task, &a);
        if (status != SDPA_SUCCESS)
            return status;
    }
    return cp_signal_after(cp, cp->step_done);
}

/* dQ of the tasks of step (in set step % 2) into dq_acc. */
static void add_dq(sdpa_cp_t *cp, int step, const cp_task_t *tasks, int count)
{
    const int set = step % 2;
    const size_t o_chunk = (size_t)(cp->batch * cp->q_heads * cp->chunk_len * cp->head_size);
    for (int i = 0; i < count; i++)
        cp_add_to_f32((float *)cp->dq_acc + tasks[i].q_chunk * o_chunk, cp->part_dq[set][i],
                      cp->dtype, o_chunk);
}

/* dK and dV of the tasks of step into the block's accumulator acc: f32 dK
 * then dV, each dense [B, Hkv, L, D]; a task's are [B, Hkv, c, D]. */
static void add_dkv(sdpa_cp_t *cp, float *acc, int step, const cp_task_t *tasks, int count)
{
    const int set = step % 2;
    const int64_t rows = cp->batch * cp->kv_heads, c = cp->chunk_len, d = cp->head_size;
    const size_t block = (size_t)(rows * cp->local_len * d);
    for (int i = 0; i < count; i++) {
        const char *dk = cp->part_dk[set][i], *dv = cp->part_dv[set][i];
        for (int64_t r = 0; r < rows; r++) {
            float *to = acc + r * cp->local_len * d + tasks[i].k_chunk * c * d;
            size_t from = (size_t)(r * c * d) * cp->elem_bytes;
            cp_add_to_f32(to, dk + from, cp->dtype, (size_t)(c * d));
            cp_add_to_f32(to + block, dv + from, cp->dtype, (size_t)(c * d));
        }
    }
}

/* Appends the conversions of the f32 sums into the caller's gradients. */
static sdpa_status_t write_gradients(sdpa_cp_t *cp, const sdpa_exec_args_t *args, float *own)
{
    const size_t o_chunk = (size_t)(cp->batch * cp->q_heads * cp->chunk_len * cp->head_size);
    const size_t block = (size_t)(cp->batch * cp->kv_heads * cp->local_len * cp->head_size);
    const float *lse[1] = {cp->zero_lse};
    const void *dk[1] = {own}, *dv[1] = {own + block};
    sdpa_status_t status;
    if ((status = cp_merge(cp, cp->to_diff_k, dk, lse, args->diff_k, NULL)) ||
        (status = cp_merge(cp, cp->to_diff_v, dv, lse, args->diff_v, NULL)))
        return status;
    for (int a = 0; a < cp->chunks; a++) {
        const void *dq[1] = {(float *)cp->dq_acc + a * o_chunk};
        void *dst = (void *)cp_advance(cp, args->diff_q,
                                       cp_chunk_offset(cp, &cp->problem.diff_q, a));
        if ((status = cp_merge(cp, cp->to_diff_q, dq, lse, dst, NULL)))
            return status;
    }
    return SDPA_SUCCESS;
}

/* Waits for an accumulator transfer: behind the device's next step if
 * there is one (busy), else exposed. */
static sdpa_status_t wait_accumulator(sdpa_cp_t *cp, cp_transfer_t *t, int busy)
{
    return busy ? cp_transfer_wait_busy(cp, t, cp->step_done) : cp_transfer_wait(cp, t);
}

sdpa_status_t cp_backward(sdpa_cp_t *cp, const sdpa_exec_args_t *args)
{
    const int ranks = cp->ranks;
    const size_t block = (size_t)(cp->batch * cp->kv_heads * cp->local_len * cp->head_size);
    const size_t block_pair = 2 * cp->block_bytes, acc_bytes = 2 * block * sizeof(float);
    const size_t dq_bytes = (size_t)cp->chunks *
                            (size_t)(cp->batch * cp->q_heads * cp->chunk_len * cp->head_size) *
                            sizeof(float);
    cp_transfer_t kv = {.count = 0}, acc_in = {.count = 0}, acc_out[2] = {{.count = 0}};
    cp_task_t tasks[2][CP_MAX_TASKS];
    int counts[2] = {0, 0};

    memset(cp->dq_acc, 0, dq_bytes);
    memset(cp->acc[0], 0, acc_bytes); /* the rank's own block starts here */
    if (ranks > 1)
        CP_DEVICE(cp, cp_stage_own_block(cp, args));
    double started = cp_now();
    counts[0] = cp_step_tasks(cp->layout, cp->causal, ranks, cp->rank, 0, tasks[0]);
    CP_DEVICE(cp, append_step(cp, args, 0, tasks[0], counts[0]));
    if (ranks > 1) {
        CP_ALWAYS(cp, cp_wait_staged(cp));
        CP_ALWAYS(cp, cp_post_recv(cp, &kv, cp->ring[1], block_pair, CP_TAG_KV));
        CP_ALWAYS(cp, cp_post_send(cp, &kv, cp->ring[0], block_pair, CP_TAG_KV));
    }
    cp->step = 0;
    for (int step = 0; step < ranks; step++) {
        const int slot = step % 2, more = step + 1 < ranks;
        cp->step = step;
        cp_transfer_t *pending[4] = {&kv, &acc_in, &acc_out[0], &acc_out[1]};
        CP_ALWAYS(cp, cp_wait_device(cp, cp->step_done, started, pending, 4));

        /* The device goes on with the next block while the host works. */
        if (more) {
            CP_ALWAYS(cp, cp_transfer_wait(cp, &kv));
            CP_DEVICE(cp, cp_load_block(cp, 1 - slot));
            started = cp_now();
            counts[1 - slot] = cp_step_tasks(cp->layout, cp->causal, ranks, cp->rank, step + 1,
                                             tasks[1 - slot]);
            CP_DEVICE(cp, append_step(cp, args, step + 1, tasks[1 - slot], counts[1 - slot]));
            if (step + 2 < ranks) {
                CP_ALWAYS(cp, cp_post_recv(cp, &kv, cp->ring[slot], block_pair, CP_TAG_KV));
                CP_ALWAYS(cp, cp_post_send(cp, &kv, cp->ring[1 - slot], block_pair, CP_TAG_KV));
            }
        }
        double host = cp_now();
        if (cp->failure == SDPA_SUCCESS)
            add_dq(cp, step, tasks[slot], counts[slot]);
        cp->stats.host_seconds += cp_now() - host;
        if (step > 0) /* the step's block's accumulator, from the previous rank */
            CP_ALWAYS(cp, wait_accumulator(cp, &acc_in, more));
        host = cp_now();
        if (cp->failure == SDPA_SUCCESS)
            add_dkv(cp, cp->acc[slot], step, tasks[slot], counts[slot]);
        cp->stats.host_seconds += cp_now() - host;
        if (ranks > 1) {
            /* On to the next rank (after the last step: home), and the next
             * accumulator in, into the buffer that left at step - 1. */
            CP_ALWAYS(cp, cp_post_send(cp, &acc_out[slot], cp->acc[slot], acc_bytes, CP_TAG_DKV));
            CP_ALWAYS(cp, wait_accumulator(cp, &acc_out[1 - slot], more));
            CP_ALWAYS(cp, cp_post_recv(cp, &acc_in, cp->acc[1 - slot], acc_bytes, CP_TAG_DKV));
        }
        cp->stats.steps++;
    }
    float *own = cp->acc[0];
    if (ranks > 1) {
        /* The rank's own block comes home from the previous rank. */
        own = cp->acc[ranks % 2];
        CP_ALWAYS(cp, cp_transfer_wait(cp, &acc_in));
        CP_ALWAYS(cp, cp_transfer_wait(cp, &acc_out[(ranks - 1) % 2]));
    }
    CP_DEVICE(cp, write_gradients(cp, args, own));
    cp_transfer_t *const transfers[4] = {&kv, &acc_in, &acc_out[0], &acc_out[1]};
    cp_transfers_abandon(cp, transfers, 4); /* after a break */
    return cp_finish(cp, args);
}
