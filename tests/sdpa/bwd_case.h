/*
 * bwd_case.h - one backward attention problem: the forward outputs (O and
 * the log-sum-exp) come from the ref backend, then ze and ref compute dQ,
 * dK, dV (and dS) from the same dO, and the gradients are compared.
 */
#ifndef SDPA_TEST_BWD_CASE_H
#define SDPA_TEST_BWD_CASE_H

#include "fwd_case.h"

typedef struct bwd_case {
    fwd_case_t fwd; /* shapes, dtypes, layouts, mask, scale, softmax */
    int deterministic;
    sdpa_dtype_t ds_dtype; /* UNDEF: no dS */
    /* Gradients in their own layouts (default: like q, k, v). */
    int gradient_layouts_differ;
} bwd_case_t;

void bwd_case_init(bwd_case_t *c, int64_t batch, int64_t q_heads, int64_t kv_heads, int64_t q_len,
                   int64_t k_len, int64_t head_size);

void bwd_case_problem(const bwd_case_t *c, sdpa_problem_desc_t *out);

/* Runs c and asserts (Check) that ze's gradients match ref's within
 * tolerances that follow from the dtypes and the reduction lengths. If
 * repeat_bits is set, runs ze twice more and asserts bit-identical
 * gradients (deterministic mode). Returns the worst error/tolerance. */
double bwd_case_run(test_env_t *env, const bwd_case_t *c, uint64_t seed, int repeat_bits);

#endif /* SDPA_TEST_BWD_CASE_H */
