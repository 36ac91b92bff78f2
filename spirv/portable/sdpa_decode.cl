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
#include "sdpa_view.h"

#define BK SDPA_DECODE_KEYS(SUBGROUP_SIZE)

/* The work-group's rows: row r is query i of query head h, counted from
 * query w.query0 of head w.head0 (a row block may start inside a head's
 * queries), `rows` of them; the work-group is split `split` of n_splits. */
typedef struct sdpa_decode_rows {
    sdpa_fwd_rows w;
    int rows;
    int split, n_splits;
} sdpa_decode_rows;

/* Group (split, K/V head * row blocks + block, batch): this block's rows
 * row0 .. row0 + rows - 1 of the K/V head's group * sq (kernel_abi_decode.h). */
static inline __attribute__((always_inline)) sdpa_decode_rows sdpa_decode_rows_of(int sq)
{
    const int group = SC(KV_GROUP_SIZE);
    const int all_rows = group * sq;
    const int blocked = SC(DECODE_ROWS) > 0;
    const int block_rows = blocked ? SC(DECODE_ROWS) : all_rows;
    const int n_blocks = blocked ? (all_rows + block_rows - 1) / block_rows : 1;
    sdpa_decode_rows d;
    d.split = get_group_id(0);
    d.n_splits = get_num_groups(0);
    d.w.b = get_group_id(2);
    d.w.hkv = blocked ? get_group_id(1) / n_blocks : get_group_id(1);
    d.w.n_kv = blocked ? get_num_groups(1) / n_blocks : get_num_groups(1);
    d.w.hq = d.w.n_kv * group;
    const int row0 = blocked ? (get_group_id(1) - d.w.hkv * n_blocks) * block_rows : 0;
    const int head_in_group = blocked ? row0 / sq : 0;
    d.w.head0 = d.w.hkv * group + head_in_group;
    d.w.query0 = blocked ? row0 - head_in_group * sq : 0;
    d.rows = blocked ? sdpa_imin(block_rows, all_rows - row0) : all_rows;
    d.w.rows = d.rows;
    return d;
}

/* Row r of the work-group, query i of query head h (kernel_abi_decode.h),
 * counted rather than divided: LLVM turns r / SQ with r % SQ into a
 * `freeze`, which llvm-spirv-15 cannot translate. */
#define SDPA_DECODE_FOR_ROWS(r, h, i)                                                              \
    for (int r = 0, h = dr.w.head0, i = dr.w.query0; r < dr.rows;                                  \
         r++, h += (i + 1 == SQ), i = (i + 1 == SQ) ? 0 : i + 1)

/* This split's keys (sdpa_keys), narrowed to the band every row's causal
 * mask and window leave (keys outside it are masked per row). */
static inline __attribute__((always_inline)) sdpa_keys
sdpa_decode_keys_of(const private sdpa_decode_rows *dr, int sq, int sk, int win_left, int win_right)
{
    const int tiles = (sk + BK - 1) / BK;
    const int tiles_per_split = (tiles + dr->n_splits - 1) / dr->n_splits;
    const int begin = sdpa_imin(dr->split * tiles_per_split * BK, sk);
    const int end = sdpa_imin(begin + tiles_per_split * BK, sk);
    sdpa_keys k = sdpa_keys_span(begin, end, sk, sq, win_left, win_right);
    if (sdpa_is_causal())
        k.end = sdpa_iclamp(sq - 1 + k.causal_offset + 1, k.begin, k.end);
    if (SC(WITH_WINDOW)) {
        k.end = sdpa_iclamp(sdpa_window_last(sq - 1 + k.pos_offset, win_right, k.end - 1) + 1,
                            k.begin, k.end);
        k.begin = sdpa_iclamp(sdpa_window_first(k.pos_offset, win_left), k.begin, k.end);
    }
    return k;
}

/* Local memory (kernel_abi_decode.h). */
typedef struct sdpa_decode_slm {
    local float *q;     /* Q [rows][D] */
    local float *k;     /* K [BK][D] */
    local float *v;     /* V [BK][D_VAL] */
    local float *p;     /* P [rows][BK] */
    local float *o;     /* O [rows][D_VAL] */
    local float *max;   /* running max [rows][sg] */
    local float *sum;   /* running sum [rows][sg] */
    local float *alpha; /* rescaling [rows][sg] */
} sdpa_decode_slm;

