/* bench_naive.c - the host baselines: attention that materializes S x S with
 * OpenBLAS sgemm (forward and backward), and plain sgemm throughput. f32
 * throughout; f16 inputs arrive already converted (not timed). */
#include <stdio.h>

#include "bench.h"

#ifndef SDPA_BENCH_OPENBLAS

int bench_have_baselines(void)
{
    return 0;
}

void bench_describe_baselines(void)
{
    printf("baseline:  none (configure found no OpenBLAS; install libopenblas-dev and rerun "
           "configure for the naive and sgemm baselines)\n");
}

int bench_run_naive(const bench_case_t *c, const bench_host_t *h, const bench_policy_t *policy,
                    bench_outputs_t *out, bench_naive_t *result)
{
    return -1;
}

int bench_run_sgemm(double flops, const bench_policy_t *policy, bench_sgemm_t *result)
{
    return -1;
}

#else

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

int bench_have_baselines(void)
{
    return 1;
}

void bench_describe_baselines(void)
{
    printf("baseline:  %s; core %s (%s), %d threads\n", openblas_get_config(),
           openblas_get_corename(), blas_env_origin(), openblas_get_num_threads());
}

/* ------------------------------------------------------------------------- */
/* Row-parallel loops for the elementwise parts (softmax, dS)                */
/* ------------------------------------------------------------------------- */

typedef void (*row_range_fn)(void *context, int64_t begin, int64_t end);

typedef struct row_range {
    row_range_fn fn;
    void *context;
    int64_t begin, end;
} row_range_t;

static void *row_range_thread(void *arg)
{
    row_range_t *r = arg;
    r->fn(r->context, r->begin, r->end);
    return NULL;
}

/* Calls fn over rows split among as many threads as OpenBLAS uses, so the
 * elementwise work gets the cores sgemm gets. */
static void for_rows(int64_t rows, int64_t cols, row_range_fn fn, void *context)
{
    enum { MAX_THREADS = 64 };
    int threads = openblas_get_num_threads();
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    if (threads < 2 || rows < 2 || rows * cols < 65536) {
        fn(context, 0, rows);
        return;
    }
    if (rows < threads)
        threads = (int)rows;
    row_range_t ranges[MAX_THREADS];
    pthread_t ids[MAX_THREADS];
    int started[MAX_THREADS] = {0};
    for (int t = 0; t < threads; t++)
        ranges[t] = (row_range_t){fn, context, rows * t / threads, rows * (t + 1) / threads};
    for (int t = 1; t < threads; t++)
        started[t] = pthread_create(&ids[t], NULL, row_range_thread, &ranges[t]) == 0;
    fn(context, ranges[0].begin, ranges[0].end);
    for (int t = 1; t < threads; t++) {
        if (started[t])
            pthread_join(ids[t], NULL);
        else /* no thread: do its share here */
            fn(context, ranges[t].begin, ranges[t].end);
    }
}

/* ------------------------------------------------------------------------- */
/* Softmax of materialized scores                                            */
/* ------------------------------------------------------------------------- */

typedef struct softmax_job {
    float *scores;        /* Sq x Sk, already scaled */
    int64_t cols;         /* Sk */
    int64_t causal_shift; /* bottom-right: row i sees keys j <= i + shift */
    int causal;
    int64_t window_left; /* > 0: row i sees keys j >= i + shift - window_left */
    float sink;          /* the head's sink logit, joins each denominator; -inf: none */
} softmax_job_t;

static void softmax_range(void *context, int64_t begin, int64_t end)
{
    const softmax_job_t *job = context;
    for (int64_t i = begin; i < end; i++) {
        float *row = job->scores + i * job->cols;
        int64_t seen = job->cols;
        if (job->causal) {
            int64_t last = i + job->causal_shift;
            seen = last < 0 ? 0 : last + 1 < job->cols ? last + 1 : job->cols;
        }
        int64_t first = 0;
        if (job->window_left > 0) {
            first = i + job->causal_shift - job->window_left;
            first = first < 0 ? 0 : first > seen ? seen : first;
        }
        for (int64_t j = 0; j < first; j++)
            row[j] = 0.0f;
        float max = job->sink;
        for (int64_t j = first; j < seen; j++)
            max = row[j] > max ? row[j] : max;
        float sum = job->sink > -INFINITY ? expf(job->sink - max) : 0.0f;
        for (int64_t j = first; j < seen; j++) {
            row[j] = expf(row[j] - max);
            sum += row[j];
        }
        float inverse = seen > first ? 1.0f / sum : 0.0f;
        for (int64_t j = first; j < seen; j++)
            row[j] *= inverse;
        for (int64_t j = seen; j < job->cols; j++)
            row[j] = 0.0f;
    }
}

