/*
 * sdpa_bwd.cl - backward scaled-dot-product attention, flash-attention-2
 * style: the gradients of O = softmax(s) V, s = factor * Q K^T + mask,
 * without ever forming the Sq x Sk matrices, from the forward's log-sum-exp
 * (LSE) and D_i = rowsum(dO o O):
 *
 *   P = exp(s - LSE)         dP = dO V^T         dS = P o (dP - D_i)
 *   dV = P^T dO              dK = factor dS^T Q  dQ = factor dS K
 *
 * (with dropout, P Z replaces P in dV and Z dP replaces dP, Z the keep mask
 * scaled by 1 / (1 - p)). Four kernels, see kernel_abi_bwd.h for the host
 * contract:
 *
 *   sdpa_bwd_preprocess   D_i, one sub-group per query row.
 *   sdpa_bwd              a work-group owns Bc keys of one (batch, query
 *                         head), stages K^T, V^T and K once and walks the query
 *                         blocks of Br. Per block: stage Q, dO, LSE and D_i;
 *                         each sub-group recomputes its tile of P and dS;
 *                         then dV^T and dK^T accumulate in local memory and
 *                         dQ is added to global memory with f32 atomics, or
 *                         (DQ_PARTIALS, either mode) stored into the key
 *                         block's own f32 slice of dQ, summed in order by
 *                         the postprocess.
 *   sdpa_bwd_dq           DETERMINISTIC mode without DQ_PARTIALS (long
 *                         sequences): a work-group owns about Bc
 *                         queries (whole sub-blocks of Br), walks the key
 *                         blocks, recomputes P and dS the same way for each
 *                         sub-block and accumulates dQ in local memory.
 *   sdpa_bwd_postprocess  f32 sums (or slices, in order) to the gradient's
 *                         dtype and strides.
 *
 * All tiles, accumulators included, live in local memory as f32, laid out
 * so that lanes read and write consecutive addresses; products are the
 * fused micro-kernels of sdpa_bwd_gemm.h. No array is sized by the head
 * size (head-dim rows in local memory are SDPA_BWD_LD(d) floats long, set at
 * run time), so one build per sub-group size serves every head size: the
 * variants are sdpa_bwd.0.<sg>. Everything else is a specialization
 * constant, so every branch on SC(...) folds when the module is built.
 */
#include "kernel_abi_bwd.h"
#include "sdpa_bwd_gemm.h"
#include "sdpa_bwd_problem.h"
#include "sdpa_bwd_scores.h"
#include "sdpa_bwd_tile.h"
#include "sdpa_common.h"
#include "sdpa_device_arrays.h"
#include "sdpa_view.h"

/* The kernels this compilation holds: all four (the sdpa_bwd variants), or
 * the parts a wrapper selects (sdpa_bwd_prepost.cl, sdpa_bwd_main.cl,
 * sdpa_bwd_dq.cl: the modules the backend builds, kernel_abi_bwd.h). */
#ifndef SDPA_BWD_PARTS
#define SDPA_BWD_PARTS SDPA_BWD_PART_ALL
#endif

/* Work-group tiles (kernel_abi_bwd.h). */
static inline int sdpa_bwd_bc(void)
{
    return SC(UNROLL_M_BCBR) * SC(WG_M_BCBR);
}

static inline int sdpa_bwd_br(void)
{
    return SC(UNROLL_N_BCBR) * SC(WG_N_BCBR);
}

static inline int sdpa_bwd_subgroups(void)
{
    return SC(WG_M_BCBR) * SC(WG_N_BCBR);
}

/* The local-memory tiles, in the order SDPA_BWD_SLM_FLOATS and
 * SDPA_BWD_DQ_SLM_FLOATS count them. */
typedef struct sdpa_bwd_slm {
    local float *kt, *vt;      /* K^T, V^T: [ld][bc] */
    local float *k;            /* K: [bc][ld] */
    local float *q, *diff_dst; /* Q, dO: [nq][ld] */
    local float *p, *ds;       /* P Z, dS: [br][bc] */
    local float *lse2, *di;    /* LSE * log2(e), D_i: [nq] */
    local float *acc0;         /* sdpa_bwd: dK^T [ld][bc]; sdpa_bwd_dq: dQ [nq][ld] */
    local float *acc1;         /* sdpa_bwd: dV^T [ld][bc] */
} sdpa_bwd_slm;

/* nq: the query rows staged at once (Br in sdpa_bwd, SDPA_BWD_DQ_QUERIES in
 * sdpa_bwd_dq); ld: the row length of head-dim rows, SDPA_BWD_LD(d). */
static inline __attribute__((always_inline)) sdpa_bwd_slm sdpa_bwd_slm_of(local float *slm, int nq,
                                                                          int ld)
{
    const int bc = sdpa_bwd_bc(), br = sdpa_bwd_br();
    sdpa_bwd_slm m;
    m.kt = slm;
    m.vt = m.kt + ld * bc;
    m.k = m.vt + ld * bc;
    m.q = m.k + bc * ld;
    m.diff_dst = m.q + nq * ld;
    m.p = m.diff_dst + nq * ld;
    m.ds = m.p + br * bc;
    m.lse2 = m.ds + br * bc;
    m.di = m.lse2 + nq;
    m.acc0 = m.di + nq;
    m.acc1 = m.acc0 + ld * bc;
    return m;
}

