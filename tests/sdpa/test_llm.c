/*
 * test_llm.c - the ABI 1.1 score modifiers in the ze kernels (sliding
 * window, logit softcap, ALiBi), forward and backward, on the device
 * against the independent double-precision oracle of tests/abi/llm_case.c
 * with f32 tolerances: the edge cases (a window of 0, one side
 * unbounded, wider than Sk; slopes of 0; Sq < Sk and Sq > Sk), windows
 * narrow enough that whole key tiles are skipped, everything together with
 * dropout, in f32, f16 and bf16; variable-length batches forward; a paged
 * KV cache (decode and chunked prefill, f16 and s8); variable-length
 * batches backward; and what ze refuses (quantized varlen) with the
 * features query saying the same.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi_util.h"
#include "fwd_case.h"
#include "llm_case.h"
#include "sdpa.h"
#include "ze_env.h"

static const test_allocator_t shared_allocator = {suite_shared_alloc, suite_shared_release, NULL};
static const sdpa_dtype_t dtypes[3] = {SDPA_DTYPE_F32, SDPA_DTYPE_F16, SDPA_DTYPE_BF16};

/* f32 arithmetic on the device: the tolerance of llm_compare in units of
 * 2^-24 times the magnitude of a row's terms (exp2 and tanh of the device
 * library, and sums over up to a few hundred keys). */
#define DEVICE_TOLERANCE 256.0

/* A backward reads O rounded to its dtype (the oracle differentiates the
 * exact forward): D_i = rowsum(dO o O) carries O's relative rounding,
 * 2^-11 in f16 and 2^-8 in bf16, into every gradient, which is 2^13 and
 * 2^16 units of llm_compare's 2^-24; four of them for the sums. */
static double tolerance(const llm_spec_t *spec)
{
    if (spec->prop != SDPA_BACKWARD || spec->qdt == SDPA_DTYPE_F32)
        return DEVICE_TOLERANCE;
    return 4.0 * (spec->qdt == SDPA_DTYPE_F16 ? 8192.0 : 65536.0);
}

/* The inputs a backward reads besides Q, K, V and dO: O and the
 * log-sum-exp of the training forward with the same modifiers and dropout,
 * from ref (so that a ze forward bug cannot hide a ze backward one). */
static void forward_on_ref(llm_case_t *c)
{
    sdpa_problem_desc_t f = llm_training_forward(c);
    sdpa_status_t status = test_run_once(suite_env.ref, suite_env.ref_ctx, &f, &c->c.args);
    ck_assert_msg(status == SDPA_SUCCESS, "ref forward: %s: %s", sdpa_status_name(status),
                  suite_env.ref->last_error());
}

/* Runs c on ze; returns the status of create or execute. */
static sdpa_status_t run_ze(llm_case_t *c)
{
    return test_run_once(suite_env.ze, suite_env.ze_ctx, &c->c.desc, &c->c.args);
}

static void check_spec(const llm_spec_t *spec, uint64_t seed)
{
    llm_case_t c;
    llm_desc_init(&c, spec);
    if (rerun_skips_case(&suite_env, &c.c.desc))
        return;
    ck_assert_int_eq(llm_case_alloc(&c, seed, &shared_allocator), 0);
    if (spec->prop == SDPA_BACKWARD)
        forward_on_ref(&c);
    sdpa_status_t status = run_ze(&c);
    ck_assert_msg(status == SDPA_SUCCESS, "%s: %s", sdpa_status_name(status),
                  suite_env.ze->last_error());
    llm_expected_t e;
    ck_assert_int_eq(llm_expect(&c, &e), 0);
    ck_assert(llm_compare(&c, &e, tolerance(spec)));
    llm_expected_free(&e);
    llm_case_free(&c);
}

/* Sliding windows (llm_window_spec): forward (training: the LSE too) for
 * _i < 6, backward with dS after, case 7 with deterministic dQ. */
START_TEST(test_window)
{
    llm_spec_t s = llm_window_spec(_i);
    s.deterministic = _i == 7;
    check_spec(&s, 400 + (uint64_t)_i);
}
END_TEST

