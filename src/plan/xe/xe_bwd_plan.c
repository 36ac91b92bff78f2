/* xe_bwd_plan.c - whether the backward fast path serves a problem, and its
 * configuration. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>

#include "bwd_plan.h"
#include "xe_bwd_plan.h"
#include "config_env.h"
#include "error.h"
#include "kernel_abi_xe.h"
#include "spirv_variants.h"
#include "xe_config_choose.h"
#include "xe_config_rules.h"

int sdpa_bwd_xe_serves(const sdpa_problem_desc_t *p, const sdpa_shape_t *shape,
                       const sdpa_device_info_t *device, sdpa_xe_target_t *target, const char **why)
{
    sdpa_xe_target_t t;
    const char *reason = sdpa_xe_refusal(p, shape, device, &t);
    const sdpa_dtype_t dt = p->q.dtype;
    if (!reason &&
        (p->k.dtype != dt || p->v.dtype != dt || p->dst.dtype != dt || p->diff_dst.dtype != dt))
        reason = "K, V, O or dO is not in Q's dtype";
    if (why)
        *why = reason;
    if (reason)
        return 0;
    /* The dK/dV accumulators and the scores do not fit 128 registers. */
    t.large_grf = !t.emulate;
    *target = t;
    return 1;
}

/* The build-time fields of config's variant on target and device
 * (variants.def). */
static sdpa_spirv_fields_t variant_fields(const sdpa_bwd_config_t *c, const sdpa_xe_target_t *t,
                                          const sdpa_device_info_t *device)
{
    const int fadd = device && sdpa_device_native_f32_add(device);
    const sdpa_spirv_fields_t fields = {c->unroll_m_bcbr, c->unroll_m_dbc,
                                        (t->emulate ? SDPA_SPIRV_FIELD_EMU : 0u) |
                                                (fadd ? SDPA_SPIRV_FIELD_FADD : 0u)};
    return fields;
}

const char *sdpa_bwd_xe_variant(const sdpa_bwd_config_t *c, const sdpa_xe_target_t *t,
                                const sdpa_device_info_t *device)
{
    const sdpa_spirv_fields_t fields = variant_fields(c, t, device);
    return sdpa_spirv_variant_name(SDPA_XE_BWD_SOURCE, &fields, 0, (int)t->subgroup_size);
}

/* Fails with "<source> <config> breaks the fast path's rule <rule>: ...". */
#define BREAKS(rule, ...) sdpa_xe_config_breaks(source, text, rule, __VA_ARGS__)

sdpa_status_t sdpa_bwd_xe_config_check(const sdpa_bwd_config_t *c, const sdpa_xe_target_t *t,
                                       const sdpa_device_info_t *device, int64_t head_size,
                                       const char *source)
{
    char text[128];
    int values[SDPA_BWD_CONFIG_INTS];
    sdpa_bwd_config_format(c, text, sizeof(text));
    sdpa_bwd_config_to_ints(c, values);
    sdpa_status_t status = sdpa_xe_check_values(values, SDPA_BWD_CONFIG_INTS, source, text);
    if (status != SDPA_SUCCESS)
        return status;
    const int sg = (int)t->subgroup_size, q = SDPA_XE_BWD_QUERIES;
    if (c->unroll_n_bcbr != q || c->unroll_n_dbr != q || c->wg_n_bcbr != 1 || c->wg_n_dbr != 1)
        return BREAKS("unroll_n_BcBr == unroll_n_DBr == 16 and wg_n_BcBr == wg_n_DBr == 1 "
                      "(blocks of 16 queries)",
                      "%d, %d, %d, %d", c->unroll_n_bcbr, c->unroll_n_dbr, c->wg_n_bcbr,
                      c->wg_n_dbr);
    if (c->unroll_m_bcbr != c->unroll_n_dbc || (c->unroll_m_bcbr != 8 && c->unroll_m_bcbr != 16))
        return BREAKS("unroll_m_BcBr == unroll_n_DBc, 8 or 16 (keys per sub-group)", "%d, %d",
                      c->unroll_m_bcbr, c->unroll_n_dbc);
    if (c->unroll_m_dbc != c->unroll_m_dbr || c->unroll_m_dbc % sg != 0)
        return BREAKS("unroll_m_DBc == unroll_m_DBr, a multiple of the sub-group size", "%d, %d",
                      c->unroll_m_dbc, c->unroll_m_dbr);
    if (c->wg_m_bcbr != c->wg_n_dbc || c->wg_m_dbc != c->wg_m_dbr)
        return BREAKS("wg_m_BcBr == wg_n_DBc and wg_m_DBc == wg_m_DBr (one sub-group grid)",
                      "%d, %d and %d, %d", c->wg_m_bcbr, c->wg_n_dbc, c->wg_m_dbc, c->wg_m_dbr);
    const int64_t bd = (int64_t)c->unroll_m_dbc * c->wg_m_dbc;
    if (bd < head_size)
        return BREAKS("unroll_m_DBc * wg_m_DBc >= head size", "%d * %d = %" PRId64 " < %" PRId64,
                      c->unroll_m_dbc, c->wg_m_dbc, bd, head_size);
    const sdpa_spirv_fields_t fields = variant_fields(c, t, device);
    /* The main kernel's local memory (with K^T, as in ATOMIC mode) or the
     * dQ pass's, the larger. */
    const int64_t bc = (int64_t)c->unroll_m_bcbr * c->wg_m_bcbr;
    const int64_t slm_main = SDPA_XE_BWD_SLM_BYTES(head_size, bc, 1);
    const int64_t slm_dq = SDPA_XE_BWD_DQ_SLM_BYTES(head_size, (int64_t)c->unroll_m_bcbr,
                                                    (int64_t)q * c->wg_m_bcbr);
    return sdpa_xe_check_launch(SDPA_XE_BWD_SOURCE, &fields, t->subgroup_size,
                                (int64_t)c->wg_m_dbc * c->wg_n_dbc, "wg_m_DBc * wg_n_DBc",
                                slm_dq > slm_main ? slm_dq : slm_main, device, source, text);
}

static sdpa_status_t check(const void *config, const sdpa_xe_target_t *target,
                           const sdpa_device_info_t *device, int64_t head_size, const char *source)
{
    return sdpa_bwd_xe_config_check(config, target, device, head_size, source);
}

/* BWD_SDPA_CONFIG, whatever the problem. */
static sdpa_status_t from_env(const sdpa_problem_desc_t *problem, void *config, int *found,
                              const char **var)
{
    (void)problem;
    *var = "BWD_SDPA_CONFIG";
    return sdpa_bwd_config_from_env(config, found);
}

const sdpa_xe_direction_t sdpa_bwd_xe_direction = {
        .rows = sdpa_bwd_xe_config_table,
        .count = &sdpa_bwd_xe_config_table_size,
        .row_size = sizeof(sdpa_bwd_config_row_t),
        .config_offset = offsetof(sdpa_bwd_config_row_t, config),
        .config_size = sizeof(sdpa_bwd_config_t),
        .from_env = from_env,
        .query_for = sdpa_bwd_config_query_for,
        .check = check,
};
