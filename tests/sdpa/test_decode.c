/*
 * test_decode.c - the thin-Q decode kernel (spirv/portable/sdpa_decode.cl) and
 * split-KV decode (its partial states merged by spirv/portable/sdpa_merge.cl) on the
 * device, against the independent double-precision oracle of
 * tests/abi/llm_case.c with f32 tolerances: splits forced 1..16 (more than
 * the key tiles too), automatic; Sk of no particular multiple; GQA, MQA and
 * MHA; a few queries per head (speculative decode); f32, f16, bf16 and s8
 * K/V; mask buffer and causal masks, window, softcap, ALiBi; a paged cache
 * with an empty sequence (fully masked rows: LSE -inf, O NaN or 0);
 * training (the log-sum-exp); the scratch query and caller scratch. The
 * suite runs with SDPA_ZE_DECODE=1, so unsplit problems take the kernel too.
 */
#include <check.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi_util.h"
#include "llm_case.h"
#include "sdpa.h"
#include "ze_env.h"

static const test_allocator_t shared_allocator = {suite_shared_alloc, suite_shared_release, NULL};

/* f32 arithmetic on the device, as in test_llm.c: llm_compare's tolerance
 * in units of 2^-24 times the magnitude of a row's terms (exp2 and tanh of
 * the device library, sums over up to a few hundred keys, the merge's
 * rescaling). */
#define DEVICE_TOLERANCE 256.0

/* The number after "splits=" in prim's configuration string, or -1 if the
 * primitive does not run the decode kernel. */
static int config_splits(sdpa_primitive_t *prim)
{
    char cfg[256];
    ck_assert_int_eq(suite_env.ze->primitive_query(prim, SDPA_QUERY_CONFIG_STRING, cfg,
                                                   sizeof(cfg)),
                     SDPA_SUCCESS);
    const char *s = strstr(cfg, "splits=");
    if (strncmp(cfg, "fwd decode", 10) != 0 || s == NULL)
        return -1;
    return atoi(s + 7);
}

/* Runs spec on ze, asserts that the decode kernel ran with `splits` splits
 * (-1: any), and compares every output with the oracle. With caller_scratch
 * the execution gets scratch of exactly SDPA_QUERY_SCRATCH_BYTES. */
static void check_spec(const llm_spec_t *spec, int splits, int caller_scratch, uint64_t seed)
{
    llm_case_t c;
    llm_desc_init(&c, spec);
    ck_assert_int_eq(llm_case_alloc(&c, seed, &shared_allocator), 0);
    sdpa_primitive_t *prim = NULL;
    sdpa_status_t status = suite_env.ze->primitive_create(suite_env.ze_ctx, &c.c.desc, &prim);
    ck_assert_msg(status == SDPA_SUCCESS, "%s: %s", sdpa_status_name(status),
                  suite_env.ze->last_error());
    const int ran = config_splits(prim);
    ck_assert_msg(ran >= 1 && (splits < 0 || ran == splits), "decode ran %d splits, expected %d",
                  ran, splits);
    size_t scratch_bytes = 1;
    ck_assert_int_eq(suite_env.ze->primitive_query(prim, SDPA_QUERY_SCRATCH_BYTES, &scratch_bytes,
                                                   sizeof(scratch_bytes)),
                     SDPA_SUCCESS);
    ck_assert_msg((scratch_bytes > 0) == (ran > 1), "scratch %zu bytes with %d splits",
                  scratch_bytes, ran);
    void *scratch = NULL;
    if (caller_scratch && scratch_bytes) {
        scratch = test_alloc(&suite_env, scratch_bytes);
        c.c.args.scratch = scratch;
        c.c.args.scratch_size = scratch_bytes;
    }
    status = suite_env.ze->primitive_execute(prim, &c.c.args);
    ck_assert_msg(status == SDPA_SUCCESS, "%s: %s", sdpa_status_name(status),
                  suite_env.ze->last_error());
    suite_env.ze->primitive_destroy(prim);
    if (scratch)
        test_free(&suite_env, scratch);
    llm_expected_t e;
    ck_assert_int_eq(llm_expect(&c, &e), 0);
    ck_assert(llm_compare(&c, &e, DEVICE_TOLERANCE));
    llm_expected_free(&e);
    llm_case_free(&c);
}

/* A padded spec of batch sequences, sq queries, sk keys. */
static llm_spec_t padded(sdpa_prop_kind_t prop, int64_t batch, int64_t sq, int64_t sk,
                         sdpa_dtype_t dt)
{
    return llm_spec_of(prop, LLM_PADDED, batch, &sq, &sk, dt);
}

/* Key tiles of the decode kernel for sk keys (one key per lane). */
static int key_tiles(int64_t sk)
{
    sdpa_features_t f = {.struct_size = sizeof(f), .struct_version = SDPA_FEATURES_VERSION};
    ck_assert_int_eq(suite_env.ze->context_get_features(suite_env.ze_ctx, &f), SDPA_SUCCESS);
    return (int)((sk + f.subgroup_size - 1) / f.subgroup_size);
}

