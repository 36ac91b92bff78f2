/*
 * sdpa_fwd_quant.h - reading one element of K or V as f32, dequantizing
 * integer and FP8 K/V on the fly: x = (q - zero_point) * scale, with the
 * scale and the zero point either one value for the tensor, one per K/V
 * head ([Hkv]) or one per group of head-dim elements of each token (dense
 * [B, Hkv, Sk, D / group_size]); FP8 K/V have no zero point and maybe no
 * scale. Every switch is on a specialization constant and folds when the
 * module is built.
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
    int head;              /* the K/V head (PER_HEAD entry) */
} sdpa_fwd_kv_format;

/* The types that are dequantized: integers and the 8-bit floats. */
static inline bool sdpa_fwd_is_quantized(int dt)
{
    return dt == SDPA_DT_S8 || dt == SDPA_DT_U8 || dt == SDPA_DT_S4 || dt == SDPA_DT_U4 ||
           dt == SDPA_DT_F8_E4M3 || dt == SDPA_DT_F8_E5M2;
}

/* A K or V format from its constants (which fold) and the kernel arguments. */
static inline sdpa_fwd_kv_format sdpa_fwd_kv_format_of(int dt, int scales_kind, int scales_dt,
                                                       int zp_kind, int zp_dt, int group_size,
                                                       const global void *scales,
                                                       const global void *zero_points, int d,
                                                       int head)
{
    sdpa_fwd_kv_format f;
    f.dt = dt;
    f.scales = scales;
    f.zero_points = zero_points;
    f.scales_kind = scales_kind;
    f.scales_dt = scales_dt;
    f.zp_kind = zp_kind;
    f.zp_dt = zp_dt;
    f.group_size = group_size;
    f.groups_per_token = d / group_size;
    f.head = head;
    return f;
}

/* The format of K (T = KEY) or V (T = VAL) of K/V head `head`: the
 * constants T_DT, T_SCALES, T_SCALES_DT, T_ZERO_POINTS, T_ZP_DT and
 * T_GROUP_SIZE. */
#define SDPA_FWD_KV_FORMAT(T, scales, zero_points, d, head)                                        \
    sdpa_fwd_kv_format_of(SC(T##_DT), SC(T##_SCALES), SC(T##_SCALES_DT), SC(T##_ZERO_POINTS),      \
                          SC(T##_ZP_DT), SC(T##_GROUP_SIZE), scales, zero_points, d, head)

/* The entry of a scale or zero point array of kind `kind` for `group`. */
static inline __attribute__((always_inline)) long
sdpa_fwd_quant_entry(int kind, const private sdpa_fwd_kv_format *f, long group)
{
    return kind == SDPA_QUANT_KIND_PER_GROUP ? group
           : kind == SDPA_QUANT_KIND_PER_HEAD ? (long)f->head
                                              : 0;
}

/* (q - zp) * scale for element d of token `token` (the linear index
 * (b * Hkv + h) * Sk + key). */
static inline __attribute__((always_inline)) float
sdpa_fwd_dequantize(float q, const private sdpa_fwd_kv_format *f, long token, int d)
{
    long group = token * f->groups_per_token + d / f->group_size;
    if (f->zp_kind != SDPA_QUANT_KIND_NONE)
        q -= sdpa_load(f->zero_points, sdpa_fwd_quant_entry(f->zp_kind, f, group), f->zp_dt);
    if (f->scales_kind != SDPA_QUANT_KIND_NONE)
        q *= sdpa_load(f->scales, sdpa_fwd_quant_entry(f->scales_kind, f, group), f->scales_dt);
    return q;
}

/* Element `off` of a K or V tensor as f32: element d of token `token`. */
static inline __attribute__((always_inline)) float
sdpa_fwd_kv_load(const global void *base, long off, const private sdpa_fwd_kv_format *f, long token,
                 int d)
{
    float x = sdpa_load(base, off, f->dt);
    if (sdpa_fwd_is_quantized(f->dt))
        x = sdpa_fwd_dequantize(x, f, token, d);
    return x;
}

#endif /* SDPA_SPIRV_FWD_QUANT_H */
