/* abi_util.c - host tensors, attention cases and the double-precision oracle
 * of the ABI tests. Written independently of plugin/ref: its own decoding,
 * its own dense loops, its own dropout counter layout (only the Philox block
 * function, checked against the Random123 known answers, is shared). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi_util.h"
#include "philox.h"

/* ------------------------------------------------------------------------- */
/* Elements                                                                  */
/* ------------------------------------------------------------------------- */

static int dtype_bits(sdpa_dtype_t dtype)
{
    switch (dtype) {
    case SDPA_DTYPE_F32:
    case SDPA_DTYPE_S32:
        return 32;
    case SDPA_DTYPE_F16:
    case SDPA_DTYPE_BF16:
        return 16;
    case SDPA_DTYPE_S8:
    case SDPA_DTYPE_U8:
        return 8;
    case SDPA_DTYPE_S4:
    case SDPA_DTYPE_U4:
        return 4;
    default:
        return 8;
    }
}

size_t tensor_bytes(const sdpa_tensor_desc_t *t)
{
    int64_t last = 0;
    for (int n = 0; n < 4; n++)
        last += (t->dims[n] - 1) * t->strides[n];
    size_t elements = (size_t)last + 1;
    return (elements * (size_t)dtype_bits(t->dtype) + 7) / 8;
}

sdpa_tensor_desc_t dense_tensor(sdpa_dtype_t dtype, int64_t d0, int64_t d1, int64_t d2, int64_t d3)
{
    sdpa_tensor_desc_t t = {.dtype = dtype, .dims = {d0, d1, d2, d3}};
    t.strides[3] = 1;
    t.strides[2] = d3;
    t.strides[1] = d3 * d2;
    t.strides[0] = d3 * d2 * d1;
    return t;
}

static float float_from_bits(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof(f));
    return f;
}

static uint32_t bits_from_float(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof(bits));
    return bits;
}

