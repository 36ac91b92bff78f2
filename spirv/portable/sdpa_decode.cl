/*
 * sdpa_decode.cl - thin-Q forward (decode: Sq <= 8, a K/V head's rows in blocks)
 * with the sub-group's lanes along keys, and split-KV (flash-decoding).
 *
 * The portable forward puts lanes along queries: with one query and four
 * query heads per K/V head, 12 of 16 lanes idle. Here a work-group is one
 * sub-group that owns a block of rows of one (batch, K/V head) - all its
 * query heads and queries, or DECODE_ROWS of them when they do not fit
 * local memory at once (MLA: 128 query heads of head size 576 on one K/V
 * head) - and streams a range of keys (its split) in tiles of one key per
 * lane, reading K and V once per block of rows. Per tile:
 *
 *   1. stage K (transposed: keys along lanes) and V as f32 in local memory,
 *      converted and dequantized once for all rows (sdpa_fwd_tile.h);
 *   2. per row, each lane scores its key against the row's query (Q in local
 *      memory), applies the score modifiers and masks (sdpa_scores.h), and
 *      the sub-group agrees on the tile maximum and sum (online softmax in
 *      log2 units, sdpa_fwd_softmax.h); P goes to local memory;
 *   3. O = alpha O + P V with lanes along the head dimension.
 *
 * Geometry, local memory and the split scratch layout: kernel_abi_decode.h.
 * Arguments: sdpa_fwd_args.def (the dropout and varlen ones are unused: the
 * host keeps those problems on the portable forward).
 */
#include "sdpa_common.h"
#include "sdpa_device_arrays.h"
#include "kernel_abi_decode.h"
#include "sdpa_fwd_quant.h"
#include "sdpa_fwd_rows.h"
#include "sdpa_fwd_softmax.h"
#include "sdpa_fwd_tile.h"
#include "sdpa_scores.h"
#include "sdpa_uniform.h"

#define BK SDPA_DECODE_KEYS(SUBGROUP_SIZE)

/* Row r of the work-group, query i of query head h (kernel_abi_decode.h),
 * counted rather than divided: LLVM turns r / SQ with r % SQ into a
 * `freeze`, which llvm-spirv-15 cannot translate. Row 0 is query w.query0
 * of query head w.head0 (a row block may start inside a head's queries). */
#define SDPA_DECODE_FOR_ROWS(r, h, i)                                                              \
    for (int r = 0, h = w.head0, i = w.query0; r < rows;                                           \
         r++, h += (i + 1 == SQ), i = (i + 1 == SQ) ? 0 : i + 1)

/* The masked score of row (h, i) for key `key` (log2 units), -inf outside
 * [first, last] or past k_hi. qk is the raw product q.k. */
static inline __attribute__((always_inline)) float
sdpa_decode_score(float qk, float log2_scale, const private sdpa_softcap *cap, float slope2,
                  int pos, int key, int first, int last, const global void *msk, long m_row,
                  long ms3)
{
    if (key < first || key > last)
        return -INFINITY;
    float th;
    float s = sdpa_softcap_score(qk, log2_scale, cap, &th);
    if (SC(ALIBI_KIND) != SDPA_ALIBI_KIND_NONE)
        s = fma(-slope2, (float)abs(pos - key), s);
    if (SC(MASK_KIND) == SDPA_MASK_KIND_BUFFER)
        s = fma(sdpa_load(msk, m_row + (long)key * ms3, SC(MSK_DT)), SDPA_LOG2E, s);
    return s;
}

