/*
 * backend_api.h - the checks and answers every backend's entry points share,
 * so that all backends refuse the same mistakes with the same messages.
 */
#ifndef SDPA_CORE_BACKEND_API_H
#define SDPA_CORE_BACKEND_API_H

#include <stddef.h>

#include "error.h"
#include "problem.h"
#include "sdpa.h"
#include "verbose.h"

/* sdpa_backend_negotiate for a backend whose table is table: hands out table
 * if the caller speaks its major version, else refuses naming both. */
sdpa_status_t sdpa_backend_negotiate_table(const sdpa_backend_iface_t *table, uint32_t *abi_version,
                                           const sdpa_backend_iface_t **iface);

/* The entry point (sdpa.h): the only symbol a backend module exports, and
 * the same in every backend; SDPA_BACKEND_TABLE defines it. */
__attribute__((visibility("default"))) sdpa_status_t
sdpa_backend_negotiate(uint32_t *abi_version, const sdpa_backend_iface_t **iface);

/* A backend's whole table and its exported sdpa_backend_negotiate, from its
 * functions PREFIX_context_create, PREFIX_context_destroy, ...,
 * PREFIX_merge_execute, PREFIX_primitive_supports (NAME is the table's
 * name, "ze"). Every entry that
 * returns a status runs through SDPA_ENTRY (error.h), so that last_error()
 * describes the calling thread's most recent call (sdpa.h); the destroy
 * functions and last_error itself leave the message alone. The calls that
 * create or run something print a "refused" line when they fail under
 * SDPA_VERBOSE (verbose.h). One place, so that the backends cannot differ
 * in it. */
