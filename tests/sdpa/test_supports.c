/*
 * test_supports.c - primitive_supports (ABI 1.2) on ze and ref: its answer
 * is what the primitive creation gives (status, kernel kind, configuration
 * string, workspace and scratch sizes), it builds no module, it takes well
 * under a millisecond, and a caller of an older minor version keeps its
 * smaller structs.
 */
#include <check.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bwd_case.h"
#include "fwd_case.h"
#include "ze_env.h"

/* The problems asked about: forward (inference, training, GQA, causal),
 * thin-Q decode (unsplit and split four ways), backward (atomic and
 * deterministic). */
#define SUPPORT_CASES 7

static void support_problem(int n, sdpa_problem_desc_t *p)
{
    if (n >= 5) {
        bwd_case_t b;
        bwd_case_init(&b, 2, 4, 2, 33, 47, 64);
        b.deterministic = n == 6;
        bwd_case_problem(&b, p);
        return;
    }
    fwd_case_t c;
    if (n >= 3)
        fwd_case_init(&c, 1, 8, 2, 1, 203, 64); /* decode: Sq 1, 4 query heads per K/V head */
    else
        fwd_case_init(&c, 2, 4, n == 1 ? 2 : 4, 37, 50, n == 2 ? 128 : 64);
    c.training = n == 1 || n == 4;
    if (n == 2) {
        c.q_dtype = c.k_dtype = c.v_dtype = SDPA_DTYPE_F16;
        c.mask_kind = SDPA_MASK_CAUSAL_BOTTOM_RIGHT;
    }
    fwd_case_problem(&c, p);
    if (n == 4)
        p->num_splits = 4;
}

static sdpa_support_t ask(const sdpa_backend_iface_t *be, sdpa_context_t *ctx,
                          const sdpa_problem_desc_t *p)
{
    sdpa_support_t s;
    memset(&s, 0xab, sizeof(s));
    s.struct_size = sizeof(s);
    s.struct_version = SDPA_SUPPORT_VERSION;
    ck_assert_int_eq(be->primitive_supports(ctx, p, &s), SDPA_SUCCESS);
    ck_assert_str_eq(be->last_error(), "");
    return s;
}

/* The kind a configuration string names (plan/fwd_plan.c, bwd_plan.c). */
static sdpa_kernel_kind_t kind_of_config(const char *config)
{
    if (strncmp(config, "ref ", 4) == 0)
        return SDPA_KERNEL_HOST;
    if (strncmp(config, "fwd xe", 6) == 0 || strncmp(config, "bwd xe", 6) == 0)
        return SDPA_KERNEL_FAST;
    if (strncmp(config, "fwd decode", 10) == 0)
        return SDPA_KERNEL_DECODE;
    return SDPA_KERNEL_PORTABLE;
}

/* The answer for problem n equals what the created primitive reports. */
static void check_agrees(const sdpa_backend_iface_t *be, sdpa_context_t *ctx, int n,
                         const char *name)
{
    sdpa_problem_desc_t p;
    support_problem(n, &p);
    sdpa_support_t s = ask(be, ctx, &p);
    ck_assert_msg(s.status == SDPA_SUCCESS, "%s case %d: %s", name, n, s.message);
    ck_assert_str_eq(s.message, "");

    sdpa_primitive_t *prim = NULL;
    ck_assert_int_eq(be->primitive_create(ctx, &p, &prim), SDPA_SUCCESS);
    size_t workspace = 1, scratch = 1;
    char config[sizeof(s.config_string)];
    ck_assert_int_eq(be->primitive_query(prim, SDPA_QUERY_WORKSPACE_BYTES, &workspace,
                                         sizeof(workspace)),
                     SDPA_SUCCESS);
    ck_assert_int_eq(
            be->primitive_query(prim, SDPA_QUERY_SCRATCH_BYTES, &scratch, sizeof(scratch)),
            SDPA_SUCCESS);
    ck_assert_int_eq(be->primitive_query(prim, SDPA_QUERY_CONFIG_STRING, config, sizeof(config)),
                     SDPA_SUCCESS);
    be->primitive_destroy(prim);
    ck_assert_uint_eq(s.workspace_bytes, workspace);
    ck_assert_uint_eq(s.scratch_bytes, scratch);
    ck_assert_str_eq(s.config_string, config);
    ck_assert_int_eq(s.kernel_kind, kind_of_config(config));
    printf("%s case %d: kind %d, workspace %zu, scratch %zu, %s\n", name, n, (int)s.kernel_kind,
           workspace, scratch, config);
}

