/*
 * sdpa_fwd.cl - forward scaled-dot-product attention, flash-attention-2
 * style: O = softmax(scale * Q K^T + mask) V without ever forming the
 * Sq x Sk matrix.
 *
 * A work-group owns BQ rows (queries of one batch and head; with
 * Q1_GQA_BATCH, the query heads that share one K/V head) and streams the
 * keys in tiles of BK. Per key tile:
 *
 *   1. stage K and V as f32 in local memory (converted, dequantized once);
 *   2. S = K^T Q: sub-group (m, n) of the KQ grid computes UNROLL_M_KQ keys
 *      by UNROLL_N_KQ queries, lanes along queries;
 *   3. scale and mask S (log2 units), take each query's maximum (across the
 *      WG_M_KQ sub-groups that share a query through local memory), update
 *      the running maximum m, form P = exp2(S - m) and the running sum l,
 *      publish P and the rescaling factor alpha in local memory;
 *   4. O = alpha O + V P: sub-group (m, n) of the VS grid owns UNROLL_M_VS
 *      head-dim rows by UNROLL_N_VS queries of O, lanes along the head
 *      dimension; O stays in local memory for the whole key loop.
 *
 * At the end O is divided by l and stored; training also writes the
 * log-sum-exp (natural log, scale included).
 *
 * Q and K have head size D, V and O head size D_VAL (they may differ); the
 * bucket D_MAX holds both, and D_FULL means both equal it.
 *
 * Both products are register-blocked micro-kernels (sdpa_fwd_gemm.h) over
 * f32 tiles in local memory, which keeps the kernel free of private arrays
 * indexed by run-time values: Intel's CPU compiler, which turns the lanes of
 * a sub-group into SIMD lanes, handles those poorly, and a GPU would spill
 * them. Per key tile there are three barriers (four when WG_M_KQ > 1).
 *
 * Built once per head-size bucket D_MAX (it sizes the local tiles) and
 * sub-group size; everything else is a specialization constant, so every
 * branch on SC(...) folds when the module is built. The host contract
 * (geometry, local memory) is in kernel_abi.h, the arguments in
 * sdpa_fwd_args.def. Keys past Sk are masked with the same code on every
 * tile, so the kernel needs no key remainder.
 *
 * Dropout (WITH_DROPOUT) acts on P after the running sum has taken it in, so
 * the softmax denominator and the log-sum-exp are those of the undropped
 * probabilities; the dropped elements of P are zeroed before O += V P, and
 * the 1 / (1 - p) of the kept ones is folded into 1 / sum at the end.
 */
#include "sdpa_common.h"
#include "sdpa_device_arrays.h"
#include "sdpa_fwd_gemm.h"
#include "sdpa_fwd_quant.h"
#include "sdpa_fwd_softmax.h"
#include "sdpa_fwd_tile.h"
#include "sdpa_uniform.h"
#include "sdpa_philox.h"
#include "sdpa_fwd_rows.h"
#include "sdpa_fwd_dropout.h"
#include "sdpa_view.h"

/* The work-group's tiles (kernel_abi.h) and this sub-group's place in them:
 * sub-group (m_kq, n_kq) of the KQ grid computes S for UNROLL_M_KQ keys by
 * UNROLL_N_KQ queries, sub-group (m_vs, n_vs) of the VS grid owns
 * UNROLL_M_VS head-dim rows by UNROLL_N_VS queries of O. */
typedef struct sdpa_fwd_place {
    int bk, bq; /* keys per tile, queries per work-group */
    int sg_id, lane;
    int m_kq;             /* which keys of the tile the S tile takes */
    int kq_key0, kq_col0; /* first key and first query of the S tile */
    int kq_nvec;          /* query vectors of the S tile */
    int vs_d0, vs_row0;   /* first head-dim row and first query of O */
    int vs_nvec;          /* head-dim vectors of O */
} sdpa_fwd_place;

