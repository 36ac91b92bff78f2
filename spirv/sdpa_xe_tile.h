/*
 * sdpa_xe_tile.h - register tiles of the fast-path kernels: the matrix
 * product in the problem's operand type, and loading each operand from
 * global memory straight into the layout cl_intel_subgroup_matrix_multiply_
 * accumulate wants (see sdpa_xe_intel.h for that layout):
 *
 *   A from rows whose 16-element chunk runs along the lanes (K rows for
 *     S^T = K Q^T): block reads when the rows are 4-byte aligned, per-lane
 *     loads otherwise; from a transposed K (keys contiguous) each lane reads
 *     its head-dim row of 8 keys;
 *   A from rows that run along the components (V rows for O^T = V^T P):
 *     each lane reads 8 contiguous elements of its key's row;
 *   B from 16 contiguous elements per lane (a Q row, P): its 8 words.
 *
 * With 16 lanes an A element is one 16-bit value per lane; with 8 lanes it
 * is the pair (k = 2 lane, 2 lane + 1) in one 32-bit word, low half first.
 * Every load of a 16-bit operand goes through the raw bits (ushort): f16 and
 * bf16 are moved, not converted. Variants built with SDPA_XE_CONVERT_KV
 * (the "cvt" field of the name) also take K and V in another type: integer
 * K/V are dequantized to f32, then every element is rounded to Q's type
 * (QRY_DT), the type both products run in. That path costs code at every
 * operand load (a switch per dtype, scale and zero point before the
 * specialization constants fold), so the other variants leave it out and
 * the host only gives them K and V in Q's type.
 */
#ifndef SDPA_SPIRV_XE_TILE_H
#define SDPA_SPIRV_XE_TILE_H

#include "sdpa_common.h"
#include "sdpa_fwd_quant.h"
#include "sdpa_uniform.h"
#include "sdpa_xe_intel.h"

#if SUBGROUP_SIZE == 16
typedef short8 sdpa_xe_a8; /* A operand with 8 rows: one 16-bit element per lane and row */
#elif SUBGROUP_SIZE == 8
typedef int8 sdpa_xe_a8; /* A operand with 8 rows: two 16-bit elements per lane and row */
#else
#error "the fast path exists for sub-groups of 8 and 16"
#endif

/* Component m of a vector held in private memory (m a constant after
 * unrolling, so the access is a register). */
#define SDPA_XE_AT(vec, elem_t, m) (((private elem_t *)&(vec))[m])

/* acc + a b in the operand type of the problem (Q's: f16 or bf16). */
static inline __attribute__((always_inline)) float8 sdpa_xe_mad(sdpa_xe_a8 a, int8 b, float8 acc)
{
    if (SC(QRY_DT) == SDPA_DT_BF16)
        return intel_sub_group_bf16_bf16_matrix_mad_k16(a, b, acc);
    return intel_sub_group_f16_f16_matrix_mad_k16(a, b, acc);
}

/* x rounded to half precision, as an f16 accumulator would hold it (f16
 * accumulation: KQ_F16_ACC, VS_F16_ACC). */
static inline float8 sdpa_xe_round_half8(float8 x)
{
    return convert_float8(convert_half8_rte(x));
}

/* The 16 bits of f32 value x in the operand type (round to nearest even). */
static inline ushort sdpa_xe_to_operand(float x)
{
    if (SC(QRY_DT) == SDPA_DT_BF16)
        return sdpa_f32_to_bf16(x);
    return as_ushort(convert_half_rte(x));
}

/* Whether a K or V tensor is read as raw operand bits (its dtype is Q's;
 * always, in variants without SDPA_XE_CONVERT_KV). */
static inline bool sdpa_xe_kv_raw(const private sdpa_fwd_kv_format *f)
{
#ifdef SDPA_XE_CONVERT_KV
    return f->dt == SC(QRY_DT);
#else
    (void)f;
    return true;
#endif
}

/* The operand bits of element idx of a K or V tensor that is not in the
 * operand type (format f, element d of token `token`): its value,
 * dequantized if integer, rounded to Q's type. */
static inline __attribute__((always_inline)) ushort
sdpa_xe_kv_bits_converted(const global void *base, long idx, const private sdpa_fwd_kv_format *f,
                          long token, int d)
{
#ifdef SDPA_XE_CONVERT_KV
    return sdpa_xe_to_operand(sdpa_fwd_kv_load(base, idx, f, token, d));
#else
    (void)base, (void)idx, (void)f, (void)token, (void)d;
    return 0;
#endif
}

/* The operand bits of element idx of a K or V tensor: the stored bits when
 * the tensor is in the operand type, else sdpa_xe_kv_bits_converted. */
static inline __attribute__((always_inline)) ushort
sdpa_xe_kv_bits(const global void *base, long idx, const private sdpa_fwd_kv_format *f, long token,
                int d)
{
    if (sdpa_xe_kv_raw(f))
        return ((const global ushort *)base)[idx];
    return sdpa_xe_kv_bits_converted(base, idx, f, token, d);
}