static double half_get(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
    if (exponent == 0) {
        double magnitude = mantissa / 16777216.0; /* 2^-24 units */
        return sign ? -magnitude : magnitude;
    }
    if (exponent == 31)
        return float_from_bits(sign | 0x7f800000u | (mantissa << 13));
    return float_from_bits(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

static uint16_t half_set_exact(double value)
{
    float f = (float)value;
    if ((double)f != value && !isnan(value)) {
        fprintf(stderr, "elem_set: %.17g is not exact in f16\n", value);
        abort();
    }
    uint32_t bits = bits_from_float(f);
    uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
    if (isinf(f))
        return sign | 0x7c00u;
    if (f == 0.0f)
        return sign;
    int exponent = (int)((bits >> 23) & 0xff) - 127;
    uint32_t mantissa = bits & 0x7fffffu;
    if (exponent < -14 || exponent > 15 || (mantissa & 0x1fffu) != 0) {
        fprintf(stderr, "elem_set: %.17g is not a normal f16\n", value);
        abort();
    }
    return sign | (uint16_t)((exponent + 15) << 10) | (uint16_t)(mantissa >> 13);
}

double elem_get(const void *data, int64_t idx, sdpa_dtype_t dtype)
{
    const uint8_t *bytes = data;
    switch (dtype) {
    case SDPA_DTYPE_F32:
        return ((const float *)data)[idx];
    case SDPA_DTYPE_F16:
        return half_get(((const uint16_t *)data)[idx]);
    case SDPA_DTYPE_BF16:
        return float_from_bits((uint32_t)((const uint16_t *)data)[idx] << 16);
    case SDPA_DTYPE_S8:
        return ((const int8_t *)data)[idx];
    case SDPA_DTYPE_U8:
        return bytes[idx];
    case SDPA_DTYPE_S32:
        return ((const int32_t *)data)[idx];
    case SDPA_DTYPE_S4:
    case SDPA_DTYPE_U4: {
        int nib = idx % 2 == 0 ? bytes[idx / 2] & 0x0f : bytes[idx / 2] >> 4;
        if (dtype == SDPA_DTYPE_S4 && nib > 7)
            nib -= 16;
        return nib;
    }
    default:
        abort();
    }
}

static void check_integer(double value, double lo, double hi)
{
    if (value != floor(value) || value < lo || value > hi) {
        fprintf(stderr, "elem_set: %.17g is not an integer in %g..%g\n", value, lo, hi);
        abort();
    }
}

void elem_set(void *data, int64_t idx, sdpa_dtype_t dtype, double value)
{
    uint8_t *bytes = data;
    switch (dtype) {
    case SDPA_DTYPE_F32:
        if ((double)(float)value != value && !isnan(value))
            abort();
        ((float *)data)[idx] = (float)value;
        return;
    case SDPA_DTYPE_F16:
        ((uint16_t *)data)[idx] = half_set_exact(value);
        return;
    case SDPA_DTYPE_BF16: {
        uint32_t bits = bits_from_float((float)value);
        if ((bits & 0xffffu) != 0 || (double)(float)value != value)
            abort();
        ((uint16_t *)data)[idx] = (uint16_t)(bits >> 16);
        return;
    }
    case SDPA_DTYPE_S8:
        check_integer(value, -128, 127);
        ((int8_t *)data)[idx] = (int8_t)value;
        return;
    case SDPA_DTYPE_U8:
        check_integer(value, 0, 255);
        bytes[idx] = (uint8_t)value;
        return;
    case SDPA_DTYPE_S32:
        check_integer(value, -2147483648.0, 2147483647.0);
        ((int32_t *)data)[idx] = (int32_t)value;
        return;
    case SDPA_DTYPE_S4:
    case SDPA_DTYPE_U4: {
        if (dtype == SDPA_DTYPE_S4)
            check_integer(value, -8, 7);
        else
            check_integer(value, 0, 15);
        unsigned nib = (unsigned)((int)value & 0xf);
        uint8_t *byte = &bytes[idx / 2];
        if (idx % 2 == 0)
            *byte = (uint8_t)((*byte & 0xf0u) | nib);
        else
            *byte = (uint8_t)((*byte & 0x0fu) | (nib << 4));
        return;
    }
    default:
        abort();
    }
}

static int64_t offset4(const sdpa_tensor_desc_t *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3)
{
    return i0 * t->strides[0] + i1 * t->strides[1] + i2 * t->strides[2] + i3 * t->strides[3];
}

double tensor_get(const sdpa_tensor_desc_t *t, const void *data, int64_t i0, int64_t i1, int64_t i2,
                  int64_t i3)
{
    return elem_get(data, offset4(t, i0, i1, i2, i3), t->dtype);
}

void tensor_set(const sdpa_tensor_desc_t *t, void *data, int64_t i0, int64_t i1, int64_t i2,
                int64_t i3, double value)
{
    elem_set(data, offset4(t, i0, i1, i2, i3), t->dtype, value);
}

double rng_exact(test_rng_t *rng)
{
    return (double)rng_int(rng, -255, 255) / 128.0;
}

/* ------------------------------------------------------------------------- */
/* Cases                                                                     */
/* ------------------------------------------------------------------------- */

void problem_init(sdpa_problem_desc_t *d, sdpa_prop_kind_t prop, int64_t B, int64_t Hq, int64_t Hkv,
                  int64_t Sq, int64_t Sk, int64_t D, sdpa_dtype_t qdt, sdpa_dtype_t kvdt)
{
    memset(d, 0, sizeof(*d));
    d->struct_size = sizeof(*d);
    d->struct_version = SDPA_PROBLEM_DESC_VERSION;
    d->prop_kind = prop;
    d->q = dense_tensor(qdt, B, Hq, Sq, D);
    d->k = dense_tensor(kvdt, B, Hkv, Sk, D);
    d->v = dense_tensor(kvdt, B, Hkv, Sk, D);
    d->dst = dense_tensor(qdt, B, Hq, Sq, D);
    d->scale_kind = SDPA_SCALE_HOST;
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
    if (q->scales != SDPA_QUANT_NONE) {
        int64_t n = q->scales == SDPA_QUANT_PER_GROUP ? per_group : 1;
        sdpa_tensor_desc_t s = dense_tensor(q->scales_dtype, 1, 1, 1, n);
        void *p = case_buffer(c, tensor_bytes(&s), 0, element_bytes(q->scales_dtype));
        if (p == NULL)
            return -1;
        for (int64_t e = 0; e < n; e++)
            elem_set(p, e, q->scales_dtype, (double)rng_int(rng, 1, 32) / 256.0);
        *scales = p;
    }
    if (q->zero_points != SDPA_QUANT_NONE) {
        int64_t n = q->zero_points == SDPA_QUANT_PER_GROUP ? per_group : 1;
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
    if (allocator != NULL)
        c->allocator = *allocator;
    else
        c->allocator = (test_allocator_t){default_alloc, default_release, NULL};
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

/* ------------------------------------------------------------------------- */
/* Oracle                                                                    */
/* ------------------------------------------------------------------------- */

/* Dequantized element of K or V (this file's own indexing). */
static double kv_get(const attn_case_t *c, int which, int64_t b, int64_t h, int64_t j, int64_t d)
{
    const sdpa_problem_desc_t *p = &c->desc;
    const sdpa_tensor_desc_t *t = which == 'k' ? &p->k : &p->v;
    const sdpa_quant_desc_t *qd = which == 'k' ? &p->k_quant : &p->v_quant;
    const void *data = which == 'k' ? c->args.k : c->args.v;
    double x = tensor_get(t, data, b, h, j, d);
    if (qd->scales == SDPA_QUANT_NONE)
        return x;
    int64_t groups = qd->group_size > 0 ? t->dims[3] / qd->group_size : 1;
    int64_t group_index = ((b * t->dims[1] + h) * t->dims[2] + j) * groups +
                          (qd->group_size > 0 ? d / qd->group_size : 0);
    const void *scales = which == 'k' ? c->args.k_scales : c->args.v_scales;
    const void *zps = which == 'k' ? c->args.k_zero_points : c->args.v_zero_points;
    double zp = 0;
    if (qd->zero_points != SDPA_QUANT_NONE)
        zp = elem_get(zps, qd->zero_points == SDPA_QUANT_PER_GROUP ? group_index : 0,
                      qd->zero_points_dtype);
    double s = elem_get(scales, qd->scales == SDPA_QUANT_PER_GROUP ? group_index : 0,
                        qd->scales_dtype);
    return (x - zp) * s;
}

/* Dropout keep decision from the counter layout of sdpa.h. */
static int oracle_keep(uint64_t seed, uint64_t offset, uint64_t n, float p)
{
    uint64_t counter64 = offset + n / 4;
    uint32_t counter[4] = {(uint32_t)(counter64 & 0xffffffffu), (uint32_t)(counter64 >> 32), 0, 0};
    uint32_t key[2] = {(uint32_t)(seed & 0xffffffffu), (uint32_t)(seed >> 32)};
    uint32_t out[4];
    sdpa_philox4x32_10(counter, key, out);
    double uniform = (double)(out[n % 4] >> 8) / 16777216.0;
    return uniform >= (double)p;
}

int oracle_init(oracle_t *o, const attn_case_t *c)
{
    const sdpa_problem_desc_t *p = &c->desc;
    const sdpa_exec_args_t *a = &c->args;
    memset(o, 0, sizeof(*o));
    o->B = p->q.dims[0];
    o->Hq = p->q.dims[1];
    o->Hkv = p->k.dims[1];
    o->Sq = p->q.dims[2];
    o->Sk = p->k.dims[2];
    o->D = p->q.dims[3];
    const int64_t B = o->B, Hq = o->Hq, Hkv = o->Hkv, Sq = o->Sq, Sk = o->Sk, D = o->D;
    o->q = malloc(sizeof(double) * (size_t)(B * Hq * Sq * D));
    o->k = malloc(sizeof(double) * (size_t)(B * Hkv * Sk * D));
    o->v = malloc(sizeof(double) * (size_t)(B * Hkv * Sk * D));
    o->bias = malloc(sizeof(double) * (size_t)(B * Hq * Sq * Sk));
    o->drop = malloc(sizeof(double) * (size_t)(B * Hq * Sq * Sk));
    if (p->prop_kind == SDPA_BACKWARD)
        o->dout = malloc(sizeof(double) * (size_t)(B * Hq * Sq * D));
    if (!o->q || !o->k || !o->v || !o->bias || !o->drop ||
        (p->prop_kind == SDPA_BACKWARD && !o->dout))
        abort();

    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < Hq; h++)
            for (int64_t i = 0; i < Sq; i++)
                for (int64_t d = 0; d < D; d++) {
                    int64_t e = ((b * Hq + h) * Sq + i) * D + d;
                    o->q[e] = tensor_get(&p->q, a->q, b, h, i, d);
                    if (o->dout)
                        o->dout[e] = tensor_get(&p->diff_dst, a->diff_dst, b, h, i, d);
                }
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < Hkv; h++)
            for (int64_t j = 0; j < Sk; j++)
                for (int64_t d = 0; d < D; d++) {
                    int64_t e = ((b * Hkv + h) * Sk + j) * D + d;
                    o->k[e] = kv_get(c, 'k', b, h, j, d);
                    o->v[e] = kv_get(c, 'v', b, h, j, d);
                }

    float drop_p = 0;
    uint64_t seed = 0, offset = 0;
    if (p->dropout.enabled) {
        if (p->dropout.host_scalars) {
            drop_p = a->dropout_p;
            seed = (uint64_t)a->dropout_seed;
            offset = p->dropout.with_offset ? (uint64_t)a->dropout_offset : 0;
        } else {
            drop_p = *(const float *)a->dropout_p_ptr;
            seed = (uint64_t) * (const int64_t *)a->dropout_seed_ptr;
            offset = p->dropout.with_offset ? (uint64_t) * (const int64_t *)a->dropout_offset_ptr
                                            : 0;
        }
    }
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < Hq; h++)
            for (int64_t i = 0; i < Sq; i++)
                for (int64_t j = 0; j < Sk; j++) {
                    int64_t e = ((b * Hq + h) * Sq + i) * Sk + j;
                    double bias = 0;
                    if (p->mask_kind == SDPA_MASK_BUFFER) {
                        const sdpa_tensor_desc_t *m = &p->mask;
                        bias = tensor_get(m, a->mask, m->dims[0] == 1 ? 0 : b,
                                          m->dims[1] == 1 ? 0 : h, m->dims[2] == 1 ? 0 : i, j);
                    } else if (p->mask_kind == SDPA_MASK_CAUSAL_TOP_LEFT && j > i) {
                        bias = -INFINITY;
                    } else if (p->mask_kind == SDPA_MASK_CAUSAL_BOTTOM_RIGHT && j > i + Sk - Sq) {
                        bias = -INFINITY;
                    }
                    o->bias[e] = bias;
                    o->drop[e] = 1.0;
                    if (p->dropout.enabled)
                        o->drop[e] = oracle_keep(seed, offset, (uint64_t)e, drop_p)
                                             ? 1.0 / (1.0 - (double)drop_p)
                                             : 0.0;
                }

    double s = 1.0;
    if (p->scale_kind == SDPA_SCALE_HOST)
        s = a->scale;
    else if (p->scale_kind == SDPA_SCALE_DEVICE)
        s = elem_get(a->scale_ptr, 0, p->scale_dtype);
    o->scale = (p->scale_kind != SDPA_SCALE_NONE && p->invert_scale) ? 1.0 / s : s;
    o->inf_as_zero = p->softmax_kind == SDPA_SOFTMAX_INF_AS_ZERO;
    return 0;
}

void oracle_free(oracle_t *o)
{
    free(o->q);
    free(o->k);
    free(o->v);
    free(o->bias);
    free(o->drop);
    free(o->dout);
    memset(o, 0, sizeof(*o));
}

/* Softmax row of query (b, h, i) into prob[Sk]; returns the log-sum-exp.
 * A row that sees no key has log-sum-exp -inf (sdpa.h) and probabilities 0
 * with dead_as_zero (INF_AS_ZERO, and backward in both modes), else NaN
 * (the forward output of ACCURATE). */
static double oracle_softmax_row(const oracle_t *o, int64_t b, int64_t h, int64_t i, double *prob,
                                 int dead_as_zero)
{
    const int64_t kvh = h / (o->Hq / o->Hkv);
    const double *q = o->q + ((b * o->Hq + h) * o->Sq + i) * o->D;
    const double *bias = o->bias + ((b * o->Hq + h) * o->Sq + i) * o->Sk;
    double max = -INFINITY;
    for (int64_t j = 0; j < o->Sk; j++) {
        const double *k = o->k + ((b * o->Hkv + kvh) * o->Sk + j) * o->D;
        double dot = 0;
        for (int64_t d = 0; d < o->D; d++)
            dot += q[d] * k[d];
        prob[j] = o->scale * dot + bias[j];
        if (prob[j] > max)
            max = prob[j];
    }
    if (max == -INFINITY) {
        for (int64_t j = 0; j < o->Sk; j++)
            prob[j] = dead_as_zero ? 0.0 : NAN;
        return -INFINITY;
    }
    double sum = 0;
    for (int64_t j = 0; j < o->Sk; j++)
        sum += exp(prob[j] - max);
    for (int64_t j = 0; j < o->Sk; j++)
        prob[j] = exp(prob[j] - max) / sum;
    return max + log(sum);
}

/* The forward with dead rows as the problem's softmax kind says, or as
 * zeros (what backward differentiates). */
static void forward_rows(const oracle_t *o, double *out, double *lse, int dead_as_zero)
{
    double *prob = malloc(sizeof(double) * (size_t)o->Sk);
    if (prob == NULL)
        abort();
    for (int64_t b = 0; b < o->B; b++)
        for (int64_t h = 0; h < o->Hq; h++)
            for (int64_t i = 0; i < o->Sq; i++) {
                const int64_t row = (b * o->Hq + h) * o->Sq + i;
                const int64_t kvh = h / (o->Hq / o->Hkv);
                double l = oracle_softmax_row(o, b, h, i, prob, dead_as_zero);
                if (lse)
                    lse[row] = l;
                if (!out)
                    continue;
                for (int64_t d = 0; d < o->D; d++) {
                    double acc = 0;
                    for (int64_t j = 0; j < o->Sk; j++) {
                        double pd = o->drop[row * o->Sk + j] == 0.0
                                            ? 0.0
                                            : prob[j] * o->drop[row * o->Sk + j];
                        if (pd != 0.0)
                            acc += pd * o->v[((b * o->Hkv + kvh) * o->Sk + j) * o->D + d];
                    }
                    out[row * o->D + d] = acc;
                }
            }
    free(prob);
}

void oracle_forward(const oracle_t *o, double *out, double *lse)
{
    forward_rows(o, out, lse, o->inf_as_zero);
}

void oracle_backward(const oracle_t *o, double *dq, double *dk, double *dv, double *ds)
{
    const int64_t B = o->B, Hq = o->Hq, Hkv = o->Hkv, Sq = o->Sq, Sk = o->Sk, D = o->D;
    const int64_t group = Hq / Hkv;
    double *P = malloc(sizeof(double) * (size_t)(Sq * Sk));
    double *dP = malloc(sizeof(double) * (size_t)(Sq * Sk));
    if (!P || !dP)
        abort();
    if (dk)
        memset(dk, 0, sizeof(double) * (size_t)(B * Hkv * Sk * D));
    if (dv)
        memset(dv, 0, sizeof(double) * (size_t)(B * Hkv * Sk * D));
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < Hq; h++) {
            const int64_t kvh = h / group;
            const double *K = o->k + (b * Hkv + kvh) * Sk * D;
            const double *V = o->v + (b * Hkv + kvh) * Sk * D;
            const double *Q = o->q + (b * Hq + h) * Sq * D;
            const double *dO = o->dout + (b * Hq + h) * Sq * D;
            const double *drop = o->drop + (b * Hq + h) * Sq * Sk;
            for (int64_t i = 0; i < Sq; i++)
                oracle_softmax_row(o, b, h, i, P + i * Sk, 1);
            for (int64_t i = 0; i < Sq; i++) {
                double Di = 0;
                for (int64_t j = 0; j < Sk; j++) {
                    double dot = 0;
                    for (int64_t d = 0; d < D; d++)
                        dot += dO[i * D + d] * V[j * D + d];
                    dP[i * Sk + j] = drop[i * Sk + j] * dot;
                    Di += P[i * Sk + j] * dP[i * Sk + j];
                }
                for (int64_t j = 0; j < Sk; j++) {
                    double p = P[i * Sk + j];
                    double dS = p * (dP[i * Sk + j] - Di);
                    dP[i * Sk + j] = dS;
                    if (ds)
                        ds[((b * Hq + h) * Sq + i) * Sk + j] = dS;
                }
            }
            for (int64_t i = 0; i < Sq && dq; i++)
                for (int64_t d = 0; d < D; d++) {
                    double acc = 0;
                    for (int64_t j = 0; j < Sk; j++)
                        acc += dP[i * Sk + j] * K[j * D + d];
                    dq[((b * Hq + h) * Sq + i) * D + d] = o->scale * acc;
                }
            for (int64_t j = 0; j < Sk; j++)
                for (int64_t d = 0; d < D; d++) {
                    double acc_k = 0, acc_v = 0;
                    for (int64_t i = 0; i < Sq; i++) {
                        acc_k += dP[i * Sk + j] * Q[i * D + d];
                        double pd =
                                drop[i * Sk + j] == 0.0 ? 0.0 : P[i * Sk + j] * drop[i * Sk + j];
                        acc_v += pd * dO[i * D + d];
                    }
                    if (dk)
                        dk[((b * Hkv + kvh) * Sk + j) * D + d] += o->scale * acc_k;
                    if (dv)
                        dv[((b * Hkv + kvh) * Sk + j) * D + d] += acc_v;
                }
        }
    free(P);
    free(dP);
}

