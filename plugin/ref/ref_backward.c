/* ref_backward.c - analytic gradients in double.
 *
 * With s_ij = c * q_i.k_j + mask_ij (c the effective scale), P = softmax(s),
 * Z the dropout keep mask scaled by 1 / (1 - p) (all ones without dropout)
 * and O = (P o Z) V:
 *   dV_j = sum_i (P o Z)_ij dO_i      dP_ij = Z_ij (dO_i . V_j)
 *   D_i  = sum_j P_ij dP_ij  (= dO_i . O_i)
 *   dS_ij = P_ij (dP_ij - D_i)
 *   dQ_i = c sum_j dS_ij K_j          dK_j = c sum_i dS_ij Q_i
 * P is recomputed in double from Q, K, the scale and the mask (the workspace
 * is not read), and D_i comes from P, so the result is the exact gradient of
 * the forward function rather than of a rounded O. With sinks (sdpa.h)
 * P_ij = exp(s_ij - lse_i) keeps its formula, lse_i including the sink, and
 *   dsink_h = -sum_{b,i} P_sink_i D_i,  P_sink_i = exp(sink_h - lse_i),
 * summed per (b, h) by the item that owns the row and over b in order at
 * the end. Query heads that share a
 * K/V head (GQA) add into the same dK, dV. Each work item owns one K/V head
 * and sums in a fixed order, so results are deterministic. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "ref.h"

typedef struct bwd_worker {
    double *k_keys, *k_dims, *v_keys; /* K in key and dim panels, V in key panels */
    double *dk, *dv;                  /* [Sk][D] and [Sk][Dv] accumulators */
    double *p, *dp;                   /* REF_ROWS x Sk: P then P o Z; dP then dS */
    double *cap_grad;                 /* REF_ROWS x Sk: the softcap's derivative */
    uint8_t *keep;                    /* REF_ROWS x Sk */
    double *q, *dout, *dq;            /* REF_ROWS x D (dout: Dv); q is pre-multiplied by c */
} bwd_worker_t;

typedef struct bwd_job {
    const ref_exec_t *x;
    bwd_worker_t *workers;
    double *dsink; /* sinks: [B, Hq] partial sums, else NULL */
} bwd_job_t;

/* Adds the contributions of queries i0 .. i0 + rows - 1 of query head h of
 * seq to w->dk and w->dv (and to *dsink, the head's sink gradient, unless
 * NULL) and writes their dQ (and dS). */
