/*
 * sdpa_xe_fwd.cl - the forward fast path for Intel GPUs with matrix engines:
 * flash attention (O = softmax(scale * Q K^T + mask) V, never forming the
 * Sq x Sk matrix) with both products on cl_intel_subgroup_matrix_multiply_
 * accumulate and every tile a sub-group owns in registers. The host
 * contract (variants, tiles, geometry, local memory, arguments) is in
 * kernel_abi_xe.h; the argument list that of the portable forward,
 * sdpa_fwd_args.def.
 *
 * Sub-group (m, n) of a work-group owns query block n (SUBGROUP_SIZE
 * queries, one per lane) and, of each key tile of BK = SDPA_XE_KEYS * DSPLIT
 * keys, the SDPA_XE_KEYS keys from m * SDPA_XE_KEYS on; of O, the head-dim
 * rows from m * SDPA_XE_DSUB on. Per key tile:
 *
 *   1. S^T = K Q^T for its keys: for each 16-element step of the head
 *      dimension, Q^T's operand from local memory (staged once), K's rows
 *      as the A operand (2D block loads with 16 lanes where the hardware
 *      takes K's layout, else block reads per row), one product per 8 keys;
 *   2. scale (log2 units) and mask S in registers, the tile maximum of each
 *      query over the sub-group's keys (and, with DSPLIT > 1, over the other
 *      sub-groups of the block through local memory);
 *   3. online softmax: the running maximum, P = exp2(S - max), the running
 *      sum, dropout, and O rescaled by alpha = exp2(max_old - max_new): each
 *      query's softmax is one lane's arithmetic;
 *   4. with 16 lanes (and K, V in Q's type) O += P V for its head-dim
 *      columns, V as the B operand (2D block loads, VNNI transform), P as
 *      the A operand from local memory (XE_O_BY_QUERY below); otherwise
 *      O^T += V^T P for its head-dim rows over the whole key tile: P is
 *      packed from S's registers into the B operand (its layout is S's);
 *      with DSPLIT > 1 it is published to and read from local memory, and
 *      so it is with sub-groups of 8, whose 128 registers cannot hold the
 *      packing next to the products (the detour keeps the GPU compiler from
 *      interleaving the two). V^T's A operand is per-lane loads of V rows.
 *
 * At the end the partial sums of the DSPLIT sub-groups are added, O is
 * divided by the sum (times 1 / (1 - p) with dropout) and stored; training
 * also writes the log-sum-exp. The numerics differ from the portable
 * kernel's in one respect: P is rounded to Q's type (f16 or bf16) before
 * the second product, as the matrix engine takes it.
 *
 * Built per sub-group size and tile (SDPA_XE_KEYS, SDPA_XE_DSUB), natively
 * for the GPU and with -DSDPA_XE_EMULATE for the CPU device.
 */
#ifndef SDPA_XE_EMULATE
/* A GPU has a native exp2; the CPU device is faster with the polynomial. */
#define SDPA_FWD_LIBRARY_EXP2
#endif

#include "kernel_abi_xe.h"
#include "sdpa_common.h"
#include "sdpa_fwd_dropout.h"
#include "sdpa_fwd_quant.h"
#include "sdpa_fwd_rows.h"
#include "sdpa_fwd_softmax.h"
#include "sdpa_scores.h"
#include "sdpa_philox.h"
#include "sdpa_uniform.h"
#include "sdpa_xe_intel.h"
#include "sdpa_xe_local_block.h"
#include "sdpa_xe_tile.h"

#if !defined(SDPA_XE_KEYS) || SDPA_XE_KEYS % 16 != 0 || SDPA_XE_KEYS > 32
#error "SDPA_XE_KEYS (keys per sub-group tile) must be 16 or 32 (dropout keeps one bit per key)"
#endif
#if !defined(SDPA_XE_DSUB) || SDPA_XE_DSUB % 8 != 0
#error "SDPA_XE_DSUB (head-dim rows of O per sub-group) must be a multiple of 8"
#endif

#define XE_S_BLOCKS (SDPA_XE_KEYS / 8) /* 8-key row blocks of S^T */
#define XE_P_CHUNKS (SDPA_XE_KEYS / 16) /* 16-key chunks of P (the products' K) */
#define XE_O_BLOCKS (SDPA_XE_DSUB / 8) /* 8-row blocks of O^T (or of O) */

#include "sdpa_xe_hpg_load.h"

/*
 * Sub-groups of 16 without conversion compute the second product the other
 * way round, O = P V: V is the B operand, which a 2D block load with the
 * VNNI transform delivers ready to use (16 keys by 16 head-dim columns per
 * load), where V^T as an A operand took a gather per lane and 8 moves per
 * product to transpose it. P becomes the A operand: each lane stores its
 * query's row of P (S^T's components, packed as for the B operand) in local
 * memory, and a block read of 8 query rows is an A operand. O's accumulators then hold 8
 * queries (components) by 16 head-dim columns (lanes): o[h * XE_O_DCOLS + e]
 * is queries 8h .. 8h + 7 of the block by columns o_d0 + 16e .. + 15, and
 * each query's alpha and 1 / sum are broadcast from its lane.
 */
#if SUBGROUP_SIZE == 16 && !defined(SDPA_XE_CONVERT_KV)
#define XE_O_BY_QUERY 1
#define XE_O_DCOLS (SDPA_XE_DSUB / 16) /* 16-column blocks of O per query half */
#if SDPA_XE_DSUB % 16 != 0
#error "O = P V takes SDPA_XE_DSUB in multiples of 16"
#endif
#else
#define XE_O_BY_QUERY 0
#endif

/* Ways of running the key loop (see the kernel): with O = P V, one where K
 * and V both take 2D block loads and one for anything else; on Xe-HPG
 * (sub-groups of 8, K and V in Q's type), one where both are staged in
 * local memory and one for anything else. */
#if SUBGROUP_SIZE == 8 && !defined(SDPA_XE_CONVERT_KV)
#define XE_HPG_WAYS 1
#else
#define XE_HPG_WAYS 0
#endif
#define XE_KV_WAYS (XE_O_BY_QUERY || XE_HPG_WAYS ? 2 : 1)

/* The A operand of S^T = K Q^T: keys kb .. kb + 7 (rows, clamped to the last
 * key: the scores of keys past the end are masked) by head-dim elements
 * c0 .. c0 + 15 (zero past the head size). */
static inline __attribute__((always_inline)) sdpa_xe_a8
sdpa_xe_fwd_k_operand(const global void *K, long k_head, long ks2, long ks3, int kb, int c0, int sk,
                      int d, const private sdpa_fwd_kv_format *f, long token0, bool k_block)
{
    const int lane = get_sub_group_local_id();
    if (SC(TRANSPOSE_K)) {
        /* Keys are contiguous: each lane reads 8 keys of its head-dim row(s). */
        const int e = c0 + (SUBGROUP_SIZE == 16 ? lane : 2 * lane);
        const ushort8 zero = 0;
        const ushort8 r0 =
                e < d ? sdpa_xe_row8(K, k_head + e * ks3, kb, sk, f, token0, false) : zero;
#if SUBGROUP_SIZE == 16
        return sdpa_xe_a_from_runs(r0, zero);
#else
        const ushort8 r1 =
                e + 1 < d ? sdpa_xe_row8(K, k_head + (e + 1) * ks3, kb, sk, f, token0, false)
                          : zero;
        return sdpa_xe_a_from_runs(r0, r1);
#endif
    }
    const bool block = k_block && c0 + 16 <= d;
    uint8 comp;
#pragma unroll
    for (int m = 0; m < 8; m++) {
        const int key = sdpa_imin(kb + m, sk - 1);
        SDPA_XE_AT(comp, uint, m) =
                sdpa_xe_chunk_element(K, k_head + key * ks2, c0, d, f, token0 + key, block);
    }
    return sdpa_xe_a_of_words(comp);
}

