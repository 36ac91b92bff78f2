/*
 * fuzz_problem.c - fuzz target: problem validation, execution-argument
 * checks, and every size the backends derive from a problem (workspace
 * bytes, the backward scratch layout, launch plans), device-free.
 *
 * The input builds a descriptor that is mostly consistent (so that the deep
 * checks are reached) from dims that are small or extreme (0, 1, 2^24, 2^30,
 * 2^31 - 1, 2^62, INT64_MAX, negatives), layouts that are dense, permuted,
 * padded, broadcast or arbitrary, and then overwrites a few raw bytes of the
 * struct. Oracles, computed independently in 128-bit arithmetic:
 *   - a refusal has a known status and a message;
 *   - an accepted problem's normalized copy is accepted again, unchanged;
 *   - every tensor it accepts, and every buffer it implies, is addressable
 *     (at most 2^63 - 1 bytes), and SDPA_QUERY_WORKSPACE_BYTES is exact;
 *   - an accepted execution has every pointer the problem needs;
 *   - a backward plan's scratch regions are exact, disjoint, inside the
 *     total, the total fits the device's largest allocation, and its zero
 *     fills cover only scratch or exactly a dense f32 gradient.
 */
#include <stdio.h>
#include <string.h>

#include "bwd_plan.h"
#include "core_fixtures.h"
#include "error.h"
#include "fuzz.h"
#include "fwd_plan.h"
#include "problem.h"

typedef unsigned __int128 u128;

#define MAX_BYTES ((u128)INT64_MAX)

/* What the inputs reached. */
static unsigned long long accepted, accepted_backward, args_accepted, plans_made;

static const int64_t extremes[] = {
        0,
        1,
        2,
        3,
        7,
        8,
        16,
        17,
        64,
        100,
        128,
        512,
        513,
        (int64_t)1 << 20,
        1 << 24,
        1 << 30,
        INT32_MAX,
        (int64_t)INT32_MAX + 1,
        (int64_t)1 << 32,
        (int64_t)1 << 40,
        (int64_t)1 << 62,
        INT64_MAX,
        -1,
        INT64_MIN,
};
#define EXTREMES ((uint32_t)(sizeof(extremes) / sizeof(extremes[0])))

/* A dim: mostly small, sometimes extreme, rarely any 64-bit value. */
static int64_t make_dim(fuzz_input_t *in)
{
    uint8_t r = fuzz_u8(in);
    if (r < 170)
        return 1 + r % 24;
    if (r < 250)
        return extremes[fuzz_pick(in, EXTREMES)];
    return (int64_t)fuzz_u64(in);
}

/* Wrapping products: a fuzzed layout may overflow, the fuzzer must not. */
static int64_t wrap_mul(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a * (uint64_t)b);
}

/* Layouts of a problem's tensors: each its own, or all broadcast (the only
 * way huge dims pass the checks of the tensors, and reach those of the
 * buffers the problem implies). */
static int broadcast_all;

static void make_tensor(fuzz_input_t *in, sdpa_tensor_desc_t *t, sdpa_dtype_t dtype,
                        const int64_t dims[4])
{
    memset(t, 0, sizeof(*t));
    t->dtype = dtype;
    memcpy(t->dims, dims, sizeof(t->dims));
    static const int orders[4][4] = {{0, 1, 2, 3}, {0, 2, 1, 3}, {0, 1, 3, 2}, {1, 0, 2, 3}};
    uint8_t layout = broadcast_all ? 5 : fuzz_u8(in) % 8;
    if (layout < 5) { /* dense in some order, maybe padded rows */
        const int *order = orders[layout % 4];
        int64_t stride = 1, pad = layout == 4 ? 2 * (int64_t)(fuzz_u8(in) % 4) : 0;
        for (int i = 3; i >= 0; i--) {
            t->strides[order[i]] = stride;
            stride = wrap_mul(stride, (int64_t)((uint64_t)dims[order[i]] + (i == 3 ? pad : 0)));
        }
    } else if (layout == 5) { /* one row per (batch, head) broadcast over the rest */
        t->strides[3] = 1;
    } else {
        for (int n = 0; n < 4; n++)
            t->strides[n] = layout == 6 ? make_dim(in) : (int64_t)fuzz_u64(in);
    }
}

static sdpa_dtype_t make_float_dtype(fuzz_input_t *in)
{
    static const sdpa_dtype_t dtypes[] = {SDPA_DTYPE_F32, SDPA_DTYPE_F16, SDPA_DTYPE_BF16};
    return fuzz_u8(in) < 250 ? dtypes[fuzz_pick(in, 3)] : (sdpa_dtype_t)fuzz_pick(in, 12);
}

