/* test_llm.c - the ABI 1.1 attention features on the ref backend against
 * the independent oracle of llm_case.c: variable-length batches, a paged
 * KV cache, sliding windows, the logit softcap and ALiBi, alone and
 * together, forward and backward, with the edge cases of issue 16 (empty
 * sequences, one-token sequences, a window of 0 or wider than Sk, a last
 * page partly filled, slopes of 0), and the arguments and array values the
 * ref backend refuses. */
#include <check.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi_util.h"
#include "check_main.h"
#include "llm_case.h"
#include "ref_fixture.h"
#include "run_once.h"
#include "sdpa.h"

/* Runs c on ref; returns the status of create or execute. */
static sdpa_status_t run(llm_case_t *c)
{
    return test_run_once(ref_env.iface, ref_env.ctx, &c->c.desc, &c->c.args);
}

/* Builds spec, runs it on ref and compares every output with the oracle. */
static void check_spec(const llm_spec_t *spec, uint64_t seed)
{
    llm_case_t c;
    llm_desc_init(&c, spec);
    ck_assert_int_eq(llm_case_alloc(&c, seed, NULL), 0);
    sdpa_status_t status = run(&c);
    ck_assert_msg(status == SDPA_SUCCESS, "%s: %s", sdpa_status_name(status),
                  ref_env.iface->last_error());
    llm_expected_t e;
    ck_assert_int_eq(llm_expect(&c, &e), 0);
    ck_assert(llm_compare(&c, &e, 0));
    llm_expected_free(&e);
    llm_case_free(&c);
}

static const sdpa_dtype_t dtypes[3] = {SDPA_DTYPE_F32, SDPA_DTYPE_F16, SDPA_DTYPE_BF16};


/* Varlen: an empty query sequence, a sequence with no keys (its queries
 * see nothing), one-token sequences, lengths up to the maxima; every dtype,
 * every mask kind (the buffer in the padded layout), training forward with
 * dropout and its keep mask, and backward with dS. */
LLM_FAMILY_TEST(test_varlen_forward, llm_varlen_forward_spec, 100)

/* Varlen with s8 K/V, one f32 scale per tensor or per group of 4 or 8
 * head-dim elements of each packed key row (sdpa.h), inference and
 * training. */
START_TEST(test_varlen_quantized)
{
    static const int64_t groups[3] = {0, 4, 8};
    const sdpa_prop_kind_t prop = _i == 2 ? SDPA_FORWARD_TRAINING : SDPA_FORWARD_INFERENCE;
    llm_spec_t s = llm_spec_of(prop, LLM_VARLEN, LLM_VARLEN_BATCH, llm_varlen_q, llm_varlen_k,
                               SDPA_DTYPE_F16);
    s.kvdt = SDPA_DTYPE_S8;
    s.quant_group = groups[_i];
    s.mask_kind = _i == 1 ? SDPA_MASK_CAUSAL_BOTTOM_RIGHT : SDPA_MASK_NONE;
    check_spec(&s, 150 + (uint64_t)_i);
}
END_TEST

START_TEST(test_varlen_backward)
{
    const sdpa_mask_kind_t masks[3] = {SDPA_MASK_NONE, SDPA_MASK_CAUSAL_BOTTOM_RIGHT,
                                       SDPA_MASK_BUFFER};
    llm_spec_t s = llm_spec_of(SDPA_BACKWARD, LLM_VARLEN, LLM_VARLEN_BATCH, llm_varlen_q,
                               llm_varlen_k, dtypes[_i % 3]);
    s.mask_kind = masks[_i % 3];
    s.dropout = _i == 2;
    s.ds_dtype = _i == 1 ? SDPA_DTYPE_F32 : SDPA_DTYPE_UNDEF;
    s.deterministic = _i == 0;
    check_spec(&s, 200 + (uint64_t)_i);
}
END_TEST

/* Paged decode and chunked prefill (llm_paged_spec), without the empty
 * cache and the long one. */
LLM_FAMILY_TEST(test_paged, llm_paged_spec, 300)

/* Sliding windows (llm_window_spec), forward and backward. */
LLM_FAMILY_TEST(test_window, llm_window_spec, 400)

/* Windows up to INT64_MAX (issue 28: pos - left and pos + right
 * overflowed, and 16128 of 16384 outputs were NaN). */
LLM_FAMILY_TEST(test_wide_window, llm_wide_window_spec, 420)

/* Softcap: scores up to about +-12 under a cap of 3 (deep in tanh's bend),
 * and a cap far above the scores; forward and backward (dS is taken at the
 * capped score, dQ and dK through the cap). */
START_TEST(test_softcap)
{
    llm_spec_t s = llm_padded_spec(_i < 3 ? SDPA_FORWARD_TRAINING : SDPA_BACKWARD, 2, 5, 9,
                                   dtypes[_i % 3]);
    s.softcap = _i == 2 ? 1000.0f : 3.0f;
    s.ds_dtype = _i >= 3 ? SDPA_DTYPE_F32 : SDPA_DTYPE_UNDEF;
    s.mask_kind = _i == 4 ? SDPA_MASK_CAUSAL_BOTTOM_RIGHT : SDPA_MASK_NONE;
    check_spec(&s, 500 + (uint64_t)_i);
}
END_TEST