/* The view of m whose query rows start at row r0 of the staged ones. */
static inline __attribute__((always_inline)) sdpa_bwd_slm sdpa_bwd_slm_rows(sdpa_bwd_slm m, int r0,
                                                                            int ld)
{
    m.q += r0 * ld;
    m.diff_dst += r0 * ld;
    m.lse2 += r0;
    m.di += r0;
    return m;
}

/* The view of a tensor of the strides buffer (kernel_abi_bwd.h). */
static inline __attribute__((always_inline)) sdpa_view
sdpa_bwd_view(const global void *p, const private sdpa_bwd_strides *s)
{
    return sdpa_view_of(p, s->s0, s->s1, s->s2, s->s3);
}

static inline __attribute__((always_inline)) sdpa_out_view
sdpa_bwd_out_view(global void *p, const private sdpa_bwd_strides *s)
{
    return sdpa_out_view_of(p, s->s0, s->s1, s->s2, s->s3);
}

/* Where query 0 (sdpa_bwd_q_rows) or key 0 (sdpa_bwd_k_rows) of `head`
 * lies in a view. */
static inline __attribute__((always_inline)) long
sdpa_bwd_view_q_rows(const private sdpa_bwd_problem *x, const private sdpa_view *v, int head)
{
    const sdpa_bwd_strides s = {v->s0, v->s1, v->s2, v->s3};
    return sdpa_bwd_q_rows(x, &s, head);
}

static inline __attribute__((always_inline)) long
sdpa_bwd_view_k_rows(const private sdpa_bwd_problem *x, const private sdpa_view *v, int head)
{
    const sdpa_bwd_strides s = {v->s0, v->s1, v->s2, v->s3};
    return sdpa_bwd_k_rows(x, &s, head);
}

/* The inputs of the backward's score products. */
typedef struct sdpa_bwd_inputs {
    sdpa_view k, q, v, diff_dst;
} sdpa_bwd_inputs;

static inline __attribute__((always_inline)) sdpa_bwd_inputs
sdpa_bwd_inputs_of(const global void *k, const global void *q, const global void *v,
                   const global void *diff_dst, const private sdpa_bwd_all_strides *st)
{
    sdpa_bwd_inputs in;
    in.k = sdpa_bwd_view(k, &st->k);
    in.q = sdpa_bwd_view(q, &st->q);
    in.v = sdpa_bwd_view(v, &st->v);
    in.diff_dst = sdpa_bwd_view(diff_dst, &st->diff_dst);
    return in;
}

/* Stages keys [k0, k0 + keys) of K/V head x->hkv: K^T and V^T for the score
 * products, K row-major for dQ = dS K (its head-dim columns zero-padded to
 * whole sub-groups, which the dQ tile reads). Keys past `keys` are zero. */
static inline __attribute__((always_inline)) void
sdpa_bwd_stage_keys(const private sdpa_bwd_slm *m, const private sdpa_bwd_problem *x,
                    const private sdpa_bwd_inputs *in, int k0, int keys)
{
    const int bc = sdpa_bwd_bc(), n_sg = sdpa_bwd_subgroups();
    const int d = x->d;
    const int d_pad = (d + SUBGROUP_SIZE - 1) / SUBGROUP_SIZE * SUBGROUP_SIZE; /* <= ld */
    const private sdpa_view *k = &in->k, *v = &in->v;
    const long k_head = sdpa_bwd_view_k_rows(x, k, x->hkv);
    const long v_head = sdpa_bwd_view_k_rows(x, v, x->hkv);
    sdpa_bwd_stage_transposed(m->kt, bc, k->p, k_head, k->s2, k->s3, k0, keys, d, SC(KEY_DT), n_sg);
    sdpa_bwd_stage_transposed(m->vt, bc, v->p, v_head, v->s2, v->s3, k0, keys, x->dv, SC(VAL_DT),
                              n_sg);
    sdpa_bwd_stage(m->k, x->ld, 1, k->p, k_head + (long)k0 * k->s2, k->s2, k->s3, bc, keys, d_pad,
                   d, SC(KEY_DT), n_sg);
}

/* Zeroes n floats of local memory, all sub-groups together. */
static inline __attribute__((always_inline)) void sdpa_bwd_zero(local float *dst, int n)
{
    const int step = sdpa_bwd_subgroups() * SUBGROUP_SIZE;
    int i = get_sub_group_id() * SUBGROUP_SIZE;
    for (; i + SUBGROUP_SIZE <= n; i += step)
        dst[i + get_sub_group_local_id()] = 0.0f;
    if (i < n && i + get_sub_group_local_id() < n)
        dst[i + get_sub_group_local_id()] = 0.0f;
}

/*
 * Stages the queries [q0, q0 + br): Q and dO as f32 rows (zero past the
 * last query), the log-sum-exp in log2 units and D_i.
 */