static void make_problem(fuzz_input_t *in, sdpa_problem_desc_t *p)
{
    memset(p, 0, sizeof(*p));
    p->struct_size = sizeof(*p);
    p->struct_version = SDPA_PROBLEM_DESC_VERSION;
    p->prop_kind = (sdpa_prop_kind_t)fuzz_pick(in, 3);
    broadcast_all = fuzz_pick(in, 4) == 0;
    int64_t b = make_dim(in), hkv = make_dim(in),
            group = fuzz_u8(in) < 200 ? 1 + fuzz_pick(in, 4) : make_dim(in);
    int64_t q_dims[4] = {b, wrap_mul(hkv, group), make_dim(in), make_dim(in) % 600};
    int64_t kv_dims[4] = {b, hkv, make_dim(in), q_dims[3]};
    sdpa_dtype_t qt = make_float_dtype(in);
    uint8_t kv_kind = fuzz_u8(in);
    static const sdpa_dtype_t ints[] = {SDPA_DTYPE_S8, SDPA_DTYPE_U8, SDPA_DTYPE_S4, SDPA_DTYPE_U4};
    sdpa_dtype_t kt = kv_kind < 200 ? qt : kv_kind < 230 ? make_float_dtype(in) : ints[kv_kind % 4];
    sdpa_dtype_t vt = kv_kind < 215 ? kt : ints[fuzz_pick(in, 4)];
    make_tensor(in, &p->q, qt, q_dims);
    make_tensor(in, &p->k, kt, kv_dims);
    make_tensor(in, &p->v, vt, kv_dims);
    make_tensor(in, &p->dst, qt, q_dims);

    p->mask_kind = (sdpa_mask_kind_t)fuzz_pick(in, 4);
    if (p->mask_kind == SDPA_MASK_BUFFER) {
        int64_t m[4] = {q_dims[0], q_dims[1], q_dims[2], kv_dims[2]};
        uint8_t bc = fuzz_u8(in);
        for (int n = 0; n < 3; n++)
            if (bc & (1 << n))
                m[n] = 1;
        make_tensor(in, &p->mask, make_float_dtype(in), m);
    }
    p->scale_kind = (sdpa_scale_kind_t)fuzz_pick(in, 3);
    p->scale_dtype = make_float_dtype(in);
    p->invert_scale = fuzz_pick(in, 2);
    p->softmax_kind = (sdpa_softmax_kind_t)fuzz_pick(in, 2);
    if (kt != qt || vt != qt) {
        sdpa_quant_desc_t *quants[2] = {&p->k_quant, &p->v_quant};
        for (int t = 0; t < 2; t++) {
            sdpa_quant_desc_t *q = quants[t];
            q->scales = (sdpa_quant_kind_t)(1 + fuzz_pick(in, 2));
            q->scales_dtype = make_float_dtype(in);
            q->zero_points = (sdpa_quant_kind_t)fuzz_pick(in, 3);
            q->zero_points_dtype = ints[fuzz_pick(in, 4)];
            q->group_size = (int64_t)1 << fuzz_pick(in, 10);
        }
    }
    if (fuzz_u8(in) < 64) {
        p->dropout.enabled = 1;
        p->dropout.host_scalars = fuzz_pick(in, 2);
        p->dropout.with_offset = fuzz_pick(in, 2);
        p->dropout.with_mask_output = fuzz_pick(in, 2);
    }
    if (p->prop_kind == SDPA_BACKWARD) {
        make_tensor(in, &p->diff_dst, qt, q_dims);
        make_tensor(in, &p->diff_q, qt, q_dims);
        make_tensor(in, &p->diff_k, qt, kv_dims);
        make_tensor(in, &p->diff_v, qt, kv_dims);
        if (fuzz_u8(in) < 64) {
            int64_t s[4] = {q_dims[0], q_dims[1], q_dims[2], kv_dims[2]};
            make_tensor(in, &p->ds, make_float_dtype(in), s);
        }
        p->deterministic = fuzz_pick(in, 2);
    }
    /* Then a few raw overwrites anywhere in the struct. */
    int writes = fuzz_u8(in) < 192 ? 0 : 1 + fuzz_pick(in, 4);
    for (int i = 0; i < writes; i++) {
        size_t offset = fuzz_u32(in) % sizeof(*p);
        uint64_t value =
                fuzz_u8(in) < 128 ? (uint64_t)extremes[fuzz_pick(in, EXTREMES)] : fuzz_u64(in);
        size_t n = sizeof(*p) - offset < 8 ? sizeof(*p) - offset : 1 + fuzz_pick(in, 8);
        memcpy((char *)p + offset, &value, n);
    }
}