/* Softcaps from denormal to FLT_MAX, with scores of exactly 0. */
LLM_FAMILY_TEST(test_extreme_softcap, llm_extreme_softcap_spec, 520)

/* ALiBi: slopes per head and per (sequence, head), one of them 0, with
 * Sq < Sk (queries at the last positions) and Sq > Sk. */
START_TEST(test_alibi)
{
    const int64_t sq = _i % 2 ? 7 : 3, sk = _i % 2 ? 4 : 10;
    llm_spec_t s = llm_padded_spec(_i < 4 ? SDPA_FORWARD_TRAINING : SDPA_BACKWARD, 3, sq, sk,
                                   dtypes[_i % 3]);
    s.alibi = _i % 4 < 2 ? SDPA_ALIBI_PER_HEAD : SDPA_ALIBI_PER_BATCH_HEAD;
    s.mask_kind = _i == 2 ? SDPA_MASK_CAUSAL_BOTTOM_RIGHT : SDPA_MASK_NONE;
    check_spec(&s, 600 + (uint64_t)_i);
}
END_TEST

/* Everything at once: varlen with a window, a softcap, ALiBi per sequence,
 * causal, dropout; forward and backward. */
START_TEST(test_combined)
{
    llm_spec_t s = llm_spec_of(_i ? SDPA_BACKWARD : SDPA_FORWARD_TRAINING, LLM_VARLEN,
                               LLM_VARLEN_BATCH, llm_varlen_q, llm_varlen_k, SDPA_DTYPE_BF16);
    s.window = (sdpa_window_desc_t){1, 4, 1};
    s.softcap = 2.5f;
    s.alibi = SDPA_ALIBI_PER_BATCH_HEAD;
    s.mask_kind = SDPA_MASK_CAUSAL_BOTTOM_RIGHT;
    s.dropout = 1;
    s.ds_dtype = _i ? SDPA_DTYPE_F16 : SDPA_DTYPE_UNDEF;
    check_spec(&s, 700 + (uint64_t)_i);
}
END_TEST

/* The arrays a feature needs, and the values only ref can check. */
static void expect_refused(llm_case_t *c, const char *words)
{
    sdpa_status_t status = run(c);
    ck_assert_msg(status == SDPA_ERROR_INVALID_ARGUMENT, "%s: %s (%s)", words,
                  sdpa_status_name(status), ref_env.iface->last_error());
    ck_assert_msg(strstr(ref_env.iface->last_error(), words) != NULL, "message \"%s\" lacks \"%s\"",
                  ref_env.iface->last_error(), words);
}

START_TEST(test_arrays_refused)
{
    const int64_t sq = 1, sk = 8;
    llm_spec_t v = llm_spec_of(SDPA_FORWARD_INFERENCE, LLM_VARLEN, LLM_VARLEN_BATCH, llm_varlen_q,
                               llm_varlen_k, SDPA_DTYPE_F32);
    llm_spec_t p = llm_spec_of(SDPA_FORWARD_INFERENCE, LLM_PAGED, 1, &sq, &sk, SDPA_DTYPE_F32);
    p.alibi = SDPA_ALIBI_PER_HEAD;
    llm_case_t c;
    const void *saved;
#define REFUSE(spec, member, value, words)                                                         \
    do {                                                                                           \
        llm_desc_init(&c, &(spec));                                                                \
        ck_assert_int_eq(llm_case_alloc(&c, 1, NULL), 0);                                          \
        saved = c.c.args.member;                                                                   \
        c.c.args.member = (value);                                                                 \
        expect_refused(&c, words);                                                                 \
        c.c.args.member = saved;                                                                   \
        llm_case_free(&c);                                                                         \
    } while (0)
    REFUSE(v, cu_seqlens_q, NULL, "args->cu_seqlens_q is NULL but varlen.enabled = 1");
    REFUSE(v, cu_seqlens_k, (const char *)saved + 2, "args->cu_seqlens_k");
    REFUSE(p, block_table, NULL, "args->block_table is NULL but paged_kv.enabled = 1");
    REFUSE(p, cache_seqlens, NULL, "args->cache_seqlens is NULL");
    REFUSE(p, alibi_slopes, NULL, "args->alibi_slopes is NULL but alibi = PER_HEAD");
#undef REFUSE

    /* Values: a length past the maximum, a decreasing sum, past the total,
     * a cache longer than its table, a block outside the cache. */
    llm_desc_init(&c, &v);
    ck_assert_int_eq(llm_case_alloc(&c, 1, NULL), 0);
    int32_t *cu = (int32_t *)c.c.args.cu_seqlens_q;
    cu[1] = 10;
    expect_refused(&c, "args->cu_seqlens_q[1] = 10");
    cu[1] = 5;
    cu[0] = 1;
    expect_refused(&c, "args->cu_seqlens_q[0] = 1");
    cu[0] = 0;
    int32_t *cuk = (int32_t *)c.c.args.cu_seqlens_k;
    cuk[5] = (int32_t)c.c.desc.k.dims[2] + 1;
    expect_refused(&c, "args->cu_seqlens_k[5]");
    llm_case_free(&c);

    llm_desc_init(&c, &p);
    ck_assert_int_eq(llm_case_alloc(&c, 1, NULL), 0);
    int32_t *lens = (int32_t *)c.c.args.cache_seqlens;
    lens[0] = 33; /* one block of 16 per row, two entries */
    expect_refused(&c, "args->cache_seqlens[0] = 33");
    lens[0] = 8;
    c.block_table[0] = (int32_t)c.c.desc.k.dims[0];
    expect_refused(&c, "args->block_table[0][0]");
    llm_case_free(&c);
}
END_TEST