static inline __attribute__((always_inline)) sdpa_decode_slm
sdpa_decode_slm_of(local float *slm, int rows, int d, int dv)
{
    sdpa_decode_slm m;
    m.q = slm;
    m.k = m.q + rows * d;
    m.v = m.k + d * BK;
    m.p = m.v + BK * dv;
    m.o = m.p + rows * BK;
    m.max = m.o + rows * dv;
    m.sum = m.max + rows * SUBGROUP_SIZE;
    m.alpha = m.sum + rows * SUBGROUP_SIZE;
    return m;
}

/* q.k of this lane's key k_slm[lane] against row r's query: for each key
 * kk, lanes along the head dimension (K rows are contiguous: no gather),
 * summed across the sub-group; lane kk keeps its key's. */
static inline __attribute__((always_inline)) float sdpa_decode_qk(const private sdpa_decode_slm *m,
                                                                  int r, int d)
{
    const int lane = get_sub_group_local_id();
    float qk = 0.0f;
    for (int kk = 0; kk < BK; kk++) {
        float part = 0.0f;
        for (int c = lane; c < d; c += SUBGROUP_SIZE)
            part = fma(m->q[r * d + c], m->k[kk * d + c], part);
        const float sum_kk = sub_group_reduce_add(part);
        qk = lane == kk ? sum_kk : qk;
    }
    return qk;
}

/* The masked score of key `key` (log2 units) for a row with masks rm and
 * mask buffer row m_row, -inf outside [rm->first, rm->last]. qk is the raw
 * product q.k. */
static inline __attribute__((always_inline)) float
sdpa_decode_score(float qk, const private sdpa_score_mods *mods, const private sdpa_row_mask *rm,
                  int key, long m_row)
{
    if (key < rm->first || key > rm->last)
        return -INFINITY;
    float th;
    float s = sdpa_softcap_score(qk, mods->log2_scale, &mods->cap, &th);
    if (SC(ALIBI_KIND) != SDPA_ALIBI_KIND_NONE)
        s = fma(-rm->slope2, (float)abs(rm->pos - key), s);
    if (SC(MASK_KIND) == SDPA_MASK_KIND_BUFFER)
        s = fma(sdpa_load(mods->msk.p, m_row + (long)key * mods->msk.s3, SC(MSK_DT)), SDPA_LOG2E,
                s);
    return s;
}

/* The score of this lane's key k0 + lane for row r (query i of head h),
 * masked by the row's causal band and window and the split's keys. */
static inline __attribute__((always_inline)) float
sdpa_decode_row_score(const private sdpa_decode_slm *m, const private sdpa_decode_rows *dr,
                      const private sdpa_keys *k, const private sdpa_score_mods *mods, int r,
                      int h, int i, int k0, int d)
{
    const private sdpa_fwd_rows *w = &dr->w;
    const int key = k0 + get_sub_group_local_id();
    const int key_in = key < k->end ? key : k->end - 1; /* the mask row is read there */
    const float qk = sdpa_decode_qk(m, r, d);
    sdpa_row_mask rm;
    rm.pos = i + k->pos_offset;
    int last = k->end - 1;
    if (sdpa_is_causal())
        last = sdpa_imin(last, i + k->causal_offset);
    last = sdpa_window_last(rm.pos, k->win_right, last);
    rm.last = key < k->end ? last : -1;
    rm.first = sdpa_imax(k->begin, sdpa_window_first(rm.pos, k->win_left));
    rm.slope2 = sdpa_alibi_slope(mods->alibi_slopes, w->b, w->hq, h, SDPA_LOG2E);
    const long m_row = w->b * mods->msk.s0 + (long)h * mods->msk.s1 + (long)i * mods->msk.s2;
    return sdpa_decode_score(qk, mods, &rm, key_in, m_row);
}