/* ------------------------------------------------------------------------- */
/* Oracles                                                                   */
/* ------------------------------------------------------------------------- */

static u128 product(const int64_t *v, int n)
{
    u128 r = 1;
    for (int i = 0; i < n; i++) {
        if (v[i] < 0)
            fuzz_fail("an accepted problem has a negative dim %lld", (long long)v[i]);
        r *= (u128)v[i];
        if (r > ((u128)1 << 126)) /* saturate: far past any limit */
            r = (u128)1 << 126;
    }
    return r;
}

static void check_tensor(const char *name, const sdpa_tensor_desc_t *t)
{
    if (t->dtype == SDPA_DTYPE_UNDEF)
        return;
    u128 last = 0;
    for (int n = 0; n < 4; n++) {
        if (t->dims[n] < 1 || t->strides[n] < 0)
            fuzz_fail("accepted %s has dims[%d] = %lld, strides[%d] = %lld", name, n,
                      (long long)t->dims[n], n, (long long)t->strides[n]);
        last += (u128)(t->dims[n] - 1) * (u128)t->strides[n];
    }
    u128 bytes = ((last + 1) * (u128)sdpa_dtype_bits(t->dtype) + 7) / 8;
    if (last > (u128)INT64_MAX || bytes > MAX_BYTES)
        fuzz_fail("accepted %s spans %llu * 2^64 + %llu bytes", name,
                  (unsigned long long)(bytes >> 64), (unsigned long long)bytes);
}

static void check_accepted(const sdpa_problem_desc_t *p, const sdpa_shape_t *s)
{
    /* Normalization is idempotent. */
    sdpa_problem_desc_t again;
    sdpa_shape_t shape_again;
    if (sdpa_problem_check(p, &again, &shape_again) != SDPA_SUCCESS)
        fuzz_fail("the normalized copy is refused: %s", sdpa_error_message());
    if (memcmp(p, &again, sizeof(again)) != 0 || memcmp(s, &shape_again, sizeof(*s)) != 0)
        fuzz_fail("checking the normalized copy changed it");

    const struct {
        const char *name;
        const sdpa_tensor_desc_t *t;
    } tensors[] = {{"q", &p->q},           {"k", &p->k},           {"v", &p->v},
                   {"dst", &p->dst},       {"mask", &p->mask},     {"diff_dst", &p->diff_dst},
                   {"diff_q", &p->diff_q}, {"diff_k", &p->diff_k}, {"diff_v", &p->diff_v},
                   {"ds", &p->ds}};
    for (size_t i = 0; i < sizeof(tensors) / sizeof(tensors[0]); i++)
        check_tensor(tensors[i].name, tensors[i].t);

    const int64_t scores[4] = {s->batch, s->q_heads, s->q_len, s->k_len};
    u128 want = p->prop_kind == SDPA_FORWARD_INFERENCE ? 0 : product(scores, 3) * 4;
    size_t got = sdpa_workspace_bytes(p, s);
    if (want > MAX_BYTES || (u128)got != want)
        fuzz_fail("SDPA_QUERY_WORKSPACE_BYTES = %zu for B %lld Hq %lld Sq %lld", got,
                  (long long)s->batch, (long long)s->q_heads, (long long)s->q_len);
    if (p->dropout.enabled && product(scores, 4) > MAX_BYTES)
        fuzz_fail("accepted dropout over %lld x %lld x %lld x %lld elements", (long long)s->batch,
                  (long long)s->q_heads, (long long)s->q_len, (long long)s->k_len);
}

/* Execution arguments with each pointer present or not, per the input;
 * returns 1 if they were accepted. */
