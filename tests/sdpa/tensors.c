/* tensors.c - strided test tensors, random fills and tolerant comparison. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "element.h"
#include "problem.h"
#include "tensors.h"

static const int order_dims[][4] = {
        [ORDER_BHSD] = {0, 1, 2, 3},
        [ORDER_BSHD] = {0, 2, 1, 3},
        [ORDER_BHDS] = {0, 1, 3, 2},
        [ORDER_HBSD] = {1, 0, 2, 3},
};

void tensor_layout(sdpa_tensor_desc_t *desc, sdpa_dtype_t dtype, const int64_t dims[4],
                   tensor_order_t order, int64_t pad)
{
    memset(desc, 0, sizeof(*desc));
    desc->dtype = dtype;
    memcpy(desc->dims, dims, sizeof(desc->dims));
    if (sdpa_dtype_bits(dtype) == 4 && pad % 2)
        pad++;
    int64_t stride = 1;
    for (int i = 3; i >= 0; i--) {
        int dim = order_dims[order][i];
        desc->strides[dim] = stride;
        int64_t extent = dims[dim] + (i == 3 ? pad : 0);
        if (sdpa_dtype_bits(dtype) == 4 && i == 3 && extent % 2)
            extent++; /* 4-bit: every stride but the innermost even */
        stride *= extent;
    }
}

int64_t tensor_span(const sdpa_tensor_desc_t *desc)
{
    int64_t span = 1;
    for (int i = 0; i < 4; i++)
        span += (desc->dims[i] - 1) * desc->strides[i];
    return span;
}

void tensor_alloc(test_env_t *env, test_tensor_t *t, const sdpa_tensor_desc_t *desc)
{
    t->desc = *desc;
    int64_t bits = sdpa_dtype_bits(desc->dtype);
    t->bytes = (size_t)((tensor_span(desc) * bits + 7) / 8);
    t->data = test_alloc(env, t->bytes);
    memset(t->data, 0xff, t->bytes);
}

void tensor_alloc_sparse(test_env_t *env, test_tensor_t *t, const sdpa_tensor_desc_t *desc)
{
    t->desc = *desc;
    int64_t bits = sdpa_dtype_bits(desc->dtype);
    t->bytes = (size_t)((tensor_span(desc) * bits + 7) / 8);
    t->data = test_alloc_untouched(env, t->bytes);
}

void tensor_free(test_env_t *env, test_tensor_t *t)
{
    test_free(env, t->data);
    t->data = NULL;
}

/* Every index i (int64_t[4]) of tensor d, the last dimension fastest. */
#define FOR_EACH_INDEX(d, i)                                                                       \
    for (i[0] = 0; i[0] < (d)->dims[0]; i[0]++)                                                    \
        for (i[1] = 0; i[1] < (d)->dims[1]; i[1]++)                                                \
            for (i[2] = 0; i[2] < (d)->dims[2]; i[2]++)                                            \
                for (i[3] = 0; i[3] < (d)->dims[3]; i[3]++)

static int64_t element_index(const sdpa_tensor_desc_t *d, const int64_t i[4])
{
    return i[0] * d->strides[0] + i[1] * d->strides[1] + i[2] * d->strides[2] +
           i[3] * d->strides[3];
}

/* Integer dtypes: write the raw value (sdpa_element_store handles floats). */
static void store_integer(void *base, int64_t idx, sdpa_dtype_t dtype, int64_t value)
{
    switch (dtype) {
    case SDPA_DTYPE_S8:
        ((int8_t *)base)[idx] = (int8_t)value;
        break;
    case SDPA_DTYPE_U8:
        ((uint8_t *)base)[idx] = (uint8_t)value;
        break;
    case SDPA_DTYPE_S32:
        ((int32_t *)base)[idx] = (int32_t)value;
        break;
    case SDPA_DTYPE_S4:
    case SDPA_DTYPE_U4: {
        uint8_t *byte = (uint8_t *)base + (idx >> 1);
        uint8_t nibble = (uint8_t)(value & 0xf);
        *byte = (idx & 1) ? (uint8_t)((*byte & 0x0f) | (nibble << 4))
                          : (uint8_t)((*byte & 0xf0) | nibble);
        break;
    }
    default:
        break;
    }
}

void tensor_fill_uniform(test_tensor_t *t, test_rng_t *rng, double lo, double hi)
{
    const sdpa_tensor_desc_t *d = &t->desc;
    int is_float = sdpa_dtype_is_float(d->dtype);
    int64_t i[4];
    FOR_EACH_INDEX (d, i) {
        int64_t idx = element_index(d, i);
        if (is_float)
            sdpa_element_store(t->data, idx, d->dtype, rng_uniform(rng, lo, hi));
        else
            store_integer(t->data, idx, d->dtype, rng_int(rng, (int64_t)lo, (int64_t)hi));
    }
}

