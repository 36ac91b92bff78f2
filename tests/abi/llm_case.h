/*
 * llm_case.h - attention problems with the ABI 1.1 features (varlen, paged
 * KV, sliding window, softcap, ALiBi) for the tests of both backends: the
 * descriptor, its buffers with valid contents (cumulative lengths, a
 * shuffled block table whose unused entries are poison, slopes), and an
 * independent oracle that computes each sequence's attention by the
 * definitions in sdpa.h with plain loops in double:
 *
 *   s_ij = cap(scale * q_i.k_j) + bias_ij + mask_ij, -inf outside the
 *   causal band and the window, softmax, dropout, O, LSE, and for backward
 *   the analytic gradients through the softcap.
 */
#ifndef SDPA_TESTS_LLM_CASE_H
#define SDPA_TESTS_LLM_CASE_H

#include <stdint.h>

#include "abi_util.h"
#include "sdpa.h"

#define LLM_MAX_BATCH 16

/* llm_spec_t.quant_group values other than a group size. */
#define LLM_QUANT_PER_HEAD (-1)
#define LLM_QUANT_NONE (-2)

/* How a case lays out its keys. */
typedef enum llm_layout {
    LLM_PADDED = 0, /* [B, H, S, D]: every sequence has the same lengths */
    LLM_VARLEN,     /* packed [1, H, total, D] with cu_seqlens */
    LLM_PAGED,      /* K/V caches [num_blocks, Hkv, block_size, D] + block table */
} llm_layout_t;

typedef struct llm_spec {
    sdpa_prop_kind_t prop;
    llm_layout_t layout;
    int64_t batch, q_heads, kv_heads, head_size;
    /* Per-sequence lengths (batch entries). PADDED: all equal. PAGED:
     * len_q all equal (Sq), len_k the cache lengths. */
    int64_t len_q[LLM_MAX_BATCH], len_k[LLM_MAX_BATCH];
    int64_t block_size;         /* PAGED */
    int64_t spare_blocks;       /* PAGED: cache blocks no sequence uses */
    sdpa_dtype_t qdt, kvdt;     /* kvdt s8: scales, see quant_group */
    sdpa_mask_kind_t mask_kind; /* BUFFER: f32 [B, 1, Sq, Sk] with some -inf */
    sdpa_softmax_kind_t softmax;
    sdpa_window_desc_t window;
    float softcap;
    sdpa_alibi_kind_t alibi;
    int dropout;           /* training and backward: p = 0.25, host scalars */
    sdpa_dtype_t ds_dtype; /* backward: UNDEF or a dtype for dS */
    int deterministic;
    uint32_t num_splits;
    /* kvdt quantized (integer or FP8): 0 one f32 scale for each of K and
     * V, g > 0 f32 scales per group of g head-dim elements of each token,
     * LLM_QUANT_PER_HEAD one per K/V head, LLM_QUANT_NONE (FP8 only) no
     * scales. */
    int64_t quant_group;
    /* PADDED: query 0 and key 1 of sequence 0 all zeros in every head, so
     * that their scores are exactly 0. */
    int zero_rows;
    /* ABI 1.2 attention sinks: 1 = one logit per query head (llm_sink). */
    int sinks;
    /* ABI 1.2: V's head size (0: head_size), and 1 = V is a view of K's
     * first head_size_v elements (MLA: exec_args.v = exec_args.k). */
    int64_t head_size_v;
    int v_view_of_k;
} llm_spec_t;

typedef struct llm_case {
    llm_spec_t spec;
    attn_case_t c;                                          /* desc, args and the buffers */
    int64_t q_start[LLM_MAX_BATCH], k_start[LLM_MAX_BATCH]; /* VARLEN: row of each sequence */
    int32_t *block_table;                                   /* PAGED (host view of the buffer) */
    int64_t max_blocks;
} llm_case_t;