/* dS = P * (dP - rowsum(P * dP)), in place of dP. rowsum(P * dP) equals
 * rowsum(dO * O), the D_i of the flash-attention backward. */
typedef struct dscores_job {
    const float *probs;
    float *dprobs;
    int64_t cols;
} dscores_job_t;

static void dscores_range(void *context, int64_t begin, int64_t end)
{
    const dscores_job_t *job = context;
    for (int64_t i = begin; i < end; i++) {
        const float *p = job->probs + i * job->cols;
        float *dp = job->dprobs + i * job->cols;
        float d_i = 0.0f;
        for (int64_t j = 0; j < job->cols; j++)
            d_i += p[j] * dp[j];
        for (int64_t j = 0; j < job->cols; j++)
            dp[j] = p[j] * (dp[j] - d_i);
    }
}

/* ------------------------------------------------------------------------- */
/* Naive attention                                                           */
/* ------------------------------------------------------------------------- */

typedef struct naive_run {
    const bench_case_t *c;
    const bench_host_t *h;
    bench_outputs_t *out;
    float *probs;  /* one head's Sq x Sk */
    float *dprobs; /* backward: one head's dP / dS */
} naive_run_t;

/* P = softmax(scale * Q K^T + mask) of query head hq, materialized (its
 * sink, if any, in each row's denominator). */
static void head_probabilities(const naive_run_t *n, int64_t hq, const float *q, const float *k)
{
    const bench_case_t *c = n->c;
    int sq = (int)c->q_len, sk = (int)c->k_len, d = (int)c->head_size;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, sq, sk, d, n->h->scale, q, d, k, d, 0.0f,
                n->probs, sk);
    softmax_job_t job = {n->probs,
                         c->k_len,
                         c->k_len - c->q_len,
                         c->mask == SDPA_MASK_CAUSAL_BOTTOM_RIGHT,
                         c->window_left,
                         n->h->sinks ? n->h->sinks[hq] : -INFINITY};
    for_rows(c->q_len, c->k_len, softmax_range, &job);
}

static double naive_forward_once(void *context)
{
    const naive_run_t *n = context;
    const bench_case_t *c = n->c;
    int sq = (int)c->q_len, sk = (int)c->k_len, d = (int)c->head_size;
    int64_t group = c->q_heads / c->kv_heads;
    double start = bench_run_seconds_now();
    for (int64_t b = 0; b < c->batch; b++) {
        for (int64_t hq = 0; hq < c->q_heads; hq++) {
            int64_t hk = hq / group;
            int64_t q_at = (b * c->q_heads + hq) * c->q_len * c->head_size;
            int64_t kv_at = (b * c->kv_heads + hk) * c->k_len * c->head_size;
            head_probabilities(n, hq, n->h->q + q_at, n->h->k + kv_at);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, sq, d, sk, 1.0f, n->probs, sk,
                        n->h->v + kv_at, d, 0.0f, n->out->dst + q_at, d);
        }
    }
    return bench_run_seconds_now() - start;
}

static double naive_backward_once(void *context)
{
    const naive_run_t *n = context;
    const bench_case_t *c = n->c;
    const bench_host_t *h = n->h;
    int sq = (int)c->q_len, sk = (int)c->k_len, d = (int)c->head_size;
    int64_t group = c->q_heads / c->kv_heads;
    double start = bench_run_seconds_now();
    /* Query heads of a group add into their KV head's dK and dV. */
    memset(n->out->diff_k, 0, (size_t)bench_kv_elements(c) * sizeof(float));
    memset(n->out->diff_v, 0, (size_t)bench_kv_elements(c) * sizeof(float));
    for (int64_t b = 0; b < c->batch; b++) {
        for (int64_t hq = 0; hq < c->q_heads; hq++) {
            int64_t hk = hq / group;
            int64_t q_at = (b * c->q_heads + hq) * c->q_len * c->head_size;
            int64_t kv_at = (b * c->kv_heads + hk) * c->k_len * c->head_size;
            const float *q = h->q + q_at, *k = h->k + kv_at, *v = h->v + kv_at;
            const float *d_o = h->diff_dst + q_at;
            head_probabilities(n, hq, q, k);
            /* dV += P^T dO */
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, sk, d, sq, 1.0f, n->probs, sk, d_o,
                        d, 1.0f, n->out->diff_v + kv_at, d);
            /* dP = dO V^T, then dS = P * (dP - D_i) */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, sq, sk, d, 1.0f, d_o, d, v, d,
                        0.0f, n->dprobs, sk);
            dscores_job_t job = {n->probs, n->dprobs, c->k_len};
            for_rows(c->q_len, c->k_len, dscores_range, &job);
            /* dQ = scale dS K, dK += scale dS^T Q */
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, sq, d, sk, h->scale, n->dprobs,
                        sk, k, d, 0.0f, n->out->diff_q + q_at, d);
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, sk, d, sq, h->scale, n->dprobs, sk,
                        q, d, 1.0f, n->out->diff_k + kv_at, d);
        }
    }
    return bench_run_seconds_now() - start;
}

