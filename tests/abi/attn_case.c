/* attn_case.c - attention problems with host buffers filled from a seed (the cases the ABI tests run). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn_case.h"
#include "dense_problem.h"

void problem_init(sdpa_problem_desc_t *d, sdpa_prop_kind_t prop, int64_t B, int64_t Hq, int64_t Hkv,
                  int64_t Sq, int64_t Sk, int64_t D, sdpa_dtype_t qdt, sdpa_dtype_t kvdt)
{
    test_dense_problem(d, prop, B, Hq, Hkv, Sq, Sk, D, qdt, kvdt);
    if (prop == SDPA_BACKWARD) {
        d->diff_dst = d->dst;
        d->diff_q = d->q;
        d->diff_k = dense_tensor(qdt, B, Hkv, Sk, D);
        d->diff_v = d->diff_k;
    }
}

/* A buffer of bytes bytes filled with fill, placed by c->placement: its
 * first element lies skew_bytes + skew_elements * unit bytes after the
 * start of the allocation (which c->buffers keeps, for case_free). */
static void *case_buffer(attn_case_t *c, size_t bytes, int fill, size_t unit)
{
    if (c->buffer_count >= ATTN_CASE_MAX_BUFFERS)
        return NULL;
    if (bytes == 0)
        bytes = 1;
    const size_t skew = c->placement.skew_bytes + (size_t)c->placement.skew_elements * unit;
    unsigned char *p = c->allocator.alloc(skew + bytes, c->allocator.user);
    if (p == NULL)
        return NULL;
    memset(p, 0xa5, skew);
    memset(p + skew, fill, bytes);
    c->buffers[c->buffer_count] = p;
    c->buffer_bytes[c->buffer_count] = skew + bytes;
    c->buffer_count++;
    return p + skew;
}

/* Bytes of one element of dtype for placement (4-bit types: a byte). */
static size_t element_bytes(sdpa_dtype_t dtype)
{
    return (size_t)(dtype_bits(dtype) + 7) / 8;
}

static void *default_alloc(size_t bytes, void *user)
{
    (void)user;
    return malloc(bytes);
}

static void default_release(void *pointer, void *user)
{
    (void)user;
    free(pointer);
}

test_allocator_t test_allocator_or_malloc(const test_allocator_t *allocator)
{
    return allocator ? *allocator : (test_allocator_t){default_alloc, default_release, NULL};
}

/* Fills a K/V tensor with values its dtype holds (small integers when
 * quantized). */
static double kv_value(test_rng_t *rng, sdpa_dtype_t dtype)
{
    switch (dtype) {
    case SDPA_DTYPE_S8:
        return (double)rng_int(rng, -16, 16);
    case SDPA_DTYPE_U8:
        return (double)rng_int(rng, 100, 156);
    case SDPA_DTYPE_S4:
        return (double)rng_int(rng, -8, 7);
    case SDPA_DTYPE_U4:
        return (double)rng_int(rng, 0, 15);
    case SDPA_DTYPE_F8_E4M3:
    case SDPA_DTYPE_F8_E5M2:
        return rng_fp8(rng, dtype);
    default:
        return rng_exact(rng);
    }
}

static double zero_point_value(test_rng_t *rng, sdpa_dtype_t dtype)
{
    switch (dtype) {
    case SDPA_DTYPE_S8:
        return (double)rng_int(rng, -4, 4);
    case SDPA_DTYPE_U8:
        return (double)rng_int(rng, 120, 136);
    case SDPA_DTYPE_S4:
        return (double)rng_int(rng, -3, 3);
    case SDPA_DTYPE_U4:
        return (double)rng_int(rng, 5, 10);
    default:
        return (double)rng_int(rng, -100, 100); /* s32 */
    }
}