/* The A operand of O^T = V^T P: head-dim rows d0 .. d0 + 7 (zero past d) by
 * keys kbase .. kbase + 15 along the lanes (clamped to the last key: P is 0
 * past the end). */
static inline __attribute__((always_inline)) sdpa_xe_a8
sdpa_xe_fwd_v_operand(const global void *V, long v_head, long vs2, int kbase, int d0, int sk,
                      int d, const private sdpa_fwd_kv_format *f, long token0, bool v_aligned)
{
    const int lane = get_sub_group_local_id();
#if SUBGROUP_SIZE == 16
    const int key = sdpa_imin(kbase + lane, sk - 1);
    return sdpa_xe_a_from_runs(
            sdpa_xe_row8(V, v_head + key * vs2, d0, d, f, token0 + key, v_aligned), 0);
#else
    const int k0 = sdpa_imin(kbase + 2 * lane, sk - 1), k1 = sdpa_imin(kbase + 2 * lane + 1, sk - 1);
    return sdpa_xe_a_from_runs(
            sdpa_xe_row8(V, v_head + k0 * vs2, d0, d, f, token0 + k0, v_aligned),
            sdpa_xe_row8(V, v_head + k1 * vs2, d0, d, f, token0 + k1, v_aligned));
#endif
}

#if SUBGROUP_SIZE == 16
/*
 * K's surface for the sub-group's 8-key block from key `r` of each tile
 * (XE_KV_SURF_PER_BLOCK): the base advanced to the block's first key, so that
 * every block's loads take y = k0, the tile's first key, and x = x0 + c0.
 * Xe-HPC's 2D loads carry their coordinates in the payload register: with
 * one surface the compiler rewrites y (a copy of the payload, and the
 * workaround moves of its reuse) before every load; with one per block, a
 * payload of its own takes y once per tile and x once per step. A block
 * that starts past the last key starts at `last8` (the last key's block)
 * instead: its scores are masked on every tile, and its surface stays
 * inside K. The base stays on 64 bytes: 8 rows of a pitch that is a
 * multiple of 16 bytes are 128.
 */
static inline __attribute__((always_inline)) sdpa_xe_surface2d
sdpa_xe_fwd_k_block_surface(const private sdpa_xe_surface2d *k_surf, int r, int last8)
{
    const int r0 = sdpa_imin(r, last8);
    sdpa_xe_surface2d b = *k_surf;
    b.base += (long)r0 * (k_surf->pitch_m1 + 1);
    b.height_m1 -= r0;
    return b;
}

/* The surfaces of the sub-group's XE_S_BLOCKS 8-key blocks from key r0. */
static inline __attribute__((always_inline)) void
sdpa_xe_fwd_k_block_surfaces(private sdpa_xe_surface2d *kb_surf,
                             const private sdpa_xe_surface2d *k_surf, int r0, int sk)
{
SDPA_XE_TILE_LOOP
    for (int b = 0; b < XE_S_BLOCKS; b++)
        kb_surf[b] = sdpa_xe_fwd_k_block_surface(k_surf, r0 + 8 * b, (sk - 1) & ~7);
}

/*
 * Head-dim step c of S^T = K Q^T (from zero if `first`) for the sub-group's
 * keys from key0: K's operands by 2D loads on k_surf (or, with
 * XE_KV_SURF_PER_BLOCK, on block b's surface kb_surf[b]), Q^T's from local
 * memory (q_ops). All the step's K operands are loaded before its first
 * product, to registers of their own, instead of each beside its product,
 * waiting for the product before to release the same registers; not in
 * the training forward with dropout, which has not the registers for it on
 * Xe3 (IGC 2.40 spills 192 bytes at head size 128, 384 at 256).
 */
static inline __attribute__((always_inline)) short8
sdpa_xe_fwd_k_2d(const private sdpa_xe_surface2d *k_surf, const private sdpa_xe_surface2d *kb_surf,
                 int k0, int key0, int b, int c0)
{
    if (SC(XE_KV_SURF_PER_BLOCK))
        return sdpa_xe_block2d_a8(&kb_surf[b], k0, c0);
    return sdpa_xe_block2d_a8(k_surf, key0 + 8 * b, c0);
}

static inline __attribute__((always_inline)) void
sdpa_xe_fwd_kq_2d(private float8 *s, const private sdpa_xe_surface2d *k_surf,
                  const private sdpa_xe_surface2d *kb_surf, int k0, int key0, int c,
                  const local uint *q_ops, bool first)
{
    const bool ahead = !SC(WITH_DROPOUT);
    const int c0 = c * SDPA_XE_D_STEP;
    short8 ka[XE_S_BLOCKS];
    if (ahead) {
SDPA_XE_TILE_LOOP
        for (int b = 0; b < XE_S_BLOCKS; b++)
            ka[b] = sdpa_xe_fwd_k_2d(k_surf, kb_surf, k0, key0, b, c0);
    }
    const int8 qb = as_int8(sdpa_xe_local_read8(q_ops + c * 8 * SUBGROUP_SIZE));
SDPA_XE_TILE_LOOP
    for (int b = 0; b < XE_S_BLOCKS; b++) {
        const short8 a = ahead ? ka[b] : sdpa_xe_fwd_k_2d(k_surf, kb_surf, k0, key0, b, c0);
        s[b] = sdpa_xe_mad(a, qb, first ? (float8)0.0f : s[b]);
        if (SC(KQ_F16_ACC))
            s[b] = sdpa_xe_round_half8(s[b]);
    }
}

#endif

/* 1, row by row: head-dim step c of S^T += K Q^T for the sub-group's keys
 * from key0. K's operands are element by element (any layout and format)
 * or block reads of its rows; with SDPA_XE_CONVERT_KV, from rows r0 on of
 * the converted tile in local memory (rows of ld elements). */
#ifdef SDPA_XE_CONVERT_KV
static inline __attribute__((always_inline)) void
sdpa_xe_fwd_kq_step(private float8 *s, const local ushort *k_tile, int ld, int r0, int c,
                    const local uint *q_ops)
#else
static inline __attribute__((always_inline)) void
sdpa_xe_fwd_kq_step(private float8 *s, const global void *K, long k_head, long ks2, long ks3,
                    int sk, int d, const private sdpa_fwd_kv_format *f, long token0, bool k_block,
                    int key0, int c, const local uint *q_ops)
#endif
{
    const int8 qb = as_int8(sdpa_xe_fwd_b_read(q_ops + c * 8 * SUBGROUP_SIZE));
SDPA_XE_TILE_LOOP
    for (int b = 0; b < XE_S_BLOCKS; b++) {
#ifdef SDPA_XE_CONVERT_KV
        const sdpa_xe_a8 ka = sdpa_xe_a_rows(k_tile, ld, r0 + 8 * b, c * SDPA_XE_D_STEP);
#else
        const sdpa_xe_a8 ka = sdpa_xe_fwd_k_operand(K, k_head, ks2, ks3, key0 + 8 * b,
                                                    c * SDPA_XE_D_STEP, sk, d, f, token0, k_block);
#endif
        s[b] = sdpa_xe_mad(ka, qb, s[b]);
        if (SC(KQ_F16_ACC))
            s[b] = sdpa_xe_round_half8(s[b]);
    }
}

/* O^T (this sub-group's rows from o_d0) += V^T P for keys kbase .. kbase +
 * 15, P given as the B operand pb. The usual case (V in the operand type,
 * its rows on 4 bytes, the sub-group's rows all inside the head dimension)
 * reads each lane's key row from one pointer at constant offsets, 16 bytes
 * a block and no test per block (a predicate the GPU keeps live costs a
 * flag register); anything else goes block by block, the blocks past the
 * head size left alone. */