static inline __attribute__((always_inline)) void
sdpa_bwd_stage_queries(const private sdpa_bwd_slm *m, const private sdpa_bwd_problem *x, int q0,
                       int br, const private sdpa_bwd_inputs *in, const global float *ws,
                       const global float *d_i)
{
    const int n_sg = sdpa_bwd_subgroups();
    const int rows = sdpa_imin(br, x->sq - q0);
    const private sdpa_view *q = &in->q, *diff_dst = &in->diff_dst;
    const long q_off = sdpa_bwd_view_q_rows(x, q, x->h) + (long)q0 * q->s2;
    const long diff_dst_off = sdpa_bwd_view_q_rows(x, diff_dst, x->h) + (long)q0 * diff_dst->s2;
    sdpa_bwd_stage(m->q, x->ld, 1, q->p, q_off, q->s2, q->s3, br, rows, x->d, x->d, SC(QRY_DT),
                   n_sg);
    sdpa_bwd_stage(m->diff_dst, x->ld, 1, diff_dst->p, diff_dst_off, diff_dst->s2, diff_dst->s3, br,
                   rows, x->dv, x->dv, SC(DST_DT), n_sg);
    const long row0 = x->stat_row0 + q0;
    for (int r = get_sub_group_id() * SUBGROUP_SIZE + get_sub_group_local_id(); r < br;
         r += n_sg * SUBGROUP_SIZE) {
        m->lse2[r] = r < rows ? ws[row0 + r] * SDPA_LOG2E : 0.0f;
        m->di[r] = r < rows ? d_i[row0 + r] : 0.0f;
    }
}

/* Keys of the block [k0, k0 + keys) that the queries up to q_last may see
 * (a count from k0: the causal band's and the window's right end). */
static inline __attribute__((always_inline)) int
sdpa_bwd_visible_keys(const private sdpa_bwd_problem *x, int k0, int keys, int q_last)
{
    int last = k0 + keys - 1;
    if (sdpa_is_causal())
        last = sdpa_imin(last, q_last + x->causal_offset);
    last = sdpa_window_last(q_last + x->pos_offset, x->win_right, last);
    return sdpa_iclamp(last - k0 + 1, 0, keys);
}

/*
 * This sub-group's tile of the block of keys [k0, k0 + keys) by queries
 * [q0, q0 + br): UNROLL_N_BCBR queries (rows) by UNROLL_M_BCBR keys (lanes).
 * Recomputes S = Q K^T into P (P Z in m->p) and dP = dO V^T into dS
 * (m->ds); ds_out is the dS output (key-block pass with WITH_DS) or NULL.
 */
static inline __attribute__((always_inline)) void
sdpa_bwd_scores_tile(const private sdpa_bwd_problem *x, const private sdpa_bwd_slm *m, int k0,
                     int keys, int q0, const private sdpa_out_view *ds_out)
{
    const int sg_id = get_sub_group_id(), lane = get_sub_group_local_id();
    sdpa_bwd_scores t;
    t.x = x;
    t.p = m->p;
    t.ds = m->ds;
    t.lse2 = m->lse2;
    t.di = m->di;
    t.bc = sdpa_bwd_bc();
    t.kt0 = (sg_id % SC(WG_M_BCBR)) * SC(UNROLL_M_BCBR);
    t.qt0 = (sg_id / SC(WG_M_BCBR)) * SC(UNROLL_N_BCBR);
    t.key0 = k0 + t.kt0;
    t.query0 = q0 + t.qt0;
    t.ds_out = ds_out ? ds_out->p : 0;
    t.ds_head = ds_out ? sdpa_out_view_head(ds_out, x->b, x->h) : 0;
    t.dss2 = ds_out ? ds_out->s2 : 0;
    t.dss3 = ds_out ? ds_out->s3 : 0;
    const int rows = sdpa_iclamp(x->sq - t.query0, 0, SC(UNROLL_N_BCBR));
    const int nvec = sdpa_iclamp((keys - t.kt0 + SUBGROUP_SIZE - 1) / SUBGROUP_SIZE, 0,
                                 SC(UNROLL_M_BCBR) / SUBGROUP_SIZE);
    /* Keys past the end or beyond the causal band of the tile's first query
     * need a per-element test; interior tiles skip it. */
    const int key_last = t.key0 + SC(UNROLL_M_BCBR) - 1;
    t.check = key_last >= x->sk || (sdpa_is_causal() && key_last > t.query0 + x->causal_offset) ||
              SC(WITH_WINDOW);

    if (SC(WITH_DROPOUT))
        sdpa_bwd_dropout_tile(&t, rows, nvec);
    sdpa_bwd_p_tile(&t, m->q + t.qt0 * x->ld, x->ld, 1, m->kt + t.kt0 + lane, t.bc, x->d, rows,
                    nvec);
    sdpa_bwd_ds_tile(&t, m->diff_dst + t.qt0 * x->ld, x->ld, 1, m->vt + t.kt0 + lane, t.bc, x->dv,
                     rows, nvec);
}

/*
 * This sub-group's tile of dQ (+)= dS K over the block's first `keys` keys:
 * UNROLL_N_DBR queries (rows) by UNROLL_M_DBR head-dim columns (lanes).
 */
typedef struct sdpa_bwd_dq_place {
    int qr0, d0; /* first query (block-local) and first head-dim column */
    int rows;    /* queries below `queries` */
    int nvec;    /* head-dim vectors with at least one column below d */
} sdpa_bwd_dq_place;

static inline __attribute__((always_inline)) sdpa_bwd_dq_place sdpa_bwd_dq_place_of(int d,
                                                                                    int queries)
{
    const int sg_id = get_sub_group_id();
    sdpa_bwd_dq_place t;
    t.d0 = (sg_id % SC(WG_M_DBR)) * SC(UNROLL_M_DBR);
    t.qr0 = (sg_id / SC(WG_M_DBR)) * SC(UNROLL_N_DBR);
    t.rows = sdpa_iclamp(queries - t.qr0, 0, SC(UNROLL_N_DBR));
    t.nvec = sdpa_iclamp((d - t.d0 + SUBGROUP_SIZE - 1) / SUBGROUP_SIZE, 0,
                         SC(UNROLL_M_DBR) / SUBGROUP_SIZE);
    return t;
}

