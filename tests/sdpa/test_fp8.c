/*
 * test_fp8.c - an FP8 KV cache (ABI 1.2: K and V in f8_e4m3 or f8_e5m2,
 * scales per tensor, per K/V head or none) on the device:
 *
 *   - the kernels' FP8 decoder (spirv/common/sdpa_fp8.h) on all 256 codes
 *     of each format, through the portable forward and the decode kernel
 *     (one key: O is V exactly), against the tests' own decoder
 *     (tests/abi/elements.c), and the ref backend's (the oracle's) too;
 *   - attention with FP8 K/V on ze and on ref, each against the
 *     independent double-precision oracle of tests/abi/llm_case.c: dense
 *     and paged, decode (Sq 1) and prefill, GQA and MQA, causal, split-KV,
 *     f32, f16 and bf16 queries, the portable kernel with K and V staged
 *     and read from global memory, and the decode kernel;
 *   - what is refused: FP8 in backward, zero points with FP8.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi_util.h"
#include "elements.h"
#include "llm_case.h"
#include "problem.h"
#include "sdpa.h"
#include "ze_env.h"

/* Cases the fast path ran (SDPA_ZE_KERNELS=xe must exercise it). */
static int xe_runs;

static const test_allocator_t shared_allocator = {suite_shared_alloc, suite_shared_release, NULL};

/* f32 arithmetic on the device, as in test_decode.c: llm_compare's
 * tolerance in units of 2^-24 times the magnitude of a row's terms. FP8
 * values and their scales (k / 256) multiply exactly in f32, so FP8 adds
 * no error of its own. */
#define DEVICE_TOLERANCE 256.0

/* On the fast path (SDPA_ZE_KERNELS=xe, sdpa/test_fp8@xe.rerun) K, V and P
 * are rounded to Q's type, the matrix engine's operands: 2^-11 (f16) or
 * 2^-8 (bf16) relative, 2^13 or 2^16 units of 2^-24, for each of the
 * three. */
static double tolerance(sdpa_dtype_t qdt)
{
    if (!getenv("SDPA_ZE_KERNELS") || qdt == SDPA_DTYPE_F32)
        return DEVICE_TOLERANCE;
    return 4.0 * (qdt == SDPA_DTYPE_F16 ? 8192.0 : 65536.0);
}

#define E4 SDPA_DTYPE_F8_E4M3
#define E5 SDPA_DTYPE_F8_E5M2
#define F32 SDPA_DTYPE_F32
#define F16 SDPA_DTYPE_F16
#define BF16 SDPA_DTYPE_BF16
#define BR SDPA_MASK_CAUSAL_BOTTOM_RIGHT
#define TL SDPA_MASK_CAUSAL_TOP_LEFT
#define NONE SDPA_MASK_NONE
#define HEAD LLM_QUANT_PER_HEAD
#define UNSCALED LLM_QUANT_NONE

static const sdpa_dtype_t fp8_dtypes[2] = {SDPA_DTYPE_F8_E4M3, SDPA_DTYPE_F8_E5M2};

/* SDPA_ZE_DECODE for the next primitive: "0" the portable kernel, "1" the
 * decode kernel where it serves, NULL the default. */
static void decode_mode(const char *mode)
{
    if (mode)
        ck_assert_int_eq(setenv("SDPA_ZE_DECODE", mode, 1), 0);
    else
        ck_assert_int_eq(unsetenv("SDPA_ZE_DECODE"), 0);
}

/* Asserts that ze's configuration string for p starts with prefix. */
static void expect_kernel(const sdpa_problem_desc_t *p, const char *prefix)
{
    char config[256];
    test_config_string(&suite_env, p, config, sizeof(config));
    ck_assert_msg(strncmp(config, prefix, strlen(prefix)) == 0, "config \"%s\", expected \"%s...\"",
                  config, prefix);
}

/* ------------------------------------------------------------------------- */
/* The decoder: every code                                                   */
/* ------------------------------------------------------------------------- */