static inline __attribute__((always_inline)) void
sdpa_xe_fwd_pv(private float8 *o, int8 pb, const global void *V, long v_head, long vs2, int kbase,
               int o_d0, int sk, int d, const private sdpa_fwd_kv_format *f, long token0,
               bool v_aligned)
{
    if (sdpa_xe_kv_raw(f) && v_aligned && o_d0 + SDPA_XE_DSUB <= d) {
        const int lane = get_sub_group_local_id();
        const int k_first = SUBGROUP_SIZE == 16 ? kbase + lane : kbase + 2 * lane;
        const long r0 = v_head + (long)sdpa_imin(k_first, sk - 1) * vs2 + o_d0;
        const global uint *row0 = (const global uint *)((const global ushort *)V + r0);
#if SUBGROUP_SIZE == 8
        const long r1 = v_head + (long)sdpa_imin(k_first + 1, sk - 1) * vs2 + o_d0;
        const global uint *row1 = (const global uint *)((const global ushort *)V + r1);
#endif
        SDPA_XE_TILE_LOOP
        for (int e = 0; e < XE_O_BLOCKS; e++) {
            const ushort8 run0 = as_ushort8(vload4(e, row0));
#if SUBGROUP_SIZE == 8
            const ushort8 run1 = as_ushort8(vload4(e, row1));
#else
            const ushort8 run1 = 0;
#endif
            o[e] = sdpa_xe_mad(sdpa_xe_a_from_runs(run0, run1), pb, o[e]);
            if (SC(VS_F16_ACC))
                o[e] = sdpa_xe_round_half8(o[e]);
        }
        return;
    }
SDPA_XE_TILE_LOOP
    for (int e = 0; e < XE_O_BLOCKS; e++) {
        const int d0 = o_d0 + 8 * e;
        if (d0 < d) {
            const sdpa_xe_a8 va =
                    sdpa_xe_fwd_v_operand(V, v_head, vs2, kbase, d0, sk, d, f, token0, v_aligned);
            o[e] = sdpa_xe_mad(va, pb, o[e]);
            if (SC(VS_F16_ACC))
                o[e] = sdpa_xe_round_half8(o[e]);
        }
    }
}

#if XE_O_BY_QUERY
/* P of 16 keys (lo: keys 0-7, hi: 8-15) as 8 words of operand bits, two
 * keys a word (sdpa_xe_pack_b's layout); f16 by a vector conversion, which
 * the GPU compiler writes straight into the packed halves. */
static inline __attribute__((always_inline)) uint8 sdpa_xe_fwd_pack_p(float8 lo, float8 hi)
{
    if (SC(QRY_DT) != SDPA_DT_BF16)
        return as_uint8(convert_half16_rte((float16)(lo, hi)));
    return as_uint8(sdpa_xe_pack_b(lo, hi));
}

/* The B operand of O = P V without a 2D load: keys kbase .. kbase + 15 (in
 * pairs along the components, zero from sk on) by head-dim columns c0 +
 * lane (zero from d on), element by element; V in the operand type. */
static inline __attribute__((always_inline)) int8
sdpa_xe_fwd_v_b(const global void *V, long v_head, long vs2, int kbase, int c0, int sk, int d)
{
    const int col = c0 + get_sub_group_local_id();
    const global ushort *v = (const global ushort *)V + v_head + col;
    uint8 w;
#pragma unroll
    for (int j = 0; j < 8; j++) {
        const int k = kbase + 2 * j;
        const uint lo = col < d && k < sk ? v[(long)k * vs2] : 0u;
        const uint hi = col < d && k + 1 < sk ? v[(long)(k + 1) * vs2] : 0u;
        SDPA_XE_AT(w, uint, j) = lo | hi << 16;
    }
    return as_int8(w);
}

/* V's surface for the 16 head-dim columns from `col` (XE_KV_SURF_PER_BLOCK,
 * as K's blocks): the base advanced by whole 64 bytes towards the column
 * (no further than leaves the 64 bytes the hardware wants of width), so
 * that each column block's loads have a payload of their own, its x fixed
 * and its y set once per 16 keys, instead of a copy of one payload with x
 * rewritten before every load. */
static inline __attribute__((always_inline)) sdpa_xe_surface2d
sdpa_xe_fwd_v_cols_surface(const private sdpa_xe_surface2d *v_surf, int col)
{
    const int xb = 2 * (v_surf->x0 + col);
    const int off = sdpa_imin(xb & ~63, (v_surf->width_m1 + 1 - 64) & ~63);
    sdpa_xe_surface2d b = *v_surf;
    b.base += off;
    b.width_m1 -= off;
    b.x0 = (xb - off) / 2;
    return b;
}

/* O (queries by this sub-group's head-dim columns from o_d0) += P V for
 * the 16 keys of chunk kc of the key tile from k0: P in local memory
 * (p_rows, [chunks][16 queries][16 keys]), V's B operands from 2D loads on
 * v_surf (with XE_KV_SURF_PER_BLOCK on vb_surf, a surface per 16 columns,
 * its base advanced by r1 rows: the chunk's loads then take y = k0 + 16 kc
 * - r1) when v_2d (a constant at each call: the kernel branches once per
 * tile, not per operand), else element by element. */
static inline __attribute__((always_inline)) void
sdpa_xe_fwd_pv_chunk(private float8 *o, const local ushort *p_rows, int kc, int r1,
                     const private sdpa_xe_surface2d *v_surf,
                     const private sdpa_xe_surface2d *vb_surf, bool v_2d, const global void *V,
                     long v_head, long vs2, int k0, int o_d0, int sk, int d)
{
    /* P as A (lane k: key kc * 16 + k; component m: query 8h + m), a block
     * read of 8 query rows. */
    const local ushort *chunk = p_rows + kc * 16 * SUBGROUP_SIZE;
    const short8 pa0 = as_short8(sdpa_xe_local_read_us8(chunk)),
                 pa1 = as_short8(sdpa_xe_local_read_us8(chunk + 8 * SUBGROUP_SIZE));
    /* Every V operand of the chunk loaded before the first product: the
     * loads go to registers of their own instead of waiting, one by one,
     * for the product before to release the same ones. */
    int8 vb[XE_O_DCOLS];
SDPA_XE_TILE_LOOP
    for (int e = 0; e < XE_O_DCOLS; e++) {
        if (!v_2d) {
            vb[e] = sdpa_xe_fwd_v_b(V, v_head, vs2, k0 + 16 * kc, o_d0 + 16 * e, sk, d);
        } else if (SC(XE_KV_SURF_PER_BLOCK)) {
            sdpa_xe_surface2d sb = vb_surf[e];
            sb.base += (long)r1 * (sb.pitch_m1 + 1);
            sb.height_m1 -= r1;
            vb[e] = sdpa_xe_block2d_b(&sb, k0 + 16 * kc - r1, 0);
        } else {
            vb[e] = sdpa_xe_block2d_b(v_surf, k0 + 16 * kc, o_d0 + 16 * e);
        }
    }
SDPA_XE_TILE_LOOP
    for (int e = 0; e < XE_O_DCOLS; e++) {
        o[e] = sdpa_xe_mad(pa0, vb[e], o[e]);
        o[XE_O_DCOLS + e] = sdpa_xe_mad(pa1, vb[e], o[XE_O_DCOLS + e]);
        if (SC(VS_F16_ACC)) {
            o[e] = sdpa_xe_round_half8(o[e]);
            o[XE_O_DCOLS + e] = sdpa_xe_round_half8(o[XE_O_DCOLS + e]);
        }
    }
}

/* O += P V over the key tile from k0, chunk by chunk (sdpa_xe_fwd_pv_chunk).
 * A tile of two or four chunks (32 or 64 keys: DSPLIT 1 or 2) with V by 2D
 * loads takes them unrolled, the odd chunks' column surfaces 16 rows on:
 * each load of the first two chunks then has a payload of its own that
 * keeps all its fields but y from tile to tile (Xe-HPC: the y of a surface
 * per block, as K's), and the next two reuse them, y rewritten; in the loop
 * the payloads are rebuilt before it at every tile (6 movs each) and
 * updated at every chunk (pvc BERT D64: 539 -> 497 instructions per tile).
 * Four distinct pairs spill at D 128. At most 16 keys (sk <= 16) the odd
 * chunks' surfaces stay on the first rows (their y past the end: zeros). */