/* The dQ epilogue of sdpa_bwd: result (query q0 + i, column d0 + j * sg +
 * lane) times factor, added atomically into the f32 sums, or (DQ_PARTIALS)
 * stored into this key block's f32 slice, dense (s3 == 1, spelled as a
 * literal so that the lanes' stores are one vector store). */
typedef struct sdpa_bwd_dq_out {
    global float *head; /* dQ sums of (b, h), or the slice of (b, h, key block) */
    long s2, s3;
    int q0, d0, d;
    float factor;
} sdpa_bwd_dq_out;

static inline __attribute__((always_inline)) float
sdpa_bwd_dq_init(const private sdpa_bwd_dq_out *t, int i, int j)
{
    return 0.0f;
}

static inline __attribute__((always_inline)) void
sdpa_bwd_dq_apply(const private sdpa_bwd_dq_out *t, int i, int j, float value)
{
    const int col = t->d0 + j * SUBGROUP_SIZE + get_sub_group_local_id();
    if (col >= t->d)
        return;
    if (SC(DQ_PARTIALS))
        t->head[(long)(t->q0 + i) * t->s2 + col] = value * t->factor;
    else if (value != 0.0f)
        sdpa_bwd_atomic_add(t->head + (long)(t->q0 + i) * t->s2 + (long)col * t->s3,
                            value * t->factor);
}

SDPA_BWD_DEFINE_TILE(dq_atomic, sdpa_bwd_dq_out, sdpa_bwd_dq_init, sdpa_bwd_dq_apply)

/* DQ_PARTIALS: zeroes queries [q_begin, q_end) of a dQ slice (dense rows of
 * d floats, s2 apart), the work-group's n_sg sub-groups taking the rows in
 * turn: the queries that cannot see a block's keys get a zero
 * contribution, so that every element of every slice is written once and
 * the scratch needs no fill. */
static inline __attribute__((always_inline)) void
sdpa_bwd_zero_dq_rows(global float *slice, long s2, int q_begin, int q_end, int d, int n_sg)
{
    const int lane = get_sub_group_local_id();
    for (int q = q_begin + get_sub_group_id(); q < q_end; q += n_sg)
        for (int c0 = 0; c0 < d; c0 += SUBGROUP_SIZE)
            if (c0 + lane < d)
                slice[(long)q * s2 + c0 + lane] = 0.0f;
}

/*
 * Writes an accumulator of local memory, element (j, d) at
 * acc[j * acc_j + d * acc_d] for j < count and d < d, times factor, to rows
 * j0 + j of a gradient: element (j, d) at dst->p + head + (j0 + j) * s2 +
 * d * s3, oriented so that lanes follow the destination's contiguous axis.
 */
static inline __attribute__((always_inline)) void
sdpa_bwd_store_acc(const private sdpa_out_view *view, long head, int j0, local const float *acc,
                   int acc_j, int acc_d, int count, int d, float factor, sdpa_bwd_out out)
{
    global void *dst = view->p;
    const long s2 = view->s2, s3 = view->s3;
    const long off = head + (long)j0 * s2;
    const int n_sg = sdpa_bwd_subgroups();
    if (!SC(BWD_UNIT_D_STRIDES) && s2 == 1 && s3 != 1) /* head-dim rows, lanes along j: uncommon */
        sdpa_bwd_unstage_other(dst, off, s3, s2, acc, acc_d, acc_j, d, count, factor, out.f32,
                               out.atomic, SC(QRY_DT), n_sg);
    else
        sdpa_bwd_unstage(dst, off, s2, s3, acc, acc_j, acc_d, count, d, factor, out, SC(QRY_DT),
                         n_sg);
}

#if SDPA_BWD_PARTS & SDPA_BWD_PART_PRE
/* This lane's part of the dot product of two rows of n elements of dtype
 * DST_DT, a + a_off + c * a_s and b + b_off + c * b_s (c < n). */
static inline __attribute__((always_inline)) float sdpa_bwd_row_dot(const global void *a,
                                                                    long a_off, long a_s,
                                                                    const global void *b,
                                                                    long b_off, long b_s, int n)
{
    const int lane = get_sub_group_local_id();
    float sum = 0.0f;
    for (int c0 = 0; c0 < n; c0 += SUBGROUP_SIZE) {
        const int c = c0 + lane;
        if (c < n)
            sum = fma(sdpa_load(a, a_off + (long)c * a_s, SC(DST_DT)),
                      sdpa_load(b, b_off + (long)c * b_s, SC(DST_DT)), sum);
    }
    return sum;
}

