/* fwd.c - the forward launch: one kernel per execution, the portable
 * sdpa_fwd here, the fast path's in fwd_xe.c. */
#include "error.h"
#include "fwd_exec.h"
#include "kernel_abi.h"
#include "ze.h"
#include "ze_result.h"

/* Builds (or finds) the module and sets the arguments that never change:
 * sizes, strides, local memory, group size. */
sdpa_status_t ze_fwd_prepare(sdpa_primitive_t *prim)
{
    sdpa_fwd_plan_t *plan = &prim->fwd;
    sdpa_status_t status =
            sdpa_fwd_plan_make(&prim->problem, &prim->shape, &prim->ctx->device, plan);
    if (status != SDPA_SUCCESS)
        return status;
    if (plan->xe)
        return ze_fwd_xe_prepare(prim);
    status = ze_kernel_from_cache(prim->ctx, plan->variant, plan->d_max, plan->subgroup_size,
                                  &plan->constants, plan->build_flags, plan->kernel_name,
                                  &prim->fwd_kernel);
    if (status != SDPA_SUCCESS)
        return status;

    ze_kernel_handle_t k = prim->fwd_kernel;
    SDPA_ZE_TRY(
            zeKernelSetGroupSize(k, plan->local_size[0], plan->local_size[1], plan->local_size[2]));
    if ((status = ze_set_arg(k, SDPA_FWD_ARG_D, sizeof(int32_t), &plan->head_size)) ||
        (status = ze_set_arg(k, SDPA_FWD_ARG_SK, sizeof(int32_t), &plan->k_len)) ||
        (status = ze_set_arg(k, SDPA_FWD_ARG_SQ, sizeof(int32_t), &plan->q_len)) ||
        (status = ze_set_arg(k, SDPA_FWD_ARG_REMAINDER_K, sizeof(int32_t), &plan->remainder_k)) ||
        (status = ze_set_arg(k, SDPA_FWD_ARG_SLM, plan->slm_bytes, NULL)))
        return status;
    for (uint32_t i = 0; i < SDPA_FWD_STRIDE_ARGS; i++)
        if ((status = ze_set_arg(k, SDPA_FWD_ARG_K_S0 + i, sizeof(int64_t), &plan->strides[i])))
            return status;
    return SDPA_SUCCESS;
}

sdpa_status_t ze_fwd_execute(sdpa_primitive_t *prim, const sdpa_exec_args_t *a,
                             ze_command_list_handle_t list)
{
    if (prim->fwd.xe)
        return ze_fwd_xe_execute(prim, a, list);
    ze_kernel_handle_t k = prim->fwd_kernel;
    ze_fwd_exec_t x;
    ze_fwd_exec_values(&prim->problem, a, &x);

    sdpa_status_t status;
    if ((status = ze_set_ptr(k, SDPA_FWD_ARG_K, x.k)) ||
        (status = ze_set_ptr(k, SDPA_FWD_ARG_Q, x.q)) ||
        (status = ze_set_ptr(k, SDPA_FWD_ARG_V, x.v)) ||
        (status = ze_set_ptr(k, SDPA_FWD_ARG_WS, x.workspace)) ||
        (status = ze_set_ptr(k, SDPA_FWD_ARG_A, x.dst)) ||
        (status = ze_set_ptr(k, SDPA_FWD_ARG_SCALE_PTR, x.scale_ptr)) ||
        (status = ze_set_arg(k, SDPA_FWD_ARG_SCALE, sizeof(float), &x.scale)) ||
        (status = ze_set_arg(k, SDPA_FWD_ARG_INV_SCALE, sizeof(float), &x.inv_scale)) ||
        (status = ze_set_ptr(k, SDPA_FWD_ARG_K_SCALES, x.k_scales)) ||
        (status = ze_set_ptr(k, SDPA_FWD_ARG_K_ZP, x.k_zero_points)) ||
        (status = ze_set_ptr(k, SDPA_FWD_ARG_V_SCALES, x.v_scales)) ||
        (status = ze_set_ptr(k, SDPA_FWD_ARG_V_ZP, x.v_zero_points)) ||
        (status = ze_set_ptr(k, SDPA_FWD_ARG_MSK, x.mask)))
        return status;
    /* Dropout arguments: present in every module, read only when the
     * constants enable dropout. */
    if ((status = ze_set_ptr(k, SDPA_FWD_ARG_DROPOUT_MASK, x.keep_mask)) ||
        (status = ze_set_arg(k, SDPA_FWD_ARG_DROPOUT_SEED, sizeof(int64_t), &x.dropout_seed)) ||
        (status = ze_set_arg(k, SDPA_FWD_ARG_DROPOUT_OFFSET, sizeof(int64_t),
                             &x.dropout_offset)) ||
        (status = ze_set_arg(k, SDPA_FWD_ARG_DROPOUT_P, sizeof(float), &x.dropout_p)) ||
        (status = ze_set_ptr(k, SDPA_FWD_ARG_DROPOUT_SEED_PTR, x.dropout_seed_ptr)) ||
        (status = ze_set_ptr(k, SDPA_FWD_ARG_DROPOUT_OFFSET_PTR, x.dropout_offset_ptr)) ||
        (status = ze_set_ptr(k, SDPA_FWD_ARG_DROPOUT_P_PTR, x.dropout_p_ptr)))
        return status;

    ze_group_count_t groups = {prim->fwd.group_count[0], prim->fwd.group_count[1],
                               prim->fwd.group_count[2]};
    ze_result_t result = zeCommandListAppendLaunchKernel(list, k, &groups, a->signal_event,
                                                         a->num_wait_events, a->wait_events);
    if (result != ZE_RESULT_SUCCESS)
        return sdpa_ze_fail("zeCommandListAppendLaunchKernel (sdpa_fwd)", result);
    return SDPA_SUCCESS;
}