/* Attention sinks (ABI 1.2) against the oracle, with the other features
 * and the rows that see no key (llm_sinks_spec). */
LLM_FAMILY_TEST(test_sinks, llm_sinks_spec, 900)

/* A 1.1 caller's problem (struct_version 2, 1.1's size) whose tail padding,
 * where sinks now lies, holds garbage: no sinks, the 1.1 result; and
 * version 2 exec args with garbage past their end. */
START_TEST(test_sinks_older_caller)
{
    llm_spec_t s = llm_sinks_spec(0);
    llm_case_t c;
    llm_desc_init(&c, &s);
    ck_assert_int_eq(llm_case_alloc(&c, 77, NULL), 0);
    c.c.desc.sinks = 0xabababab;
    c.c.desc.struct_version = 2;
    c.c.desc.struct_size = (uint32_t)((offsetof(sdpa_problem_desc_t, sinks) + 7) / 8 * 8);
    c.c.args.sinks = (const void *)(uintptr_t)1; /* misaligned: read, it would be refused */
    c.c.args.struct_version = 2;
    c.c.args.struct_size = (uint32_t)offsetof(sdpa_exec_args_t, sinks);
    ck_assert_int_eq(run(&c), SDPA_SUCCESS);
    c.spec.sinks = 0; /* what the oracle must compute */
    llm_expected_t e;
    ck_assert_int_eq(llm_expect(&c, &e), 0);
    ck_assert(llm_compare(&c, &e, 0));
    llm_expected_free(&e);
    /* The same struct with version 3 reads the garbage and refuses it. */
    c.c.desc.struct_version = 3;
    c.c.desc.struct_size = sizeof(c.c.desc);
    ck_assert_int_eq(run(&c), SDPA_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ref_env.iface->last_error(), "sinks"));
    llm_case_free(&c);
}
END_TEST

/* ref advertises every feature but split-KV (it computes in one exact
 * pass), and a version 1 caller gets the version 1 struct. */
START_TEST(test_features)
{
    sdpa_features_t f;
    ck_assert_int_eq(
            llm_features_query(ref_env.iface, ref_env.ctx, sizeof(f), SDPA_FEATURES_VERSION, &f),
            SDPA_SUCCESS);
    ck_assert(f.has_varlen && f.has_paged_kv && f.has_window && f.has_softcap && f.has_alibi &&
              f.has_merge && f.has_sinks);
    ck_assert_uint_eq(f.has_split_kv, 0);
    ck_assert_int_eq(llm_features_query(ref_env.iface, ref_env.ctx,
                                        (uint32_t)offsetof(sdpa_features_t, has_varlen), 1, &f),
                     SDPA_SUCCESS);
    ck_assert_uint_eq(f.has_dropout, 1);
    ck_assert_uint_eq(f.has_varlen, 0xabababab); /* past the caller's struct */
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_LOOP(test_varlen_forward, LLM_VARLEN_FORWARD_CASES),
            TEST_LOOP(test_varlen_quantized, 3),
            TEST_LOOP(test_varlen_backward, 3),
            TEST_LOOP(test_paged, 8),
            TEST_LOOP(test_window, 9),
            TEST_LOOP(test_wide_window, LLM_WIDE_WINDOW_CASES),
            TEST_LOOP(test_softcap, 5),
            TEST_LOOP(test_extreme_softcap, LLM_EXTREME_SOFTCAP_CASES),
            TEST_LOOP(test_alibi, 6),
            TEST_LOOP(test_combined, 2),
            TEST_ONCE(test_arrays_refused),
            TEST_ONCE(test_features),
            TEST_LOOP(test_sinks, LLM_SINKS_CASES),
            TEST_ONCE(test_sinks_older_caller),
    };
    const test_suite_t suite = {
            .name = "llm", .timeout = 300, .open = ref_env_open, .close = ref_env_close};
    return test_run_table(&suite, tests, TEST_COUNT(tests));
}
