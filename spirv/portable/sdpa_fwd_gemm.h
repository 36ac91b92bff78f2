/*
 * sdpa_fwd_gemm.h - the forward kernel's two small matrix products, as
 * register-blocked micro-kernels over f32 tiles in local memory (their
 * results go to local memory too):
 *
 *   S = K^T Q   lanes run along queries; each lane accumulates a block of
 *               rows (keys, read as sub-group-uniform broadcasts) times a
 *               few query vectors (one query per lane in each vector).
 *   O += V P    lanes run along the head dimension; each lane accumulates a
 *               block of rows (queries: P read as broadcasts) times a few
 *               head-dim vectors of V.
 *
 * Both are the shape of an sgemm micro-kernel: per step of the reduction,
 * RB_VECS vector loads, RB_ROWS broadcasts, RB_ROWS * RB_VECS FMAs, with the
 * accumulators in registers. A sub-group tile is covered by blocks of
 * RB_ROWS rows plus tail blocks of 4, 2 and 1 rows, and by RB_VECS vectors
 * plus a tail of one. The block sizes are compile-time constants: every
 * block helper is always_inline and called with literal sizes, so the
 * accumulator arrays become registers.
 *
 * Register budget. Which device runs a variant follows from its sub-group
 * size (sdpa_device_subgroup_size): 16 runs on the CPU (AVX2: 16 vector
 * registers, two per 16-lane value), on Xe-HPC and later GPUs; 8 runs only
 * on Xe-LP and Xe-HPG (128 registers of 8 f32 lanes per thread). Both use
 * 6 x 1 blocks: 6 accumulators, 1 vector load and 1 broadcast per step. A
 * second vector per block (6 x 2, once sub-group 8's blocks) made Intel's
 * GPU compiler, which unrolls the reduction and hoists its loads, spill on
 * Xe-LP and Xe-HPG (doc/gpu-isa.md). -DSDPA_FWD_RB_ROWS=... and
 * -DSDPA_FWD_RB_VECS=... override them (RB_ROWS must be larger than 4: the
 * tails are blocks of 4, 2 and 1).
 */
#ifndef SDPA_SPIRV_FWD_GEMM_H
#define SDPA_SPIRV_FWD_GEMM_H

#include "sdpa_common.h"
#include "sdpa_fwd_tile.h"
#include "sdpa_uniform.h"

#ifndef SDPA_FWD_RB_ROWS
#define SDPA_FWD_RB_ROWS 6
#endif
#ifndef SDPA_FWD_RB_VECS
#define SDPA_FWD_RB_VECS 1
#endif

/*
 * f16 accumulation (KQ_F16_ACC / VS_F16_ACC). On a GPU the point of an f16
 * accumulator is speed (packed half FMAs, half the registers). This kernel
 * always computes in f32 and only emulates the numerics: every partial sum
 * is rounded to half, as a half-precision accumulator would hold it, so that
 * results match what the f16 path of a GPU kernel produces. It is slower,
 * never faster, on devices without fast half arithmetic.
 */
static inline float sdpa_fwd_fma(float a, float b, float acc, bool f16_acc)
{
    float r = fma(a, b, acc);
    /* A cast (fptrunc, round to nearest even) rather than convert_half_rte:
     * a plain instruction, so the choice stays a select instead of a branch
     * around a call in the innermost loop. */
    return f16_acc ? (float)(half)r : r;
}

/*
 * One block of S = K^T Q, reducing over d < d_end (d_end >= 1), stored to
 * s[(i0 + i) * s_ld + (j0 + j) * SUBGROUP_SIZE] for i < RM keys and j < RN
 * query vectors (s points at this lane's query of vector 0, key 0).
 *   k: key 0 of the sub-group's rows; element (key, d) at
 *      k[key * k_key_stride + d * k_d_stride] (read as broadcasts)
 *   q: query column of this lane for vector 0; element (d, vector j) at
 *      q[d * q_ld + j * SUBGROUP_SIZE]
 * Generated per block size by a macro: RM and RN must be literals for the
 * accumulators to become registers (constant propagation through inlining
 * is not enough for clang -O2 to unroll and scalarize them).
 * The reduction is a do-while: a zero-trip guard gives LLVM an exit block it
 * may lay out before its dominator, which llvm-spirv-15 emits as invalid
 * SPIR-V block order.
 */
