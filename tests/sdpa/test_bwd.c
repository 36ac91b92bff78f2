/*
 * test_bwd.c - backward attention on the ze backend against the ref
 * backend's analytic double-precision gradients, a finite-difference check
 * of ze's gradients against ze's own forward, bit-identical repeats in the
 * deterministic mode, and scratch reuse across shapes.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwd_case.h"
#include "element.h"
#include "problem.h"
#include "ze_env.h"

static int cases_run;

/* As in test_fwd.c: sizes that share a family's module (Sq > 16 and not a
 * multiple of 8, one K/V head per query head); GQA, thin queries and exact
 * multiples have families of their own. */
static const fwd_case_sizes_t family_sizes[] = {
        {1, 2, 2, 37, 1},  {2, 1, 1, 37, 29}, {1, 2, 2, 75, 130},
        {2, 1, 1, 21, 37}, {1, 1, 1, 53, 70}, {2, 3, 3, 29, 101},
};

/* A family's base case and bwd_case_run's repeat_bits. */
typedef struct family_base {
    bwd_case_t c;
    int repeat_bits;
} family_base_t;

static double run_sized(const void *base, const fwd_case_sizes_t *s, uint64_t seed)
{
    const family_base_t *b = base;
    bwd_case_t c = b->c;
    fwd_case_resize(&c.fwd, s);
    return bwd_case_run(&suite_env, &c, seed, b->repeat_bits);
}

static void run_family(const bwd_case_t *base, const char *family)
{
    const family_base_t b = {*base, 0};
    cases_run += (int)fwd_case_family("bwd", 30, family, family_sizes, TEST_COUNT(family_sizes),
                                      2000, run_sized, &b);
}

static void base_case(bwd_case_t *c, int64_t head_size, sdpa_dtype_t dt)
{
    bwd_case_init(c, 1, 1, 1, 1, 1, head_size);
    c->fwd.q_dtype = c->fwd.k_dtype = c->fwd.v_dtype = dt;
}

START_TEST(dtypes)
{
    static const sdpa_dtype_t triples[][3] = {
            {SDPA_DTYPE_F32, SDPA_DTYPE_F32, SDPA_DTYPE_F32},
            {SDPA_DTYPE_F16, SDPA_DTYPE_F16, SDPA_DTYPE_F16},
            {SDPA_DTYPE_BF16, SDPA_DTYPE_BF16, SDPA_DTYPE_BF16},
            {SDPA_DTYPE_F16, SDPA_DTYPE_BF16, SDPA_DTYPE_F32},
            {SDPA_DTYPE_F32, SDPA_DTYPE_F16, SDPA_DTYPE_BF16},
    };
    /* Representative: f32, f16, bf16 and a mix (rerun_leaves_out). */
    if (rerun_leaves_out(_i <= 3, 1))
        return;
    bwd_case_t c;
    base_case(&c, 64, SDPA_DTYPE_F32);
    c.fwd.q_dtype = triples[_i][0];
    c.fwd.k_dtype = triples[_i][1];
    c.fwd.v_dtype = triples[_i][2];
    char name[64];
    snprintf(name, sizeof(name), "dtypes q%s k%s v%s", sdpa_dtype_name(c.fwd.q_dtype),
             sdpa_dtype_name(c.fwd.k_dtype), sdpa_dtype_name(c.fwd.v_dtype));
    run_family(&c, name);
}
END_TEST

static const int64_t head_sizes[] = {1, 7, 32, 33, 64, 80, 128, 160, 256};

START_TEST(head_sizes_bf16)
{
    /* Representative: one size inside each bucket (up to 32, 64, 128, 256:
     * padded) and the largest; D 32, 64 and 128 exactly are other rows'. */
    const int64_t d = head_sizes[_i];
    if (rerun_leaves_out(d == 1 || d == 33 || d == 80 || d == 160 || d == 256, 1))
        return;
    bwd_case_t c;
    base_case(&c, head_sizes[_i], _i % 2 ? SDPA_DTYPE_BF16 : SDPA_DTYPE_F16);
    char name[64];
    snprintf(name, sizeof(name), "head size %lld", (long long)head_sizes[_i]);
    run_family(&c, name);
}
END_TEST