double oracle_loss(const oracle_t *o)
{
    size_t n = (size_t)(o->B * o->Hq * o->Sq * o->D);
    double *out = malloc(sizeof(double) * n);
    if (out == NULL)
        abort();
    forward_rows(o, out, NULL, 1);
    double loss = 0;
    for (size_t e = 0; e < n; e++)
        loss += o->dout[e] * out[e];
    free(out);
    return loss;
}

/* ------------------------------------------------------------------------- */
/* Comparisons                                                               */
/* ------------------------------------------------------------------------- */

double dtype_rel_tolerance(sdpa_dtype_t dtype)
{
    switch (dtype) {
    case SDPA_DTYPE_F16:
        return ldexp(1.0, -10);
    case SDPA_DTYPE_BF16:
        return ldexp(1.0, -7);
    default:
        return ldexp(1.0, -23);
    }
}

double dtype_abs_tolerance(sdpa_dtype_t dtype)
{
    /* f16 subnormals are 2^-24 apart; elsewhere only double rounding
     * differences of ~1e-16 remain. */
    return dtype == SDPA_DTYPE_F16 ? ldexp(1.0, -24) : 1e-12;
}

int close_enough(double got, double expected, double rel, double abs)
{
    if (isnan(expected))
        return isnan(got);
    if (isinf(expected))
        return got == expected;
    if (isnan(got) || isinf(got))
        return 0;
    return fabs(got - expected) <= rel * fabs(expected) + abs;
}

