/* merge.c - merge primitives of the ze backend: one sdpa_merge launch per
 * execution (spirv/portable/sdpa_merge.cl, kernel_abi_merge.h). */
#include <stddef.h>
#include <stdlib.h>

#include "backend_api.h"
#include "error.h"
#include "merge_check.h"
#include "ze.h"
#include "ze_result.h"

/* Builds (or finds) the module; sdpa_ze_kernel_from_cache checks the kernel
 * against sdpa_merge_args.def. */
static sdpa_status_t merge_prepare(sdpa_primitive_t *prim)
{
    sdpa_merge_plan_t *plan = &prim->merge_plan;
    sdpa_status_t status = sdpa_merge_plan_make(&prim->merge, &prim->ctx->device, plan);
    if (status != SDPA_SUCCESS)
        return status;
    status = sdpa_ze_kernel_from_cache(prim->ctx, SDPA_MERGE_SOURCE, 0, 0, &plan->constants,
                                       plan->build_flags, SDPA_MERGE_KERNEL,
                                       &sdpa_merge_kernel_args_table, &prim->merge_kernel);
    if (status != SDPA_SUCCESS)
        return status;
    ze_kernel_handle_t k = prim->merge_kernel;
    SDPA_ZE_TRY(
            zeKernelSetGroupSize(k, plan->local_size[0], plan->local_size[1], plan->local_size[2]));
    return SDPA_SUCCESS;
}

sdpa_status_t sdpa_ze_merge_create(sdpa_context_t *ctx, const sdpa_merge_desc_t *desc,
                                   sdpa_primitive_t **out)
{
    SDPA_TRY(sdpa_create_begin(ctx, out));
    sdpa_primitive_t *prim = calloc(1, sizeof(*prim));
    if (prim == NULL)
        return sdpa_fail(SDPA_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate a primitive");
    sdpa_status_t status = sdpa_merge_check(desc, &prim->merge);
    if (status != SDPA_SUCCESS) {
        free(prim);
        return status;
    }
    prim->kind = SDPA_ZE_PRIM_MERGE;
    prim->ctx = ctx;
    pthread_mutex_init(&prim->launch_lock, NULL);
    sdpa_live_list_add(&ctx->primitives, &prim->link);
    if ((status = merge_prepare(prim)) != SDPA_SUCCESS) {
        sdpa_ze_primitive_destroy(prim);
        return status;
    }
    *out = prim;
    return SDPA_SUCCESS;
}

_Static_assert(offsetof(sdpa_merge_kernel_args_t, LSE0) - offsetof(sdpa_merge_kernel_args_t, O0) ==
                       SDPA_MERGE_MAX_STATES * sizeof(const void *),
               "sdpa_merge_args.def has one O per state of SDPA_MERGE_MAX_STATES");
_Static_assert(offsetof(sdpa_merge_kernel_args_t, DST) - offsetof(sdpa_merge_kernel_args_t, LSE0) ==
                       SDPA_MERGE_MAX_STATES * sizeof(const void *),
               "sdpa_merge_args.def has one LSE per state of SDPA_MERGE_MAX_STATES");
_Static_assert(offsetof(sdpa_merge_kernel_args_t, DST_LSE_S2) -
                               offsetof(sdpa_merge_kernel_args_t, O_S0) ==
                       (SDPA_MERGE_STRIDE_ARGS - 1) * sizeof(int64_t),
               "the stride fields of sdpa_merge_kernel_args_t are consecutive");

/* Sets the arguments of one execution and appends the launch; the caller
 * holds the list's and the primitive's locks. */
static sdpa_status_t merge_launch(sdpa_primitive_t *prim, const sdpa_merge_args_t *a,
                                  ze_command_list_handle_t list)
{
    ze_kernel_handle_t k = prim->merge_kernel;
    const sdpa_merge_plan_t *plan = &prim->merge_plan;
    const uint32_t n = prim->merge.num_states;
    const int with_lse = prim->merge.dst_lse.dtype != SDPA_DTYPE_UNDEF;
    sdpa_merge_kernel_args_t v = {
            .DST = a->dst, .DST_LSE = with_lse ? a->dst_lse : NULL, .D = plan->head_size};
    const void **o = &v.O0, **lse = &v.LSE0;
    for (uint32_t s = 0; s < n; s++) {
        o[s] = a->states[s];
        lse[s] = a->states_lse[s];
    }
    int64_t *strides = &v.O_S0;
    for (uint32_t i = 0; i < SDPA_MERGE_STRIDE_ARGS; i++)
        strides[i] = plan->strides[i];
    sdpa_status_t status =
            sdpa_ze_set_args(k, SDPA_MERGE_KERNEL, &sdpa_merge_kernel_args_table, &v);
    if (status != SDPA_SUCCESS)
        return status;
    ze_group_count_t groups = {plan->group_count[0], plan->group_count[1], plan->group_count[2]};
    ze_result_t result = zeCommandListAppendLaunchKernel(list, k, &groups, a->signal_event,
                                                         a->num_wait_events, a->wait_events);
    if (result != ZE_RESULT_SUCCESS)
        return sdpa_ze_failf(result, "zeCommandListAppendLaunchKernel(%s)", SDPA_MERGE_KERNEL);
    return SDPA_SUCCESS;
}

sdpa_status_t sdpa_ze_merge_execute(sdpa_primitive_t *prim, const sdpa_merge_args_t *args)
{
    SDPA_TRY(sdpa_execute_begin(prim, prim ? prim->ctx : NULL,
                                prim && prim->kind == SDPA_ZE_PRIM_MERGE, 1));
    sdpa_merge_args_t checked;
    sdpa_status_t status = sdpa_merge_args_check(&prim->merge, args, &checked);
    if (status != SDPA_SUCCESS)
        return status;
    ze_command_list_handle_t list =
            checked.command_list ? checked.command_list : prim->ctx->command_list;
    sdpa_list_entry_t *entry = NULL;
    if ((status = sdpa_list_lock(prim->ctx->lists, list, &entry)) != SDPA_SUCCESS)
        return status;
    pthread_mutex_lock(&prim->launch_lock);
    status = merge_launch(prim, &checked, list);
    pthread_mutex_unlock(&prim->launch_lock);
    sdpa_list_unlock(entry);
    return status;
}