static int check_args(fuzz_input_t *in, const sdpa_problem_desc_t *p)
{
    sdpa_exec_args_t a;
    memset(&a, 0, sizeof(a));
    a.struct_size = fuzz_u8(in) < 250 ? sizeof(a) : fuzz_u32(in);
    a.struct_version = fuzz_u8(in) < 250 ? SDPA_EXEC_ARGS_VERSION : fuzz_u32(in);
    static char buffer[64];
    uint32_t present = fuzz_u8(in) < 128 ? UINT32_MAX : fuzz_u32(in);
    const void **pointers[] = {&a.q,
                               &a.k,
                               &a.v,
                               (const void **)&a.dst,
                               &a.mask,
                               (const void **)&a.workspace,
                               &a.scale_ptr,
                               &a.k_scales,
                               &a.k_zero_points,
                               &a.v_scales,
                               &a.v_zero_points,
                               &a.dropout_p_ptr,
                               &a.dropout_seed_ptr,
                               &a.dropout_offset_ptr,
                               (const void **)&a.dropout_mask,
                               &a.diff_dst,
                               (const void **)&a.diff_q,
                               (const void **)&a.diff_k,
                               (const void **)&a.diff_v,
                               (const void **)&a.ds};
    for (size_t i = 0; i < sizeof(pointers) / sizeof(pointers[0]); i++)
        *pointers[i] = (present >> i) & 1 ? buffer : NULL;
    uint32_t bits = fuzz_u32(in);
    memcpy(&a.dropout_p, &bits, sizeof(bits));
    a.num_wait_events = fuzz_u8(in) < 240 ? 0 : fuzz_u32(in);
    a.wait_events = (present >> 30) & 1 ? (ze_event_handle_t *)buffer : NULL;

    sdpa_exec_args_t checked;
    sdpa_status_t status = sdpa_exec_args_check(p, &a, &checked);
    if (status != SDPA_SUCCESS) {
        if (status != SDPA_ERROR_INVALID_ARGUMENT && status != SDPA_ERROR_INVALID_STRUCT)
            fuzz_fail("exec args refused with status %d", (int)status);
        if (!sdpa_error_message()[0])
            fuzz_fail("exec args refused without a message");
        return 0;
    }
    int backward = p->prop_kind == SDPA_BACKWARD;
    int needed = a.q && a.k && a.v && a.dst &&
                 (p->prop_kind == SDPA_FORWARD_INFERENCE || a.workspace) &&
                 (p->mask_kind != SDPA_MASK_BUFFER || a.mask) &&
                 (p->scale_kind != SDPA_SCALE_DEVICE || a.scale_ptr) &&
                 (!backward || (a.diff_dst && a.diff_q && a.diff_k && a.diff_v)) &&
                 (!backward || p->ds.dtype == SDPA_DTYPE_UNDEF || a.ds) &&
                 (a.num_wait_events == 0 || a.wait_events);
    if (p->dropout.enabled && p->dropout.host_scalars)
        needed &= a.dropout_p >= 0.0f && a.dropout_p < 1.0f;
    if (!needed)
        fuzz_fail("exec args accepted without a pointer or value the problem needs");
    return 1;
}

