/*
 * config_choose.h - picking the configuration a primitive runs with.
 *
 * Order: an environment override if one is set (it must pass the checks, or
 * primitive creation fails with its message), else the best table row the
 * checks accept for this device and variant (rows the device cannot run, for
 * example for lack of local memory, are skipped), else the fallback row of
 * the head-size bucket.
 */
#ifndef SDPA_CORE_CONFIG_CHOOSE_H
#define SDPA_CORE_CONFIG_CHOOSE_H

#include "kernel_config.h"
#include "config_check.h"
#include "sdpa.h"

/* Where a chosen configuration came from, for SDPA_QUERY_CONFIG_STRING and
 * debugging. */
typedef struct sdpa_config_source {
    char text[96];    /* "table: xe_hpc h128 sk<=512 thin fma", "SDPA_CONFIG", "fallback: h128" */
    int from_env;     /* 1: an environment override */
    int skipped_rows; /* matching rows the checks refused before this one */
} sdpa_config_source_t;

/* The smallest head-size bucket (a SPIR-V variant's D_MAX, the rows of
 * spirv/abi/head_size_buckets.def: 32, 64, 128, 256, 512) that holds head_size,
 * or 0 if head_size is above the largest or below 1. */
int sdpa_head_size_bucket(int64_t head_size);

/* The largest head-size bucket: the largest head size the forward serves. */
int sdpa_head_size_max(void);

/* Chooses the forward configuration for query on target (whose device may
 * not be NULL); quantized selects QUANTIZED_SDPA_CONFIG over SDPA_CONFIG.
 * Returns SDPA_SUCCESS, SDPA_ERROR_INVALID_CONFIG for a malformed or
 * unsuitable override, or SDPA_ERROR_UNSUPPORTED if not even the fallback
 * row fits the device (the message says which rule it breaks). source may be
 * NULL. */
sdpa_status_t sdpa_fwd_config_choose(const sdpa_config_query_t *query, int quantized,
                                     const sdpa_kernel_target_t *target, sdpa_fwd_config_t *out,
                                     sdpa_config_source_t *source);

/* The same for backward (BWD_SDPA_CONFIG). */
sdpa_status_t sdpa_bwd_config_choose(const sdpa_config_query_t *query,
                                     const sdpa_kernel_target_t *target, sdpa_bwd_config_t *out,
                                     sdpa_config_source_t *source);

#endif /* SDPA_CORE_CONFIG_CHOOSE_H */
