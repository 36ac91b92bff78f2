/*
 * sdpa_xe_hpg_load.h - the forward's K and V^T operands on Xe-HPG
 * (sub-groups of 8, no 2D block loads), from row addresses formed once per
 * key tile.
 *
 * K: with 8 lanes, row m of an A operand (keys kb + m, head-dim elements
 * c0 .. c0 + 15) is 8 words of K's row, lane i holding elements c0 + 2i and
 * c0 + 2i + 1, the pair the operand wants. A block read of 2 such runs per
 * row (component j: step j) serves two head-dim steps with one send per
 * row; the operand of a step is component j of 8 rows (a register move per
 * row, which Debian 12's IGC made anyway for one-step reads). The general
 * loader (sdpa_xe_fwd_k_operand) clamps the key, multiplies by the row
 * stride and tests each chunk against the head size at every read; here
 * the rows are clamped and their addresses formed once per key tile, and
 * every step of the head dimension is whole (D % 16 == 0). Steps per read
 * stay at 2: the head size is a run-time value, and the ISA gate's model
 * counts the widest loop the kernel holds.
 *
 * V^T: see sdpa_xe_hpg_pv below.
 *
 * Included by sdpa_xe_fwd.cl after its tile macros (XE_S_BLOCKS; the
 * tile loops, SDPA_XE_TILE_LOOP, come from sdpa_xe_tile.h).
 */
#ifndef SDPA_SPIRV_XE_HPG_LOAD_H
#define SDPA_SPIRV_XE_HPG_LOAD_H

#include "sdpa_xe_intel.h"
#include "sdpa_xe_local_block.h"
#include "sdpa_xe_tile.h"

/*
 * The products' B operands in local memory (Q^T's, P's), 64 words each:
 * with sub-groups of 8 lane by lane (p[8 i + j] is component j of lane i),
 * one message of 8 words per lane, where IGC splits a block read into two
 * messages of 32, each with an address move of its own; with sub-groups
 * of 16 in the layout of a block read (p[16 j + i]), read by block reads
 * (sdpa_xe_local_read8); sdpa_xe_fwd_b_write writes one (with 16 lanes
 * a block write: p on 16 bytes).
 */
static inline uint8 sdpa_xe_fwd_b_read(const local uint *p)
{
#if SUBGROUP_SIZE == 8
    return vload8(get_sub_group_local_id(), p);
#else
    return sdpa_xe_local_read8(p);
#endif
}

static inline void sdpa_xe_fwd_b_write(local uint *p, uint8 v)
{
#if SUBGROUP_SIZE == 8
    vstore8(v, get_sub_group_local_id(), p);
#else
    sdpa_xe_local_write8(p, v);
#endif
}

#if SUBGROUP_SIZE == 8

/* An A operand staged in local memory lane by lane (lane i's 8 words, its
 * components, one after the other: p[8 i + m] is component m of lane i):
 * one message of 8 words per lane from one address register, where a
 * block read of 64 words took two messages of 32 (IGC splits them so, the
 * address known only to 4 bytes), each with its address moved into a
 * payload register of its own. */
static inline uint8 sdpa_xe_hpg_op_read(const local uint *p)
{
    return vload8(get_sub_group_local_id(), p);
}

/* Whether a K tensor's rows can be read this way: raw operand bits, rows
 * on 4 bytes (k_block), not transposed, and whole 16-element steps. */
static inline bool sdpa_xe_hpg_k_rows_ok(bool k_block, bool transposed, int d)
{
    return k_block && !transposed && d % 16 == 0;
}

/* The first word of each of the SDPA_XE_KEYS rows from key0 (keys past the
 * end clamped to the last: their scores are masked). */
typedef struct {
    const global uint *row[SDPA_XE_KEYS];
} sdpa_xe_hpg_k_rows;

static inline __attribute__((always_inline)) void
sdpa_xe_hpg_k_rows_of(private sdpa_xe_hpg_k_rows *r, const global void *K, long k_head, long ks2,
                      int key0, int sk)
{
    const global ushort *head = (const global ushort *)K + k_head;
#pragma unroll
    for (int m = 0; m < SDPA_XE_KEYS; m++)
        r->row[m] = (const global uint *)(head + (long)sdpa_imin(key0 + m, sk - 1) * ks2);
}

/*
 * S^T (XE_S_BLOCKS blocks of 8 keys by the sub-group's 8 queries) = K Q^T
 * over d_steps steps, Q^T's B operands at q_ops (one per step), G steps at
 * a time: each row's G steps are one block read (component j: step j), and
 * the operand of step j is component j of 8 rows. Defined for G = 1, 2;
 * d_steps must be a multiple of G.
 */
