/* ref_primitive.c - primitives of the ref backend: a checked problem,
 * executed on the host when asked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    *out = prim;
    return SDPA_SUCCESS;
}

void ref_primitive_destroy(sdpa_primitive_t *prim)
{
    free(prim);
}

static sdpa_status_t answer_size(size_t value, const char *query, void *out, size_t out_size)
{
    if (out_size < sizeof(size_t))
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "out_size = %zu: %s needs %zu bytes",
                         out_size, query, sizeof(size_t));
    memcpy(out, &value, sizeof(value));
    return SDPA_SUCCESS;
}

sdpa_status_t ref_primitive_query(sdpa_primitive_t *prim, sdpa_query_t what, void *out,
                                  size_t out_size)
{
    if (prim == NULL || out == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "%s is NULL", prim == NULL ? "prim" : "out");
    switch (what) {
    case SDPA_QUERY_WORKSPACE_BYTES:
        return answer_size(sdpa_workspace_bytes(&prim->problem, &prim->shape),
                           "SDPA_QUERY_WORKSPACE_BYTES", out, out_size);
    case SDPA_QUERY_SCRATCH_BYTES:
        return answer_size(0, "SDPA_QUERY_SCRATCH_BYTES", out, out_size);
    case SDPA_QUERY_CONFIG_STRING:
        if (out_size == 0)
            return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                             "out_size = 0: SDPA_QUERY_CONFIG_STRING needs room for a string");
        snprintf(out, out_size, "ref %s d%lld host double",
                 prim->problem.prop_kind == SDPA_BACKWARD ? "bwd" : "fwd",
                 (long long)prim->shape.head_size);
        return SDPA_SUCCESS;
    case SDPA_QUERY_MODULES_BUILT:
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "what = SDPA_QUERY_MODULES_BUILT: a context query, not a primitive one");
    }
    return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "what = %d: not a valid sdpa_query_t", (int)what);
}

sdpa_status_t ref_primitive_execute(sdpa_primitive_t *prim, const sdpa_exec_args_t *args)
{
    if (prim == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "prim is NULL");
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
