/*
 * sdpa_fwd_quant.h - reading one element of K or V as f32, dequantizing
 * integer K/V on the fly: x = (q - zero_point) * scale, with the scale and the
 * zero point either one value for the tensor or one per group of head-dim
 * elements of each token (dense [B, Hkv, Sk, D / group_size]). Every switch
 * is on a specialization constant and folds when the module is built.
 */
#ifndef SDPA_SPIRV_FWD_QUANT_H
#define SDPA_SPIRV_FWD_QUANT_H

#include "sdpa_common.h"

/* How one of K or V is stored: its dtype and, for integer types, where its
 * scales and zero points live. */
typedef struct sdpa_fwd_kv_format {
    int dt; /* K or V dtype */
    const global void *scales;
    const global void *zero_points;
    int scales_kind; /* SDPA_QUANT_KIND_* */
    int scales_dt;
    int zp_kind;
    int zp_dt;
    int group_size;        /* head-dim elements per group (power of two) */
    long groups_per_token; /* D / group_size: stride of a token in the scales */
} sdpa_fwd_kv_format;

static inline bool sdpa_fwd_is_integer(int dt)
{
    return dt == SDPA_DT_S8 || dt == SDPA_DT_U8 || dt == SDPA_DT_S4 || dt == SDPA_DT_U4;
}

/* K's format, from the specialization constants and the kernel arguments. */
static inline sdpa_fwd_kv_format sdpa_fwd_key_format(const global void *scales,
                                                     const global void *zero_points, int d)
{
    sdpa_fwd_kv_format f;
    f.dt = SC(KEY_DT);
    f.scales = scales;
    f.zero_points = zero_points;
    f.scales_kind = SC(KEY_SCALES);
    f.scales_dt = SC(KEY_SCALES_DT);
    f.zp_kind = SC(KEY_ZERO_POINTS);
    f.zp_dt = SC(KEY_ZP_DT);
    f.group_size = SC(KEY_GROUP_SIZE);
    f.groups_per_token = d / SC(KEY_GROUP_SIZE);
    return f;
}

/* V's format. */
static inline sdpa_fwd_kv_format sdpa_fwd_value_format(const global void *scales,
                                                       const global void *zero_points, int d)
{
    sdpa_fwd_kv_format f;
    f.dt = SC(VAL_DT);
    f.scales = scales;
    f.zero_points = zero_points;
    f.scales_kind = SC(VAL_SCALES);
    f.scales_dt = SC(VAL_SCALES_DT);
    f.zp_kind = SC(VAL_ZERO_POINTS);
    f.zp_dt = SC(VAL_ZP_DT);
    f.group_size = SC(VAL_GROUP_SIZE);
    f.groups_per_token = d / SC(VAL_GROUP_SIZE);
    return f;
}

/* (q - zp) * scale for element d of token `token` (the linear index
 * (b * Hkv + h) * Sk + key). */
static inline __attribute__((always_inline)) float
sdpa_fwd_dequantize(float q, const private sdpa_fwd_kv_format *f, long token, int d)
{
    long group = token * f->groups_per_token + d / f->group_size;
    if (f->zp_kind != SDPA_QUANT_KIND_NONE)
        q -= sdpa_load(f->zero_points, f->zp_kind == SDPA_QUANT_KIND_PER_GROUP ? group : 0,
                           f->zp_dt);
    if (f->scales_kind != SDPA_QUANT_KIND_NONE)
        q *= sdpa_load(f->scales, f->scales_kind == SDPA_QUANT_KIND_PER_GROUP ? group : 0,
                           f->scales_dt);
    return q;
}

/* Element `off` of a K or V tensor as f32: element d of token `token`. */
static inline __attribute__((always_inline)) float
sdpa_fwd_kv_load(const global void *base, long off, const private sdpa_fwd_kv_format *f, long token,
                 int d)
{
    float x = sdpa_load(base, off, f->dt);
    if (sdpa_fwd_is_integer(f->dt))
        x = sdpa_fwd_dequantize(x, f, token, d);
    return x;
}

#endif /* SDPA_SPIRV_FWD_QUANT_H */