static inline __attribute__((always_inline)) sdpa_fwd_place sdpa_fwd_place_of(void)
{
    sdpa_fwd_place p;
    p.bk = SC(UNROLL_M_KQ) * SC(WG_M_KQ);
    p.bq = SC(UNROLL_N_KQ) * SC(WG_N_KQ);
    p.sg_id = get_local_id(1);
    p.lane = get_sub_group_local_id();
    p.m_kq = p.sg_id % SC(WG_M_KQ);
    const int n_kq = p.sg_id / SC(WG_M_KQ);
    const int m_vs = p.sg_id % SC(WG_M_VS), n_vs = p.sg_id / SC(WG_M_VS);
    p.kq_key0 = p.m_kq * SC(UNROLL_M_KQ);
    p.kq_col0 = n_kq * SC(UNROLL_N_KQ);
    p.kq_nvec = SC(UNROLL_N_KQ) / SUBGROUP_SIZE;
    p.vs_d0 = m_vs * SC(UNROLL_M_VS);
    p.vs_row0 = n_vs * SC(UNROLL_N_VS);
    p.vs_nvec = SC(UNROLL_M_VS) / SUBGROUP_SIZE;
    return p;
}

/* Query column j of this lane in the S tile (KQ layout). */
static inline __attribute__((always_inline)) int sdpa_fwd_kq_col(const private sdpa_fwd_place *p,
                                                                 int j)
{
    return p->kq_col0 + j * SUBGROUP_SIZE + p->lane;
}

/*
 * Local memory, SDPA_FWD_SLM_FLOATS in all. Tiles the inner loops read with
 * one lane per column are laid out with that column contiguous. Rows are
 * padded by SDPA_FWD_SLM_PAD floats: with a power-of-two row length, a
 * micro-kernel walking down a column maps every row to the same few cache
 * sets (L1 thrashing on the CPU, bank conflicts on GPUs).
 */
typedef struct sdpa_fwd_slm {
    int q_ld, s_ld, kv_ld;
    int k_key_stride, k_d_stride; /* K by rows, or K^T (TRANSPOSE_K) */
    local float *q;               /* Q^T [D_MAX][q_ld], or Q [bq][kv_ld] with K from global */
    local float *k;               /* K [bk][kv_ld] or K^T [D_MAX][bk + pad] */
    local float *v;               /* V [bk][kv_ld] */
    local float *s;               /* S, then P [bk][s_ld] */
    local float *o;               /* O [bq][D_MAX] */
    local float *max;             /* running max [WG_M_KQ][bq] */
    local float *sum;             /* running sums [WG_M_KQ][bq] */
    local float *red;             /* tile maxima [WG_M_KQ][bq] */
    local float *alpha;           /* rescaling of O [bq] */
    local float *inv_sum;         /* 1 / sum [bq] */
} sdpa_fwd_slm;

static inline __attribute__((always_inline)) sdpa_fwd_slm
sdpa_fwd_slm_of(local float *slm, const private sdpa_fwd_place *p)
{
    const int pad = SDPA_FWD_SLM_PAD, bk = p->bk, bq = p->bq;
    sdpa_fwd_slm m;
    m.q_ld = bq + pad;
    m.s_ld = bq + pad;
    m.kv_ld = D_MAX + pad;
    m.k_key_stride = SC(TRANSPOSE_K) ? 1 : m.kv_ld;
    m.k_d_stride = SC(TRANSPOSE_K) ? bk + pad : 1;
    m.q = slm;
    m.k = m.q + D_MAX * m.q_ld;
    m.v = m.k + (bk + pad) * m.kv_ld;
    m.s = m.v + bk * m.kv_ld;
    m.o = m.s + bk * m.s_ld;
    m.max = m.o + bq * D_MAX;
    m.sum = m.max + SC(WG_M_KQ) * bq;
    m.red = m.sum + SC(WG_M_KQ) * bq;
    m.alpha = m.red + SC(WG_M_KQ) * bq;
    m.inv_sum = m.alpha + bq;
    return m;
}

/* This work-group's sequence: the whole problem, or with VARLEN sequence b
 * of the packed batch, its own sq queries and sk keys from packed rows
 * q_row0 and k_row0 (sq_max and sk_max, the arguments SQ and SK, are then
 * the maxima, which only the padded layout of the mask and the dropout
 * numbers follow); with PAGED, the sequence's cache length. */
typedef struct sdpa_fwd_seq {
    int sq, sk;
    long q_row0, k_row0;
    int sq_max, sk_max;
    int total_q; /* VARLEN: the packed query rows, which the LSE is laid out by */
} sdpa_fwd_seq;

