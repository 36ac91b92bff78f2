/* fwd.c - the forward launch: one kernel per execution, the portable
 * sdpa_fwd, the fast path's sdpa_xe_fwd or the thin-Q sdpa_decode as the
 * plan chose, its arguments those of sdpa_fwd_args.def (all three take
 * them); a split-KV decode adds the merge of its partial states. */
#include <stdint.h>
#include <string.h>

#include "error.h"
#include "exec_scalars.h"
#include "kernel_abi.h"
#include "kernel_abi_merge.h"
#include "ze.h"
#include "ze_result.h"

/* Builds (or finds) the module and sets the group size, which never
 * changes. */
sdpa_status_t sdpa_ze_fwd_prepare(sdpa_primitive_t *prim)
{
    sdpa_fwd_plan_t *plan = &prim->fwd;
    sdpa_status_t status =
            sdpa_fwd_plan_make(&prim->problem, &prim->shape, &prim->ctx->device, plan);
    if (status != SDPA_SUCCESS)
        return status;
    status = sdpa_ze_kernel_from_cache(prim->ctx, plan->variant, plan->d_max, plan->subgroup_size,
                                       &plan->constants, plan->build_flags, plan->kernel_name,
                                       &sdpa_fwd_args_table, &prim->fwd_kernel);
    if (status != SDPA_SUCCESS)
        return status;
    SDPA_ZE_TRY(zeKernelSetGroupSize(prim->fwd_kernel, plan->local_size[0], plan->local_size[1],
                                     plan->local_size[2]));
    if (plan->kind != SDPA_FWD_KIND_DECODE || plan->num_splits <= 1)
        return SDPA_SUCCESS;
    const sdpa_merge_plan_t *m = &plan->merge;
    status = sdpa_ze_kernel_from_cache(prim->ctx, SDPA_MERGE_SOURCE, 0, 0, &m->constants,
                                       m->build_flags, SDPA_MERGE_KERNEL,
                                       &sdpa_merge_kernel_args_table, &prim->merge_kernel);
    if (status != SDPA_SUCCESS)
        return status;
    SDPA_ZE_TRY(zeKernelSetGroupSize(prim->merge_kernel, m->local_size[0], m->local_size[1],
                                     m->local_size[2]));
    return SDPA_SUCCESS;
}

/* log2 of a paged cache's block size (a power of two, sdpa_problem_check). */
static int32_t block_log2(int64_t block_size)
{
    int32_t n = 0;
    while (((int64_t)1 << n) < block_size)
        n++;
    return n;
}

/* The arguments of one execution: the plan's, and the pointers and scalars
 * of a, with what the problem does not use NULL or 0 (the kernel reads only
 * what its constants select). */
static void fwd_args(const sdpa_primitive_t *prim, const sdpa_exec_args_t *a, sdpa_fwd_args_t *v)
{
    const sdpa_problem_desc_t *p = &prim->problem;
    const sdpa_fwd_plan_t *plan = &prim->fwd;
    const sdpa_dropout_desc_t *dr = &p->dropout;
    *v = (sdpa_fwd_args_t){
            .K = a->k,
            .Q = a->q,
            .V = a->v,
            .WS = p->prop_kind == SDPA_FORWARD_TRAINING ? a->workspace : NULL,
            .DST = a->dst,
            .D = plan->head_size,
            .SK = plan->k_len,
            .SQ = plan->q_len,
            .K_SCALES = a->k_scales,
            .K_ZP = a->k_zero_points,
            .V_SCALES = a->v_scales,
            .V_ZP = a->v_zero_points,
            .MSK = p->mask_kind == SDPA_MASK_BUFFER ? a->mask : NULL,
            .DROPOUT_MASK = dr->enabled && dr->with_mask_output ? a->dropout_mask : NULL,
            .CU_SEQLENS_Q = p->varlen.enabled ? a->cu_seqlens_q : NULL,
            .CU_SEQLENS_K = p->varlen.enabled ? a->cu_seqlens_k : NULL,
            .TOTAL_Q = (int32_t)p->q.dims[2],
            .BLOCK_TABLE = p->paged_kv.enabled ? a->block_table : NULL,
            .CACHE_SEQLENS = p->paged_kv.enabled ? a->cache_seqlens : NULL,
            .BLOCK_TABLE_STRIDE = (int32_t)p->paged_kv.block_table_stride,
            .BLOCK_LOG2 = p->paged_kv.enabled ? block_log2(p->k.dims[2]) : 0,
            .TOTAL_K = (int32_t)p->k.dims[2],
            .NUM_BLOCKS = p->paged_kv.enabled ? (int32_t)p->k.dims[0] : 0,
            .SINKS = p->sinks ? a->sinks : NULL,
            .SLM = plan->slm_bytes,
    };
    memcpy(&v->K_S0, plan->strides, sizeof(plan->strides));
    sdpa_ze_exec_scalars_t s;
    sdpa_ze_exec_scalars(p, a, &s);
    SDPA_ZE_SET_EXEC_SCALARS(v, &s);
    SDPA_ZE_SET_SCORE_MODS(v, &s);
}

