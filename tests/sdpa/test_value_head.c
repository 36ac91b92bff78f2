/*
 * test_value_head.c - V's head size apart from Q's and K's (ABI 1.2): Dv !=
 * D in the ze forward (portable kernel, decode kernel, split-KV merge) and
 * MLA decode (D 576, V a view of K's first 512 elements, one K/V head; its
 * 128 query heads in blocks of rows), dense and paged, against the
 * independent double-precision oracle of tests/abi/llm_case.c; the backward
 * (dQ and dK with D, dV with Dv) on ze and on ref against the same oracle;
 * the features query.
 */
#include <check.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi_util.h"
#include "llm_case.h"
#include "sdpa.h"
#include "ze_env.h"

static const test_allocator_t shared_allocator = {suite_shared_alloc, suite_shared_release, NULL};

/* As test_llm.c: f32 arithmetic on the device, in units of 2^-24 times a
 * row's magnitude (sums over up to a few hundred keys of 576 products). */
#define DEVICE_TOLERANCE 512.0

/* The ref backward differentiates the exact forward from O rounded to
 * its dtype, as test_llm.c's tolerance says. */
static double backward_tolerance(sdpa_dtype_t dt)
{
    return dt == SDPA_DTYPE_F32 ? DEVICE_TOLERANCE
                                : 4.0 * (dt == SDPA_DTYPE_F16 ? 8192.0 : 65536.0);
}

static llm_spec_t spec_of(sdpa_prop_kind_t prop, llm_layout_t layout, int64_t batch,
                          const int64_t *len_q, const int64_t *len_k, sdpa_dtype_t dt,
                          int64_t d, int64_t dv)
{
    llm_spec_t s = llm_spec_of(prop, layout, batch, len_q, len_k, dt);
    s.head_size = d;
    s.head_size_v = dv;
    return s;
}

/* MLA decode: Hq query heads on one K/V head of D 576, V the first 512
 * elements of each K row. */
static llm_spec_t mla_spec(llm_layout_t layout, int64_t batch, const int64_t *len_k,
                           int64_t q_heads, sdpa_dtype_t dt)
{
    const int64_t one[LLM_MAX_BATCH] = {1, 1, 1, 1};
    llm_spec_t s = spec_of(SDPA_FORWARD_INFERENCE, layout, batch, one, len_k, dt, 576, 512);
    s.q_heads = q_heads;
    s.kv_heads = 1;
    s.v_view_of_k = 1;
    s.block_size = 64;
    return s;
}

/* Forward case i: what it covers is in each branch. Cases from
 * FIRST_ROW_BLOCK_CASE to FORWARD_CASES - 2 must run the decode kernel in
 * blocks of rows (MLA's 128 query heads on one K/V head). */
#define FORWARD_CASES 14
#define FIRST_ROW_BLOCK_CASE 10
static llm_spec_t forward_spec(int i)
{
    static const int64_t q33[1] = {33}, k40[1] = {40}, q1[1] = {1}, k70[1] = {70};
    static const int64_t vq[4] = {5, 0, 9, 3}, vk[4] = {7, 3, 12, 0};
    static const int64_t pk[2] = {37, 70}, mla_k[2] = {70, 130}, short_k[3] = {0, 3, 130};
    llm_spec_t s;
    switch (i) {
    case 0: /* DeepSeek-V3 prefill's sizes: D 192, Dv 128, causal, GQA */
        s = spec_of(SDPA_FORWARD_TRAINING, LLM_PADDED, 1, q33, k40, SDPA_DTYPE_F16, 192, 128);
        s.mask_kind = SDPA_MASK_CAUSAL_BOTTOM_RIGHT;
        return s;
    case 1: /* Dv = 1 */
        return spec_of(SDPA_FORWARD_TRAINING, LLM_PADDED, 2, q33, k40, SDPA_DTYPE_F32, 32, 1);
    case 2: /* Dv > D, with a window */
        s = spec_of(SDPA_FORWARD_TRAINING, LLM_PADDED, 1, q33, k40, SDPA_DTYPE_BF16, 16, 48);
        s.window = (sdpa_window_desc_t){1, 7, 2};
        return s;
    case 3: /* varlen (empty sequences) with sinks */
        s = spec_of(SDPA_FORWARD_TRAINING, LLM_VARLEN, 4, vq, vk, SDPA_DTYPE_F16, 40, 24);
        s.sinks = 1;
        return s;
    case 4: /* paged decode (the decode kernel) with sinks */
        s = spec_of(SDPA_FORWARD_INFERENCE, LLM_PAGED, 2, q1, pk, SDPA_DTYPE_BF16, 64, 32);
        s.sinks = 1;
        return s;
    case 5: /* split-KV decode and its merge, GQA 8/2, Dv > D */
        s = spec_of(SDPA_FORWARD_TRAINING, LLM_PADDED, 1, q1, k70, SDPA_DTYPE_F32, 24, 40);
        s.q_heads = 8;
        s.num_splits = 3;
        return s;
    case 6: /* MLA decode, dense, Hq 16 (the portable kernel) */
        return mla_spec(LLM_PADDED, 1, mla_k + 1, 16, SDPA_DTYPE_F16);
    case 7: /* MLA decode, paged (blocks of 64) */
        return mla_spec(LLM_PAGED, 2, mla_k, 16, SDPA_DTYPE_BF16);
    case 8: /* MLA decode with a window of 32 keys */
        s = mla_spec(LLM_PADDED, 1, mla_k + 1, 8, SDPA_DTYPE_F16);
        s.window = (sdpa_window_desc_t){1, 31, 0};
        return s;
    case 9: /* MLA decode, Hq 4: the decode kernel, split in 2 */
        s = mla_spec(LLM_PAGED, 2, mla_k, 4, SDPA_DTYPE_F16);
        s.num_splits = 2;
        return s;
    case 10: /* MLA decode, Hq 128, paged, unsplit (SDPA_ZE_DECODE=1): row
              * blocks, each reading K/V once */
        return mla_spec(LLM_PAGED, 2, mla_k, 128, SDPA_DTYPE_BF16);
    case 11: /* Hq 35, dense, split in 3: the last row block is short */
        s = mla_spec(LLM_PADDED, 1, mla_k + 1, 35, SDPA_DTYPE_F16);
        s.num_splits = 3;
        return s;
    case 12: /* Hq 128 paged in 4 splits: an empty sequence (fully
              * masked), one of 3 keys (empty splits), a long one */
        s = mla_spec(LLM_PAGED, 3, short_k, 128, SDPA_DTYPE_F16);
        s.num_splits = 4;
        return s;
    default: /* D = Dv = 512: bucket 576, no longer full */
        return spec_of(SDPA_FORWARD_TRAINING, LLM_PADDED, 1, q33, k40, SDPA_DTYPE_F16, 512, 512);
    }
}

