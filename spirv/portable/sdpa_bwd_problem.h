/*
 * sdpa_bwd_problem.h - what every backward work-group reads first, shared by
 * the portable kernels (sdpa_bwd.cl) and the fast path's (sdpa_xe_bwd.cl):
 * the problem as the kernel sees it (sdpa_bwd_problem, sdpa_bwd_scores.h),
 * the tensors' strides from the strides buffer (kernel_abi_bwd.h), and the
 * query blocks a key block visits.
 */
#ifndef SDPA_SPIRV_BWD_PROBLEM_H
#define SDPA_SPIRV_BWD_PROBLEM_H

#include "kernel_abi_bwd.h"
#include "sdpa_bwd_scores.h"
#include "sdpa_common.h"
#include "sdpa_device_arrays.h"
#include "sdpa_scores.h"
#include "sdpa_uniform.h"

/* The problem of this work-group's (batch, query head) = (group z, group
 * y), from the kernel arguments. */
static inline __attribute__((always_inline)) sdpa_bwd_problem
sdpa_bwd_problem_of(int d, int dv, int sk, int sq, const global void *scale_ptr, float scale,
                    float inv_scale, const global void *msk, long ms0, long ms1, long ms2, long ms3,
                    long dropout_seed, long dropout_offset, float dropout_p,
                    const global long *dropout_seed_ptr, const global long *dropout_offset_ptr,
                    const global float *dropout_p_ptr, int win_left, int win_right, float softcap,
                    const global float *alibi_slopes, const global int *cu_seqlens_q,
                    const global int *cu_seqlens_k, int total_q, int total_k)
{
    sdpa_bwd_problem x;
    x.b = get_group_id(2);
    x.h = get_group_id(1);
    x.hq = get_num_groups(1);
    x.hkv = x.h / SC(KV_GROUP_SIZE);
    /* Dropout numbers follow the padded layout [B, Hq, Sq, Sk] (sq and sk
     * are the maxima with VARLEN), as the mask buffer and dS do. */
    x.drop_head = ((ulong)x.b * (ulong)x.hq + (ulong)x.h) * (ulong)sq * (ulong)sk;
    x.drop_sk = sk;
    /* VARLEN: sequence b of the packed batch, its own lengths from packed
     * rows q_row0 and k_row0 (clamped into the packed rows and the maxima,
     * sdpa_device_arrays.h); LSE and D_i are [Hq, total_q]. */
    x.q_row0 = 0;
    x.k_row0 = 0;
    x.stat_row0 = ((long)x.b * x.hq + x.h) * sq;
    if (SC(VARLEN)) {
        const sdpa_packed_seq qs = sdpa_packed_seq_of(cu_seqlens_q, x.b, total_q, sq);
        const sdpa_packed_seq ks = sdpa_packed_seq_of(cu_seqlens_k, x.b, total_k, sk);
        x.q_row0 = qs.row0;
        x.k_row0 = ks.row0;
        sq = qs.len;
        sk = ks.len;
        x.stat_row0 = (long)x.h * total_q + x.q_row0;
    }
    x.sq = sq;
    x.sk = sk;
    x.d = d;
    x.dv = dv;
    x.ld = SDPA_BWD_LD(sdpa_imax(d, dv));
    x.causal_offset = sdpa_causal_offset(sk, sq);
    x.factor = sdpa_score_factor(1.0f, scale_ptr, scale, inv_scale);
    x.log2_factor = x.factor * SDPA_LOG2E;
    x.pos_offset = sk - sq;
    x.win_left = win_left;
    x.win_right = win_right;
    x.cap = sdpa_softcap_of(softcap, x.log2_factor, SDPA_LOG2E);
    x.slope2 = sdpa_alibi_slope(alibi_slopes, x.b, x.hq, x.h, SDPA_LOG2E);
    x.msk = msk;
    x.msk_head = x.b * ms0 + (long)x.h * ms1;
    x.ms2 = ms2;
    x.ms3 = ms3;
    x.drop = sdpa_dropout_args_read(dropout_seed, dropout_offset, dropout_p, dropout_seed_ptr,
                                    dropout_offset_ptr, dropout_p_ptr);
    return x;
}

/* One tensor's four strides from the strides buffer. */
typedef struct sdpa_bwd_strides {
    long s0, s1, s2, s3;
} sdpa_bwd_strides;

static inline __attribute__((always_inline)) sdpa_bwd_strides
sdpa_bwd_strides_at(const global long *strides, int first)
{
    sdpa_bwd_strides s;
    s.s0 = strides[first];
    s.s1 = strides[first + 1];
    s.s2 = strides[first + 2];
    s.s3 = strides[first + 3];
    return s;
}

static inline __attribute__((always_inline)) long
sdpa_bwd_head_offset(const private sdpa_bwd_strides *s, long b, int head)
{
    return b * s->s0 + (long)head * s->s1;
}

/* Offset of the first query row (query 0) of `head` in a tensor indexed by
 * query, [B, H, Sq, D] or with VARLEN packed [1, H, total_q, D]: Q, dO, dQ
 * and its f32 sums. */
static inline __attribute__((always_inline)) long
sdpa_bwd_q_rows(const private sdpa_bwd_problem *x, const private sdpa_bwd_strides *s, int head)
{
    return SC(VARLEN) ? x->q_row0 * s->s2 + (long)head * s->s1 : sdpa_bwd_head_offset(s, x->b, head);
}

/* The same for a tensor indexed by key: K, V, dK, dV and their f32 sums. */
static inline __attribute__((always_inline)) long
sdpa_bwd_k_rows(const private sdpa_bwd_problem *x, const private sdpa_bwd_strides *s, int head)
{
    return SC(VARLEN) ? x->k_row0 * s->s2 + (long)head * s->s1 : sdpa_bwd_head_offset(s, x->b, head);
}

