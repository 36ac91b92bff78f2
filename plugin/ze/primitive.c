/* primitive.c - ze primitives: a checked problem, its plan and its kernels. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend_api.h"
#include "error.h"
#include "plan_common.h"
#include "verbose.h"
#include "ze.h"
#include "ze_result.h"

static const char *config_string(const sdpa_primitive_t *prim)
{
    return prim->kind == SDPA_ZE_PRIM_BACKWARD ? prim->bwd.config_string : prim->fwd.config_string;
}

/* SDPA_VERBOSE: "create" after a creation, "exec" after an execution,
 * "kernel" once an execution's kernels have run (profile.c). */
void sdpa_ze_primitive_trace(const sdpa_primitive_t *prim, const char *what, const char *status,
                             double ms)
{
    char device[sizeof(prim->ctx->device.name)], problem[512];
    sdpa_verbose_print("%s,ze,%s,%s,%s,%.3f,%s", what,
                       sdpa_verbose_field(prim->ctx->device.name, device, sizeof(device)),
                       sdpa_verbose_problem(&prim->problem, problem, sizeof(problem)), status, ms,
                       config_string(prim));
}

/* The ABI 1.1 features the ze kernels run (context_get_features advertises
 * those they run in both directions): the sliding window, the softcap and
 * ALiBi, variable-length batches, forward and backward; a paged KV
 * cache (forward only by definition). */
sdpa_status_t sdpa_ze_llm_supported(const sdpa_problem_desc_t *p, const sdpa_shape_t *shape)
{
    return sdpa_plan_window_check(p, shape->q_len, shape->k_len);
}