/* Windows up to INT64_MAX: a bound wider than the sequence restricts
 * nothing (sdpa.h), on the host side's int32 bounds too. */
LLM_FAMILY_TEST(test_wide_window, llm_wide_window_spec, 420)

/* Windows far narrower than the keys (Sq = 70, Sk = 300): the kernels skip
 * the key tiles (forward, sdpa_bwd_dq) and query blocks (sdpa_bwd) outside
 * the band, which a wrong bound would show as missing or extra terms.
 * Causal local attention (Mistral) and a two-sided window, forward and
 * backward, atomic and deterministic dQ. */
START_TEST(test_window_skips_tiles)
{
    llm_spec_t s = llm_padded_spec(_i < 2 ? SDPA_FORWARD_TRAINING : SDPA_BACKWARD, 1, 70, 300,
                                   _i == 1 ? SDPA_DTYPE_BF16 : SDPA_DTYPE_F16);
    s.window = _i % 2 ? (sdpa_window_desc_t){1, 9, 20} : (sdpa_window_desc_t){1, 24, 0};
    s.mask_kind = _i % 2 ? SDPA_MASK_NONE : SDPA_MASK_CAUSAL_BOTTOM_RIGHT;
    s.deterministic = _i == 3;
    s.ds_dtype = _i == 2 ? SDPA_DTYPE_F16 : SDPA_DTYPE_UNDEF;
    check_spec(&s, 450 + (uint64_t)_i);
}
END_TEST

/* Softcap: scores up to about +-12 under a cap of 3 (deep in tanh's bend),
 * and a cap far above the scores; forward and backward through the cap (dQ,
 * dK), with dropout once; the dS output (the gradient with respect to the
 * capped score) with and without dropout (dropped elements have dS = -P
 * D_i). */
START_TEST(test_softcap)
{
    llm_spec_t s = llm_padded_spec(_i < 3 ? SDPA_FORWARD_TRAINING : SDPA_BACKWARD, 2, 5, 9,
                                   dtypes[_i % 3]);
    s.softcap = _i == 2 ? 1000.0f : 3.0f;
    s.mask_kind = _i == 4 ? SDPA_MASK_CAUSAL_BOTTOM_RIGHT : SDPA_MASK_NONE;
    s.dropout = _i == 5 || _i == 6;
    s.ds_dtype = _i == 6 ? SDPA_DTYPE_F32 : _i == 7 ? SDPA_DTYPE_F16 : SDPA_DTYPE_UNDEF;
    check_spec(&s, 500 + (uint64_t)_i);
}
END_TEST

/* Softcaps from denormal to FLT_MAX (issue 28: c log2(e) overflowed to
 * inf, and inf x tanh(0) made every output NaN; scale / c overflowed for a
 * denormal c, and 0 x inf made the rows with a score of exactly 0 NaN). */
LLM_FAMILY_TEST(test_extreme_softcap, llm_extreme_softcap_spec, 520)

/* ALiBi: slopes per head and per (sequence, head), one of them 0, with
 * Sq < Sk (queries at the last positions) and Sq > Sk; decode (Sq = 1, the
 * GQA-batched forward rows of several heads) once. */
START_TEST(test_alibi)
{
    const int64_t sq = _i == 3 ? 1 : _i % 2 ? 7 : 3, sk = _i % 2 ? 4 : 10;
    llm_spec_t s = llm_padded_spec(_i < 4 ? SDPA_FORWARD_TRAINING : SDPA_BACKWARD, 3, sq, sk,
                                   dtypes[_i % 3]);
    s.alibi = _i % 4 < 2 ? SDPA_ALIBI_PER_HEAD : SDPA_ALIBI_PER_BATCH_HEAD;
    s.mask_kind = _i == 2 ? SDPA_MASK_CAUSAL_BOTTOM_RIGHT : SDPA_MASK_NONE;
    s.ds_dtype = _i == 5 ? SDPA_DTYPE_F32 : SDPA_DTYPE_UNDEF;
    check_spec(&s, 600 + (uint64_t)_i);
}
END_TEST