static void run_and_compare(const sdpa_backend_iface_t *be, sdpa_context_t *ctx,
                            const llm_spec_t *s, uint64_t seed, double tolerance)
{
    llm_case_t c;
    llm_desc_init(&c, s);
    ck_assert_int_eq(llm_case_alloc(&c, seed, &shared_allocator), 0);
    if (s->prop == SDPA_BACKWARD) { /* O and the log-sum-exp from ref */
        sdpa_problem_desc_t f = llm_training_forward(&c);
        ck_assert_int_eq(test_run_once(suite_env.ref, suite_env.ref_ctx, &f, &c.c.args),
                         SDPA_SUCCESS);
    }
    sdpa_status_t status = test_run_once(be, ctx, &c.c.desc, &c.c.args);
    ck_assert_msg(status == SDPA_SUCCESS, "%s: %s: %s", be->name, sdpa_status_name(status),
                  be->last_error());
    llm_expected_t e;
    ck_assert_int_eq(llm_expect(&c, &e), 0);
    ck_assert_msg(llm_compare(&c, &e, tolerance), "%s", be->name);
    llm_expected_free(&e);
    llm_case_free(&c);
}

/* The ze forward (and ref's) against the oracle; the kernel each case ran
 * is printed, and the split cases must have taken the decode kernel. */
START_TEST(test_forward)
{
    const llm_spec_t s = forward_spec(_i);
    const int row_blocks = _i >= FIRST_ROW_BLOCK_CASE && _i < FORWARD_CASES - 1;
    if (row_blocks && s.num_splits == 0) /* unsplit: the decode kernel only if asked */
        ck_assert_int_eq(setenv("SDPA_ZE_DECODE", "1", 1), 0);
    llm_case_t c;
    llm_desc_init(&c, &s);
    char config[256];
    test_config_print(&suite_env, &c.c.desc, "forward", _i, s.num_splits, config, sizeof(config));
    if (row_blocks)
        ck_assert_msg(strstr(config, "fwd decode") != NULL && strstr(config, " rows=") != NULL,
                      "not in row blocks: %s", config);
    run_and_compare(suite_env.ze, suite_env.ze_ctx, &s, 1300 + (uint64_t)_i, DEVICE_TOLERANCE);
    /* ref, the oracle of the other suites, against the independent one. */
    run_and_compare(suite_env.ref, suite_env.ref_ctx, &s, 1300 + (uint64_t)_i, DEVICE_TOLERANCE);
    unsetenv("SDPA_ZE_DECODE");
}
END_TEST

/* Backward case i: D 192 / Dv 128 causal GQA f32 with dS; Dv = 1 varlen
 * f16 with a window; Dv > D bf16 with sinks; D 64 / Dv 32 deterministic
 * (partial dK/dV slices of GQA, f32); D 72 / Dv 64 with V a view of K
 * (dK and dV in buffers of their own, sdpa.h), f16. */
