/* merge_case.c - merges of attention states with their buffers, the
 * oracle and the comparison (merge_case.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge_case.h"

static const sdpa_tensor_desc_t *lse_desc(const sdpa_merge_desc_t *d)
{
    return &d->states_lse;
}

/* O tensor and LSE tensor of [B, H, S, D] in layout. */
static void layout_tensors(sdpa_tensor_desc_t *o, sdpa_tensor_desc_t *lse, sdpa_dtype_t dtype,
                           int64_t B, int64_t H, int64_t S, int64_t D, merge_layout_t layout)
{
    if (layout == MERGE_DENSE) {
        *o = dense_tensor(dtype, B, H, S, D);
        *lse = dense_tensor(SDPA_DTYPE_F32, B, H, S, 1);
        return;
    }
    const int64_t row = D + 3; /* padding elements after every row */
    *o = (sdpa_tensor_desc_t){dtype, {B, H, S, D}, {H * row, row, B * H * row, 1}};
    *lse = (sdpa_tensor_desc_t){SDPA_DTYPE_F32, {B, H, S, 1}, {H, 1, B * H, 1}};
}

void merge_desc_init(sdpa_merge_desc_t *d, uint32_t n, int64_t B, int64_t H, int64_t S, int64_t D,
                     sdpa_dtype_t state_dt, sdpa_dtype_t dst_dt, int with_lse,
                     sdpa_softmax_kind_t softmax, merge_layout_t layout)
{
    memset(d, 0, sizeof(*d));
    d->struct_size = sizeof(*d);
    d->struct_version = SDPA_MERGE_DESC_VERSION;
    d->num_states = n;
    d->softmax_kind = softmax;
    layout_tensors(&d->states, &d->states_lse, state_dt, B, H, S, D, layout);
    sdpa_tensor_desc_t dst_lse;
    layout_tensors(&d->dst, &dst_lse, dst_dt, B, H, S, D, layout);
    if (with_lse)
        d->dst_lse = dst_lse;
}

void merge_variant_init(sdpa_merge_desc_t *d, int variant)
{
    static const struct {
        uint32_t n;
        int64_t B, H, S, D;
        sdpa_dtype_t state_dt, dst_dt;
        int with_lse;
        sdpa_softmax_kind_t softmax;
        merge_layout_t layout;
    } v[MERGE_VARIANTS] = {
            {1, 2, 3, 5, 16, SDPA_DTYPE_F32, SDPA_DTYPE_F32, 1, SDPA_SOFTMAX_ACCURATE, MERGE_DENSE},
            {2, 1, 4, 9, 64, SDPA_DTYPE_F16, SDPA_DTYPE_F16, 1, SDPA_SOFTMAX_INF_AS_ZERO,
             MERGE_DENSE},
            {3, 2, 2, 7, 32, SDPA_DTYPE_BF16, SDPA_DTYPE_BF16, 0, SDPA_SOFTMAX_ACCURATE,
             MERGE_SEQ_MAJOR},
            {4, 1, 3, 11, 8, SDPA_DTYPE_F16, SDPA_DTYPE_F32, 1, SDPA_SOFTMAX_ACCURATE,
             MERGE_SEQ_MAJOR},
            {5, 2, 1, 13, 128, SDPA_DTYPE_F32, SDPA_DTYPE_BF16, 1, SDPA_SOFTMAX_INF_AS_ZERO,
             MERGE_DENSE},
            {6, 1, 2, 6, 3, SDPA_DTYPE_BF16, SDPA_DTYPE_F32, 1, SDPA_SOFTMAX_INF_AS_ZERO,
             MERGE_SEQ_MAJOR},
            {7, 3, 2, 4, 80, SDPA_DTYPE_F32, SDPA_DTYPE_F16, 0, SDPA_SOFTMAX_ACCURATE, MERGE_DENSE},
            {8, 2, 2, 8, 16, SDPA_DTYPE_F16, SDPA_DTYPE_F16, 1, SDPA_SOFTMAX_ACCURATE,
             MERGE_SEQ_MAJOR},
            {SDPA_MERGE_MAX_STATES, 1, 2, 9, 40, SDPA_DTYPE_F32, SDPA_DTYPE_F32, 1,
             SDPA_SOFTMAX_INF_AS_ZERO, MERGE_DENSE},
    };
    merge_desc_init(d, v[variant].n, v[variant].B, v[variant].H, v[variant].S, v[variant].D,
                    v[variant].state_dt, v[variant].dst_dt, v[variant].with_lse, v[variant].softmax,
                    v[variant].layout);
}

int merge_row_all_empty(int64_t row)
{
    return row % 7 == 3;
}

int merge_row_poisoned(int64_t row)
{
    return row % 11 == 5;
}