/*
 * Row m of an A operand from a row whose head-dim chunk runs along the
 * lanes: row + c0 .. c0 + 15 (elements), valid up to element `n` of the row
 * (zeros after it). `block`: the row pointer is 4-byte aligned and the chunk
 * whole, so one block read serves the sub-group. Returns this lane's
 * component (16 lanes: element c0 + lane; 8 lanes: elements c0 + 2 lane and
 * c0 + 2 lane + 1, low half first).
 */
static inline __attribute__((always_inline)) uint
sdpa_xe_chunk_element(const global void *base, long row, int c0, int n,
                      const private sdpa_fwd_kv_format *f, long token, bool block)
{
    const int lane = get_sub_group_local_id();
    if (SUBGROUP_SIZE == 16) {
        if (block)
            return intel_sub_group_block_read_us((const global ushort *)base + row + c0);
        const int e = c0 + lane;
        return e < n ? sdpa_xe_kv_bits(base, row + e, f, token, e) : 0;
    }
    if (block)
        return intel_sub_group_block_read((const global uint *)((const global ushort *)base + row +
                                                                c0));
    const int e = c0 + 2 * lane;
    const uint lo = e < n ? sdpa_xe_kv_bits(base, row + e, f, token, e) : 0;
    const uint hi = e + 1 < n ? sdpa_xe_kv_bits(base, row + e + 1, f, token, e + 1) : 0;
    return lo | hi << 16;
}

/*
 * This lane's 8 components of a B operand from 16 contiguous 16-bit
 * elements p[0..15] (the first `n` valid, zeros after): component j holds
 * elements 2j (low half) and 2j + 1.
 */
static inline __attribute__((always_inline)) uint8 sdpa_xe_b_from_row(const global ushort *p,
                                                                      int n)
{
    if (n >= 16)
        return as_uint8(vload16(0, p));
    /* Word by word into named scalars (a private array written under
     * branches is not promoted to registers by the GPU compiler). */
#define SDPA_XE_B_WORD(j)                                                                          \
    ((2 * (j) < n ? (uint)p[2 * (j)] : 0u) | (2 * (j) + 1 < n ? (uint)p[2 * (j) + 1] : 0u) << 16)
    return (uint8)(SDPA_XE_B_WORD(0), SDPA_XE_B_WORD(1), SDPA_XE_B_WORD(2), SDPA_XE_B_WORD(3),
                   SDPA_XE_B_WORD(4), SDPA_XE_B_WORD(5), SDPA_XE_B_WORD(6), SDPA_XE_B_WORD(7));
#undef SDPA_XE_B_WORD
}

/* Packs a B operand from two 8-row accumulators: component j < 4 holds rows
 * 2j and 2j + 1 of lo, component j >= 4 rows 2j - 8 and 2j - 7 of hi, each
 * rounded to the operand type (the P of 16 keys, for O^T = V^T P). */
static inline __attribute__((always_inline)) int8 sdpa_xe_pack_b(float8 lo, float8 hi)
{
    uint8 w;
#pragma unroll
    for (int j = 0; j < 4; j++) {
        SDPA_XE_AT(w, uint, j) = (uint)sdpa_xe_to_operand(SDPA_XE_AT(lo, float, 2 * j)) |
                                 (uint)sdpa_xe_to_operand(SDPA_XE_AT(lo, float, 2 * j + 1)) << 16;
        SDPA_XE_AT(w, uint, j + 4) =
                (uint)sdpa_xe_to_operand(SDPA_XE_AT(hi, float, 2 * j)) |
                (uint)sdpa_xe_to_operand(SDPA_XE_AT(hi, float, 2 * j + 1)) << 16;
    }
    return as_int8(w);
}

/*
 * 8 elements of a row that runs along the components: row + c0 .. c0 + 7,
 * valid up to element n (zeros after), as operand bits. A whole run of Q's
 * type is one 16-byte load when `aligned` (the run starts on 4 bytes: the
 * GPU then loads 32-bit words instead of 16-bit elements), else eight
 * 16-bit loads; the rest (quantized rows, the tail of the head dimension)
 * goes element by element.
 */
static inline __attribute__((always_inline)) ushort8
sdpa_xe_row8(const global void *base, long row, int c0, int n, const private sdpa_fwd_kv_format *f,
             long token, bool aligned)
{
    const global ushort *p = (const global ushort *)base + row + c0;
    if (sdpa_xe_kv_raw(f) && c0 + 8 <= n)
        return aligned ? as_ushort8(vload4(0, (const global uint *)p)) : vload8(0, p);
    ushort8 r;
#pragma unroll
    for (int i = 0; i < 8; i++)
        SDPA_XE_AT(r, ushort, i) =
                c0 + i < n ? sdpa_xe_kv_bits(base, row + c0 + i, f, token, c0 + i) : 0;
    return r;
}

/* The A operand of 8 rows from two 8-element runs per lane (8 lanes: the
 * pair of rows 2 lane and 2 lane + 1 interleaved, low half first). */
static inline sdpa_xe_a8 sdpa_xe_a_from_runs(ushort8 even, ushort8 odd)
{
#if SUBGROUP_SIZE == 16
    (void)odd;
    return as_short8(even);
#else
    return as_int8(convert_uint8(even) | convert_uint8(odd) << 16);
#endif
}

#endif /* SDPA_SPIRV_XE_TILE_H */
