/*
 * sdpa_fwd_rows.h - which queries a forward work-group owns: the rows of its
 * query tile, in both of the forward kernels' modes. Shared by the portable
 * forward (sdpa_fwd.cl) and the fast path (sdpa_xe_fwd.cl), which launch
 * the same geometry (kernel_abi.h): group (x, y, z) = (query tile, head,
 * batch), with y running over K/V heads in the Q1_GQA_BATCH decode path.
 */
#ifndef SDPA_SPIRV_FWD_ROWS_H
#define SDPA_SPIRV_FWD_ROWS_H

#include "sdpa_common.h"
#include "sdpa_uniform.h"
#include "sdpa_view.h"

/* The rows of a work-group. Normally row r is query query0 + r of head
 * head0; in the Q1_GQA_BATCH decode path (Sq == 1) row r is query 0 of
 * head head0 + r. */
typedef struct sdpa_fwd_rows {
    long b;     /* batch */
    int head0;  /* query head of row 0 */
    int query0; /* query index of row 0 */
    int hq;     /* query heads */
    int hkv;    /* K/V head of every row */
    int n_kv;   /* K/V heads */
    int rows;   /* valid rows: <= BQ, fewer in the last work-group */
} sdpa_fwd_rows;

static inline int sdpa_fwd_row_head(const private sdpa_fwd_rows *w, int r)
{
    return SC(Q1_GQA_BATCH) ? w->head0 + r : w->head0;
}

static inline int sdpa_fwd_row_query(const private sdpa_fwd_rows *w, int r)
{
    return SC(Q1_GQA_BATCH) ? 0 : w->query0 + r;
}

static inline sdpa_fwd_rows sdpa_fwd_work_group_rows(int bq, int sq)
{
    const int group = SC(KV_GROUP_SIZE);
    const int row0 = (int)get_group_id(0) * bq;
    sdpa_fwd_rows w;
    w.b = get_group_id(2);
    if (SC(Q1_GQA_BATCH)) {
        w.hkv = get_group_id(1);
        w.n_kv = get_num_groups(1);
        w.hq = w.n_kv * group;
        w.head0 = w.hkv * group + row0;
        w.query0 = 0;
        w.rows = sdpa_imin(bq, group - row0);
    } else {
        w.head0 = get_group_id(1);
        w.hq = get_num_groups(1);
        w.hkv = w.head0 / group;
        w.n_kv = w.hq / group;
        w.query0 = row0;
        w.rows = sdpa_imin(bq, sq - row0);
    }
    if (!SC(REMAINDER_Q))
        w.rows = bq;
    return w;
}

/* Where the work-group's K/V head starts: the element offsets of its K and
 * V, and the token index of its key 0 which per-group scales and zero
 * points are indexed by. K/V come from the batch (dense: token0 is
 * (b * Hkv + h) * Sk), from the sequence's first packed row k_row0
 * (VARLEN: the scales are [1, Hkv, total_k, D / group], token0 is
 * h * total_k + k_row0), or from inside each cache block (PAGED: offsets
 * 0, sdpa_fwd_paged_key adds the block's; token0 is h << block_log2). */
typedef struct sdpa_fwd_kv_head {
    long k, v, token0;
} sdpa_fwd_kv_head;

static inline sdpa_fwd_kv_head sdpa_fwd_kv_head_of(const private sdpa_fwd_rows *w, long ks0,
                                                   long ks1, long ks2, long vs0, long vs1, long vs2,
                                                   int sk, int total_k, long k_row0, int block_log2)
{
    sdpa_fwd_kv_head h;
    const long k_seq = SC(PAGED) ? 0 : SC(VARLEN) ? k_row0 * ks2 : w->b * ks0;
    const long v_seq = SC(PAGED) ? 0 : SC(VARLEN) ? k_row0 * vs2 : w->b * vs0;
    h.k = k_seq + (long)w->hkv * ks1;
    h.v = v_seq + (long)w->hkv * vs1;
    h.token0 = SC(PAGED)    ? (long)w->hkv << block_log2
               : SC(VARLEN) ? (long)w->hkv * total_k + k_row0
                            : (w->b * w->n_kv + w->hkv) * (long)sk;
    return h;
}

/* The same from the views of K and V (the portable kernels' spelling). */
static inline __attribute__((always_inline)) sdpa_fwd_kv_head
sdpa_fwd_kv_head_in(const private sdpa_fwd_rows *w, const private sdpa_view *k,
                    const private sdpa_view *v, int sk, int total_k, long k_row0, int block_log2)
{
    return sdpa_fwd_kv_head_of(w, k->s0, k->s1, k->s2, v->s0, v->s1, v->s2, sk, total_k, k_row0,
                               block_log2);
}

#endif /* SDPA_SPIRV_FWD_ROWS_H */
