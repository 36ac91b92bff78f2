/* ref_primitive.c - primitives of the ref backend: a checked problem,
 * executed on the host when asked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_api.h"
#include "error.h"
#include "verbose.h"
#include "ref.h"

static void problem_config_string(const sdpa_problem_desc_t *problem, const sdpa_shape_t *shape,
                                  char *out, size_t size)
{
    snprintf(out, size, "ref %s d%lld host double",
             problem->prop_kind == SDPA_BACKWARD ? "bwd" : "fwd", (long long)shape->head_size);
}

static void config_string(const sdpa_primitive_t *prim, char *out, size_t size)
{
    problem_config_string(&prim->problem, &prim->shape, out, size);
}

/* SDPA_VERBOSE: the ref backend builds nothing; it executes on the host,
 * synchronously, so an exec line's time is the execution's. */
static void trace(const sdpa_primitive_t *prim, const char *what, const char *status, double ms)
{
    char problem[512], config[64];
    config_string(prim, config, sizeof(config));
    sdpa_verbose_print("%s,ref,host,%s,%s,%.3f,%s", what,
                       sdpa_verbose_problem(&prim->problem, problem, sizeof(problem)), status, ms,
                       config);
}

sdpa_status_t ref_primitive_add(sdpa_context_t *ctx, const sdpa_primitive_t *made,
                                sdpa_primitive_t **out)
{
    sdpa_primitive_t *prim = malloc(sizeof(*prim));
    if (prim == NULL)
        return sdpa_fail(SDPA_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate a primitive");
    *prim = *made;
    prim->ctx = ctx;
    sdpa_live_list_add(&ctx->primitives, &prim->link);
    *out = prim;
    return SDPA_SUCCESS;
}

sdpa_status_t ref_primitive_create(sdpa_context_t *ctx, const sdpa_problem_desc_t *desc,
                                   sdpa_primitive_t **out)
{
    SDPA_TRY(sdpa_create_begin(ctx, out));
    const double start = sdpa_verbose_level() >= 1 ? sdpa_verbose_now_ms() : 0.0;
    sdpa_primitive_t made = {.is_merge = 0};
    SDPA_TRY(sdpa_problem_check(desc, &made.problem, &made.shape));
    SDPA_TRY(ref_primitive_add(ctx, &made, out));
    if (sdpa_verbose_level() >= 1)
        trace(*out, "create", "built=0 cache_hit=0 cache_miss=0 reused=0",
              sdpa_verbose_now_ms() - start);
    return SDPA_SUCCESS;
}

/* Creation checks the problem and nothing more: so does the answer. */
static sdpa_status_t host_answer(const sdpa_context_t *ctx, const sdpa_problem_desc_t *problem,
                                 const sdpa_shape_t *shape, sdpa_support_t *answer)
{
    answer->kernel_kind = SDPA_KERNEL_HOST;
    answer->scratch_bytes = 0;
    problem_config_string(problem, shape, answer->config_string, sizeof(answer->config_string));
    return SDPA_SUCCESS;
}

sdpa_status_t ref_primitive_supports(sdpa_context_t *ctx, const sdpa_problem_desc_t *desc,
                                     sdpa_support_t *out)
{
    return sdpa_support_answer(ctx, desc, out, host_answer);
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
    if (prim != NULL && prim->is_merge)
        snprintf(config, sizeof(config), "ref merge n%u d%lld host double",
                 prim->merge.num_states, (long long)prim->merge.dst.dims[3]);
    else if (prim != NULL)
        config_string(prim, config, sizeof(config));
    size_t workspace =
            prim && !prim->is_merge ? sdpa_workspace_bytes(&prim->problem, &prim->shape) : 0;
    return sdpa_primitive_query_answer(prim, what, out, out_size, workspace, 0, config);
}

sdpa_status_t ref_primitive_execute(sdpa_primitive_t *prim, const sdpa_exec_args_t *args)
{
    SDPA_TRY(sdpa_execute_begin(prim, prim ? prim->ctx : NULL, prim && prim->is_merge, 0));
    const double start = sdpa_verbose_level() >= 1 ? sdpa_verbose_now_ms() : 0.0;
    sdpa_exec_args_t checked;
    sdpa_status_t status = sdpa_exec_args_check(&prim->problem, args, &checked);
    if (status != SDPA_SUCCESS)
        return status;
    status = ref_check_memory(prim->ctx, &prim->problem, &checked);
    if (status != SDPA_SUCCESS)
        return status;
    const ref_events_t events = ref_exec_events(&checked);
    status = ref_wait_events(prim->ctx, &events);
    if (status != SDPA_SUCCESS)
        return status;

    ref_exec_t x;
    status = ref_exec_init(&x, &prim->problem, &prim->shape, &checked);
    if (status != SDPA_SUCCESS)
        return status;
    if (prim->problem.prop_kind == SDPA_BACKWARD)
        status = ref_backward(&x);
    else
        status = ref_forward(&x);
    if (status != SDPA_SUCCESS)
        return status;
    status = ref_signal_event(prim->ctx, &events);
    if (status == SDPA_SUCCESS && sdpa_verbose_level() >= 1)
        trace(prim, "exec", "host", sdpa_verbose_now_ms() - start);
    return status;
}
