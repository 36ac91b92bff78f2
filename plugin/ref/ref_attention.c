/* ref_attention.c - scores, softmax and dropout of a block of queries,
 * shared by the forward and backward passes. */
#include <math.h>
#include <string.h>

#include "philox.h"
#include "ref.h"

/* The keys query i of seq sees: lo .. hi - 1 (the causal band and the
 * window of sdpa.h; query i sits at position i + len_k - len_q). A bound
 * is compared with the distance from pos, never added to pos: bounds go up
 * to INT64_MAX, and pos is within the sequence's lengths. */
static void visible_keys(const sdpa_problem_desc_t *p, const ref_seq_t *seq, int64_t i, int64_t *lo,
                         int64_t *hi)
{
    const int64_t pos = i + seq->len_k - seq->len_q;
    int64_t first = 0, last = seq->len_k - 1;
    if (p->mask_kind == SDPA_MASK_CAUSAL_TOP_LEFT && i < last)
        last = i;
    if (p->mask_kind == SDPA_MASK_CAUSAL_BOTTOM_RIGHT && pos < last)
        last = pos;
    if (p->window.enabled) {
        if (p->window.left >= 0 && p->window.left < pos - first)
            first = pos - p->window.left;
        if (p->window.right >= 0 && p->window.right < last - pos)
            last = pos + p->window.right;
    }
    *hi = last < 0 ? 0 : last + 1;
    *lo = first < *hi ? first : *hi;
}

/* s[j] += mask(b, h, i, j) for lo <= j < hi, broadcast dims read at index 0. */
static void add_mask(const ref_exec_t *x, int64_t b, int64_t h, int64_t i, int64_t lo, int64_t hi,
                     double *s)
{
    const sdpa_tensor_desc_t *m = &x->problem->mask;
    int64_t base = ref_offset(m, m->dims[0] == 1 ? 0 : b, m->dims[1] == 1 ? 0 : h,
                              m->dims[2] == 1 ? 0 : i, 0);
    for (int64_t j = lo; j < hi; j++)
        s[j] += sdpa_element_load(x->args->mask, base + j * m->strides[3], m->dtype);
}

/* The ALiBi slope of query head h of sequence b (0 without ALiBi). */
static double alibi_slope(const ref_exec_t *x, int64_t b, int64_t h)
{
    const sdpa_problem_desc_t *p = x->problem;
    if (p->alibi == SDPA_ALIBI_NONE)
        return 0.0;
    const int64_t e = p->alibi == SDPA_ALIBI_PER_HEAD ? h : b * x->shape->q_heads + h;
    return sdpa_element_load(x->args->alibi_slopes, e, SDPA_DTYPE_F32);
}

double ref_sink(const ref_exec_t *x, int64_t h)
{
    if (!x->problem->sinks)
        return -INFINITY;
    return sdpa_element_load(x->args->sinks, h, SDPA_DTYPE_F32);
}

/* Turns the scores s[0..sk) of one query into probabilities, with sink
 * (-inf: none) in the denominator; returns the log-sum-exp. */
static double softmax_row(const ref_exec_t *x, double *s, int64_t sk, double sink)
{
    double max = sink;
    for (int64_t j = 0; j < sk; j++) {
        if (s[j] > max)
            max = s[j];
    }
    if (isnan(sink))
        max = NAN;
    /* A row that sees no key (sdpa.h): its log-sum-exp is -inf in both
     * modes; its probabilities are 0 with inf-as-zero and in backward in
     * either mode (it contributes nothing to the gradients), NaN in an
     * ACCURATE forward (exp(-inf - -inf), as naive softmax gives). */
    if (max == -INFINITY) {
        const int zeros = x->problem->softmax_kind == SDPA_SOFTMAX_INF_AS_ZERO ||
                          x->problem->prop_kind == SDPA_BACKWARD;
        for (int64_t j = 0; j < sk; j++)
            s[j] = zeros ? 0.0 : NAN;
        return -INFINITY;
    }
    /* The sink's share: exp(sink - max), 0 without one, 1 when the sink
     * is the maximum (a row that sees no key: P = 0, lse = sink). */
    double sum = exp(sink - max);
    for (int64_t j = 0; j < sk; j++) {
        s[j] = exp(s[j] - max);
        sum += s[j];
    }
    const double inverse = 1.0 / sum;
    for (int64_t j = 0; j < sk; j++)
        s[j] *= inverse;
    return max + log(sum);
}

int64_t ref_probabilities(const ref_exec_t *x, const ref_seq_t *seq, const double *k_panels,
                          int64_t h, int64_t i0, int rows, const double *q, double *p, double *lse,
                          double *cap_grad)
{
    const sdpa_problem_desc_t *problem = x->problem;
    const int64_t sk = x->shape->k_len, dims = x->shape->head_size;
    const double slope = alibi_slope(x, seq->b, h), cap = x->softcap, sink = ref_sink(x, h);
    int64_t lo[REF_ROWS], hi[REF_ROWS], n = 0;
    for (int r = 0; r < rows; r++) {
        visible_keys(problem, seq, i0 + r, &lo[r], &hi[r]);
        if (hi[r] > n)
            n = hi[r];
    }
    ref_rows_times_keys(q, dims, k_panels, sk, n, p);
    for (int r = 0; r < rows; r++) {
        double *s = p + r * sk, *g = cap_grad ? cap_grad + r * sk : NULL;
        const int64_t i = i0 + r, pos = i + seq->len_k - seq->len_q;
        for (int64_t j = 0; j < sk; j++) {
            if (g != NULL)
                g[j] = 1.0;
            if (j < lo[r] || j >= hi[r]) {
                s[j] = -INFINITY;
                continue;
            }
            double value = s[j] * x->score_scale;
            if (cap > 0.0) {
                const double t = tanh(value / cap);
                value = cap * t;
                if (g != NULL)
                    g[j] = 1.0 - t * t;
            }
            s[j] = value - slope * fabs((double)(pos - j));
        }
        if (problem->mask_kind == SDPA_MASK_BUFFER)
            add_mask(x, seq->b, h, i, lo[r], hi[r], s);
        lse[r] = softmax_row(x, s, sk, sink);
        if (isnan(lse[r]) || isnan(s[0]))
            n = sk; /* a NaN row (Sk >= 1): every key contributes NaN */
    }
    for (int r = rows; r < REF_ROWS; r++)
        memset(p + r * sk, 0, (size_t)sk * sizeof(double));
    return n;
}

double ref_dropout_row(const ref_exec_t *x, int64_t b, int64_t h, int64_t i, uint8_t *keep)
{
    const sdpa_shape_t *s = x->shape;
    if (!x->dropout) {
        memset(keep, 1, (size_t)s->k_len);
        return 1.0;
    }
    const uint64_t n0 = (uint64_t)(((b * s->q_heads + h) * s->q_len + i) * s->k_len);
    sdpa_dropout_keep_run(x->dropout_seed, x->dropout_offset, n0, s->k_len, x->dropout_p, keep);
    return 1.0 / (1.0 - (double)x->dropout_p);
}