__attribute__((intel_reqd_sub_group_size(SUBGROUP_SIZE))) kernel void sdpa_decode(
#include "sdpa_fwd_args.def"
)
{
    const int lane = get_sub_group_local_id();
    const int split = get_group_id(0), n_splits = get_num_groups(0);
    const int group = SC(KV_GROUP_SIZE);
    /* Group (split, K/V head * row blocks + block, batch): this block's
     * rows row0 .. row0 + rows - 1 of the K/V head's group * SQ. */
    const int all_rows = group * SQ;
    const int blocked = SC(DECODE_ROWS) > 0;
    const int block_rows = blocked ? SC(DECODE_ROWS) : all_rows;
    const int n_blocks = blocked ? (all_rows + block_rows - 1) / block_rows : 1;
    sdpa_fwd_rows w;
    w.b = get_group_id(2);
    w.hkv = blocked ? get_group_id(1) / n_blocks : get_group_id(1);
    w.n_kv = blocked ? get_num_groups(1) / n_blocks : get_num_groups(1);
    w.hq = w.n_kv * group;
    const int row0 = blocked ? (get_group_id(1) - w.hkv * n_blocks) * block_rows : 0;
    const int head_in_group = blocked ? row0 / SQ : 0;
    w.head0 = w.hkv * group + head_in_group;
    w.query0 = blocked ? row0 - head_in_group * SQ : 0;
    const int rows = blocked ? sdpa_imin(block_rows, all_rows - row0) : all_rows;
    const int sk = SC(PAGED) ? sdpa_paged_seq_len(CACHE_SEQLENS, w.b, SK) : SK;

    /* This split's keys, then the band every row's causal mask and window
     * leave (keys outside it are masked per row below). */
    const int tiles = (sk + BK - 1) / BK;
    const int tiles_per_split = (tiles + n_splits - 1) / n_splits;
    const int k_lo_split = sdpa_imin(split * tiles_per_split * BK, sk);
    int k_hi = sdpa_imin(k_lo_split + tiles_per_split * BK, sk);
    const int causal_offset = sdpa_causal_offset(sk, SQ);
    const int pos_offset = sk - SQ; /* query i sits at key position i + Sk - Sq */
    int k_lo = k_lo_split;
    if (sdpa_is_causal())
        k_hi = sdpa_iclamp(SQ - 1 + causal_offset + 1, k_lo, k_hi);
    if (SC(WITH_WINDOW)) {
        k_hi = sdpa_iclamp(sdpa_window_last(SQ - 1 + pos_offset, WINDOW_RIGHT, k_hi - 1) + 1, k_lo,
                           k_hi);
        k_lo = sdpa_iclamp(sdpa_window_first(pos_offset, WINDOW_LEFT), k_lo, k_hi);
    }

    local float *q_slm = SLM;                       /* Q [rows][D] */
    local float *k_slm = q_slm + rows * D;          /* K [BK][D] */
    local float *v_slm = k_slm + D * BK;            /* V [BK][D_VAL] */
    local float *p_slm = v_slm + BK * D_VAL;        /* P [rows][BK] */
    local float *o_slm = p_slm + rows * BK;         /* O [rows][D_VAL] */
    local float *max_slm = o_slm + rows * D_VAL;    /* running max [rows][sg] */
    local float *sum_slm = max_slm + rows * SUBGROUP_SIZE;   /* running sum [rows][sg] */
    local float *alpha_slm = sum_slm + rows * SUBGROUP_SIZE; /* rescaling [rows][sg] */

    SDPA_DECODE_FOR_ROWS(r, h, i) {
        const long q_off = w.b * Q_S0 + (long)h * Q_S1 + (long)i * Q_S2;
        for (int d = lane; d < D; d += SUBGROUP_SIZE)
            q_slm[r * D + d] = sdpa_load(Q, q_off + (long)d * Q_S3, SC(QRY_DT));
        for (int d = lane; d < D_VAL; d += SUBGROUP_SIZE)
            o_slm[r * D_VAL + d] = 0.0f;
        const sdpa_fwd_softmax_state st =
                sdpa_fwd_softmax_start(SINKS, h, !SC(DECODE_SPLIT), true);
        max_slm[r * SUBGROUP_SIZE + lane] = st.max;
        sum_slm[r * SUBGROUP_SIZE + lane] = st.sum;
    }
    sub_group_barrier(CLK_LOCAL_MEM_FENCE);

    const float log2_scale = sdpa_score_factor(SDPA_LOG2E, SCALE_PTR, SCALE, INV_SCALE);
    const sdpa_softcap cap = sdpa_softcap_of(SOFTCAP, log2_scale, SDPA_LOG2E);
    const sdpa_fwd_kv_format k_fmt = SDPA_FWD_KV_FORMAT(KEY, K_SCALES, K_ZP, D, w.hkv);
    const sdpa_fwd_kv_format v_fmt = SDPA_FWD_KV_FORMAT(VAL, V_SCALES, V_ZP, D_VAL, w.hkv);
    const sdpa_fwd_kv_head kv =
            sdpa_fwd_kv_head_of(&w, K_S0, K_S1, K_S2, V_S0, V_S1, V_S2, SK, TOTAL_K, 0,
                                BLOCK_LOG2);
    sdpa_fwd_paged pg;
    pg.table = SC(PAGED) ? BLOCK_TABLE + w.b * BLOCK_TABLE_STRIDE : BLOCK_TABLE;
    pg.block_log2 = BLOCK_LOG2;
    pg.block_tokens = (long)w.n_kv << BLOCK_LOG2;
    pg.num_blocks = NUM_BLOCKS;

    for (int k0 = k_lo; k0 < k_hi; k0 += BK) {
        /* 1. K and V tiles, f32 (keys at or past sk are zero). */
        const sdpa_fwd_kv_source kt = {K, kv.k, K_S2, K_S0, kv.token0, k0, 0, sk, &k_fmt, &pg};
        const sdpa_fwd_kv_source vt = {V, kv.v, V_S2, V_S0, kv.token0, k0, 0, sk, &v_fmt, &pg};
        sdpa_fwd_stage_kv(k_slm, D, 1, &kt, K_S3, BK, D, false);
        sdpa_fwd_stage_kv(v_slm, D_VAL, 1, &vt, V_S3, BK, D_VAL, false);
        sub_group_barrier(CLK_LOCAL_MEM_FENCE);

        /* 2. Scores of this lane's key, online softmax per row. */
        const int key = k0 + lane;
        const int key_in = key < k_hi ? key : k_hi - 1; /* the mask row is read there */
        SDPA_DECODE_FOR_ROWS(r, h, i) {
            /* q.k of key kk with lanes along the head dimension (K rows are
             * contiguous: no gather), summed across the sub-group; lane kk
             * keeps its key's. */
            float qk = 0.0f;
            for (int kk = 0; kk < BK; kk++) {
                float part = 0.0f;
                for (int d = lane; d < D; d += SUBGROUP_SIZE)
                    part = fma(q_slm[r * D + d], k_slm[kk * D + d], part);
                const float sum_kk = sub_group_reduce_add(part);
                qk = lane == kk ? sum_kk : qk;
            }
            const int pos = i + pos_offset;
            int last = k_hi - 1;
            if (sdpa_is_causal())
                last = sdpa_imin(last, i + causal_offset);
            last = sdpa_window_last(pos, WINDOW_RIGHT, last);
            const int first = sdpa_imax(k_lo, sdpa_window_first(pos, WINDOW_LEFT));
            const float slope2 = sdpa_alibi_slope(ALIBI_SLOPES, w.b, w.hq, h, SDPA_LOG2E);
            const long m_row = w.b * MSK_S0 + (long)h * MSK_S1 + (long)i * MSK_S2;
            const float s = sdpa_decode_score(qk, log2_scale, &cap, slope2, pos, key_in, first,
                                              key < k_hi ? last : -1, MSK, m_row, MSK_S3);
            const float tile_max = sub_group_reduce_max(s);
            sdpa_fwd_softmax_state st = {max_slm[r * SUBGROUP_SIZE + lane],
                                         sum_slm[r * SUBGROUP_SIZE + lane]};
            float shift;
            const float alpha = sdpa_fwd_update_max(&st, tile_max, &shift);
            const float p = sdpa_fwd_exp2(s - shift);
            const float sum = sub_group_reduce_add(p);
            max_slm[r * SUBGROUP_SIZE + lane] = st.max;
            sum_slm[r * SUBGROUP_SIZE + lane] = fma(st.sum, alpha, sum);
            alpha_slm[r * SUBGROUP_SIZE + lane] = alpha;
            p_slm[r * BK + lane] = p;
        }
        sub_group_barrier(CLK_LOCAL_MEM_FENCE);

        /* 3. O = alpha O + P V, lanes along the head dimension. */
        for (int r = 0; r < rows; r++) {
            const float alpha = alpha_slm[r * SUBGROUP_SIZE + lane];
            for (int d = lane; d < D_VAL; d += SUBGROUP_SIZE) {
                float o = o_slm[r * D_VAL + d] * alpha;
                for (int kk = 0; kk < BK; kk++)
                    o = fma(p_slm[r * BK + kk], v_slm[kk * D_VAL + d], o);
                o_slm[r * D_VAL + d] = o;
            }
        }
        sub_group_barrier(CLK_LOCAL_MEM_FENCE);
    }

    /* Normalize and store: O and the log-sum-exp, or this split's state. */
    SDPA_DECODE_FOR_ROWS(r, h, i) {
        const float l = sum_slm[r * SUBGROUP_SIZE + lane];
        const float lse = sdpa_fwd_lse(max_slm[r * SUBGROUP_SIZE + lane], l);
        if (SC(DECODE_SPLIT)) {
            const long row = SDPA_DECODE_PART_ROW((long)split, w.b, (long)h, (long)i,
                                                  (long)get_num_groups(2), (long)w.hq, (long)SQ);
            if (lane == 0)
                WS[row] = lse;
            sdpa_fwd_store_row(DST, row * D_VAL, 1, o_slm + r * D_VAL, D_VAL,
                               l == 0.0f ? 0.0f : 1.0f / l);
        } else {
            if (SC(IS_TRAINING) && lane == 0)
                WS[(w.b * w.hq + h) * SQ + i] = lse;
            const long dst_off = w.b * DST_S0 + (long)h * DST_S1 + (long)i * DST_S2;
            if (DST_S3 == 1)
                sdpa_fwd_store_row(DST, dst_off, 1, o_slm + r * D_VAL, D_VAL, sdpa_fwd_inv_sum(l));
            else
                sdpa_fwd_store_row(DST, dst_off, DST_S3, o_slm + r * D_VAL, D_VAL,
                                   sdpa_fwd_inv_sum(l));
        }
    }
}