START_TEST(test_ze_agrees_with_creation)
{
    check_agrees(suite_env.ze, suite_env.ze_ctx, _i, "ze");
}
END_TEST

START_TEST(test_ref_agrees_with_creation)
{
    check_agrees(suite_env.ref, suite_env.ref_ctx, _i, "ref");
}
END_TEST

/* Asking about every case builds nothing; creating them afterwards does
 * (so the count would have shown a build). */
START_TEST(test_ze_builds_nothing)
{
    /* Head size 40 in bf16 training: a module no other test of this
     * program builds before. */
    fwd_case_t c;
    fwd_case_init_typed(&c, SDPA_DTYPE_BF16, 1, 2, 2, 19, 23, 40);
    c.training = 1;
    sdpa_problem_desc_t fresh;
    fwd_case_problem(&c, &fresh);
    const uint64_t before = test_modules_built(&suite_env);
    (void)ask(suite_env.ze, suite_env.ze_ctx, &fresh);
    for (int n = 0; n < SUPPORT_CASES; n++) {
        sdpa_problem_desc_t p;
        support_problem(n, &p);
        (void)ask(suite_env.ze, suite_env.ze_ctx, &p);
    }
    ck_assert_uint_eq(test_modules_built(&suite_env), before);
    sdpa_primitive_t *prim = NULL;
    ck_assert_int_eq(suite_env.ze->primitive_create(suite_env.ze_ctx, &fresh, &prim),
                     SDPA_SUCCESS);
    suite_env.ze->primitive_destroy(prim);
    ck_assert_uint_gt(test_modules_built(&suite_env), before);
}
END_TEST

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of 1000 answers, each timed alone, is well under a
 * millisecond: asserted loosely (< 1 ms, a shared machine), printed. */
START_TEST(test_answers_fast)
{
    enum { CALLS = 1000 };
    const sdpa_backend_iface_t *be = _i < SUPPORT_CASES ? suite_env.ze : suite_env.ref;
    sdpa_context_t *ctx = _i < SUPPORT_CASES ? suite_env.ze_ctx : suite_env.ref_ctx;
    const int n = _i % SUPPORT_CASES;
    sdpa_problem_desc_t p;
    support_problem(n, &p);
    static double us[CALLS];
    sdpa_support_t s;
    for (int i = 0; i < CALLS; i++) {
        s.struct_size = sizeof(s);
        s.struct_version = SDPA_SUPPORT_VERSION;
        const double start = now_us();
        sdpa_status_t status = be->primitive_supports(ctx, &p, &s);
        us[i] = now_us() - start;
        ck_assert_int_eq(status, SDPA_SUCCESS);
        ck_assert_int_eq(s.status, SDPA_SUCCESS);
    }
    qsort(us, CALLS, sizeof(us[0]), compare_double);
    printf("primitive_supports %s case %d: median %.2f us, p90 %.2f us over %d calls\n",
           be->name, n, us[CALLS / 2], us[CALLS * 9 / 10], CALLS);
    ck_assert_msg(us[CALLS / 2] < 1000.0, "median %.1f us", us[CALLS / 2]);
}
END_TEST