/* Splits forced 1, 2, 3, 4, 7 and 16 over Sk = 203 (13 tiles with
 * sub-groups of 16: 7 splits leave the last split short, 16 are capped at
 * the tiles); GQA 8/2, training (the merged log-sum-exp), f16. */
START_TEST(test_forced_splits)
{
    static const uint32_t n[6] = {1, 2, 3, 4, 7, 16};
    llm_spec_t s = padded(SDPA_FORWARD_TRAINING, 2, 1, 203, SDPA_DTYPE_F16);
    s.q_heads = 8;
    s.num_splits = n[_i];
    const int tiles = key_tiles(203);
    check_spec(&s, (int)n[_i] < tiles ? (int)n[_i] : tiles, _i == 3, 800 + (uint64_t)_i);
}
END_TEST

/* Head sizes 16, 40, 64, 128; MQA (8 heads on one K/V head), GQA and MHA,
 * one to three queries per head
 * (rows of several heads and queries in one work-group), f32 and bf16, the
 * masks, the modifiers, s8 K/V; three splits each and automatic splits
 * once. */
START_TEST(test_features_split)
{
    llm_spec_t s = padded(_i % 2 ? SDPA_FORWARD_TRAINING : SDPA_FORWARD_INFERENCE, 2,
                          1 + _i % 3, 61, _i % 3 == 1 ? SDPA_DTYPE_BF16 : SDPA_DTYPE_F32);
    s.q_heads = 8;
    s.kv_heads = _i < 2 ? 1 : _i < 4 ? 4 : 8; /* MQA, GQA 2 (6 rows with Sq 3), MHA */
    s.head_size = _i % 4 == 0 ? 64 : _i % 4 == 1 ? 128 : _i % 4 == 2 ? 40 : 16;
    s.num_splits = _i == 7 ? 0 : 3;
    switch (_i) {
    case 0: s.mask_kind = SDPA_MASK_BUFFER; break;
    case 1: s.mask_kind = SDPA_MASK_CAUSAL_BOTTOM_RIGHT; break;
    case 2: s.mask_kind = SDPA_MASK_CAUSAL_TOP_LEFT; s.softmax = SDPA_SOFTMAX_INF_AS_ZERO; break;
    case 3: s.window = (sdpa_window_desc_t){1, 20, 0}; s.softcap = 3.0f; break;
    case 4: s.alibi = SDPA_ALIBI_PER_BATCH_HEAD; s.mask_kind = SDPA_MASK_CAUSAL_BOTTOM_RIGHT; break;
    case 5: s.kvdt = SDPA_DTYPE_S8; break;
    case 6: s.kvdt = SDPA_DTYPE_S8; s.window = (sdpa_window_desc_t){1, 5, -1}; break;
    default: break;
    }
    check_spec(&s, _i == 7 ? -1 : 3, 0, 900 + (uint64_t)_i);
}
END_TEST

/* Softcaps FLT_MAX, 2.4e38 (above FLT_MAX / log2(e)) and the denormal
 * 1e-45 in the decode kernel, three splits, with sequence 0's query and
 * one of its keys all zeros (scores of exactly 0); f16 and f32. */
START_TEST(test_extreme_softcap_split)
{
    static const float caps[3] = {FLT_MAX, 2.4e38f, 1e-45f};
    llm_spec_t s = padded(_i < 3 ? SDPA_FORWARD_TRAINING : SDPA_FORWARD_INFERENCE, 2, 1, 61,
                          _i < 3 ? SDPA_DTYPE_F16 : SDPA_DTYPE_F32);
    s.q_heads = 8;
    s.head_size = 64;
    s.softcap = caps[_i % 3];
    s.zero_rows = 1;
    s.num_splits = 3;
    check_spec(&s, 3, 0, 950 + (uint64_t)_i);
}
END_TEST

/* A paged cache: lengths 1, 70, 0 (an empty cache: fully masked rows, LSE
 * -inf, O NaN in ACCURATE mode and 0 in INF_AS_ZERO) and 300, so that the
 * splits of one sequence are empty where another's are full; f16 and s8,
 * unsplit and four splits, training. */
START_TEST(test_paged_split)
{
    const int64_t len_k[4] = {1, 70, 0, 300};
    const int64_t sq = 1;
    llm_spec_t s = padded(SDPA_FORWARD_TRAINING, 4, sq, 1, SDPA_DTYPE_F16);
    s.layout = LLM_PAGED;
    for (int b = 0; b < 4; b++)
        s.len_k[b] = len_k[b];
    s.q_heads = 8;
    s.block_size = 32;
    s.spare_blocks = 2;
    s.kvdt = _i % 2 ? SDPA_DTYPE_S8 : SDPA_DTYPE_F16;
    s.softmax = _i < 2 ? SDPA_SOFTMAX_ACCURATE : SDPA_SOFTMAX_INF_AS_ZERO;
    s.num_splits = _i < 2 ? 1 : 4;
    check_spec(&s, _i < 2 ? 1 : 4, 0, 950 + (uint64_t)_i);
}
END_TEST