/* Two heads of sq queries (of zeros), one key, D = 128, V holding codes
 * h * 128 + d: every row of O is its head's V, so O[h][i][d] is that code
 * decoded (times a per-tensor scale of 1), in Q's dtype qdt (f32, or f16,
 * which holds every FP8 value of both formats exactly). Runs on backend
 * be. */
static void decode_all_codes(const sdpa_backend_iface_t *be, sdpa_context_t *ctx,
                             sdpa_dtype_t dtype, sdpa_dtype_t qdt, int64_t sq, const char *kernel)
{
    sdpa_problem_desc_t p;
    memset(&p, 0, sizeof(p));
    p.struct_size = sizeof(p);
    p.struct_version = SDPA_PROBLEM_DESC_VERSION;
    p.prop_kind = SDPA_FORWARD_INFERENCE;
    p.q = p.dst = dense_tensor(qdt, 1, 2, sq, 128);
    p.k = p.v = dense_tensor(dtype, 1, 2, 1, 128);
    p.scale_kind = SDPA_SCALE_NONE;
    p.v_quant = (sdpa_quant_desc_t){.scales = SDPA_QUANT_PER_TENSOR,
                                    .scales_dtype = SDPA_DTYPE_F32};
    p.num_splits = 1;
    if (kernel)
        expect_kernel(&p, kernel);

    const size_t o_bytes = (size_t)sq * 256 * sizeof(float);
    void *q = test_alloc(&suite_env, o_bytes);
    uint8_t *k = test_alloc(&suite_env, 256), *v = test_alloc(&suite_env, 256);
    void *dst = test_alloc(&suite_env, o_bytes);
    float *scale = test_alloc(&suite_env, sizeof(float));
    *scale = 1.0f;
    for (int code = 0; code < 256; code++)
        v[code] = (uint8_t)code;
    memset(dst, 0xff, o_bytes);
    sdpa_exec_args_t a;
    memset(&a, 0, sizeof(a));
    a.struct_size = sizeof(a);
    a.struct_version = SDPA_EXEC_ARGS_VERSION;
    a.q = q;
    a.k = k;
    a.v = v;
    a.dst = dst;
    a.v_scales = scale;
    sdpa_status_t status = test_run_once(be, ctx, &p, &a);
    ck_assert_msg(status == SDPA_SUCCESS, "%s: %s", sdpa_status_name(status), be->last_error());
    for (int64_t i = 0; i < sq * 256; i++) {
        const uint8_t code = (uint8_t)(i / (sq * 128) * 128 + i % 128);
        const double want = fp8_value(code, dtype);
        const double got = elem_get(dst, i, qdt);
        ck_assert_msg(isnan(want) ? isnan(got) : got == want,
                      "%s %s code 0x%02x (row %lld): decoded %.9g, the format says %.9g",
                      be->name, sdpa_dtype_name(dtype), code, (long long)(i / 128), got, want);
    }
    test_free(&suite_env, q);
    test_free(&suite_env, k);
    test_free(&suite_env, v);
    test_free(&suite_env, dst);
    test_free(&suite_env, scale);
}

/* _i: format (e4m3, e5m2) x kernel: the portable one and the decode one in
 * f32, then f16 queries (the fast path's operands under SDPA_ZE_KERNELS);
 * ref once per format. */
START_TEST(test_every_code)
{
    const sdpa_dtype_t dtype = fp8_dtypes[_i % 2];
    const int path = _i / 2;
    const char *kernels = getenv("SDPA_ZE_KERNELS");
    decode_mode(path == 1 ? "1" : "0");
    /* 16 queries for the fast path, which leaves single ones to others. */
    decode_all_codes(suite_env.ze, suite_env.ze_ctx, dtype, path == 2 ? F16 : F32,
                     path == 2 ? 16 : 1,
                     path == 1   ? "fwd decode"
                     : kernels   ? (path == 2 ? "fwd xe" : NULL)
                                 : "fwd d");
    decode_mode(NULL);
    if (path == 0)
        decode_all_codes(suite_env.ref, suite_env.ref_ctx, dtype, F32, 1, NULL);
}
END_TEST

