/*
 * sdpa_xe_bwd.cl - the backward fast path for Intel GPUs with matrix
 * engines: the gradients of O = softmax(s) V (s = factor * Q K^T + mask)
 * from the forward's log-sum-exp and D_i = rowsum(dO o O), every product on
 * cl_intel_subgroup_matrix_multiply_accumulate (sdpa_xe_intel.h):
 *
 *   S^T = K Q^T, P^T = exp(S^T - LSE)     dP^T = V dO^T
 *   dS^T = P^T o (Z dP^T - D_i)           (Z: the dropout factors)
 *   dV += (P Z)^T dO    dK += factor dS^T Q    dQ^T += factor K^T dS^T
 *
 * Two kernels with the portable ones' contract (kernel_abi_bwd.h, and
 * kernel_abi_xe.h for the tiles and geometry):
 *
 *   sdpa_xe_bwd     a work-group owns Bc keys of one (batch, query head),
 *                   stages their K and V once, and walks the blocks of 16
 *                   queries (staging Q, dO, LSE and D_i of each). The
 *                   sub-groups (m, n) share the scores S^T and dP^T of key
 *                   group n and the block's queries (XE_RM keys each) and
 *                   publish P^T Z and dS^T in local memory; every
 *                   sub-group (m, n) then adds to dV and dK of
 *                   key group n and head-dim columns m * DSUB .., which it
 *                   keeps in registers for the whole walk, and in ATOMIC
 *                   mode adds its columns of dQ to the f32 sums with
 *                   atomics. At the end dK and dV go out as the strides
 *                   buffer says (the gradients, f32 atomic sums for GQA, or
 *                   f32 partial slices in deterministic GQA).
 *   sdpa_xe_bwd_dq  DETERMINISTIC mode: a work-group owns 16 * KGROUPS
 *                   queries (sub-groups (m, n) the 16 of block n and dQ's
 *                   columns m * DSUB ..), stages their Q and dO, walks the
 *                   keys SDPA_XE_KEYS at a time (the sub-groups (m, n)
 *                   sharing the scores of block n), and accumulates dQ^T in
 *                   registers; no atomics.
 *
 * The layouts are the forward's: keys on the accumulators' components,
 * queries on the lanes, so the softmax terms of a query (LSE, D_i, its mask
 * row, its causal band) are one lane's. P^T Z and dS^T go through local
 * memory as [keys][queries] tiles of operand bits, where they are the A
 * operand of dV and dK (keys on the rows, queries along K) and, in the pair
 * layout, the B operand of dQ^T: each score is computed once, by the
 * sub-group of its unit, which holds XE_RM rows of S^T and dP^T beside its
 * dK/dV accumulators.
 *
 * Built per sub-group size and tile (SDPA_XE_KEYS keys, SDPA_XE_DSUB
 * head-dim columns per sub-group), natively and emulated (-emu).
 */
#include "kernel_abi_bwd.h"
#include "kernel_abi_xe.h"
#include "sdpa_bwd_problem.h"
#include "sdpa_bwd_scores.h"
#include "sdpa_bwd_tile.h"
#include "sdpa_common.h"
#include "sdpa_fwd_dropout.h"
#include "sdpa_uniform.h"
#include "sdpa_xe_bwd_stage.h"
#include "sdpa_xe_intel.h"
#include "sdpa_xe_tile.h"

#if !defined(SDPA_XE_KEYS) || (SDPA_XE_KEYS != 8 && SDPA_XE_KEYS != 16)
#error "SDPA_XE_KEYS (keys per sub-group) must be 8 or 16: one product's K dimension at most"
#endif
#if !defined(SDPA_XE_DSUB) || SDPA_XE_DSUB % SUBGROUP_SIZE != 0
#error "SDPA_XE_DSUB (head-dim columns per sub-group) must be a multiple of the sub-group size"
#endif

#define XE_QB (SDPA_XE_BWD_QUERIES / SUBGROUP_SIZE) /* lane blocks of a query block */
#define XE_KB (SDPA_XE_KEYS / 8)                    /* 8-key row blocks of S^T */
#define XE_EB (SDPA_XE_DSUB / SUBGROUP_SIZE)        /* lane blocks of dK, dV columns */
#define XE_DB (SDPA_XE_DSUB / 8)                    /* 8-row blocks of dQ^T */

/* The place of a sub-group: key group n (keys kr0 .. of the key tile) and
 * head-dim columns d0 .. d0 + DSUB of the gradients. */
typedef struct xe_bwd_place {
    int m, n, kr0, d0;
} xe_bwd_place;

static inline xe_bwd_place xe_bwd_place_of(void)
{
    /* Uniform, but only the broadcast tells the GPU compiler so. */
    const int sg_id = sub_group_broadcast((uint)get_local_id(1), 0);
    const int dsplit = SC(WG_M_DBC);
    xe_bwd_place pl;
    pl.n = sg_id / dsplit;
    pl.m = sg_id - pl.n * dsplit;
    pl.kr0 = pl.n * SDPA_XE_KEYS;
    pl.d0 = pl.m * SDPA_XE_DSUB;
    return pl;
}

static inline int xe_bwd_subgroups(void)
{
    return SC(WG_M_DBC) * SC(WG_N_DBC);
}

/* The local-memory tiles: K and V [D / 16][keys][16], Q and dO [D / 16][queries][16] in
 * operand bits, and Q and dO again in the blocked pair layout (the B
 * operands of dK and dV, sdpa_xe_bwd_b_pairs), the staged queries' LSE
 * (log2 units) and D_i. */
typedef struct xe_bwd_tiles {
    local ushort *k, *v, *q, *da, *q2, *da2;
    /* The scores [keys][queries] (ld: queries): P^T Z and dS^T in rows, dS^T
     * in pairs (with 8 zero rows after the last key: the K extent of dQ^T
     * is 16 keys however many a sub-group has). */
    local ushort *pz, *ds, *ds2;
    local float *lse2, *di;
    /* K^T of sdpa_xe_bwd's keys (ATOMIC mode): dQ^T's A operands,
     * SDPA_XE_BWD_KT_BYTES after the tiles above. */
    local ushort *kt;
    int ld, queries;
    int kv_rows; /* rows of K and V, in the blocked layout (sdpa_xe_bwd_tile_index) */
} xe_bwd_tiles;

static inline xe_bwd_tiles xe_bwd_tiles_of(local uint *slm, int keys, int queries, int d)
{
    xe_bwd_tiles t;
    t.ld = SDPA_XE_KV_LD(d);
    t.queries = queries;
    t.kv_rows = keys;
    t.k = (local ushort *)slm;
    t.v = t.k + keys * t.ld;
    t.q = t.v + keys * t.ld;
    t.da = t.q + queries * t.ld;
    t.q2 = t.da + queries * t.ld;
    t.da2 = t.q2 + queries * t.ld;
    t.pz = t.da2 + queries * t.ld;
    t.ds = t.pz + keys * queries;
    t.ds2 = t.ds + keys * queries;
    t.lse2 = (local float *)(t.ds2 + (keys + 8) * queries);
    t.di = t.lse2 + queries;
    t.kt = (local ushort *)(t.di + queries);
    return t;
}

#if SUBGROUP_SIZE == 16
/* One unit of a query tile (Q or dO, `count` rows in the blocked layout and
 * in pairs): rows y .. y + 15 of surface s (tile rows r0 ..) by head-dim
 * columns c0 .. c0 + 15, with three 2D block loads and three block writes. */