static inline __attribute__((always_inline)) sdpa_fwd_seq
sdpa_fwd_seq_of(int sq, int sk, const global int *cu_seqlens_q, const global int *cu_seqlens_k,
                int total_q, int total_k, const global int *cache_seqlens)
{
    sdpa_fwd_seq q = {sq, sk, 0, 0, sq, sk, total_q};
    if (SC(VARLEN)) {
        const long b = get_group_id(2);
        const sdpa_packed_seq qs = sdpa_packed_seq_of(cu_seqlens_q, b, total_q, sq);
        const sdpa_packed_seq ks = sdpa_packed_seq_of(cu_seqlens_k, b, total_k, sk);
        q.q_row0 = qs.row0;
        q.sq = qs.len;
        q.k_row0 = ks.row0;
        q.sk = ks.len;
    }
    if (SC(PAGED))
        q.sk = sdpa_paged_seq_len(cache_seqlens, get_group_id(2), sk);
    return q;
}

/* The keys the work-group visits (sdpa_keys): all the keys, or up to the
 * causal band of its last row; with a window, from the first key of its
 * first row's window (rounded down to a tile) to the last of its last
 * row's: key tiles outside the band are never loaded. Not with the dropout
 * keep mask, which covers every key (the fix-up after the loop writes the
 * keys past a causal band only). */
static inline __attribute__((always_inline)) sdpa_keys
sdpa_fwd_keys_of(const private sdpa_fwd_rows *w, const private sdpa_fwd_seq *q, int bk,
                 int win_left, int win_right)
{
    const int sk = q->sk;
    sdpa_keys k = sdpa_keys_span(0, sk, sk, q->sq, win_left, win_right);
    if (sdpa_is_causal())
        k.end = sdpa_iclamp(sdpa_fwd_row_query(w, w->rows - 1) + k.causal_offset + 1, 0, sk);
    if (SC(WITH_WINDOW) && !SC(DROPOUT_OUTPUT_MASK)) {
        const int pos_last = sdpa_fwd_row_query(w, w->rows - 1) + k.pos_offset;
        k.end = sdpa_iclamp(sdpa_window_last(pos_last, win_right, k.end - 1) + 1, 0, sk);
        const int pos_first = sdpa_fwd_row_query(w, 0) + k.pos_offset;
        /* Rounded down as max(0, x / bk) * bk: LLVM rewrites x / bk * bk
         * into x - x % bk with a `freeze`, which llvm-spirv-15 cannot
         * translate. */
        k.begin = sdpa_imax(0, sdpa_window_first(pos_first, win_left) / bk) * bk;
        k.begin = sdpa_imin(k.begin, sk);
    }
    return k;
}

static inline __attribute__((always_inline)) sdpa_row_mask
sdpa_fwd_row_mask_of(const private sdpa_fwd_rows *w, int col, const private sdpa_keys *k,
                     const private sdpa_score_mods *mods)
{
    sdpa_row_mask rm;
    rm.pos = sdpa_fwd_row_query(w, col) + k->pos_offset;
    rm.last = k->end - 1;
    if (sdpa_is_causal())
        rm.last = sdpa_imin(rm.last, sdpa_fwd_row_query(w, col) + k->causal_offset);
    rm.last = sdpa_window_last(rm.pos, k->win_right, rm.last);
    rm.first = sdpa_window_first(rm.pos, k->win_left);
    rm.slope2 = sdpa_alibi_slope(mods->alibi_slopes, w->b, w->hq,
                                 sdpa_fwd_row_head(w, sdpa_imin(col, w->rows - 1)), SDPA_LOG2E);
    return rm;
}

/*
 * Scales one column of this sub-group's S tile into log2 units and applies
 * the masks, in place: s[i * s_ld] is key k0 + i (i < rows_s) against tile
 * row r (this lane's query), at key position rm->pos (sdpa_scores.h). The
 * softcap and the ALiBi bias apply before the mask buffer. Keys outside
 * [rm->first, rm->last] (the window's first; the last key this query sees:
 * the end of the keys, of its causal band or of its window) become -inf.
 * Returns the column's maximum.
 *
 * Every tile takes the same path (a select per score, no branch on the
 * tile): Intel's CPU vectorizer treats a branch on the key-loop counter as
 * divergent and would run the loop under lane masks.
 */