/* LSE of state s in row by pattern. */
static float pattern_lse(test_rng_t *rng, int64_t row, uint32_t s, uint32_t n,
                         merge_lse_pattern_t pattern)
{
    const float value = (float)rng_uniform(rng, -6.0, 6.0); /* drawn for every entry */
    if (pattern == MERGE_LSE_POISON && merge_row_poisoned(row) && s == row % n)
        return (row / 11) % 2 ? INFINITY : NAN;
    if (merge_row_all_empty(row) || (row + 3 * (int64_t)s) % 5 == 1)
        return -INFINITY; /* this state saw no key */
    if (row % 13 == 6)
        return 2.0f - 60.0f * (float)s; /* weights e^-60 apart */
    return value;
}

static void *merge_buffer(merge_case_t *c, size_t bytes, int fill)
{
    void *p = c->allocator.alloc(bytes ? bytes : 1, c->allocator.user);
    if (p == NULL)
        return NULL;
    memset(p, fill, bytes);
    c->buffers[c->buffer_count++] = p;
    return p;
}

int merge_case_alloc(merge_case_t *c, uint64_t seed, const test_allocator_t *allocator,
                     merge_lse_pattern_t pattern)
{
    const sdpa_merge_desc_t *d = &c->desc;
    const sdpa_tensor_desc_t *o = &d->states, *l = lse_desc(d);
    test_rng_t rng = {seed * 6364136223846793005ull + 1442695040888963407ull};
    c->buffer_count = 0;
    c->allocator = test_allocator_or_malloc(allocator);
    const int64_t B = o->dims[0], H = o->dims[1], S = o->dims[2], D = o->dims[3];
    for (uint32_t s = 0; s < d->num_states; s++) {
        void *state = merge_buffer(c, tensor_bytes(o), 0xff);
        float *lse = merge_buffer(c, tensor_bytes(l), 0xff);
        if (state == NULL || lse == NULL)
            return -1;
        c->states[s] = state;
        c->states_lse[s] = lse;
    }
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t i = 0; i < S; i++) {
                const int64_t row = (b * H + h) * S + i;
                for (uint32_t s = 0; s < d->num_states; s++) {
                    float value = pattern_lse(&rng, row, s, d->num_states, pattern);
                    tensor_set(l, (void *)c->states_lse[s], b, h, i, 0, value);
                    /* The O of a state that saw no key stays NaN (0xff bytes),
                     * as an ACCURATE forward leaves it. */
                    for (int64_t e = 0; e < D && value != -INFINITY; e++)
                        tensor_set(o, (void *)c->states[s], b, h, i, e, rng_exact(&rng));
                }
            }
    void *dst = merge_buffer(c, tensor_bytes(&d->dst), 0xff);
    if (dst == NULL)
        return -1;
    float *dst_lse = NULL;
    if (d->dst_lse.dtype != SDPA_DTYPE_UNDEF &&
        (dst_lse = merge_buffer(c, tensor_bytes(&d->dst_lse), 0xff)) == NULL)
        return -1;
    sdpa_merge_args_t *a = &c->args;
    memset(a, 0, sizeof(*a));
    a->struct_size = sizeof(*a);
    a->struct_version = SDPA_MERGE_ARGS_VERSION;
    a->states = c->states;
    a->states_lse = c->states_lse;
    a->dst = dst;
    a->dst_lse = dst_lse;
    return 0;
}

void merge_case_free(merge_case_t *c)
{
    for (int i = 0; i < c->buffer_count; i++)
        c->allocator.release(c->buffers[i], c->allocator.user);
    c->buffer_count = 0;
}

void merge_oracle(const merge_case_t *c, double *o, double *lse)
{
    const sdpa_merge_desc_t *d = &c->desc;
    const sdpa_tensor_desc_t *so = &d->states, *sl = lse_desc(d);
    const int64_t B = so->dims[0], H = so->dims[1], S = so->dims[2], D = so->dims[3];
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t i = 0; i < S; i++) {
                const int64_t row = (b * H + h) * S + i;
                long double l[SDPA_MERGE_MAX_STATES];
                int poisoned = 0, seen = 0;
                for (uint32_t s = 0; s < d->num_states; s++) {
                    l[s] = tensor_get(sl, c->states_lse[s], b, h, i, 0);
                    poisoned |= isnan((double)l[s]) || l[s] == INFINITY;
                    seen |= l[s] != -INFINITY;
                }
                /* log(sum_s e^l_s), the largest term factored out */
                long double total = -INFINITY;
                for (uint32_t s = 0; s < d->num_states; s++)
                    if (l[s] > total)
                        total = l[s];
                if (!poisoned && seen) {
                    long double rest = 0;
                    for (uint32_t s = 0; s < d->num_states; s++)
                        rest += expl(l[s] - total);
                    total += logl(rest);
                }
                if (lse)
                    lse[row] = poisoned ? NAN : seen ? (double)total : -INFINITY;
                for (int64_t e = 0; o && e < D; e++) {
                    long double value = 0;
                    if (poisoned)
                        value = NAN;
                    else if (!seen)
                        value = d->softmax_kind == SDPA_SOFTMAX_INF_AS_ZERO ? 0 : NAN;
                    else
                        for (uint32_t s = 0; s < d->num_states; s++)
                            if (l[s] != -INFINITY)
                                value += expl(l[s] - total) *
                                         tensor_get(so, c->states[s], b, h, i, e);
                    o[row * D + e] = (double)value;
                }
            }
}