static inline __attribute__((always_inline)) void
xe_bwd_stage_unit_2d(local ushort *tile, local ushort *pairs, int count,
                     const private sdpa_xe_surface2d *s, int y, int r0, int c0)
{
    local ushort *run = tile + sdpa_xe_bwd_tile_index(16, 16 * count, r0, c0);
    sdpa_xe_local_write_us8(run, as_ushort8(sdpa_xe_block2d_a8(s, y, c0)));
    sdpa_xe_local_write_us8(run + 8 * 16, as_ushort8(sdpa_xe_block2d_a8(s, y + 8, c0)));
    sdpa_xe_local_write8((local uint *)pairs + ((c0 / 16) * (count / 2) + r0 / 2) * 16,
                         as_uint8(sdpa_xe_block2d_b(s, y, c0)));
}
#endif

/*
 * Two tensors' rows of one head (Q and dO, or K and V) as 2D block-load
 * surfaces (Xe-HPC, Xe2, Xe3; sdpa_xe_tile.h), where the hardware accepts
 * both: `rows` rows of head `head`, head-dim stride 1. Decided once per
 * work-group, so that the loop of the 2D path carries no fallback code. On
 * Xe-HPG (no 2D block loads) the same answer says whether both tensors'
 * rows suit sdpa_xe_bwd_stage_hpg.
 */
typedef struct xe_bwd_pair_surfaces {
#if SUBGROUP_SIZE == 16
    sdpa_xe_surface2d a, b;
#endif
    long a_head, b_head;
} xe_bwd_pair_surfaces;

static inline __attribute__((always_inline)) bool
xe_bwd_pair_surfaces_of(const private sdpa_bwd_problem *x, int head, int rows, const global void *A,
                        const private sdpa_bwd_strides *as, const global void *B,
                        const private sdpa_bwd_strides *bs, private xe_bwd_pair_surfaces *s)
{
    s->a_head = sdpa_bwd_head_offset(as, x->b, head);
    s->b_head = sdpa_bwd_head_offset(bs, x->b, head);
#if SUBGROUP_SIZE == 16
    const bool a_ok = sdpa_xe_surface2d_of(A, s->a_head, x->d, rows, as->s2, &s->a);
    const bool b_ok = sdpa_xe_surface2d_of(B, s->b_head, x->d, rows, bs->s2, &s->b);
    return as->s3 == 1 && bs->s3 == 1 && a_ok && b_ok;
#else
    /* Xe-HPG: whether both tensors' rows can be staged by
     * sdpa_xe_bwd_stage_hpg. */
    return sdpa_xe_bwd_stage_hpg_ok(A, s->a_head, as->s2, as->s3, x->d) &&
           sdpa_xe_bwd_stage_hpg_ok(B, s->b_head, bs->s2, bs->s3, x->d);
#endif
}

/* Stages Q, dO, LSE and D_i of queries [q0, q0 + count) (rows past sq are
 * zero; D_i 0 and LSE -inf there, so that P is 0; LSE and D_i only if ws is
 * set): with 2D block loads (Xe-HPG: sdpa_xe_bwd_stage_hpg) if use_2d
 * (sdpa_xe_bwd passes a constant on each of its two loops), else row by
 * row. */
static inline __attribute__((always_inline)) void
xe_bwd_stage_queries(const private xe_bwd_tiles *t, const private sdpa_bwd_problem *x, int q0,
                     int count, bool use_2d, const private xe_bwd_pair_surfaces *s,
                     const global void *Q, const private sdpa_bwd_strides *qs,
                     const global void *dA, const private sdpa_bwd_strides *das,
                     const global float *ws, const global float *d_i)
{
    const int sg_id = get_sub_group_id(), n_sg = xe_bwd_subgroups();
    const int rows = sdpa_imin(count, x->sq - q0);
#if SUBGROUP_SIZE == 16
    /* Each unit of 16 queries by 16 head-dim columns is one load into the
     * pair layout and two into the blocked rows, and one block write each
     * (rows past Sq and columns past D load as zero). */
    if (use_2d) {
        const int row_blocks = count / 16;
        const int per_tensor = row_blocks * (SDPA_XE_D_PAD(x->d) / 16);
        for (int u = sg_id; u < 2 * per_tensor; u += n_sg) {
            const bool is_q = u < per_tensor;
            const int v = is_q ? u : u - per_tensor;
            const int cb = v / row_blocks, rb = v - cb * row_blocks;
            xe_bwd_stage_unit_2d(is_q ? t->q : t->da, is_q ? t->q2 : t->da2, count,
                                 is_q ? &s->a : &s->b, q0 + 16 * rb, 16 * rb, 16 * cb);
        }
    } else
#else
    if (use_2d) {
        const int dmax = SC(WG_M_DBC) * SDPA_XE_DSUB;
        sdpa_xe_bwd_stage_hpg(t->q, t->q2, count, Q, s->a_head + (long)q0 * qs->s2, qs->s2, rows,
                              x->d, dmax, sg_id, n_sg);
        sdpa_xe_bwd_stage_hpg(t->da, t->da2, count, dA, s->b_head + (long)q0 * das->s2, das->s2,
                              rows, x->d, dmax, sg_id, n_sg);
    } else
#endif
    {
        sdpa_xe_bwd_stage_rows(t->q, t->q2, 16, 16 * count, Q, s->a_head + (long)q0 * qs->s2,
                               qs->s2, qs->s3, count, rows, SDPA_XE_D_PAD(x->d), x->d, sg_id, n_sg);
        sdpa_xe_bwd_stage_rows(t->da, t->da2, 16, 16 * count, dA, s->b_head + (long)q0 * das->s2,
                               das->s2, das->s3, count, rows, SDPA_XE_D_PAD(x->d), x->d, sg_id,
                               n_sg);
    }
    if (!ws)
        return; /* sdpa_xe_bwd reads LSE and D_i in the score units */
    const long row0 = ((long)x->b * x->hq + x->h) * x->sq + q0;
    for (int r = sg_id * SUBGROUP_SIZE + get_sub_group_local_id(); r < count;
         r += n_sg * SUBGROUP_SIZE) {
        t->lse2[r] = r < rows ? ws[row0 + r] * SDPA_LOG2E : -INFINITY;
        t->di[r] = r < rows ? d_i[row0 + r] : 0.0f;
    }
}

/*
 * Dropout of a score unit's 4 keys of one query (XE_RM = 4): the random
 * words of elements n0 .. n0 + 3, word i for element n0 + i, to test with
 * sdpa_dropout_kept. As sdpa_fwd_dropout_keep_bits, but the seed's round
 * keys rk come from the caller (sdpa_dropout_keys, once per work-group),
 * the four words of a Philox block are used at once and the test is on the
 * word's integer bits; a second block only where the run straddles two
 * (n0 % 4 != 0: Sk not a multiple of 4).
 */
