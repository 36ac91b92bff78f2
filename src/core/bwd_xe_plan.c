/* bwd_xe_plan.c - whether the backward fast path serves a problem, and its
 * configuration. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>

#include "bwd_plan.h"
#include "bwd_xe_plan.h"
#include "config_env.h"
#include "error.h"
#include "kernel_abi_xe.h"
#include "spirv_registry.h"
#include "xe_config_choose.h"

/* The largest head size the backward fast path serves. */
#define XE_BWD_MAX_HEAD_SIZE 256

int sdpa_bwd_xe_serves(const sdpa_problem_desc_t *p, const sdpa_shape_t *shape,
                       const sdpa_device_info_t *device, sdpa_xe_target_t *target, const char **why)
{
    const char *reason = NULL;
    sdpa_xe_target_t t;
    const sdpa_dtype_t dt = p->q.dtype;
    if (!sdpa_xe_target_of(device, &t, &reason))
        ;
    else if (!sdpa_device_supports_subgroup(device, t.subgroup_size))
        reason = "the device lacks the fast path's sub-group size";
    else if (dt != SDPA_DTYPE_F16 && dt != SDPA_DTYPE_BF16)
        reason = "Q is neither f16 nor bf16";
    else if (p->k.dtype != dt || p->v.dtype != dt || p->dst.dtype != dt || p->diff_dst.dtype != dt)
        reason = "K, V, O or dO is not in Q's dtype";
    else if (dt == SDPA_DTYPE_F16 && !device->has_fp16)
        reason = "the device has no fp16";
    else if (shape->head_size > XE_BWD_MAX_HEAD_SIZE)
        reason = "the head size is above 256";
    else if (sdpa_xe_unimplemented_feature(p))
        reason = sdpa_xe_unimplemented_feature(p);
    if (why)
        *why = reason;
    if (reason)
        return 0;
    /* The dK/dV accumulators and the scores do not fit 128 registers. */
    t.large_grf = !t.emulate;
    *target = t;
    return 1;
}

void sdpa_bwd_xe_variant(const sdpa_bwd_config_t *c, const sdpa_xe_target_t *t,
                         const sdpa_device_info_t *device, char *buf, size_t size)
{
    const int fadd = device && sdpa_device_native_f32_add(device);
    snprintf(buf, size, SDPA_XE_BWD_VARIANT, c->unroll_m_bcbr, c->unroll_m_dbc,
             t->emulate ? "-emu" : "", fadd ? SDPA_BWD_FADD_FIELD : "");
}

/* Fails with "<source> <config> breaks the rule <rule>: <details>". */
#define BREAKS(rule, details_format, ...)                                                          \
    sdpa_fail(SDPA_ERROR_INVALID_CONFIG, "%s %s breaks the fast path's rule %s: " details_format,  \
              source, sdpa_bwd_config_format(c, text, sizeof(text)), rule, __VA_ARGS__)

sdpa_status_t sdpa_bwd_xe_config_check(const sdpa_bwd_config_t *c, const sdpa_xe_target_t *t,
                                       const sdpa_device_info_t *device, int64_t head_size,
                                       const char *source)
{
    char text[128];
    int values[SDPA_BWD_CONFIG_INTS];
    sdpa_bwd_config_to_ints(c, values);
    for (int i = 0; i < SDPA_BWD_CONFIG_INTS; i++)
        if (values[i] < 1 || values[i] > SDPA_CONFIG_VALUE_MAX)
            return BREAKS("every value is in 1..1024", "value %d is %d", i + 1, values[i]);
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
    char variant[64];
    sdpa_bwd_xe_variant(c, t, device, variant, sizeof(variant));
    if (!sdpa_spirv_find(variant, 0, sg))
        return BREAKS("the tile is a built variant", "no SPIR-V variant %s.0.%d", variant, sg);
    if (!device)
        return SDPA_SUCCESS;
    const int64_t n_sg = (int64_t)c->wg_m_dbc * c->wg_n_dbc;
    if (sg * n_sg > device->max_group_size || n_sg > device->max_group_size_xyz[1])
        return BREAKS("sub-group * wg_m_DBc * wg_n_DBc <= work-group limit",
                      "%d * %" PRId64 " work-items on %s (at most %" PRIu32 ")", sg, n_sg,
                      device->name, device->max_group_size);
    const int64_t bc = (int64_t)c->unroll_m_bcbr * c->wg_m_bcbr;
    int64_t slm = SDPA_XE_BWD_SLM_BYTES(head_size, bc);
    const int64_t slm_dq = SDPA_XE_BWD_DQ_SLM_BYTES(head_size, (int64_t)c->unroll_m_bcbr,
                                                    (int64_t)q * c->wg_m_bcbr);
    if (slm_dq > slm)
        slm = slm_dq;
    if (slm > (int64_t)device->slm_bytes)
        return BREAKS("local memory <= the device's",
                      "the backward fast path needs %" PRId64 " > %" PRIu64 " bytes on %s", slm,
                      device->slm_bytes, device->name);
    return SDPA_SUCCESS;
}

/* What sdpa_bwd_xe_config_check needs besides the configuration. */
typedef struct bwd_check_ctx {
    const sdpa_xe_target_t *target;
    const sdpa_device_info_t *device;
    int64_t head_size;
} bwd_check_ctx_t;

static sdpa_status_t check_bwd(const void *config, const void *ctx, const char *source)
{
    const bwd_check_ctx_t *c = ctx;
    return sdpa_bwd_xe_config_check(config, c->target, c->device, c->head_size, source);
}

sdpa_status_t sdpa_bwd_xe_config_choose(const sdpa_problem_desc_t *problem,
                                        const sdpa_shape_t *shape, const sdpa_device_info_t *device,
                                        const sdpa_xe_target_t *target, sdpa_bwd_config_t *out,
                                        sdpa_config_source_t *source, int *use)
{
    *use = 0;
    sdpa_bwd_config_t env;
    int found;
    sdpa_status_t status = sdpa_bwd_config_from_env(&env, &found);
    if (status != SDPA_SUCCESS)
        return status;
    sdpa_config_query_t query;
    sdpa_bwd_config_query_for(problem, shape, device, &query);
    const sdpa_xe_config_table_t table = {
            sdpa_bwd_xe_config_table, sdpa_bwd_xe_config_table_size, sizeof(sdpa_bwd_config_row_t),
            offsetof(sdpa_bwd_config_row_t, config), sizeof(sdpa_bwd_config_t)};
    const bwd_check_ctx_t ctx = {target, device, shape->head_size};
    sdpa_xe_config_pick(&env, found, "BWD_SDPA_CONFIG", &table, &query, target, check_bwd, &ctx,
                        out, source, use);
    return SDPA_SUCCESS;
}