START_TEST(masks)
{
    if (rerun_leaves_out(1, 0))
        return;
    bwd_case_t c;
    base_case(&c, 64, SDPA_DTYPE_F16);
    c.fwd.softmax = SDPA_SOFTMAX_INF_AS_ZERO;
    const char *name = "";
    switch (_i) {
    case 0:
        c.fwd.mask_kind = SDPA_MASK_BUFFER;
        c.fwd.mask_dtype = SDPA_DTYPE_F32;
        name = "mask buffer f32";
        break;
    case 1:
        c.fwd.mask_kind = SDPA_MASK_BUFFER;
        c.fwd.mask_dtype = SDPA_DTYPE_BF16;
        c.fwd.mask_broadcast_batch = c.fwd.mask_broadcast_queries = 1;
        name = "mask buffer bf16, broadcast";
        break;
    case 2:
        c.fwd.mask_kind = SDPA_MASK_BUFFER;
        c.fwd.mask_dtype = SDPA_DTYPE_F16;
        c.fwd.mask_broadcast_heads = 1;
        c.fwd.fully_masked_rows = 1;
        name = "mask buffer f16, dead rows";
        break;
    case 3:
        c.fwd.mask_kind = SDPA_MASK_CAUSAL_TOP_LEFT;
        name = "causal top-left";
        break;
    default:
        c.fwd.mask_kind = SDPA_MASK_CAUSAL_BOTTOM_RIGHT;
        name = "causal bottom-right";
        break;
    }
    run_family(&c, name);
}
END_TEST

START_TEST(scales)
{
    if (rerun_leaves_out(1, 0))
        return;
    bwd_case_t c;
    base_case(&c, 32, SDPA_DTYPE_F32);
    static const char *names[] = {"no scale", "host scale, inverted", "device f16 scale",
                                  "device f32 scale, inverted"};
    c.fwd.scale_kind = _i == 0 ? SDPA_SCALE_NONE : _i == 1 ? SDPA_SCALE_HOST : SDPA_SCALE_DEVICE;
    c.fwd.scale_dtype = _i == 2 ? SDPA_DTYPE_F16 : SDPA_DTYPE_F32;
    c.fwd.invert_scale = _i % 2;
    run_family(&c, names[_i]);
}
END_TEST

START_TEST(layouts)
{
    if (rerun_leaves_out(1, 1))
        return;
    bwd_case_t c;
    base_case(&c, 48, _i ? SDPA_DTYPE_BF16 : SDPA_DTYPE_F32);
    c.fwd.q_order = _i ? ORDER_BSHD : ORDER_BHSD;
    c.fwd.k_order = ORDER_BHDS; /* transposed K: dK is written in K's layout */
    c.fwd.v_order = _i ? ORDER_HBSD : ORDER_BHSD;
    c.fwd.dst_order = _i ? ORDER_BSHD : ORDER_BHSD;
    c.fwd.pad = _i ? 3 : 0;
    c.gradient_layouts_differ = _i == 2;
    run_family(&c, _i ? "transposed K, strided, padded" : "transposed K");
}
END_TEST

START_TEST(ds_output)
{
    if (rerun_leaves_out(1, 0))
        return;
    bwd_case_t c;
    base_case(&c, 64, _i ? SDPA_DTYPE_F16 : SDPA_DTYPE_F32);
    c.ds_dtype = _i ? SDPA_DTYPE_F16 : SDPA_DTYPE_F32;
    c.fwd.mask_kind = SDPA_MASK_CAUSAL_BOTTOM_RIGHT;
    run_family(&c, "dS output");
}
END_TEST

