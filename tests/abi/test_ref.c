/* test_ref.c - the ref backend against the independent oracle of
 * abi_util.c: every forward feature, backward against the oracle's analytic
 * gradients and against finite differences, queries and ref-specific rules. */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_main.h"
#include "abi_util.h"
#include "ref_fixture.h"
#include "run_once.h"
#include "sdpa.h"

static sdpa_backend_t *backend;
static const sdpa_backend_iface_t *iface;
static sdpa_context_t *ctx;

static void open_ref(void)
{
    ref_fixture_open(&backend, &iface, &ctx);
}

static void close_ref(void)
{
    ref_fixture_close(backend, iface, ctx);
}

/* Creates a primitive for desc, executes it with args, destroys it. */
static sdpa_status_t run(const sdpa_problem_desc_t *desc, const sdpa_exec_args_t *args)
{
    return test_run_once(iface, ctx, desc, args);
}

#define ck_assert_run(desc, args)                                                                  \
    do {                                                                                           \
        sdpa_status_t run_status_ = run(desc, args);                                               \
        ck_assert_msg(run_status_ == SDPA_SUCCESS, "%s: %s", sdpa_status_name(run_status_),        \
                      iface->last_error());                                                        \
    } while (0)

static double *doubles(int64_t count)
{
    double *p = malloc(sizeof(double) * (size_t)(count > 0 ? count : 1));
    ck_assert_ptr_nonnull(p);
    return p;
}

/* Runs the forward problem of c and compares O, the workspace and the keep
 * mask with the oracle. */
static void check_forward(attn_case_t *c)
{
    const sdpa_problem_desc_t *d = &c->desc;
    ck_assert_run(d, &c->args);
    oracle_t o;
    oracle_init(&o, c);
    double *out = doubles(o.B * o.Hq * o.Sq * o.D), *lse = doubles(o.B * o.Hq * o.Sq);
    oracle_forward(&o, out, lse);
    ck_assert(compare_rounded("O", &d->dst, c->args.dst, out));
    if (d->prop_kind == SDPA_FORWARD_TRAINING) {
        sdpa_tensor_desc_t ws = dense_tensor(SDPA_DTYPE_F32, o.B, o.Hq, o.Sq, 1);
        ck_assert(compare_rounded("LSE", &ws, c->args.workspace, lse));
    }
    if (d->dropout.enabled && d->dropout.with_mask_output) {
        const uint8_t *mask = c->args.dropout_mask;
        int64_t n = o.B * o.Hq * o.Sq * o.Sk, kept = 0;
        for (int64_t e = 0; e < n; e++) {
            ck_assert_msg(mask[e] == (o.drop[e] != 0.0), "keep mask [%lld] = %d", (long long)e,
                          mask[e]);
            kept += mask[e];
        }
        ck_assert_msg(kept > 0 && kept < n, "keep mask kept %lld of %lld", (long long)kept,
                      (long long)n);
    }
    free(out);
    free(lse);
    oracle_free(&o);
}

/* ------------------------------------------------------------------------- */
/* Forward variants                                                          */
/* ------------------------------------------------------------------------- */

typedef struct variant {
    const char *name;
    void (*setup)(sdpa_problem_desc_t *d);
} variant_t;

#define F32 SDPA_DTYPE_F32
#define F16 SDPA_DTYPE_F16
#define BF16 SDPA_DTYPE_BF16
#define INF_ SDPA_FORWARD_INFERENCE
#define TRAIN SDPA_FORWARD_TRAINING