static inline __attribute__((always_inline)) float
sdpa_fwd_mask_scores(local float *s, int s_ld, int rows_s, int k0,
                     const private sdpa_score_mods *mods, const private sdpa_row_mask *rm,
                     const private sdpa_fwd_rows *w, int r)
{
    const private sdpa_view *msk = &mods->msk;
    const int first = rm->first, last = rm->last, pos = rm->pos;
    /* The mask row of this query: uniform across the sub-group when the
     * mask has one row for all queries (and the rows are queries). */
    const bool mask_uniform = SC(BROADCAST_MASK_Q) && !SC(Q1_GQA_BATCH);
    long m_off = w->b * msk->s0 + (long)w->head0 * msk->s1;
    /* Rows past the work-group's real ones (a partial query tile) read the
     * last real row's mask: their scores are discarded, and the row after
     * the mask's end may not be mapped. */
    const int r_read = sdpa_imin(r, w->rows - 1);
    if (!mask_uniform)
        m_off = w->b * msk->s0 + (long)sdpa_fwd_row_head(w, r_read) * msk->s1 +
                (long)sdpa_fwd_row_query(w, r_read) * msk->s2;
    /* Likewise keys after `last` (-inf below) read key `last`, or key 0 when
     * the row sees none. */
    const int k_read_max = sdpa_imax(last, 0);

    float mx = -INFINITY;
    for (int i = 0; i < rows_s; i++) {
        float th;
        float x = sdpa_softcap_score(s[i * s_ld], mods->log2_scale, &mods->cap, &th);
        if (SC(ALIBI_KIND) != SDPA_ALIBI_KIND_NONE)
            x = fma(-rm->slope2, (float)abs(pos - (k0 + i)), x);
        if (SC(MASK_KIND) == SDPA_MASK_KIND_BUFFER)
            x = fma(sdpa_load(msk->p, m_off + (long)sdpa_imin(k0 + i, k_read_max) * msk->s3,
                              SC(MSK_DT)),
                    SDPA_LOG2E, x);
        x = k0 + i > last || k0 + i < first ? -INFINITY : x;
        s[i * s_ld] = x;
        mx = fmax(mx, x);
    }
    return mx;
}

/*
 * Turns one column of S (log2 units) into probabilities in place,
 * p = exp2(s - shift), and returns their sum.
 */
static inline float sdpa_fwd_exp_scores(local float *s, int s_ld, int rows_s, float shift)
{
    float sum = 0.0f;
    for (int i = 0; i < rows_s; i++) {
        float p = sdpa_fwd_exp2(s[i * s_ld] - shift);
        s[i * s_ld] = p;
        sum += p;
    }
    return sum;
}

/*
 * The last key, counted from key `key0`, that row `row` of the work-group's
 * tile sees under the causal mask (negative: none), or SDPA_FWD_NO_TRIM
 * without one: the products skip what lies past it (sdpa_fwd_gemm.h). A
 * sub-group-uniform value computed with plain arithmetic, so that the block
 * loops it bounds stay unmasked on the CPU (sdpa_uniform.h).
 */
static inline int sdpa_fwd_causal_last(const private sdpa_fwd_rows *w, int row, int key0,
                                       int causal_offset)
{
    if (!sdpa_is_causal())
        return SDPA_FWD_NO_TRIM;
    return sdpa_fwd_row_query(w, row) + causal_offset - key0;
}

/* Stages the work-group's queries, unscaled (the scale is applied to S in
 * f32): by rows (stride kv_ld: bq * kv_ld <= D_MAX * q_ld) for K read from
 * global memory, else transposed. */