static inline uint4 xe_bwd_dropout_words(const private sdpa_dropout_args *dr,
                                         const private sdpa_philox_keys *rk, ulong n0)
{
    const ulong block = dr->offset + n0 / 4;
    const uint skip = (uint)n0 & 3u;
    uint4 w = sdpa_dropout_block_keyed(rk, block);
    if (skip) {
        const uint4 v = sdpa_dropout_block_keyed(rk, block + 1);
        /* Shifted by 2, then 1, on the bits of skip: comparing it with 1
         * and 2 makes LLVM narrow it to an i2, which llvm-spirv rejects. */
        const bool two = (skip & 2u) != 0, one = (skip & 1u) != 0;
        /* Scalar selects: SPIR-V 1.0 has no select of vectors on one bool. */
        const uint a0 = two ? w.z : w.x, a1 = two ? w.w : w.y;
        const uint a2 = two ? v.x : w.z, a3 = two ? v.y : w.w, a4 = two ? v.z : v.x;
        w = (uint4)(one ? a1 : a0, one ? a2 : a1, one ? a3 : a2, one ? a4 : a3);
    }
    return w;
}

/*
 * The score phase is spread over the sub-groups of a key group (or of a
 * query block, in sdpa_xe_bwd_dq) in units of XE_RM keys by one lane block
 * of queries: the products run with XE_RM-row operands, and each sub-group
 * holds XE_RM rows of S^T and dP^T besides its dK and dV accumulators.
 * XE_RM = 4 makes 4 units of a 16 x 16 score tile: every sub-group of a
 * key group computes scores from head size 64 on (DSPLIT = 4), half of them
 * at 128 (DSPLIT = 8).
 */
#ifndef SDPA_XE_BWD_SCORE_ROWS
#define SDPA_XE_BWD_SCORE_ROWS 4
#endif
#define XE_RM SDPA_XE_BWD_SCORE_ROWS
#if XE_RM != 2 && XE_RM != 4 && XE_RM != 8
#error "SDPA_XE_BWD_SCORE_ROWS (keys per score unit) must be 2, 4 or 8"
#endif
#define XE_UNITS (XE_QB * SDPA_XE_KEYS / XE_RM) /* score units of a key group's tile */
#define XE_CAT_(a, b) a##b
#define XE_CAT(a, b) XE_CAT_(a, b)
#if SUBGROUP_SIZE == 16
typedef XE_CAT(short, XE_RM) xe_score_a; /* A operand of XE_RM rows (see sdpa_xe_a8) */
#else
typedef XE_CAT(int, XE_RM) xe_score_a;
#endif
typedef XE_CAT(float, XE_RM) xe_score_acc;

/* acc + a b with XE_RM rows, in the operand type of the problem. */
static inline __attribute__((always_inline)) xe_score_acc xe_bwd_score_mad(xe_score_a a, int8 b,
                                                                           xe_score_acc acc)
{
    if (SC(QRY_DT) == SDPA_DT_BF16)
        return intel_sub_group_bf16_bf16_matrix_mad_k16(a, b, acc);
    return intel_sub_group_f16_f16_matrix_mad_k16(a, b, acc);
}

/* Q^T or dO^T as the B operand of the scores: K along 16 head-dim
 * columns, N on the queries, from this lane's 16 elements at p in the
 * blocked layout (sdpa_xe_b_cols' operand: 32 contiguous bytes per lane). */
static inline __attribute__((always_inline)) int8 xe_bwd_b_query_at(const local ushort *p)
{
    return as_int8(vload8(0, (const local uint *)p));
}

/* The A operand of XE_RM rows of K or V by 16 head-dim columns from run in
 * the blocked layout: XE_RM consecutive runs of 16, one block read for 4
 * rows. */
static inline __attribute__((always_inline)) xe_score_a xe_bwd_score_a_at(const local ushort *run)
{
#if XE_RM == 4
#if SUBGROUP_SIZE == 16
    return as_short4(sdpa_xe_local_read_us4(run));
#else
    return as_int4(sdpa_xe_local_read4((const local uint *)run));
#endif
#else
    const int lane = get_sub_group_local_id();
    xe_score_a a;
#pragma unroll
    for (int m = 0; m < XE_RM; m++) {
#if SUBGROUP_SIZE == 16
        SDPA_XE_AT(a, short, m) = (short)run[m * 16 + lane];
#else
        SDPA_XE_AT(a, int, m) = ((const local int *)(run + m * 16))[lane];
#endif
    }
    return a;
#endif
}

/* Whether a score unit's rows go to bf16 by xe_bwd_bf16_rows. */
static inline bool xe_bwd_vector_bf16(void)
{
    return XE_RM == 4 && SC(QRY_DT) == SDPA_DT_BF16;
}

/* A unit's 4 rows of P^T Z and dS^T to bf16 by IGC's conversion of 8
 * values at once (one instruction each), where the integer rounding of
 * sdpa_f32_to_bf16 took 5 or 6 instructions per value. */
static inline __attribute__((always_inline)) void
xe_bwd_bf16_rows(const private float *pz, const private float *ds, private ushort *pz_bits,
                 private ushort *ds_bits)
{
    const ushort8 b = as_ushort8(__builtin_IB_ftobf_8(
            (float8)(pz[0], pz[1], pz[2], pz[3], ds[0], ds[1], ds[2], ds[3])));
    pz_bits[0] = b.s0, pz_bits[1] = b.s1, pz_bits[2] = b.s2, pz_bits[3] = b.s3;
    ds_bits[0] = b.s4, ds_bits[1] = b.s5, ds_bits[2] = b.s6, ds_bits[3] = b.s7;
}

#if SUBGROUP_SIZE == 8
/* Xe-HPG: dS^T's pairs (the B operands of dQ^T) lane by lane, so that an
 * operand is one 32-byte load per lane where the pair rows took 8 loads:
 * the word of keys 2p, 2p + 1 (p = row / 2) and query column c is word
 * p % 8 of the 8 of (16-key block p / 8, column c). */
static inline int xe_bwd_ds2_word(int queries, int row, int c)
{
    const uint p = (uint)row >> 1;
    return (int)(((p >> 3) * (uint)queries + (uint)c) * 8 + (p & 7));
}
#endif

/*
 * Stores a unit's XE_RM rows of P^T Z and dS^T (this lane's column c0 +
 * lane of key rows row0 ..) into the score tiles. Where a tile row is one
 * lane block (16 queries on 16 lanes) the rows are consecutive runs of 16:
 * one block write per tile instead of a store per element and tile, each
 * with its own address; dS^T's pairs are 32-bit words of two rows (row0 is
 * even).
 */