double half_ulp(double value, sdpa_dtype_t dtype)
{
    int mantissa_bits = 23, emin = -126;
    if (dtype == SDPA_DTYPE_F16) {
        mantissa_bits = 10;
        emin = -14;
    } else if (dtype == SDPA_DTYPE_BF16) {
        mantissa_bits = 7;
    }
    int exponent = emin;
    if (value != 0.0) {
        frexp(value, &exponent); /* |value| in [2^(exponent-1), 2^exponent) */
        exponent -= 1;
        if (exponent < emin)
            exponent = emin;
    }
    return ldexp(1.0, exponent - mantissa_bits - 1);
}

int compare_rounded(const char *what, const sdpa_tensor_desc_t *t, const void *data,
                    const double *expected)
{
    int ok = 1;
    for (int64_t a = 0; a < t->dims[0]; a++)
        for (int64_t b = 0; b < t->dims[1]; b++)
            for (int64_t i = 0; i < t->dims[2]; i++)
                for (int64_t j = 0; j < t->dims[3]; j++) {
                    int64_t e = ((a * t->dims[1] + b) * t->dims[2] + i) * t->dims[3] + j;
                    double got = tensor_get(t, data, a, b, i, j);
                    double want = expected[e];
                    double tolerance = isfinite(want) ? half_ulp(want, t->dtype) + 1e-12 : 0;
                    if (!close_enough(got, want, 0.0, tolerance)) {
                        if (ok)
                            fprintf(stderr,
                                    "%s[%lld,%lld,%lld,%lld]: got %.9g, expected %.12g (+- %g)\n",
                                    what, (long long)a, (long long)b, (long long)i, (long long)j,
                                    got, want, tolerance);
                        ok = 0;
                    }
                }
    return ok;
}