static inline __attribute__((always_inline)) void
sdpa_fwd_stage_queries(const private sdpa_fwd_slm *m, const private sdpa_fwd_place *p,
                       const private sdpa_fwd_rows *w, const private sdpa_fwd_seq *q,
                       const private sdpa_view *qv, int d)
{
    const long q_base = SC(VARLEN) ? q->q_row0 * qv->s2 : w->b * qv->s0;
    const long q_off = q_base + (long)w->head0 * qv->s1 + (long)w->query0 * qv->s2;
    const long q_row_stride = SC(Q1_GQA_BATCH) ? qv->s1 : qv->s2;
    if (sdpa_fwd_k_from_global())
        sdpa_fwd_stage_q(m->q, m->kv_ld, 1, qv->p, q_off, q_row_stride, qv->s3, p->bq, w->rows, d);
    else
        sdpa_fwd_stage_q(m->q, 1, m->q_ld, qv->p, q_off, q_row_stride, qv->s3, p->bq, w->rows, d);
}

/* Starts the running softmax state of this lane's queries (KQ layout, one
 * copy per KQ sub-group) and zeroes this sub-group's part of O (VS layout,
 * its vs_rows rows and vs_nvec_used head-dim vectors): each element belongs
 * to one lane. */
static inline __attribute__((always_inline)) void
sdpa_fwd_start_rows(const private sdpa_fwd_slm *m, const private sdpa_fwd_place *p,
                    const private sdpa_fwd_rows *w, const global float *sinks, int vs_nvec_used)
{
    for (int j = 0; j < p->kq_nvec; j++) {
        const int col = sdpa_fwd_kq_col(p, j);
        const sdpa_fwd_softmax_state st = sdpa_fwd_softmax_start(
                sinks, sdpa_fwd_row_head(w, sdpa_imin(col, w->rows - 1)), true, p->m_kq == 0);
        m->max[p->m_kq * p->bq + col] = st.max;
        m->sum[p->m_kq * p->bq + col] = st.sum;
    }
    for (int i = 0; i < SC(UNROLL_N_VS); i++)
        for (int j = 0; j < vs_nvec_used; j++)
            m->o[(p->vs_row0 + i) * D_MAX + p->vs_d0 + j * SUBGROUP_SIZE + p->lane] = 0.0f;
}

/* S = K^T Q for this sub-group's keys and queries of the tile at k0: K read
 * from global memory (K_FROM_GLOBAL), or from its staged tile. */
static inline __attribute__((always_inline)) void
sdpa_fwd_scores(const private sdpa_fwd_slm *m, const private sdpa_fwd_place *p,
                const private sdpa_fwd_rows *w, const private sdpa_fwd_kv_source *kg,
                int causal_offset, int d_end)
{
    if (sdpa_fwd_k_from_global())
        sdpa_fwd_kq_global_tile(m->s + p->kq_col0, m->s_ld, kg, p->kq_key0,
                                m->q + p->kq_col0 * m->kv_ld, m->kv_ld, SC(UNROLL_M_KQ),
                                SC(REMAINDER_Q)
                                        ? sdpa_iclamp(w->rows - p->kq_col0, 0, SC(UNROLL_N_KQ))
                                        : SC(UNROLL_N_KQ));
    else
        sdpa_fwd_kq_tile(m->s + p->kq_key0 * m->s_ld + p->kq_col0 + p->lane, m->s_ld,
                         m->k + p->kq_key0 * m->k_key_stride, m->k_key_stride, m->k_d_stride,
                         m->q + p->kq_col0 + p->lane, m->q_ld, d_end, SC(UNROLL_M_KQ), p->kq_nvec,
                         sdpa_fwd_causal_last(w, p->kq_col0, kg->k0 + p->kq_key0, causal_offset));
}

/* The dropout of the forward: its numbers, the keep mask output, and the
 * padded [SQ, SK] layout both follow. */
typedef struct sdpa_fwd_dropout {
    sdpa_dropout_args args;
    global uchar *mask;
} sdpa_fwd_dropout;

/* Online softmax of the S tile at key s_key0 (scaled and masked, its tile
 * maxima in m->red): the new running max, P = exp2(S - max) in place, the
 * running sum; P and the factor alpha that rescales O go to local memory.
 * Dropout comes after the sum: the denominator is over the undropped
 * probabilities, P V uses the dropped ones. The keep mask of keys from
 * k_end on is written after the key loop. */