static inline __attribute__((always_inline)) void
xe_bwd_put_scores(const private xe_bwd_tiles *t, int row0, int c0, const private ushort *pz_rows,
                  const private ushort *ds_rows)
{
    const int lane = get_sub_group_local_id();
#if SUBGROUP_SIZE == 16 && XE_RM == 4
    if (t->queries == SUBGROUP_SIZE) {
        const ushort4 pz = (ushort4)(pz_rows[0], pz_rows[1], pz_rows[2], pz_rows[3]);
        const ushort4 ds = (ushort4)(ds_rows[0], ds_rows[1], ds_rows[2], ds_rows[3]);
        sdpa_xe_local_write_us4(t->pz + row0 * SUBGROUP_SIZE, pz);
        sdpa_xe_local_write_us4(t->ds + row0 * SUBGROUP_SIZE, ds);
        sdpa_xe_local_write2((local uint *)t->ds2 + (row0 >> 1) * SUBGROUP_SIZE, as_uint2(ds));
        return;
    }
#endif
    const int col = c0 + lane;
#if SUBGROUP_SIZE == 8
    /* The rows from one address each; dS^T's pairs in the lane-by-lane
     * layout (xe_bwd_ds2_word): this lane's XE_RM / 2 words are
     * consecutive, one store. */
    local ushort *pz = t->pz + row0 * t->queries + col, *ds = t->ds + row0 * t->queries + col;
    SDPA_XE_TILE_LOOP
    for (int m = 0; m < XE_RM; m++) {
        pz[m * t->queries] = pz_rows[m];
        ds[m * t->queries] = ds_rows[m];
    }
    local uint *pairs = (local uint *)t->ds2 + xe_bwd_ds2_word(t->queries, row0, col);
    SDPA_XE_TILE_LOOP
    for (int j = 0; j < XE_RM / 2; j++)
        pairs[j] = (uint)ds_rows[2 * j] | (uint)ds_rows[2 * j + 1] << 16;
#else
    SDPA_XE_TILE_LOOP
    for (int m = 0; m < XE_RM; m++) {
        const int row = row0 + m;
        t->pz[row * t->queries + col] = pz_rows[m];
        t->ds[row * t->queries + col] = ds_rows[m];
        t->ds2[((row >> 1) * t->queries + col) * 2 + (row & 1)] = ds_rows[m];
    }
#endif
}

/*
 * Score units first, first + step, .. of the KEYS keys key0 .. (key tile
 * rows kr0 ..) by the queries q0 .. (query tile rows qr0 .., XE_QB lane
 * blocks): S^T and dP^T from the tiles, then P Z and dS per element (P = 0
 * outside the mask, the causal band, the keys and the queries), written to
 * the score tiles at rows kr0 .., columns qr0 .. . ds_out (WITH_DS in the
 * key-block pass) receives dS.
 */
/* What the scores of this lane's query need (query tile row qr + lane,
 * query q0 + lane): LSE (log2 units) and D_i, from global memory where
 * lse_global (sdpa_xe_bwd: staging them per query block cost a divergent
 * branch and local-memory round trips), else from the tiles; the last key
 * it sees (-1: none, past Sq or a row without any key), so that a score's
 * bounds are one compare; its mask row. */
typedef struct xe_bwd_query_terms {
    int q, last_key;
    float lse2, di;
    long m_row;
} xe_bwd_query_terms;

static inline __attribute__((always_inline)) xe_bwd_query_terms
xe_bwd_query_terms_of(const private xe_bwd_tiles *t, const private sdpa_bwd_problem *x, int qr,
                      int q0, bool lse_global, const global float *lse_head,
                      const global float *di_head)
{
    const int lane = get_sub_group_local_id();
    xe_bwd_query_terms qt;
    const int col = qr + lane;
    qt.q = q0 + lane;
    const int q_in = sdpa_imin(qt.q, x->sq - 1);
    qt.lse2 = lse_global ? lse_head[q_in] * SDPA_LOG2E : t->lse2[col];
    qt.di = lse_global ? di_head[q_in] : t->di[col];
    qt.m_row = x->msk_head + (long)q_in * x->ms2;
    qt.last_key = x->sk - 1;
    if (sdpa_is_causal())
        qt.last_key = sdpa_imin(qt.last_key, qt.q + x->causal_offset);
    if (qt.q >= x->sq || qt.lse2 == -INFINITY)
        qt.last_key = -1;
    return qt;
}

static inline __attribute__((always_inline)) void
xe_bwd_scores(const private xe_bwd_tiles *t, int first, int step, int kr0, int qr0, int key0,
              int q0, const private sdpa_bwd_problem *x, bool lse_global,
              const global float *lse_head, const global float *di_head,
              const private sdpa_philox_keys *rk, global void *ds_out, long ds_head, long dss2,
              long dss3)
{
    const int d_steps = SDPA_XE_D_PAD(x->d) / SDPA_XE_D_STEP;
    const uint keep_below = SC(WITH_DROPOUT) ? sdpa_dropout_keep_threshold(x->drop.p) : 0;
#if XE_QB == 1
    /* One lane block of queries: its terms are the same in every unit. */
    const xe_bwd_query_terms qt =
            xe_bwd_query_terms_of(t, x, qr0, q0, lse_global, lse_head, di_head);
#endif
    for (int u = first; u < XE_UNITS; u += step) {
        /* Unsigned: a signed division by a power of two costs a fix-up. */
        const int qb = XE_QB == 1 ? 0 : (int)((uint)u / (SDPA_XE_KEYS / XE_RM));
        /* the unit's first key */
        const int r0 = (int)((uint)u % (SDPA_XE_KEYS / XE_RM)) * XE_RM;
        const int qr = qr0 + qb * SUBGROUP_SIZE;
        /* The operands of head-dim step 0 (K and V from rows kr0 + r0 of
         * the blocked tiles, Q and dO from this lane's row), a step on
         * being a fixed distance on in each tile: pointers stepped through
         * the loop, not addresses recomputed from the step's index. */
        const local ushort *ka = t->k + sdpa_xe_bwd_tile_index(16, 16 * t->kv_rows, kr0 + r0, 0);
        const local ushort *qa = t->q + sdpa_xe_bwd_tile_index(16, 16 * t->queries,
                                                               qr + get_sub_group_local_id(), 0);
        const int kv_gap = (int)(t->v - t->k), qd_gap = (int)(t->da - t->q);
        const int k_step = 16 * t->kv_rows, q_step = 16 * t->queries;
        /* The first step before the loop: its products start from zero,
         * without zeroed accumulators to copy. */
        xe_score_acc st = xe_bwd_score_mad(xe_bwd_score_a_at(ka), xe_bwd_b_query_at(qa), 0.0f);
        xe_score_acc dpt = xe_bwd_score_mad(xe_bwd_score_a_at(ka + kv_gap),
                                            xe_bwd_b_query_at(qa + qd_gap), 0.0f);
#if SUBGROUP_SIZE == 8
        /* Xe-HPG: where the head fills the variant's widest (max_steps, a
         * constant once specialized) IGC unrolls the steps (no pragma:
         * clang cannot see the trip count), their local addresses
         * constant offsets of the first step's; the run-time loop took 11
         * instructions of counter and address arithmetic per dpas. */
        const int max_steps = SDPA_XE_D_PAD(SC(WG_M_DBC) * SDPA_XE_DSUB) / SDPA_XE_D_STEP;
        if (d_steps >= max_steps) {
            for (int c = 1; c < max_steps; c++) {
                st = xe_bwd_score_mad(xe_bwd_score_a_at(ka + c * k_step),
                                      xe_bwd_b_query_at(qa + c * q_step), st);
                dpt = xe_bwd_score_mad(xe_bwd_score_a_at(ka + kv_gap + c * k_step),
                                       xe_bwd_b_query_at(qa + qd_gap + c * q_step), dpt);
            }
        } else
#endif
        for (int c = 1; c < d_steps; c++) {
            ka += k_step;
            qa += q_step;
            st = xe_bwd_score_mad(xe_bwd_score_a_at(ka), xe_bwd_b_query_at(qa), st);
            dpt = xe_bwd_score_mad(xe_bwd_score_a_at(ka + kv_gap), xe_bwd_b_query_at(qa + qd_gap),
                                   dpt);
        }

#if XE_QB != 1
        const xe_bwd_query_terms qt = xe_bwd_query_terms_of(t, x, qr, q0 + qb * SUBGROUP_SIZE,
                                                            lse_global, lse_head, di_head);
#endif
        const int q = qt.q, last_key = qt.last_key;
        const float lse2 = qt.lse2, di = qt.di;
        const long m_row = qt.m_row;
        const ulong n0 = x->drop_head + (ulong)q * (ulong)x->sk + (ulong)(key0 + r0);
#if XE_RM == 4
        const uint4 words = SC(WITH_DROPOUT) ? xe_bwd_dropout_words(&x->drop, rk, n0) : 0;
#else
        const uint keep = SC(WITH_DROPOUT) ? sdpa_fwd_dropout_keep_bits(&x->drop, n0, XE_RM,
                                                                        key0 + r0, 0, false, 0)
                                           : ~0u;
#endif
        /* The unit's rows of P^T Z and dS^T, kept for block writes: as
         * operand bits, or (xe_bwd_vector_bf16) as floats to convert at
         * once. */
        ushort pz_bits[XE_RM], ds_bits[XE_RM];
        float pz_rows[XE_RM], ds_rows[XE_RM];
        SDPA_XE_TILE_LOOP
        for (int m = 0; m < XE_RM; m++) {
            const int key = key0 + r0 + m;
            float score = SDPA_XE_AT(st, float, m);
            if (SC(MASK_KIND) == SDPA_MASK_KIND_BUFFER)
                score = fma(sdpa_load(x->msk, m_row + (long)sdpa_imin(key, x->sk - 1) * x->ms3,
                                      SC(MSK_DT)),
                            SDPA_LOG2E, score * x->log2_factor) -
                        lse2;
            else
                score = fma(score, x->log2_factor, -lse2);
            const bool valid = key <= last_key;
            const float p = valid ? exp2(score) : 0.0f;
#if XE_RM == 4
            const bool kept = sdpa_dropout_kept(SDPA_XE_AT(words, uint, m), keep_below);
#else
            const bool kept = (keep >> m) & 1;
#endif
            const float pz = SC(WITH_DROPOUT) ? (kept ? p * x->drop.keep_scale : 0.0f) : p;
            const float dp = SDPA_XE_AT(dpt, float, m);
            /* 0 outside the mask whatever dP and D_i hold. */
            const float ds = valid ? fma(pz, dp, -p * di) : 0.0f;
            pz_rows[m] = pz;
            ds_rows[m] = ds;
            if (!xe_bwd_vector_bf16()) {
                pz_bits[m] = sdpa_xe_to_operand(pz);
                ds_bits[m] = sdpa_xe_to_operand(ds);
            }
            if (SC(WITH_DS) && ds_out && q < x->sq && key < x->sk)
                sdpa_store(ds_out, ds_head + (long)q * dss2 + (long)key * dss3, SC(DS_DT), ds);
        }
        if (xe_bwd_vector_bf16())
            xe_bwd_bf16_rows(pz_rows, ds_rows, pz_bits, ds_bits);
        xe_bwd_put_scores(t, kr0 + r0, qr, pz_bits, ds_bits);
    }
}

