/* xe_fwd_plan.c - whether the forward fast path serves a problem, and its
 * configuration. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>

#include "config_check.h"
#include "config_env.h"
#include "error.h"
#include "problem.h"
#include "fwd_plan.h"
#include "xe_fwd_plan.h"
#include "kernel_abi_xe.h"
#include "spirv_variants.h"
#include "xe_config_choose.h"
#include "xe_config_rules.h"
#include "xe_target.h"

int sdpa_fwd_xe_serves(const sdpa_problem_desc_t *p, const sdpa_shape_t *shape,
                       const sdpa_device_info_t *device, sdpa_xe_target_t *target, const char **why)
{
    sdpa_xe_target_t t;
    const char *reason = sdpa_xe_refusal(p, shape, device, &t);
    if (!reason && (p->q.strides[3] != 1 || p->dst.strides[3] != 1))
        reason = "Q or O is not contiguous along the head dimension";
    if (why)
        *why = reason;
    if (reason)
        return 0;
    /* Direct operand loads need K and V in Q's dtype, V rows contiguous
     * and K contiguous along the head dimension or the keys. */
    t.convert_kv = p->k.dtype != p->q.dtype || p->v.dtype != p->q.dtype || p->v.strides[3] != 1 ||
                   (p->k.strides[3] != 1 && p->k.strides[2] != 1);
    *target = t;
    return 1;
}

int sdpa_fwd_xe_kv_surf_per_block(const sdpa_problem_desc_t *p, const sdpa_shape_t *shape,
                                  const sdpa_xe_target_t *t)
{
    return t->rows_class == SDPA_DEVICE_CLASS_XE_HPC && t->subgroup_size == 16 && !t->convert_kv &&
           p->mask_kind != SDPA_MASK_BUFFER && shape->head_size <= 128;
}

/* The build-time fields of config's variant on target (variants.def). */
static sdpa_spirv_fields_t variant_fields(const sdpa_fwd_config_t *c, const sdpa_xe_target_t *t)
{
    const sdpa_spirv_fields_t fields = {c->unroll_m_kq, c->unroll_m_vs,
                                        (t->convert_kv ? SDPA_SPIRV_FIELD_CVT : 0u) |
                                                (t->emulate ? SDPA_SPIRV_FIELD_EMU : 0u)};
    return fields;
}

const char *sdpa_fwd_xe_variant(const sdpa_fwd_config_t *c, const sdpa_xe_target_t *t)
{
    const sdpa_spirv_fields_t fields = variant_fields(c, t);
    return sdpa_spirv_variant_name(SDPA_XE_FWD_SOURCE, &fields, 0, (int)t->subgroup_size);
}

/* Fails with "<source> <config> breaks the fast path's rule <rule>: ...". */
#define BREAKS(rule, ...) sdpa_xe_config_breaks(source, text, rule, __VA_ARGS__)

sdpa_status_t sdpa_fwd_xe_config_check(const sdpa_fwd_config_t *c, const sdpa_xe_target_t *t,
                                       const sdpa_device_info_t *device, int64_t head_size,
                                       const char *source)
{
    char text[128];
    int values[SDPA_FWD_CONFIG_INTS];
    sdpa_fwd_config_format(c, text, sizeof(text));
    sdpa_fwd_config_to_ints(c, values);
    sdpa_status_t status = sdpa_xe_check_values(values, SDPA_FWD_CONFIG_INTS, source, text);
    if (status != SDPA_SUCCESS)
        return status;
    const int sg = (int)t->subgroup_size;
    if (c->unroll_n_kq != sg || c->unroll_n_vs != sg)
        return BREAKS("unroll_n_kq == unroll_n_vs == sub-group size (one query per lane)",
                      "%d, %d, %d", c->unroll_n_kq, c->unroll_n_vs, sg);
    if (c->wg_m_kq != c->wg_m_vs || c->wg_n_kq != c->wg_n_vs)
        return BREAKS("wg_m_kq == wg_m_vs and wg_n_kq == wg_n_vs (one sub-group grid)",
                      "%d, %d and %d, %d", c->wg_m_kq, c->wg_m_vs, c->wg_n_kq, c->wg_n_vs);
    if (c->unroll_m_kq % 16 != 0 || c->unroll_m_vs % 8 != 0)
        return BREAKS("unroll_m_kq % 16 == 0 and unroll_m_vs % 8 == 0 (whole matrix blocks)",
                      "%d, %d", c->unroll_m_kq, c->unroll_m_vs);
    const int64_t bd = (int64_t)c->unroll_m_vs * c->wg_m_vs;
    if (bd < head_size)
        return BREAKS("unroll_m_vs * wg_m_vs >= head size", "%d * %d = %" PRId64 " < %" PRId64,
                      c->unroll_m_vs, c->wg_m_vs, bd, head_size);
    const sdpa_spirv_fields_t fields = variant_fields(c, t);
    const int64_t bq = (int64_t)sg * c->wg_n_kq, bk = (int64_t)c->unroll_m_kq * c->wg_m_kq;
    const int64_t slm =
            SDPA_XE_FWD_SLM_BYTES(head_size, bq, bk, (int64_t)c->wg_m_kq, sg, t->convert_kv);
    return sdpa_xe_check_launch(SDPA_XE_FWD_SOURCE, &fields, t->subgroup_size,
                                (int64_t)c->wg_m_kq * c->wg_n_kq, "wg_m_kq * wg_n_kq", slm, device,
                                source, text);
}

/* K or V is converted on the fly: dequantized, or FP8 (with or without
 * scales). */
static int is_quantized(const sdpa_problem_desc_t *p)
{
    return p->k_quant.scales != SDPA_QUANT_NONE || p->k_quant.zero_points != SDPA_QUANT_NONE ||
           p->v_quant.scales != SDPA_QUANT_NONE || p->v_quant.zero_points != SDPA_QUANT_NONE ||
           sdpa_dtype_is_fp8(p->k.dtype) || sdpa_dtype_is_fp8(p->v.dtype);
}

static sdpa_status_t check(const void *config, const sdpa_xe_target_t *target,
                           const sdpa_device_info_t *device, int64_t head_size, const char *source)
{
    return sdpa_fwd_xe_config_check(config, target, device, head_size, source);
}

/* QUANTIZED_SDPA_CONFIG for quantized K/V, else SDPA_CONFIG. */
static sdpa_status_t from_env(const sdpa_problem_desc_t *problem, void *config, int *found,
                              const char **var)
{
    return sdpa_fwd_config_from_env(is_quantized(problem), config, found, var);
}

const sdpa_xe_direction_t sdpa_fwd_xe_direction = {
        .rows = sdpa_fwd_xe_config_table,
        .count = &sdpa_fwd_xe_config_table_size,
        .row_size = sizeof(sdpa_fwd_config_row_t),
        .config_offset = offsetof(sdpa_fwd_config_row_t, config),
        .config_size = sizeof(sdpa_fwd_config_t),
        .from_env = from_env,
        .query_for = sdpa_fwd_config_query_for,
        .check = check,
};