static inline __attribute__((always_inline)) void
sdpa_fwd_softmax_tile(const private sdpa_fwd_slm *m, const private sdpa_fwd_place *p,
                      const private sdpa_fwd_rows *w, const private sdpa_fwd_seq *q, int s_key0,
                      int k_end, const private sdpa_fwd_dropout *drop)
{
    const int bq = p->bq, m_kq = p->m_kq;
    local float *s_tile = m->s + p->kq_key0 * m->s_ld + p->kq_col0 + p->lane;
    for (int j = 0; j < p->kq_nvec; j++) {
        const int col = sdpa_fwd_kq_col(p, j);
        float tile_max = m->red[col];
        for (int mm = 1; mm < SC(WG_M_KQ); mm++)
            tile_max = fmax(tile_max, m->red[mm * bq + col]);
        sdpa_fwd_softmax_state st = {m->max[m_kq * bq + col], m->sum[m_kq * bq + col]};
        float shift;
        const float alpha = sdpa_fwd_update_max(&st, tile_max, &shift);
        const float sum =
                sdpa_fwd_exp_scores(s_tile + j * SUBGROUP_SIZE, m->s_ld, SC(UNROLL_M_KQ), shift);
        m->max[m_kq * bq + col] = st.max;
        m->sum[m_kq * bq + col] = fma(st.sum, alpha, sum);
        if (m_kq == 0)
            m->alpha[col] = alpha;
        if (SC(WITH_DROPOUT))
            sdpa_fwd_dropout_scores(s_tile + j * SUBGROUP_SIZE, m->s_ld, SC(UNROLL_M_KQ),
                                    &drop->args,
                                    sdpa_fwd_dropout_index(w, col, q->sq_max, q->sk_max, s_key0),
                                    s_key0, k_end, col < w->rows, drop->mask);
    }
}

/* The end of the rows (KQ sub-groups with m_kq == 0): the sum over all keys
 * (the KQ sub-groups that split the keys each hold a part), 1 / sum for the
 * VS layout, and with IS_TRAINING the log-sum-exp, [B, Hq, Sq] (VARLEN:
 * [Hq, total_q]). */
static inline __attribute__((always_inline)) void
sdpa_fwd_finish_rows(const private sdpa_fwd_slm *m, const private sdpa_fwd_place *p,
                     const private sdpa_fwd_rows *w, const private sdpa_fwd_seq *q,
                     float keep_scale, global float *lse)
{
    const int bq = p->bq;
    for (int j = 0; j < p->kq_nvec; j++) {
        const int r = sdpa_fwd_kq_col(p, j);
        float l = m->sum[r];
        for (int mm = 1; mm < SC(WG_M_KQ); mm++)
            l += m->sum[mm * bq + r];
        /* With dropout, O = (P o keep) V / ((1 - p) sum). */
        m->inv_sum[r] = sdpa_fwd_inv_sum(l) * keep_scale;
        if (SC(IS_TRAINING) && r < w->rows) {
            long h = sdpa_fwd_row_head(w, r);
            const long ws_row =
                    SC(VARLEN) ? h * (long)q->total_q + q->q_row0 : (w->b * w->hq + h) * q->sq_max;
            lse[ws_row + sdpa_fwd_row_query(w, r)] = sdpa_fwd_lse(m->max[r], l);
        }
    }
}

/* Normalizes and stores this sub-group's part of O: its first `rows` rows,
 * head-dim elements vs_d0 .. min(vs_d0 + UNROLL_M_VS, dv) - 1. */
static inline __attribute__((always_inline)) void
sdpa_fwd_store_o(const private sdpa_fwd_slm *m, const private sdpa_fwd_place *p,
                 const private sdpa_fwd_rows *w, const private sdpa_fwd_seq *q,
                 const private sdpa_out_view *dst, int rows, int dv)
{
    const int vs_d0 = p->vs_d0;
    const int n = sdpa_iclamp(dv - vs_d0, 0, SC(UNROLL_M_VS));
    for (int i = 0; i < rows; i++) {
        const int r = p->vs_row0 + i;
        /* The base is computed here, not kept across the key loop: a 64-bit
         * value live through it costs GPU registers (a spill on Xe-HPC). */
        const long dst_base = SC(VARLEN) ? q->q_row0 * dst->s2 : w->b * dst->s0;
        const long dst_off = dst_base + (long)sdpa_fwd_row_head(w, r) * dst->s1 +
                             (long)sdpa_fwd_row_query(w, r) * dst->s2 + (long)vs_d0 * dst->s3;
        local const float *o_row = m->o + r * D_MAX + vs_d0;
        if (dst->s3 == 1)
            sdpa_fwd_store_row(dst->p, dst_off, 1, o_row, n, m->inv_sum[r]);
        else
            sdpa_fwd_store_row(dst->p, dst_off, dst->s3, o_row, n, m->inv_sum[r]);
    }
}