/* The largest |O_s| of element (b, h, i, e) over the states that count. */
static double largest_term(const merge_case_t *c, int64_t b, int64_t h, int64_t i, int64_t e)
{
    const sdpa_merge_desc_t *d = &c->desc;
    double largest = 0;
    for (uint32_t s = 0; s < d->num_states; s++) {
        if (tensor_get(lse_desc(d), c->states_lse[s], b, h, i, 0) == -INFINITY)
            continue;
        double v = fabs(tensor_get(&d->states, c->states[s], b, h, i, e));
        if (v > largest)
            largest = v;
    }
    return largest;
}

/* Compares one output element; prints the first mismatch (*reported). */
static int check_one(const char *what, int64_t b, int64_t h, int64_t i, int64_t e, double got,
                     double want, double tolerance, int *reported)
{
    if (close_enough(got, want, 0.0, tolerance))
        return 1;
    if (!*reported)
        fprintf(stderr, "merge %s[%lld,%lld,%lld,%lld]: got %.9g, expected %.12g (+- %g)\n", what,
                (long long)b, (long long)h, (long long)i, (long long)e, got, want, tolerance);
    *reported = 1;
    return 0;
}

int merge_expect(const merge_case_t *c, merge_expected_t *e)
{
    const sdpa_merge_desc_t *d = &c->desc;
    const int64_t B = d->dst.dims[0], H = d->dst.dims[1], S = d->dst.dims[2], D = d->dst.dims[3];
    e->o = malloc(sizeof(double) * (size_t)(B * H * S * D));
    e->lse = malloc(sizeof(double) * (size_t)(B * H * S));
    e->largest = malloc(sizeof(double) * (size_t)(B * H * S * D));
    if (e->o == NULL || e->lse == NULL || e->largest == NULL) {
        merge_expected_free(e);
        return -1;
    }
    merge_oracle(c, e->o, e->lse);
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t i = 0; i < S; i++)
                for (int64_t k = 0; k < D; k++)
                    e->largest[((b * H + h) * S + i) * D + k] = largest_term(c, b, h, i, k);
    return 0;
}

void merge_expected_free(merge_expected_t *e)
{
    free(e->o);
    free(e->lse);
    free(e->largest);
    e->o = e->lse = e->largest = NULL;
}

int merge_check(const merge_case_t *c, const merge_expected_t *x, int exact)
{
    const sdpa_merge_desc_t *d = &c->desc;
    const int64_t B = d->dst.dims[0], H = d->dst.dims[1], S = d->dst.dims[2], D = d->dst.dims[3];
    const int with_lse = d->dst_lse.dtype != SDPA_DTYPE_UNDEF;
    const double f32_ulp = ldexp(1.0, -24);
    int ok = 1, reported = 0;
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < H; h++)
            for (int64_t i = 0; i < S; i++) {
                const int64_t row = (b * H + h) * S + i;
                for (int64_t e = 0; e < D; e++) {
                    const double want = x->o[row * D + e];
                    double tolerance = isfinite(want) ? half_ulp(want, d->dst.dtype) + 1e-12 : 0;
                    if (!exact && isfinite(want))
                        tolerance += (d->num_states + 2) * 16 * f32_ulp * x->largest[row * D + e];
                    ok &= check_one("O", b, h, i, e, tensor_get(&d->dst, c->args.dst, b, h, i, e),
                                    want, tolerance, &reported);
                }
                if (!with_lse)
                    continue;
                const double want = x->lse[row];
                double tolerance = 0;
                if (isfinite(want))
                    tolerance = exact ? half_ulp(want, SDPA_DTYPE_F32) + 1e-12
                                      : ldexp(fmax(1.0, fabs(want)), -20);
                ok &= check_one("LSE", b, h, i, 0,
                                tensor_get(&d->dst_lse, c->args.dst_lse, b, h, i, 0), want,
                                tolerance, &reported);
            }
    return ok;
}

int merge_compare(const merge_case_t *c, int exact)
{
    merge_expected_t e;
    if (merge_expect(c, &e) != 0)
        return 0;
    int ok = merge_check(c, &e, exact);
    merge_expected_free(&e);
    return ok;
}

void merge_key_chunk(const attn_case_t *full, int64_t j0, int64_t len, sdpa_problem_desc_t *d,
                     sdpa_exec_args_t *a)
{
    *d = full->desc;
    *a = full->args;
    d->k.dims[2] = d->v.dims[2] = len;
    a->k = (const float *)full->args.k + j0 * d->k.strides[2];
    a->v = (const float *)full->args.v + j0 * d->v.strides[2];
    if (d->mask_kind == SDPA_MASK_BUFFER) {
        d->mask.dims[3] = len;
        a->mask = (const float *)full->args.mask + j0 * d->mask.strides[3];
    }
}