static inline __attribute__((always_inline)) void
sdpa_xe_fwd_pv_by_query(private float8 *o, const local ushort *p_rows, int chunks,
                        const private sdpa_xe_surface2d *v_surf,
                        const private sdpa_xe_surface2d *vb_surf, bool v_2d, const global void *V,
                        long v_head, long vs2, int k0, int o_d0, int sk, int d)
{
    /* (Not with a mask buffer: IGC 2.40 on pvc then spends more than it
     * saves, 38.2 -> 40.4 instructions per dpas at D 64.) */
    const bool unrolled = v_2d && SC(MASK_KIND) != SDPA_MASK_KIND_BUFFER;
    const int r16 = sdpa_imin(16, (sk - 1) & ~15);
    if (chunks == 2 && unrolled) {
        sdpa_xe_fwd_pv_chunk(o, p_rows, 0, 0, v_surf, vb_surf, true, V, v_head, vs2, k0, o_d0,
                             sk, d);
        sdpa_xe_fwd_pv_chunk(o, p_rows, 1, r16, v_surf, vb_surf, true, V, v_head, vs2, k0, o_d0,
                             sk, d);
        return;
    }
    if (chunks == 4 && unrolled) {
SDPA_XE_TILE_LOOP
        for (int kc = 0; kc < 4; kc++)
            sdpa_xe_fwd_pv_chunk(o, p_rows, kc, kc & 1 ? r16 : 0, v_surf, vb_surf, true, V,
                                 v_head, vs2, k0, o_d0, sk, d);
        return;
    }
    __attribute__((opencl_unroll_hint(1))) for (int kc = 0; kc < chunks; kc++)
        sdpa_xe_fwd_pv_chunk(o, p_rows, kc, 0, v_surf, vb_surf, v_2d, V, v_head, vs2, k0, o_d0,
                             sk, d);
}
#endif

#ifdef SDPA_XE_CONVERT_KV
/*
 * Variants with SDPA_XE_CONVERT_KV take K and V in another dtype than Q
 * (quantized, or another float type). Their elements are converted once per
 * key tile, by the whole work-group, into local memory in Q's type (rows of
 * SDPA_XE_KV_LD(d) elements, the head size padded with zeros, keys past the
 * end zero), and both products read their operands from there: the
 * dequantization (a switch per dtype, scale and zero point until the
 * specialization constants fold) then exists once, in the staging loop,
 * instead of at every operand load.
 */
/* O^T (rows from o_d0) += V^T P from the converted tile, for the 16 keys
 * from tile row r0. */
static inline __attribute__((always_inline)) void
sdpa_xe_fwd_pv_converted(private float8 *o, int8 pb, const local ushort *tile, int ld, int r0,
                         int o_d0, int d)
{
SDPA_XE_TILE_LOOP
    for (int e = 0; e < XE_O_BLOCKS; e++) {
        if (o_d0 + 8 * e < d) {
            o[e] = sdpa_xe_mad(sdpa_xe_a_cols(tile, ld, r0, 16, o_d0 + 8 * e), pb, o[e]);
            if (SC(VS_F16_ACC))
                o[e] = sdpa_xe_round_half8(o[e]);
        }
    }
}
#endif

/* Stores 8 elements of O's row (x[i] at element c0 + i, those below d) in
 * DST_DT; the row is contiguous. */
static inline __attribute__((always_inline)) void sdpa_xe_fwd_store8(global void *A, long row,
                                                                     int c0, int d, float8 x)
{
    const int dt = SC(DST_DT);
    if (c0 + 8 <= d && dt == SDPA_DT_F16) {
        vstore8(convert_half8_rte(x), 0, (global half *)A + row + c0);
        return;
    }
#pragma unroll
    for (int i = 0; i < 8; i++)
        if (c0 + i < d)
            sdpa_store(A, row + c0 + i, dt, SDPA_XE_AT(x, float, i));
}

/* How scores are scaled, in log2 units. Without a mask buffer (fold) the
 * factor is applied once per tile maximum and inside exp2's argument (fma)
 * instead of to every score: the maximum commutes with a factor >= 0, and a
 * negative one flips Q's sign bits at staging instead (exact in f16 and
 * bf16), so s_scale = |log2_scale|. */
typedef struct sdpa_xe_fwd_scale {
    float log2_scale, s_scale;
    bool fold;
} sdpa_xe_fwd_scale;

static inline __attribute__((always_inline)) sdpa_xe_fwd_scale
sdpa_xe_fwd_scale_of(float log2_scale)
{
    sdpa_xe_fwd_scale sc;
    sc.log2_scale = log2_scale;
    sc.fold = SC(MASK_KIND) != SDPA_MASK_KIND_BUFFER;
    sc.s_scale = sc.fold ? fabs(log2_scale) : log2_scale;
    return sc;
}

/* 2. The maximum of this lane's query over the unscaled S of the tile's
 * keys key0 .. (keys past `last` left out where the tile is masked), times
 * the score factor s_scale >= 0. */
static inline __attribute__((always_inline)) float
sdpa_xe_fwd_tile_max(const private float8 *s, float s_scale, int key0, int last, bool tile_masked)
{
    float mx = -INFINITY;
    if (tile_masked) {
SDPA_XE_TILE_LOOP
        for (int b = 0; b < XE_S_BLOCKS; b++)
SDPA_XE_TILE_LOOP
            for (int m = 0; m < 8; m++)
                mx = key0 + 8 * b + m > last ? mx : fmax(mx, SDPA_XE_AT(s[b], float, m));
    } else {
SDPA_XE_TILE_LOOP
        for (int b = 0; b < XE_S_BLOCKS; b++)
SDPA_XE_TILE_LOOP
            for (int m = 0; m < 8; m++)
                mx = fmax(mx, SDPA_XE_AT(s[b], float, m));
    }
    return mx == -INFINITY ? mx : mx * s_scale;
}

/* The maximum, or the sum, of x over the block's dsplit sub-groups: each
 * writes its own to red[m_sg * bq + row] and reads the others'. */
static inline __attribute__((always_inline)) float
sdpa_xe_fwd_block_max(float x, local float *red, int row, int bq, int m_sg, int dsplit)
{
    red[m_sg * bq + row] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int mm = 0; mm < dsplit; mm++)
        x = fmax(x, red[mm * bq + row]);
    return x;
}

static inline __attribute__((always_inline)) float
sdpa_xe_fwd_block_sum(float x, local float *red, int row, int bq, int m_sg, int dsplit)
{
    red[m_sg * bq + row] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    float sum = 0.0f;
    for (int mm = 0; mm < dsplit; mm++)
        sum += red[mm * bq + row];
    return sum;
}

/* 3. P = exp2(S - shift) in place, S as sdpa_xe_fwd_tile_max left it (keys
 * past `last` 0 where the tile is masked); returns P's sum over the tile. */
static inline __attribute__((always_inline)) float
sdpa_xe_fwd_exp_tile(private float8 *s, const private sdpa_xe_fwd_scale *sc, float shift, int key0,
                     int last, bool tile_masked)
{
    float sum = 0.0f;
    if (sc->fold && tile_masked) {
SDPA_XE_TILE_LOOP
        for (int b = 0; b < XE_S_BLOCKS; b++)
SDPA_XE_TILE_LOOP
            for (int m = 0; m < 8; m++) {
                const float x = fma(SDPA_XE_AT(s[b], float, m), sc->s_scale, -shift);
                const float p = key0 + 8 * b + m > last ? 0.0f : sdpa_fwd_exp2(x);
                SDPA_XE_AT(s[b], float, m) = p;
                sum += p;
            }
    } else if (sc->fold) {
SDPA_XE_TILE_LOOP
        for (int b = 0; b < XE_S_BLOCKS; b++)
SDPA_XE_TILE_LOOP
            for (int m = 0; m < 8; m++) {
                const float p = sdpa_fwd_exp2(fma(SDPA_XE_AT(s[b], float, m), sc->s_scale, -shift));
                SDPA_XE_AT(s[b], float, m) = p;
                sum += p;
            }
    } else {
SDPA_XE_TILE_LOOP
        for (int b = 0; b < XE_S_BLOCKS; b++)
SDPA_XE_TILE_LOOP
            for (int m = 0; m < 8; m++) {
                const float p = sdpa_fwd_exp2(SDPA_XE_AT(s[b], float, m) - shift);
                SDPA_XE_AT(s[b], float, m) = p;
                sum += p;
            }
    }
    return sum;
}