/* The A operand of score rows r0 .. r0 + 7 (P^T Z or dS^T, the 16 queries
 * of a block along K): 8 rows of 16 elements one after the other in the
 * score tile of sdpa_xe_bwd (ld = 16 queries), so one block read. */
static inline __attribute__((always_inline)) sdpa_xe_a8 xe_bwd_a_score_rows(const local ushort *s,
                                                                            int r0)
{
#if SUBGROUP_SIZE == 16
    return as_short8(sdpa_xe_local_read_us8(s + r0 * SDPA_XE_BWD_QUERIES));
#else
    return as_int8(sdpa_xe_local_read8((const local uint *)(s + r0 * SDPA_XE_BWD_QUERIES)));
#endif
}

/* K^T as the A operand of dQ^T: rows d0 .. d0 + 7 (a multiple of 8) of
 * the head dimension, K along the KEYS keys from key tile row kr0 (zeros
 * past them): each lane reads 8 contiguous elements of its key's row in the
 * blocked layout (sdpa_xe_a_cols' operand). */
static inline __attribute__((always_inline)) sdpa_xe_a8 xe_bwd_a_kt(const private xe_bwd_tiles *t,
                                                                   int kr0, int d0)
{
    const int lane = get_sub_group_local_id();
    const int k = SUBGROUP_SIZE == 16 ? lane : 2 * lane; /* this lane's (first) key */
    const int cpitch = 16 * t->kv_rows;
    const ushort8 zero = 0;
    const ushort8 run0 =
            k < SDPA_XE_KEYS ? vload8(0, t->k + sdpa_xe_bwd_tile_index(16, cpitch, kr0 + k, d0))
                             : zero;
    const ushort8 run1 =
            SUBGROUP_SIZE == 8 && k + 1 < SDPA_XE_KEYS
                    ? vload8(0, t->k + sdpa_xe_bwd_tile_index(16, cpitch, kr0 + k + 1, d0))
                    : zero;
    return sdpa_xe_a_from_runs(run0, run1);
}

/* dS^T as the B operand of dQ^T: key rows kr0 .. kr0 + 15 (pairs) by the
 * queries at score columns c0 .. (one lane block); one block read where a
 * tile row is one lane block (16 queries on 16 lanes). */
static inline __attribute__((always_inline)) int8 xe_bwd_b_ds(const private xe_bwd_tiles *t,
                                                              int kr0, int c0)
{
#if SUBGROUP_SIZE == 8
    return as_int8(vload8(get_sub_group_local_id(),
                          (const local uint *)t->ds2 + xe_bwd_ds2_word(t->queries, kr0, c0)));
#else
    return t->queries == SUBGROUP_SIZE
                   ? as_int8(sdpa_xe_local_read8((const local uint *)t->ds2 +
                                                 (kr0 / 2) * SUBGROUP_SIZE + c0))
                   : sdpa_xe_b_rows(t->ds2, t->queries, kr0, c0);
#endif
}

/* dQ^T rows d0 .. d0 + 7 of the queries at score columns c0 .. (one lane
 * block) += K^T dS^T over the KEYS keys from key tile row kr0. */
static inline __attribute__((always_inline)) float8
xe_bwd_dq_block(const private xe_bwd_tiles *t, int kr0, int c0, int d0, float8 acc)
{
    return sdpa_xe_mad(xe_bwd_a_kt(t, kr0, d0), xe_bwd_b_ds(t, kr0, c0), acc);
}

/*
 * Stages K^T of the Bc = t->kv_rows keys of sdpa_xe_bwd from its K tile
 * (staged, and a barrier passed) into t->kt, [D / 8][Bc / 16][8][16]:
 * the A operand of head-dim rows d0 .. d0 + 7 and keys 16 kb .. is then
 * 128 consecutive elements, one block read, where gathering it from the K
 * tile costs a read per lane and operand on every query block.
 */
static inline void xe_bwd_stage_kt(const private xe_bwd_tiles *t, int d)
{
    const int kblocks = (t->kv_rows + 15) / 16;
    const int total = kblocks * 16 * SDPA_XE_D_PAD(d);
    const int cpitch = 16 * t->kv_rows;
    for (int i = get_sub_group_id() * SUBGROUP_SIZE + get_sub_group_local_id(); i < total;
         i += xe_bwd_subgroups() * SUBGROUP_SIZE) {
        const int blk = i >> 7, b = blk / kblocks;
        const int key = (blk - b * kblocks) * 16 + (i & 15), col = 8 * b + ((i >> 4) & 7);
        t->kt[i] = key < t->kv_rows ? t->k[sdpa_xe_bwd_tile_index(16, cpitch, key, col)] : 0;
    }
}