/* Refusals of the query itself, and refusals of the problem it reports. */
START_TEST(test_refusals)
{
    const sdpa_backend_iface_t *be = _i ? suite_env.ref : suite_env.ze;
    sdpa_context_t *ctx = _i ? suite_env.ref_ctx : suite_env.ze_ctx;
    sdpa_problem_desc_t p;
    support_problem(0, &p);
    sdpa_support_t s = {.struct_size = sizeof(s), .struct_version = SDPA_SUPPORT_VERSION};
    ck_assert_int_eq(be->primitive_supports(NULL, &p, &s), SDPA_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(be->primitive_supports(ctx, &p, NULL), SDPA_ERROR_INVALID_ARGUMENT);
    s.struct_version = SDPA_SUPPORT_VERSION + 1;
    ck_assert_int_eq(be->primitive_supports(ctx, &p, &s), SDPA_ERROR_INVALID_STRUCT);
    s.struct_version = SDPA_SUPPORT_VERSION;
    s.struct_size = sizeof(s) - 8;
    ck_assert_int_eq(be->primitive_supports(ctx, &p, &s), SDPA_ERROR_INVALID_STRUCT);

    s = ask(be, ctx, NULL);
    ck_assert_int_eq(s.status, SDPA_ERROR_INVALID_ARGUMENT);
    ck_assert_int_eq(s.kernel_kind, SDPA_KERNEL_NONE);
    ck_assert_ptr_nonnull(strstr(s.message, "desc"));
    /* A head size past every backend's: refused as creation refuses it,
     * with nothing else filled in. */
    p.q.dims[3] = p.k.dims[3] = p.v.dims[3] = p.dst.dims[3] = 1024;
    s = ask(be, ctx, &p);
    ck_assert_int_eq(s.status, SDPA_ERROR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(s.message, "q.dims[3] = 1024"));
    ck_assert_uint_eq(s.workspace_bytes, 0);
    ck_assert_uint_eq(s.scratch_bytes, 0);
    ck_assert_str_eq(s.config_string, "");
    sdpa_primitive_t *prim = NULL;
    ck_assert_int_eq(be->primitive_create(ctx, &p, &prim), SDPA_ERROR_UNSUPPORTED);
    ck_assert_str_eq(be->last_error(), s.message);
}
END_TEST

/* A 1.1 caller passes version 2 of the features (no has_supports_query),
 * a 1.0 caller version 1: each gets its own struct, nothing past it is
 * written; a 1.2 caller learns the query is there. */
/* context_get_features as a caller built for an older struct_version,
 * whose struct ends at size bytes: the bytes past them keep 0xab. */
static sdpa_features_t older_features(const sdpa_backend_iface_t *be, sdpa_context_t *ctx,
                                      size_t size, uint32_t version)
{
    sdpa_features_t f;
    memset(&f, 0xab, sizeof(f));
    f.struct_size = (uint32_t)size;
    f.struct_version = version;
    ck_assert_int_eq(be->context_get_features(ctx, &f), SDPA_SUCCESS);
    return f;
}

START_TEST(test_older_callers)
{
    const sdpa_backend_iface_t *be = _i ? suite_env.ref : suite_env.ze;
    sdpa_context_t *ctx = _i ? suite_env.ref_ctx : suite_env.ze_ctx;
    sdpa_features_t f = older_features(be, ctx, offsetof(sdpa_features_t, has_supports_query), 2);
    ck_assert_uint_eq(f.has_merge, 1);
    ck_assert_uint_eq(f.has_supports_query, 0xabababab);
    f = older_features(be, ctx, offsetof(sdpa_features_t, has_varlen), 1);
    ck_assert_uint_eq(f.has_backward, 1);
    ck_assert_uint_eq(f.has_varlen, 0xabababab);
    /* Version 2 with version 3's size contradicts itself. */
    f.struct_size = sizeof(f);
    f.struct_version = 2;
    ck_assert_int_eq(be->context_get_features(ctx, &f), SDPA_ERROR_INVALID_STRUCT);
    f.struct_version = SDPA_FEATURES_VERSION;
    ck_assert_int_eq(be->context_get_features(ctx, &f), SDPA_SUCCESS);
    ck_assert_uint_eq(f.has_supports_query, 1);
    /* The table a 1.2 backend hands out holds the member. */
    ck_assert_uint_eq(SDPA_VERSION_MINOR(be->abi_version), 2);
    ck_assert_uint_ge(be->struct_size, offsetof(sdpa_backend_iface_t, primitive_supports) +
                                               sizeof(be->primitive_supports));
}
END_TEST

int main(void)
{
    /* Thin-Q problems take the decode kernel, split or not, so that its
     * kind is asked about too (decode_plan.h). */
    setenv("SDPA_ZE_DECODE", "1", 1);
    const test_entry_t tests[] = {
            TEST_LOOP(test_ze_agrees_with_creation, SUPPORT_CASES),
            TEST_LOOP(test_ref_agrees_with_creation, SUPPORT_CASES),
            TEST_ONCE(test_ze_builds_nothing),
            TEST_LOOP(test_answers_fast, 2 * SUPPORT_CASES),
            TEST_LOOP(test_refusals, 2),
            TEST_LOOP(test_older_callers, 2),
    };
    return test_env_run_table("supports", 300, tests, TEST_COUNT(tests));
}