static void fill_tensor(const sdpa_tensor_desc_t *t, void *data, test_rng_t *rng, int kind)
{
    for (int64_t a = 0; a < t->dims[0]; a++)
        for (int64_t b = 0; b < t->dims[1]; b++)
            for (int64_t i = 0; i < t->dims[2]; i++)
                for (int64_t j = 0; j < t->dims[3]; j++) {
                    double value = kind == 'k' ? kv_value(rng, t->dtype) : rng_exact(rng);
                    if (kind == 'm' && rng_int(rng, 0, 9) == 0)
                        value = -INFINITY;
                    tensor_set(t, data, a, b, i, j, value);
                }
}

static int alloc_quant(attn_case_t *c, const sdpa_quant_desc_t *q, const sdpa_tensor_desc_t *t,
                       const void **scales, const void **zero_points, test_rng_t *rng)
{
    if (q->scales == SDPA_QUANT_NONE && q->zero_points == SDPA_QUANT_NONE)
        return 0;
    const int64_t per_group = t->dims[0] * t->dims[1] * t->dims[2] *
                              (q->group_size > 0 ? t->dims[3] / q->group_size : 1);
    /* FP8 values are at most 2 here: scales up to 2 keep the scores small. */
    const int64_t scale_max = t->dtype == SDPA_DTYPE_F8_E4M3 || t->dtype == SDPA_DTYPE_F8_E5M2
                                      ? 512
                                      : 32;
    if (q->scales != SDPA_QUANT_NONE) {
        int64_t n = q->scales == SDPA_QUANT_PER_GROUP  ? per_group
                    : q->scales == SDPA_QUANT_PER_HEAD ? t->dims[1]
                                                       : 1;
        sdpa_tensor_desc_t s = dense_tensor(q->scales_dtype, 1, 1, 1, n);
        void *p = case_buffer(c, tensor_bytes(&s), 0, element_bytes(q->scales_dtype));
        if (p == NULL)
            return -1;
        for (int64_t e = 0; e < n; e++)
            elem_set(p, e, q->scales_dtype, (double)rng_int(rng, 1, scale_max) / 256.0);
        *scales = p;
    }
    if (q->zero_points != SDPA_QUANT_NONE) {
        int64_t n = q->zero_points == SDPA_QUANT_PER_GROUP  ? per_group
                    : q->zero_points == SDPA_QUANT_PER_HEAD ? t->dims[1]
                                                            : 1;
        sdpa_tensor_desc_t z = dense_tensor(q->zero_points_dtype, 1, 1, 1, n);
        void *p = case_buffer(c, tensor_bytes(&z), 0, element_bytes(q->zero_points_dtype));
        if (p == NULL)
            return -1;
        for (int64_t e = 0; e < n; e++)
            elem_set(p, e, q->zero_points_dtype, zero_point_value(rng, q->zero_points_dtype));
        *zero_points = p;
    }
    return 0;
}

int case_alloc(attn_case_t *c, uint64_t seed, const test_allocator_t *allocator)
{
    return case_alloc_at(c, seed, allocator, NULL);
}