/* dQ^T rows d0 .. d0 + 7 (a multiple of 8) of the queries at score columns
 * c0 .. (one lane block) = K^T dS^T over all Bc keys of sdpa_xe_bwd, from
 * t->kt: one product per 16 keys. */
static inline __attribute__((always_inline)) float8
xe_bwd_dq_all_keys(const private xe_bwd_tiles *t, int kblocks, int c0, int d0)
{
    float8 acc = 0.0f;
    const local ushort *a = t->kt + (d0 / 8) * kblocks * 128;
    /* kblocks is a specialization constant's: no unroll pragma (it would
     * fail before specialization), IGC unrolls. */
    for (int kb = 0; kb < kblocks; kb++)
        acc = sdpa_xe_mad(xe_bwd_a_score_rows(a + kb * 128, 0), xe_bwd_b_ds(t, 16 * kb, c0), acc);
    return acc;
}

/* Zeroes the 8 rows of dS^T pairs after the last of `keys` key rows, which
 * dQ^T of the last key group reads (times zeros of K^T). */
static inline void xe_bwd_zero_ds_pad(const private xe_bwd_tiles *t, int keys)
{
#if SUBGROUP_SIZE == 8
    /* Lane by lane (xe_bwd_ds2_word): the words of the pad's 4 key pairs
     * in every column, where a 16-key block is part-filled (else no
     * operand reads past the keys). */
    if (keys % 16 == 0)
        return;
    for (int i = get_sub_group_id() * SUBGROUP_SIZE + get_sub_group_local_id(); i < 4 * t->queries;
         i += xe_bwd_subgroups() * SUBGROUP_SIZE)
        ((local uint *)t->ds2)[xe_bwd_ds2_word(t->queries, keys + 2 * (i & 3), i >> 2)] = 0;
#else
    local uint *pad = (local uint *)t->ds2 + (keys / 2) * t->queries;
    for (int i = get_sub_group_id() * SUBGROUP_SIZE + get_sub_group_local_id(); i < 4 * t->queries;
         i += xe_bwd_subgroups() * SUBGROUP_SIZE)
        pad[i] = 0;
#endif
}

/* row[(c0 + i) * s3] += x[i] atomically for the columns c0 + i below d, if
 * `valid`. Zeros are added too: a test per element costs the GPU a flag
 * register, an atomic add of 0 only bandwidth. */
static inline __attribute__((always_inline)) void xe_bwd_add8(global float *row, int c0, long s3,
                                                              int d, bool valid, float8 x)
{
    if (!valid)
        return;
    global float *p = row + (long)c0 * s3;
    if (c0 + 8 <= d) {
        SDPA_XE_TILE_LOOP
        for (int i = 0; i < 8; i++)
            sdpa_bwd_atomic_add(p + i * s3, SDPA_XE_AT(x, float, i));
    } else {
        /* Rotating instead of indexing x at a run-time position, which
         * would put it in private memory. */
        float8 v = x;
        for (int i = 0; i < d - c0; i++) {
            sdpa_bwd_atomic_add(p + i * s3, v.s0);
            v = v.s12345670;
        }
    }
}

/*
 * One block of 16 queries of sdpa_xe_bwd, from q0: stages its Q, dO, LSE
 * and D_i (2D block loads if use_2d), computes the scores of the
 * sub-group's units, adds to the sub-group's dK and dV and, in ATOMIC
 * mode, its columns of dQ.
 */
static inline __attribute__((always_inline)) void
xe_bwd_query_block(const private xe_bwd_tiles *t, const private sdpa_bwd_problem *x,
                   const private xe_bwd_place *pl, const private sdpa_bwd_all_strides *ly,
                   bool use_2d, const private xe_bwd_pair_surfaces *surf, int q0, int key0,
                   const global void *Q, const global void *dA, const global float *ws,
                   const global float *d_i, const private sdpa_philox_keys *rk,
                   global void *ds_out, long ds_head, long dss2, long dss3,
                   global float *dq_head, private float8 (*dk)[XE_EB], private float8 (*dv)[XE_EB])
{
    const int lane = get_sub_group_local_id();
    const int br = SDPA_XE_BWD_QUERIES;
    barrier(CLK_LOCAL_MEM_FENCE); /* the previous block's readers are done */
    xe_bwd_stage_queries(t, x, q0, br, use_2d, surf, Q, &ly->q, dA, &ly->diff_dst, 0, 0);
    barrier(CLK_LOCAL_MEM_FENCE);
    const long head_rows = ((long)x->b * x->hq + x->h) * x->sq;
    const global float *lse_head = ws + head_rows, *di_head = d_i + head_rows;
    xe_bwd_scores(t, pl->m, SC(WG_M_DBC), pl->kr0, 0, key0, q0, x, true, lse_head, di_head, rk,
                  ds_out, ds_head, dss2, dss3);
    barrier(CLK_LOCAL_MEM_FENCE);

    /* dV += (P Z)^T dO, dK += dS^T Q for the sub-group's columns. */
    SDPA_XE_TILE_LOOP
    for (int kb = 0; kb < XE_KB; kb++) {
        const sdpa_xe_a8 apz = xe_bwd_a_score_rows(t->pz, pl->kr0 + 8 * kb);
        const sdpa_xe_a8 ads = xe_bwd_a_score_rows(t->ds, pl->kr0 + 8 * kb);
        SDPA_XE_TILE_LOOP
        for (int e = 0; e < XE_EB; e++) {
            const int c0 = pl->d0 + e * SUBGROUP_SIZE;
            if (c0 < x->d) {
                dv[kb][e] = sdpa_xe_mad(apz, sdpa_xe_bwd_b_pairs(t->da2, br, c0), dv[kb][e]);
                dk[kb][e] = sdpa_xe_mad(ads, sdpa_xe_bwd_b_pairs(t->q2, br, c0), dk[kb][e]);
            }
        }
    }

    /* dQ^T += factor K^T dS^T, added atomically (ATOMIC mode): each lane
     * adds its query's 8 columns of a block at once. The key groups of the
     * sub-group's columns split their 8-row blocks f and each sums all Bc
     * keys (K^T staged): one atomic add per element and work-group instead
     * of one per key group. */
    if (!SC(DETERMINISTIC)) {
        const int kgroups = SC(WG_N_DBC), kblocks = (SDPA_XE_KEYS * kgroups + 15) / 16;
#if SUBGROUP_SIZE == 8
        /* Xe-HPG: the lane blocks' rows one 64-bit multiply apart (lanes
         * past Sq add nothing: their rows are never touched), the
         * head-dim stride 1 where the host says so. */
        global float *dq_lane = dq_head + (long)(q0 + lane) * ly->dq.s2;
        const long dq_s3 = SC(BWD_UNIT_D_STRIDES) ? 1 : ly->dq.s3;
#endif
        SDPA_XE_TILE_LOOP
        for (int qb = 0; qb < XE_QB; qb++) {
            const int q = q0 + qb * SUBGROUP_SIZE + lane;
#if SUBGROUP_SIZE == 8
            global float *dq_row = dq_lane + (long)(qb * SUBGROUP_SIZE) * ly->dq.s2;
#else
            global float *dq_row = dq_head + (long)sdpa_imin(q, x->sq - 1) * ly->dq.s2;
            const long dq_s3 = ly->dq.s3;
#endif
            SDPA_XE_TILE_LOOP
            for (int f0 = 0; f0 < XE_DB; f0++) {
                /* f0 += kgroups, in a loop that unrolls before specialization. */
                const int f = f0 + pl->n, d0 = pl->d0 + 8 * f;
                if (f0 % kgroups == 0 && f < XE_DB && d0 < x->d)
                    xe_bwd_add8(dq_row, d0, dq_s3, x->d, q < x->sq,
                                xe_bwd_dq_all_keys(t, kblocks, qb * SUBGROUP_SIZE, d0) * x->factor);
            }
        }
    }
}