static void backward_rows(const ref_exec_t *x, bwd_worker_t *w, const ref_seq_t *seq, int64_t h,
                          int64_t i0, int rows, double *dsink)
{
    const sdpa_problem_desc_t *p = x->problem;
    const sdpa_exec_args_t *a = x->args;
    const int64_t sk = x->shape->k_len, dims = x->shape->head_size, b = seq->b;
    const int64_t dims_v = x->shape->head_size_v;
    const double c = x->score_scale;

    memset(w->q, 0, REF_ROWS * (size_t)dims * sizeof(double));
    memset(w->dout, 0, REF_ROWS * (size_t)dims_v * sizeof(double));
    for (int r = 0; r < rows; r++) {
        const int64_t qi = seq->q0 + i0 + r;
        for (int64_t d = 0; d < dims; d++)
            w->q[r * dims + d] =
                    sdpa_element_load(a->q, ref_offset(&p->q, seq->qb, h, qi, d), p->q.dtype);
        for (int64_t d = 0; d < dims_v; d++)
            w->dout[r * dims_v + d] = sdpa_element_load(
                    a->diff_dst, ref_offset(&p->diff_dst, seq->qb, h, qi, d), p->diff_dst.dtype);
    }
    double lse[REF_ROWS];
    const int64_t n =
            ref_probabilities(x, seq, w->k_keys, h, i0, rows, w->q, w->p, lse, w->cap_grad);

    /* dP = Z o (dO V^T); D_i = sum_j P_ij dP_ij; dS = P o (dP - D_i);
     * then p becomes P o Z for dV. Rows beyond rows stay zero. */
    ref_rows_times_keys(w->dout, dims_v, w->v_keys, sk, n, w->dp);
    for (int r = 0; r < REF_ROWS; r++) {
        double *pr = w->p + r * sk, *dpr = w->dp + r * sk;
        if (r >= rows) {
            memset(dpr, 0, (size_t)n * sizeof(double));
            continue;
        }
        uint8_t *keep = w->keep + r * sk;
        const double factor = ref_dropout_row(x, b, h, i0 + r, keep);
        double row_dot = 0.0;
        for (int64_t j = 0; j < n; j++) {
            dpr[j] = keep[j] ? dpr[j] * factor : 0.0;
            if (pr[j] != 0.0)
                row_dot += pr[j] * dpr[j];
        }
        if (dsink != NULL && lse[r] != -INFINITY) /* -inf: no key and no sink */
            *dsink -= exp(ref_sink(x, h) - lse[r]) * row_dot;
        for (int64_t j = 0; j < n; j++) {
            const double pj = pr[j];
            dpr[j] = pj == 0.0 ? 0.0 : pj * (dpr[j] - row_dot);
            pr[j] = keep[j] ? pj * factor : 0.0;
        }
        /* dS is the gradient of the softmax input (sdpa.h); q.k_j's is
         * dS times the softcap's derivative. */
        if (p->ds.dtype != SDPA_DTYPE_UNDEF) {
            for (int64_t j = 0; j < seq->len_k; j++)
                sdpa_element_store(a->ds, ref_offset(&p->ds, b, h, i0 + r, j), p->ds.dtype,
                                   j < n ? dpr[j] : 0.0);
        }
        if (x->softcap > 0.0) {
            for (int64_t j = 0; j < n; j++)
                dpr[j] *= w->cap_grad[r * sk + j];
        }
    }
    for (int64_t e = 0; e < REF_ROWS * dims; e++)
        w->q[e] *= c;
    ref_weights_times_dims(w->dp, sk, n, w->k_dims, dims, w->dq);
    ref_accumulate_outer(w->dp, sk, n, w->q, dims, w->dk);
    ref_accumulate_outer(w->p, sk, n, w->dout, dims_v, w->dv);

    for (int r = 0; r < rows; r++) {
        const int64_t qi = seq->q0 + i0 + r;
        for (int64_t d = 0; d < dims; d++)
            sdpa_element_store(a->diff_q, ref_offset(&p->diff_q, seq->qb, h, qi, d),
                               p->diff_q.dtype, c * w->dq[r * dims + d]);
    }
}

/* Item = (b, K/V head): every query head of its group, every query. */
static void backward_item(void *context, int64_t item, int worker)
{
    bwd_job_t *job = context;
    const ref_exec_t *x = job->x;
    const sdpa_problem_desc_t *p = x->problem;
    const sdpa_shape_t *s = x->shape;
    bwd_worker_t *w = &job->workers[worker];
    const int64_t kv_h = item % s->kv_heads, b = item / s->kv_heads;
    const int64_t sk = s->k_len, dims = s->head_size, dims_v = s->head_size_v;
    ref_seq_t seq;
    ref_seq_of(x, b, &seq);

    ref_head_t k = {.key_panels = w->k_keys, .dim_panels = w->k_dims};
    ref_head_t v = {.key_panels = w->v_keys, .dim_panels = NULL};
    ref_load_head(x, 'k', &seq, kv_h, &k);
    ref_load_head(x, 'v', &seq, kv_h, &v);
    memset(w->dk, 0, (size_t)(sk * dims) * sizeof(double));
    memset(w->dv, 0, (size_t)(sk * dims_v) * sizeof(double));

    for (int64_t g = 0; g < s->kv_group_size; g++) {
        const int64_t h = kv_h * s->kv_group_size + g;
        double *dsink = job->dsink ? &job->dsink[b * s->q_heads + h] : NULL;
        for (int64_t i = 0; i < seq.len_q; i += REF_ROWS)
            backward_rows(x, w, &seq, h, i,
                          seq.len_q - i < REF_ROWS ? (int)(seq.len_q - i) : REF_ROWS, dsink);
    }
    for (int64_t j = 0; j < seq.len_k; j++) {
        int64_t i0, i2;
        ref_key_row(&seq, j, &i0, &i2);
        for (int64_t d = 0; d < dims; d++)
            sdpa_element_store(x->args->diff_k, ref_offset(&p->diff_k, i0, kv_h, i2, d),
                               p->diff_k.dtype, w->dk[j * dims + d]);
        for (int64_t d = 0; d < dims_v; d++)
            sdpa_element_store(x->args->diff_v, ref_offset(&p->diff_v, i0, kv_h, i2, d),
                               p->diff_v.dtype, w->dv[j * dims_v + d]);
    }
}