/* The reduction loop of a KQ block (see below); F16 selects emulated half
 * accumulation. A do-while: d_end >= 1, and a zero-trip guard gives LLVM an
 * exit block it may lay out before its dominator, which llvm-spirv-15 emits
 * as invalid SPIR-V block order. */
#define SDPA_FWD_KQ_LOOP(RM, RN, F16)                                                              \
    do {                                                                                           \
        int d = 0;                                                                                 \
        do {                                                                                       \
            float qv[RN];                                                                          \
            _Pragma("unroll") for (int j = 0; j < RN; j++) qv[j] =                                 \
                    qb[d * q_ld + j * SUBGROUP_SIZE];                                              \
            _Pragma("unroll") for (int i = 0; i < RM; i++)                                         \
            {                                                                                      \
                float kv = kb[i * k_key_stride + d * k_d_stride];                                  \
                _Pragma("unroll") for (int j = 0; j < RN; j++) acc[i][j] =                         \
                        sdpa_fwd_fma(kv, qv[j], acc[i][j], F16);                                   \
            }                                                                                      \
        } while (++d < d_end);                                                                     \
    } while (0)

/* The reduction loop of a VS block, over keys >= 1; VLOAD(key, j) is
 * this lane's element of V for the key and vector j of the block. */
#define SDPA_FWD_VS_LOOP(RM, RN, F16, VLOAD)                                                       \
    do {                                                                                           \
        int key = 0;                                                                               \
        do {                                                                                       \
            float vv[RN];                                                                          \
            _Pragma("unroll") for (int j = 0; j < RN; j++) vv[j] = VLOAD(key, j);                  \
            _Pragma("unroll") for (int i = 0; i < RM; i++)                                         \
            {                                                                                      \
                float pv = pb[key * p_ld + i];                                                     \
                _Pragma("unroll") for (int j = 0; j < RN; j++) acc[i][j] =                         \
                        sdpa_fwd_fma(pv, vv[j], acc[i][j], F16);                                   \
            }                                                                                      \
        } while (++key < keys);                                                                    \
    } while (0)

#define SDPA_FWD_DEFINE_KQ_BLOCK_(RM, RN)                                                          \
    static inline __attribute__((always_inline)) void sdpa_fwd_kq_block_##RM##x##RN(               \
            local float *s, int s_ld, int i0, int j0, local const float *k, int k_key_stride,      \
            int k_d_stride, local const float *q, int q_ld, int d_end)                             \
    {                                                                                              \
        const bool f16_acc = SC(KQ_F16_ACC);                                                       \
        float acc[RM][RN];                                                                         \
        _Pragma("unroll") for (int i = 0; i < RM; i++)                                             \
                _Pragma("unroll") for (int j = 0; j < RN; j++) acc[i][j] = 0.0f;                   \
        local const float *kb = k + i0 * k_key_stride;                                             \
        local const float *qb = q + j0 * SUBGROUP_SIZE;                                            \
        /* Two copies of the loop, so that the plain one has nothing but                           \
         * FMAs (a select per FMA invites clang's SLP vectorizer to pack the                       \
         * accumulators, which the device compiler then shuffles per step). */                     \
        if (f16_acc)                                                                               \
            SDPA_FWD_KQ_LOOP(RM, RN, true);                                                        \
        else                                                                                       \
            SDPA_FWD_KQ_LOOP(RM, RN, false);                                                       \
        _Pragma("unroll") for (int i = 0; i < RM; i++)                                             \
                _Pragma("unroll") for (int j = 0; j < RN; j++)                                     \
                        s[(i0 + i) * s_ld + (j0 + j) * SUBGROUP_SIZE] = acc[i][j];                 \
    }