static void fwd_f32(sdpa_problem_desc_t *d)
{
    problem_init(d, INF_, 2, 2, 2, 7, 9, 16, F32, F32);
}
static void fwd_f16(sdpa_problem_desc_t *d)
{
    problem_init(d, INF_, 1, 3, 3, 5, 33, 64, F16, F16);
}
static void fwd_bf16_training(sdpa_problem_desc_t *d)
{
    problem_init(d, TRAIN, 2, 2, 2, 17, 17, 32, BF16, BF16);
}
static void fwd_mixed_dtypes(sdpa_problem_desc_t *d)
{
    problem_init(d, TRAIN, 1, 2, 1, 6, 10, 24, F32, F16);
    d->v = dense_tensor(BF16, 1, 1, 10, 24);
}
/* Transposed K, padded Q/O rows, V shared by both batches (stride 0). */
static void fwd_strides(sdpa_problem_desc_t *d)
{
    problem_init(d, INF_, 2, 2, 2, 5, 7, 8, F16, F16);
    int64_t k_t[4] = {2 * 8 * 7, 8 * 7, 1, 7}; /* element (j, d) at d * Sk + j */
    memcpy(d->k.strides, k_t, sizeof(k_t));
    int64_t padded[4] = {2 * 5 * 12 + 3, 5 * 12 + 1, 12, 1};
    memcpy(d->q.strides, padded, sizeof(padded));
    memcpy(d->dst.strides, padded, sizeof(padded));
    d->v.strides[0] = 0;
}
static void fwd_mask_full(sdpa_problem_desc_t *d)
{
    problem_init(d, TRAIN, 2, 2, 2, 6, 11, 16, F32, F32);
    d->mask_kind = SDPA_MASK_BUFFER;
    d->mask = dense_tensor(F32, 2, 2, 6, 11);
}
static void fwd_mask_broadcast_heads(sdpa_problem_desc_t *d)
{
    problem_init(d, INF_, 2, 4, 2, 6, 11, 16, F16, F16);
    d->mask_kind = SDPA_MASK_BUFFER;
    d->mask = dense_tensor(F16, 1, 1, 6, 11);
}
static void fwd_mask_broadcast_rows(sdpa_problem_desc_t *d)
{
    problem_init(d, TRAIN, 2, 2, 2, 6, 11, 16, BF16, BF16);
    d->mask_kind = SDPA_MASK_BUFFER;
    d->mask = dense_tensor(BF16, 2, 1, 1, 11);
    d->mask.strides[2] = 0;
    d->softmax_kind = SDPA_SOFTMAX_INF_AS_ZERO;
}
/* Element (i, j) of the mask at j * Sq + i, shared by both batches. */
static void fwd_mask_transposed(sdpa_problem_desc_t *d)
{
    problem_init(d, TRAIN, 2, 2, 2, 6, 11, 16, F32, F32);
    d->mask_kind = SDPA_MASK_BUFFER;
    d->mask = (sdpa_tensor_desc_t){.dtype = F32, .dims = {1, 2, 6, 11}, .strides = {0, 66, 1, 6}};
}
static void fwd_causal_top_left(sdpa_problem_desc_t *d)
{
    problem_init(d, TRAIN, 1, 2, 2, 8, 8, 16, F32, F32);
    d->mask_kind = SDPA_MASK_CAUSAL_TOP_LEFT;
}
static void fwd_causal_bottom_right(sdpa_problem_desc_t *d)
{
    problem_init(d, TRAIN, 1, 2, 2, 5, 9, 16, F16, F16);
    d->mask_kind = SDPA_MASK_CAUSAL_BOTTOM_RIGHT;
}
/* Sq > Sk bottom-right: the first rows see no key at all. */
static void fwd_masked_rows_accurate(sdpa_problem_desc_t *d)
{
    problem_init(d, TRAIN, 1, 2, 2, 9, 5, 16, F32, F32);
    d->mask_kind = SDPA_MASK_CAUSAL_BOTTOM_RIGHT;
}
static void fwd_masked_rows_inf_as_zero(sdpa_problem_desc_t *d)
{
    fwd_masked_rows_accurate(d);
    d->softmax_kind = SDPA_SOFTMAX_INF_AS_ZERO;
}
static void fwd_causal_top_left_short_keys(sdpa_problem_desc_t *d)
{
    problem_init(d, INF_, 1, 1, 1, 9, 4, 8, BF16, BF16);
    d->mask_kind = SDPA_MASK_CAUSAL_TOP_LEFT;
}
static void fwd_no_scale(sdpa_problem_desc_t *d)
{
    problem_init(d, INF_, 1, 2, 2, 4, 6, 8, F32, F32);
    d->scale_kind = SDPA_SCALE_NONE;
    d->invert_scale = 1; /* ignored without a scale */
}
static void fwd_device_scale_inverted(sdpa_problem_desc_t *d)
{
    problem_init(d, TRAIN, 1, 2, 2, 4, 6, 32, F16, F16);
    d->scale_kind = SDPA_SCALE_DEVICE;
    d->scale_dtype = F16;
    d->invert_scale = 1;
}
static void fwd_device_scale_bf16(sdpa_problem_desc_t *d)
{
    problem_init(d, INF_, 1, 2, 2, 4, 6, 32, F32, F32);
    d->scale_kind = SDPA_SCALE_DEVICE;
    d->scale_dtype = BF16;
}
static void fwd_host_scale_inverted(sdpa_problem_desc_t *d)
{
    problem_init(d, INF_, 1, 2, 2, 4, 6, 32, F32, F32);
    d->invert_scale = 1;
}
static void fwd_gqa(sdpa_problem_desc_t *d)
{
    problem_init(d, TRAIN, 2, 8, 2, 9, 13, 16, BF16, BF16);
}
static void fwd_mqa_decode(sdpa_problem_desc_t *d)
{
    problem_init(d, INF_, 2, 4, 1, 1, 37, 64, F16, F16);
}
static void fwd_quant_s8_per_tensor(sdpa_problem_desc_t *d)
{
    problem_init(d, INF_, 1, 2, 2, 5, 12, 16, F16, SDPA_DTYPE_S8);
    d->k_quant = (sdpa_quant_desc_t){.scales = SDPA_QUANT_PER_TENSOR, .scales_dtype = F32};
    d->v_quant = (sdpa_quant_desc_t){.scales = SDPA_QUANT_PER_TENSOR, .scales_dtype = F32};
}
static void fwd_quant_u8_per_group(sdpa_problem_desc_t *d)
{
    problem_init(d, INF_, 2, 4, 2, 5, 12, 32, F16, SDPA_DTYPE_U8);
    sdpa_quant_desc_t q = {.scales = SDPA_QUANT_PER_GROUP,
                           .scales_dtype = F16,
                           .zero_points = SDPA_QUANT_PER_GROUP,
                           .zero_points_dtype = SDPA_DTYPE_U8,
                           .group_size = 8};
    d->k_quant = q;
    d->v_quant = q;
}
static void fwd_quant_4bit(sdpa_problem_desc_t *d)
{
    problem_init(d, INF_, 1, 2, 2, 5, 12, 32, BF16, SDPA_DTYPE_S4);
    d->v = dense_tensor(SDPA_DTYPE_U4, 1, 2, 12, 32);
    d->k_quant = (sdpa_quant_desc_t){.scales = SDPA_QUANT_PER_GROUP,
                                     .scales_dtype = BF16,
                                     .zero_points = SDPA_QUANT_PER_TENSOR,
                                     .zero_points_dtype = SDPA_DTYPE_S4,
                                     .group_size = 16};
    d->v_quant = (sdpa_quant_desc_t){.scales = SDPA_QUANT_PER_TENSOR,
                                     .scales_dtype = F32,
                                     .zero_points = SDPA_QUANT_PER_GROUP,
                                     .zero_points_dtype = SDPA_DTYPE_S32,
                                     .group_size = 4};
}
/* u4 K with odd groups per token (nibbles of zero points straddle rows),
 * plain f16 V. */
