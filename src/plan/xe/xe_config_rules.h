/*
 * xe_config_rules.h - the rules every fast-path configuration follows, in
 * either direction (sdpa_fwd_xe_config_check, sdpa_bwd_xe_config_check):
 * first its values in range, last a built variant and a launch within the
 * device's limits; each direction checks its own tiling rules between.
 * Every refusal reads "<source> <config> breaks the fast path's rule
 * <rule>: <details>" (SDPA_ERROR_INVALID_CONFIG).
 */
#ifndef SDPA_CORE_XE_CONFIG_RULES_H
#define SDPA_CORE_XE_CONFIG_RULES_H

#include <stdint.h>

#include "device.h"
#include "sdpa.h"
#include "spirv_variants.h"

/* Fails with "<source> <config_text> breaks the fast path's rule <rule>:
 * <details>", details formatted as printf does. Returns
 * SDPA_ERROR_INVALID_CONFIG. */
sdpa_status_t sdpa_xe_config_breaks(const char *source, const char *config_text, const char *rule,
                                    const char *details_format, ...)
        __attribute__((format(printf, 4, 5)));

/* The first rule: every one of the count values (a configuration's
 * integers, sdpa_*_config_to_ints) is in 1..SDPA_CONFIG_VALUE_MAX, which
 * keeps the other rules' products from overflowing. Returns SDPA_SUCCESS
 * or the refusal of config_text under source. */
sdpa_status_t sdpa_xe_check_values(const int *values, int count, const char *source,
                                   const char *config_text);

/* The last rules: a SPIR-V variant of kernel_source with these fields is
 * built for sub-groups of sg (a row of spirv/abi/variants.def); with a
 * device (NULL: not checked), a work-group of `subgroups` sub-groups along
 * y (`grid` names the product, "wg_m_kq * wg_n_kq") and slm_bytes of local
 * memory within its limits. Returns SDPA_SUCCESS or the refusal of
 * config_text under source. */
sdpa_status_t sdpa_xe_check_launch(const char *kernel_source, const sdpa_spirv_fields_t *fields,
                                   uint32_t sg, int64_t subgroups, const char *grid,
                                   int64_t slm_bytes, const sdpa_device_info_t *device,
                                   const char *source, const char *config_text);

#endif /* SDPA_CORE_XE_CONFIG_RULES_H */