sdpa_status_t sdpa_ze_primitive_create(sdpa_context_t *ctx, const sdpa_problem_desc_t *desc,
                                       sdpa_primitive_t **out)
{
    SDPA_TRY(sdpa_create_begin(ctx, out));
    const int verbose = sdpa_verbose_level() >= 1;
    double start = 0.0;
    if (verbose) {
        start = sdpa_verbose_now_ms();
        sdpa_module_cache_thread_reset();
    }
    sdpa_primitive_t *prim = calloc(1, sizeof(*prim));
    if (prim == NULL)
        return sdpa_fail(SDPA_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate a primitive");
    sdpa_status_t status = sdpa_problem_check(desc, &prim->problem, &prim->shape);
    if (status != SDPA_SUCCESS) {
        free(prim);
        return status;
    }
    if ((status = sdpa_ze_llm_supported(&prim->problem, &prim->shape)) != SDPA_SUCCESS) {
        free(prim);
        return status;
    }
    prim->kind =
            prim->problem.prop_kind == SDPA_BACKWARD ? SDPA_ZE_PRIM_BACKWARD : SDPA_ZE_PRIM_FORWARD;
    prim->ctx = ctx;
    pthread_mutex_init(&prim->launch_lock, NULL);
    sdpa_live_list_add(&ctx->primitives, &prim->link);
    if (prim->kind == SDPA_ZE_PRIM_BACKWARD)
        status = sdpa_ze_bwd_prepare(prim);
    else
        status = sdpa_ze_fwd_prepare(prim);
    if (status != SDPA_SUCCESS) {
        sdpa_ze_primitive_destroy(prim);
        return status;
    }
    if (verbose) {
        sdpa_module_cache_counts_t n = sdpa_module_cache_thread_counts();
        char modules[128];
        snprintf(modules, sizeof(modules), "built=%llu cache_hit=%llu cache_miss=%llu reused=%llu",
                 (unsigned long long)n.built, (unsigned long long)n.hits,
                 (unsigned long long)n.misses, (unsigned long long)n.reused);
        sdpa_ze_primitive_trace(prim, "create", modules, sdpa_verbose_now_ms() - start);
    }
    *out = prim;
    return SDPA_SUCCESS;
}

/* Destroys the Level Zero objects prim holds (its context is alive). */
static void release_device_objects(sdpa_primitive_t *prim)
{
    sdpa_ze_profile_release(prim);
    if (prim->fwd_kernel)
        zeKernelDestroy(prim->fwd_kernel);
    prim->fwd_kernel = NULL;
    if (prim->merge_kernel)
        zeKernelDestroy(prim->merge_kernel);
    prim->merge_kernel = NULL;
    sdpa_ze_bwd_release(prim);
}

void sdpa_ze_primitive_orphan(sdpa_primitive_t *prim)
{
    release_device_objects(prim);
    prim->ctx = NULL;
}

void sdpa_ze_primitive_destroy(sdpa_primitive_t *prim)
{
    if (!prim)
        return;
    if (prim->ctx) { /* else context_destroy released everything */
        sdpa_live_list_remove(&prim->ctx->primitives, &prim->link);
        release_device_objects(prim);
    }
    pthread_mutex_destroy(&prim->launch_lock);
    free(prim);
}

sdpa_status_t sdpa_ze_primitive_query(sdpa_primitive_t *prim, sdpa_query_t what, void *out,
                                      size_t out_size)
{
    if (prim == NULL)
        return sdpa_primitive_query_answer(prim, what, out, out_size, 0, 0, "");
    if (prim->kind == SDPA_ZE_PRIM_MERGE)
        return sdpa_primitive_query_answer(prim, what, out, out_size, 0, 0,
                                           prim->merge_plan.config_string);
    size_t workspace = sdpa_workspace_bytes(&prim->problem, &prim->shape);
    int backward = prim->kind == SDPA_ZE_PRIM_BACKWARD;
    return sdpa_primitive_query_answer(prim, what, out, out_size, workspace,
                                       backward ? prim->bwd.scratch.total_bytes
                                                : prim->fwd.split_scratch_bytes,
                                       config_string(prim));
}

sdpa_status_t sdpa_ze_primitive_execute(sdpa_primitive_t *prim, const sdpa_exec_args_t *args)
{
    SDPA_TRY(sdpa_execute_begin(prim, prim ? prim->ctx : NULL,
                                prim && prim->kind == SDPA_ZE_PRIM_MERGE, 0));
    const double start = sdpa_verbose_level() >= 1 ? sdpa_verbose_now_ms() : 0.0;
    sdpa_exec_args_t checked;
    sdpa_status_t status = sdpa_exec_args_check(&prim->problem, args, &checked);
    if (status != SDPA_SUCCESS)
        return status;
    int backward = prim->kind == SDPA_ZE_PRIM_BACKWARD;

    ze_command_list_handle_t list =
            checked.command_list ? checked.command_list : prim->ctx->command_list;
    sdpa_list_entry_t *entry = NULL;
    if ((status = sdpa_list_lock(prim->ctx->lists, list, &entry)) != SDPA_SUCCESS)
        return status;
    const int caller_list = !(list == prim->ctx->command_list && prim->ctx->owns_command_list);
    status = sdpa_ze_check_arrays(prim, &checked, list);
    if (status == SDPA_SUCCESS) {
        pthread_mutex_lock(&prim->launch_lock);
        int slot = sdpa_ze_profile_begin(prim, list, caller_list, checked.num_wait_events,
                                         checked.wait_events);
        status = backward ? sdpa_ze_bwd_execute(prim, &checked, list, sdpa_list_scratch(entry))
                          : sdpa_ze_fwd_execute(prim, &checked, list, sdpa_list_scratch(entry));
        sdpa_ze_profile_end(prim, list, slot, status == SDPA_SUCCESS);
        pthread_mutex_unlock(&prim->launch_lock);
    }
    sdpa_list_unlock(entry);
    /* The time to append; on the list the context made, which is
     * synchronous, the execution's time. The kernels' own time is the
     * "kernel" line's (SDPA_VERBOSE=profile). */
    if (status == SDPA_SUCCESS && sdpa_verbose_level() >= 1)
        sdpa_ze_primitive_trace(prim, "exec", caller_list ? "caller_list" : "sync_list",
                                sdpa_verbose_now_ms() - start);
    if (sdpa_verbose_level() >= SDPA_VERBOSE_PROFILE) { /* a synchronous list has run them */
        pthread_mutex_lock(&prim->launch_lock);
        sdpa_ze_profile_harvest(prim);
        pthread_mutex_unlock(&prim->launch_lock);
    }
    return status;
}