static void fwd_quant_u4_k_only(sdpa_problem_desc_t *d)
{
    problem_init(d, INF_, 1, 2, 1, 3, 7, 24, F16, SDPA_DTYPE_U4);
    d->v = dense_tensor(F16, 1, 1, 7, 24);
    d->k_quant = (sdpa_quant_desc_t){.scales = SDPA_QUANT_PER_GROUP,
                                     .scales_dtype = F16,
                                     .zero_points = SDPA_QUANT_PER_GROUP,
                                     .zero_points_dtype = SDPA_DTYPE_U4,
                                     .group_size = 8};
}
static void fwd_dropout_host(sdpa_problem_desc_t *d)
{
    problem_init(d, TRAIN, 2, 2, 2, 7, 13, 16, F32, F32);
    d->dropout = (sdpa_dropout_desc_t){
            .enabled = 1, .host_scalars = 1, .with_offset = 1, .with_mask_output = 1};
}
static void fwd_dropout_device(sdpa_problem_desc_t *d)
{
    problem_init(d, TRAIN, 1, 4, 2, 9, 6, 8, BF16, BF16);
    d->mask_kind = SDPA_MASK_CAUSAL_TOP_LEFT;
    d->dropout = (sdpa_dropout_desc_t){
            .enabled = 1, .host_scalars = 0, .with_offset = 1, .with_mask_output = 1};
}
static void fwd_f16_accumulation(sdpa_problem_desc_t *d)
{
    problem_init(d, INF_, 1, 2, 2, 4, 6, 16, F16, F16);
    d->kq_acc_dtype = F16; /* ref computes in double anyway */
    d->vs_acc_dtype = F16;
}

static const variant_t forward_variants[] = {
        {"f32", fwd_f32},
        {"f16", fwd_f16},
        {"bf16 training", fwd_bf16_training},
        {"mixed dtypes", fwd_mixed_dtypes},
        {"strides", fwd_strides},
        {"mask full", fwd_mask_full},
        {"mask broadcast heads", fwd_mask_broadcast_heads},
        {"mask broadcast rows", fwd_mask_broadcast_rows},
        {"mask transposed", fwd_mask_transposed},
        {"causal top-left", fwd_causal_top_left},
        {"causal bottom-right", fwd_causal_bottom_right},
        {"masked rows accurate", fwd_masked_rows_accurate},
        {"masked rows inf-as-zero", fwd_masked_rows_inf_as_zero},
        {"causal top-left Sq > Sk", fwd_causal_top_left_short_keys},
        {"no scale", fwd_no_scale},
        {"device scale inverted", fwd_device_scale_inverted},
        {"device scale bf16", fwd_device_scale_bf16},
        {"host scale inverted", fwd_host_scale_inverted},
        {"gqa", fwd_gqa},
        {"mqa decode", fwd_mqa_decode},
        {"quant s8 per tensor", fwd_quant_s8_per_tensor},
        {"quant u8 per group", fwd_quant_u8_per_group},
        {"quant 4-bit", fwd_quant_4bit},
        {"quant u4 K only", fwd_quant_u4_k_only},
        {"dropout host", fwd_dropout_host},
        {"dropout device", fwd_dropout_device},
        {"f16 accumulation", fwd_f16_accumulation},
};
#define FORWARD_VARIANTS ((int)(sizeof(forward_variants) / sizeof(forward_variants[0])))

START_TEST(test_forward_variant)
{
    attn_case_t c;
    forward_variants[_i].setup(&c.desc);
    ck_assert_int_eq(case_alloc(&c, (uint64_t)_i + 1, NULL), 0);
    check_forward(&c);
    case_free(&c);
}
END_TEST

/* Specific answers the oracle would share with ref if both were wrong. */
START_TEST(test_forward_known_values)
{
    attn_case_t c;
    problem_init(&c.desc, TRAIN, 1, 1, 1, 2, 2, 1, F32, F32);
    ck_assert_int_eq(case_alloc(&c, 7, NULL), 0);
    float *q = (float *)c.args.q, *k = (float *)c.args.k, *v = (float *)c.args.v;
    q[0] = 0.0f; /* uniform weights */
    q[1] = 4.0f; /* scores 0 and 4 * 0.25 * 4 = 4 */
    k[0] = 0.0f;
    k[1] = 4.0f;
    v[0] = 1.0f;
    v[1] = 3.0f;
    ck_assert_run(&c.desc, &c.args);
    const float *o = c.args.dst, *lse = c.args.workspace;
    ck_assert_float_eq_tol(o[0], 2.0f, 1e-6f);
    ck_assert_float_eq_tol(lse[0], (float)log(2.0), 1e-6f);
    double w = 1.0 / (1.0 + exp(-4.0)); /* softmax weight of key 1 */
    ck_assert_float_eq_tol(o[1], (float)(1.0 * (1 - w) + 3.0 * w), 1e-6f);
    ck_assert_float_eq_tol(lse[1], (float)(4.0 + log(1.0 + exp(-4.0))), 1e-6f);
    case_free(&c);
}
END_TEST

/* Outputs are rounded to nearest even, once: with one key, O = V exactly, so
 * f32 values of V show how f16 and bf16 outputs round. */