/* GQA: several query heads add into one dK/dV; in both modes. */
START_TEST(gqa)
{
    static const struct {
        int64_t q_heads, kv_heads;
    } groups[] = {{4, 1}, {8, 2}, {6, 3}, {4, 2}};
    /* Representative: MQA and GQA, f32 and bf16. */
    if (rerun_leaves_out(_i <= 1, 1))
        return;
    bwd_case_t c;
    base_case(&c, 64, _i % 2 ? SDPA_DTYPE_BF16 : SDPA_DTYPE_F32);
    double worst = 0;
    for (int deterministic = 0; deterministic <= 1; deterministic++)
        for (int64_t q_len = 5; q_len <= 45; q_len += 40) {
            c.deterministic = deterministic;
            c.fwd.batch = 2;
            c.fwd.q_heads = groups[_i].q_heads;
            c.fwd.kv_heads = groups[_i].kv_heads;
            c.fwd.q_len = q_len;
            c.fwd.k_len = 77;
            c.fwd.mask_kind = q_len > 5 ? SDPA_MASK_CAUSAL_TOP_LEFT : SDPA_MASK_NONE;
            c.fwd.softmax = SDPA_SOFTMAX_INF_AS_ZERO;
            double r = bwd_case_run(&suite_env, &c, 300 + (uint64_t)q_len, deterministic);
            worst = r > worst ? r : worst;
            cases_run++;
        }
    printf("bwd family gqa %lld/%lld (atomic and deterministic) 4 cases, worst error/tolerance "
           "%.3f\n",
           (long long)groups[_i].q_heads, (long long)groups[_i].kv_heads, worst);
}
END_TEST

START_TEST(deterministic)
{
    if (rerun_leaves_out(1, 0))
        return;
    bwd_case_t c;
    base_case(&c, _i ? 128 : 64, _i ? SDPA_DTYPE_F16 : SDPA_DTYPE_F32);
    c.deterministic = 1;
    c.ds_dtype = _i ? SDPA_DTYPE_UNDEF : SDPA_DTYPE_F32;
    const family_base_t b = {c, 1};
    char name[80];
    snprintf(name, sizeof(name), "deterministic d%lld (3 runs each, bit-identical)",
             (long long)c.fwd.head_size);
    cases_run += (int)fwd_case_family("bwd", 30, name, family_sizes, TEST_COUNT(family_sizes), 400,
                                      run_sized, &b);
}
END_TEST

/* The configuration string of c's primitive on ze (buffer of n bytes). */
static void config_of(const bwd_case_t *c, char *config, size_t n)
{
    sdpa_problem_desc_t p;
    bwd_case_problem(c, &p);
    test_config_string(&suite_env, &p, config, n);
}

/* Both ways the portable kernels form dQ (bwd_plan.h): partial slices per
 * key block summed in order (up to SDPA_BWD_DQ_PARTIALS_MAX_SLICES key
 * blocks: many here, causal bands that leave whole slices of zeros), and
 * past that the atomic sums or the dQ pass. Bc = 16 (BWD_SDPA_CONFIG) so
 * that both happen at small sizes. _i: 0 atomic, 1 deterministic (3 runs,
 * bit-identical). */
START_TEST(dq_slices_and_long_keys)
{
    static const struct {
        int64_t q_len, k_len;
        sdpa_mask_kind_t mask;
        int slices; /* the plan stores dQ slices (Bc = 16: k_len <= 128) */
    } shapes[] = {
            {45, 128, SDPA_MASK_NONE, 1},
            {70, 100, SDPA_MASK_CAUSAL_TOP_LEFT, 1},    /* keys past 70: zero slices */
            {40, 113, SDPA_MASK_CAUSAL_BOTTOM_RIGHT, 1}, /* queries above the band */
            {37, 129, SDPA_MASK_NONE, 0},
            {50, 150, SDPA_MASK_CAUSAL_BOTTOM_RIGHT, 0},
    };
    if (rerun_leaves_out(1, _i == 0))
        return;
    ck_assert_int_eq(setenv("BWD_SDPA_CONFIG", "16,32,64,16,64,32,1,1,1,1,1,1", 1), 0);
    bwd_case_t c;
    base_case(&c, 64, _i ? SDPA_DTYPE_F16 : SDPA_DTYPE_F32);
    c.deterministic = _i;
    c.fwd.batch = 2;
    c.fwd.q_heads = 3;
    c.fwd.kv_heads = _i ? 1 : 3; /* deterministic: with GQA's dK/dV partials too */
    c.fwd.softmax = SDPA_SOFTMAX_INF_AS_ZERO;
    double worst = 0;
    int slices_seen = 0;
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
        c.fwd.q_len = shapes[i].q_len;
        c.fwd.k_len = shapes[i].k_len;
        c.fwd.mask_kind = shapes[i].mask;
        char config[256] = "";
        config_of(&c, config, sizeof(config));
        if (strncmp(config, "bwd xe ", 7) != 0) {
            ck_assert_msg(strstr(config, "cfg=16,32,") != NULL, "%s", config);
            ck_assert_msg((strstr(config, " dq-slices ") != NULL) == shapes[i].slices, "%s",
                          config);
            slices_seen += shapes[i].slices;
        }
        double r = bwd_case_run(&suite_env, &c, 700 + i, _i);
        worst = r > worst ? r : worst;
        cases_run++;
    }
    ck_assert_int_eq(unsetenv("BWD_SDPA_CONFIG"), 0);
    printf("bwd family dQ slices (%d cases) and long keys, %s: 5 cases, worst error/tolerance "
           "%.3f\n",
           slices_seen, _i ? "deterministic" : "atomic", worst);
}
END_TEST