/*
 * One block of O = alpha * O + V P, reducing over `keys` (>= 1) keys, in
 * o[(i0 + i) * o_ld + (j0 + j) * SUBGROUP_SIZE] for i < RM queries and
 * j < RN head-dim vectors (o points at this lane's element of vector 0,
 * query 0).
 *   v: this lane's head-dim element of vector 0, key 0; element (key,
 *      vector j) at v[key * v_ld + j * SUBGROUP_SIZE]; or, with
 *      V_FROM_GLOBAL, read from V itself through vg (sdpa_fwd_v_global)
 *   p: query 0 of the sub-group's rows; element (key, query) at
 *      p[key * p_ld + query] (read as broadcasts)
 *   alpha: per-query rescaling of the old O (broadcasts)
 * With VS_F16_ACC the tile's contribution is accumulated from zero in
 * (emulated) half precision and then added to the f32 O, as a GPU kernel
 * with a half accumulator does per key tile.
 */
#define SDPA_FWD_VS_LOCAL_V(key, j) vb[(key)*v_ld + (j)*SUBGROUP_SIZE]
#define SDPA_FWD_VS_GLOBAL_V(key, j) sdpa_fwd_v_global(vg, key, (j0 + (j)) * SUBGROUP_SIZE)
#define SDPA_FWD_DEFINE_VS_BLOCK_(RM, RN)                                                          \
    static inline __attribute__((always_inline)) void sdpa_fwd_vs_block_##RM##x##RN(               \
            local float *o, int o_ld, int i0, int j0, local const float *v, int v_ld,              \
            const private sdpa_fwd_kv_source *vg, local const float *p, int p_ld,                   \
            local const float *alpha, int keys)                                                    \
    {                                                                                              \
        const bool f16_acc = SC(VS_F16_ACC);                                                       \
        /* O * alpha through fma(), an opaque call to clang: a plain multiply                      \
         * lets clang's SLP vectorizer pack the accumulators into one vector                       \
         * that the device compiler then unpacks in every step of the loop. */                     \
        float acc[RM][RN];                                                                         \
        _Pragma("unroll") for (int i = 0; i < RM; i++) _Pragma("unroll") for (int j = 0; j < RN;   \
                                                                              j++) acc[i][j] =     \
                f16_acc ? 0.0f                                                                     \
                        : fma(o[(i0 + i) * o_ld + (j0 + j) * SUBGROUP_SIZE], alpha[i0 + i], 0.0f); \
        local const float *vb = v + j0 * SUBGROUP_SIZE;                                            \
        local const float *pb = p + i0;                                                            \
        if (sdpa_fwd_v_from_global() && f16_acc)                                                   \
            SDPA_FWD_VS_LOOP(RM, RN, true, SDPA_FWD_VS_GLOBAL_V);                                  \
        else if (sdpa_fwd_v_from_global())                                                         \
            SDPA_FWD_VS_LOOP(RM, RN, false, SDPA_FWD_VS_GLOBAL_V);                                 \
        else if (f16_acc)                                                                          \
            SDPA_FWD_VS_LOOP(RM, RN, true, SDPA_FWD_VS_LOCAL_V);                                   \
        else                                                                                       \
            SDPA_FWD_VS_LOOP(RM, RN, false, SDPA_FWD_VS_LOCAL_V);                                  \
        _Pragma("unroll") for (int i = 0; i < RM; i++)                                             \
                _Pragma("unroll") for (int j = 0; j < RN; j++)                                     \
        {                                                                                          \
            local float *dst = &o[(i0 + i) * o_ld + (j0 + j) * SUBGROUP_SIZE];                     \
            *dst = f16_acc ? fma(*dst, alpha[i0 + i], acc[i][j]) : acc[i][j];                      \
        }                                                                                          \
    }

/* Expands RM and RN before pasting them into the name. */
#define SDPA_FWD_DEFINE_KQ_BLOCK(RM, RN) SDPA_FWD_DEFINE_KQ_BLOCK_(RM, RN)
#define SDPA_FWD_DEFINE_VS_BLOCK(RM, RN) SDPA_FWD_DEFINE_VS_BLOCK_(RM, RN)