#define SDPA_XE_HPG_DEFINE_KQ(G, vec_t, read)                                                      \
    static inline __attribute__((always_inline)) void sdpa_xe_hpg_kq##G(                          \
            private float8 *s, const private sdpa_xe_hpg_k_rows *r, const local uint *q_ops,      \
            int d_steps)                                                                           \
    {                                                                                              \
        SDPA_XE_TILE_LOOP                                                                          \
        for (int b = 0; b < XE_S_BLOCKS; b++)                                                      \
            s[b] = 0.0f;                                                                           \
        for (int c = 0; c < d_steps; c += (G)) {                                                   \
            vec_t w[SDPA_XE_KEYS];                                                                 \
            SDPA_XE_TILE_LOOP                                                                      \
            for (int m = 0; m < SDPA_XE_KEYS; m++)                                                 \
                w[m] = read(r->row[m] + 8 * c);                                                    \
            SDPA_XE_TILE_LOOP                                                                      \
            for (int j = 0; j < (G); j++) {                                                        \
                const int8 qb =                                                                    \
                        as_int8(sdpa_xe_fwd_b_read(q_ops + (c + j) * 8 * SUBGROUP_SIZE));          \
                SDPA_XE_TILE_LOOP                                                                  \
                for (int b = 0; b < XE_S_BLOCKS; b++) {                                            \
                    uint8 a;                                                                       \
                    _Pragma("unroll") for (int m = 0; m < 8; m++) SDPA_XE_AT(a, uint, m) =         \
                            SDPA_XE_AT(w[8 * b + m], uint, j);                                     \
                    s[b] = sdpa_xe_mad(as_int8(a), qb, s[b]);                                      \
                    if (SC(KQ_F16_ACC))                                                            \
                        s[b] = sdpa_xe_round_half8(s[b]);                                          \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    }
SDPA_XE_HPG_DEFINE_KQ(1, uint, intel_sub_group_block_read)
SDPA_XE_HPG_DEFINE_KQ(2, uint2, intel_sub_group_block_read2)
#undef SDPA_XE_HPG_DEFINE_KQ

/* S^T = K Q^T with the widest reads the head size allows. */
static inline __attribute__((always_inline)) void
sdpa_xe_hpg_kq(private float8 *s, const private sdpa_xe_hpg_k_rows *r, const local uint *q_ops,
               int d_steps)
{
    if (d_steps % 2 == 0)
        sdpa_xe_hpg_kq2(s, r, q_ops, d_steps);
    else
        sdpa_xe_hpg_kq1(s, r, q_ops, d_steps);
}

/*
 * V^T's A operands for O^T += V^T P (head-dim rows by 16 keys; lane i holds
 * keys 2i and 2i + 1). Each lane loads its two keys' rows, 8 elements per
 * operand, and the operand interleaves them by halves: a word shuffle,
 * which the GPU compiler lowers to strided moves instead of the shifts and
 * ors of sdpa_xe_a_from_runs. In a key tile that ends before the last key,
 * every lane's rows are those of the tile's first chunk plus a constant per
 * chunk: their offsets are formed once per tile.
 */
typedef struct {
    const global uint *even, *odd; /* this lane's keys k0 + 2i and + 1, from o_d0 */
    long chunk;                    /* elements from one 16-key chunk to the next */
} sdpa_xe_hpg_v_rows;

static inline __attribute__((always_inline)) void
sdpa_xe_hpg_v_rows_of(private sdpa_xe_hpg_v_rows *r, const global void *V, long v_head, long vs2,
                      int k0, int o_d0)
{
    const int key = k0 + 2 * (int)get_sub_group_local_id();
    const global ushort *row = (const global ushort *)V + v_head + (long)key * vs2 + o_d0;
    r->even = (const global uint *)row;
    r->odd = (const global uint *)(row + vs2);
    r->chunk = 16 * vs2;
}

/* O^T (XE_O_BLOCKS blocks of 8 head-dim rows) += V^T P for chunk kc of the
 * tile, P given as the B operand pb. */
static inline __attribute__((always_inline)) void
sdpa_xe_hpg_pv(private float8 *o, int8 pb, const private sdpa_xe_hpg_v_rows *r, int kc)
{
    const global uint *even = r->even + kc * r->chunk / 2, *odd = r->odd + kc * r->chunk / 2;
SDPA_XE_TILE_LOOP
    for (int e = 0; e < XE_O_BLOCKS; e++) {
        const ushort8 ev = as_ushort8(vload4(e, even)), od = as_ushort8(vload4(e, odd));
        const ushort16 a = (ushort16)(ev.s0, od.s0, ev.s1, od.s1, ev.s2, od.s2, ev.s3, od.s3,
                                      ev.s4, od.s4, ev.s5, od.s5, ev.s6, od.s6, ev.s7, od.s7);
        o[e] = sdpa_xe_mad(as_int8(a), pb, o[e]);
        if (SC(VS_F16_ACC))
            o[e] = sdpa_xe_round_half8(o[e]);
    }
}

/*
 * V^T's A operands staged in local memory (sdpa_xe_hpg_v_stage): the key
 * tile's operands packed once by the work-group, where each sub-group of a
 * query block packed the same ones again (QBLOCKS times the word shuffles
 * of sdpa_xe_hpg_pv). Operand (kc, blk) - keys k0 + 16 kc .. + 15, head-dim
 * rows 8 blk .. 8 blk + 7 - is 64 words at v_ops + (kc * n_blk + blk) * 64,
 * n_blk = D / 8 = DSPLIT * XE_O_BLOCKS (a constant), lane by lane
 * (sdpa_xe_hpg_op_read; component m of lane i: row 8 blk + m of keys 2i
 * and 2i + 1), so that each product's operand is one local read. Staged where every sub-group's O rows
 * are inside the head size (D = DSPLIT * SDPA_XE_DSUB) and V's rows are
 * 4-byte aligned; local memory: 2 * BK * D bytes.
 */
static inline bool sdpa_xe_hpg_v_staged_ok(bool v_aligned, int d, int dsplit)
{
    return v_aligned && d == dsplit * SDPA_XE_DSUB;
}

/* Sub-group sg_id of the work-group's n_sg packs its share of the key
 * tile from k0 (chunks of 16 keys; keys past sk clamped to the last, whose
 * P is 0). */
static inline __attribute__((always_inline)) void
sdpa_xe_hpg_v_stage(local uint *v_ops, const global void *V, long v_head, long vs2, int k0, int sk,
                    int chunks, int n_blk, int sg_id, int n_sg)
{
    const int lane = get_sub_group_local_id();
    const int ops = chunks * n_blk;
    const int per_sg = (ops + n_sg - 1) / n_sg;
    for (int i = 0; i < per_sg; i++) {
        const int op = sg_id + i * n_sg;
        if (ops % n_sg == 0 || op < ops) {
            const int kc = op / n_blk, blk = op - kc * n_blk;
            const int key = k0 + 16 * kc + 2 * lane;
            const global ushort *col = (const global ushort *)V + v_head + 8 * blk;
            const ushort8 ev = as_ushort8(
                    vload4(0, (const global uint *)(col + (long)sdpa_imin(key, sk - 1) * vs2)));
            const ushort8 od = as_ushort8(vload4(
                    0, (const global uint *)(col + (long)sdpa_imin(key + 1, sk - 1) * vs2)));
            const ushort16 a = (ushort16)(ev.s0, od.s0, ev.s1, od.s1, ev.s2, od.s2, ev.s3, od.s3,
                                          ev.s4, od.s4, ev.s5, od.s5, ev.s6, od.s6, ev.s7, od.s7);
            vstore8(as_uint8(a), lane, v_ops + op * 8 * SUBGROUP_SIZE);
        }
    }
}

/* O^T (XE_O_BLOCKS blocks of 8 head-dim rows) += V^T P for one chunk, P
 * given as the B operand pb, V^T's operands staged at ops (the chunk's
 * first block of this sub-group's rows); the tile's first chunk (first)
 * rescales O by alpha on the way into its product: beside the product,
 * the compiler writes the scaled O where the product reads it, where a
 * rescale of its own before P's barrier took a copy of O (32 moves at
 * head size 64) at every tile. */
static inline __attribute__((always_inline)) void
sdpa_xe_hpg_pv_staged(private float8 *o, int8 pb, const local uint *ops, bool first, float alpha)
{
SDPA_XE_TILE_LOOP
    for (int e = 0; e < XE_O_BLOCKS; e++) {
        float8 acc = o[e];
        if (first) {
            acc *= alpha;
            if (SC(VS_F16_ACC))
                acc = sdpa_xe_round_half8(acc);
        }
        o[e] = sdpa_xe_mad(as_int8(sdpa_xe_hpg_op_read(ops + e * 8 * SUBGROUP_SIZE)), pb, acc);
        if (SC(VS_F16_ACC))
            o[e] = sdpa_xe_round_half8(o[e]);
    }
}

/*
 * K's A operands staged in local memory (sdpa_xe_hpg_k_stage) likewise:
 * the QBLOCKS sub-groups of a key range read the same K rows. Operand
 * (c, kb) - head-dim step c, keys 8 kb .. 8 kb + 7 of the tile - is 64
 * words at k_ops + (c * key_blocks + kb) * 64, key_blocks = BK / 8, lane
 * by lane (sdpa_xe_hpg_op_read; component m of lane i: word i of key
 * 8 kb + m's step c). A tile is staged during the one
 * before (after its exchange of maxima, when every sub-group is done
 * with its scores), so that no barrier is added; the first before the
 * key loop. Each sub-group stages whole key blocks (n_sg a multiple of
 * key_blocks), their 8 row addresses formed once per tile, one block
 * read per row and step into the registers of one block write; the loop
 * over the steps runs to max_steps, the variant's widest head (a constant
 * once specialized, so that the compiler unrolls it), each step past
 * d_steps skipped. Local memory: 2 * BK * D_PAD bytes.
 */
static inline bool sdpa_xe_hpg_k_staged_ok(bool k_rows, int n_sg, int key_blocks)
{
    return k_rows && n_sg % key_blocks == 0;
}

static inline __attribute__((always_inline)) void
sdpa_xe_hpg_k_stage(local uint *k_ops, const global void *K, long k_head, long ks2, int k0, int sk,
                    int d_steps, int max_steps, int key_blocks, int sg_id, int n_sg)
{
    const int c0 = sg_id / key_blocks, kb = sg_id - c0 * key_blocks;
    const int stride = n_sg / key_blocks;
    const int lane = get_sub_group_local_id();
    /* Lane m reads key 8 kb + m's 8 words of a step, and a block write
     * (component i, lane m: word 8 i + m) puts them where the operand's
     * lane i reads them: one load and one store per lane and step, the row
     * address one multiply per lane, where block reads per row took 8
     * uniform 64-bit multiplies per tile and 8 messages per step. */
    const global uint *row = (const global uint *)((const global ushort *)K + k_head +
                                                   (long)sdpa_imin(k0 + 8 * kb + lane, sk - 1) *
                                                           ks2);
    local uint *dst = k_ops + kb * 8 * SUBGROUP_SIZE;
    for (int j = 0; j < max_steps; j += stride) {
        const int c = j + c0;
        if (c < d_steps)
            sdpa_xe_local_write8(dst + c * key_blocks * 8 * SUBGROUP_SIZE, vload8(c, row));
    }
}

/* Head-dim step c of S^T (XE_S_BLOCKS blocks of 8 keys) = K Q^T from the
 * staged operands, k_ops at the sub-group's first key block. */
static inline __attribute__((always_inline)) void
sdpa_xe_hpg_kq_staged_step(private float8 *s, const local uint *k_ops, int key_blocks,
                           const local uint *q_ops, int c)
{
    const int8 qb = as_int8(sdpa_xe_fwd_b_read(q_ops + c * 8 * SUBGROUP_SIZE));
SDPA_XE_TILE_LOOP
    for (int b = 0; b < XE_S_BLOCKS; b++) {
        const int8 ka =
                as_int8(sdpa_xe_hpg_op_read(k_ops + (c * key_blocks + b) * 8 * SUBGROUP_SIZE));
        s[b] = sdpa_xe_mad(ka, qb, s[b]);
        if (SC(KQ_F16_ACC))
            s[b] = sdpa_xe_round_half8(s[b]);
    }
}

/* S^T = K Q^T from the staged operands over d_steps steps. Where the head
 * fills the variant's widest (max_steps steps, a constant once
 * specialized: every head D = DSPLIT * DSUB) the steps are unrolled, their
 * local addresses constant offsets of one base; a run-time loop took 30
 * instructions of counter and address arithmetic per step of 2 dpas. */
static inline __attribute__((always_inline)) void
sdpa_xe_hpg_kq_staged(private float8 *s, const local uint *k_ops, int key_blocks,
                      const local uint *q_ops, int d_steps, int max_steps)
{
SDPA_XE_TILE_LOOP
    for (int b = 0; b < XE_S_BLOCKS; b++)
        s[b] = 0.0f;
    /* (>=, not ==: the compiler would carry the equality into the loop
     * and count it to d_steps, a run-time value; D <= DSPLIT * DSUB.) */
    if (d_steps >= max_steps) {
        for (int c = 0; c < max_steps; c++)
            sdpa_xe_hpg_kq_staged_step(s, k_ops, key_blocks, q_ops, c);
    } else {
        for (int c = 0; c < d_steps; c++)
            sdpa_xe_hpg_kq_staged_step(s, k_ops, key_blocks, q_ops, c);
    }
}

/* P of 16 keys (lo: keys 0-7, hi: 8-15) as the B operand of O^T += V^T P
 * (sdpa_xe_pack_b's layout and rounding); f16 by a vector conversion,
 * which the GPU compiler writes straight into the packed halves, where
 * sdpa_xe_pack_b's shifts and ors took 48 instructions per 16 keys. */
static inline __attribute__((always_inline)) int8 sdpa_xe_hpg_pack_p(float8 lo, float8 hi)
{
    if (SC(QRY_DT) != SDPA_DT_BF16)
        return as_int8(convert_half16_rte((float16)(lo, hi)));
    return sdpa_xe_pack_b(lo, hi);
}

#endif /* SUBGROUP_SIZE == 8 */

#endif /* SDPA_SPIRV_XE_HPG_LOAD_H */
