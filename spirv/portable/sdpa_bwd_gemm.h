/*
 * sdpa_bwd_gemm.h - the one matrix-product shape every backward product
 * reduces to, as a register-blocked micro-kernel over f32 tiles in local
 * memory, with the consumer of the result fused in:
 *
 *   c[i][j] = init(i, j) + sum_r a[i * a_i + r * a_r] * b[r * b_r + j * SUBGROUP_SIZE]
 *   apply(i, j, c[i][j])
 *
 * `a` is read as sub-group-uniform broadcasts (any layout: its two strides
 * are arguments), `b` as vectors (one column per lane: vector j covers
 * columns j * SUBGROUP_SIZE + lane). With a and b chosen per product:
 *
 *   S  = Q K^T       rows queries, lanes keys:     a = Q [Br][D],  b = K^T [D][Bc]
 *   dP = dO V^T      rows queries, lanes keys:     a = dO [Br][D], b = V^T [D][Bc]
 *   dV^T += dO^T P   rows head dim, lanes keys:    a = dO (a_i = 1), b = P [Br][Bc]
 *   dK^T += Q^T dS   rows head dim, lanes keys:    a = Q (a_i = 1),  b = dS [Br][Bc]
 *   dQ (+)= dS K     rows queries, lanes head dim:  a = dS [Br][Bc],  b = K [Bc][D]
 *
 * Why fused epilogues and no private tile arrays: Intel's CPU compiler keeps
 * every private array of a kernel that has a barrier in a per-lane (array
 * of structures) layout, so a tile written to a private array costs a
 * scatter per element. The result of a block is consumed straight from
 * registers instead (turned into probabilities, added atomically, or added
 * into an accumulator tile in local memory, laid out lane-contiguous).
 *
 * Per reduction step a block does RN vector loads, RM broadcasts and
 * RM * RN FMAs with the accumulators in registers. A tile is covered by
 * blocks of SDPA_BWD_RB_ROWS rows plus a tail of single rows, and by
 * SDPA_BWD_RB_VECS vectors plus a tail of one; block sizes are literals
 * (macro-generated, always_inline) so that the accumulators become
 * registers. 4 x 1 blocks for every variant: with sub-group size 8 (Xe-LP
 * and Xe-HPG) 6 x 2 and 6 x 1 made Intel's GPU compiler spill on Xe-LP,
 * whose tile addresses take a register each (doc/gpu-isa.md); with 16
 * (the CPU, Xe-HPC and later) 4 x 1 ran faster on the CPU than 6 x 1
 * (BENCH_CLOCK=cpu: llama3 prefill bwd 1475 -> 1416 ms, bert-base bwd
 * 236 -> 219 ms), builds about 8% faster, and divides Br and the head
 * sizes, so the single-row tail is rare. -DSDPA_BWD_RB_ROWS=... and
 * -DSDPA_BWD_RB_VECS=... override them.
 */
#ifndef SDPA_SPIRV_BWD_GEMM_H
#define SDPA_SPIRV_BWD_GEMM_H

#include "sdpa_common.h"

#ifndef SDPA_BWD_RB_ROWS
#define SDPA_BWD_RB_ROWS 4
#endif
#ifndef SDPA_BWD_RB_VECS
#define SDPA_BWD_RB_VECS 1
#endif

/*
 * Defines sdpa_bwd_<NAME>_block_<RM>x<RN>: one RM x RN block at tile rows
 * i0.. and vectors j0.., reducing over r < len (len >= 1), starting from
 * INIT(ctx, row, vector) and handing each result to APPLY(ctx, row, vector,
 * value). The reduction is a do-while: a zero-trip guard lets LLVM place an
 * exit block before its dominator, which llvm-spirv-15 emits as invalid
 * SPIR-V block order. (clang-format cannot lay out _Pragma in a macro.)
 */