/* Online softmax of row r over the tile, from this lane's score s: the
 * sub-group agrees on the tile maximum and sum (log2 units); P goes to
 * local memory, the factor alpha that rescales O too. */
static inline __attribute__((always_inline)) void
sdpa_decode_softmax(const private sdpa_decode_slm *m, int r, float s)
{
    const int lane = get_sub_group_local_id();
    const float tile_max = sub_group_reduce_max(s);
    sdpa_fwd_softmax_state st = {m->max[r * SUBGROUP_SIZE + lane],
                                 m->sum[r * SUBGROUP_SIZE + lane]};
    float shift;
    const float alpha = sdpa_fwd_update_max(&st, tile_max, &shift);
    const float p = sdpa_fwd_exp2(s - shift);
    const float sum = sub_group_reduce_add(p);
    m->max[r * SUBGROUP_SIZE + lane] = st.max;
    m->sum[r * SUBGROUP_SIZE + lane] = fma(st.sum, alpha, sum);
    m->alpha[r * SUBGROUP_SIZE + lane] = alpha;
    m->p[r * BK + lane] = p;
}

/* O = alpha O + P V over all rows, lanes along the head dimension. */
static inline __attribute__((always_inline)) void sdpa_decode_pv(const private sdpa_decode_slm *m,
                                                                 int rows, int dv)
{
    const int lane = get_sub_group_local_id();
    for (int r = 0; r < rows; r++) {
        const float alpha = m->alpha[r * SUBGROUP_SIZE + lane];
        for (int c = lane; c < dv; c += SUBGROUP_SIZE) {
            float o = m->o[r * dv + c] * alpha;
            for (int kk = 0; kk < BK; kk++)
                o = fma(m->p[r * BK + kk], m->v[kk * dv + c], o);
            m->o[r * dv + c] = o;
        }
    }
}

/* Normalizes and stores row r (query i of head h): O and the log-sum-exp,
 * or with DECODE_SPLIT this split's state for the merge kernel. */
static inline __attribute__((always_inline)) void
sdpa_decode_store_row(const private sdpa_decode_slm *m, const private sdpa_decode_rows *dr,
                      const private sdpa_out_view *dst, global float *lse, int r, int h, int i,
                      int sq, int dv)
{
    const int lane = get_sub_group_local_id();
    const private sdpa_fwd_rows *w = &dr->w;
    const float l = m->sum[r * SUBGROUP_SIZE + lane];
    const float row_lse = sdpa_fwd_lse(m->max[r * SUBGROUP_SIZE + lane], l);
    if (SC(DECODE_SPLIT)) {
        const long row = SDPA_DECODE_PART_ROW((long)dr->split, w->b, (long)h, (long)i,
                                              (long)get_num_groups(2), (long)w->hq, (long)sq);
        if (lane == 0)
            lse[row] = row_lse;
        sdpa_fwd_store_row(dst->p, row * dv, 1, m->o + r * dv, dv, l == 0.0f ? 0.0f : 1.0f / l);
    } else {
        if (SC(IS_TRAINING) && lane == 0)
            lse[(w->b * w->hq + h) * sq + i] = row_lse;
        const long dst_off = w->b * dst->s0 + (long)h * dst->s1 + (long)i * dst->s2;
        if (dst->s3 == 1)
            sdpa_fwd_store_row(dst->p, dst_off, 1, m->o + r * dv, dv, sdpa_fwd_inv_sum(l));
        else
            sdpa_fwd_store_row(dst->p, dst_off, dst->s3, m->o + r * dv, dv, sdpa_fwd_inv_sum(l));
    }
}

