/* ref_primitive.c - primitives of the ref backend: a checked problem,
 * executed on the host when asked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_api.h"
#include "error.h"
#include "ref.h"

sdpa_status_t ref_primitive_create(sdpa_context_t *ctx, const sdpa_problem_desc_t *desc,
                                   sdpa_primitive_t **out)
{
    if (out == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "out is NULL");
    *out = NULL;
    if (ctx == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "ctx is NULL");
    sdpa_problem_desc_t problem;
    sdpa_shape_t shape;
    sdpa_status_t status = sdpa_problem_check(desc, &problem, &shape);
    if (status != SDPA_SUCCESS)
        return status;
    sdpa_primitive_t *prim = calloc(1, sizeof(*prim));
    if (prim == NULL)
        return sdpa_fail(SDPA_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate a primitive");
    prim->ctx = ctx;
    prim->problem = problem;
    prim->shape = shape;
    sdpa_live_list_add(&ctx->primitives, &prim->link);
    *out = prim;
    return SDPA_SUCCESS;
}

void ref_primitive_destroy(sdpa_primitive_t *prim)
{
    if (prim == NULL)
        return;
    if (prim->ctx != NULL) /* else orphaned by context_destroy */
        sdpa_live_list_remove(&prim->ctx->primitives, &prim->link);
    free(prim);
}

sdpa_status_t ref_primitive_query(sdpa_primitive_t *prim, sdpa_query_t what, void *out,
                                  size_t out_size)
{
    char config[64] = "";
    if (prim != NULL)
        snprintf(config, sizeof(config), "ref %s d%lld host double",
                 prim->problem.prop_kind == SDPA_BACKWARD ? "bwd" : "fwd",
                 (long long)prim->shape.head_size);
    size_t workspace = prim ? sdpa_workspace_bytes(&prim->problem, &prim->shape) : 0;
    return sdpa_primitive_query_answer(prim, what, out, out_size, workspace, 0, config);
}

sdpa_status_t ref_primitive_execute(sdpa_primitive_t *prim, const sdpa_exec_args_t *args)
{
    if (prim == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "prim is NULL");
    if (prim->ctx == NULL)
        return sdpa_orphan_fail();
    sdpa_exec_args_t checked;
    sdpa_status_t status = sdpa_exec_args_check(&prim->problem, args, &checked);
    if (status != SDPA_SUCCESS)
        return status;
    status = ref_check_memory(prim->ctx, &prim->problem, &checked);
    if (status != SDPA_SUCCESS)
        return status;
    status = ref_wait_events(prim->ctx, &checked);
    if (status != SDPA_SUCCESS)
        return status;

    ref_exec_t x;
    ref_exec_init(&x, &prim->problem, &prim->shape, &checked);
    if (prim->problem.prop_kind == SDPA_BACKWARD)
        status = ref_backward(&x);
    else
        status = ref_forward(&x);
    if (status != SDPA_SUCCESS)
        return status;
    return ref_signal_event(prim->ctx, &checked);
}