START_TEST(test_output_rounding)
{
    const double f16_in[] = {1 + 0x1p-11,
                             1 + 3 * 0x1p-11,
                             1 + 0x1p-11 + 0x1p-20,
                             -(1 + 0x1p-11 + 0x1p-20),
                             65520,
                             65519,
                             1.5 * 0x1p-24,
                             0x1p-25,
                             0x1p-25 + 0x1p-30,
                             (double)1e-10f};
    const double f16_out[] = {1,     1 + 0x1p-9, 1 + 0x1p-10, -(1 + 0x1p-10), INFINITY,
                              65504, 0x1p-23,    0,           0x1p-24,        0};
    const double bf16_in[] = {1 + 0x1p-8,
                              1 + 3 * 0x1p-8,
                              1 + 0x1p-8 + 0x1p-20,
                              0x1.fffffep127,
                              0x1p-130,
                              0x1p-134,
                              3 * 0x1p-134,
                              -3 * 0x1p-134,
                              NAN,
                              -(1 + 0x1p-8 + 0x1p-20)};
    const double bf16_out[] = {1, 1 + 0x1p-6, 1 + 0x1p-7, INFINITY, 0x1p-130,
                               0, 0x1p-132,   -0x1p-132,  NAN,      -(1 + 0x1p-7)};
    const sdpa_dtype_t dtypes[2] = {F16, BF16};
    for (int t = 0; t < 2; t++) {
        const double *in = t == 0 ? f16_in : bf16_in, *want = t == 0 ? f16_out : bf16_out;
        attn_case_t c;
        problem_init(&c.desc, INF_, 1, 1, 1, 1, 1, 10, dtypes[t], F32);
        ck_assert_int_eq(case_alloc(&c, 1, NULL), 0);
        for (int d = 0; d < 10; d++)
            ((float *)c.args.v)[d] = (float)in[d];
        ck_assert_run(&c.desc, &c.args);
        for (int d = 0; d < 10; d++) {
            double got = elem_get(c.args.dst, d, dtypes[t]);
            ck_assert_msg(got == want[d] || (isnan(got) && isnan(want[d])),
                          "%s: %.17g stored as %.17g, expected %.17g", t == 0 ? "f16" : "bf16",
                          in[d], got, want[d]);
        }
        case_free(&c);
    }
}
END_TEST

/* A fully masked row: O is NaN (accurate) or 0 (inf-as-zero); its
 * log-sum-exp is -inf in both modes. */
START_TEST(test_fully_masked_rows)
{
    for (int inf_as_zero = 0; inf_as_zero < 2; inf_as_zero++) {
        attn_case_t c;
        fwd_masked_rows_accurate(&c.desc);
        if (inf_as_zero)
            c.desc.softmax_kind = SDPA_SOFTMAX_INF_AS_ZERO;
        ck_assert_int_eq(case_alloc(&c, 3, NULL), 0);
        ck_assert_run(&c.desc, &c.args);
        const float *o = c.args.dst, *lse = c.args.workspace;
        /* Sq 9, Sk 5: rows 0..3 see no key. */
        for (int i = 0; i < 4; i++) {
            ck_assert(inf_as_zero ? o[i * 16] == 0.0f : isnan(o[i * 16]));
            ck_assert(isinf(lse[i]) && lse[i] < 0);
        }
        ck_assert(isfinite(o[4 * 16]) && isfinite(lse[4]));
        case_free(&c);
    }
}
END_TEST

/* Only the elements a strided output addresses are written. */
START_TEST(test_strided_output_gaps_untouched)
{
    attn_case_t c;
    fwd_strides(&c.desc);
    ck_assert_int_eq(case_alloc(&c, 11, NULL), 0);
    ck_assert_run(&c.desc, &c.args);
    const uint16_t *o = c.args.dst;
    const sdpa_tensor_desc_t *t = &c.desc.dst;
    size_t elements = tensor_bytes(t) / 2;
    uint8_t *addressed = calloc(elements, 1);
    ck_assert_ptr_nonnull(addressed);
    for (int64_t b = 0; b < 2; b++)
        for (int64_t h = 0; h < 2; h++)
            for (int64_t i = 0; i < 5; i++)
                for (int64_t d = 0; d < 8; d++)
                    addressed[b * t->strides[0] + h * t->strides[1] + i * t->strides[2] + d] = 1;
    for (size_t e = 0; e < elements; e++)
        if (!addressed[e])
            ck_assert_uint_eq(o[e], 0xffffu);
    free(addressed);
    case_free(&c);
}
END_TEST