/* The plan's strides are the K_S0 .. MSK_S3 fields, in order. */
_Static_assert(offsetof(sdpa_fwd_args_t, MSK_S3) - offsetof(sdpa_fwd_args_t, K_S0) ==
                       (SDPA_FWD_STRIDE_ARGS - 1) * sizeof(int64_t),
               "the stride fields of sdpa_fwd_args_t are consecutive");

/* Appends the forward kernel with arguments v. */
static sdpa_status_t fwd_launch(sdpa_primitive_t *prim, const sdpa_fwd_args_t *v,
                                ze_command_list_handle_t list, ze_event_handle_t signal,
                                uint32_t num_waits, ze_event_handle_t *waits)
{
    ze_kernel_handle_t k = prim->fwd_kernel;
    sdpa_status_t status = sdpa_ze_set_args(k, prim->fwd.kernel_name, &sdpa_fwd_args_table, v);
    if (status != SDPA_SUCCESS)
        return status;
    ze_group_count_t groups = {prim->fwd.group_count[0], prim->fwd.group_count[1],
                               prim->fwd.group_count[2]};
    ze_result_t result =
            zeCommandListAppendLaunchKernel(list, k, &groups, signal, num_waits, waits);
    if (result != ZE_RESULT_SUCCESS)
        return sdpa_ze_failf(result, "zeCommandListAppendLaunchKernel(%s)", prim->fwd.kernel_name);
    return SDPA_SUCCESS;
}

/* Split-KV decode: the decode kernel writes the splits' states to scratch,
 * then the merge kernel combines them into O (and the workspace). The
 * leading barrier orders this execution after the previous user of the
 * list's scratch (and waits for the caller's events), the middle one the
 * merge after the splits. */
static sdpa_status_t split_execute(sdpa_primitive_t *prim, const sdpa_exec_args_t *a,
                                   sdpa_fwd_args_t *v, ze_command_list_handle_t list,
                                   sdpa_scratch_t *list_scratch)
{
    const sdpa_fwd_plan_t *plan = &prim->fwd;
    char *scratch = NULL;
    sdpa_status_t status = sdpa_scratch_for_execution(list_scratch, a, plan->split_scratch_bytes,
                                                      "this split-KV forward", &scratch);
    if (status != SDPA_SUCCESS)
        return status;
    if (a->num_wait_events || !a->scratch)
        SDPA_ZE_TRY(zeCommandListAppendBarrier(list, NULL, a->num_wait_events, a->wait_events));
    v->DST = scratch;
    v->WS = (float *)(void *)(scratch + plan->split_lse_offset);
    if ((status = fwd_launch(prim, v, list, NULL, 0, NULL)) != SDPA_SUCCESS)
        return status;
    SDPA_ZE_TRY(zeCommandListAppendBarrier(list, NULL, 0, NULL));

    const sdpa_merge_plan_t *m = &plan->merge;
    const int with_lse = prim->problem.prop_kind == SDPA_FORWARD_TRAINING;
    sdpa_merge_kernel_args_t mv = {.DST = a->dst,
                                   .DST_LSE = with_lse ? a->workspace : NULL,
                                   .SINKS = prim->problem.sinks ? a->sinks : NULL,
                                   .D = m->head_size};
    const void **o = &mv.O0, **lse = &mv.LSE0;
    /* The states lie one after the other (SDPA_DECODE_PART_ROW). */
    const sdpa_shape_t *s = &prim->shape;
    const size_t rows = (size_t)s->batch * (size_t)s->q_heads * (size_t)s->q_len;
    for (uint32_t i = 0; i < plan->num_splits; i++) {
        o[i] = scratch + i * rows * (size_t)s->head_size * sizeof(float);
        lse[i] = scratch + plan->split_lse_offset + i * rows * sizeof(float);
    }
    memcpy(&mv.O_S0, m->strides, sizeof(m->strides));
    status = sdpa_ze_set_args(prim->merge_kernel, SDPA_MERGE_KERNEL, &sdpa_merge_kernel_args_table,
                              &mv);
    if (status != SDPA_SUCCESS)
        return status;
    ze_group_count_t groups = {m->group_count[0], m->group_count[1], m->group_count[2]};
    ze_result_t result = zeCommandListAppendLaunchKernel(list, prim->merge_kernel, &groups,
                                                         a->signal_event, 0, NULL);
    if (result != ZE_RESULT_SUCCESS)
        return sdpa_ze_failf(result, "zeCommandListAppendLaunchKernel(%s)", SDPA_MERGE_KERNEL);
    return SDPA_SUCCESS;
}

sdpa_status_t sdpa_ze_fwd_execute(sdpa_primitive_t *prim, const sdpa_exec_args_t *a,
                                  ze_command_list_handle_t list, sdpa_scratch_t *list_scratch)
{
    sdpa_fwd_args_t v;
    fwd_args(prim, a, &v);
    if (prim->fwd.kind == SDPA_FWD_KIND_DECODE && prim->fwd.num_splits > 1)
        return split_execute(prim, a, &v, list, list_scratch);
    return fwd_launch(prim, &v, list, a->signal_event, a->num_wait_events, a->wait_events);
}