/* A spec of batch sequences, GQA 4/2, head size 16, Q, K, V in dt, blocks
 * of 16 (PAGED), everything else off: len_q[b] queries (all len_q[0] unless
 * VARLEN) and len_k[b] keys (all len_k[0] when PADDED). */
llm_spec_t llm_spec_of(sdpa_prop_kind_t prop, llm_layout_t layout, int64_t batch,
                       const int64_t *len_q, const int64_t *len_k, sdpa_dtype_t dt);

/* A PADDED spec: batch sequences of sq queries and sk keys (llm_spec_of). */
llm_spec_t llm_padded_spec(sdpa_prop_kind_t prop, int64_t batch, int64_t sq, int64_t sk,
                           sdpa_dtype_t dt);

/* A Check test, name, running case _i of a family of specs (spec_of, e.g.
 * llm_window_spec) with seed0 + _i through the including suite's
 * check_spec(const llm_spec_t *, uint64_t): the ABI suite against the
 * oracle, the sdpa suite on the device. */
#define LLM_FAMILY_TEST(name, spec_of, seed0)                                                      \
    START_TEST(name)                                                                               \
    {                                                                                              \
        const llm_spec_t s = spec_of(_i);                                                          \
        check_spec(&s, (seed0) + (uint64_t)_i);                                                    \
    }                                                                                              \
    END_TEST

/* Asks iface's context ctx for its features in f, a struct_size struct of
 * struct_version; the bytes the backend does not write keep 0xab. */
sdpa_status_t llm_features_query(const sdpa_backend_iface_t *iface, sdpa_context_t *ctx,
                                 uint32_t struct_size, uint32_t struct_version, sdpa_features_t *f);

/* The varlen sequences of the suites: 5 queries and 7 keys, an empty query
 * sequence, one without keys (its queries see nothing), one-token
 * sequences, and the maxima, 9 queries and 12 keys. */
#define LLM_VARLEN_BATCH 5
extern const int64_t llm_varlen_q[LLM_VARLEN_BATCH], llm_varlen_k[LLM_VARLEN_BATCH];

/* The varlen forward (training) over those: case i of
 * LLM_VARLEN_FORWARD_CASES, in f32, f16, bf16 (i % 3), every mask kind
 * (i % 4; the buffer in the padded layout), both softmax modes (i % 2),
 * dropout and its keep mask for i >= 6. */
#define LLM_VARLEN_FORWARD_CASES 8
llm_spec_t llm_varlen_forward_spec(int i);

/* Paged decode and chunked prefill: case i of LLM_PAGED_CASES, Sq 1 for
 * i < 4 then 4 (causal), cache lengths of one token, a last page partly
 * filled, pages exactly full (1, 33, 48 and 70 keys; case 8 an empty
 * cache, case 9 300 keys over pages of 64); blocks of 16 or 32 shuffled
 * through the cache with 3 spare ones; f16 and s8 caches (i % 4 == 2) with
 * f16, bf16 (5) and f32 (6) queries; GQA 8/2; case 7 with a window, a
 * softcap and ALiBi at once. Inference for even i, training for odd. */
#define LLM_PAGED_CASES 10
llm_spec_t llm_paged_spec(int i);

/* Sliding windows: case i of the diagonal alone, narrow, one side
 * unbounded, wider than Sk, left-only; alone and with either causal mask
 * (i % 4); B2 Sq 6 < Sk 11 in f32, f16, bf16 (i % 3). Forward (training) for
 * i < 6, backward with dS in f32 after. */
llm_spec_t llm_window_spec(int i);

/* Windows whose bounds reach INT64_MAX, where sdpa.h makes a bound wider
 * than the sequence no restriction: case i of LLM_WIDE_WINDOW_CASES, each
 * bound INT64_MAX, INT64_MAX - 1, small or -1, alone or mixed, with a causal
 * mask or none, Sq < Sk and Sq > Sk (queries before the first key), forward
 * (training) for even i and backward with dS for odd i, in f32, f16, bf16. */