/* clang-format off */
#define SDPA_BWD_DEFINE_BLOCK_(NAME, CTX, INIT, APPLY, RM, RN)                                     \
    static inline __attribute__((always_inline)) void sdpa_bwd_##NAME##_block_##RM##x##RN(         \
        const private CTX *ctx, int i0, int j0, local const float *a, int a_i, int a_r,            \
        local const float *b, int b_r, int len)                                                    \
    {                                                                                              \
        float acc[RM][RN];                                                                         \
        _Pragma("unroll") for (int i = 0; i < RM; i++)                                             \
            _Pragma("unroll") for (int j = 0; j < RN; j++)                                         \
                acc[i][j] = INIT(ctx, i0 + i, j0 + j);                                             \
        local const float *ab = a + i0 * a_i;                                                      \
        local const float *bb = b + j0 * SUBGROUP_SIZE;                                            \
        int r = 0;                                                                                 \
        do {                                                                                       \
            float bv[RN];                                                                          \
            _Pragma("unroll") for (int j = 0; j < RN; j++)                                         \
                bv[j] = bb[r * b_r + j * SUBGROUP_SIZE];                                           \
            _Pragma("unroll") for (int i = 0; i < RM; i++) {                                       \
                const float av = ab[i * a_i + r * a_r];                                            \
                _Pragma("unroll") for (int j = 0; j < RN; j++)                                     \
                    acc[i][j] = fma(av, bv[j], acc[i][j]);                                         \
            }                                                                                      \
        } while (++r < len);                                                                       \
        _Pragma("unroll") for (int i = 0; i < RM; i++)                                             \
            _Pragma("unroll") for (int j = 0; j < RN; j++)                                         \
                APPLY(ctx, i0 + i, j0 + j, acc[i][j]);                                             \
    }
/* clang-format on */
#define SDPA_BWD_DEFINE_BLOCK(NAME, CTX, INIT, APPLY, RM, RN)                                      \
    SDPA_BWD_DEFINE_BLOCK_(NAME, CTX, INIT, APPLY, RM, RN)