#define SDPA_BACKEND_TABLE(PREFIX, NAME)                                                           \
    static sdpa_status_t PREFIX##_entry_context_create(const sdpa_context_desc_t *desc,           \
                                                       sdpa_context_t **out)                       \
    {                                                                                              \
        return sdpa_verbose_refusal(NAME, "context_create",                                        \
                                    SDPA_ENTRY(PREFIX##_context_create(desc, out)));               \
    }                                                                                              \
    static sdpa_status_t PREFIX##_entry_context_get_features(sdpa_context_t *ctx,                 \
                                                             sdpa_features_t *out)                 \
    {                                                                                              \
        return SDPA_ENTRY(PREFIX##_context_get_features(ctx, out));                                \
    }                                                                                              \
    static sdpa_status_t PREFIX##_entry_context_query(sdpa_context_t *ctx, sdpa_query_t what,     \
                                                      void *out, size_t out_size)                  \
    {                                                                                              \
        return SDPA_ENTRY(PREFIX##_context_query(ctx, what, out, out_size));                       \
    }                                                                                              \
    static sdpa_status_t PREFIX##_entry_primitive_create(                                          \
            sdpa_context_t *ctx, const sdpa_problem_desc_t *desc, sdpa_primitive_t **out)          \
    {                                                                                              \
        return sdpa_verbose_refusal(NAME, "primitive_create",                                      \
                                    SDPA_ENTRY(PREFIX##_primitive_create(ctx, desc, out)));        \
    }                                                                                              \
    static sdpa_status_t PREFIX##_entry_primitive_query(sdpa_primitive_t *prim, sdpa_query_t what, \
                                                        void *out, size_t out_size)                \
    {                                                                                              \
        return SDPA_ENTRY(PREFIX##_primitive_query(prim, what, out, out_size));                    \
    }                                                                                              \
    static sdpa_status_t PREFIX##_entry_primitive_execute(sdpa_primitive_t *prim,                 \
                                                          const sdpa_exec_args_t *args)            \
    {                                                                                              \
        return sdpa_verbose_refusal(NAME, "primitive_execute",                                     \
                                    SDPA_ENTRY(PREFIX##_primitive_execute(prim, args)));           \
    }                                                                                              \
    static sdpa_status_t PREFIX##_entry_merge_create(                                              \
            sdpa_context_t *ctx, const sdpa_merge_desc_t *desc, sdpa_primitive_t **out)            \
    {                                                                                              \
        return sdpa_verbose_refusal(NAME, "merge_create",                                          \
                                    SDPA_ENTRY(PREFIX##_merge_create(ctx, desc, out)));            \
    }                                                                                              \
    static sdpa_status_t PREFIX##_entry_merge_execute(sdpa_primitive_t *prim,                     \
                                                      const sdpa_merge_args_t *args)               \
    {                                                                                              \
        return sdpa_verbose_refusal(NAME, "merge_execute",                                         \
                                    SDPA_ENTRY(PREFIX##_merge_execute(prim, args)));               \
    }                                                                                              \
    static sdpa_status_t PREFIX##_entry_primitive_supports(                                        \
            sdpa_context_t *ctx, const sdpa_problem_desc_t *desc, sdpa_support_t *out)             \
    {                                                                                              \
        return SDPA_ENTRY(PREFIX##_primitive_supports(ctx, desc, out));                            \
    }                                                                                              \
    static const sdpa_backend_iface_t PREFIX##_iface = {                                          \
            .abi_version = SDPA_ABI_VERSION,                                                       \
            .struct_size = sizeof(sdpa_backend_iface_t),                                           \
            .name = NAME,                                                                          \
            .last_error = sdpa_error_message,                                                      \
            .context_create = PREFIX##_entry_context_create,                                       \
            .context_destroy = PREFIX##_context_destroy,                                           \
            .context_get_features = PREFIX##_entry_context_get_features,                           \
            .context_query = PREFIX##_entry_context_query,                                         \
            .primitive_create = PREFIX##_entry_primitive_create,                                   \
            .primitive_destroy = PREFIX##_primitive_destroy,                                       \
            .primitive_query = PREFIX##_entry_primitive_query,                                     \
            .primitive_execute = PREFIX##_entry_primitive_execute,                                 \
            .merge_create = PREFIX##_entry_merge_create,                                           \
            .merge_execute = PREFIX##_entry_merge_execute,                                         \
            .primitive_supports = PREFIX##_entry_primitive_supports,                               \
    };                                                                                             \
    sdpa_status_t sdpa_backend_negotiate(uint32_t *abi_version,                                    \
                                         const sdpa_backend_iface_t **iface)                       \
    {                                                                                              \
        return SDPA_ENTRY(sdpa_backend_negotiate_table(&PREFIX##_iface, abi_version, iface));      \
    }

/* The checks of context_create that do not depend on the backend: out and
 * desc non-NULL (sets *out = NULL first), struct size and version, reserved
 * flags zero. */
sdpa_status_t sdpa_context_desc_check(const sdpa_context_desc_t *desc, sdpa_context_t **out);

/* context_get_features: checks ctx, out and out's struct size/version, and
 * zero-fills *features with out's size and version for the backend to fill;
 * then sdpa_features_store copies it back. */
sdpa_status_t sdpa_features_begin(const sdpa_context_t *ctx, const sdpa_features_t *out,
                                  sdpa_features_t *features);
void sdpa_features_store(const sdpa_features_t *features, sdpa_features_t *out);

/* What creation would choose for a problem that passed its checks: a
 * backend's kernel kind, scratch bytes and configuration string, written
 * into answer (its workspace_bytes is set already); or the status creation
 * would fail with (the message left as creation leaves it). */
typedef sdpa_status_t (*sdpa_support_plan_fn)(const sdpa_context_t *ctx,
                                              const sdpa_problem_desc_t *problem,
                                              const sdpa_shape_t *shape, sdpa_support_t *answer);

/* primitive_supports (sdpa.h, ABI 1.2) of every backend: checks ctx and out
 * (non-NULL, a struct_size and struct_version this code knows), checks desc
 * as creation does, asks plan for the rest, and writes the answer into *out
 * (its struct_size bytes): on a failure of creation's the message goes into
 * out->message and the kind, sizes and configuration are cleared. Returns
 * SDPA_SUCCESS whenever the query itself succeeded, and leaves no message
 * then. */
sdpa_status_t sdpa_support_answer(const sdpa_context_t *ctx, const sdpa_problem_desc_t *desc,
                                  sdpa_support_t *out, sdpa_support_plan_fn plan);

/* primitive_execute on a primitive whose context was destroyed first
 * (sdpa.h, "Lifetime"): SDPA_ERROR_INVALID_ARGUMENT with a message. */
sdpa_status_t sdpa_orphan_fail(void);

/* The first checks of primitive_create and merge_create in every backend:
 * out non-NULL (then *out = NULL, so a failure leaves no stale handle) and
 * ctx non-NULL. */
sdpa_status_t sdpa_create_begin(const sdpa_context_t *ctx, sdpa_primitive_t **out);

/* The first checks of primitive_execute (merge_call = 0) and merge_execute
 * (merge_call = 1) in every backend: prim non-NULL, prim_ctx (prim's
 * context, NULL once context_destroy orphaned it) alive, and prim of the
 * kind the entry point executes (prim_is_merge). The caller reads prim's
 * fields only when prim is not NULL. */
sdpa_status_t sdpa_execute_begin(const sdpa_primitive_t *prim, const sdpa_context_t *prim_ctx,
                                 int prim_is_merge, int merge_call);

/* What a context counts. */
typedef struct sdpa_context_counters {
    uint64_t modules_built;       /* SDPA_QUERY_MODULES_BUILT */
    uint64_t scratch_allocations; /* SDPA_QUERY_SCRATCH_ALLOCATIONS */
    uint64_t module_cache_hits;   /* SDPA_QUERY_MODULE_CACHE_HITS */
    uint64_t module_cache_misses; /* SDPA_QUERY_MODULE_CACHE_MISSES */
} sdpa_context_counters_t;

/* context_query: checks ctx, out and what (one of the context queries:
 * SDPA_QUERY_MODULES_BUILT, _SCRATCH_ALLOCATIONS, _MODULE_CACHE_HITS,
 * _MODULE_CACHE_MISSES), then stores the counter asked for. */
sdpa_status_t sdpa_context_query_answer(const sdpa_context_t *ctx, sdpa_query_t what, void *out,
                                        size_t out_size, const sdpa_context_counters_t *counters);

/* primitive_query: checks prim, out and what; answers the size queries and
 * the configuration string from the values given. */
sdpa_status_t sdpa_primitive_query_answer(const sdpa_primitive_t *prim, sdpa_query_t what,
                                          void *out, size_t out_size, size_t workspace_bytes,
                                          size_t scratch_bytes, const char *config_string);

#endif /* SDPA_CORE_BACKEND_API_H */
