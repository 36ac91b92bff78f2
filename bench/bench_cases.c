/* bench_cases.c - the benchmark's cases and their model flops and bytes. */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "element.h"
#include "problem.h"

/* Forward rows first; backward rows (2.5x the flops) run when the backend
 * reports has_backward. max_reps bounds small cases, whose runs are short. */
#define SHAPE(b, hq, hkv, sq, sk, d)                                                               \
    .batch = (b), .q_heads = (hq), .kv_heads = (hkv), .q_len = (sq), .k_len = (sk), .head_size = (d)

/* A varlen batch of mixed lengths (packed, 2800 tokens) and its padded
 * equivalent (8 x 1024 = 8192 tokens): 4.2x fewer score pairs. */
static const int64_t mixed_lens[8] = {1024, 768, 512, 256, 128, 64, 32, 16};

static const bench_case_t cases[] = {
        {.name = "llama3-8b-prefill",
         .about = "Llama-3-8B prefill: B1 Hq32 Hkv8 S2048 D128 causal f16",
         .pass = BENCH_FORWARD,
         SHAPE(1, 32, 8, 2048, 2048, 128),
         .dtype = SDPA_DTYPE_F16,
         .mask = SDPA_MASK_CAUSAL_BOTTOM_RIGHT,
         .max_reps = 10,
         .in_default_run = 1},
        {.name = "llama3-8b-decode",
         .about = "Llama-3-8B decode: B1 Hq32 Hkv8 Sq1 Sk4096 D128 f16",
         .pass = BENCH_FORWARD,
         SHAPE(1, 32, 8, 1, 4096, 128),
         .dtype = SDPA_DTYPE_F16,
         .mask = SDPA_MASK_NONE,
         .max_reps = 100,
         .in_default_run = 1},
        {.name = "bert-base",
         .about = "BERT-base: B8 H12 S512 D64 f32",
         .pass = BENCH_FORWARD,
         SHAPE(8, 12, 12, 512, 512, 64),
         .dtype = SDPA_DTYPE_F32,
         .mask = SDPA_MASK_NONE,
         .max_reps = 20,
         .in_default_run = 1},
        {.name = "long-16k",
         .about = "long context: B1 H1 S16384 D64 f16 (the naive S x S is 1 GiB)",
         .pass = BENCH_FORWARD,
         SHAPE(1, 1, 1, 16384, 16384, 64),
         .dtype = SDPA_DTYPE_F16,
         .mask = SDPA_MASK_NONE,
         .max_reps = 5,
         .in_default_run = 1},
        {.name = "llama3-8b-prefill-bwd",
         .about = "Llama-3-8B prefill backward: B1 Hq32 Hkv8 S2048 D128 causal f16",
         .pass = BENCH_BACKWARD,
         SHAPE(1, 32, 8, 2048, 2048, 128),
         .dtype = SDPA_DTYPE_F16,
         .mask = SDPA_MASK_CAUSAL_BOTTOM_RIGHT,
         .max_reps = 5,
         .in_default_run = 1},
        {.name = "bert-base-bwd",
         .about = "BERT-base backward: B8 H12 S512 D64 f32",
         .pass = BENCH_BACKWARD,
         SHAPE(8, 12, 12, 512, 512, 64),
         .dtype = SDPA_DTYPE_F32,
         .mask = SDPA_MASK_NONE,
         .max_reps = 10,
         .in_default_run = 1},
        /* The cost of the deterministic mode: the row above without atomics
         * (dQ in a second pass over the keys). */
        {.name = "bert-base-bwd-det",
         .about = "BERT-base backward, deterministic: B8 H12 S512 D64 f32",
         .pass = BENCH_BACKWARD,
         SHAPE(8, 12, 12, 512, 512, 64),
         .dtype = SDPA_DTYPE_F32,
         .mask = SDPA_MASK_NONE,
         .deterministic = 1,
         .max_reps = 10,
         .in_default_run = 1},
        /* A quantized KV cache against the f16 decode row: 2x and 4x fewer
         * K/V bytes (plus one f16 scale per 32 elements). */
        {.name = "llama3-8b-decode-int8",
         .about = "Llama-3-8B decode, K/V s8 with f16 scales per 32: B1 Hq32 Hkv8 Sq1 Sk4096 D128",
         .pass = BENCH_FORWARD,
         SHAPE(1, 32, 8, 1, 4096, 128),
         .dtype = SDPA_DTYPE_F16,
         .kv_dtype = SDPA_DTYPE_S8,
         .mask = SDPA_MASK_NONE,
         .max_reps = 100,
         .in_default_run = 1},
        /* An FP8 KV cache (vLLM, FlashInfer; ABI 1.2) against the f16
         * decode row: half the K/V bytes, one f32 scale per tensor. */
        {.name = "llama3-8b-decode-fp8",
         .about = "Llama-3-8B decode, K/V f8_e4m3 with one f32 scale: B1 Hq32 Hkv8 Sq1 Sk4096 "
                  "D128",
         .pass = BENCH_FORWARD,
         SHAPE(1, 32, 8, 1, 4096, 128),
         .dtype = SDPA_DTYPE_F16,
         .kv_dtype = SDPA_DTYPE_F8_E4M3,
         .mask = SDPA_MASK_NONE,
         .max_reps = 100,
         .in_default_run = 1},
        {.name = "llama3-8b-decode-int4",
         .about = "Llama-3-8B decode, K/V s4 with f16 scales per 32: B1 Hq32 Hkv8 Sq1 Sk4096 D128",
         .pass = BENCH_FORWARD,
         SHAPE(1, 32, 8, 1, 4096, 128),
         .dtype = SDPA_DTYPE_F16,
         .kv_dtype = SDPA_DTYPE_S4,
         .mask = SDPA_MASK_NONE,
         .max_reps = 100,
         .in_default_run = 1},
        /* Split-KV decode vs none: one sequence on one K/V head cannot fill
         * a device unsplit; num_splits = 1 keeps it on one work-group per
         * head, 0 lets the backend split it (doc/decode.md). */
        {.name = "decode-long-nosplit",
         .about = "long-context decode, unsplit: B1 Hq8 Hkv1 Sq1 Sk32768 D128 f16, num_splits 1",
         .pass = BENCH_FORWARD,
         SHAPE(1, 8, 1, 1, 32768, 128),
         .dtype = SDPA_DTYPE_F16,
         .mask = SDPA_MASK_NONE,
         .max_reps = 50,
         .in_default_run = 1,
         .num_splits = 1},
        {.name = "decode-long-split",
         .about = "long-context decode, split-KV: B1 Hq8 Hkv1 Sq1 Sk32768 D128 f16, num_splits 2 "
                  "(forced: on the CPU device num_splits 0 does not split)",
         .pass = BENCH_FORWARD,
         SHAPE(1, 8, 1, 1, 32768, 128),
         .dtype = SDPA_DTYPE_F16,
         .mask = SDPA_MASK_NONE,
         .max_reps = 50,
         .in_default_run = 1,
         .num_splits = 2},
        /* Small shapes for trying the tool (and the ref backend) quickly. */
        {.name = "tiny",
         .about = "tiny: B1 Hq4 Hkv2 S256 D64 causal f16",
         .pass = BENCH_FORWARD,
         SHAPE(1, 4, 2, 256, 256, 64),
         .dtype = SDPA_DTYPE_F16,
         .mask = SDPA_MASK_CAUSAL_BOTTOM_RIGHT,
         .max_reps = 20},
        {.name = "tiny-bwd",
         .about = "tiny backward: B1 Hq4 Hkv2 S256 D64 causal f32",
         .pass = BENCH_BACKWARD,
         SHAPE(1, 4, 2, 256, 256, 64),
         .dtype = SDPA_DTYPE_F32,
         .mask = SDPA_MASK_CAUSAL_BOTTOM_RIGHT,
         .max_reps = 20},
        /* Sliding window (Mistral) against full causal attention over the
         * same 16k tokens: the window's key tiles alone are visited, 2.29x
         * fewer score pairs (ABI 1.1; torch: n/a). */
        {.name = "long-16k-causal",
         .about = "long context, causal: B1 H1 S16384 D64 f16",
         .pass = BENCH_FORWARD,
         SHAPE(1, 1, 1, 16384, 16384, 64),
         .dtype = SDPA_DTYPE_F16,
         .mask = SDPA_MASK_CAUSAL_BOTTOM_RIGHT,
         .max_reps = 5},
        {.name = "long-16k-window4k",
         .about = "long context, causal sliding window 4096: B1 H1 S16384 D64 f16",
         .pass = BENCH_FORWARD,
         SHAPE(1, 1, 1, 16384, 16384, 64),
         .dtype = SDPA_DTYPE_F16,
         .mask = SDPA_MASK_CAUSAL_BOTTOM_RIGHT,
         .window_left = 4096,
         .max_reps = 5},
        {.name = "varlen-mixed",
         .about = "varlen batch, 8 sequences of 16..1024 (2800 tokens): Hq8 Hkv2 D128 causal f16",
         .pass = BENCH_FORWARD,
         SHAPE(1, 8, 2, 2800, 2800, 128),
         .dtype = SDPA_DTYPE_F16,
         .mask = SDPA_MASK_CAUSAL_BOTTOM_RIGHT,
         .varlen_count = 8,
         .varlen_lens = mixed_lens,
         .max_reps = 10},
        {.name = "varlen-padded",
         .about = "the varlen batch padded to B8 S1024: Hq8 Hkv2 D128 causal f16",
         .pass = BENCH_FORWARD,
         SHAPE(8, 8, 2, 1024, 1024, 128),
         .dtype = SDPA_DTYPE_F16,
         .mask = SDPA_MASK_CAUSAL_BOTTOM_RIGHT,
         .max_reps = 10},
        {.name = "varlen-mixed-bwd",
         .about = "varlen batch backward, 8 sequences of 16..1024: Hq8 Hkv2 D128 causal f16",
         .pass = BENCH_BACKWARD,
         SHAPE(1, 8, 2, 2800, 2800, 128),
         .dtype = SDPA_DTYPE_F16,
         .mask = SDPA_MASK_CAUSAL_BOTTOM_RIGHT,
         .varlen_count = 8,
         .varlen_lens = mixed_lens,
         .max_reps = 5},
        {.name = "varlen-padded-bwd",
         .about = "the varlen batch padded to B8 S1024, backward: Hq8 Hkv2 D128 causal f16",
         .pass = BENCH_BACKWARD,
         SHAPE(8, 8, 2, 1024, 1024, 128),
         .dtype = SDPA_DTYPE_F16,
         .mask = SDPA_MASK_CAUSAL_BOTTOM_RIGHT,
         .max_reps = 5},
        {.name = "paged-decode",
         .about = "paged KV decode, 32 sequences x 4096 keys in blocks of 16: Hq32 Hkv8 D128 f16",
         .pass = BENCH_FORWARD,
         SHAPE(32, 32, 8, 1, 4096, 128),
         .dtype = SDPA_DTYPE_F16,
         .mask = SDPA_MASK_NONE,
         .paged_block_size = 16,
         .max_reps = 20},
        {.name = "paged-decode-int8",
         .about = "paged KV decode, K/V s8 + f16 scales per 32, 32 x 4096 keys in blocks of 16: "
                  "Hq32 Hkv8 D128",
         .pass = BENCH_FORWARD,
         SHAPE(32, 32, 8, 1, 4096, 128),
         .dtype = SDPA_DTYPE_F16,
         .kv_dtype = SDPA_DTYPE_S8,
         .mask = SDPA_MASK_NONE,
         .paged_block_size = 16,
         .max_reps = 20},
        /* ABI 1.2: V's head size apart from Q's. DeepSeek-V3's prefill has
         * Hq 128; 8 of its heads keep the row to seconds on the CPU device
         * (the flops per head are the model's). */
        {.name = "deepseek-v3-prefill",
         .about = "DeepSeek-V3 prefill, 8 of its 128 heads: B1 Hq8 Hkv8 S4096 D192 Dv128 causal "
                  "bf16",
         .pass = BENCH_FORWARD,
         SHAPE(1, 8, 8, 4096, 4096, 192),
         .head_size_v = 128,
         .dtype = SDPA_DTYPE_BF16,
         .mask = SDPA_MASK_CAUSAL_BOTTOM_RIGHT,
         .max_reps = 3},
        /* MLA decode (DeepSeek-V3, absorbed projections): one latent K/V
         * head of 576 (512 + 64 rope), V its first 512 elements, 128 query
         * heads, paged in blocks of 64; 8 of the 32 sequences x 4096 keys
         * on the CPU device (the bytes per sequence are the model's). */
        {.name = "mla-decode",
         .about = "MLA decode, 8 of 32 sequences x 4096 keys, blocks of 64: Hq128 Hkv1 D576 "
                  "Dv512 (V a view of K) bf16",
         .pass = BENCH_FORWARD,
         SHAPE(8, 128, 1, 1, 4096, 576),
         .head_size_v = 512,
         .v_view_of_k = 1,
         .dtype = SDPA_DTYPE_BF16,
         .mask = SDPA_MASK_NONE,
         .paged_block_size = 64,
         .max_reps = 3},
        /* gpt-oss-20b's attention (ABI 1.2 sinks): Hq 64, Hkv 8, D 64, bf16,
         * a learned sink per query head; its layers alternate a sliding
         * window of 128 tokens (the query and the 127 before it: left 127,
         * as its reference code masks i - j >= 128) and full causal
         * attention. Prefill runs one of its 8 K/V groups (Hq8 Hkv1, the
         * model's group of 8 and flops per head) to keep the full row to
         * seconds on the CPU device; decode runs all heads. */
        {.name = "gpt-oss-20b-prefill-window",
         .about = "gpt-oss-20b sliding-window layer prefill, 8 of its 64 heads: B1 Hq8 Hkv1 S4096 "
                  "D64 causal, window 128 (left 127: itself and 127 before), sinks, bf16",
         .pass = BENCH_FORWARD,
         SHAPE(1, 8, 1, 4096, 4096, 64),
         .dtype = SDPA_DTYPE_BF16,
         .mask = SDPA_MASK_CAUSAL_BOTTOM_RIGHT,
         .window_left = 127,
         .sinks = 1,
         .max_reps = 3},
        {.name = "gpt-oss-20b-prefill-full",
         .about = "gpt-oss-20b full layer prefill, 8 of its 64 heads: B1 Hq8 Hkv1 S4096 D64 "
                  "causal, sinks, bf16",
         .pass = BENCH_FORWARD,
         SHAPE(1, 8, 1, 4096, 4096, 64),
         .dtype = SDPA_DTYPE_BF16,
         .mask = SDPA_MASK_CAUSAL_BOTTOM_RIGHT,
         .sinks = 1,
         .max_reps = 3},
        {.name = "gpt-oss-20b-decode-window",
         .about = "gpt-oss-20b sliding-window layer decode: B1 Hq64 Hkv8 Sq1 Sk4096 D64 causal, "
                  "window 128 (left 127), sinks, bf16",
         .pass = BENCH_FORWARD,
         SHAPE(1, 64, 8, 1, 4096, 64),
         .dtype = SDPA_DTYPE_BF16,
         .mask = SDPA_MASK_CAUSAL_BOTTOM_RIGHT,
         .window_left = 127,
         .sinks = 1,
         .max_reps = 20},
        {.name = "gpt-oss-20b-decode-full",
         .about = "gpt-oss-20b full layer decode: B1 Hq64 Hkv8 Sq1 Sk4096 D64 causal, sinks, bf16",
         .pass = BENCH_FORWARD,
         SHAPE(1, 64, 8, 1, 4096, 64),
         .dtype = SDPA_DTYPE_BF16,
         .mask = SDPA_MASK_CAUSAL_BOTTOM_RIGHT,
         .sinks = 1,
         .max_reps = 20},
};