double ulp_of(sdpa_dtype_t dtype, double magnitude)
{
    int mantissa_bits = dtype == SDPA_DTYPE_F16 ? 10 : dtype == SDPA_DTYPE_BF16 ? 7 : 23;
    int min_exponent = dtype == SDPA_DTYPE_F16 ? -14 : -126;
    int exponent = magnitude > 0 ? ilogb(magnitude) : min_exponent;
    if (exponent < min_exponent)
        exponent = min_exponent;
    return ldexp(1.0, exponent - mantissa_bits);
}

void tensor_compare(const sdpa_tensor_desc_t *d, const void *got, const void *want, double abs_tol,
                    double ulps, compare_result_t *out)
{
    memset(out, 0, sizeof(*out));
    int64_t i[4];
    FOR_EACH_INDEX (d, i) {
        int64_t idx = element_index(d, i);
        double g = sdpa_element_load(got, idx, d->dtype);
        double w = sdpa_element_load(want, idx, d->dtype);
        out->checked++;
        double tol = abs_tol + ulps * ulp_of(d->dtype, fabs(w));
        double err, ratio;
        if (isnan(g) || isnan(w)) {
            err = (isnan(g) && isnan(w)) ? 0 : INFINITY;
            ratio = err;
        } else if (isinf(w) || isinf(g)) {
            err = (g == w) ? 0 : INFINITY;
            ratio = err;
        } else {
            err = fabs(g - w);
            ratio = err / tol;
        }
        if (ratio > 1)
            out->bad++;
        if (err > out->max_abs_err)
            out->max_abs_err = err;
        if (ratio > out->worst_ratio || out->checked == 1) {
            out->worst_ratio = ratio;
            memcpy(out->worst_idx, i, sizeof(i));
            out->worst_got = g;
            out->worst_want = w;
            out->worst_tol = tol;
        }
    }
}

int tensor_padding_intact(const test_tensor_t *t)
{
    const sdpa_tensor_desc_t *d = &t->desc;
    int bits = sdpa_dtype_bits(d->dtype);
    unsigned char *seen = calloc(t->bytes, 1);
    ck_assert_ptr_nonnull(seen);
    int64_t i[4];
    FOR_EACH_INDEX (d, i) {
        int64_t idx = element_index(d, i);
        int64_t first = idx * bits / 8, last = ((idx + 1) * bits - 1) / 8;
        for (int64_t b = first; b <= last; b++)
            seen[b] = 1;
    }
    int intact = 1;
    for (size_t b = 0; b < t->bytes && intact; b++)
        if (!seen[b] && ((const unsigned char *)t->data)[b] != 0xff)
            intact = 0;
    free(seen);
    return intact;
}

void attention_problems(const test_tensor_t *const t[ROLE_COUNT], sdpa_mask_kind_t mask,
                        sdpa_problem_desc_t *fwd, sdpa_problem_desc_t *bwd)
{
    memset(fwd, 0, sizeof(*fwd));
    fwd->struct_size = sizeof(*fwd);
    fwd->struct_version = SDPA_PROBLEM_DESC_VERSION;
    fwd->prop_kind = SDPA_FORWARD_TRAINING;
    fwd->q = t[ROLE_Q]->desc;
    fwd->k = t[ROLE_K]->desc;
    fwd->v = t[ROLE_V]->desc;
    fwd->dst = t[ROLE_DST]->desc;
    fwd->mask_kind = mask;
    fwd->scale_kind = SDPA_SCALE_HOST;
    *bwd = *fwd;
    bwd->prop_kind = SDPA_BACKWARD;
    bwd->diff_dst = t[ROLE_DIFF_DST]->desc;
    bwd->diff_q = t[ROLE_DIFF_Q]->desc;
    bwd->diff_k = t[ROLE_DIFF_K]->desc;
    bwd->diff_v = t[ROLE_DIFF_V]->desc;
}

/* The data of t, or NULL for a role not used. */
static void *data_of(const test_tensor_t *t)
{
    return t ? t->data : NULL;
}

void attention_exec_args(const test_tensor_t *const t[ROLE_COUNT], void *workspace, float scale,
                         sdpa_exec_args_t *a)
{
    memset(a, 0, sizeof(*a));
    a->struct_size = sizeof(*a);
    a->struct_version = SDPA_EXEC_ARGS_VERSION;
    a->q = data_of(t[ROLE_Q]);
    a->k = data_of(t[ROLE_K]);
    a->v = data_of(t[ROLE_V]);
    a->dst = data_of(t[ROLE_DST]);
    a->workspace = workspace;
    a->scale = scale;
    a->diff_dst = data_of(t[ROLE_DIFF_DST]);
    a->diff_q = data_of(t[ROLE_DIFF_Q]);
    a->diff_k = data_of(t[ROLE_DIFF_K]);
    a->diff_v = data_of(t[ROLE_DIFF_V]);
}
