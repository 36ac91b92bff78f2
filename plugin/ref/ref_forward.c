/* ref_forward.c - O = dropout(softmax(scale * Q K^T + mask)) V in double,
 * plus the log-sum-exp workspace and the keep mask when asked. */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "ref.h"

/* Queries per work item: enough to amortize loading a head's K and V. */
#define REF_FWD_QUERY_BLOCK 32

/* One worker's buffers; K/V of the head it last loaded stay cached. */
typedef struct fwd_worker {
    double *k_panels; /* K in key panels */
    double *v_panels; /* V in dim panels */
    double *p;        /* REF_ROWS x Sk */
    double *q, *o;    /* REF_ROWS x D and REF_ROWS x Dv */
    uint8_t *keep;    /* REF_ROWS x Sk */
    int64_t cached_b, cached_h;
    ref_seq_t seq; /* of cached_b */
} fwd_worker_t;

typedef struct fwd_job {
    const ref_exec_t *x;
    fwd_worker_t *workers;
    int64_t query_blocks; /* per head */
} fwd_job_t;

/* Queries i0 .. i0 + rows - 1 of query head h of the cached sequence. */
static void forward_rows(const ref_exec_t *x, fwd_worker_t *w, int64_t h, int64_t i0, int rows)
{
    const sdpa_problem_desc_t *p = x->problem;
    const sdpa_shape_t *s = x->shape;
    const sdpa_exec_args_t *a = x->args;
    const ref_seq_t *seq = &w->seq;
    const int64_t sk = s->k_len, dims = s->head_size, dims_v = s->head_size_v, b = seq->b;

    memset(w->q, 0, REF_ROWS * (size_t)dims * sizeof(double));
    for (int r = 0; r < rows; r++)
        for (int64_t d = 0; d < dims; d++)
            w->q[r * dims + d] = sdpa_element_load(
                    a->q, ref_offset(&p->q, seq->qb, h, seq->q0 + i0 + r, d), p->q.dtype);
    double lse[REF_ROWS];
    const int64_t n =
            ref_probabilities(x, seq, w->k_panels, h, i0, rows, w->q, w->p, lse, NULL);

    /* Dropped probabilities become 0, kept ones are scaled by 1 / (1 - p). */
    for (int r = 0; r < rows; r++) {
        uint8_t *keep = w->keep + r * sk;
        const double factor = ref_dropout_row(x, b, h, i0 + r, keep);
        if (!x->dropout)
            continue;
        double *pr = w->p + r * sk;
        for (int64_t j = 0; j < n; j++)
            pr[j] = keep[j] ? pr[j] * factor : 0.0;
    }
    ref_weights_times_dims(w->p, sk, n, w->v_panels, dims_v, w->o);

    for (int r = 0; r < rows; r++) {
        const int64_t i = i0 + r, qi = seq->q0 + i;
        for (int64_t d = 0; d < dims_v; d++)
            sdpa_element_store(a->dst, ref_offset(&p->dst, seq->qb, h, qi, d), p->dst.dtype,
                               w->o[r * dims_v + d]);
        /* The workspace follows Q's dims; the keep mask the logical scores'. */
        if (p->prop_kind == SDPA_FORWARD_TRAINING)
            ((float *)a->workspace)[(seq->qb * s->q_heads + h) * p->q.dims[2] + qi] =
                    (float)lse[r];
        if (p->dropout.enabled && p->dropout.with_mask_output)
            memcpy((uint8_t *)a->dropout_mask + ((b * s->q_heads + h) * s->q_len + i) * sk,
                   w->keep + r * sk, (size_t)seq->len_k);
    }
}

/* Item = (b, h, block of queries). */
static void forward_item(void *context, int64_t item, int worker)
{
    fwd_job_t *job = context;
    const ref_exec_t *x = job->x;
    const sdpa_shape_t *s = x->shape;
    fwd_worker_t *w = &job->workers[worker];

    const int64_t block = item % job->query_blocks;
    const int64_t h = (item / job->query_blocks) % s->q_heads;
    const int64_t b = item / job->query_blocks / s->q_heads;
    const int64_t kv_h = h / s->kv_group_size;
    ref_seq_t seq;
    ref_seq_of(x, b, &seq);
    const int64_t first = block * REF_FWD_QUERY_BLOCK;
    if (first >= seq.len_q)
        return; /* a shorter sequence (varlen) */
    if (w->cached_b != b || w->cached_h != kv_h) {
        ref_head_t k = {.key_panels = w->k_panels, .dim_panels = NULL};
        ref_head_t v = {.key_panels = NULL, .dim_panels = w->v_panels};
        ref_load_head(x, 'k', &seq, kv_h, &k);
        ref_load_head(x, 'v', &seq, kv_h, &v);
        w->cached_b = b;
        w->cached_h = kv_h;
        w->seq = seq;
    }
    const int64_t end =
            first + REF_FWD_QUERY_BLOCK < seq.len_q ? first + REF_FWD_QUERY_BLOCK : seq.len_q;
    for (int64_t i = first; i < end; i += REF_ROWS)
        forward_rows(x, w, h, i, end - i < REF_ROWS ? (int)(end - i) : REF_ROWS);
}

static void free_workers(fwd_worker_t *workers, int count)
{
    for (int n = 0; n < count; n++) {
        free(workers[n].k_panels);
        free(workers[n].v_panels);
        free(workers[n].p);
        free(workers[n].q);
        free(workers[n].o);
        free(workers[n].keep);
    }
    free(workers);
}

sdpa_status_t ref_forward(const ref_exec_t *x)
{
    const sdpa_shape_t *s = x->shape;
    const size_t sk = (size_t)s->k_len, dims = (size_t)s->head_size;
    const size_t dims_v = (size_t)s->head_size_v;
    fwd_job_t job = {.x = x};
    job.query_blocks = (s->q_len + REF_FWD_QUERY_BLOCK - 1) / REF_FWD_QUERY_BLOCK;
    const int64_t items = s->batch * s->q_heads * job.query_blocks;
    const int count = ref_worker_count(items);

    job.workers = calloc((size_t)count, sizeof(*job.workers));
    if (job.workers == NULL)
        goto out_of_memory;
    for (int n = 0; n < count; n++) {
        fwd_worker_t *w = &job.workers[n];
        w->k_panels = malloc(ref_key_panels_size(s->k_len, s->head_size) * sizeof(double));
        w->v_panels = malloc(ref_dim_panels_size(s->k_len, s->head_size_v) * sizeof(double));
        w->p = malloc(REF_ROWS * sk * sizeof(double));
        w->q = malloc(REF_ROWS * dims * sizeof(double));
        w->o = malloc(REF_ROWS * dims_v * sizeof(double));
        w->keep = malloc(REF_ROWS * sk);
        w->cached_b = w->cached_h = -1;
        if (!w->k_panels || !w->v_panels || !w->p || !w->q || !w->o || !w->keep)
            goto out_of_memory;
    }
    ref_parallel_run(count, items, forward_item, &job);
    free_workers(job.workers, count);
    return SDPA_SUCCESS;

out_of_memory:
    if (job.workers != NULL)
        free_workers(job.workers, count);
    return sdpa_fail(SDPA_ERROR_OUT_OF_HOST_MEMORY,
                     "ref forward: cannot allocate %zu bytes of host memory per worker",
                     (ref_key_panels_size(s->k_len, s->head_size) +
                      ref_dim_panels_size(s->k_len, s->head_size_v)) *
                                     sizeof(double) +
                             REF_ROWS * sk * (sizeof(double) + 1) +
                             REF_ROWS * (dims + dims_v) * sizeof(double));
}