int case_alloc_at(attn_case_t *c, uint64_t seed, const test_allocator_t *allocator,
                  const case_placement_t *placement)
{
    const sdpa_problem_desc_t *d = &c->desc;
    test_rng_t rng = {seed * 2654435761u + 88172645463325252ull};
    c->buffer_count = 0;
    c->placement = placement ? *placement : (case_placement_t){0, 0};
    c->allocator = test_allocator_or_malloc(allocator);
    sdpa_exec_args_t *a = &c->args;
    memset(a, 0, sizeof(*a));
    a->struct_size = sizeof(*a);
    a->struct_version = SDPA_EXEC_ARGS_VERSION;

    void *q = case_buffer(c, tensor_bytes(&d->q), 0, element_bytes(d->q.dtype));
    void *k = case_buffer(c, tensor_bytes(&d->k), 0, element_bytes(d->k.dtype));
    void *v = case_buffer(c, tensor_bytes(&d->v), 0, element_bytes(d->v.dtype));
    void *dst = case_buffer(c, tensor_bytes(&d->dst), 0xff, element_bytes(d->dst.dtype));
    if (!q || !k || !v || !dst)
        return -1;
    fill_tensor(&d->q, q, &rng, 'q');
    fill_tensor(&d->k, k, &rng, 'k');
    fill_tensor(&d->v, v, &rng, 'k');
    a->q = q;
    a->k = k;
    a->v = v;
    a->dst = dst;
    const int64_t B = d->q.dims[0], Hq = d->q.dims[1], Sq = d->q.dims[2], Sk = d->k.dims[2];

    if (d->mask_kind == SDPA_MASK_BUFFER) {
        void *m = case_buffer(c, tensor_bytes(&d->mask), 0, element_bytes(d->mask.dtype));
        if (m == NULL)
            return -1;
        fill_tensor(&d->mask, m, &rng, 'm');
        a->mask = m;
    }
    if (d->prop_kind != SDPA_FORWARD_INFERENCE) {
        a->workspace = case_buffer(c, (size_t)(B * Hq * Sq) * sizeof(float), 0xff, sizeof(float));
        if (a->workspace == NULL)
            return -1;
    }
    a->scale = 0.25f;
    if (d->scale_kind == SDPA_SCALE_DEVICE) {
        void *s = case_buffer(c, 4, 0, element_bytes(d->scale_dtype));
        if (s == NULL)
            return -1;
        elem_set(s, 0, d->scale_dtype, d->invert_scale ? 4.0 : 0.25);
        a->scale_ptr = s;
    }
    if (alloc_quant(c, &d->k_quant, &d->k, &a->k_scales, &a->k_zero_points, &rng) ||
        alloc_quant(c, &d->v_quant, &d->v, &a->v_scales, &a->v_zero_points, &rng))
        return -1;
    if (d->dropout.enabled) {
        a->dropout_p = 0.25f;
        a->dropout_seed = 0x0123456789abcdefLL;
        a->dropout_offset = d->dropout.with_offset ? 1000003 : 0;
        if (!d->dropout.host_scalars) {
            float *p = case_buffer(c, sizeof(float), 0, sizeof(float));
            int64_t *s = case_buffer(c, sizeof(int64_t), 0, sizeof(int64_t));
            int64_t *o = case_buffer(c, sizeof(int64_t), 0, sizeof(int64_t));
            if (!p || !s || !o)
                return -1;
            *p = a->dropout_p;
            *s = a->dropout_seed;
            *o = a->dropout_offset;
            a->dropout_p_ptr = p;
            a->dropout_seed_ptr = s;
            a->dropout_offset_ptr = o;
        }
        if (d->dropout.with_mask_output) {
            a->dropout_mask = case_buffer(c, (size_t)(B * Hq * Sq * Sk), 0xff, 1);
            if (a->dropout_mask == NULL)
                return -1;
        }
    }
    if (d->prop_kind == SDPA_BACKWARD) {
        void *dd = case_buffer(c, tensor_bytes(&d->diff_dst), 0, element_bytes(d->diff_dst.dtype));
        if (dd == NULL)
            return -1;
        fill_tensor(&d->diff_dst, dd, &rng, 'q');
        a->diff_dst = dd;
        a->diff_q = case_buffer(c, tensor_bytes(&d->diff_q), 0xff, element_bytes(d->diff_q.dtype));
        a->diff_k = case_buffer(c, tensor_bytes(&d->diff_k), 0xff, element_bytes(d->diff_k.dtype));
        a->diff_v = case_buffer(c, tensor_bytes(&d->diff_v), 0xff, element_bytes(d->diff_v.dtype));
        if (!a->diff_q || !a->diff_k || !a->diff_v)
            return -1;
        if (d->ds.dtype != SDPA_DTYPE_UNDEF) {
            a->ds = case_buffer(c, tensor_bytes(&d->ds), 0xff, element_bytes(d->ds.dtype));
            if (a->ds == NULL)
                return -1;
        }
    }
    return 0;
}

void case_free(attn_case_t *c)
{
    for (int n = c->buffer_count - 1; n >= 0; n--)
        c->allocator.release(c->buffers[n], c->allocator.user);
    c->buffer_count = 0;
}
