/*
 * sdpa_common.h - element access shared by every attention kernel: loading
 * any supported dtype as float, storing float as f32/f16/bf16, and 64-bit
 * strided offsets. The dtype argument is always a specialization constant,
 * so each switch folds to one case when the module is built.
 */
#ifndef SDPA_SPIRV_COMMON_H
#define SDPA_SPIRV_COMMON_H

#pragma OPENCL EXTENSION cl_khr_fp16 : enable

#include "kernel_abi.h"
#include "sdpa_fp8.h"
#include "spec_constants.h"

/* Offset in elements of (i0, i1, i2, i3) in a tensor with strides s0..s3.
 * 64-bit throughout: attention tensors exceed 2^31 elements. */
static inline long sdpa_offset4(long i0, long i1, long i2, long i3, long s0, long s1, long s2,
                                long s3)
{
    return i0 * s0 + i1 * s1 + i2 * s2 + i3 * s3;
}

/* bfloat16 is the high half of an f32. */
static inline float sdpa_bf16_to_f32(ushort bits)
{
    return as_float((uint)bits << 16);
}

/* Round to nearest even; NaN stays NaN (a quiet bit is forced so that
 * truncation cannot turn it into infinity). */
static inline ushort sdpa_f32_to_bf16(float value)
{
    uint bits = as_uint(value);
    if ((bits & 0x7fffffffu) > 0x7f800000u)
        return (ushort)((bits >> 16) | 0x40u);
    bits += 0x7fffu + ((bits >> 16) & 1u);
    return (ushort)(bits >> 16);
}

/* Element idx of a 4-bit tensor: byte idx / 2, low nibble for even idx. */
static inline uint sdpa_nibble(const global uchar *base, long idx)
{
    uchar byte = base[idx >> 1];
    return (idx & 1) ? (uint)(byte >> 4) : (uint)(byte & 0xf);
}

/*
 * Element idx of base (dtype dt) as float. Integer types give their integer
 * value, FP8 types their value unscaled (dequantization happens in the
 * caller). f16 goes through a plain
 * half load and conversion: vload_half is a library call that Intel's CPU
 * vectorizer executes lane by lane (8 scalar loads and conversions), while a
 * half load vectorizes into one vector load and one vcvtph2ps.
 */
static inline __attribute__((always_inline)) float sdpa_load(const global void *base, long idx,
                                                             int dt)
{
    switch (dt) {
    case SDPA_DT_F16:
        return (float)((const global half *)base)[idx];
    case SDPA_DT_BF16:
        return sdpa_bf16_to_f32(((const global ushort *)base)[idx]);
    case SDPA_DT_S8:
        return (float)((const global char *)base)[idx];
    case SDPA_DT_U8:
        return (float)((const global uchar *)base)[idx];
    case SDPA_DT_S4: {
        uint n = sdpa_nibble((const global uchar *)base, idx);
        return (float)((int)(n << 28) >> 28); /* sign-extend the nibble */
    }
    case SDPA_DT_U4:
        return (float)sdpa_nibble((const global uchar *)base, idx);
    case SDPA_DT_S32:
        return (float)((const global int *)base)[idx];
    case SDPA_DT_F8_E4M3:
        return sdpa_fp8_to_f32(((const global uchar *)base)[idx], 4);
    case SDPA_DT_F8_E5M2:
        return sdpa_fp8_to_f32(((const global uchar *)base)[idx], 5);
    default:
        return ((const global float *)base)[idx];
    }
}

/* Stores value at element idx of base (dtype dt: f32, f16 or bf16), rounding
 * to nearest even; f16 through a cast (an instruction), not vstore_half_rte
 * (a call the CPU vectorizer runs lane by lane). */
static inline __attribute__((always_inline)) void sdpa_store(global void *base, long idx, int dt,
                                                             float value)
{
    switch (dt) {
    case SDPA_DT_F16:
        ((global half *)base)[idx] = (half)value;
        break;
    case SDPA_DT_BF16:
        ((global ushort *)base)[idx] = sdpa_f32_to_bf16(value);
        break;
    default:
        ((global float *)base)[idx] = value;
        break;
    }
}

/* Rounds value to the precision of dt (f16 or bf16), as storing and loading
 * it again would. Used to emulate f16 accumulation. */
static inline float sdpa_round_to(float value, int dt)
{
    switch (dt) {
    case SDPA_DT_F16:
        return (float)convert_half_rte(value);
    case SDPA_DT_BF16:
        return sdpa_bf16_to_f32(sdpa_f32_to_bf16(value));
    default:
        return value;
    }
}

#endif /* SDPA_SPIRV_COMMON_H */
