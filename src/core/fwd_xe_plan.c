/* fwd_xe_plan.c - whether the forward fast path serves a problem, and its
 * configuration. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>

#include "config_check.h"
#include "config_env.h"
#include "error.h"
#include "fwd_plan.h"
#include "fwd_xe_plan.h"
#include "kernel_abi_xe.h"
#include "spirv_registry.h"
#include "xe_config_choose.h"
#include "xe_target.h"

/* The largest head size the fast path serves: Q^T's operands in local
 * memory grow with it, and the tables have rows up to it. */
#define XE_MAX_HEAD_SIZE 256

int sdpa_fwd_xe_serves(const sdpa_problem_desc_t *p, const sdpa_shape_t *shape,
                       const sdpa_device_info_t *device, sdpa_xe_target_t *target, const char **why)
{
    const char *reason = NULL;
    sdpa_xe_target_t t;
    if (!sdpa_xe_target_of(device, &t, &reason))
        ;
    else if (!sdpa_device_supports_subgroup(device, t.subgroup_size))
        reason = "the device lacks the fast path's sub-group size";
    else if (p->q.dtype != SDPA_DTYPE_F16 && p->q.dtype != SDPA_DTYPE_BF16)
        reason = "Q is neither f16 nor bf16";
    else if (p->q.dtype == SDPA_DTYPE_F16 && !device->has_fp16)
        reason = "the device has no fp16";
    else if (shape->head_size > XE_MAX_HEAD_SIZE)
        reason = "the head size is above 256";
    else if (p->q.strides[3] != 1 || p->dst.strides[3] != 1)
        reason = "Q or O is not contiguous along the head dimension";
    else if (sdpa_xe_unimplemented_feature(p))
        reason = sdpa_xe_unimplemented_feature(p);
    if (why)
        *why = reason;
    if (reason)
        return 0;
    /* Direct operand loads need K and V in Q's dtype, V rows contiguous
     * and K contiguous along the head dimension or the keys. */
    t.convert_kv = p->k.dtype != p->q.dtype || p->v.dtype != p->q.dtype || p->v.strides[3] != 1 ||
                   (p->k.strides[3] != 1 && p->k.strides[2] != 1);
    /* Dropout's Philox blocks next to the register tiles spill Xe-HPG's
     * 128 registers (3200 bytes at head size 64, doc/gpu-isa.md): those
     * problems take the 256-register file there, as Xe-HPC always does. */
    if (t.subgroup_size == 8 && p->dropout.enabled)
        t.large_grf = !t.emulate;
    *target = t;
    return 1;
}

void sdpa_fwd_xe_variant(const sdpa_fwd_config_t *c, const sdpa_xe_target_t *t, char *buf,
                         size_t size)
{
    snprintf(buf, size, SDPA_XE_FWD_VARIANT, c->unroll_m_kq, c->unroll_m_vs,
             t->convert_kv ? "-cvt" : "", t->emulate ? "-emu" : "");
}

/* Fails with "<source> <config> breaks the rule <rule>: <details>". */
#define BREAKS(rule, details_format, ...)                                                          \
    sdpa_fail(SDPA_ERROR_INVALID_CONFIG, "%s %s breaks the fast path's rule %s: " details_format,  \
              source, sdpa_fwd_config_format(c, text, sizeof(text)), rule, __VA_ARGS__)

sdpa_status_t sdpa_fwd_xe_config_check(const sdpa_fwd_config_t *c, const sdpa_xe_target_t *t,
                                       const sdpa_device_info_t *device, int64_t head_size,
                                       const char *source)
{
    char text[128];
    int values[SDPA_FWD_CONFIG_INTS];
    sdpa_fwd_config_to_ints(c, values);
    for (int i = 0; i < SDPA_FWD_CONFIG_INTS; i++)
        if (values[i] < 1 || values[i] > SDPA_CONFIG_VALUE_MAX)
            return BREAKS("every value is in 1..1024", "value %d is %d", i + 1, values[i]);
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
    char variant[64];
    sdpa_fwd_xe_variant(c, t, variant, sizeof(variant));
    if (!sdpa_spirv_find(variant, 0, sg))
        return BREAKS("the tile is a built variant", "no SPIR-V variant %s.0.%d", variant, sg);
    if (!device)
        return SDPA_SUCCESS;
    const int64_t n_sg = (int64_t)c->wg_m_kq * c->wg_n_kq;
    if (sg * n_sg > device->max_group_size || n_sg > device->max_group_size_xyz[1])
        return BREAKS("sub-group * wg_m_kq * wg_n_kq <= work-group limit",
                      "%d * %" PRId64 " work-items on %s (at most %" PRIu32 ")", sg, n_sg,
                      device->name, device->max_group_size);
    const int64_t bq = (int64_t)sg * c->wg_n_kq, bk = (int64_t)c->unroll_m_kq * c->wg_m_kq;
    const int64_t slm =
            SDPA_XE_FWD_SLM_BYTES(head_size, bq, bk, (int64_t)c->wg_m_kq, sg, t->convert_kv);
    if (slm > (int64_t)device->slm_bytes)
        return BREAKS("local memory <= the device's",
                      "SDPA_XE_FWD_SLM_BYTES = %" PRId64 " > %" PRIu64 " bytes on %s", slm,
                      device->slm_bytes, device->name);
    return SDPA_SUCCESS;
}

static int is_quantized(const sdpa_problem_desc_t *p)
{
    return p->k_quant.scales != SDPA_QUANT_NONE || p->k_quant.zero_points != SDPA_QUANT_NONE ||
           p->v_quant.scales != SDPA_QUANT_NONE || p->v_quant.zero_points != SDPA_QUANT_NONE;
}

/* What sdpa_fwd_xe_config_check needs besides the configuration. */
typedef struct fwd_check_ctx {
    const sdpa_xe_target_t *target;
    const sdpa_device_info_t *device;
    int64_t head_size;
} fwd_check_ctx_t;

static sdpa_status_t check_fwd(const void *config, const void *ctx, const char *source)
{
    const fwd_check_ctx_t *c = ctx;
    return sdpa_fwd_xe_config_check(config, c->target, c->device, c->head_size, source);
}

sdpa_status_t sdpa_fwd_xe_config_choose(const sdpa_problem_desc_t *problem,
                                        const sdpa_shape_t *shape, const sdpa_device_info_t *device,
                                        const sdpa_xe_target_t *target, sdpa_fwd_config_t *out,
                                        sdpa_config_source_t *source, int *use)
{
    *use = 0;
    sdpa_fwd_config_t env;
    int found;
    const char *var;
    sdpa_status_t status = sdpa_fwd_config_from_env(is_quantized(problem), &env, &found, &var);
    if (status != SDPA_SUCCESS)
        return status;
    /* The portable kernels' query; sdpa_xe_config_pick makes it the fast
     * path's. */
    sdpa_config_query_t query;
    sdpa_fwd_config_query_for(problem, shape, device, &query);
    const sdpa_xe_config_table_t table = {
            sdpa_fwd_xe_config_table, sdpa_fwd_xe_config_table_size, sizeof(sdpa_fwd_config_row_t),
            offsetof(sdpa_fwd_config_row_t, config), sizeof(sdpa_fwd_config_t)};
    const fwd_check_ctx_t ctx = {target, device, shape->head_size};
    sdpa_xe_config_pick(&env, found, var, &table, &query, target, check_fwd, &ctx, out, source,
                        use);
    return SDPA_SUCCESS;
}