const bench_case_t *bench_cases(size_t *count)
{
    *count = sizeof(cases) / sizeof(cases[0]);
    return cases;
}

/* The sweep: Llama-3-8B's attention with a quarter of its heads (the same
 * group of 4 and head size; 8 heads keep 2 cores busy), causal f16, at
 * sequence lengths from 256 to 4096. */
enum { SWEEP_LENGTHS = 5 };
static const int64_t sweep_lengths[SWEEP_LENGTHS] = {256, 512, 1024, 2048, 4096};
static bench_case_t sweep[2 * SWEEP_LENGTHS];
static char sweep_names[2 * SWEEP_LENGTHS][32];

const bench_case_t *bench_sweep_cases(size_t *count)
{
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < SWEEP_LENGTHS; i++) {
            int64_t s = sweep_lengths[i];
            bench_case_t *c = &sweep[pass * SWEEP_LENGTHS + i];
            char *name = sweep_names[pass * SWEEP_LENGTHS + i];
            snprintf(name, sizeof(sweep_names[0]), "sweep-%s-s%lld",
                     bench_pass_name((bench_pass_t)pass), (long long)s);
            *c = (bench_case_t){.name = name,
                                .about = "sweep: B1 Hq8 Hkv2 D128 causal f16",
                                .pass = (bench_pass_t)pass,
                                SHAPE(1, 8, 2, s, s, 128),
                                .dtype = SDPA_DTYPE_F16,
                                .mask = SDPA_MASK_CAUSAL_BOTTOM_RIGHT,
                                .max_reps = pass == BENCH_FORWARD ? 10 : 5};
        }
    }
    *count = 2 * SWEEP_LENGTHS;
    return sweep;
}