/* Everything at once: a window, a softcap, ALiBi per sequence, causal,
 * dropout (the training forward writes its keep mask), a mask buffer on
 * top; forward and backward. */
START_TEST(test_combined)
{
    llm_spec_t s =
            llm_padded_spec(_i ? SDPA_BACKWARD : SDPA_FORWARD_TRAINING, 2, 9, 13, SDPA_DTYPE_BF16);
    s.window = (sdpa_window_desc_t){1, 4, 1};
    s.softcap = 2.5f;
    s.alibi = SDPA_ALIBI_PER_BATCH_HEAD;
    s.mask_kind = _i == 2 ? SDPA_MASK_BUFFER : SDPA_MASK_CAUSAL_BOTTOM_RIGHT;
    s.dropout = _i < 2;
    check_spec(&s, 700 + (uint64_t)_i);
}
END_TEST

/* A varlen spec: sequence b has len_q[b] queries and len_k[b] keys. */
static llm_spec_t varlen(sdpa_prop_kind_t prop, int64_t batch, const int64_t *len_q,
                         const int64_t *len_k, sdpa_dtype_t dt)
{
    return llm_spec_of(prop, LLM_VARLEN, batch, len_q, len_k, dt);
}

/* Varlen forward: an empty query sequence, a sequence with no keys (its
 * queries see nothing: 0 or NaN by the softmax mode), one-token sequences;
 * every dtype and mask kind (the buffer in the padded layout), training
 * with dropout and its keep mask (padded layout, padding untouched). */
LLM_FAMILY_TEST(test_varlen_forward, llm_varlen_forward_spec, 100)

/* Varlen sequences over several query and key tiles or blocks (up to 70
 * queries and 130 keys, an empty query sequence). */
static llm_spec_t varlen_long(sdpa_prop_kind_t prop, sdpa_dtype_t dt)
{
    static const int64_t long_q[3] = {40, 0, 70}, long_k[3] = {90, 5, 130};
    return varlen(prop, 3, long_q, long_k, dt);
}

/* Every modifier at once: a causal window, softcap, ALiBi per sequence,
 * dropout. */
static void with_every_modifier(llm_spec_t *s)
{
    s->window = (sdpa_window_desc_t){1, 30, 0};
    s->softcap = 5.0f;
    s->alibi = SDPA_ALIBI_PER_BATCH_HEAD;
    s->mask_kind = SDPA_MASK_CAUSAL_BOTTOM_RIGHT;
    s->dropout = 1;
}

/* Long varlen sequences (varlen_long), plain and with every modifier; and
 * varlen decode (every sequence one query: the GQA-batched rows), one of
 * them with no keys. */
START_TEST(test_varlen_long_and_decode)
{
    static const int64_t one_q[4] = {1, 1, 1, 1}, dec_k[4] = {17, 0, 1, 64};
    llm_spec_t s = _i < 2 ? varlen_long(SDPA_FORWARD_TRAINING, SDPA_DTYPE_F16)
                          : varlen(SDPA_FORWARD_INFERENCE, 4, one_q, dec_k, dtypes[_i % 3]);
    if (_i == 1)
        with_every_modifier(&s);
    s.softmax = SDPA_SOFTMAX_INF_AS_ZERO;
    check_spec(&s, 150 + (uint64_t)_i);
}
END_TEST

/* Varlen backward over the forward's sequences (an empty query sequence,
 * one without keys, one-token sequences): every dtype and mask kind, both
 * softmax modes, atomic and deterministic dQ, GQA 4/2 (dK, dV summed over
 * query heads: f32 sums or per-head partials) and Hq = Hkv (written
 * directly), the dS output in the padded layout, dropout numbers of the
 * padded equivalent. Rows outside every sequence stay untouched. */