START_TEST(thin_and_exact)
{
    static const struct {
        int64_t q_len, k_len;
    } shapes[] = {{1, 1}, {1, 100}, {16, 33}, {64, 64}, {128, 64}, {9, 128}};
    /* Representative: the shapes once, at D 128 f16. */
    if (rerun_leaves_out(_i == 1, 1))
        return;
    bwd_case_t c;
    base_case(&c, _i ? 128 : 64, _i ? SDPA_DTYPE_F16 : SDPA_DTYPE_F32);
    double worst = 0;
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
        c.fwd.batch = 1;
        c.fwd.q_heads = c.fwd.kv_heads = 2;
        c.fwd.q_len = shapes[i].q_len;
        c.fwd.k_len = shapes[i].k_len;
        double r = bwd_case_run(&suite_env, &c, 500 + i, 0);
        worst = r > worst ? r : worst;
        cases_run++;
    }
    printf("bwd family thin/exact sizes %d           6 cases, worst error/tolerance %.3f\n", _i,
           worst);
}
END_TEST

/* --- finite differences: ze's gradients against ze's own forward ------------ */

/* L = sum(dO * O) as ze's forward computes it, in double from f32 O. */
static double ze_loss(const sdpa_primitive_t *fwd, const sdpa_exec_args_t *a, const float *d_dst,
                      int64_t n)
{
    ck_assert_int_eq(suite_env.ze->primitive_execute((sdpa_primitive_t *)fwd, a), SDPA_SUCCESS);
    const float *o = a->dst;
    double loss = 0;
    for (int64_t i = 0; i < n; i++)
        loss += (double)d_dst[i] * o[i];
    return loss;
}