/* The strides buffer, tensor by tensor. */
typedef struct sdpa_bwd_all_strides {
    sdpa_bwd_strides k, q, v, diff_dst, dq, dk, dv;
} sdpa_bwd_all_strides;

static inline __attribute__((always_inline)) sdpa_bwd_all_strides
sdpa_bwd_all_strides_of(const global long *strides)
{
    sdpa_bwd_all_strides s;
    s.k = sdpa_bwd_strides_at(strides, SDPA_BWD_STRIDE_K);
    s.q = sdpa_bwd_strides_at(strides, SDPA_BWD_STRIDE_Q);
    s.v = sdpa_bwd_strides_at(strides, SDPA_BWD_STRIDE_V);
    s.diff_dst = sdpa_bwd_strides_at(strides, SDPA_BWD_STRIDE_DIFF_DST);
    s.dq = sdpa_bwd_strides_at(strides, SDPA_BWD_STRIDE_DQ);
    s.dk = sdpa_bwd_strides_at(strides, SDPA_BWD_STRIDE_DK);
    s.dv = sdpa_bwd_strides_at(strides, SDPA_BWD_STRIDE_DV);
    return s;
}

/* The backward kernels, portable and fast path, all take the arguments of
 * sdpa_bwd_args.def, so one expression, in any of them, makes their problem
 * from their parameters. */
#define SDPA_BWD_PROBLEM_OF_ARGS()                                                                 \
    sdpa_bwd_problem_of(D, D_VAL, SK, SQ, SCALE_PTR, SCALE, INV_SCALE, MSK, MSK_S0, MSK_S1,        \
                        MSK_S2, MSK_S3, DROPOUT_SEED, DROPOUT_OFFSET, DROPOUT_P, DROPOUT_SEED_PTR, \
                        DROPOUT_OFFSET_PTR, DROPOUT_P_PTR, WINDOW_LEFT, WINDOW_RIGHT, SOFTCAP,     \
                        ALIBI_SLOPES, CU_SEQLENS_Q, CU_SEQLENS_K, TOTAL_Q, TOTAL_K)

/* Zeroes dS for queries [q_begin, q_end) and keys [k0, k0 + keys), the
 * work-group's n_sg sub-groups taking the queries in turn. */
static inline __attribute__((always_inline)) void sdpa_bwd_zero_ds(global void *ds, long head,
                                                                   long s2, long s3, int q_begin,
                                                                   int q_end, int k0, int keys,
                                                                   int n_sg)
{
    const int lane = get_sub_group_local_id();
    for (int q = q_begin + get_sub_group_id(); q < q_end; q += n_sg) {
        const long row = head + (long)q * s2;
        for (int c0 = 0; c0 < keys; c0 += SUBGROUP_SIZE) {
            const int key = k0 + c0 + lane;
            if (c0 + lane < keys)
                sdpa_store(ds, row + (long)key * s3, SC(DS_DT), 0.0f);
        }
    }
}

/* The blocks of br queries that can see keys [k0, k0 + keys): all, or from
 * the causal band on; with a window, from the first query whose window
 * reaches k0 to the last whose window starts at or before the last key.
 * Returns how many, and the first in *first. */
static inline __attribute__((always_inline)) int
sdpa_bwd_query_blocks(const private sdpa_bwd_problem *x, int k0, int keys, int br, int *first)
{
    int q_first = 0, q_end = x->sq;
    if (sdpa_is_causal())
        q_first = sdpa_imax(0, k0 - x->causal_offset);
    if (SC(WITH_WINDOW) && x->win_right >= 0) /* pos + right >= k0 */
        q_first = sdpa_imax(q_first, k0 - x->pos_offset - x->win_right);
    if (SC(WITH_WINDOW) && x->win_left >= 0) /* pos - left <= k0 + keys - 1 */
        q_end = (int)clamp((long)k0 + keys - 1 + x->win_left - x->pos_offset + 1, 0L,
                           (long)x->sq);
    q_first = sdpa_imin(q_first, x->sq);
    *first = q_first / br;
    return sdpa_imax(0, (q_end + br - 1) / br - *first);
}

/* Zeroes dS of keys [k0, k0 + keys) for the queries outside the blocks
 * sdpa_bwd_query_blocks gave (first_block, blocks): they cannot see these
 * keys and no block of the walk covers them. */
static inline __attribute__((always_inline)) void
sdpa_bwd_zero_ds_unvisited(global void *ds, long head, long s2, long s3, int sq, int first_block,
                           int blocks, int br, int k0, int keys, int n_sg)
{
    const int q_stop = sdpa_imin((first_block + blocks) * br, sq);
    if (first_block > 0)
        sdpa_bwd_zero_ds(ds, head, s2, s3, 0, sdpa_imin(first_block * br, sq), k0, keys, n_sg);
    if (SC(WITH_WINDOW) && q_stop < sq)
        sdpa_bwd_zero_ds(ds, head, s2, s3, sdpa_imax(q_stop, first_block * br), sq, k0, keys, n_sg);
}

/* The block (0 .. blocks - 1, after the first) a work-group visits at
 * `step`: neighbouring key blocks start at different query blocks, so that
 * the work-groups running at the same time add into different rows of dQ. */
static inline __attribute__((always_inline)) int sdpa_bwd_query_block_at(int step, int blocks)
{
    int block = get_group_id(0) % blocks + step;
    return block >= blocks ? block - blocks : block;
}

#endif /* SDPA_SPIRV_BWD_PROBLEM_H */