__attribute__((intel_reqd_sub_group_size(SUBGROUP_SIZE))) kernel void sdpa_decode(
#include "sdpa_fwd_args.def"
)
{
    /* Prologue: the rows and keys of the work-group, the tensors. */
    const int lane = get_sub_group_local_id();
    const sdpa_decode_rows dr = sdpa_decode_rows_of(SQ);
    const int sk = SC(PAGED) ? sdpa_paged_seq_len(CACHE_SEQLENS, dr.w.b, SK) : SK;
    const sdpa_keys keys = sdpa_decode_keys_of(&dr, SQ, sk, WINDOW_LEFT, WINDOW_RIGHT);
    const sdpa_decode_slm m = sdpa_decode_slm_of(SLM, dr.rows, D, D_VAL);
    const sdpa_view q_view = SDPA_VIEW(Q), k_view = SDPA_VIEW(K), v_view = SDPA_VIEW(V);

    /* Q of every row, O zero, the softmax state (a sink only when the
     * state is not one split's). */
    SDPA_DECODE_FOR_ROWS(r, h, i)
    {
        const long q_off = sdpa_view_head(&q_view, dr.w.b, h) + (long)i * q_view.s2;
        for (int d = lane; d < D; d += SUBGROUP_SIZE)
            m.q[r * D + d] = sdpa_load(Q, q_off + (long)d * q_view.s3, SC(QRY_DT));
        for (int d = lane; d < D_VAL; d += SUBGROUP_SIZE)
            m.o[r * D_VAL + d] = 0.0f;
        const sdpa_fwd_softmax_state st = sdpa_fwd_softmax_start(SINKS, h, !SC(DECODE_SPLIT), true);
        m.max[r * SUBGROUP_SIZE + lane] = st.max;
        m.sum[r * SUBGROUP_SIZE + lane] = st.sum;
    }
    sub_group_barrier(CLK_LOCAL_MEM_FENCE);

    const sdpa_score_mods mods =
            sdpa_score_mods_of(SCALE_PTR, SCALE, INV_SCALE, SOFTCAP, ALIBI_SLOPES, SDPA_VIEW(MSK));
    const sdpa_fwd_kv_format k_fmt = SDPA_FWD_KV_FORMAT(KEY, K_SCALES, K_ZP, D, dr.w.hkv);
    const sdpa_fwd_kv_format v_fmt = SDPA_FWD_KV_FORMAT(VAL, V_SCALES, V_ZP, D_VAL, dr.w.hkv);
    const sdpa_fwd_kv_head kv =
            sdpa_fwd_kv_head_in(&dr.w, &k_view, &v_view, SK, TOTAL_K, 0, BLOCK_LOG2);
    const sdpa_fwd_paged pg = sdpa_fwd_paged_of(BLOCK_TABLE, dr.w.b, BLOCK_TABLE_STRIDE, BLOCK_LOG2,
                                                dr.w.n_kv, NUM_BLOCKS);

    for (int k0 = keys.begin; k0 < keys.end; k0 += BK) {
        /* 1. K and V tiles, f32 (keys at or past sk are zero). */
        const sdpa_fwd_kv_source kt = {K, kv.k, K_S2, K_S0, kv.token0, k0, 0, sk, &k_fmt, &pg};
        const sdpa_fwd_kv_source vt = {V, kv.v, V_S2, V_S0, kv.token0, k0, 0, sk, &v_fmt, &pg};
        sdpa_fwd_stage_kv(m.k, D, 1, &kt, K_S3, BK, D, false);
        sdpa_fwd_stage_kv(m.v, D_VAL, 1, &vt, V_S3, BK, D_VAL, false);
        sub_group_barrier(CLK_LOCAL_MEM_FENCE);

        /* 2. Scores of this lane's key, online softmax per row. */
        SDPA_DECODE_FOR_ROWS(r, h, i)
        sdpa_decode_softmax(&m, r, sdpa_decode_row_score(&m, &dr, &keys, &mods, r, h, i, k0, D));
        sub_group_barrier(CLK_LOCAL_MEM_FENCE);

        /* 3. O = alpha O + P V. */
        sdpa_decode_pv(&m, dr.rows, D_VAL);
        sub_group_barrier(CLK_LOCAL_MEM_FENCE);
    }

    /* Epilogue: normalize and store O and the log-sum-exp, or this
     * split's state. */
    const sdpa_out_view dst = SDPA_OUT_VIEW(DST);
    SDPA_DECODE_FOR_ROWS(r, h, i)
    sdpa_decode_store_row(&m, &dr, &dst, WS, r, h, i, SQ, D_VAL);
}
