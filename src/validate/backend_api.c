/* backend_api.c - entry-point checks shared by every backend. */
#include <stdio.h>
#include <string.h>

#include "backend_api.h"
#include "error.h"
#include "problem.h"
#include "problem_llm.h"

sdpa_status_t sdpa_backend_negotiate_table(const sdpa_backend_iface_t *table, uint32_t *abi_version,
                                           const sdpa_backend_iface_t **iface)
{
    if (abi_version == NULL || iface == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "%s is NULL",
                         abi_version == NULL ? "abi_version" : "iface");
    *iface = NULL;
    uint32_t wanted = *abi_version;
    *abi_version = table->abi_version;
    if (SDPA_VERSION_MAJOR(wanted) != SDPA_VERSION_MAJOR(table->abi_version))
        return sdpa_fail(SDPA_ERROR_ABI_VERSION, "ABI %u.%u requested; the %s backend speaks %u.%u",
                         SDPA_VERSION_MAJOR(wanted), SDPA_VERSION_MINOR(wanted), table->name,
                         SDPA_VERSION_MAJOR(table->abi_version),
                         SDPA_VERSION_MINOR(table->abi_version));
    *iface = table;
    return SDPA_SUCCESS;
}

sdpa_status_t sdpa_context_desc_check(const sdpa_context_desc_t *desc, sdpa_context_t **out)
{
    if (out == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "out is NULL");
    *out = NULL;
    if (desc == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "desc is NULL");
    sdpa_status_t status =
            sdpa_struct_check("desc", desc->struct_size, desc->struct_version,
                              SDPA_CONTEXT_DESC_VERSION, sizeof(*desc), sizeof(*desc));
    if (status != SDPA_SUCCESS)
        return status;
    if (desc->flags != 0)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "desc->flags = %u: reserved, must be 0",
                         desc->flags);
    return SDPA_SUCCESS;
}

sdpa_status_t sdpa_features_begin(const sdpa_context_t *ctx, const sdpa_features_t *out,
                                  sdpa_features_t *features)
{
    if (ctx == NULL || out == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "%s is NULL", ctx == NULL ? "ctx" : "out");
    sdpa_status_t status =
            sdpa_struct_check("out", out->struct_size, out->struct_version, SDPA_FEATURES_VERSION,
                              SDPA_FEATURES_V1_SIZE, sdpa_features_size(out->struct_version));
    if (status != SDPA_SUCCESS)
        return status;
    memset(features, 0, sizeof(*features));
    features->struct_size = out->struct_size;
    features->struct_version = out->struct_version;
    return SDPA_SUCCESS;
}

void sdpa_features_store(const sdpa_features_t *features, sdpa_features_t *out)
{
    memcpy(out, features, out->struct_size);
}

static const char *context_query_name(sdpa_query_t what)
{
    switch (what) {
    case SDPA_QUERY_MODULES_BUILT:
        return "SDPA_QUERY_MODULES_BUILT";
    case SDPA_QUERY_SCRATCH_ALLOCATIONS:
        return "SDPA_QUERY_SCRATCH_ALLOCATIONS";
    case SDPA_QUERY_MODULE_CACHE_HITS:
        return "SDPA_QUERY_MODULE_CACHE_HITS";
    case SDPA_QUERY_MODULE_CACHE_MISSES:
        return "SDPA_QUERY_MODULE_CACHE_MISSES";
    default:
        return "?";
    }
}

sdpa_status_t sdpa_context_query_answer(const sdpa_context_t *ctx, sdpa_query_t what, void *out,
                                        size_t out_size, const sdpa_context_counters_t *counters)
{
    if (ctx == NULL || out == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "%s is NULL", ctx == NULL ? "ctx" : "out");
    uint64_t value;
    switch (what) {
    case SDPA_QUERY_MODULES_BUILT:
        value = counters->modules_built;
        break;
    case SDPA_QUERY_SCRATCH_ALLOCATIONS:
        value = counters->scratch_allocations;
        break;
    case SDPA_QUERY_MODULE_CACHE_HITS:
        value = counters->module_cache_hits;
        break;
    case SDPA_QUERY_MODULE_CACHE_MISSES:
        value = counters->module_cache_misses;
        break;
    default:
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "what = %d: contexts answer only SDPA_QUERY_MODULES_BUILT (4), "
                         "SDPA_QUERY_SCRATCH_ALLOCATIONS (5), SDPA_QUERY_MODULE_CACHE_HITS (6) "
                         "and SDPA_QUERY_MODULE_CACHE_MISSES (7)",
                         (int)what);
    }
    const char *name = context_query_name(what);
    if (out_size < sizeof(uint64_t))
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "out_size = %zu: %s needs %zu bytes",
                         out_size, name, sizeof(uint64_t));
    memcpy(out, &value, sizeof(value));
    return SDPA_SUCCESS;
}