#undef SHAPE

/* Query-key pairs a query row sees, summed over the rows of one head. */
static double visible_pairs(const bench_case_t *c)
{
    double sq = (double)c->q_len, sk = (double)c->k_len;
    if (c->varlen_count > 0) { /* each sequence its own square, halved when causal */
        double pairs = 0.0;
        for (int i = 0; i < c->varlen_count; i++) {
            const double len = (double)c->varlen_lens[i];
            pairs += c->mask == SDPA_MASK_CAUSAL_BOTTOM_RIGHT ? len * len / 2.0 : len * len;
        }
        return pairs;
    }
    if (c->window_left > 0) { /* keys pos_i - left .. pos_i (causal) or .. Sk - 1 */
        double pairs = 0.0;
        for (int64_t i = 0; i < c->q_len; i++) {
            int64_t pos = i + c->k_len - c->q_len, first = pos - c->window_left;
            int64_t last = c->mask == SDPA_MASK_CAUSAL_BOTTOM_RIGHT ? pos : c->k_len - 1;
            first = first < 0 ? 0 : first;
            last = last >= c->k_len ? c->k_len - 1 : last;
            pairs += (double)(last >= first ? last - first + 1 : 0);
        }
        return pairs;
    }
    if (c->mask != SDPA_MASK_CAUSAL_BOTTOM_RIGHT)
        return sq * sk;
    if (c->q_len == c->k_len)
        return sq * sk / 2.0; /* the convention FlashAttention's papers use */
    /* Bottom-right: query i sees min(Sk, i + 1 + Sk - Sq) keys. */
    double pairs = 0.0;
    for (int64_t i = 0; i < c->q_len; i++) {
        int64_t seen = i + 1 + c->k_len - c->q_len;
        pairs += (double)(seen < 0 ? 0 : seen > c->k_len ? c->k_len : seen);
    }
    return pairs;
}