/* Dropout: P's key 8b + m of the tile zeroed where bit 8b + m of keep is 0. */
static inline __attribute__((always_inline)) void sdpa_xe_fwd_drop_tile(private float8 *s,
                                                                        uint keep)
{
SDPA_XE_TILE_LOOP
    for (int b = 0; b < XE_S_BLOCKS; b++)
SDPA_XE_TILE_LOOP
        for (int m = 0; m < 8; m++)
            SDPA_XE_AT(s[b], float, m) =
                    (keep >> (8 * b + m)) & 1 ? SDPA_XE_AT(s[b], float, m) : 0.0f;
}

#if XE_O_BY_QUERY
/* 3, O rescaled: query 8h + m's row (component m of o[h * XE_O_DCOLS + e])
 * by its lane's alpha. */
static inline __attribute__((always_inline)) void sdpa_xe_fwd_rescale_by_query(private float8 *o,
                                                                                float alpha)
{
SDPA_XE_TILE_LOOP
    for (int h = 0; h < 2; h++) {
        float8 alpha_h;
#pragma unroll
        for (int m = 0; m < 8; m++)
            SDPA_XE_AT(alpha_h, float, m) = sub_group_broadcast(alpha, 8 * h + m);
SDPA_XE_TILE_LOOP
        for (int e = 0; e < XE_O_DCOLS; e++) {
            o[h * XE_O_DCOLS + e] *= alpha_h;
            if (SC(VS_F16_ACC))
                o[h * XE_O_DCOLS + e] = sdpa_xe_round_half8(o[h * XE_O_DCOLS + e]);
        }
    }
}
#endif

#if XE_O_BY_QUERY
/* The end: O times inv (1 / sum, with dropout's 1 / (1 - p)) to dst, at
 * element a_row of each query's row. Query 8h + m's row of O is component m
 * of o[h * XE_O_DCOLS + e]; its inv, row and validity come from its lane. */
static inline __attribute__((always_inline)) void
sdpa_xe_fwd_store_o(const private float8 *o, global void *dst, long a_row, float inv,
                    bool row_valid, int o_d0, int d)
{
    const int lane = get_sub_group_local_id();
SDPA_XE_TILE_LOOP
    for (int h = 0; h < 2; h++)
SDPA_XE_TILE_LOOP
        for (int m = 0; m < 8; m++) {
            const int q = 8 * h + m;
            const float inv_q = sub_group_broadcast(inv, q);
            const long row_q = sub_group_broadcast(a_row, q);
            if (!sub_group_broadcast((int)row_valid, q))
                continue;
SDPA_XE_TILE_LOOP
            for (int e = 0; e < XE_O_DCOLS; e++) {
                const int dcol = o_d0 + 16 * e + lane;
                if (dcol < d)
                    sdpa_store(dst, row_q + dcol, SC(DST_DT),
                               SDPA_XE_AT(o[h * XE_O_DCOLS + e], float, m) * inv_q);
            }
        }
}
#else
/* The end: this lane's query's row of O (its head-dim rows from o_d0 of O^T)
 * times inv to dst, from element a_row. Lanes past the block's rows do not
 * come here (row_valid is for the other layout's signature): the kernel
 * returns first, which IGC schedules better than a test in here (-cvt,
 * pvc D64: 90.2 instructions per dpas against 91.1). */
static inline __attribute__((always_inline)) void
sdpa_xe_fwd_store_o(const private float8 *o, global void *dst, long a_row, float inv,
                    bool row_valid, int o_d0, int d)
{
SDPA_XE_TILE_LOOP
    for (int e = 0; e < XE_O_BLOCKS; e++) {
        const int d0 = o_d0 + 8 * e;
        if (d0 < d)
            sdpa_xe_fwd_store8(dst, a_row, d0, d, o[e] * inv);
    }
}
#endif

/* The keys a work-group sees: all, or up to the causal band of its last
 * row (end); `last`: the last key this lane's query sees. */
typedef struct sdpa_xe_fwd_keys {
    int end, last;
} sdpa_xe_fwd_keys;

static inline __attribute__((always_inline)) sdpa_xe_fwd_keys
sdpa_xe_fwd_keys_of(const private sdpa_fwd_rows *w, int query, int sq, int sk)
{
    sdpa_xe_fwd_keys k = {sk, sk - 1};
    if (sdpa_is_causal()) {
        const int causal_offset = sdpa_causal_offset(sk, sq);
        k.end = sdpa_iclamp(sdpa_fwd_row_query(w, w->rows - 1) + causal_offset + 1, 0, sk);
        k.last = sdpa_imin(k.end - 1, query + causal_offset);
    }
    return k;
}

/* Q^T of the query block as B operands in local memory: each lane stores
 * the words of its query's row (from element q_row of Q; zeros past the
 * block's rows), its sign bits flipped by q_sign; the block's DSPLIT
 * sub-groups share the head-dim steps. */
static inline __attribute__((always_inline)) void
sdpa_xe_fwd_stage_q(local uint *q_ops, local uint *q_block, const global void *Q, long q_row,
                    int d, bool row_valid, uint q_sign, int m_sg, int dsplit, int d_steps)
{
    const global ushort *q = (const global ushort *)Q + q_row;
    for (int c = m_sg; c < d_steps; c += dsplit) {
        const int c0 = c * SDPA_XE_D_STEP;
        const uint8 words = row_valid ? sdpa_xe_b_from_row(q + c0, d - c0) ^ q_sign : (uint8)0;
#if SUBGROUP_SIZE == 8
        sdpa_xe_fwd_b_write(q_ops + c * 8 * SUBGROUP_SIZE, words);
#else
        local uint *dst = q_block + c * 8 * SUBGROUP_SIZE;
#pragma unroll
        for (int j = 0; j < 8; j++)
            dst[j * SUBGROUP_SIZE] = SDPA_XE_AT(words, uint, j);
#endif
    }
}