__attribute__((intel_reqd_sub_group_size(SUBGROUP_SIZE))) kernel void sdpa_bwd_preprocess(
#include "sdpa_bwd_pre_args.def"
)
{
    const int lane = get_sub_group_local_id();
    const long b = get_group_id(2);
    const int h = get_group_id(1), hq = get_num_groups(1);
    const sdpa_bwd_strides dst_s = sdpa_bwd_strides_at(STRIDES, SDPA_BWD_STRIDE_DST);
    const sdpa_bwd_strides diff_dst_s = sdpa_bwd_strides_at(STRIDES, SDPA_BWD_STRIDE_DIFF_DST);
    const int row0 = get_group_id(0) * SDPA_BWD_PRE_ROWS;
    /* Packed sequences (CU_SEQLENS_Q set): sequence b's rows from packed row
     * `first` (clamped as every kernel does, sdpa_device_arrays.h), D_i
     * [Hq, TOTAL_Q] like the log-sum-exp. */
    sdpa_packed_seq seq = {0, SQ};
    if (CU_SEQLENS_Q)
        seq = sdpa_packed_seq_of(CU_SEQLENS_Q, b, TOTAL_Q, SQ);
    const long first = seq.row0;
    const int sq = seq.len;
    const long seq_b = CU_SEQLENS_Q ? 0 : b;
    const long d_i_row0 = CU_SEQLENS_Q ? h * (long)TOTAL_Q + first : (b * hq + h) * SQ;

    for (int r = get_sub_group_id(); r < SDPA_BWD_PRE_ROWS; r += SDPA_BWD_PRE_SUBGROUPS) {
        const int i = row0 + r;
        if (i >= sq)
            break;
        const long dst_off = sdpa_bwd_head_offset(&dst_s, seq_b, h) + (first + i) * dst_s.s2;
        const long diff_dst_off =
                sdpa_bwd_head_offset(&diff_dst_s, seq_b, h) + (first + i) * diff_dst_s.s2;
        /* Rows along the head dimension are usually contiguous: the literal
         * stride makes the lanes' loads one vector load on the CPU device
         * instead of a gather (4% of the backward's time). */
        float sum;
        if (dst_s.s3 == 1 && diff_dst_s.s3 == 1)
            sum = sdpa_bwd_row_dot(DST, dst_off, 1, DIFF_DST, diff_dst_off, 1, D);
        else
            sum = sdpa_bwd_row_dot(DST, dst_off, dst_s.s3, DIFF_DST, diff_dst_off, diff_dst_s.s3,
                                   D);
        sum = sub_group_reduce_add(sum);
        if (lane == 0)
            D_I[d_i_row0 + i] = sum;
    }
}

/*
 * The sinks' gradient (sdpa.h): dsink_h = -sum over the rows (b, i) of
 * query head h of P_sink_i D_i, P_sink_i = exp(sink_h - lse_i), after the
 * preprocess wrote D_i. One work-group of one sub-group per head, lanes
 * along the rows in a fixed order: the same sum every run. A row without
 * keys and without a sink (lse -inf) adds nothing.
 */
__attribute__((intel_reqd_sub_group_size(SUBGROUP_SIZE))) kernel void sdpa_bwd_sinks(
#include "sdpa_bwd_pre_args.def"
)
{
    const int lane = get_sub_group_local_id();
    const int h = get_group_id(1), hq = get_num_groups(1);
    const float sink = SINKS[h];
    float acc = 0.0f;
    for (int b = 0; b < BATCH; b++) {
        sdpa_packed_seq seq = {0, SQ};
        if (CU_SEQLENS_Q)
            seq = sdpa_packed_seq_of(CU_SEQLENS_Q, b, TOTAL_Q, SQ);
        const long row0 = CU_SEQLENS_Q ? h * (long)TOTAL_Q + seq.row0 : ((long)b * hq + h) * SQ;
        for (int i = lane; i < seq.len; i += SUBGROUP_SIZE) {
            const float lse = WS[row0 + i];
            if (lse != -INFINITY)
                acc = fma(exp(sink - lse), D_I[row0 + i], acc);
        }
    }
    const float total = sub_group_reduce_add(acc);
    if (lane == 0)
        DIFF_SINKS[h] = -total;
}
#endif

/* This sub-group's place in the dK/dV grid of sdpa_bwd: UNROLL_M_DBC
 * head-dim rows by UNROLL_N_DBC keys (lanes) of the accumulators dK^T and
 * dV^T, whose rows end at D and D_VAL (the grid covers the larger). */
typedef struct sdpa_bwd_dkv_place {
    bool owner; /* the grid may have fewer sub-groups than the work-group */
    int d0, k0; /* first head-dim row and first key (block-local) */
    int k_drows, v_drows;
    int nvec; /* key vectors with at least one key below `keys` */
    sdpa_bwd_acc dk, dv;
} sdpa_bwd_dkv_place;

static inline __attribute__((always_inline)) sdpa_bwd_dkv_place
sdpa_bwd_dkv_place_of(const private sdpa_bwd_slm *m, const private sdpa_bwd_problem *x, int keys)
{
    const int bc = sdpa_bwd_bc(), sg_id = get_sub_group_id(), lane = get_sub_group_local_id();
    sdpa_bwd_dkv_place t;
    t.owner = sg_id < SC(WG_M_DBC) * SC(WG_N_DBC);
    t.d0 = (sg_id % SC(WG_M_DBC)) * SC(UNROLL_M_DBC);
    t.k0 = (sg_id / SC(WG_M_DBC)) * SC(UNROLL_N_DBC);
    t.k_drows = sdpa_iclamp(x->d - t.d0, 0, SC(UNROLL_M_DBC));
    t.v_drows = sdpa_iclamp(x->dv - t.d0, 0, SC(UNROLL_M_DBC));
    t.nvec = sdpa_iclamp((keys - t.k0 + SUBGROUP_SIZE - 1) / SUBGROUP_SIZE, 0,
                         SC(UNROLL_N_DBC) / SUBGROUP_SIZE);
    t.dk.c = m->acc0 + t.d0 * bc + t.k0 + lane;
    t.dk.ld = bc;
    t.dv.c = m->acc1 + t.d0 * bc + t.k0 + lane;
    t.dv.ld = bc;
    return t;
}