double bench_case_flops(const bench_case_t *c)
{
    /* 2 D flops per pair for Q K^T, 2 Dv for P V. */
    const double dv = (double)(c->head_size_v > 0 ? c->head_size_v : c->head_size);
    double forward = 2.0 * (double)c->batch * (double)c->q_heads * ((double)c->head_size + dv) *
                     visible_pairs(c);
    return c->pass == BENCH_BACKWARD ? 2.5 * forward : forward;
}

int64_t bench_q_elements(const bench_case_t *c)
{
    return c->batch * c->q_heads * c->q_len * c->head_size;
}

int64_t bench_kv_elements(const bench_case_t *c)
{
    return c->batch * c->kv_heads * c->k_len * c->head_size;
}

double bench_case_min_bytes(const bench_case_t *c)
{
    double elem = (double)((size_t)sdpa_dtype_bits(c->dtype) / 8);
    double q = (double)bench_q_elements(c) * elem;
    double kv = (double)bench_kv_elements(c) * (double)sdpa_dtype_bits(bench_kv_dtype(c)) / 8.0;
    if (sdpa_dtype_is_quantized(c->kv_dtype)) /* one f16 scale per group */
        kv += 2.0 * (double)(bench_kv_elements(c) / BENCH_KV_GROUP);
    /* V and O (and dO, dV) hold Dv of every D elements; a V that is a view
     * of K costs no bytes of its own. */
    const double v_share = c->head_size_v > 0 ? (double)c->head_size_v / (double)c->head_size : 1;
    const double o = q * v_share, v = c->v_view_of_k ? 0.0 : kv * v_share;
    if (c->pass == BENCH_FORWARD)
        return q + kv + v + o; /* Q, K, V in; O out */
    double lse = 4.0 * (double)(c->batch * c->q_heads * c->q_len);
    /* In: Q, O, dO, K, V, LSE. Out: dQ, dK, dV. */
    return q + 2.0 * o + kv + v + lse + q + kv + kv * v_share;
}

int bench_case_is_decode(const bench_case_t *c)
{
    return c->pass == BENCH_FORWARD && c->q_len <= BENCH_DECODE_MAX_Q;
}

sdpa_dtype_t bench_kv_dtype(const bench_case_t *c)
{
    return c->kv_dtype != SDPA_DTYPE_UNDEF ? c->kv_dtype : c->dtype;
}

const char *bench_pass_name(bench_pass_t pass)
{
    return pass == BENCH_BACKWARD ? "bwd" : "fwd";
}
