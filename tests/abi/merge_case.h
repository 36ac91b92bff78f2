/*
 * merge_case.h - merges of attention states for the tests of both backends:
 * a descriptor with its buffers (states whose LSEs exercise every rule of
 * sdpa_merge_desc_t: states that saw no key, rows where none did, weights
 * far apart, and optionally NaN and +inf), an independent oracle in long
 * double, and the comparison with tolerances that follow from the dtypes.
 */
#ifndef SDPA_TESTS_MERGE_CASE_H
#define SDPA_TESTS_MERGE_CASE_H

#include <stdint.h>

#include "abi_util.h"
#include "sdpa.h"

/* Memory orders of the states and dst (LSEs follow: [B, H, S] or [S, B, H]). */
typedef enum merge_layout {
    MERGE_DENSE = 0, /* [B, H, S, D], LSE [B, H, S] (a forward's workspace) */
    MERGE_SEQ_MAJOR, /* [S, B, H, D] with 3 padding elements per row, LSE [S, B, H] */
} merge_layout_t;

/* What the LSEs of a case hold, row by row (row = (b * H + h) * S + i). */
typedef enum merge_lse_pattern {
    MERGE_LSE_MIXED = 0, /* finite, some -inf states, some rows all -inf, far weights */
    MERGE_LSE_POISON,    /* MIXED plus rows with a NaN or +inf LSE */
} merge_lse_pattern_t;

typedef struct merge_case {
    sdpa_merge_desc_t desc;
    sdpa_merge_args_t args;
    const void *states[SDPA_MERGE_MAX_STATES];
    const float *states_lse[SDPA_MERGE_MAX_STATES];
    void *buffers[2 * SDPA_MERGE_MAX_STATES + 2];
    int buffer_count;
    test_allocator_t allocator;
} merge_case_t;

/* A valid merge desc: n states of [B, H, S, D] in state_dt, dst in dst_dt,
 * LSEs f32 in layout, dst_lse written iff with_lse. */
void merge_desc_init(sdpa_merge_desc_t *d, uint32_t n, int64_t B, int64_t H, int64_t S, int64_t D,
                     sdpa_dtype_t state_dt, sdpa_dtype_t dst_dt, int with_lse,
                     sdpa_softmax_kind_t softmax, merge_layout_t layout);

/* The merges both backends run against the oracle: n = 1..8 and
 * SDPA_MERGE_MAX_STATES, every dtype as states and as dst, both softmax
 * modes, both layouts, with and without the merged LSE. */
#define MERGE_VARIANTS 9
void merge_variant_init(sdpa_merge_desc_t *d, int variant);

/* Allocates every buffer of c->desc with allocator (NULL: malloc), fills
 * the states' O with exact values (NaN in the rows of states whose LSE is
 * -inf), their LSEs by pattern, the outputs with 0xff bytes, and sets
 * c->args. Returns 0, or -1 if an allocation failed. */
int merge_case_alloc(merge_case_t *c, uint64_t seed, const test_allocator_t *allocator,
                     merge_lse_pattern_t pattern);
void merge_case_free(merge_case_t *c);

/* The merge by its definition, in long double: o [B][H][S][D] and lse
 * [B][H][S] (either may be NULL). Computes LSE = log(sum_s exp(LSE_s)) first
 * and O = sum_s exp(LSE_s - LSE) O_s, a different order from the backends'
 * (weights relative to the maximum, divided by their sum). */
void merge_oracle(const merge_case_t *c, double *o, double *lse);

/* What the outputs of c should be, computed from its inputs before a merge
 * that may overwrite them (in place): the oracle's O and LSE, and the
 * largest |O_s| contributing to each O element. 0, or -1 (no memory). */
typedef struct merge_expected {
    double *o, *lse, *largest;
} merge_expected_t;
int merge_expect(const merge_case_t *c, merge_expected_t *e);
void merge_expected_free(merge_expected_t *e);
/* Compares c's outputs with e (see merge_compare). */
int merge_check(const merge_case_t *c, const merge_expected_t *e, int exact);

/* merge_expect and merge_check: compares c's outputs with the oracle's. exact = 1: each output is
 * the oracle's value rounded once (half an ulp of its dtype plus 1e-12: the ref backend); exact =
 * 0: f32 arithmetic (plus (n + 2) * 16 f32 ulps of the largest contributing |O_s| for O, 2^-20 *
 * max(1, |LSE|) for the LSE: a device). Prints the first mismatch; returns 1 if all match. */
int merge_compare(const merge_case_t *c, int exact);

/* Rows (b * H + h) * S + i of the case whose LSE pattern makes them
 * special, for tests that check those rules by name. */
int merge_row_all_empty(int64_t row);
int merge_row_poisoned(int64_t row);

/* The attention problem of keys j0 .. j0 + len - 1 of full (f32 K, V and
 * mask buffer, or no mask): K, V and the mask cut along the keys, their
 * pointers moved to key j0; everything else as full's. */
void merge_key_chunk(const attn_case_t *full, int64_t j0, int64_t len, sdpa_problem_desc_t *d,
                     sdpa_exec_args_t *a);

#endif /* SDPA_TESTS_MERGE_CASE_H */