#define BACKWARD_CASES 5
static llm_spec_t backward_spec(int i)
{
    static const int64_t q17[1] = {17}, k23[1] = {23};
    static const int64_t vq[3] = {5, 0, 9}, vk[3] = {7, 3, 12};
    llm_spec_t s;
    if (i == 0) {
        s = spec_of(SDPA_BACKWARD, LLM_PADDED, 1, q17, k23, SDPA_DTYPE_F32, 192, 128);
        s.mask_kind = SDPA_MASK_CAUSAL_BOTTOM_RIGHT;
        s.ds_dtype = SDPA_DTYPE_F32;
    } else if (i == 1) {
        s = spec_of(SDPA_BACKWARD, LLM_VARLEN, 3, vq, vk, SDPA_DTYPE_F16, 16, 1);
        s.window = (sdpa_window_desc_t){1, 4, -1};
    } else if (i == 2) {
        s = spec_of(SDPA_BACKWARD, LLM_PADDED, 2, q17, k23, SDPA_DTYPE_BF16, 8, 24);
        s.sinks = 1;
    } else if (i == 3) {
        s = spec_of(SDPA_BACKWARD, LLM_PADDED, 1, q17, k23, SDPA_DTYPE_F32, 64, 32);
        s.deterministic = 1;
    } else {
        s = spec_of(SDPA_BACKWARD, LLM_PADDED, 1, q17, k23, SDPA_DTYPE_F16, 72, 64);
        s.v_view_of_k = 1;
        s.mask_kind = SDPA_MASK_CAUSAL_TOP_LEFT;
    }
    return s;
}

/* The backward on ze and on ref (the oracle the ze suites trust) against
 * the independent one. */
START_TEST(test_backward)
{
    const llm_spec_t s = backward_spec(_i);
    run_and_compare(suite_env.ze, suite_env.ze_ctx, &s, 1400 + (uint64_t)_i,
                    backward_tolerance(s.qdt));
    run_and_compare(suite_env.ref, suite_env.ref_ctx, &s, 1400 + (uint64_t)_i,
                    backward_tolerance(s.qdt));
}
END_TEST

/* O must take V's head size: a dst with Q's is refused. */
START_TEST(test_dst_takes_dv)
{
    static const int64_t q5[1] = {5}, k9[1] = {9};
    const llm_spec_t s =
            spec_of(SDPA_FORWARD_INFERENCE, LLM_PADDED, 1, q5, k9, SDPA_DTYPE_F16, 64, 32);
    llm_case_t c;
    llm_desc_init(&c, &s);
    c.c.desc.dst.dims[3] = 64;
    sdpa_support_t support = {.struct_size = sizeof(support),
                              .struct_version = SDPA_SUPPORT_VERSION};
    ck_assert_int_eq(suite_env.ze->primitive_supports(suite_env.ze_ctx, &c.c.desc, &support),
                     SDPA_SUCCESS);
    ck_assert_int_eq(support.status, SDPA_ERROR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(support.message, "dst.dims[3]") != NULL, "%s", support.message);
}
END_TEST

/* iface's context says it runs the cases above: V's own head size and V as
 * a view of K. */
static void assert_value_head_features(const sdpa_backend_iface_t *iface, sdpa_context_t *ctx,
                                       sdpa_features_t *f)
{
    ck_assert_int_eq(llm_features_query(iface, ctx, sizeof(*f), SDPA_FEATURES_VERSION, f),
                     SDPA_SUCCESS);
    ck_assert_uint_eq(f->has_value_head_size, 1);
    ck_assert_uint_eq(f->has_v_view_of_k, 1);
}

/* The features query says what the cases above run, on both backends. */
START_TEST(test_features)
{
    sdpa_features_t f;
    assert_value_head_features(suite_env.ref, suite_env.ref_ctx, &f);
    assert_value_head_features(suite_env.ze, suite_env.ze_ctx, &f);
    ck_assert_uint_eq(f.max_head_size, 576);

    /* A version 3 struct from before these two members: filled up to its
     * size, the rest untouched. */
    ck_assert_int_eq(llm_features_query(suite_env.ze, suite_env.ze_ctx,
                                        (uint32_t)offsetof(sdpa_features_t, has_value_head_size), 3,
                                        &f),
                     SDPA_SUCCESS);
    ck_assert_uint_eq(f.has_sinks, 1);
    ck_assert_uint_eq(f.has_value_head_size, 0xababababu);
    ck_assert_uint_eq(f.has_v_view_of_k, 0xababababu);
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_LOOP(test_forward, FORWARD_CASES),
            TEST_LOOP(test_backward, BACKWARD_CASES),
            TEST_ONCE(test_dst_takes_dv),
            TEST_ONCE(test_features),
    };
    return test_env_run_table("value head size on ze", 600, tests, TEST_COUNT(tests));
}