/* B2 H8 S512 D128 bf16 causal, the size the ze harness compares at. */
START_TEST(test_forward_large)
{
    attn_case_t c;
    problem_init(&c.desc, TRAIN, 2, 8, 8, 512, 512, 128, BF16, BF16);
    c.desc.mask_kind = SDPA_MASK_CAUSAL_BOTTOM_RIGHT;
    ck_assert_int_eq(case_alloc(&c, 99, NULL), 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ck_assert_run(&c.desc, &c.args);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    printf("ref forward B2 H8 S512 D128 causal: %.3f s\n",
           (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    oracle_t o;
    oracle_init(&o, &c);
    double *out = doubles(o.B * o.Hq * o.Sq * o.D);
    oracle_forward(&o, out, NULL);
    ck_assert(compare_rounded("O", &c.desc.dst, c.args.dst, out));
    free(out);
    oracle_free(&o);
    case_free(&c);
}
END_TEST

/* ------------------------------------------------------------------------- */
/* Backward                                                                  */
/* ------------------------------------------------------------------------- */

/* Fills O and the workspace as a training step would, then runs backward. */
static void run_training_step(attn_case_t *c)
{
    sdpa_problem_desc_t fwd = c->desc;
    fwd.prop_kind = SDPA_FORWARD_TRAINING;
    ck_assert_run(&fwd, &c->args);
    ck_assert_run(&c->desc, &c->args);
}

/* Compares ref's gradients with the oracle's analytic ones. */
static void check_backward_analytic(attn_case_t *c)
{
    const sdpa_problem_desc_t *d = &c->desc;
    oracle_t o;
    oracle_init(&o, c);
    double *dq = doubles(o.B * o.Hq * o.Sq * o.D), *dk = doubles(o.B * o.Hkv * o.Sk * o.D);
    double *dv = doubles(o.B * o.Hkv * o.Sk * o.D), *ds = doubles(o.B * o.Hq * o.Sq * o.Sk);
    oracle_backward(&o, dq, dk, dv, ds);
    ck_assert(compare_rounded("dQ", &d->diff_q, c->args.diff_q, dq));
    ck_assert(compare_rounded("dK", &d->diff_k, c->args.diff_k, dk));
    ck_assert(compare_rounded("dV", &d->diff_v, c->args.diff_v, dv));
    if (d->ds.dtype != SDPA_DTYPE_UNDEF)
        ck_assert(compare_rounded("dS", &d->ds, c->args.ds, ds));
    free(dq);
    free(dk);
    free(dv);
    free(ds);
    oracle_free(&o);
}

/* Central difference of the oracle's loss with respect to x[index]. */
static double finite_difference(oracle_t *o, double *x, int64_t index)
{
    const double saved = x[index], h = 1e-5 * (fabs(saved) > 1 ? fabs(saved) : 1.0);
    x[index] = saved + h;
    double up = oracle_loss(o);
    x[index] = saved - h;
    double down = oracle_loss(o);
    x[index] = saved;
    return (up - down) / (2 * h);
}

/* Checks tensor t (ref's gradient) and the oracle's analytic gradient
 * against finite differences over every element of x. */
static void check_against_fd(const char *what, oracle_t *o, double *x, int64_t count,
                             const sdpa_tensor_desc_t *t, const void *got, const double *analytic)
{
    double *fd = doubles(count);
    for (int64_t e = 0; e < count; e++) {
        fd[e] = isinf(x[e]) ? 0.0 : finite_difference(o, x, e);
        ck_assert_msg(close_enough(analytic[e], fd[e], 1e-6, 1e-8),
                      "oracle %s[%lld]: analytic %.12g, finite difference %.12g", what,
                      (long long)e, analytic[e], fd[e]);
    }
    ck_assert(compare_tensor(what, t, got, fd, 1e-6, 1e-7, NULL));
    free(fd);
}

static void check_backward_fd(attn_case_t *c)
{
    const sdpa_problem_desc_t *d = &c->desc;
    oracle_t o;
    oracle_init(&o, c);
    const int64_t nq = o.B * o.Hq * o.Sq * o.D, nk = o.B * o.Hkv * o.Sk * o.D;
    double *dq = doubles(nq), *dk = doubles(nk), *dv = doubles(nk),
           *ds = doubles(o.B * o.Hq * o.Sq * o.Sk);
    oracle_backward(&o, dq, dk, dv, ds);
    check_against_fd("dQ", &o, o.q, nq, &d->diff_q, c->args.diff_q, dq);
    check_against_fd("dK", &o, o.k, nk, &d->diff_k, c->args.diff_k, dk);
    check_against_fd("dV", &o, o.v, nk, &d->diff_v, c->args.diff_v, dv);
    /* dS is the gradient with respect to the additive mask (full mask only):
     * the oracle's bias holds mask + causal -inf. */
    if (d->ds.dtype != SDPA_DTYPE_UNDEF)
        check_against_fd("dS", &o, o.bias, o.B * o.Hq * o.Sq * o.Sk, &d->ds, c->args.ds, ds);
    free(dq);
    free(dk);
    free(dv);
    free(ds);
    oracle_free(&o);
}

static void bwd_fd_mask(sdpa_problem_desc_t *d)
{
    problem_init(d, SDPA_BACKWARD, 1, 2, 2, 4, 5, 3, F32, F32);
    d->mask_kind = SDPA_MASK_BUFFER;
    d->mask = dense_tensor(F32, 1, 2, 4, 5);
    d->ds = dense_tensor(F32, 1, 2, 4, 5);
}
static void bwd_fd_gqa_causal(sdpa_problem_desc_t *d)
{
    problem_init(d, SDPA_BACKWARD, 1, 4, 2, 3, 5, 4, F32, F32);
    d->mask_kind = SDPA_MASK_CAUSAL_BOTTOM_RIGHT;
    d->ds = dense_tensor(F32, 1, 4, 3, 5);
}
static void bwd_fd_dropout(sdpa_problem_desc_t *d)
{
    problem_init(d, SDPA_BACKWARD, 1, 2, 1, 4, 6, 3, F32, F32);
    d->dropout = (sdpa_dropout_desc_t){.enabled = 1, .host_scalars = 1, .with_offset = 1};
    d->ds = dense_tensor(F32, 1, 2, 4, 6);
}
static void bwd_fd_device_scale_masked_rows(sdpa_problem_desc_t *d)
{
    problem_init(d, SDPA_BACKWARD, 1, 1, 1, 5, 3, 4, F32, F32);
    d->scale_kind = SDPA_SCALE_DEVICE;
    d->scale_dtype = F32;
    d->invert_scale = 1;
    d->mask_kind = SDPA_MASK_CAUSAL_BOTTOM_RIGHT; /* rows 0, 1 see nothing */
    d->softmax_kind = SDPA_SOFTMAX_INF_AS_ZERO;
}
static void bwd_fd_strided(sdpa_problem_desc_t *d)
{
    problem_init(d, SDPA_BACKWARD, 2, 2, 2, 3, 4, 3, F32, F32);
    int64_t k_t[4] = {2 * 3 * 4, 3 * 4, 1, 4};
    memcpy(d->k.strides, k_t, sizeof(k_t));
    memcpy(d->diff_k.strides, k_t, sizeof(k_t));
    d->mask_kind = SDPA_MASK_BUFFER;
    d->mask = dense_tensor(F32, 1, 2, 1, 4);
}

static const variant_t fd_variants[] = {
        {"mask + dS", bwd_fd_mask},
        {"gqa causal", bwd_fd_gqa_causal},
        {"dropout", bwd_fd_dropout},
        {"device scale, masked rows", bwd_fd_device_scale_masked_rows},
        {"strides, broadcast mask", bwd_fd_strided},
};
#define FD_VARIANTS ((int)(sizeof(fd_variants) / sizeof(fd_variants[0])))

START_TEST(test_backward_finite_differences)
{
    attn_case_t c;
    fd_variants[_i].setup(&c.desc);
    ck_assert_int_eq(case_alloc(&c, (uint64_t)_i + 100, NULL), 0);
    run_training_step(&c);
    check_backward_fd(&c);
    case_free(&c);
}
END_TEST

static void bwd_bf16_gqa_ds(sdpa_problem_desc_t *d)
{
    problem_init(d, SDPA_BACKWARD, 2, 4, 2, 9, 13, 32, BF16, BF16);
    d->ds = dense_tensor(BF16, 2, 4, 9, 13);
    d->mask_kind = SDPA_MASK_CAUSAL_TOP_LEFT;
}
static void bwd_f16_everything(sdpa_problem_desc_t *d)
{
    problem_init(d, SDPA_BACKWARD, 1, 2, 2, 7, 10, 16, F16, F16);
    int64_t k_t[4] = {2 * 16 * 10, 16 * 10, 1, 10};
    memcpy(d->k.strides, k_t, sizeof(k_t));
    d->mask_kind = SDPA_MASK_BUFFER;
    d->mask = dense_tensor(F16, 1, 2, 1, 10);
    d->mask.strides[2] = 0;
    d->scale_kind = SDPA_SCALE_DEVICE;
    d->scale_dtype = BF16;
    d->dropout = (sdpa_dropout_desc_t){.enabled = 1, .host_scalars = 0, .with_offset = 1};
    d->ds = dense_tensor(F32, 1, 2, 7, 10);
    d->deterministic = 1;
}
static void bwd_f32_mqa(sdpa_problem_desc_t *d)
{
    problem_init(d, SDPA_BACKWARD, 1, 4, 1, 6, 8, 8, F32, F32);
    d->softmax_kind = SDPA_SOFTMAX_INF_AS_ZERO;
}

static const variant_t analytic_variants[] = {
        {"bf16 gqa dS", bwd_bf16_gqa_ds},
        {"f16 strides mask device scale dropout", bwd_f16_everything},
        {"f32 mqa", bwd_f32_mqa},
};
#define ANALYTIC_VARIANTS ((int)(sizeof(analytic_variants) / sizeof(analytic_variants[0])))

START_TEST(test_backward_analytic)
{
    attn_case_t c;
    analytic_variants[_i].setup(&c.desc);
    ck_assert_int_eq(case_alloc(&c, (uint64_t)_i + 200, NULL), 0);
    run_training_step(&c);
    check_backward_analytic(&c);
    case_free(&c);
}
END_TEST

/* Two runs give bit-identical gradients. */
START_TEST(test_backward_deterministic)
{
    attn_case_t c;
    bwd_bf16_gqa_ds(&c.desc);
    c.desc.deterministic = 1;
    ck_assert_int_eq(case_alloc(&c, 5, NULL), 0);
    run_training_step(&c);
    size_t bytes = tensor_bytes(&c.desc.diff_k);
    void *first = malloc(bytes);
    ck_assert_ptr_nonnull(first);
    memcpy(first, c.args.diff_k, bytes);
    memset(c.args.diff_k, 0, bytes);
    ck_assert_run(&c.desc, &c.args);
    ck_assert_int_eq(memcmp(first, c.args.diff_k, bytes), 0);
    free(first);
    case_free(&c);
}
END_TEST

/* ------------------------------------------------------------------------- */
/* Queries and ref-specific rules                                            */
/* ------------------------------------------------------------------------- */

START_TEST(test_features)
{
    sdpa_features_t f = {.struct_size = sizeof(f), .struct_version = SDPA_FEATURES_VERSION};
    ck_assert_int_eq(iface->context_get_features(ctx, &f), SDPA_SUCCESS);
    ck_assert_str_eq(f.device_name, "host (ref)");
    ck_assert_uint_eq(f.max_head_size, 576);
    ck_assert_uint_eq(f.subgroup_size, 0);
    ck_assert(f.has_f16 && f.has_bf16 && f.has_backward && f.has_deterministic_backward &&
              f.has_quantized_kv && f.has_dropout);
    f.struct_size = 8;
    ck_assert_int_eq(iface->context_get_features(ctx, &f), SDPA_ERROR_INVALID_STRUCT);
    ck_assert_ptr_nonnull(strstr(iface->last_error(), "struct_size"));
}
END_TEST

START_TEST(test_queries)
{
    uint64_t modules = 99;
    ck_assert_int_eq(iface->context_query(ctx, SDPA_QUERY_MODULES_BUILT, &modules, sizeof(modules)),
                     SDPA_SUCCESS);
    ck_assert_uint_eq(modules, 0);
    ck_assert_int_eq(
            iface->context_query(ctx, SDPA_QUERY_WORKSPACE_BYTES, &modules, sizeof(modules)),
            SDPA_ERROR_INVALID_ARGUMENT);
    /* The host builds nothing, so it caches nothing. */
    const sdpa_query_t cache_queries[2] = {SDPA_QUERY_MODULE_CACHE_HITS,
                                           SDPA_QUERY_MODULE_CACHE_MISSES};
    for (int i = 0; i < 2; i++) {
        modules = 99;
        ck_assert_int_eq(iface->context_query(ctx, cache_queries[i], &modules, sizeof(modules)),
                         SDPA_SUCCESS);
        ck_assert_uint_eq(modules, 0);
        ck_assert_int_eq(iface->context_query(ctx, cache_queries[i], &modules, 4),
                         SDPA_ERROR_INVALID_ARGUMENT);
        ck_assert_ptr_nonnull(strstr(iface->last_error(), "SDPA_QUERY_MODULE_CACHE_"));
    }

    sdpa_problem_desc_t d;
    problem_init(&d, TRAIN, 2, 4, 2, 7, 9, 16, F16, F16);
    sdpa_primitive_t *prim = NULL;
    ck_assert_int_eq(iface->primitive_create(ctx, &d, &prim), SDPA_SUCCESS);
    size_t bytes = 0;
    ck_assert_int_eq(
            iface->primitive_query(prim, SDPA_QUERY_WORKSPACE_BYTES, &bytes, sizeof(bytes)),
            SDPA_SUCCESS);
    ck_assert_uint_eq(bytes, 2 * 4 * 7 * sizeof(float));
    ck_assert_int_eq(iface->primitive_query(prim, SDPA_QUERY_SCRATCH_BYTES, &bytes, sizeof(bytes)),
                     SDPA_SUCCESS);
    ck_assert_uint_eq(bytes, 0);
    char config[64];
    ck_assert_int_eq(iface->primitive_query(prim, SDPA_QUERY_CONFIG_STRING, config, sizeof(config)),
                     SDPA_SUCCESS);
    ck_assert_str_eq(config, "ref fwd d16 host double");
    ck_assert_int_eq(iface->primitive_query(prim, SDPA_QUERY_CONFIG_STRING, config, 4),
                     SDPA_SUCCESS);
    ck_assert_str_eq(config, "ref");
    ck_assert_int_eq(iface->primitive_query(prim, SDPA_QUERY_WORKSPACE_BYTES, &bytes, 2),
                     SDPA_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(iface->primitive_query(prim, (sdpa_query_t)77, &bytes, sizeof(bytes)),
                     SDPA_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(iface->last_error(), "what = 77"));
    ck_assert_int_eq(iface->primitive_query(prim, SDPA_QUERY_MODULE_CACHE_MISSES, &bytes,
                                            sizeof(bytes)),
                     SDPA_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(iface->last_error(), "SDPA_QUERY_MODULE_CACHE_MISSES"));
    iface->primitive_destroy(prim);

    d.prop_kind = INF_;
    ck_assert_int_eq(iface->primitive_create(ctx, &d, &prim), SDPA_SUCCESS);
    ck_assert_int_eq(
            iface->primitive_query(prim, SDPA_QUERY_WORKSPACE_BYTES, &bytes, sizeof(bytes)),
            SDPA_SUCCESS);
    ck_assert_uint_eq(bytes, 0);
    iface->primitive_destroy(prim);
    iface->primitive_destroy(NULL);
    iface->context_destroy(NULL);
}
END_TEST

/* Without a ze_context there are no events to wait on or signal. */
START_TEST(test_events_need_ze_context)
{
    attn_case_t c;
    fwd_f32(&c.desc);
    ck_assert_int_eq(case_alloc(&c, 1, NULL), 0);
    c.args.signal_event = (ze_event_handle_t)&c;
    ck_assert_int_eq(run(&c.desc, &c.args), SDPA_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(iface->last_error(), "signal_event"));
    c.args.signal_event = NULL;
    ze_event_handle_t wait = (ze_event_handle_t)&c;
    c.args.wait_events = &wait;
    c.args.num_wait_events = 1;
    ck_assert_int_eq(run(&c.desc, &c.args), SDPA_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(iface->last_error(), "num_wait_events"));
    case_free(&c);
}
END_TEST

/* The descriptor is copied: the caller may free it after primitive_create. */
START_TEST(test_desc_is_copied)
{
    attn_case_t c;
    fwd_mask_full(&c.desc);
    ck_assert_int_eq(case_alloc(&c, 4, NULL), 0);
    sdpa_problem_desc_t *heap = malloc(sizeof(*heap));
    ck_assert_ptr_nonnull(heap);
    *heap = c.desc;
    sdpa_primitive_t *prim = NULL;
    ck_assert_int_eq(iface->primitive_create(ctx, heap, &prim), SDPA_SUCCESS);
    memset(heap, 0xa5, sizeof(*heap));
    free(heap);
    ck_assert_int_eq(iface->primitive_execute(prim, &c.args), SDPA_SUCCESS);
    iface->primitive_destroy(prim);
    oracle_t o;
    oracle_init(&o, &c);
    double *out = doubles(o.B * o.Hq * o.Sq * o.D);
    oracle_forward(&o, out, NULL);
    ck_assert(compare_rounded("O", &c.desc.dst, c.args.dst, out));
    free(out);
    oracle_free(&o);
    case_free(&c);
}
END_TEST

/* A context destroyed before its primitives (sdpa.h, "Lifetime"): they
 * refuse to execute, still answer queries, and can be destroyed. */
START_TEST(test_context_destroyed_first)
{
    sdpa_context_desc_t desc = {.struct_size = sizeof(desc),
                                .struct_version = SDPA_CONTEXT_DESC_VERSION};
    sdpa_context_t *early;
    ck_assert_int_eq(iface->context_create(&desc, &early), SDPA_SUCCESS);
    attn_case_t c;
    fwd_f32(&c.desc);
    ck_assert_int_eq(case_alloc(&c, 12, NULL), 0);
    sdpa_primitive_t *kept, *dropped;
    ck_assert_int_eq(iface->primitive_create(early, &c.desc, &kept), SDPA_SUCCESS);
    ck_assert_int_eq(iface->primitive_create(early, &c.desc, &dropped), SDPA_SUCCESS);
    iface->primitive_destroy(dropped); /* one leaves the context's list first */
    ck_assert_int_eq(iface->primitive_execute(kept, &c.args), SDPA_SUCCESS);
    iface->context_destroy(early);
    ck_assert_int_eq(iface->primitive_execute(kept, &c.args), SDPA_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(iface->last_error(), "outlived its context"));
    size_t bytes = 1;
    ck_assert_int_eq(
            iface->primitive_query(kept, SDPA_QUERY_WORKSPACE_BYTES, &bytes, sizeof(bytes)),
            SDPA_SUCCESS);
    ck_assert_uint_eq(bytes, 0);
    iface->primitive_destroy(kept);
    case_free(&c);
}
END_TEST

/* A failure on another thread: its own message, none of the caller's. */
static void *fail_on_this_thread(void *seen)
{
    char *message = seen;
    int fresh = iface->last_error()[0] == '\0';
    sdpa_primitive_t *prim = NULL;
    sdpa_status_t status = iface->primitive_create(ctx, NULL, &prim);
    snprintf(message, 256, "%s", fresh && status != SDPA_SUCCESS ? iface->last_error() : "");
    return NULL;
}

/* last_error() describes the calling thread's most recent call (sdpa.h,
 * "Conventions"): "" once a call succeeds, the destroy functions leave it. */
START_TEST(test_last_error_follows_each_call)
{
    sdpa_primitive_t *prim = NULL;
    ck_assert_int_eq(iface->primitive_create(ctx, NULL, &prim), SDPA_ERROR_INVALID_ARGUMENT);
    char failed[256];
    snprintf(failed, sizeof(failed), "%s", iface->last_error());
    ck_assert_ptr_nonnull(strstr(failed, "desc"));
    iface->primitive_destroy(NULL);
    iface->context_destroy(NULL);
    ck_assert_str_eq(iface->last_error(), failed);

    char other[256] = "";
    pthread_t thread;
    ck_assert_int_eq(pthread_create(&thread, NULL, fail_on_this_thread, other), 0);
    ck_assert_int_eq(pthread_join(thread, NULL), 0);
    ck_assert_ptr_nonnull(strstr(other, "desc"));
    ck_assert_str_eq(iface->last_error(), failed);

    uint64_t built = 1;
    ck_assert_int_eq(iface->context_query(ctx, SDPA_QUERY_MODULES_BUILT, &built, sizeof(built)),
                     SDPA_SUCCESS);
    ck_assert_str_eq(iface->last_error(), "");
}
END_TEST

static Suite *ref_suite(void)
{
    Suite *s = suite_create("ref");
    TCase *forward = tcase_create("forward");
    tcase_add_unchecked_fixture(forward, open_ref, close_ref);
    tcase_add_loop_test(forward, test_forward_variant, 0, FORWARD_VARIANTS);
    tcase_add_test(forward, test_forward_known_values);
    tcase_add_test(forward, test_fully_masked_rows);
    tcase_add_test(forward, test_output_rounding);
    tcase_add_test(forward, test_strided_output_gaps_untouched);
    suite_add_tcase(s, forward);

    TCase *large = tcase_create("large");
    tcase_add_unchecked_fixture(large, open_ref, close_ref);
    tcase_set_timeout(large, 300); /* about 2 s when the machine is idle */
    tcase_add_test(large, test_forward_large);
    suite_add_tcase(s, large);

    TCase *backward = tcase_create("backward");
    tcase_add_unchecked_fixture(backward, open_ref, close_ref);
    tcase_set_timeout(backward, 60);
    tcase_add_loop_test(backward, test_backward_finite_differences, 0, FD_VARIANTS);
    tcase_add_loop_test(backward, test_backward_analytic, 0, ANALYTIC_VARIANTS);
    tcase_add_test(backward, test_backward_deterministic);
    suite_add_tcase(s, backward);

    TCase *api = tcase_create("api");
    tcase_add_unchecked_fixture(api, open_ref, close_ref);
    tcase_add_test(api, test_features);
    tcase_add_test(api, test_queries);
    tcase_add_test(api, test_events_need_ze_context);
    tcase_add_test(api, test_desc_is_copied);
    tcase_add_test(api, test_context_destroyed_first);
    tcase_add_test(api, test_last_error_follows_each_call);
    suite_add_tcase(s, api);
    return s;
}

int main(void)
{
    return test_run_suite(ref_suite());
}