/* The same values from the tests' decoder, checked at the formats' corners
 * (so that the comparison above is against the formats, not against a
 * shared mistake). */
START_TEST(test_host_decoder_corners)
{
    const sdpa_dtype_t e4 = SDPA_DTYPE_F8_E4M3, e5 = SDPA_DTYPE_F8_E5M2;
    ck_assert(fp8_value(0x7e, e4) == 448.0);         /* largest */
    ck_assert(fp8_value(0x01, e4) == ldexp(1, -9));  /* smallest subnormal */
    ck_assert(fp8_value(0x07, e4) == 7 * ldexp(1, -9));
    ck_assert(fp8_value(0x08, e4) == ldexp(1, -6));  /* smallest normal */
    ck_assert(fp8_value(0x38, e4) == 1.0);
    ck_assert(isnan(fp8_value(0x7f, e4)) && isnan(fp8_value(0xff, e4)));
    ck_assert(fp8_value(0xfe, e4) == -448.0);
    ck_assert(fp8_value(0x7b, e5) == 57344.0);
    ck_assert(fp8_value(0x01, e5) == ldexp(1, -16));
    ck_assert(fp8_value(0x04, e5) == ldexp(1, -14));
    ck_assert(fp8_value(0x3c, e5) == 1.0);
    ck_assert(isinf(fp8_value(0x7c, e5)) && fp8_value(0xfc, e5) < 0);
    ck_assert(isnan(fp8_value(0x7d, e5)) && isnan(fp8_value(0xff, e5)));
}
END_TEST

/* ------------------------------------------------------------------------- */
/* Attention with FP8 K/V against the oracle                                 */
/* ------------------------------------------------------------------------- */

typedef struct fp8_case {
    llm_layout_t layout;
    sdpa_dtype_t qdt, kvdt;
    int64_t batch, q_heads, kv_heads, head_size, sq, sk[3];
    int64_t quant; /* llm_spec_t.quant_group: 0, LLM_QUANT_PER_HEAD, LLM_QUANT_NONE */
    sdpa_mask_kind_t mask;
    uint32_t num_splits;
    int training;
    const char *decode; /* SDPA_ZE_DECODE */
    const char *kernel; /* the configuration string's start */
} fp8_case_t;

static const fp8_case_t cases[] = {
        /* Dense prefill on the portable kernel (K and V staged), GQA 4/2. */
        {LLM_PADDED, F16, E4, 2, 4, 2, 16, 19, {37}, 0, BR, 1, 0, "0", "fwd d"},
        {LLM_PADDED, BF16, E5, 2, 4, 2, 16, 19, {37}, HEAD, TL, 1, 1, "0", "fwd d"},
        {LLM_PADDED, F32, E4, 1, 6, 3, 48, 33, {70}, UNSCALED, NONE, 1, 0, "0", "fwd d"},
        /* Dense decode: portable with K and V read from global memory (D
         * full), then the decode kernel, unsplit and split, MQA. */
        {LLM_PADDED, F16, E5, 2, 4, 2, 64, 1, {75}, HEAD, NONE, 1, 0, "0", "fwd d"},
        {LLM_PADDED, BF16, E4, 1, 8, 1, 64, 1, {200}, 0, NONE, 1, 1, "1", "fwd decode"},
        {LLM_PADDED, F32, E5, 2, 8, 2, 16, 1, {150}, HEAD, NONE, 4, 0, NULL, "fwd decode"},
        /* Paged: decode on both kernels, split, chunked prefill (causal). */
        {LLM_PAGED, F16, E4, 3, 4, 2, 16, 1, {33, 70, 5}, HEAD, NONE, 1, 0, "0", "fwd d"},
        {LLM_PAGED, BF16, E5, 3, 4, 2, 16, 1, {33, 70, 5}, 0, NONE, 1, 0, "1", "fwd decode"},
        {LLM_PAGED, F16, E5, 2, 8, 2, 32, 1, {150, 97}, UNSCALED, NONE, 3, 0, NULL, "fwd decode"},
        {LLM_PAGED, F32, E4, 2, 4, 2, 16, 5, {40, 23}, HEAD, BR, 1, 0, "0", "fwd d"},
        {LLM_PAGED, BF16, E4, 2, 4, 1, 32, 4, {50, 64}, HEAD, BR, 1, 0, "1", "fwd decode"},
};
#define CASES ((int)(sizeof(cases) / sizeof(cases[0])))