START_TEST(test_varlen_backward)
{
    const sdpa_mask_kind_t masks[4] = {SDPA_MASK_NONE, SDPA_MASK_CAUSAL_TOP_LEFT,
                                       SDPA_MASK_CAUSAL_BOTTOM_RIGHT, SDPA_MASK_BUFFER};
    llm_spec_t s =
            varlen(SDPA_BACKWARD, LLM_VARLEN_BATCH, llm_varlen_q, llm_varlen_k, dtypes[_i % 3]);
    s.mask_kind = masks[_i % 4];
    s.softmax = _i % 2 ? SDPA_SOFTMAX_INF_AS_ZERO : SDPA_SOFTMAX_ACCURATE;
    s.deterministic = _i >= 4;
    s.ds_dtype = _i % 3 == 1 ? SDPA_DTYPE_F32 : SDPA_DTYPE_UNDEF;
    s.dropout = _i == 2 || _i == 7;
    if (_i == 0 || _i == 5)
        s.kv_heads = s.q_heads;
    check_spec(&s, 170 + (uint64_t)_i);
}
END_TEST

/* Varlen backward over several query blocks and key blocks (varlen_long),
 * plain and with every modifier (and dS), atomic and deterministic. */
START_TEST(test_varlen_backward_long)
{
    llm_spec_t s = varlen_long(SDPA_BACKWARD, _i % 2 ? SDPA_DTYPE_BF16 : SDPA_DTYPE_F16);
    if (_i % 2) {
        with_every_modifier(&s);
        s.ds_dtype = SDPA_DTYPE_F32;
    }
    s.softmax = SDPA_SOFTMAX_INF_AS_ZERO;
    s.deterministic = _i >= 2;
    check_spec(&s, 180 + (uint64_t)_i);
}
END_TEST

/* Paged decode and chunked prefill (llm_paged_spec), the empty cache and
 * the one of 300 keys over several key tiles included: inf-as-zero
 * softmax, for the queries of the empty cache. */
START_TEST(test_paged)
{
    llm_spec_t s = llm_paged_spec(_i);
    s.softmax = SDPA_SOFTMAX_INF_AS_ZERO;
    check_spec(&s, 300 + (uint64_t)_i);
}
END_TEST

/* Quantized K/V (s8, f32 scales) against the oracle: one scale per tensor
 * or one per group of 4 or 8 head-dim elements of each token. Varlen, whose
 * per-group scales follow the packed key rows [Hkv, total_k] (sdpa.h; an
 * empty key sequence, a causal mask, training); padded and a paged cache
 * (scales over [blocks, Hkv, block_size]) for the same indexing. */
START_TEST(test_quantized_kv)
{
    static const int64_t groups[6] = {0, 4, 8, 8, 4, 8};
    static const int64_t paged_k[4] = {1, 33, 0, 70};
    llm_spec_t s = _i < 4 ? varlen(_i == 2 ? SDPA_FORWARD_TRAINING : SDPA_FORWARD_INFERENCE,
                                   LLM_VARLEN_BATCH, llm_varlen_q, llm_varlen_k, SDPA_DTYPE_F16)
                          : llm_padded_spec(SDPA_FORWARD_INFERENCE, 4, _i == 4 ? 3 : 1, 37,
                                            SDPA_DTYPE_F16);
    if (_i == 3) /* over several key tiles */
        s = varlen(SDPA_FORWARD_INFERENCE, 3, (const int64_t[3]){40, 1, 7},
                   (const int64_t[3]){90, 130, 0}, SDPA_DTYPE_BF16);
    if (_i == 5) {
        s.layout = LLM_PAGED;
        for (int b = 0; b < 4; b++)
            s.len_k[b] = paged_k[b];
        s.block_size = 16;
        s.spare_blocks = 3;
        s.softmax = SDPA_SOFTMAX_INF_AS_ZERO;
    }
    s.kvdt = SDPA_DTYPE_S8;
    s.quant_group = groups[_i];
    if (_i == 1)
        s.mask_kind = SDPA_MASK_CAUSAL_BOTTOM_RIGHT;
    check_spec(&s, 500 + (uint64_t)_i);
}
END_TEST

/* Paged decode on the CPU device's narrow decode tiles, which read K and V
 * straight from the cache's blocks (K_FROM_GLOBAL, V_FROM_GLOBAL,
 * src/plan/fwd_plan.c):
 * GQA 8/2, D equal to its bucket (128 in f16, 64 in s8), cache lengths that
 * end in a partial key tile and a partial block; the configuration string
 * proves the path ran. */
