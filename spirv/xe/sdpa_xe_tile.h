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

/* The loops over a register tile's blocks: unrolled on the GPU, where every
 * block must be a register (a block indexed at run time would live in
 * memory); left loops in the emulated variant, where memory is as good and
 * the unrolled emulation of every product would take the CPU compiler
 * minutes to build. Only for trip counts clang knows: a loop whose count
 * is a specialization constant clang cannot unroll (it warns, "loop not
 * unrolled"); IGC unrolls those once specialized, with or without the
 * pragma (same ISA). */
#ifdef SDPA_XE_EMULATE
#define SDPA_XE_TILE_LOOP
#else
#define SDPA_XE_TILE_LOOP _Pragma("unroll")
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
        return intel_sub_group_block_read(
                (const global uint *)((const global ushort *)base + row + c0));
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
static inline __attribute__((always_inline)) uint8 sdpa_xe_b_from_row(const global ushort *p, int n)
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
 * rounded to the operand type (the P of 16 keys, for O^T = V^T P). One
 * vector conversion, which the GPU compiler writes straight into the packed
 * halves (element by element, the shifts and ors cost 48 instructions). */
static inline __attribute__((always_inline)) int8 sdpa_xe_pack_b(float8 lo, float8 hi)
{
    const float16 x = (float16)(lo, hi);
    if (SC(QRY_DT) == SDPA_DT_BF16)
        return as_int8(__builtin_IB_ftobf_16(x));
    return as_int8(convert_half16_rte(x));
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

/* The A operand whose row m lane l holds in word m: the low 16 bits with
 * 16 lanes, both halves (two K elements) with 8. */
static inline __attribute__((always_inline)) sdpa_xe_a8 sdpa_xe_a_of_words(uint8 comp)
{
#if SUBGROUP_SIZE == 16
    return as_short8(convert_ushort8(comp));
#else
    return as_int8(comp);
#endif
}

/*
 * Operands from a tile of 16-bit operand bits in local memory, row-major
 * with `ld` elements per row (ld even, so that 32-bit reads stay aligned).
 * Named after how the operand's K dimension (the products' reduction) runs
 * in the tile:
 *
 *   a_rows: A with its 8 rows (components) on tile rows r0 .. r0 + 7 and K
 *           along the columns c0 .. c0 + 15 (K rows for S^T = K Q^T);
 *   a_cols: A with its rows on tile columns c0 .. c0 + 7 and K along the
 *           tile rows r0 .. (V or K rows read as V^T or K^T); rows past
 *           `k_rows` of the K extent read as zero;
 *   b_cols: B with K along the columns c0 .. c0 + 15 and N on the rows
 *           r0 + lane (Q^T and dO^T: one row per lane, 32 contiguous bytes);
 *   b_rows: B with K along the rows r0 .. r0 + 15 (r0 even) and N on the
 *           columns c0 + lane (dO and Q as the B of dV and dK), from the
 *           tile's pair layout (sdpa_xe_stage_tile's `pairs`): rows 2p and
 *           2p + 1 interleaved, so that each component is one 32-bit read
 *           (sixteen 16-bit reads would each take a whole register).
 */
static inline __attribute__((always_inline)) sdpa_xe_a8 sdpa_xe_a_rows(const local ushort *tile,
                                                                       int ld, int r0, int c0)
{
    const int lane = get_sub_group_local_id();
    uint8 comp;
#pragma unroll
    for (int m = 0; m < 8; m++) {
        const local ushort *row = tile + (r0 + m) * ld + c0;
        SDPA_XE_AT(comp, uint, m) =
                SUBGROUP_SIZE == 16 ? (uint)row[lane] : ((const local uint *)row)[lane];
    }
    return sdpa_xe_a_of_words(comp);
}

static inline __attribute__((always_inline)) sdpa_xe_a8
sdpa_xe_a_cols(const local ushort *tile, int ld, int r0, int k_rows, int c0)
{
    const int lane = get_sub_group_local_id();
    const int k = SUBGROUP_SIZE == 16 ? lane : 2 * lane; /* this lane's (first) K index */
    const ushort8 zero = 0;
    const ushort8 run0 = k < k_rows ? vload8(0, tile + (r0 + k) * ld + c0) : zero;
    const ushort8 run1 =
            SUBGROUP_SIZE == 8 && k + 1 < k_rows ? vload8(0, tile + (r0 + k + 1) * ld + c0) : zero;
    return sdpa_xe_a_from_runs(run0, run1);
}

static inline __attribute__((always_inline)) int8 sdpa_xe_b_cols(const local ushort *tile, int ld,
                                                                 int r0, int c0)
{
    const int lane = get_sub_group_local_id();
    return as_int8(vload8(0, (const local uint *)(tile + (r0 + lane) * ld + c0)));
}

static inline __attribute__((always_inline)) int8 sdpa_xe_b_rows(const local ushort *pairs, int ld,
                                                                 int r0, int c0)
{
    const local uint *p = (const local uint *)pairs + (r0 / 2) * ld + c0 + get_sub_group_local_id();
    uint8 w;
#pragma unroll
    for (int j = 0; j < 8; j++)
        SDPA_XE_AT(w, uint, j) = p[j * ld];
    return as_int8(w);
}

/*
 * An A operand from accumulators in the products' C layout: rows m of the
 * operand are rows m of the accumulators (components), and its K dimension
 * is their columns (lanes), rounded to the operand type: how P^T and dS^T
 * (keys by queries) become the A of dV = P^T dO and dK = dS^T Q. With 16
 * lanes the 16 columns are one accumulator (lo); with 8 lanes they are two
 * (lo: columns 0-7, hi: 8-15), and lane i needs columns 2i and 2i + 1:
 * four shuffles per row.
 */
static inline __attribute__((always_inline)) sdpa_xe_a8 sdpa_xe_a_from_c(float8 lo, float8 hi)
{
#if SUBGROUP_SIZE == 16
    (void)hi;
    if (SC(QRY_DT) == SDPA_DT_BF16)
        return __builtin_IB_ftobf_8(lo);
    return as_short8(convert_half8_rte(lo));
#else
    const uint lane = get_sub_group_local_id();
    const uint src0 = (2 * lane) & 7, src1 = (2 * lane + 1) & 7;
    const bool upper = lane >= 4;
    uint8 w;
#pragma unroll
    for (int m = 0; m < 8; m++) {
        const float l0 = intel_sub_group_shuffle(SDPA_XE_AT(lo, float, m), src0);
        const float l1 = intel_sub_group_shuffle(SDPA_XE_AT(lo, float, m), src1);
        const float h0 = intel_sub_group_shuffle(SDPA_XE_AT(hi, float, m), src0);
        const float h1 = intel_sub_group_shuffle(SDPA_XE_AT(hi, float, m), src1);
        SDPA_XE_AT(w, uint, m) = (uint)sdpa_xe_to_operand(upper ? h0 : l0) |
                                 (uint)sdpa_xe_to_operand(upper ? h1 : l1) << 16;
    }
    return as_int8(w);
#endif
}

/* Copies the [rows][cols] block at src + off (strides r_stride, c_stride,
 * dtype as sdpa_xe_kv_bits sees it through f) into tile (row-major, ld),
 * in operand bits; rows past rows_valid and columns past cols_valid (up to
 * cols) become zero. pairs, if not NULL, receives the same elements in the
 * pair layout sdpa_xe_b_rows reads (rows even; element (r, c) at
 * ((r / 2) * ld + c) * 2 + r % 2). All n_sg sub-groups of the work-group
 * (this one is sg_id) share the rows; token0 + row is the row's token for
 * per-group scales. */
static inline __attribute__((always_inline)) void
sdpa_xe_stage_tile(local ushort *tile, local ushort *pairs, int ld, const global void *src,
                   long off, long r_stride, long c_stride, const private sdpa_fwd_kv_format *f,
                   long token0, int rows, int rows_valid, int cols, int cols_valid, int sg_id,
                   int n_sg)
{
    const int lane = get_sub_group_local_id();
    for (int r = sg_id; r < rows; r += n_sg) {
        const bool valid_row = r < rows_valid;
        const int r_read = valid_row ? r : 0;
        for (int c = lane; c < cols; c += SUBGROUP_SIZE) {
            const ushort bits =
                    valid_row && c < cols_valid
                            ? sdpa_xe_kv_bits(src, off + r_read * r_stride + c * c_stride, f,
                                              token0 + r_read, c)
                            : 0;
            tile[r * ld + c] = bits;
            if (pairs)
                pairs[((r >> 1) * ld + c) * 2 + (r & 1)] = bits;
        }
    }
}

/*
 * A 2D block-load surface over a row-major matrix of 16-bit elements (K's
 * rows of one head): `rows` rows of `cols` elements, `row_stride` elements
 * apart, from element `off` of `base`. The hardware wants the surface's base
 * on 64 bytes: the base is rounded down to 64 bytes and the difference
 * becomes x0, the first column, and widens the surface (x0's bytes must then
 * be a multiple of 4: the rows 4-byte aligned). Computed once per
 * work-group; every load then passes 32-bit coordinates.
 */
typedef struct {
    long base;     /* 64-byte aligned address of the surface */
    int width_m1;  /* bytes, minus one */
    int height_m1; /* rows, minus one */
    int pitch_m1;  /* bytes, minus one */
    int x0;        /* column (element) of the matrix's column 0 */
} sdpa_xe_surface2d;

/* Describes the surface in *s and says whether the hardware accepts it (the
 * constraints in sdpa_xe_intel.h); if not, the caller must not issue a 2D
 * load on it. */
static inline __attribute__((always_inline)) bool sdpa_xe_surface2d_of(const global void *base,
                                                                       long off, int cols, int rows,
                                                                       long row_stride,
                                                                       private sdpa_xe_surface2d *s)
{
    const ulong addr = (ulong)((const global ushort *)base + off);
    const long lead = (long)(addr & 63);
    const long width = lead + 2L * cols, pitch = 2L * row_stride;
    const long limit = 1L << 24;
    s->base = (long)(addr - (ulong)lead);
    s->x0 = (int)(lead / 2);
    s->width_m1 = (int)(width <= limit ? width : limit) - 1;
    s->height_m1 = rows - 1;
    s->pitch_m1 = (int)(pitch <= limit ? pitch : limit) - 1;
    return (lead & 3) == 0 && cols % 2 == 0 && width >= 64 && width <= limit && rows >= 1 &&
           rows <= limit && pitch >= width && pitch % 16 == 0 && pitch <= limit;
}

#if SUBGROUP_SIZE == 16
/* The A operand of 8 rows (rows y .. y + 7 of the surface along the
 * components, columns c0 .. c0 + 15 of the matrix along the lanes; zero
 * outside the surface): one 2D block load. */
static inline __attribute__((always_inline)) short8
sdpa_xe_block2d_a8(const private sdpa_xe_surface2d *s, int y, int c0)
{
    return as_short8(__builtin_IB_subgroup_block_read_flat_u16_m8k16v1(
            s->base, s->width_m1, s->height_m1, s->pitch_m1, (int2)(s->x0 + c0, y)));
}

/* The B operand of 16 rows (K: rows y .. y + 15 of the surface, in pairs
 * along the components) by 16 columns (N: columns c0 .. c0 + 15 of the
 * matrix along the lanes), zero outside the surface: one 2D block load with
 * the VNNI transform. */
static inline __attribute__((always_inline)) int8
sdpa_xe_block2d_b(const private sdpa_xe_surface2d *s, int y, int c0)
{
    return as_int8(__builtin_IB_subgroup_block_read_flat_transform_u16_k16(
            s->base, s->width_m1, s->height_m1, s->pitch_m1, (int2)(s->x0 + c0, y)));
}
#endif

#endif /* SDPA_SPIRV_XE_TILE_H */