START_TEST(finite_differences)
{
    /* f32, tiny: every input element is perturbed. The check is of the
     * derivative itself, so the tolerance is that of a central difference
     * with step h on f32 forward outputs: h^2 curvature plus f32 rounding of
     * the loss over h. */
    if (rerun_leaves_out(1, 1))
        return;
    bwd_case_t c;
    bwd_case_init(&c, 1, 2, 1, 3, 5, 4);
    c.fwd.mask_kind = _i ? SDPA_MASK_CAUSAL_BOTTOM_RIGHT : SDPA_MASK_NONE;
    c.fwd.training = 1;
    sdpa_problem_desc_t pf, pb;
    fwd_case_problem(&c.fwd, &pf);
    bwd_case_problem(&c, &pb);
    test_rng_t rng = {77 + (uint64_t)_i};
    fwd_buffers_t b;
    fwd_buffers_alloc(&suite_env, &c.fwd, &pf, &b, &rng);
    test_tensor_t d_dst, dq, dk, dv;
    tensor_alloc(&suite_env, &d_dst, &pb.diff_dst);
    tensor_fill_uniform(&d_dst, &rng, -1, 1);
    tensor_alloc(&suite_env, &dq, &pb.diff_q);
    tensor_alloc(&suite_env, &dk, &pb.diff_k);
    tensor_alloc(&suite_env, &dv, &pb.diff_v);

    sdpa_primitive_t *fwd, *bwd;
    ck_assert_int_eq(suite_env.ze->primitive_create(suite_env.ze_ctx, &pf, &fwd), SDPA_SUCCESS);
    ck_assert_int_eq(suite_env.ze->primitive_create(suite_env.ze_ctx, &pb, &bwd), SDPA_SUCCESS);
    sdpa_exec_args_t a;
    fwd_exec_args(&c.fwd, &b, 0, &a);
    int64_t n_out = tensor_span(&pf.dst);
    ze_loss(fwd, &a, d_dst.data, n_out);
    a.diff_dst = d_dst.data;
    a.diff_q = dq.data;
    a.diff_k = dk.data;
    a.diff_v = dv.data;
    ck_assert_int_eq(suite_env.ze->primitive_execute(bwd, &a), SDPA_SUCCESS);

    const double h = 1.0 / 256;
    struct {
        const char *name;
        test_tensor_t *input, *grad;
    } wrt[] = {{"Q", &b.q, &dq}, {"K", &b.k, &dk}, {"V", &b.v, &dv}};
    double worst = 0;
    int checked = 0;
    for (int w = 0; w < 3; w++) {
        float *x = wrt[w].input->data;
        const float *g = wrt[w].grad->data;
        for (int64_t i = 0; i < tensor_span(&wrt[w].input->desc); i++) {
            float saved = x[i];
            x[i] = saved + (float)h;
            double up = ze_loss(fwd, &a, d_dst.data, n_out);
            x[i] = saved - (float)h;
            double down = ze_loss(fwd, &a, d_dst.data, n_out);
            x[i] = saved;
            double fd = (up - down) / (2 * h);
            double tol = 2e-3 * (1 + fabs(fd));
            double err = fabs(fd - g[i]) / tol;
            ck_assert_msg(err <= 1, "d%s[%lld]: ze backward %.7g, finite difference %.7g",
                          wrt[w].name, (long long)i, g[i], fd);
            worst = err > worst ? err : worst;
            checked++;
        }
    }
    printf("finite differences (%s): %d derivatives of ze's forward, worst error/tolerance "
           "%.3f\n",
           _i ? "causal" : "no mask", checked, worst);
    suite_env.ze->primitive_destroy(bwd);
    suite_env.ze->primitive_destroy(fwd);
    tensor_free(&suite_env, &dv);
    tensor_free(&suite_env, &dk);
    tensor_free(&suite_env, &dq);
    tensor_free(&suite_env, &d_dst);
    fwd_buffers_free(&suite_env, &b);
}
END_TEST

/* --- scratch: grown only when a larger execution needs it -------------------- */

static uint64_t scratch_allocations(sdpa_context_t *ctx)
{
    uint64_t n = 0;
    ck_assert_int_eq(
            suite_env.ze->context_query(ctx, SDPA_QUERY_SCRATCH_ALLOCATIONS, &n, sizeof(n)),
            SDPA_SUCCESS);
    return n;
}

