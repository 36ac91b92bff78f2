/* fwd_xe.c - the forward fast path's launch (spirv/sdpa_xe_fwd.cl): one
 * kernel per execution, its arguments driven by sdpa_xe_fwd_args.def. */
#include <stddef.h>
#include <string.h>

#include "error.h"
#include "fwd_exec.h"
#include "kernel_abi_xe.h"
#include "ze.h"
#include "ze_result.h"

_Static_assert(SDPA_XE_FWD_ARG_MSK_S3 - SDPA_XE_FWD_ARG_K_S0 + 1 == SDPA_FWD_STRIDE_ARGS,
               "the plan's strides are the fast path's K, Q, V, O and mask strides in order");

/* The host value of each argument, one field per row of the table, named
 * after the row; LOCAL rows hold the size in bytes. */
#define XE_HOST_PTR const void *
#define XE_HOST_INT int32_t
#define XE_HOST_LONG int64_t
#define XE_HOST_FLOAT float
#define XE_HOST_LOCAL uint32_t
typedef struct xe_fwd_args {
#define SDPA_XE_ARG(name, type, kind, meaning) XE_HOST_##kind name;
#define SDPA_XE_ARG_LAST SDPA_XE_ARG
#include "sdpa_xe_fwd_args.def"
#undef SDPA_XE_ARG
#undef SDPA_XE_ARG_LAST
} xe_fwd_args_t;

/* Sets every argument of k from v, in table order. */
static sdpa_status_t set_all(ze_kernel_handle_t k, const xe_fwd_args_t *v)
{
    sdpa_status_t status = SDPA_SUCCESS;
#define XE_VALUE_PTR(field) sizeof(v->field), &v->field
#define XE_VALUE_INT XE_VALUE_PTR
#define XE_VALUE_LONG XE_VALUE_PTR
#define XE_VALUE_FLOAT XE_VALUE_PTR
#define XE_VALUE_LOCAL(field) v->field, NULL
#define SDPA_XE_ARG(name, type, kind, meaning)                                                     \
    if (status == SDPA_SUCCESS)                                                                    \
        status = ze_set_arg(k, SDPA_XE_FWD_ARG_##name, XE_VALUE_##kind(name));
#define SDPA_XE_ARG_LAST SDPA_XE_ARG
#include "sdpa_xe_fwd_args.def"
#undef SDPA_XE_ARG
#undef SDPA_XE_ARG_LAST
    return status;
}

sdpa_status_t ze_fwd_xe_prepare(sdpa_primitive_t *prim)
{
    const sdpa_fwd_plan_t *plan = &prim->fwd;
    sdpa_status_t status = ze_kernel_from_cache(
            prim->ctx, plan->variant, plan->d_max, plan->subgroup_size, &plan->constants,
            plan->build_flags, plan->kernel_name, &prim->fwd_kernel);
    if (status != SDPA_SUCCESS)
        return status;
    /* The kernel's parameter list and the host's enum come from one table;
     * a mismatch means a stale or foreign module. */
    ze_kernel_properties_t props = {.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES};
    SDPA_ZE_TRY(zeKernelGetProperties(prim->fwd_kernel, &props));
    if (props.numKernelArgs != SDPA_XE_FWD_ARG_COUNT)
        return sdpa_fail(SDPA_ERROR_DEVICE,
                         "%s in %s.0.%u takes %u arguments, sdpa_xe_fwd_args.def lists %d",
                         plan->kernel_name, plan->variant, plan->subgroup_size, props.numKernelArgs,
                         (int)SDPA_XE_FWD_ARG_COUNT);
    SDPA_ZE_TRY(zeKernelSetGroupSize(prim->fwd_kernel, plan->local_size[0], plan->local_size[1],
                                     plan->local_size[2]));
    return SDPA_SUCCESS;
}

sdpa_status_t ze_fwd_xe_execute(sdpa_primitive_t *prim, const sdpa_exec_args_t *a,
                                ze_command_list_handle_t list)
{
    const sdpa_fwd_plan_t *plan = &prim->fwd;
    ze_fwd_exec_t x;
    ze_fwd_exec_values(&prim->problem, a, &x);
    xe_fwd_args_t v = {
            .K = x.k,
            .Q = x.q,
            .V = x.v,
            .WS = x.workspace,
            .A = x.dst,
            .SCALE_PTR = x.scale_ptr,
            .SCALE = x.scale,
            .INV_SCALE = x.inv_scale,
            .D = plan->head_size,
            .SK = plan->k_len,
            .SQ = plan->q_len,
            .K_SCALES = x.k_scales,
            .K_ZP = x.k_zero_points,
            .V_SCALES = x.v_scales,
            .V_ZP = x.v_zero_points,
            .MSK = x.mask,
            .DROPOUT_MASK = x.keep_mask,
            .DROPOUT_SEED = x.dropout_seed,
            .DROPOUT_OFFSET = x.dropout_offset,
            .DROPOUT_P = x.dropout_p,
            .DROPOUT_SEED_PTR = x.dropout_seed_ptr,
            .DROPOUT_OFFSET_PTR = x.dropout_offset_ptr,
            .DROPOUT_P_PTR = x.dropout_p_ptr,
            .SLM = plan->slm_bytes,
    };
    memcpy(&v.K_S0, plan->strides, sizeof(plan->strides));
    _Static_assert(offsetof(xe_fwd_args_t, MSK_S3) - offsetof(xe_fwd_args_t, K_S0) ==
                           (SDPA_FWD_STRIDE_ARGS - 1) * sizeof(int64_t),
                   "the stride fields are consecutive");

    ze_kernel_handle_t k = prim->fwd_kernel;
    sdpa_status_t status = set_all(k, &v);
    if (status != SDPA_SUCCESS)
        return status;
    ze_group_count_t groups = {plan->group_count[0], plan->group_count[1], plan->group_count[2]};
    ze_result_t result = zeCommandListAppendLaunchKernel(list, k, &groups, a->signal_event,
                                                         a->num_wait_events, a->wait_events);
    if (result != ZE_RESULT_SUCCESS)
        return sdpa_ze_fail("zeCommandListAppendLaunchKernel (sdpa_xe_fwd)", result);
    return SDPA_SUCCESS;
}
