/* ref_attention.c - scores, softmax and dropout of a block of queries,
 * shared by the forward and backward passes. */
#include <math.h>
#include <string.h>

#include "philox.h"
#include "ref.h"

/* Keys 0..visible-1 are not causally masked for query i. */
static int64_t visible_keys(const sdpa_problem_desc_t *p, const sdpa_shape_t *s, int64_t i)
{
    int64_t last;
    switch (p->mask_kind) {
    case SDPA_MASK_CAUSAL_TOP_LEFT:
        last = i;
        break;
    case SDPA_MASK_CAUSAL_BOTTOM_RIGHT:
        last = i + (s->k_len - s->q_len);
        break;
    default:
        return s->k_len;
    }
    if (last < 0)
        return 0;
    return last + 1 < s->k_len ? last + 1 : s->k_len;
}

/* s[j] += mask(b, h, i, j) for j < visible, broadcast dims read at index 0. */
static void add_mask(const ref_exec_t *x, int64_t b, int64_t h, int64_t i, int64_t visible,
                     double *s)
{
    const sdpa_tensor_desc_t *m = &x->problem->mask;
    int64_t base = ref_offset(m, m->dims[0] == 1 ? 0 : b, m->dims[1] == 1 ? 0 : h,
                              m->dims[2] == 1 ? 0 : i, 0);
    for (int64_t j = 0; j < visible; j++)
        s[j] += sdpa_element_load(x->args->mask, base + j * m->strides[3], m->dtype);
}

/* Turns the scores s[0..Sk) of one query into probabilities; returns the
 * log-sum-exp. */
static double softmax_row(const ref_exec_t *x, double *s)
{
    const int64_t sk = x->shape->k_len;
    double max = -INFINITY;
    for (int64_t j = 0; j < sk; j++) {
        if (s[j] > max)
            max = s[j];
    }
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
    double sum = 0.0;
    for (int64_t j = 0; j < sk; j++) {
        s[j] = exp(s[j] - max);
        sum += s[j];
    }
    const double inverse = 1.0 / sum;
    for (int64_t j = 0; j < sk; j++)
        s[j] *= inverse;
    return max + log(sum);
}

int64_t ref_probabilities(const ref_exec_t *x, const double *k_panels, int64_t b, int64_t h,
                          int64_t i0, int rows, const double *q, double *p, double *lse)
{
    const sdpa_problem_desc_t *problem = x->problem;
    const int64_t sk = x->shape->k_len, dims = x->shape->head_size;
    int64_t visible[REF_ROWS], n = 0;
    for (int r = 0; r < rows; r++) {
        visible[r] = visible_keys(problem, x->shape, i0 + r);
        if (visible[r] > n)
            n = visible[r];
    }
    ref_rows_times_keys(q, dims, k_panels, sk, n, p);
    for (int r = 0; r < rows; r++) {
        double *s = p + r * sk;
        for (int64_t j = 0; j < visible[r]; j++)
            s[j] *= x->score_scale;
        for (int64_t j = visible[r]; j < sk; j++)
            s[j] = -INFINITY;
        if (problem->mask_kind == SDPA_MASK_BUFFER)
            add_mask(x, b, h, i0 + r, visible[r], s);
        lse[r] = softmax_row(x, s);
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
