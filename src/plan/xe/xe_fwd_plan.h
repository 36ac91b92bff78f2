/*
 * xe_fwd_plan.h - the forward fast path (spirv/xe/sdpa_xe_fwd.cl): whether it
 * serves a problem on a device, its configuration rules, table and choice.
 * sdpa_fwd_plan_make asks here first and falls back to the portable kernel.
 *
 * The fast path runs where a device has matrix engines (kernel_abi_xe.h):
 * Xe-HPG (discrete: Arc A-series, Flex; sub-groups of 8), Xe-HPC, Xe2 and
 * Xe3 (sub-groups of 16). SDPA_ZE_KERNELS (device.h, sdpa_kernel_set_t)
 * turns it off ("portable") or on for a device without matrix engines
 * ("xe", "xe_hpg": the CPU device runs the variants that emulate the
 * products, with the configuration rows of Xe-HPC or Xe-HPG).
 */
#ifndef SDPA_CORE_FWD_XE_PLAN_H
#define SDPA_CORE_FWD_XE_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "config_choose.h"
#include "device.h"
#include "kernel_config.h"
#include "problem.h"
#include "sdpa.h"
#include "xe_config_choose.h"
#include "xe_target.h"

/* The fast path's rows (xe_config_table.c): same form and matching rules
 * as the portable tables (kernel_config.h), for the classes with matrix
 * engines; props are THIN_Q, QUANTIZED and F16_ACC, never FMA. */
extern const sdpa_fwd_config_row_t sdpa_fwd_xe_config_table[];
extern const size_t sdpa_fwd_xe_config_table_size;

/* 1 if the fast path serves problem (checked, with its shape) on device:
 * the kernel set and the device class allow it (*target says how), Q is
 * f16 or bf16, the head size is at most 256, the problem uses none of the
 * ABI 1.1 features the fast path lacks (all of these: sdpa_xe_refusal),
 * and the innermost stride of Q and O is 1. K and V may have any dtype
 * and layout: unless both are in Q's dtype with V contiguous along the
 * head dimension and K along it or along the keys, target->convert_kv
 * selects the variants that convert them first. Otherwise 0, with *why
 * (static text) naming the first reason. */
int sdpa_fwd_xe_serves(const sdpa_problem_desc_t *problem, const sdpa_shape_t *shape,
                       const sdpa_device_info_t *device, sdpa_xe_target_t *target,
                       const char **why);

/* The name of config's SPIR-V variant on target, e.g.
 * "sdpa_xe_fwd-k32-d64-cvt-emu" (static: a row of spirv/abi/variants.def),
 * or NULL if none is built (sdpa_fwd_xe_config_check refuses config). */
const char *sdpa_fwd_xe_variant(const sdpa_fwd_config_t *config, const sdpa_xe_target_t *target);

/* Checks config for the fast path, quoting it under source in the message
 * of the first rule it breaks (SDPA_ERROR_INVALID_CONFIG):
 *   every value in 1..SDPA_CONFIG_VALUE_MAX;
 *   unroll_n_kq == unroll_n_vs == the target's sub-group size;
 *   wg_m_kq == wg_m_vs, wg_n_kq == wg_n_vs;
 *   unroll_m_kq % 16 == 0, unroll_m_vs % 8 == 0;
 *   unroll_m_vs * wg_m_vs >= head size;
 *   sdpa_fwd_xe_variant finds its variant;
 *   with a device: local size {sg, wg_m_kq * wg_n_kq, 1} and
 *   SDPA_XE_FWD_SLM_BYTES within its limits. */
sdpa_status_t sdpa_fwd_xe_config_check(const sdpa_fwd_config_t *config,
                                       const sdpa_xe_target_t *target,
                                       const sdpa_device_info_t *device, int64_t head_size,
                                       const char *source);

/* 1 if the kernel gives each 8-key block of K and each 16 head-dim columns
 * of V their own 2D-load surface (XE_KV_SURF_PER_BLOCK): on Xe-HPC rows, whose loads carry their
 * coordinates in the payload (Xe2 and Xe3 take constant offsets in the
 * message instead), for K and V in Q's dtype up to head size 128; not with a
 * mask buffer nor at head size 256, where it has not been measured. */
int sdpa_fwd_xe_kv_surf_per_block(const sdpa_problem_desc_t *problem, const sdpa_shape_t *shape,
                                  const sdpa_xe_target_t *target);

/* The forward for sdpa_xe_config_choose: this table, QUANTIZED_SDPA_CONFIG
 * for quantized K/V else SDPA_CONFIG, sdpa_fwd_xe_config_check. */
extern const sdpa_xe_direction_t sdpa_fwd_xe_direction;

#endif /* SDPA_CORE_FWD_XE_PLAN_H */