START_TEST(test_paged_v_global)
{
    const int64_t len_k[4] = {1, 33, 70, 300};
    llm_spec_t s = llm_padded_spec(SDPA_FORWARD_INFERENCE, 4, 1, 1, SDPA_DTYPE_F16);
    s.layout = LLM_PAGED;
    for (int b = 0; b < 4; b++)
        s.len_k[b] = len_k[b];
    s.q_heads = 8;
    s.head_size = _i ? 64 : 128;
    s.block_size = _i ? 16 : 32;
    s.spare_blocks = 3;
    s.kvdt = _i ? SDPA_DTYPE_S8 : SDPA_DTYPE_F16;
    s.softmax = SDPA_SOFTMAX_INF_AS_ZERO;
    llm_case_t c;
    llm_desc_init(&c, &s);
    char config[256];
    test_config_string(&suite_env, &c.c.desc, config, sizeof(config));
    ck_assert_msg(strstr(config, "K global V global") != NULL,
                  "not K_FROM_GLOBAL and V_FROM_GLOBAL: %s", config);
    check_spec(&s, 320 + (uint64_t)_i);
}
END_TEST

/* Attention sinks (ABI 1.2) in the portable forward, the decode kernel
 * and the split-KV merge (llm_sinks_spec: rows that see no key, a sink
 * above every score, a sink of -inf, window, GQA, varlen, paged, split);
 * the kernel each case ran is printed; backward with the sinks' gradient
 * (sdpa_bwd_sinks), padded with dS, varlen deterministic, windowed with
 * dropout. */
START_TEST(test_sinks)
{
    const llm_spec_t s = llm_sinks_spec(_i);
    llm_case_t c;
    llm_desc_init(&c, &s);
    char config[256];
    test_config_print(&suite_env, &c.c.desc, "sinks", _i, s.num_splits, config, sizeof(config));
    check_spec(&s, 950 + (uint64_t)_i);
}
END_TEST

/* The features query agrees with what ze runs. */
START_TEST(test_features)
{
    sdpa_features_t f;
    ck_assert_int_eq(llm_features_query(suite_env.ze, suite_env.ze_ctx, sizeof(f),
                                        SDPA_FEATURES_VERSION, &f),
                     SDPA_SUCCESS);
    ck_assert_uint_eq(f.has_window, 1);
    ck_assert_uint_eq(f.has_softcap, 1);
    ck_assert_uint_eq(f.has_alibi, 1);
    ck_assert_uint_eq(f.has_varlen, 1);
    ck_assert_uint_eq(f.has_paged_kv, 1);
    ck_assert_uint_eq(f.has_split_kv, 1); /* test_decode.c */
    ck_assert_uint_eq(f.has_sinks, 1);    /* test_sinks */
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_LOOP(test_window, 12),
            TEST_LOOP(test_wide_window, LLM_WIDE_WINDOW_CASES),
            TEST_LOOP(test_window_skips_tiles, 4),
            TEST_LOOP(test_softcap, 8),
            TEST_LOOP(test_extreme_softcap, LLM_EXTREME_SOFTCAP_CASES),
            TEST_LOOP(test_alibi, 6),
            TEST_LOOP(test_combined, 3),
            TEST_LOOP(test_varlen_forward, LLM_VARLEN_FORWARD_CASES),
            TEST_LOOP(test_varlen_long_and_decode, 5),
            TEST_LOOP(test_varlen_backward, 8),
            TEST_LOOP(test_varlen_backward_long, 4),
            TEST_LOOP(test_paged, LLM_PAGED_CASES),
            TEST_LOOP(test_quantized_kv, 6),
            TEST_LOOP(test_paged_v_global, 2),
            TEST_ONCE(test_features),
            TEST_LOOP(test_sinks, LLM_SINKS_CASES),
    };
    return test_env_run_table("llm on ze", 600, tests, TEST_COUNT(tests));
}