static llm_spec_t spec_of(const fp8_case_t *k)
{
    int64_t sq[LLM_MAX_BATCH], sk[LLM_MAX_BATCH];
    for (int64_t b = 0; b < k->batch; b++) {
        sq[b] = k->sq;
        sk[b] = k->sk[k->layout == LLM_PAGED ? b : 0];
    }
    llm_spec_t s = llm_spec_of(k->training ? SDPA_FORWARD_TRAINING : SDPA_FORWARD_INFERENCE,
                               k->layout, k->batch, sq, sk, k->qdt);
    s.kvdt = k->kvdt;
    s.q_heads = k->q_heads;
    s.kv_heads = k->kv_heads;
    s.head_size = k->head_size;
    s.quant_group = k->quant;
    s.mask_kind = k->mask;
    s.num_splits = k->num_splits;
    return s;
}

/* Case _i on ze (the kernel it names) and on ref, each against the oracle. */
START_TEST(test_against_oracle)
{
    const fp8_case_t *k = &cases[_i];
    const llm_spec_t spec = spec_of(k);
    llm_case_t c;
    llm_desc_init(&c, &spec);
    ck_assert_int_eq(llm_case_alloc(&c, 7100 + (uint64_t)_i, &shared_allocator), 0);
    decode_mode(k->decode);
    if (!getenv("SDPA_ZE_KERNELS"))
        expect_kernel(&c.c.desc, k->kernel);
    sdpa_status_t status = test_run_once(suite_env.ze, suite_env.ze_ctx, &c.c.desc, &c.c.args);
    decode_mode(NULL);
    ck_assert_msg(status == SDPA_SUCCESS, "case %d: %s: %s", _i, sdpa_status_name(status),
                  suite_env.ze->last_error());
    llm_expected_t e;
    ck_assert_int_eq(llm_expect(&c, &e), 0);
    ck_assert_msg(llm_compare(&c, &e, tolerance(k->qdt)), "case %d: ze differs from the oracle",
                  _i);
    /* ref, the oracle of the other suites, agrees with this one. */
    status = test_run_once(suite_env.ref, suite_env.ref_ctx, &c.c.desc, &c.c.args);
    ck_assert_msg(status == SDPA_SUCCESS, "case %d: ref: %s", _i, suite_env.ref->last_error());
    ck_assert_msg(llm_compare(&c, &e, 0), "case %d: ref differs from the oracle", _i);
    char config[256];
    test_config_string(&suite_env, &c.c.desc, config, sizeof(config));
    xe_runs += strncmp(config, "fwd xe", 6) == 0;
    printf("fp8 case %2d: %s %s q=%s B%lld H%lld/%lld D%lld Sq%lld splits %u: ok\n", _i,
           k->layout == LLM_PAGED ? "paged" : "dense", sdpa_dtype_name(k->kvdt),
           sdpa_dtype_name(k->qdt), (long long)k->batch, (long long)k->q_heads,
           (long long)k->kv_heads, (long long)k->head_size, (long long)k->sq, k->num_splits);
    llm_expected_free(&e);
    llm_case_free(&c);
}
END_TEST

/* ------------------------------------------------------------------------- */
/* Refusals and the features query                                           */
/* ------------------------------------------------------------------------- */

