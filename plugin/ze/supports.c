/* supports.c - primitive_supports (ABI 1.2): the checks and the plan of
 * primitive_create, without the module builds and allocations that follow
 * them, so that a framework can route every call for microseconds. */
#include <stdio.h>
#include <stdlib.h>

#include "backend_api.h"
#include "error.h"
#include "ze.h"

static sdpa_kernel_kind_t fwd_kernel_kind(sdpa_fwd_kind_t kind)
{
    switch (kind) {
    case SDPA_FWD_KIND_XE:
        return SDPA_KERNEL_FAST;
    case SDPA_FWD_KIND_DECODE:
        return SDPA_KERNEL_DECODE;
    case SDPA_FWD_KIND_PORTABLE:
        break;
    }
    return SDPA_KERNEL_PORTABLE;
}

/* The checks creation adds to the problem's (what the device serves) and
 * the plan it would make: what the primitive would answer. */
static sdpa_status_t plan_answer(const sdpa_context_t *ctx, const sdpa_problem_desc_t *problem,
                                 const sdpa_shape_t *shape, sdpa_support_t *answer)
{
    SDPA_TRY(sdpa_ze_llm_supported(problem, shape));
    if (problem->prop_kind == SDPA_BACKWARD) {
        /* Plans are large (constants, strides, scratch layout): on the heap,
         * not on a caller thread's stack. */
        sdpa_bwd_plan_t *plan = malloc(sizeof(*plan));
        if (plan == NULL)
            return sdpa_fail(SDPA_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate a backward plan");
        sdpa_status_t status = sdpa_bwd_plan_make(problem, shape, &ctx->device, plan);
        if (status == SDPA_SUCCESS) {
            answer->kernel_kind =
                    plan->kind == SDPA_BWD_KIND_XE ? SDPA_KERNEL_FAST : SDPA_KERNEL_PORTABLE;
            answer->scratch_bytes = plan->scratch.total_bytes;
            snprintf(answer->config_string, sizeof(answer->config_string), "%s",
                     plan->config_string);
        }
        free(plan);
        return status;
    }
    sdpa_fwd_plan_t *plan = malloc(sizeof(*plan));
    if (plan == NULL)
        return sdpa_fail(SDPA_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate a forward plan");
    sdpa_status_t status = sdpa_fwd_plan_make(problem, shape, &ctx->device, plan);
    if (status == SDPA_SUCCESS) {
        answer->kernel_kind = fwd_kernel_kind(plan->kind);
        answer->scratch_bytes = plan->split_scratch_bytes;
        snprintf(answer->config_string, sizeof(answer->config_string), "%s", plan->config_string);
    }
    free(plan);
    return status;
}

sdpa_status_t sdpa_ze_primitive_supports(sdpa_context_t *ctx, const sdpa_problem_desc_t *desc,
                                         sdpa_support_t *out)
{
    return sdpa_support_answer(ctx, desc, out, plan_answer);
}