START_TEST(scratch_reuse)
{
    /* The context's scratch allocations, counted alike with either add. */
    if (rerun_leaves_out(1, 0))
        return;
    const sdpa_context_desc_t desc = test_env_context_desc(&suite_env);
    sdpa_context_t *ctx;
    ck_assert_int_eq(suite_env.ze->context_create(&desc, &ctx), SDPA_SUCCESS);
    /* f16: dQ always accumulates in f32 scratch. */
    static const int64_t lengths[] = {200, 50, 120, 200, 17, 600, 300};
    uint64_t expected[] = {1, 1, 1, 1, 1, 2, 2};
    size_t previous_largest = 0;
    for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
        bwd_case_t c;
        bwd_case_init(&c, 1, 2, 2, lengths[i], 64, 32);
        c.fwd.q_dtype = c.fwd.k_dtype = c.fwd.v_dtype = SDPA_DTYPE_F16;
        sdpa_problem_desc_t p;
        bwd_case_problem(&c, &p);
        sdpa_primitive_t *prim;
        ck_assert_int_eq(suite_env.ze->primitive_create(ctx, &p, &prim), SDPA_SUCCESS);
        size_t bytes = 0;
        ck_assert_int_eq(suite_env.ze->primitive_query(prim, SDPA_QUERY_SCRATCH_BYTES, &bytes,
                                                       sizeof(bytes)),
                         SDPA_SUCCESS);
        ck_assert_uint_gt(bytes, 2 * lengths[i] * 32 * sizeof(float) - 1);
        previous_largest = bytes > previous_largest ? bytes : previous_largest;

        fwd_case_t fc = c.fwd;
        fc.training = 1;
        sdpa_problem_desc_t pf;
        fwd_case_problem(&fc, &pf);
        test_rng_t rng = {i};
        fwd_buffers_t b;
        fwd_buffers_alloc(&suite_env, &fc, &pf, &b, &rng);
        test_tensor_t d_dst, dq, dk, dv;
        tensor_alloc(&suite_env, &d_dst, &p.diff_dst);
        tensor_alloc(&suite_env, &dq, &p.diff_q);
        tensor_alloc(&suite_env, &dk, &p.diff_k);
        tensor_alloc(&suite_env, &dv, &p.diff_v);
        sdpa_exec_args_t a;
        fwd_exec_args(&fc, &b, 0, &a);
        a.diff_dst = d_dst.data;
        a.diff_q = dq.data;
        a.diff_k = dk.data;
        a.diff_v = dv.data;
        for (int run = 0; run < 2; run++)
            ck_assert_int_eq(suite_env.ze->primitive_execute(prim, &a), SDPA_SUCCESS);
        ck_assert_uint_eq(scratch_allocations(ctx), expected[i]);

        /* Caller-owned scratch: the context allocates nothing; too small is refused. */
        void *own = test_alloc(&suite_env, bytes);
        a.scratch = own;
        a.scratch_size = bytes;
        ck_assert_int_eq(suite_env.ze->primitive_execute(prim, &a), SDPA_SUCCESS);
        a.scratch_size = bytes - 1;
        ck_assert_int_eq(suite_env.ze->primitive_execute(prim, &a),
                         SDPA_ERROR_INSUFFICIENT_SCRATCH);
        ck_assert_msg(strstr(suite_env.ze->last_error(), "scratch_size") != NULL, "%s",
                      suite_env.ze->last_error());
        ck_assert_uint_eq(scratch_allocations(ctx), expected[i]);
        test_free(&suite_env, own);

        suite_env.ze->primitive_destroy(prim);
        tensor_free(&suite_env, &dv);
        tensor_free(&suite_env, &dk);
        tensor_free(&suite_env, &dq);
        tensor_free(&suite_env, &d_dst);
        fwd_buffers_free(&suite_env, &b);
    }
    printf("scratch: 7 shapes, %llu device allocations (largest %zu bytes)\n",
           (unsigned long long)scratch_allocations(ctx), previous_largest);
    suite_env.ze->context_destroy(ctx);
}
END_TEST

/* A backward builds only what its problem needs (kernel_abi_bwd.h): the
 * pre- and postprocessing module once per dtype for every configuration,
 * the main kernel's module per configuration, the deterministic dQ pass
 * only for deterministic problems whose keys are too many for partial dQ
 * slices (bwd_plan.h; on the fast path, *xe set, its one module holds
 * both). Counted on a fresh context. */