/* Block sizes: RB_ROWS and the tails 4, 2, 1, times RB_VECS and 1. */
#define SDPA_FWD_DEFINE_BLOCKS(RN)                                                                 \
    SDPA_FWD_DEFINE_KQ_BLOCK(SDPA_FWD_RB_ROWS, RN)                                                 \
    SDPA_FWD_DEFINE_KQ_BLOCK(4, RN)                                                                \
    SDPA_FWD_DEFINE_KQ_BLOCK(2, RN)                                                                \
    SDPA_FWD_DEFINE_KQ_BLOCK(1, RN)                                                                \
    SDPA_FWD_DEFINE_VS_BLOCK(SDPA_FWD_RB_ROWS, RN)                                                 \
    SDPA_FWD_DEFINE_VS_BLOCK(4, RN)                                                                \
    SDPA_FWD_DEFINE_VS_BLOCK(2, RN)                                                                \
    SDPA_FWD_DEFINE_VS_BLOCK(1, RN)
SDPA_FWD_DEFINE_BLOCKS(SDPA_FWD_RB_VECS)
#if SDPA_FWD_RB_VECS != 1
SDPA_FWD_DEFINE_BLOCKS(1)
#endif

/* With V read from global memory (V_FROM_GLOBAL, the CPU device only) a
 * key's V is taken SDPA_FWD_V_GLOBAL_VECS vectors at a time: one cache line
 * of f16 per key and 4 x 4 accumulators for the decode rows, where one
 * vector per key left the loop bound by the FMA latency and the per-key
 * address arithmetic. Dead code wherever the constant is false (the GPUs). */
#define SDPA_FWD_V_GLOBAL_VECS 4
#if SDPA_FWD_RB_VECS != SDPA_FWD_V_GLOBAL_VECS
SDPA_FWD_DEFINE_VS_BLOCK(SDPA_FWD_RB_ROWS, SDPA_FWD_V_GLOBAL_VECS)
SDPA_FWD_DEFINE_VS_BLOCK(4, SDPA_FWD_V_GLOBAL_VECS)
SDPA_FWD_DEFINE_VS_BLOCK(2, SDPA_FWD_V_GLOBAL_VECS)
SDPA_FWD_DEFINE_VS_BLOCK(1, SDPA_FWD_V_GLOBAL_VECS)
#endif

#define SDPA_FWD_CAT4_(a, b, c, d) a##b##c##d
#define SDPA_FWD_CAT4(a, b, c, d) SDPA_FWD_CAT4_(a, b, c, d)
#define SDPA_FWD_BLOCK_NAME(kind, rm, rn) SDPA_FWD_CAT4(sdpa_fwd_##kind##_block_, rm, x, rn)

/*
 * Rows 0..rows-1 of a tile in blocks of RB_ROWS, then tails of 4, 2 and 1,
 * each block a call of `kind` with RN vectors. A remainder of 2 borrows one
 * full block and becomes two blocks of 4 (a 2-row block is load-bound). The
 * tails are loops rather than tests of the remainder's bits: with the
 * latter, Intel's CPU compiler gave up vectorizing some specializations and
 * silently ran a scalar kernel that ignores the required sub-group size.
 */
#define SDPA_FWD_FOR_ROW_BLOCKS(kind, rn, rows, ...)                                               \
    do {                                                                                           \
        int full_ = (rows) / SDPA_FWD_RB_ROWS;                                                     \
        if (SDPA_FWD_RB_ROWS == 6 && full_ > 0 && (rows)-full_ * SDPA_FWD_RB_ROWS == 2)            \
            full_--;                                                                               \
        int i0_ = 0;                                                                               \
        for (; i0_ < full_ * SDPA_FWD_RB_ROWS; i0_ += SDPA_FWD_RB_ROWS)                            \
            SDPA_FWD_BLOCK_NAME(kind, SDPA_FWD_RB_ROWS, rn)(__VA_ARGS__);                          \
        for (; i0_ + 4 <= (rows); i0_ += 4)                                                        \
            SDPA_FWD_BLOCK_NAME(kind, 4, rn)(__VA_ARGS__);                                         \
        for (; i0_ + 2 <= (rows); i0_ += 2)                                                        \
            SDPA_FWD_BLOCK_NAME(kind, 2, rn)(__VA_ARGS__);                                         \
        if (i0_ < (rows))                                                                          \
            SDPA_FWD_BLOCK_NAME(kind, 1, rn)(__VA_ARGS__);                                         \
    } while (0)

