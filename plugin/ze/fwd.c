/* fwd.c - the forward launch: one sdpa_fwd kernel per execution. */
#include "error.h"
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
    status = ze_kernel_from_cache(prim->ctx, SDPA_FWD_SOURCE, plan->d_max, plan->subgroup_size,
                                  &plan->constants, plan->build_flags, SDPA_FWD_KERNEL,
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
    const sdpa_problem_desc_t *p = &prim->problem;
    ze_kernel_handle_t k = prim->fwd_kernel;
    int training = p->prop_kind == SDPA_FORWARD_TRAINING;
    float scale = 1.0f, inv_scale = 1.0f;
    if (p->scale_kind == SDPA_SCALE_HOST) {
        scale = a->scale;
        inv_scale = 1.0f / a->scale;
    }
    const void *scale_ptr = p->scale_kind == SDPA_SCALE_DEVICE ? a->scale_ptr : NULL;
    const void *mask = p->mask_kind == SDPA_MASK_BUFFER ? a->mask : NULL;

    /* Dropout: host scalars or device pointers (the offset is 0, or no
     * pointer, without with_offset); the kernel reads only what its
     * constants select, the rest is passed as 0 / NULL. */
    const sdpa_dropout_desc_t *dr = &p->dropout;
    const int host_dropout = dr->enabled && dr->host_scalars;
    const int device_dropout = dr->enabled && !dr->host_scalars;
    int64_t seed = host_dropout ? a->dropout_seed : 0;
    int64_t offset = host_dropout && dr->with_offset ? a->dropout_offset : 0;
    float drop_p = host_dropout ? a->dropout_p : 0.0f;
    const void *seed_ptr = device_dropout ? a->dropout_seed_ptr : NULL;
    const void *offset_ptr = device_dropout && dr->with_offset ? a->dropout_offset_ptr : NULL;
    const void *p_ptr = device_dropout ? a->dropout_p_ptr : NULL;
    void *keep_mask = dr->enabled && dr->with_mask_output ? a->dropout_mask : NULL;

    sdpa_status_t status;
    if ((status = ze_set_ptr(k, SDPA_FWD_ARG_K, a->k)) ||
        (status = ze_set_ptr(k, SDPA_FWD_ARG_Q, a->q)) ||
        (status = ze_set_ptr(k, SDPA_FWD_ARG_V, a->v)) ||
        (status = ze_set_ptr(k, SDPA_FWD_ARG_WS, training ? a->workspace : NULL)) ||
        (status = ze_set_ptr(k, SDPA_FWD_ARG_A, a->dst)) ||
        (status = ze_set_ptr(k, SDPA_FWD_ARG_SCALE_PTR, scale_ptr)) ||
        (status = ze_set_arg(k, SDPA_FWD_ARG_SCALE, sizeof(float), &scale)) ||
        (status = ze_set_arg(k, SDPA_FWD_ARG_INV_SCALE, sizeof(float), &inv_scale)) ||
        (status = ze_set_ptr(k, SDPA_FWD_ARG_K_SCALES, a->k_scales)) ||
        (status = ze_set_ptr(k, SDPA_FWD_ARG_K_ZP, a->k_zero_points)) ||
        (status = ze_set_ptr(k, SDPA_FWD_ARG_V_SCALES, a->v_scales)) ||
        (status = ze_set_ptr(k, SDPA_FWD_ARG_V_ZP, a->v_zero_points)) ||
        (status = ze_set_ptr(k, SDPA_FWD_ARG_MSK, mask)))
        return status;
    /* Dropout arguments: present in every module, read only when the
     * constants enable dropout. */
    if ((status = ze_set_ptr(k, SDPA_FWD_ARG_DROPOUT_MASK, keep_mask)) ||
        (status = ze_set_arg(k, SDPA_FWD_ARG_DROPOUT_SEED, sizeof(int64_t), &seed)) ||
        (status = ze_set_arg(k, SDPA_FWD_ARG_DROPOUT_OFFSET, sizeof(int64_t), &offset)) ||
        (status = ze_set_arg(k, SDPA_FWD_ARG_DROPOUT_P, sizeof(float), &drop_p)) ||
        (status = ze_set_ptr(k, SDPA_FWD_ARG_DROPOUT_SEED_PTR, seed_ptr)) ||
        (status = ze_set_ptr(k, SDPA_FWD_ARG_DROPOUT_OFFSET_PTR, offset_ptr)) ||
        (status = ze_set_ptr(k, SDPA_FWD_ARG_DROPOUT_P_PTR, p_ptr)))
        return status;

    ze_group_count_t groups = {prim->fwd.group_count[0], prim->fwd.group_count[1],
                               prim->fwd.group_count[2]};
    ze_result_t result = zeCommandListAppendLaunchKernel(list, k, &groups, a->signal_event,
                                                         a->num_wait_events, a->wait_events);
    if (result != ZE_RESULT_SUCCESS)
        return sdpa_ze_failf(result, "zeCommandListAppendLaunchKernel(%s)", SDPA_FWD_KERNEL);
    return SDPA_SUCCESS;
}
