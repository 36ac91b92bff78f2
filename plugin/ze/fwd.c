/* fwd.c - the forward launch: one kernel per execution, the portable
 * sdpa_fwd or the fast path's sdpa_xe_fwd as the plan chose, its arguments
 * those of sdpa_fwd_args.def (both kernels take them). */
#include <string.h>

#include "error.h"
#include "exec_scalars.h"
#include "kernel_abi.h"
#include "ze.h"
#include "ze_result.h"

/* Builds (or finds) the module and sets the group size, which never
 * changes. */
sdpa_status_t ze_fwd_prepare(sdpa_primitive_t *prim)
{
    sdpa_fwd_plan_t *plan = &prim->fwd;
    sdpa_status_t status =
            sdpa_fwd_plan_make(&prim->problem, &prim->shape, &prim->ctx->device, plan);
    if (status != SDPA_SUCCESS)
        return status;
    status = ze_kernel_from_cache(prim->ctx, plan->variant, plan->d_max, plan->subgroup_size,
                                  &plan->constants, plan->build_flags, plan->kernel_name,
                                  &sdpa_fwd_args_table, &prim->fwd_kernel);
    if (status != SDPA_SUCCESS)
        return status;
    SDPA_ZE_TRY(zeKernelSetGroupSize(prim->fwd_kernel, plan->local_size[0], plan->local_size[1],
                                     plan->local_size[2]));
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
            .SLM = plan->slm_bytes,
    };
    memcpy(&v->K_S0, plan->strides, sizeof(plan->strides));
    ze_exec_scalars_t s;
    ze_exec_scalars(p, a, &s);
    ZE_SET_EXEC_SCALARS(v, &s);
    ZE_SET_SCORE_MODS(v, &s);
}

/* The plan's strides are the K_S0 .. MSK_S3 fields, in order. */
_Static_assert(offsetof(sdpa_fwd_args_t, MSK_S3) - offsetof(sdpa_fwd_args_t, K_S0) ==
                       (SDPA_FWD_STRIDE_ARGS - 1) * sizeof(int64_t),
               "the stride fields of sdpa_fwd_args_t are consecutive");

sdpa_status_t ze_fwd_execute(sdpa_primitive_t *prim, const sdpa_exec_args_t *a,
                             ze_command_list_handle_t list)
{
    ze_kernel_handle_t k = prim->fwd_kernel;
    sdpa_fwd_args_t v;
    fwd_args(prim, a, &v);
    sdpa_status_t status = ze_set_args(k, prim->fwd.kernel_name, &sdpa_fwd_args_table, &v);
    if (status != SDPA_SUCCESS)
        return status;
    ze_group_count_t groups = {prim->fwd.group_count[0], prim->fwd.group_count[1],
                               prim->fwd.group_count[2]};
    ze_result_t result = zeCommandListAppendLaunchKernel(list, k, &groups, a->signal_event,
                                                         a->num_wait_events, a->wait_events);
    if (result != ZE_RESULT_SUCCESS)
        return sdpa_ze_failf(result, "zeCommandListAppendLaunchKernel(%s)", prim->fwd.kernel_name);
    return SDPA_SUCCESS;
}