/* ze advertises split-KV; caller scratch smaller than the query says is
 * refused with a message that names it, and so is an unknown
 * SDPA_ZE_DECODE. */
START_TEST(test_feature_and_scratch)
{
    sdpa_features_t f = {.struct_size = sizeof(f), .struct_version = SDPA_FEATURES_VERSION};
    ck_assert_int_eq(suite_env.ze->context_get_features(suite_env.ze_ctx, &f), SDPA_SUCCESS);
    ck_assert_uint_eq(f.has_split_kv, 1);

    llm_spec_t s = padded(SDPA_FORWARD_INFERENCE, 1, 1, 100, SDPA_DTYPE_F16);
    s.num_splits = 2;
    llm_case_t c;
    llm_desc_init(&c, &s);
    ck_assert_int_eq(llm_case_alloc(&c, 990, &shared_allocator), 0);
    sdpa_primitive_t *prim = NULL;
    ck_assert_int_eq(suite_env.ze->primitive_create(suite_env.ze_ctx, &c.c.desc, &prim),
                     SDPA_SUCCESS);
    size_t bytes = 0;
    ck_assert_int_eq(
            suite_env.ze->primitive_query(prim, SDPA_QUERY_SCRATCH_BYTES, &bytes, sizeof(bytes)),
            SDPA_SUCCESS);
    ck_assert_uint_gt(bytes, 0);
    void *scratch = test_alloc(&suite_env, bytes);
    c.c.args.scratch = scratch;
    c.c.args.scratch_size = bytes - 1;
    sdpa_status_t status = suite_env.ze->primitive_execute(prim, &c.c.args);
    ck_assert_int_eq(status, SDPA_ERROR_INSUFFICIENT_SCRATCH);
    ck_assert_msg(strstr(suite_env.ze->last_error(), "scratch_size") != NULL, "%s",
                  suite_env.ze->last_error());
    suite_env.ze->primitive_destroy(prim);
    test_free(&suite_env, scratch);

    /* An SDPA_ZE_DECODE that is neither auto, 0 nor 1 is refused, named
     * (as SDPA_ZE_KERNELS is), not taken for auto. */
    ck_assert_int_eq(setenv("SDPA_ZE_DECODE", "always", 1), 0);
    prim = NULL;
    status = suite_env.ze->primitive_create(suite_env.ze_ctx, &c.c.desc, &prim);
    ck_assert_int_eq(setenv("SDPA_ZE_DECODE", "1", 1), 0);
    ck_assert_int_eq(status, SDPA_ERROR_INVALID_CONFIG);
    ck_assert_msg(strstr(suite_env.ze->last_error(), "SDPA_ZE_DECODE = \"always\"") != NULL,
                  "%s", suite_env.ze->last_error());
    llm_case_free(&c);
}
END_TEST

/* Attention sinks (ABI 1.2) in the decode kernel, unsplit (the sink in
 * the running state) and split (the merge counts it once): paged decode
 * with a one-key sequence, Sq 3 speculative decode with a causal mask
 * whose first queries see nothing of a one-key cache, dense GQA 8/2, and
 * MQA in f32 and bf16 (sinks of 40, -inf and small ones). */
START_TEST(test_sinks)
{
    static const uint32_t splits[6] = {1, 3, 1, 4, 1, 5};
    llm_spec_t s;
    if (_i < 2) {
        s = llm_sinks_spec(6); /* paged, f32, training */
    } else if (_i < 4) {
        s = llm_sinks_spec(11); /* dense GQA 8/2, f16, training */
    } else {
        const int64_t len_k[3] = {1, 40, 77}, sq = 3;
        s = llm_spec_of(SDPA_FORWARD_TRAINING, LLM_PAGED, 3, &sq, len_k, SDPA_DTYPE_BF16);
        s.q_heads = 4;
        s.kv_heads = 1;
        s.sinks = 1;
        s.mask_kind = SDPA_MASK_CAUSAL_BOTTOM_RIGHT;
    }
    s.num_splits = splits[_i];
    const int tiles = _i < 2 ? 5 : _i < 4 ? 13 : 5; /* 70, 203, 77 keys in 16s */
    check_spec(&s, (int)splits[_i] < tiles ? (int)splits[_i] : tiles, _i == 3,
               980 + (uint64_t)_i);
}
END_TEST

int main(void)
{
    /* Every problem the decode kernel serves takes it, split or not
     * (decode_plan.h); unset, unsplit problems keep the portable forward. */
    setenv("SDPA_ZE_DECODE", "1", 1);
    const test_entry_t tests[] = {
            TEST_LOOP(test_forced_splits, 6),         TEST_LOOP(test_features_split, 8),
            TEST_LOOP(test_extreme_softcap_split, 6), TEST_LOOP(test_paged_split, 4),
            TEST_ONCE(test_feature_and_scratch),     TEST_LOOP(test_sinks, 6),
    };
    return test_env_run_table("decode on ze", 600, tests, TEST_COUNT(tests));
}