#define SDPA_BWD_CAT_(a, b) a##b
#define SDPA_BWD_CAT(a, b) SDPA_BWD_CAT_(a, b)
#define SDPA_BWD_BLOCK(NAME, RM, RN)                                                               \
    SDPA_BWD_CAT(SDPA_BWD_CAT(SDPA_BWD_CAT(sdpa_bwd_##NAME##_block_, RM), x), RN)

/* Rows 0..rows-1 in blocks of RB_ROWS, then the rest one row at a time,
 * each block RN vectors wide starting at vector j0. One tail shape, not
 * unrolled tails of 4, 2 and 1: every block shape is unrolled code in each
 * of the kernel's five products, and the build time grows with their count
 * (issue 14), while tiles are mostly whole blocks (Br and the head sizes
 * are multiples of SDPA_BWD_RB_ROWS). The tail is a guarded do-while for the reason
 * SDPA_BWD_DEFINE_BLOCK_ gives. */
#define SDPA_BWD_FOR_ROW_BLOCKS(NAME, RN, rows, ctx, j0, a, a_i, a_r, b, b_r, len)                 \
    do {                                                                                           \
        const int rows_ = (rows);                                                                  \
        int i0_ = 0;                                                                               \
        for (; i0_ + SDPA_BWD_RB_ROWS <= rows_; i0_ += SDPA_BWD_RB_ROWS)                           \
            SDPA_BWD_BLOCK(NAME, SDPA_BWD_RB_ROWS, RN)(ctx, i0_, j0, a, a_i, a_r, b, b_r, len);    \
        if (i0_ < rows_)                                                                           \
            do                                                                                     \
                SDPA_BWD_BLOCK(NAME, 1, RN)(ctx, i0_, j0, a, a_i, a_r, b, b_r, len);               \
            while (++i0_ < rows_);                                                                 \
    } while (0)

#if SDPA_BWD_RB_VECS != 1
#define SDPA_BWD_DEFINE_TAIL_BLOCKS_(NAME, CTX, INIT, APPLY)                                       \
    SDPA_BWD_DEFINE_BLOCK(NAME, CTX, INIT, APPLY, SDPA_BWD_RB_ROWS, 1)                             \
    SDPA_BWD_DEFINE_BLOCK(NAME, CTX, INIT, APPLY, 1, 1)
#define SDPA_BWD_TAIL_VECTORS_(NAME, rows, ctx, j0, a, a_i, a_r, b, b_r, len, nvec)                \
    for (; j0 < (nvec); j0++)                                                                      \
        SDPA_BWD_FOR_ROW_BLOCKS(NAME, 1, rows, ctx, j0, a, a_i, a_r, b, b_r, len);
#else
#define SDPA_BWD_DEFINE_TAIL_BLOCKS_(NAME, CTX, INIT, APPLY)
#define SDPA_BWD_TAIL_VECTORS_(NAME, rows, ctx, j0, a, a_i, a_r, b, b_r, len, nvec)
#endif

/*
 * Defines the blocks of NAME and sdpa_bwd_<NAME>_tile(ctx, a, a_i, a_r, b,
 * b_r, len, rows, nvec): a sub-group's tile of `rows` rows by `nvec`
 * vectors. `b` points at this lane's column of vector 0. len <= 0 does
 * nothing (not even APPLY).
 */
#define SDPA_BWD_DEFINE_TILE(NAME, CTX, INIT, APPLY)                                               \
    SDPA_BWD_DEFINE_BLOCK(NAME, CTX, INIT, APPLY, SDPA_BWD_RB_ROWS, SDPA_BWD_RB_VECS)              \
    SDPA_BWD_DEFINE_BLOCK(NAME, CTX, INIT, APPLY, 1, SDPA_BWD_RB_VECS)                             \
    SDPA_BWD_DEFINE_TAIL_BLOCKS_(NAME, CTX, INIT, APPLY)                                           \
    static inline __attribute__((always_inline)) void sdpa_bwd_##NAME##_tile(                      \
            const private CTX *ctx, local const float *a, int a_i, int a_r, local const float *b,  \
            int b_r, int len, int rows, int nvec)                                                  \
    {                                                                                              \
        if (len <= 0)                                                                              \
            return;                                                                                \
        int j0 = 0;                                                                                \
        for (; j0 + SDPA_BWD_RB_VECS <= nvec; j0 += SDPA_BWD_RB_VECS)                              \
            SDPA_BWD_FOR_ROW_BLOCKS(NAME, SDPA_BWD_RB_VECS, rows, ctx, j0, a, a_i, a_r, b, b_r,    \
                                    len);                                                          \
        SDPA_BWD_TAIL_VECTORS_(NAME, rows, ctx, j0, a, a_i, a_r, b, b_r, len, nvec)                \
    }

/* The plainest epilogue: c[row * ld + vector * SUBGROUP_SIZE] += result, an
 * accumulator tile in local memory (`c` points at this lane's column of row
 * 0, vector 0). */
typedef struct sdpa_bwd_acc {
    local float *c;
    int ld;
} sdpa_bwd_acc;

static inline __attribute__((always_inline)) float sdpa_bwd_acc_init(const private sdpa_bwd_acc *t,
                                                                     int i, int j)
{
    return t->c[i * t->ld + j * SUBGROUP_SIZE];
}

static inline __attribute__((always_inline)) void sdpa_bwd_acc_apply(const private sdpa_bwd_acc *t,
                                                                     int i, int j, float value)
{
    t->c[i * t->ld + j * SUBGROUP_SIZE] = value;
}

SDPA_BWD_DEFINE_TILE(acc, sdpa_bwd_acc, sdpa_bwd_acc_init, sdpa_bwd_acc_apply)

#endif /* SDPA_SPIRV_BWD_GEMM_H */
