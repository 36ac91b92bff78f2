/* bench_data.c - a case's host inputs (reproducible, rounded to its dtype)
 * and output buffers. */
#include <math.h>
#include <stdlib.h>

#include "bench.h"
#include "element.h"
#include "problem.h"

/* splitmix64: a tiny reproducible generator. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* count values in [-1, 1), each exactly representable in dtype. */
static float *random_tensor(int64_t count, sdpa_dtype_t dtype, uint64_t seed)
{
    float *data = malloc((size_t)count * sizeof(float));
    if (data == NULL)
        return NULL;
    uint64_t state = seed;
    for (int64_t i = 0; i < count; i++) {
        float unit = (float)(next_random(&state) >> 40) / 16777216.0f;
        data[i] = (float)sdpa_element_round(dtype, 2.0f * unit - 1.0f);
    }
    return data;
}

/* count values q * scale in [-1, 1], q a random integer of dtype (s8: up to
 * +-127, s4: -8..7), scale = 1 / the largest positive q. */
static float *random_int_tensor(int64_t count, sdpa_dtype_t dtype, uint64_t seed, float *scale)
{
    float *data = malloc((size_t)count * sizeof(float));
    if (data == NULL)
        return NULL;
    const int max = dtype == SDPA_DTYPE_S8 ? 127 : 7;
    *scale = (float)sdpa_element_round(SDPA_DTYPE_F16, 1.0 / max);
    uint64_t state = seed;
    for (int64_t i = 0; i < count; i++) {
        int q = (int)(next_random(&state) % (uint64_t)(2 * max + 2)) - (max + 1);
        if (dtype == SDPA_DTYPE_S8 && q < -127)
            q = -127;
        data[i] = (float)q * *scale;
    }
    return data;
}

/* count values x * scale in [-1.75, 1.75], x a random finite FP8 value of
 * dtype (drawn by code: as many small values as large ones, subnormals
 * too), scale = 2^-8 (E4M3, largest 448) or 2^-15 (E5M2, 57344): a power
 * of two, so x = value / scale again exactly. */
static float *random_fp8_tensor(int64_t count, sdpa_dtype_t dtype, uint64_t seed, float *scale)
{
    float *data = malloc((size_t)count * sizeof(float));
    if (data == NULL)
        return NULL;
    *scale = dtype == SDPA_DTYPE_F8_E4M3 ? 0x1.0p-8f : 0x1.0p-15f;
    uint64_t state = seed;
    for (int64_t i = 0; i < count; i++) {
        double x;
        do {
            const uint8_t code = (uint8_t)(next_random(&state) >> 56);
            x = sdpa_element_load(&code, 0, dtype);
        } while (!isfinite(x));
        data[i] = (float)x * *scale;
    }
    return data;
}

int bench_host_create(const bench_case_t *c, bench_host_t *h)
{
    *h = (bench_host_t){.scale = (float)(1.0 / sqrt((double)c->head_size))};
    int64_t q = bench_q_elements(c), kv = bench_kv_elements(c);
    h->q = random_tensor(q, c->dtype, 1);
    if (sdpa_dtype_is_fp8(c->kv_dtype)) {
        h->k = random_fp8_tensor(kv, c->kv_dtype, 2, &h->kv_scale);
        h->v = random_fp8_tensor(kv, c->kv_dtype, 3, &h->kv_scale);
    } else if (c->kv_dtype != SDPA_DTYPE_UNDEF) {
        h->k = random_int_tensor(kv, c->kv_dtype, 2, &h->kv_scale);
        h->v = random_int_tensor(kv, c->kv_dtype, 3, &h->kv_scale);
    } else {
        h->k = random_tensor(kv, c->dtype, 2);
        h->v = random_tensor(kv, c->dtype, 3);
    }
    if (c->pass == BENCH_BACKWARD)
        h->diff_dst = random_tensor(q, c->dtype, 4);
    if (c->sinks) { /* logits in [4, 8): exp(sink) near 128 .. 4096 keys' sum, a real share */
        h->sinks = random_tensor(c->q_heads, SDPA_DTYPE_F32, 5);
        for (int64_t i = 0; h->sinks && i < c->q_heads; i++)
            h->sinks[i] = 6.0f + 2.0f * h->sinks[i];
    }
    if (!h->q || !h->k || !h->v || (c->pass == BENCH_BACKWARD && !h->diff_dst) ||
        (c->sinks && !h->sinks)) {
        bench_host_destroy(h);
        return -1;
    }
    return 0;
}

void bench_host_destroy(bench_host_t *h)
{
    free(h->sinks);
    free(h->diff_dst);
    free(h->v);
    free(h->k);
    free(h->q);
    *h = (bench_host_t){0};
}

int bench_outputs_create(const bench_case_t *c, bench_outputs_t *out)
{
    *out = (bench_outputs_t){0};
    size_t q = (size_t)bench_q_elements(c), kv = (size_t)bench_kv_elements(c);
    if (c->pass == BENCH_FORWARD) {
        out->dst = calloc(q, sizeof(float));
        return out->dst ? 0 : -1;
    }
    out->diff_q = calloc(q, sizeof(float));
    out->diff_k = calloc(kv, sizeof(float));
    out->diff_v = calloc(kv, sizeof(float));
    if (!out->diff_q || !out->diff_k || !out->diff_v) {
        bench_outputs_destroy(out);
        return -1;
    }
    return 0;
}

void bench_outputs_destroy(bench_outputs_t *out)
{
    free(out->diff_v);
    free(out->diff_k);
    free(out->diff_q);
    free(out->dst);
    *out = (bench_outputs_t){0};
}