/*
 * Causal trimming. `last0` is the last key, counted from the tile's first
 * key row, that the tile's first query (query row 0: lane 0 of vector 0 in
 * S, row 0 of O) sees; query row r sees at most key last0 + r (rows are
 * consecutive queries; where they are not, as in the GQA decode path, the
 * bound only overestimates). Without a causal mask last0 is large and
 * nothing is trimmed. Keys past what a block's last query sees are masked
 * to -inf (their S is never read: sdpa_fwd_mask_scores selects -inf) and
 * have P = 0, so the blocks that hold only such keys are not computed.
 */
#define SDPA_FWD_NO_TRIM (1 << 29)

/* The key rows of S that query vectors 0..nvec_end-1 need: up to the last
 * key the last lane of vector nvec_end - 1 sees, at most `rows`. */
static inline int sdpa_fwd_causal_rows(int last0, int nvec_end, int rows)
{
    return sdpa_iclamp(last0 + nvec_end * SUBGROUP_SIZE, 0, rows);
}

/*
 * The sub-group's tile of S = K^T Q: `rows` keys by `nvec` query vectors,
 * into s[key * s_ld + vector * SUBGROUP_SIZE] (s: this lane's query of
 * vector 0, first key); key blocks that the causal mask hides from a whole
 * query vector are skipped (last0, above).
 */
static inline __attribute__((always_inline)) void
sdpa_fwd_kq_tile(local float *s, int s_ld, local const float *k, int k_key_stride, int k_d_stride,
                 local const float *q, int q_ld, int d_end, int rows, int nvec, int last0)
{
    int j0 = 0;
    for (; j0 + SDPA_FWD_RB_VECS <= nvec; j0 += SDPA_FWD_RB_VECS) {
        const int rows_j = sdpa_fwd_causal_rows(last0, j0 + SDPA_FWD_RB_VECS, rows);
        SDPA_FWD_FOR_ROW_BLOCKS(kq, SDPA_FWD_RB_VECS, rows_j, s, s_ld, i0_, j0, k, k_key_stride,
                                k_d_stride, q, q_ld, d_end);
    }
#if SDPA_FWD_RB_VECS != 1
    for (; j0 < nvec; j0++) {
        const int rows_j = sdpa_fwd_causal_rows(last0, j0 + 1, rows);
        SDPA_FWD_FOR_ROW_BLOCKS(kq, 1, rows_j, s, s_ld, i0_, j0, k, k_key_stride, k_d_stride, q,
                                q_ld, d_end);
    }
#endif
}

/*
 * The sub-group's tile of S = K^T Q with K read from global memory
 * (K_FROM_GLOBAL): `keys` keys (a multiple of SDPA_FWD_KQ_GLOBAL_KEYS,
 * kernel_abi.h) from key kg->k0 + key0 by query rows 0 .. rows - 1, rounded up to blocks of
 * SDPA_FWD_KQ_GLOBAL_ROWS (Q's staged rows past the work-group's are zero),
 * into s[key * s_ld + row] (s: key key0, row 0 of the sub-group's tile).
 * Lanes run along the head dimension: each key's row is read with
 * contiguous loads, multiplied by the query rows (q: Q as staged by rows,
 * element (row, d) at q[row * q_ld + d]) and summed across the lanes, so
 * that every lane is busy however few query rows a decode step has. Keys
 * past the end read the last key (finite scores that the mask pass sets to
 * -inf).
 */