__attribute__((intel_reqd_sub_group_size(SUBGROUP_SIZE))) kernel void sdpa_fwd(
#include "sdpa_fwd_args.def"
)
{
    /* Prologue: where this sub-group works, which queries and keys the
     * work-group owns, the tensors and the score modifiers. */
    const sdpa_fwd_place p = sdpa_fwd_place_of();
    const sdpa_fwd_seq seq =
            sdpa_fwd_seq_of(SQ, SK, CU_SEQLENS_Q, CU_SEQLENS_K, TOTAL_Q, TOTAL_K, CACHE_SEQLENS);
    const sdpa_fwd_rows w = sdpa_fwd_work_group_rows(p.bq, seq.sq);
    /* A work-group past its sequence's queries writes nothing (all of it
     * returns: no barrier is left waiting). */
    if (SC(VARLEN) && (seq.sq <= 0 || w.rows <= 0))
        return;
    const sdpa_fwd_slm m = sdpa_fwd_slm_of(SLM, &p);
    const sdpa_view q_view = SDPA_VIEW(Q), k_view = SDPA_VIEW(K), v_view = SDPA_VIEW(V);
    const sdpa_keys keys = sdpa_fwd_keys_of(&w, &seq, p.bk, WINDOW_LEFT, WINDOW_RIGHT);
    const int d_end = SC(D_FULL) ? D_MAX : D; /* head size, folded when full */

    const sdpa_score_mods mods =
            sdpa_score_mods_of(SCALE_PTR, SCALE, INV_SCALE, SOFTCAP, ALIBI_SLOPES, SDPA_VIEW(MSK));
    const sdpa_fwd_kv_format k_fmt = SDPA_FWD_KV_FORMAT(KEY, K_SCALES, K_ZP, D, w.hkv);
    const sdpa_fwd_kv_format v_fmt = SDPA_FWD_KV_FORMAT(VAL, V_SCALES, V_ZP, D_VAL, w.hkv);
    const sdpa_fwd_kv_head kv =
            sdpa_fwd_kv_head_in(&w, &k_view, &v_view, SK, TOTAL_K, seq.k_row0, BLOCK_LOG2);
    const sdpa_fwd_paged pg =
            sdpa_fwd_paged_of(BLOCK_TABLE, w.b, BLOCK_TABLE_STRIDE, BLOCK_LOG2, w.n_kv, NUM_BLOCKS);
    sdpa_fwd_dropout drop;
    drop.args = sdpa_dropout_args_read(DROPOUT_SEED, DROPOUT_OFFSET, DROPOUT_P, DROPOUT_SEED_PTR,
                                       DROPOUT_OFFSET_PTR, DROPOUT_P_PTR);
    drop.mask = DROPOUT_MASK;

    /* O's rows and head-dim vectors this sub-group really has: the vectors
     * that start past V's head size (or past D_MAX, when the VS tiles cover
     * more than the bucket) are never touched. */
    const int vs_rows =
            SC(REMAINDER_Q) ? sdpa_iclamp(w.rows - p.vs_row0, 0, SC(UNROLL_N_VS)) : SC(UNROLL_N_VS);
    const int vs_nvec_used =
            SC(D_FULL) ? sdpa_iclamp((D_MAX - p.vs_d0) / SUBGROUP_SIZE, 0, p.vs_nvec)
                       : sdpa_iclamp((D_VAL - p.vs_d0 + SUBGROUP_SIZE - 1) / SUBGROUP_SIZE, 0,
                                     p.vs_nvec);

    sdpa_fwd_stage_queries(&m, &p, &w, &seq, &q_view, D);
    sdpa_fwd_start_rows(&m, &p, &w, SINKS, vs_nvec_used);
    /* The finish reads the other KQ sub-groups' sums, also when the key loop
     * (and its barriers) runs zero times: a causal tile that sees no key. */
    if (SC(WG_M_KQ) > 1)
        barrier(CLK_LOCAL_MEM_FENCE);

    for (int k0 = keys.begin; k0 < keys.end; k0 += p.bk) {
        /* 1. K and V tiles, f32, dequantized (or read where they lie). */
        const sdpa_fwd_kv_source kg = {K, kv.k, K_S2, K_S0, kv.token0, k0, 0, seq.sk, &k_fmt, &pg};
        const sdpa_fwd_kv_source vg = {V,  kv.v,    V_S2,   V_S0,   kv.token0,
                                       k0, p.vs_d0, seq.sk, &v_fmt, &pg};
        if (!sdpa_fwd_k_from_global())
            sdpa_fwd_stage_kv(m.k, m.k_key_stride, m.k_d_stride, &kg, K_S3, p.bk, D,
                              SC(TRANSPOSE_K));
        if (sdpa_fwd_v_from_global())
            sdpa_fwd_v_prefetch(&vg, k0, p.bk, D_VAL);
        else
            sdpa_fwd_stage_kv(m.v, m.kv_ld, 1, &vg, V_S3, p.bk, D_VAL, false);
        barrier(CLK_LOCAL_MEM_FENCE);

        /* 2. S = K^T Q for this sub-group's keys and queries. */
        sdpa_fwd_scores(&m, &p, &w, &kg, keys.causal_offset, d_end);

        /* 3. Scale and mask S; the maximum of each query over the tile's
         *    keys, agreed between the sub-groups that split the keys
         *    (through local memory: they share a query). */
        const int s_key0 = k0 + p.kq_key0;
        local float *s_tile = m.s + p.kq_key0 * m.s_ld + p.kq_col0 + p.lane;
        for (int j = 0; j < p.kq_nvec; j++) {
            const int col = sdpa_fwd_kq_col(&p, j);
            const sdpa_row_mask rm = sdpa_fwd_row_mask_of(&w, col, &keys, &mods);
            m.red[p.m_kq * p.bq + col] =
                    sdpa_fwd_mask_scores(s_tile + j * SUBGROUP_SIZE, m.s_ld, SC(UNROLL_M_KQ),
                                         s_key0, &mods, &rm, &w, col);
        }
        if (SC(WG_M_KQ) > 1)
            barrier(CLK_LOCAL_MEM_FENCE);

        /*    Online softmax: P = exp2(S - max), alpha rescales O. */
        sdpa_fwd_softmax_tile(&m, &p, &w, &seq, s_key0, keys.end, &drop);
        barrier(CLK_LOCAL_MEM_FENCE);

        /* 4. O = alpha O + V P. Always over the whole tile: past the end of
         *    the keys P and V are 0 (a trip count that depends on the tile
         *    would make the CPU vectorizer mask the loop, see above). */
        sdpa_fwd_vs_tile(m.o + p.vs_row0 * D_MAX + p.vs_d0 + p.lane, D_MAX, m.v + p.vs_d0 + p.lane,
                         m.kv_ld, &vg, m.s + p.vs_row0, m.s_ld, m.alpha + p.vs_row0, p.bk, vs_rows,
                         vs_nvec_used);
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    /* Epilogue. The keep mask of the keys past the causal band of the last
     * row (the key loop stops there): the mask output covers every element. */
    if (SC(DROPOUT_OUTPUT_MASK) && sdpa_is_causal())
        sdpa_fwd_dropout_mask_tail(&w, SQ, SK, seq.sk, keys.end, &drop.args, DROPOUT_MASK,
                                   p.sg_id * SUBGROUP_SIZE + p.lane,
                                   SUBGROUP_SIZE * SC(WG_M_KQ) * SC(WG_N_KQ));
    if (p.m_kq == 0)
        sdpa_fwd_finish_rows(&m, &p, &w, &seq, drop.args.keep_scale, WS);
    barrier(CLK_LOCAL_MEM_FENCE);
    const sdpa_out_view dst = SDPA_OUT_VIEW(DST);
    sdpa_fwd_store_o(&m, &p, &w, &seq, &dst, vs_rows, D_VAL);
}