__attribute__((intel_reqd_sub_group_size(SUBGROUP_SIZE))) kernel void sdpa_xe_bwd(
#include "sdpa_bwd_args.def"
)
{
    const int lane = get_sub_group_local_id();
    const int bc = SDPA_XE_KEYS * SC(WG_N_DBC);
    const int k0 = get_group_id(0) * bc;
    const int keys = sdpa_imin(bc, SK - k0);
    const xe_bwd_place pl = xe_bwd_place_of();
    const sdpa_bwd_problem x = SDPA_BWD_PROBLEM_OF_ARGS();
    const xe_bwd_tiles t = xe_bwd_tiles_of((local uint *)SLM, bc, SDPA_XE_BWD_QUERIES, D);
    const sdpa_bwd_all_strides ly = sdpa_bwd_all_strides_of(STRIDES);
    global void *ds_out = SC(WITH_DS) ? DS : 0;
    const long ds_head = x.b * DS_S0 + (long)x.h * DS_S1;
    const int sg_id = get_sub_group_id(), n_sg = xe_bwd_subgroups();

    /* K and V of the block, once. */
    sdpa_xe_bwd_stage_rows(t.k, 0, 16, 16 * t.kv_rows, K,
                           sdpa_bwd_head_offset(&ly.k, x.b, x.hkv) + (long)k0 * ly.k.s2, ly.k.s2,
                           ly.k.s3, bc, keys, SDPA_XE_D_PAD(D), D, sg_id, n_sg);
    sdpa_xe_bwd_stage_rows(t.v, 0, 16, 16 * t.kv_rows, V,
                           sdpa_bwd_head_offset(&ly.v, x.b, x.hkv) + (long)k0 * ly.v.s2, ly.v.s2,
                           ly.v.s3, bc, keys, SDPA_XE_D_PAD(D), D, sg_id, n_sg);

    xe_bwd_zero_ds_pad(&t, bc);
    if (!SC(DETERMINISTIC)) {
        barrier(CLK_LOCAL_MEM_FENCE); /* K staged; the walk's first barrier guards K^T */
        xe_bwd_stage_kt(&t, D);
    }
    float8 dk[XE_KB][XE_EB], dv[XE_KB][XE_EB];
    SDPA_XE_TILE_LOOP
    for (int kb = 0; kb < XE_KB; kb++)
        SDPA_XE_TILE_LOOP
    for (int e = 0; e < XE_EB; e++)
        dk[kb][e] = dv[kb][e] = 0.0f;
    const int key0 = k0 + pl.kr0;
    global float *dq_head = (global float *)DQ + sdpa_bwd_head_offset(&ly.dq, x.b, x.h);

    const int br = SDPA_XE_BWD_QUERIES;
    int first_block;
    const int blocks = sdpa_bwd_query_blocks(&x, k0, keys, br, &first_block);
    if (SC(WITH_DS))
        sdpa_bwd_zero_ds_unvisited(DS, ds_head, DS_S2, DS_S3, SQ, first_block, blocks, br, k0, keys,
                                   n_sg);

    /* Two copies of the walk, one per way of staging the queries, so that
     * the 2D path's loop holds no row-by-row code (a uniform branch). */
    xe_bwd_pair_surfaces surf;
    const bool use_2d =
            xe_bwd_pair_surfaces_of(&x, x.h, SQ, Q, &ly.q, DIFF_DST, &ly.diff_dst, &surf);
    const sdpa_philox_keys rk = sdpa_dropout_keys(x.drop.seed);
#define XE_BWD_WALK(two_d)                                                                         \
    for (int step = 0; step < blocks; step++)                                                      \
    xe_bwd_query_block(&t, &x, &pl, &ly, two_d, &surf,                                             \
                       (first_block + sdpa_bwd_query_block_at(step, blocks)) * br, key0, Q,        \
                       DIFF_DST, WS, D_I, &rk, ds_out, ds_head, DS_S2, DS_S3, dq_head, dk, dv)
    if (use_2d)
        XE_BWD_WALK(true);
    else
        XE_BWD_WALK(false);
#undef XE_BWD_WALK

    /* dK and dV of the sub-group's keys and columns: into the gradients (one
     * query head per K/V head), atomically into f32 sums (DKV_ATOMIC), or
     * into this query head's f32 partial slice (DETERMINISTIC with GQA).
     * Every key below Sk is written, zeros included (atomic adds of 0 are
     * skipped). */
    const bool partial = SC(DETERMINISTIC) && SC(KV_GROUP_SIZE) > 1;
    sdpa_bwd_out out;
    out.atomic = !SC(DETERMINISTIC) && SC(DKV_ATOMIC);
    out.f32 = partial || out.atomic;
    const int head = partial ? x.h : x.hkv;
    const long dk_head = sdpa_bwd_head_offset(&ly.dk, x.b, head);
    const long dv_head = sdpa_bwd_head_offset(&ly.dv, x.b, head);
    SDPA_XE_TILE_LOOP
    for (int kb = 0; kb < XE_KB; kb++)
        SDPA_XE_TILE_LOOP
    for (int e = 0; e < XE_EB; e++) {
        const int col = pl.d0 + e * SUBGROUP_SIZE + lane;
        SDPA_XE_TILE_LOOP
        for (int m = 0; m < 8; m++) {
            const int key = key0 + 8 * kb + m;
            if (key < SK && col < D) {
                sdpa_bwd_unstage_one(DK, dk_head + (long)key * ly.dk.s2 + (long)col * ly.dk.s3,
                                     SDPA_XE_AT(dk[kb][e], float, m) * x.factor, out, SC(QRY_DT));
                sdpa_bwd_unstage_one(DV, dv_head + (long)key * ly.dv.s2 + (long)col * ly.dv.s3,
                                     SDPA_XE_AT(dv[kb][e], float, m), out, SC(QRY_DT));
            }
        }
    }
}

/* Stages K and V of keys [k0, k0 + SDPA_XE_KEYS) into the blocked tiles
 * (rows past sk zero): 2D block loads of 8 keys by 16 head-dim columns and
 * one block write each if use_2d, else row by row. */