int bench_run_naive(const bench_case_t *c, const bench_host_t *h, const bench_policy_t *policy,
                    bench_outputs_t *out, bench_naive_t *result)
{
    *result = (bench_naive_t){0};
    if (c->varlen_count > 0 || c->head_size_v > 0)
        return -1; /* one square per sequence, or Dv != D: not the dense baseline's shape */
    int backward = c->pass == BENCH_BACKWARD;
    size_t head_scores = (size_t)c->q_len * (size_t)c->k_len * sizeof(float);
    size_t q_bytes = (size_t)bench_q_elements(c) * sizeof(float);
    size_t kv_bytes = (size_t)bench_kv_elements(c) * sizeof(float);
    naive_run_t n = {.c = c, .h = h, .out = out};
    n.probs = malloc(head_scores);
    n.dprobs = backward ? malloc(head_scores) : NULL;
    if (n.probs == NULL || (backward && n.dprobs == NULL)) {
        fprintf(stderr, "sdpa_bench: naive %s: out of host memory for S (%zu bytes)\n", c->name,
                head_scores);
        free(n.dprobs);
        free(n.probs);
        return -1;
    }
    int rc = bench_repeat(policy, c->max_reps, backward ? naive_backward_once : naive_forward_once,
                          &n, &result->seconds, &result->reps);
    /* Forward: Q, K, V, O and S. Backward: Q, K, V, dO, dQ, dK, dV, P and dP. */
    size_t tensors = backward ? 3 * q_bytes + 4 * kv_bytes : 2 * q_bytes + 2 * kv_bytes;
    size_t matrices = backward ? 2 : 1;
    result->bytes = tensors + matrices * head_scores;
    result->all_heads_bytes = tensors + matrices * head_scores * (size_t)(c->batch * c->q_heads);
    free(n.dprobs);
    free(n.probs);
    return rc;
}

/* ------------------------------------------------------------------------- */
/* sgemm throughput                                                          */
/* ------------------------------------------------------------------------- */

typedef struct sgemm_run {
    int n;
    const float *a, *b;
    float *c;
} sgemm_run_t;

static double sgemm_once(void *context)
{
    const sgemm_run_t *s = context;
    double start = bench_run_seconds_now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s->n, s->n, s->n, 1.0f, s->a, s->n, s->b,
                s->n, 0.0f, s->c, s->n);
    return bench_run_seconds_now() - start;
}

int bench_run_sgemm(double flops, const bench_policy_t *policy, bench_sgemm_t *result)
{
    *result = (bench_sgemm_t){0};
    /* 2 n^3 = flops, n a multiple of 32 in [64, 4096]. */
    int64_t n = (int64_t)llround(cbrt(flops / 2.0) / 32.0) * 32;
    n = n < 64 ? 64 : n > 4096 ? 4096 : n;
    size_t bytes = (size_t)(n * n) * sizeof(float);
    float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
    int rc = -1;
    if (a && b && c) {
        for (int64_t i = 0; i < n * n; i++) {
            a[i] = (float)((i * 7) % 13) / 13.0f - 0.5f;
            b[i] = (float)((i * 5) % 11) / 11.0f - 0.5f;
        }
        sgemm_run_t s = {(int)n, a, b, c};
        double median = 0.0;
        rc = bench_repeat(policy, 50, sgemm_once, &s, &median, &result->reps);
        result->n = n;
        result->gflops = rc == 0 ? 2.0 * (double)n * (double)n * (double)n / median * 1e-9 : 0.0;
    } else {
        fprintf(stderr, "sdpa_bench: sgemm: out of host memory (3 x %zu bytes)\n", bytes);
    }
    free(c);
    free(b);
    free(a);
    return rc;
}

#endif /* SDPA_BENCH_OPENBLAS */