static uint64_t built_by(sdpa_context_t *ctx, const bwd_case_t *c, int *xe)
{
    sdpa_problem_desc_t p;
    bwd_case_problem(c, &p);
    uint64_t before = 0, after = 0;
    ck_assert_int_eq(suite_env.ze->context_query(ctx, SDPA_QUERY_MODULES_BUILT, &before,
                                                 sizeof(before)),
                     SDPA_SUCCESS);
    sdpa_primitive_t *prim = NULL;
    ck_assert_msg(suite_env.ze->primitive_create(ctx, &p, &prim) == SDPA_SUCCESS,
                  "primitive_create: %s", suite_env.ze->last_error());
    char config[256] = "";
    ck_assert_int_eq(suite_env.ze->primitive_query(prim, SDPA_QUERY_CONFIG_STRING, config,
                                                   sizeof(config)),
                     SDPA_SUCCESS);
    *xe = strncmp(config, "bwd xe ", 7) == 0;
    suite_env.ze->primitive_destroy(prim);
    ck_assert_int_eq(suite_env.ze->context_query(ctx, SDPA_QUERY_MODULES_BUILT, &after,
                                                 sizeof(after)),
                     SDPA_SUCCESS);
    return after - before;
}

START_TEST(builds_only_what_the_problem_needs)
{
    /* The modules a problem builds, counted alike with either add. */
    if (rerun_leaves_out(1, 0))
        return;
    const sdpa_context_desc_t desc = test_env_context_desc(&suite_env);
    sdpa_context_t *ctx = NULL;
    ck_assert_int_eq(suite_env.ze->context_create(&desc, &ctx), SDPA_SUCCESS);
    bwd_case_t c;
    bwd_case_init(&c, 1, 2, 2, 33, 45, 32);
    c.fwd.q_dtype = c.fwd.k_dtype = c.fwd.v_dtype = SDPA_DTYPE_F16; /* post converts f32 sums */
    bwd_case_t causal = c, det = c, det_long = c;
    causal.fwd.mask_kind = SDPA_MASK_CAUSAL_TOP_LEFT;
    det.deterministic = 1;
    det_long.deterministic = 1;
    det_long.fwd.k_len = 4096; /* more key blocks than SDPA_BWD_DQ_PARTIALS_MAX_SLICES */

    int xe = 0;
    ck_assert_uint_eq(built_by(ctx, &c, &xe), 2);      /* pre/post and main, no dQ pass */
    ck_assert_uint_eq(built_by(ctx, &causal, &xe), 1); /* its main only */
    /* Its main, which writes partial dQ slices: no dQ pass (the fast
     * path's one module holds its dQ pass). */
    const uint64_t det_built = built_by(ctx, &det, &xe);
    ck_assert_uint_eq(det_built, 1);
    /* Long keys: a main without slices and the dQ pass (on the fast path,
     * the module of `det` again). */
    const uint64_t det_long_built = built_by(ctx, &det_long, &xe);
    ck_assert_uint_eq(det_long_built, xe ? 0 : 2);
    ck_assert_uint_eq(built_by(ctx, &c, &xe), 0);
    printf("backward modules: 2 for the first configuration, 1 for another, %llu for a "
           "deterministic one, %llu for a deterministic one with long keys, 0 again\n",
           (unsigned long long)det_built, (unsigned long long)det_long_built);
    suite_env.ze->context_destroy(ctx);
}
END_TEST

START_TEST(case_count)
{
    printf("backward cases run against ref: %d (%d on the fast path), modules built: %llu\n",
           cases_run, xe_runs_checked(), (unsigned long long)test_modules_built(&suite_env));
    /* The backward issue's floor: at least 200 cases against ref (in a
     * run that leaves no row out). */
    if (!rerun_left_out)
        ck_assert_int_ge(cases_run, 200);
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_LOOP(dtypes, 5),
            TEST_LOOP(head_sizes_bf16, sizeof(head_sizes) / sizeof(head_sizes[0])),
            TEST_LOOP(masks, 5),
            TEST_LOOP(scales, 4),
            TEST_LOOP(layouts, 3),
            TEST_LOOP(ds_output, 2),
            TEST_LOOP(gqa, 4),
            TEST_LOOP(deterministic, 2),
            TEST_LOOP(thin_and_exact, 2),
            TEST_LOOP(dq_slices_and_long_keys, 2),
            TEST_LOOP(finite_differences, 2),
            TEST_ONCE(scratch_reuse),
            TEST_ONCE(builds_only_what_the_problem_needs),
            TEST_ONCE(case_count),
    };
    return test_env_run_table("ze backward", 1800, tests, TEST_COUNT(tests));
}