static void free_workers(bwd_worker_t *workers, int count)
{
    for (int n = 0; n < count; n++) {
        bwd_worker_t *w = &workers[n];
        free(w->k_keys);
        free(w->k_dims);
        free(w->v_keys);
        free(w->dk);
        free(w->dv);
        free(w->p);
        free(w->dp);
        free(w->cap_grad);
        free(w->keep);
        free(w->q);
        free(w->dout);
        free(w->dq);
    }
    free(workers);
}

sdpa_status_t ref_backward(const ref_exec_t *x)
{
    const sdpa_shape_t *s = x->shape;
    const size_t sk = (size_t)s->k_len, dims = (size_t)s->head_size;
    const size_t dims_v = (size_t)s->head_size_v;
    const size_t head = sk * dims * sizeof(double), head_v = sk * dims_v * sizeof(double);
    const size_t key_panels = ref_key_panels_size(s->k_len, s->head_size) * sizeof(double);
    const size_t v_panels = ref_key_panels_size(s->k_len, s->head_size_v) * sizeof(double);
    const size_t dim_panels = ref_dim_panels_size(s->k_len, s->head_size) * sizeof(double);
    bwd_job_t job = {.x = x};
    const int64_t items = s->batch * s->kv_heads;
    const int count = ref_worker_count(items);

    job.workers = calloc((size_t)count, sizeof(*job.workers));
    if (job.workers == NULL)
        goto out_of_memory;
    if (x->problem->sinks &&
        (job.dsink = calloc((size_t)(s->batch * s->q_heads), sizeof(double))) == NULL)
        goto out_of_memory;
    for (int n = 0; n < count; n++) {
        bwd_worker_t *w = &job.workers[n];
        w->k_keys = malloc(key_panels);
        w->k_dims = malloc(dim_panels);
        w->v_keys = malloc(v_panels);
        w->dk = malloc(head);
        w->dv = malloc(head_v);
        w->p = malloc(REF_ROWS * sk * sizeof(double));
        w->dp = malloc(REF_ROWS * sk * sizeof(double));
        w->cap_grad = malloc(REF_ROWS * sk * sizeof(double));
        w->keep = malloc(REF_ROWS * sk);
        w->q = malloc(REF_ROWS * dims * sizeof(double));
        w->dout = malloc(REF_ROWS * dims_v * sizeof(double));
        w->dq = malloc(REF_ROWS * dims * sizeof(double));
        if (!w->k_keys || !w->k_dims || !w->v_keys || !w->dk || !w->dv || !w->p || !w->dp ||
            !w->cap_grad || !w->keep || !w->q || !w->dout || !w->dq)
            goto out_of_memory;
    }
    ref_parallel_run(count, items, backward_item, &job);
    free_workers(job.workers, count);
    for (int64_t h = 0; job.dsink != NULL && h < s->q_heads; h++) {
        double sum = 0.0;
        for (int64_t b = 0; b < s->batch; b++)
            sum += job.dsink[b * s->q_heads + h];
        sdpa_element_store(x->args->diff_sinks, h, SDPA_DTYPE_F32, sum);
    }
    free(job.dsink);
    return SDPA_SUCCESS;

out_of_memory:
    free(job.dsink);
    if (job.workers != NULL)
        free_workers(job.workers, count);
    return sdpa_fail(SDPA_ERROR_OUT_OF_HOST_MEMORY,
                     "ref backward: cannot allocate %zu bytes of host memory per worker",
                     key_panels + v_panels + dim_panels + head + head_v +
                             REF_ROWS * (sk * (2 * sizeof(double) + 1) +
                                         (2 * dims + dims_v) * sizeof(double)));
}
