/*
 * xe_bwd_plan.h - the backward fast path (spirv/xe/sdpa_xe_bwd.cl): whether it
 * serves a problem on a device, its configuration rules, table and choice.
 * sdpa_bwd_plan_make asks here first and falls back to the portable
 * kernels; the pipeline (preprocess, postprocess, scratch, strides buffer)
 * is the same either way, only the main and deterministic-dQ kernels
 * differ (kernel_abi_xe.h).
 */
#ifndef SDPA_CORE_BWD_XE_PLAN_H
#define SDPA_CORE_BWD_XE_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "config_choose.h"
#include "device.h"
#include "kernel_config.h"
#include "problem.h"
#include "sdpa.h"
#include "xe_config_choose.h"
#include "xe_target.h"

/* The backward fast path's rows (xe_config_table.c), matched like the
 * portable backward table's (props THIN_Q, never FMA). */
extern const sdpa_bwd_config_row_t sdpa_bwd_xe_config_table[];
extern const size_t sdpa_bwd_xe_config_table_size;

/* 1 if the backward fast path serves problem (checked, BACKWARD) on device:
 * the device runs the fast path (xe_target.h; the backward always builds
 * with the 256-register file), Q is f16 or bf16, the head size is at most
 * 256, the problem uses none of the ABI 1.1 features the fast path lacks
 * (all of these: sdpa_xe_refusal), and K, V, O and dO are in Q's dtype.
 * Any layout: every tile is staged through local memory. Otherwise 0 with
 * *why. */
int sdpa_bwd_xe_serves(const sdpa_problem_desc_t *problem, const sdpa_shape_t *shape,
                       const sdpa_device_info_t *device, sdpa_xe_target_t *target,
                       const char **why);

/* The name of config's SPIR-V variant on target and device
 * ("sdpa_xe_bwd-k16-d16", "sdpa_xe_bwd-k16-d16-fadd" where
 * sdpa_device_native_f32_add; device NULL: the compare-and-swap one),
 * static (a row of spirv/abi/variants.def), or NULL if none is built
 * (sdpa_bwd_xe_config_check refuses config). */
const char *sdpa_bwd_xe_variant(const sdpa_bwd_config_t *config, const sdpa_xe_target_t *target,
                                const sdpa_device_info_t *device);

/* Checks config for the backward fast path (SDPA_ERROR_INVALID_CONFIG with
 * the first rule it breaks, quoting it under source):
 *   every value in 1..SDPA_CONFIG_VALUE_MAX;
 *   unroll_n_BcBr == unroll_n_DBr == 16, wg_n_BcBr == wg_n_DBr == 1;
 *   unroll_m_BcBr == unroll_n_DBc (8 or 16 keys per sub-group);
 *   unroll_m_DBc == unroll_m_DBr, a multiple of the sub-group size;
 *   wg_m_BcBr == wg_n_DBc, wg_m_DBc == wg_m_DBr;
 *   unroll_m_DBc * wg_m_DBc >= head size;
 *   the variant is built in;
 *   with a device: the work-group size and the local memory of both
 *   kernels within its limits. */
sdpa_status_t sdpa_bwd_xe_config_check(const sdpa_bwd_config_t *config,
                                       const sdpa_xe_target_t *target,
                                       const sdpa_device_info_t *device, int64_t head_size,
                                       const char *source);

/* The backward for sdpa_xe_config_choose: this table, BWD_SDPA_CONFIG,
 * sdpa_bwd_xe_config_check. */
extern const sdpa_xe_direction_t sdpa_bwd_xe_direction;

#endif /* SDPA_CORE_BWD_XE_PLAN_H */
