/*
 * config_check.h - the rules a kernel configuration must follow.
 *
 * Two kinds of rules: oneDNN's [CONFIG] rules (the tiles of the two matrix
 * products of a pass must agree), and the limits of our kernels and of the
 * device (the axes that run along lanes, private-array capacity per lane and
 * local memory from kernel_abi.h and kernel_abi_bwd.h, work-group size). Every configuration passes
 * here before it is used, whether it comes from a table or from an
 * environment override; the rules live in this one place so that the kernel
 * authors can change the list.
 */
#ifndef SDPA_CORE_CONFIG_CHECK_H
#define SDPA_CORE_CONFIG_CHECK_H

#include <stdint.h>

#include "kernel_config.h"
#include "device.h"
#include "sdpa.h"

/* What a configuration will run on. */
typedef struct sdpa_kernel_target {
    /* NULL: check only the rules that do not depend on the device. */
    const sdpa_device_info_t *device;
    uint32_t subgroup_size; /* of the SPIR-V variant */
    int d_max;              /* head-size bucket of the SPIR-V variant */
    int64_t head_size;      /* D the configuration must cover */
} sdpa_kernel_target_t;

/* Checks a forward configuration. Returns SDPA_SUCCESS, or
 * SDPA_ERROR_INVALID_CONFIG with one sentence that quotes the configuration
 * under the name source (e.g. "SDPA_CONFIG", "table: xe_hpc h128 fma") and
 * names the rule it breaks, e.g. "SDPA_CONFIG 16,16,16,8,2,2,2,2 breaks the
 * rule unroll_n_kq * wg_n_kq == unroll_n_vs * wg_n_vs (S and O cover the same
 * queries): 32 != 16". Rules, in the order checked:
 *   every value in 1..SDPA_CONFIG_VALUE_MAX;
 *   unroll_n_kq * wg_n_kq == unroll_n_vs * wg_n_vs            (oneDNN)
 *   unroll_n_kq % unroll_n_vs == 0                            (oneDNN)
 *   unroll_m_vs * wg_m_vs >= head size                        (oneDNN)
 *   wg_m_kq * wg_n_kq == wg_m_vs * wg_n_vs                    (sdpa_fwd.cl)
 *   unroll_n_kq % sub-group == 0, unroll_m_vs % sub-group == 0 (lane axes)
 *   unroll_m_kq * (unroll_n_kq / sub-group) <= SDPA_FWD_MAX_S_PER_LANE,
 *   unroll_n_vs * (unroll_m_vs / sub-group) <= SDPA_FWD_MAX_O_PER_LANE,
 *   unroll_n_kq / sub-group <= SDPA_FWD_MAX_Q_PER_LANE        (kernel_abi.h)
 *   with a device: local size {sub-group, wg_m_kq * wg_n_kq, 1} within its
 *   work-group limits, SDPA_FWD_SLM_BYTES within its local memory. */
sdpa_status_t sdpa_fwd_config_check(const sdpa_fwd_config_t *config,
                                    const sdpa_kernel_target_t *target, const char *source);

/* Checks a backward configuration the same way. Rules:
 *   every value in 1..SDPA_CONFIG_VALUE_MAX;
 *   unroll_m_BcBr * wg_m_BcBr == unroll_n_DBc * wg_n_DBc      (oneDNN)
 *   wg_m_DBc * wg_n_DBc <= wg_m_BcBr * wg_n_BcBr              (oneDNN)
 *   unroll_m_DBc * wg_m_DBc >= head size                      (oneDNN)
 *   unroll_n_BcBr * wg_n_BcBr == unroll_n_DBr * wg_n_DBr      (oneDNN)
 *   wg_m_DBr * wg_n_DBr <= wg_m_BcBr * wg_n_BcBr              (oneDNN)
 *   unroll_m_DBr * wg_m_DBr >= head size                      (oneDNN)
 *   unroll_m_BcBr, unroll_n_DBc, unroll_m_DBr % sub-group == 0 (lane axes)
 *   with a device: local size {sub-group, wg_m_BcBr * wg_n_BcBr, 1} within
 *   its work-group limits, SDPA_BWD_SLM_BYTES and SDPA_BWD_DQ_SLM_BYTES
 *   within its local memory (kernel_abi_bwd.h). */
sdpa_status_t sdpa_bwd_config_check(const sdpa_bwd_config_t *config,
                                    const sdpa_kernel_target_t *target, const char *source);

#endif /* SDPA_CORE_CONFIG_CHECK_H */
