/*
 * xe_config_choose.h - how the fast path picks its configuration, the same
 * for the forward (fwd_xe_plan.h) and the backward (bwd_xe_plan.h): an
 * environment override it accepts, else the first matching row of its
 * table (config_xe_table.c) that it accepts, else nothing, and the plan
 * falls back to the portable kernels, whose own choice then reports a bad
 * override.
 */
#ifndef SDPA_CORE_XE_CONFIG_CHOOSE_H
#define SDPA_CORE_XE_CONFIG_CHOOSE_H

#include <stddef.h>

#include "config_choose.h"
#include "kernel_config.h"
#include "sdpa.h"
#include "xe_target.h"

/* Checks one configuration (the caller's config type) for the fast path,
 * quoting source in the error; ctx is the caller's. */
typedef sdpa_status_t (*sdpa_xe_config_check_fn)(const void *config, const void *ctx,
                                                 const char *source);

/* A fast-path table: rows of row_size bytes, each a criteria followed by a
 * configuration of config_size bytes at config_offset. */
typedef struct sdpa_xe_config_table {
    const void *rows;
    size_t count, row_size, config_offset, config_size;
} sdpa_xe_config_table_t;

/* Picks a configuration into out (config_size bytes): env_config (named
 * env_name) if env_found, else the rows of table matching query for
 * target's row class (FMA and F32 properties dropped: the fast path
 * multiplies on the matrix engine), best first; the first that check
 * accepts wins. Sets *use (1: out and *source are set) and clears the
 * error state of refused configurations. Never fails. */
void sdpa_xe_config_pick(const void *env_config, int env_found, const char *env_name,
                         const sdpa_xe_config_table_t *table, const sdpa_config_query_t *query,
                         const sdpa_xe_target_t *target, sdpa_xe_config_check_fn check,
                         const void *ctx, void *out, sdpa_config_source_t *source, int *use);

#endif /* SDPA_CORE_XE_CONFIG_CHOOSE_H */