#define LLM_WIDE_WINDOW_CASES 16
llm_spec_t llm_wide_window_spec(int i);

/* Softcaps at the ends of the finite floats, each case i of
 * LLM_EXTREME_SOFTCAP_CASES with scores of exactly 0 (zero_rows): 3e38,
 * FLT_MAX and 2.4e38 (above FLT_MAX / log2(e), where c log2(e) overflows),
 * and the denormals 1e-45 and 1e-40 (where scale / c does). Forward f16
 * B1 Hq4 Hkv2 S64 D64 for i < 5, then backward with dS in f32 and f16. */
#define LLM_EXTREME_SOFTCAP_CASES 10
llm_spec_t llm_extreme_softcap_spec(int i);

/* The sink of query head h of Hq in a case with sinks: 40 for head 1
 * (above every score of these cases: rows get almost all of their weight
 * from it), -inf for head 2 when Hq > 2 (no sink), small values else. */
float llm_sink(int64_t h, int64_t q_heads);

/* Attention sinks (ABI 1.2) with the other features: case i of
 * LLM_SINKS_CASES. Forward (training) without a mask; causal bottom-right
 * with Sq > Sk, whose first queries see no key (O = 0 with a sink, in
 * both softmax modes); a window; varlen with empty sequences and
 * sequences without keys; paged decode, unsplit and split; dense decode
 * split (GQA 8/2); dropout with the softcap and ALiBi; backward padded
 * (with dS), varlen (deterministic) and with a window and dropout; f32,
 * f16 and bf16. */
#define LLM_SINKS_CASES 12
llm_spec_t llm_sinks_spec(int i);

/* The maximum of len[0 .. n-1]. */
int64_t llm_max(const int64_t *len, int64_t n);

/* Fills c->c.desc from spec (c->spec = *spec). */
void llm_desc_init(llm_case_t *c, const llm_spec_t *spec);

/* Allocates and fills every buffer of c->c.desc with allocator (NULL:
 * malloc): the inputs exact in their dtypes, outputs 0xff (NaN), rows of
 * packed tensors outside every sequence 0xff too (a kernel that reads them
 * poisons its result). Returns 0, or -1 if an allocation failed. */
int llm_case_alloc(llm_case_t *c, uint64_t seed, const test_allocator_t *allocator);
void llm_case_free(llm_case_t *c);

/* The training forward of c's backward problem, with the same modifiers and
 * dropout: what writes the O and log-sum-exp the backward reads (into c's
 * buffers). No gradients, no dropout mask output. */
sdpa_problem_desc_t llm_training_forward(const llm_case_t *c);

/* The oracle's results for every output the problem has, in the backend's
 * layout order: o and lse indexed like dst and the workspace; dq, dk, dv
 * like the gradients; ds [B, Hq, Sq, Sk] logical. Elements the backend must
 * not write (rows outside every sequence, padding) are marked in `written`
 * (1 = the backend writes it). */
typedef struct llm_expected {
    double *o, *lse, *dq, *dk, *dv, *ds;
    double *dsink; /* [Hq], with sinks in backward */
    uint8_t *o_written, *lse_written, *dq_written, *dkv_written, *ds_written;
    uint8_t *dv_written; /* over diff_v's dims (Dv) */
} llm_expected_t;

int llm_expect(const llm_case_t *c, llm_expected_t *e);
void llm_expected_free(llm_expected_t *e);

/* Compares every output of c with e. tolerance_scale 0: each output is the
 * oracle's value rounded once (half an ulp plus 1e-12: ref); > 0: adds
 * tolerance_scale * 2^-24 * (the magnitude of the row's terms) for f32
 * arithmetic on a device. Elements not written must still hold 0xff.
 * Prints the first mismatch per tensor; returns 1 if all match. */
int llm_compare(const llm_case_t *c, const llm_expected_t *e, double tolerance_scale);

#endif /* SDPA_TESTS_LLM_CASE_H */
