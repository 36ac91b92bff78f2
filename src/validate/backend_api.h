/*
 * backend_api.h - the checks and answers every backend's entry points share,
 * so that all backends refuse the same mistakes with the same messages.
 */
#ifndef SDPA_CORE_BACKEND_API_H
#define SDPA_CORE_BACKEND_API_H

#include <stddef.h>

#include "sdpa.h"

/* sdpa_backend_negotiate for a backend whose table is table: hands out table
 * if the caller speaks its major version, else refuses naming both. */
sdpa_status_t sdpa_backend_negotiate_table(const sdpa_backend_iface_t *table, uint32_t *abi_version,
                                           const sdpa_backend_iface_t **iface);

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

/* primitive_execute on a primitive whose context was destroyed first
 * (sdpa.h, "Lifetime"): SDPA_ERROR_INVALID_ARGUMENT with a message. */
sdpa_status_t sdpa_orphan_fail(void);

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
