/*
 * bwd_case.h - one backward attention problem: the forward outputs (O and
 * the log-sum-exp) come from the ref backend, then ze and ref compute dQ,
 * dK, dV (and dS) from the same dO, and the gradients are compared.
 */
#ifndef SDPA_TEST_BWD_CASE_H
#define SDPA_TEST_BWD_CASE_H

#include "fwd_case.h"

/* Dropout of a backward case: the ref forward that produces O and the
 * log-sum-exp draws the same mask (same p, seed, offset) as both backwards
 * regenerate. */
typedef struct bwd_dropout {
    int enabled;
    float p;
    int64_t seed, offset;
    int device;      /* p, seed and offset through device pointers */
    int with_offset; /* 0: the offset is 0 (offset is still passed, and must be ignored) */
} bwd_dropout_t;

typedef struct bwd_case {
    fwd_case_t fwd; /* shapes, dtypes, layouts, mask, scale, softmax */
    int deterministic;
    sdpa_dtype_t ds_dtype; /* UNDEF: no dS */
    /* Gradients in their own layouts (default: like q, k, v). */
    int gradient_layouts_differ;
    bwd_dropout_t dropout; /* default: none */
} bwd_case_t;

void bwd_case_init(bwd_case_t *c, int64_t batch, int64_t q_heads, int64_t kv_heads, int64_t q_len,
                   int64_t k_len, int64_t head_size);

void bwd_case_problem(const bwd_case_t *c, sdpa_problem_desc_t *out);

/* Runs c and asserts (Check) that ze's gradients match ref's within
 * tolerances that follow from the dtypes and the reduction lengths. If
 * repeat_bits is set, runs ze twice more and asserts bit-identical
 * gradients (deterministic mode). Returns the worst error/tolerance. */
double bwd_case_run(test_env_t *env, const bwd_case_t *c, uint64_t seed, int repeat_bits);

/* Runs c's backward on ze twice from the same inputs (the ref forward of c):
 * once with c's dropout offset and once with `offset` instead. Returns the
 * fraction of dQ, dK and dV elements that differ beyond the tolerances of
 * bwd_case_run between the two: near 0 if the offset is ignored. */
double bwd_case_offset_effect(test_env_t *env, const bwd_case_t *c, uint64_t seed, int64_t offset);

#endif /* SDPA_TEST_BWD_CASE_H */