#define SDPA_FWD_KQ_GLOBAL_ROWS 4
static inline __attribute__((always_inline)) void
sdpa_fwd_kq_global_tile(local float *s, int s_ld, const private sdpa_fwd_kv_source *kg, int key0,
                        local const float *q, int q_ld, int keys, int rows)
{
    const int lane = get_sub_group_local_id();
    for (int kk = 0; kk < keys; kk += SDPA_FWD_KQ_GLOBAL_KEYS) {
        long off[SDPA_FWD_KQ_GLOBAL_KEYS], token[SDPA_FWD_KQ_GLOBAL_KEYS];
        _Pragma("unroll") for (int u = 0; u < SDPA_FWD_KQ_GLOBAL_KEYS; u++)
                sdpa_fwd_source_key(kg, kg->k0 + key0 + kk + u, &off[u], &token[u]);
        for (int i0 = 0; i0 < rows; i0 += SDPA_FWD_KQ_GLOBAL_ROWS) {
            float acc[SDPA_FWD_KQ_GLOBAL_KEYS][SDPA_FWD_KQ_GLOBAL_ROWS];
            _Pragma("unroll") for (int u = 0; u < SDPA_FWD_KQ_GLOBAL_KEYS; u++)
                    _Pragma("unroll") for (int i = 0; i < SDPA_FWD_KQ_GLOBAL_ROWS; i++)
                            acc[u][i] = 0.0f;
            int c0 = 0;
            do {
                float kx[SDPA_FWD_KQ_GLOBAL_KEYS];
                _Pragma("unroll") for (int u = 0; u < SDPA_FWD_KQ_GLOBAL_KEYS; u++) kx[u] =
                        sdpa_fwd_kv_row_element(kg->src, off[u], 1, c0, kg->f, token[u], true);
                _Pragma("unroll") for (int i = 0; i < SDPA_FWD_KQ_GLOBAL_ROWS; i++)
                {
                    const float qv = q[(i0 + i) * q_ld + c0 + lane];
                    _Pragma("unroll") for (int u = 0; u < SDPA_FWD_KQ_GLOBAL_KEYS; u++)
                            acc[u][i] = fma(kx[u], qv, acc[u][i]);
                }
            } while ((c0 += SUBGROUP_SIZE) < D_MAX);
            _Pragma("unroll") for (int u = 0; u < SDPA_FWD_KQ_GLOBAL_KEYS; u++)
                    _Pragma("unroll") for (int i = 0; i < SDPA_FWD_KQ_GLOBAL_ROWS; i++)
                            s[(key0 + kk + u) * s_ld + i0 + i] = sub_group_reduce_add(acc[u][i]);
        }
    }
}

/*
 * The sub-group's tile of O = alpha * O + V P: `rows` queries by head-dim
 * vectors 0..nvec_used-1 in o[query * o_ld + vector * SUBGROUP_SIZE] (o:
 * this lane's element of vector 0, first query); the vectors past
 * nvec_used (beyond the head size) are skipped. Always over all `keys`: a
 * reduction whose length depends on the block (causal trimming) made
 * Intel's CPU vectorizer run it under lane masks, twice as slow.
 */
static inline __attribute__((always_inline)) void
sdpa_fwd_vs_tile(local float *o, int o_ld, local const float *v, int v_ld,
                 const private sdpa_fwd_kv_source *vg, local const float *p, int p_ld,
                 local const float *alpha, int keys, int rows, int nvec_used)
{
    int j0 = 0;
    if (sdpa_fwd_v_from_global())
        for (; j0 + SDPA_FWD_V_GLOBAL_VECS <= nvec_used; j0 += SDPA_FWD_V_GLOBAL_VECS)
            SDPA_FWD_FOR_ROW_BLOCKS(vs, SDPA_FWD_V_GLOBAL_VECS, rows, o, o_ld, i0_, j0, v, v_ld,
                                    vg, p, p_ld, alpha, keys);
    for (; j0 + SDPA_FWD_RB_VECS <= nvec_used; j0 += SDPA_FWD_RB_VECS)
        SDPA_FWD_FOR_ROW_BLOCKS(vs, SDPA_FWD_RB_VECS, rows, o, o_ld, i0_, j0, v, v_ld, vg, p, p_ld,
                                alpha, keys);
#if SDPA_FWD_RB_VECS != 1
    for (; j0 < nvec_used; j0++)
        SDPA_FWD_FOR_ROW_BLOCKS(vs, 1, rows, o, o_ld, i0_, j0, v, v_ld, vg, p, p_ld, alpha, keys);
#endif
}

#endif /* SDPA_SPIRV_FWD_GEMM_H */