/* Creation of p on both backends fails with status and a message holding
 * needle. */
static void expect_refused(const sdpa_problem_desc_t *p, sdpa_status_t want, const char *needle)
{
    const sdpa_backend_iface_t *be[2] = {suite_env.ze, suite_env.ref};
    sdpa_context_t *ctx[2] = {suite_env.ze_ctx, suite_env.ref_ctx};
    for (int i = 0; i < 2; i++) {
        sdpa_primitive_t *prim = NULL;
        sdpa_status_t status = be[i]->primitive_create(ctx[i], p, &prim);
        ck_assert_msg(status == want && prim == NULL, "%s: %s (%s), expected %s", be[i]->name,
                      sdpa_status_name(status), be[i]->last_error(), sdpa_status_name(want));
        ck_assert_msg(strstr(be[i]->last_error(), needle) != NULL, "%s: \"%s\" lacks \"%s\"",
                      be[i]->name, be[i]->last_error(), needle);
    }
}

START_TEST(test_refusals)
{
    sdpa_problem_desc_t p;
    memset(&p, 0, sizeof(p));
    p.struct_size = sizeof(p);
    p.struct_version = SDPA_PROBLEM_DESC_VERSION;
    p.prop_kind = SDPA_BACKWARD;
    p.q = p.dst = p.diff_dst = p.diff_q = dense_tensor(F16, 1, 2, 8, 32);
    p.k = p.v = dense_tensor(E4, 1, 2, 8, 32);
    p.diff_k = p.diff_v = dense_tensor(F16, 1, 2, 8, 32);
    expect_refused(&p, SDPA_ERROR_UNSUPPORTED, "FP8 K/V are not supported in backward");

    p.prop_kind = SDPA_FORWARD_INFERENCE;
    p.v = dense_tensor(E5, 1, 2, 8, 32);
    p.v_quant = (sdpa_quant_desc_t){SDPA_QUANT_PER_HEAD, F32, SDPA_QUANT_PER_TENSOR,
                                    SDPA_DTYPE_S8, 0};
    expect_refused(&p, SDPA_ERROR_INVALID_ARGUMENT, "FP8 K/V take no zero points");

    /* FP8 is for K and V only. */
    p.v_quant = (sdpa_quant_desc_t){0};
    p.q = p.dst = dense_tensor(E4, 1, 2, 8, 32);
    expect_refused(&p, SDPA_ERROR_INVALID_ARGUMENT, "q.dtype = f8_e4m3");

    const sdpa_backend_iface_t *be[2] = {suite_env.ze, suite_env.ref};
    sdpa_context_t *ctx[2] = {suite_env.ze_ctx, suite_env.ref_ctx};
    for (int i = 0; i < 2; i++) {
        sdpa_features_t f = {.struct_size = sizeof(f), .struct_version = SDPA_FEATURES_VERSION};
        ck_assert_int_eq(be[i]->context_get_features(ctx[i], &f), SDPA_SUCCESS);
        ck_assert_msg(f.has_fp8_kv == 1, "%s: has_fp8_kv = %u", be[i]->name, f.has_fp8_kv);
    }
}
END_TEST

START_TEST(test_fast_path_ran)
{
    const char *kernels = getenv("SDPA_ZE_KERNELS");
    printf("fp8 cases on the fast path: %d\n", xe_runs);
    if (kernels && strncmp(kernels, "xe", 2) == 0)
        ck_assert_msg(xe_runs > 0, "SDPA_ZE_KERNELS=%s, but no FP8 case ran the fast path",
                      kernels);
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_LOOP(test_every_code, 6),
            TEST_ONCE(test_host_decoder_corners),
            TEST_LOOP(test_against_oracle, CASES),
            TEST_ONCE(test_refusals),
            TEST_ONCE(test_fast_path_ran),
    };
    return test_env_run_table("ze fp8 K/V", 600, tests, TEST_COUNT(tests));
}