static inline __attribute__((always_inline)) void
xe_bwd_stage_keys(const private xe_bwd_tiles *t, const private sdpa_bwd_problem *x, int k0,
                  bool use_2d, const private xe_bwd_pair_surfaces *s, const global void *K,
                  const private sdpa_bwd_strides *ks, const global void *V,
                  const private sdpa_bwd_strides *vs)
{
    const int sg_id = get_sub_group_id(), n_sg = xe_bwd_subgroups();
    const int cpitch = 16 * t->kv_rows;
#if SUBGROUP_SIZE == 16
    if (use_2d) {
        const int row_blocks = SDPA_XE_KEYS / 8;
        const int per_tensor = row_blocks * (SDPA_XE_D_PAD(x->d) / 16);
        for (int u = sg_id; u < 2 * per_tensor; u += n_sg) {
            const bool is_k = u < per_tensor;
            const int v = is_k ? u : u - per_tensor;
            const int cb = v / row_blocks, rb = v - cb * row_blocks;
            local ushort *run =
                    (is_k ? t->k : t->v) + sdpa_xe_bwd_tile_index(16, cpitch, 8 * rb, 16 * cb);
            sdpa_xe_local_write_us8(run, as_ushort8(sdpa_xe_block2d_a8(is_k ? &s->a : &s->b,
                                                                       k0 + 8 * rb, 16 * cb)));
        }
        return;
    }
#endif
    const int keys = sdpa_imin(SDPA_XE_KEYS, x->sk - k0);
    sdpa_xe_bwd_stage_rows(t->k, 0, 16, cpitch, K, s->a_head + (long)k0 * ks->s2, ks->s2, ks->s3,
                           SDPA_XE_KEYS, keys, SDPA_XE_D_PAD(x->d), x->d, sg_id, n_sg);
    sdpa_xe_bwd_stage_rows(t->v, 0, 16, cpitch, V, s->b_head + (long)k0 * vs->s2, vs->s2, vs->s3,
                           SDPA_XE_KEYS, keys, SDPA_XE_D_PAD(x->d), x->d, sg_id, n_sg);
}

/* One key step of sdpa_xe_bwd_dq: stages the keys from k0, computes the
 * scores of the sub-group's units of query block qr0 (queries from q0) and
 * adds K^T dS^T to its dQ^T. */
static inline __attribute__((always_inline)) void
xe_bwd_dq_key_step(const private xe_bwd_tiles *t, const private sdpa_bwd_problem *x,
                   const private xe_bwd_place *pl, int qr0, int q0, int k0, bool use_2d,
                   const private xe_bwd_pair_surfaces *s, const global void *K,
                   const private sdpa_bwd_strides *ks, const global void *V,
                   const private sdpa_bwd_strides *vs, const private sdpa_philox_keys *rk,
                   private float8 (*dq)[XE_QB])
{
    barrier(CLK_LOCAL_MEM_FENCE); /* queries staged; the previous keys' readers done */
    xe_bwd_stage_keys(t, x, k0, use_2d, s, K, ks, V, vs);
    barrier(CLK_LOCAL_MEM_FENCE);
    xe_bwd_scores(t, pl->m, SC(WG_M_DBC), 0, qr0, k0, q0, x, false, 0, 0, rk, 0, 0, 0, 0);
    barrier(CLK_LOCAL_MEM_FENCE);
    SDPA_XE_TILE_LOOP
    for (int qb = 0; qb < XE_QB; qb++)
        SDPA_XE_TILE_LOOP
    for (int f = 0; f < XE_DB; f++)
        if (pl->d0 + 8 * f < x->d)
            dq[f][qb] = xe_bwd_dq_block(t, 0, qr0 + qb * SUBGROUP_SIZE, pl->d0 + 8 * f, dq[f][qb]);
}

__attribute__((intel_reqd_sub_group_size(SUBGROUP_SIZE))) kernel void sdpa_xe_bwd_dq(
#include "sdpa_bwd_args.def"
)
{
    const int lane = get_sub_group_local_id();
    const int bq = SDPA_XE_BWD_QUERIES * SC(WG_N_DBC);
    const xe_bwd_place pl = xe_bwd_place_of();
    const int q0 = get_group_id(0) * bq;
    const int queries = sdpa_imin(bq, SQ - q0);
    const sdpa_bwd_problem x = SDPA_BWD_PROBLEM_OF_ARGS();
    const xe_bwd_tiles t = xe_bwd_tiles_of((local uint *)SLM, SDPA_XE_KEYS, bq, D);
    const sdpa_bwd_all_strides ly = sdpa_bwd_all_strides_of(STRIDES);

    xe_bwd_pair_surfaces surf;
    const bool use_2d =
            xe_bwd_pair_surfaces_of(&x, x.h, SQ, Q, &ly.q, DIFF_DST, &ly.diff_dst, &surf);
    xe_bwd_stage_queries(&t, &x, q0, bq, use_2d, &surf, Q, &ly.q, DIFF_DST, &ly.diff_dst, WS, D_I);
    xe_bwd_zero_ds_pad(&t, SDPA_XE_KEYS);
    /* This sub-group's 16 queries: query block n of the work-group. */
    const int qr0 = pl.n * SDPA_XE_BWD_QUERIES;
    float8 dq[XE_DB][XE_QB];
    SDPA_XE_TILE_LOOP
    for (int f = 0; f < XE_DB; f++)
        SDPA_XE_TILE_LOOP
    for (int qb = 0; qb < XE_QB; qb++)
        dq[f][qb] = 0.0f;

    /* Keys the work-group's queries can see: all, or up to the causal band
     * of its last query. */
    int k_end = SK;
    if (sdpa_is_causal())
        k_end = sdpa_iclamp(q0 + queries - 1 + x.causal_offset + 1, 0, SK);
    /* Two copies of the key loop, one per way of staging K and V (see
     * sdpa_xe_bwd); one on Xe-HPG, whose keys are staged row by row
     * (xe_bwd_stage_keys): there the answer is about Q and dO's staging. */
    xe_bwd_pair_surfaces kv;
    const bool kv_2d = xe_bwd_pair_surfaces_of(&x, x.hkv, SK, K, &ly.k, V, &ly.v, &kv) &&
                       SUBGROUP_SIZE == 16;
    const sdpa_philox_keys rk = sdpa_dropout_keys(x.drop.seed);
#define XE_BWD_DQ_WALK(two_d)                                                                      \
    for (int k0 = 0; k0 < k_end; k0 += SDPA_XE_KEYS)                                               \
    xe_bwd_dq_key_step(&t, &x, &pl, qr0, q0 + qr0, k0, two_d, &kv, K, &ly.k, V, &ly.v, &rk, dq)
    if (kv_2d)
        XE_BWD_DQ_WALK(true);
    else
        XE_BWD_DQ_WALK(false);
#undef XE_BWD_DQ_WALK

    /* dQ of the sub-group's queries and columns, in Q's dtype. */
    const long dq_head = sdpa_bwd_head_offset(&ly.dq, x.b, x.h);
    SDPA_XE_TILE_LOOP
    for (int qb = 0; qb < XE_QB; qb++) {
        const int q = q0 + qr0 + qb * SUBGROUP_SIZE + lane;
        if (q < SQ)
            SDPA_XE_TILE_LOOP
        for (int f = 0; f < XE_DB; f++)
            SDPA_XE_TILE_LOOP
        for (int i = 0; i < 8; i++) {
            const int col = pl.d0 + 8 * f + i;
            if (col < D)
                sdpa_store(DQ, dq_head + (long)q * ly.dq.s2 + (long)col * ly.dq.s3, SC(QRY_DT),
                           SDPA_XE_AT(dq[f][qb], float, i) * x.factor);
        }
    }
}