__attribute__((intel_reqd_sub_group_size(SUBGROUP_SIZE))) kernel void sdpa_xe_fwd(
#include "sdpa_fwd_args.def"
)
{
    const int lane = get_sub_group_local_id();
    /* Uniform across the sub-group, but only the broadcast tells the GPU
     * compiler so: without it every address derived from the sub-group's
     * place is computed per lane (tens of registers, spills). */
    const int sg_id = sub_group_broadcast((uint)get_local_id(1), 0);
    const int dsplit = SC(WG_M_KQ), qblocks = SC(WG_N_KQ);
    /* (No %: LLVM would pair it with the division through a freeze, which
     * llvm-spirv-15 cannot translate.) */
    const int n_sg = sg_id / dsplit, m_sg = sg_id - n_sg * dsplit;
    const int bq = SUBGROUP_SIZE * qblocks, bk = SDPA_XE_KEYS * dsplit;
    const int d_steps = SDPA_XE_D_PAD(D) / SDPA_XE_D_STEP;
    const int p_chunks = bk / 16; /* 16-key chunks of a key tile */

    const sdpa_fwd_rows w = sdpa_fwd_work_group_rows(bq, SQ);
    const int row = n_sg * SUBGROUP_SIZE + lane; /* this lane's query in the work-group's tile */
    const bool row_valid = row < w.rows;
    const int row_read = sdpa_imin(row, w.rows - 1); /* rows past the end read the last one */
    const int query = sdpa_fwd_row_query(&w, row_read);
    const int head = sdpa_fwd_row_head(&w, row_read);

    /* Local memory (SDPA_XE_FWD_SLM_BYTES): Q^T as B operands
     * [qblocks][d_steps][8][sg], P of a key tile [qblocks][p_chunks][8][sg]
     * (DSPLIT > 1), and [dsplit][bq] floats for maxima and sums; with
     * sub-groups of 8 each operand [sg][8] (sdpa_xe_fwd_b_read). */
    local uint *q_slm = (local uint *)SLM;
    local uint *p_slm = q_slm + bq * d_steps * 8;
#ifdef SDPA_XE_CONVERT_KV
    const bool p_in_slm = SDPA_XE_FWD_P_IN_SLM(dsplit, SUBGROUP_SIZE, 1);
#else
    const bool p_in_slm = SDPA_XE_FWD_P_IN_SLM(dsplit, SUBGROUP_SIZE, 0);
#endif
    local float *red_slm = (local float *)(p_slm + (p_in_slm ? bq * p_chunks * 8 : 0));
#ifdef SDPA_XE_CONVERT_KV
    /* The converted K and V tiles [bk][SDPA_XE_KV_LD(D)], after the rest. */
    const int kv_ld = SDPA_XE_KV_LD(D);
    local ushort *k_tile = (local ushort *)(red_slm + dsplit * bq);
    local ushort *v_tile = k_tile + bk * kv_ld;
#endif
#if SUBGROUP_SIZE == 8 && !defined(SDPA_XE_CONVERT_KV)
    /* Xe-HPG: V^T's operands of a key tile, after the rest
     * (sdpa_xe_hpg_v_stage). */
    local uint *v_ops = (local uint *)(red_slm + dsplit * bq);
    /* And K's, after them (sdpa_xe_hpg_k_stage). */
    local uint *k_ops = v_ops + bk * SDPA_XE_D_PAD(D) / 2;
    const int key_blocks = bk / 8;
    /* Steps of the widest head the variant serves (D <= DSPLIT * DSUB). */
    const int max_steps = SDPA_XE_D_PAD(dsplit * SDPA_XE_DSUB) / SDPA_XE_D_STEP;
#endif
    local uint *q_block = q_slm + n_sg * d_steps * 8 * SUBGROUP_SIZE + lane;
    local uint *p_block = p_slm + n_sg * p_chunks * 8 * SUBGROUP_SIZE + lane;
    /* The same blocks as whole operands, for sub-group block reads and
     * writes (one message per operand, not one per component). */
    local uint *q_ops = q_block - lane, *p_ops = p_block - lane;

    /* The score factor, and Q's sign bits flipped where it is negative and
     * folded (sdpa_xe_fwd_scale). */
    const sdpa_xe_fwd_scale sc =
            sdpa_xe_fwd_scale_of(sdpa_score_factor(SDPA_LOG2E, SCALE_PTR, SCALE, INV_SCALE));
    const uint q_sign = sc.fold && sc.log2_scale < 0.0f ? 0x80008000u : 0u;

    /* 1a. Q^T of the query block as B operands. */
    sdpa_xe_fwd_stage_q(q_ops, q_block, Q, w.b * Q_S0 + (long)head * Q_S1 + (long)query * Q_S2,
                        D, row_valid, q_sign, m_sg, dsplit, d_steps);
    barrier(CLK_LOCAL_MEM_FENCE);

    const sdpa_xe_fwd_keys keys = sdpa_xe_fwd_keys_of(&w, query, SQ, SK);
    const int k_end = keys.end, last = keys.last;
    /* A key tile of the sub-group up to here needs no mask: every lane sees
     * all its keys (the tiles before the end and the causal band). */
    const int last_min = sub_group_reduce_min(last);
    const sdpa_fwd_kv_format k_fmt = SDPA_FWD_KV_FORMAT(KEY, K_SCALES, K_ZP, D, w.hkv);
    const sdpa_fwd_kv_format v_fmt = SDPA_FWD_KV_FORMAT(VAL, V_SCALES, V_ZP, D, w.hkv);
    const sdpa_fwd_kv_head kv = sdpa_fwd_kv_head_of(&w, K_S0, K_S1, K_S2, V_S0, V_S1, V_S2, SK,
                                                    TOTAL_K, 0, BLOCK_LOG2);
    const long k_head = kv.k, v_head = kv.v, token0 = kv.token0;
    /* Block reads of K rows: 16-bit elements in Q's type, every row 4-byte
     * aligned (the base, the head offset and the row stride even). */
    const bool k_block = sdpa_xe_kv_raw(&k_fmt) && ((ulong)K & 3) == 0 &&
                         (((ulong)k_head | (ulong)K_S2) & 1) == 0;
    /* V rows start on 4 bytes (runs of 8 elements then load as 32-bit
     * words; o_d0 and the row blocks are multiples of 8). */
    const bool v_aligned = ((ulong)V & 3) == 0 && (((ulong)v_head | (ulong)V_S2) & 1) == 0;
#if SUBGROUP_SIZE == 8 && !defined(SDPA_XE_CONVERT_KV)
    /* Xe-HPG: K's rows by block reads from addresses formed once per tile
     * (sdpa_xe_hpg_load.h). */
    const bool k_rows = sdpa_xe_hpg_k_rows_ok(k_block, SC(TRANSPOSE_K), D);
    /* V's rows likewise, where the sub-group's O rows are inside D. */
    const bool v_rows = v_aligned && m_sg * SDPA_XE_DSUB + SDPA_XE_DSUB <= D;
    /* Or, where every sub-group's are, packed by the work-group in local
     * memory (uniform over the work-group: it adds barriers). */
    const bool v_staged = sdpa_xe_hpg_v_staged_ok(v_aligned, D, dsplit);
    /* K's rows likewise packed by the work-group, a tile ahead. */
    const bool k_staged = sdpa_xe_hpg_k_staged_ok(k_rows, dsplit * qblocks, key_blocks);
    if (k_staged && k_end > 0) {
        sdpa_xe_hpg_k_stage(k_ops, K, k_head, K_S2, 0, SK, d_steps, max_steps, key_blocks,
                            sg_id, dsplit * qblocks);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
#endif
#if SUBGROUP_SIZE == 16
    /* K's rows of this head as a 2D block-load surface (Xe-HPC, Xe2, Xe3):
     * 8 keys by 16 head-dim elements per load, straight into an A operand.
     * Only where the hardware accepts the surface; anything else (unaligned
     * rows or strides, transposed or converted K, head sizes under 32)
     * takes the row-by-row block reads below. */
    sdpa_xe_surface2d k_surf;
    const bool k_2d = !SC(TRANSPOSE_K) && sdpa_xe_kv_raw(&k_fmt) &&
                      sdpa_xe_surface2d_of(K, k_head, D, SK, K_S2, &k_surf);
    /* Or one per 8-key block of the sub-group (XE_KV_SURF_PER_BLOCK). */
    sdpa_xe_surface2d kb_surf[XE_S_BLOCKS];
    if (SC(XE_KV_SURF_PER_BLOCK))
        sdpa_xe_fwd_k_block_surfaces(kb_surf, &k_surf, m_sg * SDPA_XE_KEYS, SK);
#endif
#if XE_O_BY_QUERY
    /* V's rows of this head likewise, for the B operand of O = P V; other V
     * layouts gather the operand element by element. The query block's P in
     * local memory: [bk / 16 chunks][16 queries][16 keys] of operand bits. */
    sdpa_xe_surface2d v_surf;
    const bool v_2d = sdpa_xe_surface2d_of(V, v_head, D, SK, V_S2, &v_surf);
    local ushort *p_rows = (local ushort *)p_slm + n_sg * bk * SUBGROUP_SIZE;
#endif
    const sdpa_dropout_args drop =
            sdpa_dropout_args_read(DROPOUT_SEED, DROPOUT_OFFSET, DROPOUT_P, DROPOUT_SEED_PTR,
                                   DROPOUT_OFFSET_PTR, DROPOUT_P_PTR);

    /* The mask row of this lane's query (uniform when one row serves all
     * queries); keys after `last` read key `last` (or 0), never past the
     * mask's end. */
    long m_off = w.b * MSK_S0 + (long)w.head0 * MSK_S1;
    if (!(SC(BROADCAST_MASK_Q) && !SC(Q1_GQA_BATCH)))
        m_off = w.b * MSK_S0 + (long)head * MSK_S1 + (long)query * MSK_S2;
    const int k_read_max = sdpa_imax(last, 0);

    sdpa_fwd_softmax_state st;
    sdpa_fwd_softmax_init(&st);
    float8 o[XE_O_BLOCKS];
SDPA_XE_TILE_LOOP
    for (int e = 0; e < XE_O_BLOCKS; e++)
        o[e] = 0.0f;
    const int o_d0 = m_sg * SDPA_XE_DSUB;
#if XE_O_BY_QUERY
    /* Or one per 16 columns of the sub-group's (XE_KV_SURF_PER_BLOCK). */
    sdpa_xe_surface2d vb_surf[XE_O_DCOLS];
    if (SC(XE_KV_SURF_PER_BLOCK)) {
SDPA_XE_TILE_LOOP
        for (int e = 0; e < XE_O_DCOLS; e++)
            vb_surf[e] = sdpa_xe_fwd_v_cols_surface(&v_surf, o_d0 + 16 * e);
    }
#endif

    /* The key loop twice over on the GPU (XE_KV_WAYS), one of them run: way
     * 1 where K and V both take 2D block loads, which it then knows at
     * compile time, way 0 for anything else (it tests k_2d and v_2d at each
     * tile). One loop for both merged the two ways' S and O tiles in
     * registers at every iteration: about 100 register copies per key tile.
     * The 2D way comes last, so that nothing only the other way uses stays
     * live in its registers. */
SDPA_XE_TILE_LOOP
    for (int way = 0; way < XE_KV_WAYS; way++) {
#if XE_O_BY_QUERY
        const bool all_2d = way == 1;
        if (all_2d != (k_2d && v_2d))
            continue;
        const bool k_2d_way = all_2d || k_2d, v_2d_way = all_2d || v_2d;
#endif
#if XE_HPG_WAYS
        /* Way 1 where K and V are both staged (the usual case), known there
         * at compile time: one loop for all merged the paths' S and O tiles
         * in registers at every iteration (48 copies per tile at D 128). */
        const bool all_staged = way == 1;
        if (all_staged != (k_staged && v_staged))
            continue;
        const bool k_staged_way = all_staged || k_staged, v_staged_way = all_staged || v_staged;
#endif
        for (int k0 = 0; k0 < k_end; k0 += bk) {
            const int key0 = k0 + m_sg * SDPA_XE_KEYS; /* first key of this sub-group's S rows */
#ifdef SDPA_XE_CONVERT_KV
            sdpa_xe_stage_tile(k_tile, 0, kv_ld, K, k_head + k0 * K_S2, K_S2, K_S3, &k_fmt,
                               token0 + k0, bk, SK - k0, SDPA_XE_D_PAD(D), D, sg_id,
                               dsplit * qblocks);
            sdpa_xe_stage_tile(v_tile, 0, kv_ld, V, v_head + k0 * V_S2, V_S2, V_S3, &v_fmt,
                               token0 + k0, bk, SK - k0, SDPA_XE_D_PAD(D), D, sg_id,
                               dsplit * qblocks);
            barrier(CLK_LOCAL_MEM_FENCE);
#endif

            /* 1. S^T = K Q^T. */
            float8 s[XE_S_BLOCKS];
#if SUBGROUP_SIZE == 16 && !defined(SDPA_XE_CONVERT_KV)
            if (k_2d_way) {
                /* The first step starts from zero (no accumulators to clear;
                 * D >= 1, so there is always a first step). */
                sdpa_xe_fwd_kq_2d(s, &k_surf, kb_surf, k0, key0, 0, q_ops, true);
                for (int c = 1; c < d_steps; c++)
                    sdpa_xe_fwd_kq_2d(s, &k_surf, kb_surf, k0, key0, c, q_ops, false);
            } else
#endif
#if SUBGROUP_SIZE == 8 && !defined(SDPA_XE_CONVERT_KV)
            if (k_staged_way) {
                /* (All staged: D = DSPLIT * DSUB, max_steps steps.) */
                sdpa_xe_hpg_kq_staged(s, k_ops + (key0 - k0) * SUBGROUP_SIZE, key_blocks, q_ops,
                                      all_staged ? max_steps : d_steps, max_steps);
            } else if (k_rows) {
                sdpa_xe_hpg_k_rows rows;
                sdpa_xe_hpg_k_rows_of(&rows, K, k_head, K_S2, key0, SK);
                sdpa_xe_hpg_kq(s, &rows, q_ops, d_steps);
            } else
#endif
            {
SDPA_XE_TILE_LOOP
                for (int b = 0; b < XE_S_BLOCKS; b++)
                    s[b] = 0.0f;
                for (int c = 0; c < d_steps; c++)
#ifdef SDPA_XE_CONVERT_KV
                    sdpa_xe_fwd_kq_step(s, k_tile, kv_ld, key0 - k0, c, q_ops);
#else
                    sdpa_xe_fwd_kq_step(s, K, k_head, K_S2, K_S3, SK, D, &k_fmt, token0,
                                        k_block, key0, c, q_ops);
#endif
            }

            /* 2. Scale and mask (log2 units); the tile maximum of this lane's
             *    query, agreed between the sub-groups of the block. */
            const bool tile_masked = key0 + SDPA_XE_KEYS - 1 > last_min;
            float mx = -INFINITY;
            if (sc.fold) {
                mx = sdpa_xe_fwd_tile_max(s, sc.s_scale, key0, last, tile_masked);
            } else {
SDPA_XE_TILE_LOOP
            for (int b = 0; b < XE_S_BLOCKS; b++)
SDPA_XE_TILE_LOOP
                for (int m = 0; m < 8; m++) {
                    const int key = key0 + 8 * b + m;
                    float x = SDPA_XE_AT(s[b], float, m) * sc.log2_scale;
                    if (SC(MASK_KIND) == SDPA_MASK_KIND_BUFFER)
                        x = fma(sdpa_load(MSK, m_off + (long)sdpa_imin(key, k_read_max) * MSK_S3,
                                              SC(MSK_DT)),
                                SDPA_LOG2E, x);
                    x = key > last ? -INFINITY : x;
                    SDPA_XE_AT(s[b], float, m) = x;
                    mx = fmax(mx, x);
                }
            }
            if (dsplit > 1)
                mx = sdpa_xe_fwd_block_max(mx, red_slm, row, bq, m_sg, dsplit);
#if SUBGROUP_SIZE == 8 && !defined(SDPA_XE_CONVERT_KV)
            /* V^T's operands of this tile and K's of the next to local memory:
             * after the exchange of maxima, which every sub-group reaches only
             * when done with the last tile's V and this tile's K (alone on its
             * block, a barrier of its own), and before P's barrier, which
             * publishes them. */
            if ((v_staged_way || k_staged_way) && dsplit == 1)
                barrier(CLK_LOCAL_MEM_FENCE);
            if (v_staged_way)
                sdpa_xe_hpg_v_stage(v_ops, V, v_head, V_S2, k0, SK, p_chunks,
                                    dsplit * XE_O_BLOCKS, sg_id, dsplit * qblocks);
            if (k_staged_way && k0 + bk < k_end)
                sdpa_xe_hpg_k_stage(k_ops, K, k_head, K_S2, k0 + bk, SK, d_steps, max_steps,
                                    key_blocks, sg_id, dsplit * qblocks);
#endif

            /* 3. Online softmax; O rescaled. */
            float shift;
            const float alpha = sdpa_fwd_update_max(&st, mx, &shift);
            st.sum = fma(st.sum, alpha,
                         sdpa_xe_fwd_exp_tile(s, &sc, shift, key0, last, tile_masked));
            /* Dropout after the sum: the denominator is over the undropped
             * probabilities (the keep mask of keys from k_end on is written
             * after the loop). */
            if (SC(WITH_DROPOUT))
                sdpa_xe_fwd_drop_tile(
                        s, sdpa_fwd_dropout_keep_bits(
                                   &drop, sdpa_fwd_dropout_index(&w, row_read, SQ, SK, key0),
                                   SDPA_XE_KEYS, key0, k_end, row_valid, DROPOUT_MASK));
#if XE_O_BY_QUERY
            sdpa_xe_fwd_rescale_by_query(o, alpha);

            /* 4. O += P V over the key tile: P to local memory, each lane its
             *    query's row of each 16-key chunk (32 bytes, in operand bits). */
SDPA_XE_TILE_LOOP
            for (int kc = 0; kc < XE_P_CHUNKS; kc++)
                vstore8(sdpa_xe_fwd_pack_p(s[2 * kc], s[2 * kc + 1]), 0,
                        (local uint *)(p_rows + ((key0 - k0) / 16 + kc) * 16 * SUBGROUP_SIZE) +
                                lane * 8);
            if (dsplit > 1)
                barrier(CLK_LOCAL_MEM_FENCE);
            else
                sub_group_barrier(CLK_LOCAL_MEM_FENCE);
            if (v_2d_way)
                sdpa_xe_fwd_pv_by_query(o, p_rows, p_chunks, &v_surf, vb_surf, true, V, v_head,
                                        V_S2, k0, o_d0, SK, D);
            else
                sdpa_xe_fwd_pv_by_query(o, p_rows, p_chunks, &v_surf, vb_surf, false, V, v_head,
                                        V_S2, k0, o_d0, SK, D);
            /* Done with P before the next tile rewrites it (with DSPLIT > 1 the
             * next tile's exchange of maxima waits for every sub-group). */
            if (dsplit == 1)
                sub_group_barrier(CLK_LOCAL_MEM_FENCE);
#else
#if XE_HPG_WAYS
            if (!v_staged_way)
#endif
SDPA_XE_TILE_LOOP
            for (int e = 0; e < XE_O_BLOCKS; e++) {
                o[e] *= alpha;
                if (SC(VS_F16_ACC))
                    o[e] = sdpa_xe_round_half8(o[e]);
            }

            /* 4. O^T += V^T P over the key tile. */
            if (!p_in_slm) {
SDPA_XE_TILE_LOOP
                for (int kc = 0; kc < XE_P_CHUNKS; kc++)
#ifdef SDPA_XE_CONVERT_KV
                    sdpa_xe_fwd_pv_converted(o, sdpa_xe_pack_b(s[2 * kc], s[2 * kc + 1]), v_tile,
                                             kv_ld, key0 - k0 + 16 * kc, o_d0, D);
#else
                    sdpa_xe_fwd_pv(o, sdpa_xe_pack_b(s[2 * kc], s[2 * kc + 1]), V, v_head, V_S2,
                                   key0 + 16 * kc, o_d0, SK, D, &v_fmt, token0, v_aligned);
#endif
            } else {
SDPA_XE_TILE_LOOP
                for (int kc = 0; kc < XE_P_CHUNKS; kc++) {
#if SUBGROUP_SIZE == 8
                    const int8 pb = sdpa_xe_hpg_pack_p(s[2 * kc], s[2 * kc + 1]);
#else
                    const int8 pb = sdpa_xe_pack_b(s[2 * kc], s[2 * kc + 1]);
#endif
                    sdpa_xe_fwd_b_write(
                            p_ops + (m_sg * XE_P_CHUNKS + kc) * 8 * SUBGROUP_SIZE, as_uint8(pb));
                }
                /* Alone on its query block, the sub-group reads only its own P
                 * (and, on Xe-HPG, staged V^T operands it did not write). */
#if SUBGROUP_SIZE == 8 && !defined(SDPA_XE_CONVERT_KV)
                if (dsplit > 1 || v_staged_way || k_staged_way)
#else
                if (dsplit > 1)
#endif
                    barrier(CLK_LOCAL_MEM_FENCE);
                else
                    sub_group_barrier(CLK_LOCAL_MEM_FENCE);
                /* A loop on the GPU too: unrolled, the compiler interleaves the
                 * chunks' loads and runs out of registers. */
#if SUBGROUP_SIZE == 8 && !defined(SDPA_XE_CONVERT_KV)
                if (v_staged_way) {
                    /* Unrolled by IGC (p_chunks = DSPLIT, a constant once
                     * specialized): the operands are local block reads at
                     * constant offsets. */
                    const local uint *ops = v_ops + m_sg * XE_O_BLOCKS * 8 * SUBGROUP_SIZE;
                    for (int kc = 0; kc < p_chunks; kc++) {
                        const int8 pb =
                                as_int8(sdpa_xe_fwd_b_read(p_ops + kc * 8 * SUBGROUP_SIZE));
                        sdpa_xe_hpg_pv_staged(o, pb,
                                              ops + kc * dsplit * XE_O_BLOCKS * 8 * SUBGROUP_SIZE,
                                              kc == 0, alpha);
                    }
                } else if (v_rows && k0 + bk <= SK) {
                    sdpa_xe_hpg_v_rows vr;
                    sdpa_xe_hpg_v_rows_of(&vr, V, v_head, V_S2, k0, o_d0);
                    __attribute__((opencl_unroll_hint(1))) for (int kc = 0; kc < p_chunks; kc++)
                    {
                        const int8 pb =
                                as_int8(sdpa_xe_fwd_b_read(p_ops + kc * 8 * SUBGROUP_SIZE));
                        sdpa_xe_hpg_pv(o, pb, &vr, kc);
                    }
                } else
#endif
                __attribute__((opencl_unroll_hint(1))) for (int kc = 0; kc < p_chunks; kc++)
                {
                    const int8 pb =
                            as_int8(sdpa_xe_fwd_b_read(p_ops + kc * 8 * SUBGROUP_SIZE));
#ifdef SDPA_XE_CONVERT_KV
                    sdpa_xe_fwd_pv_converted(o, pb, v_tile, kv_ld, 16 * kc, o_d0, D);
#else
                    sdpa_xe_fwd_pv(o, pb, V, v_head, V_S2, k0 + 16 * kc, o_d0, SK, D, &v_fmt,
                                   token0, v_aligned);
#endif
                }
            }
#endif /* XE_O_BY_QUERY */
#ifdef SDPA_XE_CONVERT_KV
            /* Every sub-group is done with the tiles before they are refilled. */
            barrier(CLK_LOCAL_MEM_FENCE);
#endif
        }
    }

    /* The keep mask of the keys past the causal band of the last row. */
    if (SC(DROPOUT_OUTPUT_MASK) && sdpa_is_causal())
        sdpa_fwd_dropout_mask_tail(&w, SQ, SK, SK, k_end, &drop, DROPOUT_MASK,
                                   sg_id * SUBGROUP_SIZE + lane, SUBGROUP_SIZE * dsplit * qblocks);

    /* Finish: the sum over all keys (each sub-group of the block holds the
     * part of its keys), the log-sum-exp, O / sum. */
    const float l = dsplit > 1 ? sdpa_xe_fwd_block_sum(st.sum, red_slm, row, bq, m_sg, dsplit)
                               : st.sum;
    if (SC(IS_TRAINING) && m_sg == 0 && row_valid)
        WS[(w.b * w.hq + head) * SQ + query] = sdpa_fwd_lse(st.max, l);
#if !XE_O_BY_QUERY
    if (!row_valid)
        return; /* (O^T's rows are this lane's: nothing to store) */
#endif
    sdpa_xe_fwd_store_o(o, DST, w.b * DST_S0 + (long)head * DST_S1 + (long)query * DST_S2,
                        sdpa_fwd_inv_sum(l) * drop.keep_scale, row_valid, o_d0, D);
}