/* Where sdpa_bwd adds dQ: the f32 sums of (b, h), or (DQ_PARTIALS, never
 * with VARLEN) this key block's slice of the partials [B, Hq,
 * n_key_blocks, Sq, D], "head" h * n_key_blocks + kb of DQ's strides
 * (kernel_abi_bwd.h). q0 and d0 are set per tile. */
static inline __attribute__((always_inline)) sdpa_bwd_dq_out
sdpa_bwd_dq_out_of(global void *dq, const private sdpa_bwd_strides *s,
                   const private sdpa_bwd_problem *x)
{
    /* Every offset computed, then selected: as branches, LLVM sinks the
     * loads of x->b and x->q_row0 into one load through a select of their
     * addresses, which keeps the problem struct in private memory. */
    const long slice =
            sdpa_bwd_head_offset(s, x->b, x->h * (int)get_num_groups(0) + (int)get_group_id(0));
    const long dense = sdpa_bwd_head_offset(s, x->b, x->h);
    const long packed = x->q_row0 * s->s2 + (long)x->h * s->s1; /* sdpa_bwd_q_rows */
    sdpa_bwd_dq_out out;
    out.head = (global float *)dq + (SC(DQ_PARTIALS) ? slice : SC(VARLEN) ? packed : dense);
    out.s2 = s->s2;
    out.s3 = s->s3;
    out.q0 = 0;
    out.d0 = 0;
    out.d = x->d;
    out.factor = x->factor;
    return out;
}

/* DQ_PARTIALS: the rows of the queries that cannot see these keys, which
 * no block of the loop covers (before first_block, from first_block +
 * blocks on), are zero. */
static inline __attribute__((always_inline)) void
sdpa_bwd_zero_dq_unvisited(const private sdpa_bwd_dq_out *dq, const private sdpa_bwd_problem *x,
                           int first_block, int blocks, int br)
{
    const int n_sg = sdpa_bwd_subgroups();
    const int q_start = sdpa_imin(first_block * br, x->sq);
    sdpa_bwd_zero_dq_rows(dq->head, dq->s2, 0, q_start, dq->d, n_sg);
    sdpa_bwd_zero_dq_rows(dq->head, dq->s2,
                          sdpa_imax(q_start, sdpa_imin((first_block + blocks) * br, x->sq)), x->sq,
                          dq->d, n_sg);
}

/* dQ += factor dS K over the block's `visible` keys for the queries
 * [q0, q0 + queries), added atomically, or (DQ_PARTIALS) this block's rows
 * of the slice = factor dS K, zero if no query sees a key. */
static inline __attribute__((always_inline)) void
sdpa_bwd_dq_block(const private sdpa_bwd_dq_out *dq, const private sdpa_bwd_slm *m,
                  const private sdpa_bwd_problem *x, int q0, int queries, int visible,
                  bool dq_owner)
{
    const int bc = sdpa_bwd_bc();
    if (SC(DQ_PARTIALS) && visible <= 0)
        sdpa_bwd_zero_dq_rows(dq->head, dq->s2, q0, q0 + queries, dq->d, sdpa_bwd_subgroups());
    if (dq_owner) {
        const sdpa_bwd_dq_place t = sdpa_bwd_dq_place_of(dq->d, queries);
        sdpa_bwd_dq_out out = *dq;
        out.q0 = q0 + t.qr0;
        out.d0 = t.d0;
        sdpa_bwd_dq_atomic_tile(&out, m->ds + t.qr0 * bc, bc, 1,
                                m->k + t.d0 + get_sub_group_local_id(), x->ld, visible, t.rows,
                                t.nvec);
    }
}

/* dK and dV of the block [k0, k0 + keys): into the gradients (one query
 * head per K/V head), atomically into f32 sums (DKV_ATOMIC), or into this
 * query head's f32 partial slice (DETERMINISTIC with GQA). Every key below
 * sk is written, zeros included (atomic adds of 0 are skipped). */
static inline __attribute__((always_inline)) void
sdpa_bwd_store_dkv(const private sdpa_bwd_slm *m, const private sdpa_bwd_problem *x,
                   global void *dk, global void *dv, const private sdpa_bwd_all_strides *st, int k0,
                   int keys)
{
    const int bc = sdpa_bwd_bc();
    const bool partial = SC(DETERMINISTIC) && SC(KV_GROUP_SIZE) > 1;
    sdpa_bwd_out out;
    out.atomic = !SC(DETERMINISTIC) && SC(DKV_ATOMIC);
    out.f32 = partial || out.atomic;
    const int head = partial ? x->h : x->hkv;
    const sdpa_out_view dk_view = sdpa_bwd_out_view(dk, &st->dk);
    const sdpa_out_view dv_view = sdpa_bwd_out_view(dv, &st->dv);
    sdpa_bwd_store_acc(&dk_view, sdpa_bwd_k_rows(x, &st->dk, head), k0, m->acc0, 1, bc, keys, x->d,
                       x->factor, out);
    sdpa_bwd_store_acc(&dv_view, sdpa_bwd_k_rows(x, &st->dv, head), k0, m->acc1, 1, bc, keys, x->dv,
                       1.0f, out);
}