/* A backward plan on device: scratch regions exact, disjoint, in bounds. */
static void check_bwd_plan(const sdpa_problem_desc_t *p, const sdpa_shape_t *s,
                           const sdpa_device_info_t *device)
{
    sdpa_bwd_plan_t plan;
    sdpa_status_t status = sdpa_bwd_plan_make(p, s, device, &plan);
    if (status != SDPA_SUCCESS) {
        if (status != SDPA_ERROR_UNSUPPORTED && status != SDPA_ERROR_INVALID_CONFIG)
            fuzz_fail("backward plan failed with status %d: %s", (int)status, sdpa_error_message());
        return;
    }
    plans_made++;
    const sdpa_bwd_scratch_t *sc = &plan.scratch;
    if (sc->total_bytes > device->max_alloc_bytes)
        fuzz_fail("scratch of %zu bytes planned on a device allocating %llu", sc->total_bytes,
                  (unsigned long long)device->max_alloc_bytes);
    const int64_t q[4] = {s->batch, s->q_heads, s->q_len, s->head_size};
    const int64_t kv[4] = {s->batch, s->kv_heads, s->k_len, s->head_size};
    const int64_t partial[4] = {s->batch, s->q_heads, s->k_len, s->head_size};
    const sdpa_scratch_region_t *regions[5] = {&sc->dq, &sc->dk, &sc->dv, &sc->d_i, &sc->strides};
    /* Partial dQ slices: one dQ per key block, within the plan's bounds. */
    const u128 dq_copies = sc->dq_slices > 0 ? (u128)sc->dq_slices : 1;
    if (sc->dq_slices > SDPA_BWD_DQ_PARTIALS_MAX_SLICES ||
        (sc->dq_slices > 0 && product(q, 4) * 4 * dq_copies > SDPA_BWD_DQ_PARTIALS_MAX_BYTES))
        fuzz_fail("%lld partial dQ slices past the bounds", (long long)sc->dq_slices);
    const u128 exact[5] = {product(q, 4) * 4 * dq_copies,
                           product(sc->dkv_partials ? partial : kv, 4) * 4,
                           product(sc->dkv_partials ? partial : kv, 4) * 4, product(q, 3) * 4,
                           SDPA_BWD_STRIDES_COUNT * 8};
    /* Zero fills stay inside the scratch, or cover exactly a dense f32
     * gradient (a strided one has gaps that belong to someone else). */
    for (uint32_t i = 0; i < sc->num_fills; i++) {
        const sdpa_zero_fill_t *f = &sc->fills[i];
        if (f->buffer == SDPA_BWD_BUFFER_SCRATCH) {
            if ((u128)f->offset + f->bytes > sc->total_bytes)
                fuzz_fail("zero fill %u ends past the scratch", i);
            continue;
        }
        const sdpa_tensor_desc_t *t = f->buffer == SDPA_BWD_BUFFER_DIFF_Q   ? &p->diff_q
                                      : f->buffer == SDPA_BWD_BUFFER_DIFF_K ? &p->diff_k
                                                                            : &p->diff_v;
        u128 last = 0;
        for (int n = 0; n < 4; n++)
            last += (u128)(t->dims[n] - 1) * (u128)t->strides[n];
        if (t->dtype != SDPA_DTYPE_F32 || f->offset != 0 || (u128)f->bytes != (last + 1) * 4 ||
            (u128)f->bytes != product(t->dims, 4) * 4)
            fuzz_fail("zero fill %u of gradient %d: %zu bytes at %zu, not exactly its elements", i,
                      (int)f->buffer, f->bytes, f->offset);
    }
    for (int i = 0; i < 5; i++) {
        const sdpa_scratch_region_t *r = regions[i];
        if (r->bytes == 0)
            continue;
        if ((u128)r->bytes != exact[i])
            fuzz_fail("scratch region %d has %zu bytes, not %llu", i, r->bytes,
                      (unsigned long long)exact[i]);
        if ((u128)r->offset + r->bytes > sc->total_bytes)
            fuzz_fail("scratch region %d ends past the total", i);
        for (int j = 0; j < i; j++)
            if (regions[j]->bytes && r->offset < regions[j]->offset + regions[j]->bytes &&
                regions[j]->offset < r->offset + r->bytes)
                fuzz_fail("scratch regions %d and %d overlap", j, i);
    }
}

const char *fuzz_stats(void)
{
    static char text[160];
    snprintf(text, sizeof(text),
             "%llu problems accepted (%llu backward), %llu executions accepted, %llu plans made",
             accepted, accepted_backward, args_accepted, plans_made);
    return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input_t in = {data, size, 0};
    sdpa_problem_desc_t desc, p;
    sdpa_shape_t s;
    make_problem(&in, &desc);
    sdpa_error_clear();
    sdpa_status_t status = sdpa_problem_check(&desc, &p, &s);
    if (status != SDPA_SUCCESS) {
        if (status != SDPA_ERROR_INVALID_ARGUMENT && status != SDPA_ERROR_INVALID_STRUCT &&
            status != SDPA_ERROR_UNSUPPORTED)
            fuzz_fail("refused with status %d", (int)status);
        if (!sdpa_error_message()[0])
            fuzz_fail("refused (status %d) without a message", (int)status);
        return 0;
    }
    accepted++;
    accepted_backward += p.prop_kind == SDPA_BACKWARD;
    check_accepted(&p, &s);
    args_accepted += check_args(&in, &p);

    sdpa_device_info_t devices[2];
    fixture_cpu_device(&devices[0]);
    fixture_gpu_device(SDPA_DEVICE_CLASS_XE_HPC, &devices[1]);
    for (int d = 0; d < 2; d++) {
        if (p.prop_kind == SDPA_BACKWARD) {
            check_bwd_plan(&p, &s, &devices[d]);
        } else {
            sdpa_fwd_plan_t plan;
            status = sdpa_fwd_plan_make(&p, &s, &devices[d], &plan);
            plans_made += status == SDPA_SUCCESS;
            if (status != SDPA_SUCCESS && status != SDPA_ERROR_UNSUPPORTED &&
                status != SDPA_ERROR_INVALID_CONFIG)
                fuzz_fail("forward plan failed with status %d: %s", (int)status,
                          sdpa_error_message());
        }
    }
    return 0;
}
