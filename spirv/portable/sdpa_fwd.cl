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

/*
 * Scales one column of this sub-group's S tile into log2 units and applies
 * the masks, in place: s[i * s_ld] is key k0 + i (i < rows_s) against tile
 * row r (this lane's query), at key position pos (sdpa_scores.h). The
 * softcap (cap) and the ALiBi bias (slope2: the slope in log2 units) apply
 * before the mask buffer. Keys before `first` (the window's first) or after
 * `last` (the last key this query sees: the end of the keys, of its causal
 * band or of its window) become -inf. Returns the column's maximum.
 *
 * Every tile takes the same path (a select per score, no branch on the
 * tile): Intel's CPU vectorizer treats a branch on the key-loop counter as
 * divergent and would run the loop under lane masks.
 */
static inline __attribute__((always_inline)) float
sdpa_fwd_mask_scores(local float *s, int s_ld, int rows_s, float log2_scale, int k0, int first,
                     int last, int pos, float slope2, const private sdpa_softcap *cap,
                     const private sdpa_fwd_rows *w, int r, const global void *msk, long ms0,
                     long ms1, long ms2, long ms3)
{
    /* The mask row of this query: uniform across the sub-group when the
     * mask has one row for all queries (and the rows are queries). */
    const bool mask_uniform = SC(BROADCAST_MASK_Q) && !SC(Q1_GQA_BATCH);
    long m_off = w->b * ms0 + (long)w->head0 * ms1;
    /* Rows past the work-group's real ones (a partial query tile) read the
     * last real row's mask: their scores are discarded, and the row after
     * the mask's end may not be mapped. */
    const int r_read = sdpa_imin(r, w->rows - 1);
    if (!mask_uniform)
        m_off = w->b * ms0 + (long)sdpa_fwd_row_head(w, r_read) * ms1 +
                (long)sdpa_fwd_row_query(w, r_read) * ms2;
    /* Likewise keys after `last` (-inf below) read key `last`, or key 0 when
     * the row sees none. */
    const int k_read_max = sdpa_imax(last, 0);

    float mx = -INFINITY;
    for (int i = 0; i < rows_s; i++) {
        float th;
        float x = sdpa_softcap_score(s[i * s_ld], log2_scale, cap, &th);
        if (SC(ALIBI_KIND) != SDPA_ALIBI_KIND_NONE)
            x = fma(-slope2, (float)abs(pos - (k0 + i)), x);
        if (SC(MASK_KIND) == SDPA_MASK_KIND_BUFFER)
            x = fma(sdpa_load(msk, m_off + (long)sdpa_imin(k0 + i, k_read_max) * ms3, SC(MSK_DT)),
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

__attribute__((intel_reqd_sub_group_size(SUBGROUP_SIZE))) kernel void sdpa_fwd(
#include "sdpa_fwd_args.def"
)
{
    /* Work-group tiles (kernel_abi.h) and this sub-group's place in them. */
    const int bk = SC(UNROLL_M_KQ) * SC(WG_M_KQ);
    const int bq = SC(UNROLL_N_KQ) * SC(WG_N_KQ);
    const int sg_id = get_local_id(1);
    const int lane = get_sub_group_local_id();
    const int m_kq = sg_id % SC(WG_M_KQ), n_kq = sg_id / SC(WG_M_KQ);
    const int m_vs = sg_id % SC(WG_M_VS), n_vs = sg_id / SC(WG_M_VS);
    const int kq_key0 = m_kq * SC(UNROLL_M_KQ); /* first key of the S tile */
    const int kq_col0 = n_kq * SC(UNROLL_N_KQ); /* first query of the S tile */
    const int kq_nvec = SC(UNROLL_N_KQ) / SUBGROUP_SIZE;
    const int vs_d0 = m_vs * SC(UNROLL_M_VS);   /* first head-dim row of O */
    const int vs_row0 = n_vs * SC(UNROLL_N_VS); /* first query of O */
    const int vs_nvec = SC(UNROLL_M_VS) / SUBGROUP_SIZE;
    const int d_end = SC(D_FULL) ? D_MAX : D; /* head size, folded when full */

    /* This work-group's sequence: the whole problem, or with VARLEN sequence
     * b of the packed batch, its own sq queries and sk keys from packed rows
     * q_row0 and k_row0 (SQ and SK are then the maxima, which only the
     * padded layout of the mask and the dropout numbers follow). */
    int sq = SQ, sk = SK;
    long q_row0 = 0, k_row0 = 0;
    if (SC(VARLEN)) {
        const long b = get_group_id(2);
        const sdpa_packed_seq qs = sdpa_packed_seq_of(CU_SEQLENS_Q, b, TOTAL_Q, SQ);
        const sdpa_packed_seq ks = sdpa_packed_seq_of(CU_SEQLENS_K, b, TOTAL_K, SK);
        q_row0 = qs.row0;
        sq = qs.len;
        k_row0 = ks.row0;
        sk = ks.len;
    }
    /* A paged cache: the sequence's keys are its cache length. */
    if (SC(PAGED))
        sk = sdpa_paged_seq_len(CACHE_SEQLENS, get_group_id(2), SK);
    const sdpa_fwd_rows w = sdpa_fwd_work_group_rows(bq, sq);
    /* A work-group past its sequence's queries writes nothing (all of it
     * returns: no barrier is left waiting). */
    if (SC(VARLEN) && (sq <= 0 || w.rows <= 0))
        return;
    const long q_base = SC(VARLEN) ? q_row0 * Q_S2 : w.b * Q_S0;
    const bool transpose_k = SC(TRANSPOSE_K);

    /* Local memory, SDPA_FWD_SLM_FLOATS in all. Tiles the inner loops read
     * with one lane per column are laid out with that column contiguous.
     * Rows are padded by SDPA_FWD_SLM_PAD floats: with a power-of-two row
     * length, a micro-kernel walking down a column maps every row to the
     * same few cache sets (L1 thrashing on the CPU, bank conflicts on GPUs). */
    const int pad = SDPA_FWD_SLM_PAD;
    const int q_ld = bq + pad, s_ld = bq + pad, kv_ld = D_MAX + pad;
    local float *q_slm = SLM;                          /* Q^T [D_MAX][q_ld] */
    local float *k_slm = q_slm + D_MAX * q_ld;         /* K [bk][kv_ld] or K^T [D_MAX][bk + pad] */
    local float *v_slm = k_slm + (bk + pad) * kv_ld;   /* V [bk][kv_ld] */
    local float *s_slm = v_slm + bk * kv_ld;           /* S, then P [bk][s_ld] */
    local float *o_slm = s_slm + bk * s_ld;            /* O [bq][D_MAX] */
    local float *max_slm = o_slm + bq * D_MAX;         /* running max [WG_M_KQ][bq] */
    local float *sum_slm = max_slm + SC(WG_M_KQ) * bq; /* running sums [WG_M_KQ][bq] */
    local float *red_slm = sum_slm + SC(WG_M_KQ) * bq; /* tile maxima [WG_M_KQ][bq] */
    local float *alpha_slm = red_slm + SC(WG_M_KQ) * bq; /* rescaling of O [bq] */
    local float *inv_sum_slm = alpha_slm + bq;           /* 1 / sum [bq] */
    const int k_key_stride = transpose_k ? 1 : kv_ld;
    const int k_d_stride = transpose_k ? bk + pad : 1;

    /* Q, unscaled: the scale is applied to S in f32. */
    {
        long q_off = q_base + (long)w.head0 * Q_S1 + (long)w.query0 * Q_S2;
        long q_row_stride = SC(Q1_GQA_BATCH) ? Q_S1 : Q_S2;
        /* By rows (stride kv_ld: bq * kv_ld <= D_MAX * q_ld) for K read
         * from global memory, else transposed. */
        if (sdpa_fwd_k_from_global())
            sdpa_fwd_stage_q(q_slm, kv_ld, 1, Q, q_off, q_row_stride, Q_S3, bq, w.rows, D);
        else
            sdpa_fwd_stage_q(q_slm, 1, q_ld, Q, q_off, q_row_stride, Q_S3, bq, w.rows, D);
    }

    /* Keys this work-group can see: all of them, or up to the causal band
     * of its last row; with a window, from the first key of its first row's
     * window (rounded down to a tile) to the last of its last row's: key
     * tiles outside the band are never loaded. Not with the dropout keep
     * mask, which covers every key (the fix-up after the loop writes the
     * keys past a causal band only). */
    const int causal_offset = sdpa_causal_offset(sk, sq);
    const int pos_offset = sk - sq; /* query i sits at key position i + Sk - Sq */
    int k_end = sk, k_begin = 0;
    if (sdpa_is_causal())
        k_end = sdpa_iclamp(sdpa_fwd_row_query(&w, w.rows - 1) + causal_offset + 1, 0, sk);
    if (SC(WITH_WINDOW) && !SC(DROPOUT_OUTPUT_MASK)) {
        const int pos_last = sdpa_fwd_row_query(&w, w.rows - 1) + pos_offset;
        k_end = sdpa_iclamp(sdpa_window_last(pos_last, WINDOW_RIGHT, k_end - 1) + 1, 0, sk);
        const int pos_first = sdpa_fwd_row_query(&w, 0) + pos_offset;
        /* Rounded down as max(0, x / bk) * bk: LLVM rewrites x / bk * bk
         * into x - x % bk with a `freeze`, which llvm-spirv-15 cannot
         * translate. */
        k_begin = sdpa_imax(0, sdpa_window_first(pos_first, WINDOW_LEFT) / bk) * bk;
        k_begin = sdpa_imin(k_begin, sk);
    }

    const float log2_scale = sdpa_score_factor(SDPA_LOG2E, SCALE_PTR, SCALE, INV_SCALE);
    const sdpa_softcap cap = sdpa_softcap_of(SOFTCAP, log2_scale, SDPA_LOG2E);
    const sdpa_fwd_kv_format k_fmt = SDPA_FWD_KV_FORMAT(KEY, K_SCALES, K_ZP, D, w.hkv);
    const sdpa_fwd_kv_format v_fmt = SDPA_FWD_KV_FORMAT(VAL, V_SCALES, V_ZP, D_VAL, w.hkv);
    const sdpa_fwd_kv_head kv = sdpa_fwd_kv_head_of(&w, K_S0, K_S1, K_S2, V_S0, V_S1, V_S2, SK,
                                                    TOTAL_K, k_row0, BLOCK_LOG2);
    const long k_head = kv.k, v_head = kv.v, token0 = kv.token0;
    sdpa_fwd_paged pg;
    pg.table = SC(PAGED) ? BLOCK_TABLE + w.b * BLOCK_TABLE_STRIDE : BLOCK_TABLE;
    pg.block_log2 = BLOCK_LOG2;
    pg.block_tokens = (long)w.n_kv << BLOCK_LOG2;
    pg.num_blocks = NUM_BLOCKS;
    const sdpa_dropout_args drop =
            sdpa_dropout_args_read(DROPOUT_SEED, DROPOUT_OFFSET, DROPOUT_P, DROPOUT_SEED_PTR,
                                   DROPOUT_OFFSET_PTR, DROPOUT_P_PTR);

    /* Running softmax state of this lane's queries (KQ layout, one copy per
     * KQ sub-group) and O (VS layout): each element belongs to one lane. */
    for (int j = 0; j < kq_nvec; j++) {
        const int col = kq_col0 + j * SUBGROUP_SIZE + lane;
        const sdpa_fwd_softmax_state st = sdpa_fwd_softmax_start(
                SINKS, sdpa_fwd_row_head(&w, sdpa_imin(col, w.rows - 1)), true, m_kq == 0);
        max_slm[m_kq * bq + col] = st.max;
        sum_slm[m_kq * bq + col] = st.sum;
    }

    /* O's rows and head-dim vectors this sub-group really has: the vectors
     * that start past V's head size (or past D_MAX, when the VS tiles cover
     * more than the bucket) are never touched. */
    const int vs_rows =
            SC(REMAINDER_Q) ? sdpa_iclamp(w.rows - vs_row0, 0, SC(UNROLL_N_VS)) : SC(UNROLL_N_VS);
    const int vs_nvec_used =
            SC(D_FULL) ? sdpa_iclamp((D_MAX - vs_d0) / SUBGROUP_SIZE, 0, vs_nvec)
                       : sdpa_iclamp((D_VAL - vs_d0 + SUBGROUP_SIZE - 1) / SUBGROUP_SIZE, 0,
                                     vs_nvec);
    for (int i = 0; i < SC(UNROLL_N_VS); i++)
        for (int j = 0; j < vs_nvec_used; j++)
            o_slm[(vs_row0 + i) * D_MAX + vs_d0 + j * SUBGROUP_SIZE + lane] = 0.0f;
    /* The finish reads the other KQ sub-groups' sums, also when the key loop
     * (and its barriers) runs zero times: a causal tile that sees no key. */
    if (SC(WG_M_KQ) > 1)
        barrier(CLK_LOCAL_MEM_FENCE);

    for (int k0 = k_begin; k0 < k_end; k0 += bk) {
        /* 1. K and V tiles, f32, dequantized (or read where they lie). */
        const sdpa_fwd_kv_source kg = {K, k_head, K_S2, K_S0, token0, k0, 0, sk, &k_fmt, &pg};
        if (!sdpa_fwd_k_from_global())
            sdpa_fwd_stage_kv(k_slm, k_key_stride, k_d_stride, K, k_head, K_S2, K_S3, &k_fmt,
                              token0, k0, bk, sk, D, transpose_k, &pg, K_S0);
        const sdpa_fwd_kv_source vg = {V, v_head, V_S2, V_S0, token0, k0, vs_d0, sk, &v_fmt, &pg};
        if (sdpa_fwd_v_from_global())
            sdpa_fwd_v_prefetch(&vg, k0, bk, D_VAL);
        else
            sdpa_fwd_stage_kv(v_slm, kv_ld, 1, V, v_head, V_S2, V_S3, &v_fmt, token0, k0, bk, sk,
                              D_VAL, false, &pg, V_S0);
        barrier(CLK_LOCAL_MEM_FENCE);

        /* 2. S = K^T Q for this sub-group's keys and queries. */
        local float *s_tile = s_slm + kq_key0 * s_ld + kq_col0 + lane;
        if (sdpa_fwd_k_from_global())
            sdpa_fwd_kq_global_tile(s_slm + kq_col0, s_ld, &kg, kq_key0, q_slm + kq_col0 * kv_ld,
                                    kv_ld,
                                    SC(UNROLL_M_KQ),
                                    SC(REMAINDER_Q)
                                            ? sdpa_iclamp(w.rows - kq_col0, 0, SC(UNROLL_N_KQ))
                                            : SC(UNROLL_N_KQ));
        else
            sdpa_fwd_kq_tile(s_tile, s_ld, k_slm + kq_key0 * k_key_stride, k_key_stride, k_d_stride,
                         q_slm + kq_col0 + lane, q_ld, d_end, SC(UNROLL_M_KQ), kq_nvec,
                         sdpa_fwd_causal_last(&w, kq_col0, k0 + kq_key0, causal_offset));

        /* 3. Scale and mask S; the maximum of each query over the tile's
         *    keys, agreed between the sub-groups that split the keys. */
        const int s_key0 = k0 + kq_key0;
        for (int j = 0; j < kq_nvec; j++) {
            const int col = kq_col0 + j * SUBGROUP_SIZE + lane;
            const int pos = sdpa_fwd_row_query(&w, col) + pos_offset;
            int last = k_end - 1;
            if (sdpa_is_causal())
                last = sdpa_imin(last, sdpa_fwd_row_query(&w, col) + causal_offset);
            last = sdpa_window_last(pos, WINDOW_RIGHT, last);
            const float slope2 = sdpa_alibi_slope(
                    ALIBI_SLOPES, w.b, w.hq, sdpa_fwd_row_head(&w, sdpa_imin(col, w.rows - 1)),
                    SDPA_LOG2E);
            red_slm[m_kq * bq + col] = sdpa_fwd_mask_scores(
                    s_tile + j * SUBGROUP_SIZE, s_ld, SC(UNROLL_M_KQ), log2_scale, s_key0,
                    sdpa_window_first(pos, WINDOW_LEFT), last, pos, slope2, &cap, &w, col, MSK,
                    MSK_S0, MSK_S1, MSK_S2, MSK_S3);
        }
        if (SC(WG_M_KQ) > 1)
            barrier(CLK_LOCAL_MEM_FENCE);

        /*    Online softmax: new running max, P = exp2(S - max), running
         *    sum; P and the factor alpha that rescales O go to local memory. */
        for (int j = 0; j < kq_nvec; j++) {
            const int col = kq_col0 + j * SUBGROUP_SIZE + lane;
            float tile_max = red_slm[col];
            for (int mm = 1; mm < SC(WG_M_KQ); mm++)
                tile_max = fmax(tile_max, red_slm[mm * bq + col]);
            sdpa_fwd_softmax_state st = {max_slm[m_kq * bq + col], sum_slm[m_kq * bq + col]};
            float shift;
            const float alpha = sdpa_fwd_update_max(&st, tile_max, &shift);
            const float sum =
                    sdpa_fwd_exp_scores(s_tile + j * SUBGROUP_SIZE, s_ld, SC(UNROLL_M_KQ), shift);
            max_slm[m_kq * bq + col] = st.max;
            sum_slm[m_kq * bq + col] = fma(st.sum, alpha, sum);
            if (m_kq == 0)
                alpha_slm[col] = alpha;
            /* Dropout after the sum: the denominator is over the undropped
             * probabilities, P V uses the dropped ones. The keep mask of
             * keys from k_end on is written after the loop. */
            if (SC(WITH_DROPOUT))
                sdpa_fwd_dropout_scores(s_tile + j * SUBGROUP_SIZE, s_ld, SC(UNROLL_M_KQ), &drop,
                                        sdpa_fwd_dropout_index(&w, col, SQ, SK, s_key0), s_key0,
                                        k_end, col < w.rows, DROPOUT_MASK);
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        /* 4. O = alpha O + V P. Always over the whole tile: past the end of
         *    the keys P and V are 0 (a trip count that depends on the tile
         *    would make the CPU vectorizer mask the loop, see above). */
        sdpa_fwd_vs_tile(o_slm + vs_row0 * D_MAX + vs_d0 + lane, D_MAX, v_slm + vs_d0 + lane, kv_ld,
                         &vg, s_slm + vs_row0, s_ld, alpha_slm + vs_row0, bk, vs_rows,
                         vs_nvec_used);
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    /* The keep mask of the keys past the causal band of the last row (the
     * key loop stops there): the mask output covers every element. */
    if (SC(DROPOUT_OUTPUT_MASK) && sdpa_is_causal())
        sdpa_fwd_dropout_mask_tail(&w, SQ, SK, sk, k_end, &drop, DROPOUT_MASK,
                                   sg_id * SUBGROUP_SIZE + lane,
                                   SUBGROUP_SIZE * SC(WG_M_KQ) * SC(WG_N_KQ));

    /* Finish: the sum over all keys (the KQ sub-groups that split the keys
     * each hold a part), the log-sum-exp, and 1 / sum for the VS layout. */
    if (m_kq == 0) {
        for (int j = 0; j < kq_nvec; j++) {
            const int r = kq_col0 + j * SUBGROUP_SIZE + lane;
            float l = sum_slm[r];
            for (int mm = 1; mm < SC(WG_M_KQ); mm++)
                l += sum_slm[mm * bq + r];
            /* With dropout, O = (P o keep) V / ((1 - p) sum). */
            inv_sum_slm[r] = sdpa_fwd_inv_sum(l) * drop.keep_scale;
            if (SC(IS_TRAINING) && r < w.rows) {
                long h = sdpa_fwd_row_head(&w, r);
                /* [B, Hq, Sq], with VARLEN [Hq, total_q] */
                const long ws_row = SC(VARLEN) ? h * (long)TOTAL_Q + q_row0 : (w.b * w.hq + h) * SQ;
                WS[ws_row + sdpa_fwd_row_query(&w, r)] = sdpa_fwd_lse(max_slm[r], l);
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    /* Normalize and store this sub-group's part of O. */
    const int n = sdpa_iclamp(D_VAL - vs_d0, 0, SC(UNROLL_M_VS));
    for (int i = 0; i < vs_rows; i++) {
        const int r = vs_row0 + i;
        /* The base is computed here, not kept across the key loop: a 64-bit
         * value live through it costs GPU registers (a spill on Xe-HPC). */
        const long dst_base = SC(VARLEN) ? q_row0 * DST_S2 : w.b * DST_S0;
        const long dst_off = dst_base + (long)sdpa_fwd_row_head(&w, r) * DST_S1 +
                             (long)sdpa_fwd_row_query(&w, r) * DST_S2 + (long)vs_d0 * DST_S3;
        local const float *o_row = o_slm + r * D_MAX + vs_d0;
        if (DST_S3 == 1)
            sdpa_fwd_store_row(DST, dst_off, 1, o_row, n, inv_sum_slm[r]);
        else
            sdpa_fwd_store_row(DST, dst_off, DST_S3, o_row, n, inv_sum_slm[r]);
    }
}