static sdpa_status_t answer_size(size_t value, const char *query, void *out, size_t out_size)
{
    if (out_size < sizeof(size_t))
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "out_size = %zu: %s needs %zu bytes",
                         out_size, query, sizeof(size_t));
    memcpy(out, &value, sizeof(value));
    return SDPA_SUCCESS;
}

sdpa_status_t sdpa_primitive_query_answer(const sdpa_primitive_t *prim, sdpa_query_t what,
                                          void *out, size_t out_size, size_t workspace_bytes,
                                          size_t scratch_bytes, const char *config_string)
{
    if (prim == NULL || out == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "%s is NULL", prim == NULL ? "prim" : "out");
    switch (what) {
    case SDPA_QUERY_WORKSPACE_BYTES:
        return answer_size(workspace_bytes, "SDPA_QUERY_WORKSPACE_BYTES", out, out_size);
    case SDPA_QUERY_SCRATCH_BYTES:
        return answer_size(scratch_bytes, "SDPA_QUERY_SCRATCH_BYTES", out, out_size);
    case SDPA_QUERY_CONFIG_STRING:
        if (out_size == 0)
            return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                             "out_size = 0: SDPA_QUERY_CONFIG_STRING needs room for a string");
        snprintf(out, out_size, "%s", config_string);
        return SDPA_SUCCESS;
    case SDPA_QUERY_MODULES_BUILT:
    case SDPA_QUERY_SCRATCH_ALLOCATIONS:
    case SDPA_QUERY_MODULE_CACHE_HITS:
    case SDPA_QUERY_MODULE_CACHE_MISSES:
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "what = %s: a context query, not a primitive one",
                         context_query_name(what));
    }
    return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "what = %d: not a valid sdpa_query_t", (int)what);
}

/* Checks ctx and out and zero-fills *answer with out's header. */
static sdpa_status_t support_begin(const sdpa_context_t *ctx, const sdpa_support_t *out,
                                   sdpa_support_t *answer)
{
    if (ctx == NULL || out == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "%s is NULL", ctx == NULL ? "ctx" : "out");
    SDPA_TRY(sdpa_struct_check("out", out->struct_size, out->struct_version, SDPA_SUPPORT_VERSION,
                               sizeof(*out), sizeof(*out)));
    memset(answer, 0, sizeof(*answer));
    answer->struct_size = out->struct_size;
    answer->struct_version = out->struct_version;
    return SDPA_SUCCESS;
}

/* Completes *answer with creation's status and copies it into *out; clears
 * the thread's message, since the query itself succeeded. */
static void support_store(sdpa_status_t status, sdpa_support_t *answer, sdpa_support_t *out)
{
    answer->status = status;
    if (status != SDPA_SUCCESS) {
        /* The message creation's entry point would leave (error.h). */
        const char *message = sdpa_error_message();
        if (message[0] != '\0')
            snprintf(answer->message, sizeof(answer->message), "%s", message);
        else
            snprintf(answer->message, sizeof(answer->message), "%s (no further detail)",
                     sdpa_status_string(status));
        answer->kernel_kind = SDPA_KERNEL_NONE;
        answer->workspace_bytes = answer->scratch_bytes = 0;
        answer->config_string[0] = '\0';
    }
    sdpa_error_clear();
    memcpy(out, answer, out->struct_size);
}

sdpa_status_t sdpa_support_answer(const sdpa_context_t *ctx, const sdpa_problem_desc_t *desc,
                                  sdpa_support_t *out, sdpa_support_plan_fn plan)
{
    sdpa_support_t answer;
    SDPA_TRY(support_begin(ctx, out, &answer));
    sdpa_problem_desc_t problem;
    sdpa_shape_t shape;
    sdpa_status_t status = sdpa_problem_check(desc, &problem, &shape);
    if (status == SDPA_SUCCESS) {
        answer.workspace_bytes = sdpa_workspace_bytes(&problem, &shape);
        status = plan(ctx, &problem, &shape, &answer);
    }
    support_store(status, &answer, out);
    return SDPA_SUCCESS;
}

sdpa_status_t sdpa_orphan_fail(void)
{
    return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                     "prim outlived its context: context_destroy released it, only "
                     "primitive_query and primitive_destroy accept it");
}

sdpa_status_t sdpa_create_begin(const sdpa_context_t *ctx, sdpa_primitive_t **out)
{
    if (out == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "out is NULL");
    *out = NULL;
    if (ctx == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "ctx is NULL");
    return SDPA_SUCCESS;
}

sdpa_status_t sdpa_execute_begin(const sdpa_primitive_t *prim, const sdpa_context_t *prim_ctx,
                                 int prim_is_merge, int merge_call)
{
    if (prim == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "prim is NULL");
    if (prim_ctx == NULL)
        return sdpa_orphan_fail();
    if (prim_is_merge && !merge_call)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "prim is a merge primitive: execute it with merge_execute");
    if (!prim_is_merge && merge_call)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "prim is an attention primitive: execute it with primitive_execute");
    return SDPA_SUCCESS;
}