int compare_tensor(const char *what, const sdpa_tensor_desc_t *t, const void *data,
                   const double *expected, double rel, double abs, double *max_error)
{
    double worst = 0;
    int ok = 1;
    for (int64_t a = 0; a < t->dims[0]; a++)
        for (int64_t b = 0; b < t->dims[1]; b++)
            for (int64_t i = 0; i < t->dims[2]; i++)
                for (int64_t j = 0; j < t->dims[3]; j++) {
                    int64_t e = ((a * t->dims[1] + b) * t->dims[2] + i) * t->dims[3] + j;
                    double got = tensor_get(t, data, a, b, i, j);
                    double want = expected[e];
                    if (!close_enough(got, want, rel, abs)) {
                        if (ok)
                            fprintf(stderr,
                                    "%s[%lld,%lld,%lld,%lld]: got %.9g, expected %.9g (rel %g, "
                                    "abs %g)\n",
                                    what, (long long)a, (long long)b, (long long)i, (long long)j,
                                    got, want, rel, abs);
                        ok = 0;
                    } else if (isfinite(want)) {
                        double err = fabs(got - want) / (rel * fabs(want) + abs);
                        if (err > worst)
                            worst = err;
                    }
                }
    if (max_error)
        *max_error = worst;
    return ok;
}