#if SDPA_BWD_PARTS & SDPA_BWD_PART_MAIN
__attribute__((intel_reqd_sub_group_size(SUBGROUP_SIZE))) kernel void sdpa_bwd(
#include "sdpa_bwd_args.def"
)
{
    /* Prologue: the work-group's block of keys, the problem, the tensors,
     * this sub-group's places in the dK/dV and dQ grids. */
    const int bc = sdpa_bwd_bc(), br = sdpa_bwd_br();
    const int k0 = get_group_id(0) * bc;
    const sdpa_bwd_problem x = SDPA_BWD_PROBLEM_OF_ARGS();
    const int keys = sdpa_imin(bc, x.sk - k0);
    /* VARLEN: a work-group past its sequence's keys has nothing to write
     * (all of it returns: no barrier is left waiting). */
    if (SC(VARLEN) && keys <= 0)
        return;
    const sdpa_bwd_slm m = sdpa_bwd_slm_of(SLM, br, x.ld);
    const sdpa_bwd_all_strides st = sdpa_bwd_all_strides_of(STRIDES);
    const sdpa_bwd_inputs in = sdpa_bwd_inputs_of(K, Q, V, DIFF_DST, &st);
    const sdpa_out_view ds = sdpa_out_view_of(SC(WITH_DS) ? DS : 0, DS_S0, DS_S1, DS_S2, DS_S3);
    const sdpa_bwd_dkv_place kv = sdpa_bwd_dkv_place_of(&m, &x, keys);
    /* DETERMINISTIC without DQ_PARTIALS: dQ comes from sdpa_bwd_dq; DQ may
     * not even be f32. */
    const bool dq_owner = (!SC(DETERMINISTIC) || SC(DQ_PARTIALS)) &&
                          get_sub_group_id() < SC(WG_M_DBR) * SC(WG_N_DBR);
    const sdpa_bwd_dq_out dq = sdpa_bwd_dq_out_of(DQ, &st.dq, &x);
    int first_block;
    const int blocks = sdpa_bwd_query_blocks(&x, k0, keys, br, &first_block);

    /* K^T, V^T and K of the block, once; dK^T and dV^T start at zero. */
    sdpa_bwd_stage_keys(&m, &x, &in, k0, keys);
    sdpa_bwd_zero(m.acc0, D * bc);
    sdpa_bwd_zero(m.acc1, D_VAL * bc);
    /* dQ and dS of the queries that cannot see these keys, which no block
     * of the loop covers: zero. */
    if (SC(DQ_PARTIALS))
        sdpa_bwd_zero_dq_unvisited(&dq, &x, first_block, blocks, br);
    if (SC(WITH_DS))
        sdpa_bwd_zero_ds_unvisited(DS, sdpa_out_view_head(&ds, x.b, x.h), DS_S2, DS_S3, x.sq,
                                   first_block, blocks, br, k0, keys, sdpa_bwd_subgroups());

    for (int step = 0; step < blocks; step++) {
        const int q0 = (first_block + sdpa_bwd_query_block_at(step, blocks)) * br;
        const int queries = sdpa_imin(br, x.sq - q0);
        /* 1. Q, dO, LSE and D_i of the block's queries, once the previous
         *    block's readers are done. */
        barrier(CLK_LOCAL_MEM_FENCE);
        sdpa_bwd_stage_queries(&m, &x, q0, br, &in, WS, D_I);
        barrier(CLK_LOCAL_MEM_FENCE);

        /* 2. P (P Z with dropout) and dS, recomputed per sub-group tile. */
        sdpa_bwd_scores_tile(&x, &m, k0, keys, q0, &ds);
        barrier(CLK_LOCAL_MEM_FENCE);

        /* 3. dV^T += dO^T (P Z), dK^T += Q^T dS over the block's queries. */
        if (kv.owner) {
            sdpa_bwd_acc_tile(&kv.dv, m.diff_dst + kv.d0, 1, x.ld,
                              m.p + kv.k0 + get_sub_group_local_id(), bc, queries, kv.v_drows,
                              kv.nvec);
            sdpa_bwd_acc_tile(&kv.dk, m.q + kv.d0, 1, x.ld, m.ds + kv.k0 + get_sub_group_local_id(),
                              bc, queries, kv.k_drows, kv.nvec);
        }

        /* 4. dQ += factor dS K over the keys the block's queries see. */
        sdpa_bwd_dq_block(&dq, &m, &x, q0, queries,
                          sdpa_bwd_visible_keys(&x, k0, keys, q0 + queries - 1), dq_owner);
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    /* Epilogue: dK and dV of the block. */
    sdpa_bwd_store_dkv(&m, &x, DK, DV, &st, k0, keys);
}
#endif

#if SDPA_BWD_PARTS & SDPA_BWD_PART_DQ
__attribute__((intel_reqd_sub_group_size(SUBGROUP_SIZE))) kernel void sdpa_bwd_dq(
#include "sdpa_bwd_args.def"
)
{
    const int bc = sdpa_bwd_bc(), br = sdpa_bwd_br();
    /* Queries of the work-group: SDPA_BWD_DQ_QUERIES(bc, br), spelled as a
     * product so that LLVM does not rewrite (bc / br) * br into
     * bc - bc % br with a `freeze`, which llvm-spirv-15 cannot translate. */
    const int bq = sdpa_imax(1, bc / br) * br;
    const int lane = get_sub_group_local_id();
    const int q0 = get_group_id(0) * bq;
    const sdpa_bwd_problem x = SDPA_BWD_PROBLEM_OF_ARGS();
    const int queries = sdpa_imin(bq, x.sq - q0);
    /* VARLEN: past the sequence's queries, nothing to write. */
    if (SC(VARLEN) && queries <= 0)
        return;
    const sdpa_bwd_slm m = sdpa_bwd_slm_of(SLM, bq, x.ld);
    const sdpa_bwd_all_strides st = sdpa_bwd_all_strides_of(STRIDES);
    const sdpa_bwd_inputs in = sdpa_bwd_inputs_of(K, Q, V, DIFF_DST, &st);

    sdpa_bwd_stage_queries(&m, &x, q0, bq, &in, WS, D_I);
    sdpa_bwd_zero(m.acc0, bq * x.ld);

    /* Keys the work-group's queries can see: all, or up to the causal band
     * or window of its last query, from the window of its first (rounded
     * down to a block). */
    const int k_end = sdpa_bwd_visible_keys(&x, 0, x.sk, q0 + queries - 1);
    const int k_begin = sdpa_imin(
            sdpa_imax(0, sdpa_window_first(q0 + x.pos_offset, x.win_left) / bc) * bc, x.sk);
    const int sub_blocks = (queries + br - 1) / br;
    const bool dq_owner = get_sub_group_id() < SC(WG_M_DBR) * SC(WG_N_DBR);

    /* Each block of keys, staged once, serves the work-group's sub-blocks of
     * br queries in turn: the staging is paid once per bq queries. */
    for (int k0 = k_begin; k0 < k_end; k0 += bc) {
        const int keys = sdpa_imin(bc, x.sk - k0);
        barrier(CLK_LOCAL_MEM_FENCE); /* the previous block's readers are done */
        sdpa_bwd_stage_keys(&m, &x, &in, k0, keys);
        for (int sb = 0; sb < sub_blocks; sb++) {
            const int r0 = sb * br, rows = sdpa_imin(br, queries - r0);
            const sdpa_bwd_slm ms = sdpa_bwd_slm_rows(m, r0, x.ld);
            barrier(CLK_LOCAL_MEM_FENCE); /* keys staged, previous sub-block's readers done */
            sdpa_bwd_scores_tile(&x, &ms, k0, keys, q0 + r0, 0);
            barrier(CLK_LOCAL_MEM_FENCE);

            if (dq_owner) {
                const sdpa_bwd_dq_place t = sdpa_bwd_dq_place_of(D, rows);
                sdpa_bwd_acc dq_acc;
                dq_acc.c = m.acc0 + (r0 + t.qr0) * x.ld + t.d0 + lane;
                dq_acc.ld = x.ld;
                sdpa_bwd_acc_tile(&dq_acc, m.ds + t.qr0 * bc, bc, 1, m.k + t.d0 + lane, x.ld,
                                  sdpa_bwd_visible_keys(&x, k0, keys, q0 + r0 + rows - 1), t.rows,
                                  t.nvec);
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    sdpa_bwd_out out;
    out.f32 = false;
    out.atomic = false;
    const sdpa_out_view dq = sdpa_bwd_out_view(DQ, &st.dq);
    sdpa_bwd_store_acc(&dq, sdpa_bwd_q_rows(&x, &st.dq, x.h), q0, m.acc0, x.ld, 1, queries, D,
                       x.factor, out);
}
#endif

#if SDPA_BWD_PARTS & SDPA_BWD_PART_POST
__attribute__((intel_reqd_sub_group_size(SUBGROUP_SIZE))) kernel void sdpa_bwd_postprocess(
#include "sdpa_bwd_post_args.def"
)
{
    const int lane = get_sub_group_local_id();
    const long h = get_group_id(1);
    const int row0 = get_group_id(0) * SDPA_BWD_POST_ROWS;
    /* Packed sequences (CU_SEQLENS set): sequence group z's rows only, from
     * packed row `first` (S is then the packed rows, which the sequence is
     * clamped into, sdpa_device_arrays.h; the groups cover its maximum);
     * rows outside every sequence are not written. */
    const long b = CU_SEQLENS ? 0 : get_group_id(2);
    sdpa_packed_seq seq = {0, S};
    if (CU_SEQLENS)
        seq = sdpa_packed_seq_of(CU_SEQLENS, get_group_id(2), S, S);
    const long first = seq.row0;
    const int s = seq.len;

    for (int r = get_sub_group_id(); r < SDPA_BWD_POST_ROWS; r += SDPA_BWD_POST_SUBGROUPS) {
        const int row = row0 + r;
        if (row >= s)
            break;
        const long src_off = b * SRC_S0 + h * SRC_S1 + (first + row) * SRC_S2;
        const long dst_off = b * DST_S0 + h * DST_S1 + (first + row) * DST_S2;
        for (int c0 = 0; c0 < D; c0 += SUBGROUP_SIZE) {
            const int c = c0 + lane;
            if (c >= D)
                break;
            /* Slices in a fixed order: the same bits every run. */
            float sum = 0.0f;
            for (int g = 0; g < SLICES; g++)
                sum += SRC[(long)g * SLICE_STRIDE + src_off + (long)c * SRC_S3];
            sdpa_store(DST, dst_off + (long)c * DST_S3, SC(QRY_DT), sum);
        }
    }
}
#endif
