/*
 * attn_case.h - attention problems with host buffers filled from a seed (the cases the ABI tests run).
 */
#ifndef SDPA_TESTS_ABI_ATTN_CASE_H
#define SDPA_TESTS_ABI_ATTN_CASE_H

#include <stdint.h>

#include "elements.h"

/* Allocator for the buffers of a case (host malloc for the ref backend). */
typedef struct test_allocator {
    void *(*alloc)(size_t bytes, void *user);
    void (*release)(void *pointer, void *user);
    void *user;
} test_allocator_t;

/* An allocator's value where the caller gives none (NULL): host malloc. */
test_allocator_t test_allocator_or_malloc(const test_allocator_t *allocator);

#define ATTN_CASE_MAX_BUFFERS 24

/* Where case_alloc_at puts the first element of every buffer it allocates:
 * skew_bytes past the start of the allocation (whose alignment is the
 * allocator's: malloc's, or 256 bytes for the tests' shared USM), plus
 * skew_elements elements of the buffer's own type (a byte for 4-bit types):
 * views a framework passes, e.g. q carved from a fused QKV tensor. */
typedef struct case_placement {
    size_t skew_bytes;
    int64_t skew_elements;
} case_placement_t;

typedef struct attn_case {
    sdpa_problem_desc_t desc;
    sdpa_exec_args_t args;
    void *buffers[ATTN_CASE_MAX_BUFFERS]; /* allocations (not skewed) */
    size_t buffer_bytes[ATTN_CASE_MAX_BUFFERS];
    int buffer_count;
    test_allocator_t allocator;
    case_placement_t placement;
} attn_case_t;

/* A valid dense problem: q, dst (qdt) [B, Hq, Sq, D], k, v (kvdt)
 * [B, Hkv, Sk, D], host scale, and for BACKWARD the gradients (q's dtype). */
void problem_init(sdpa_problem_desc_t *d, sdpa_prop_kind_t prop, int64_t B, int64_t Hq, int64_t Hkv,
                  int64_t Sq, int64_t Sk, int64_t D, sdpa_dtype_t qdt, sdpa_dtype_t kvdt);

/* Allocates every buffer c->desc uses with allocator (NULL: malloc), fills
 * the inputs from seed (exact values; integer K/V in their range, positive
 * scales, zero points, a mask with some -inf), fills outputs with 0xff bytes
 * (NaN) and sets c->args (host scale 0.25, dropout p 0.25, seed, offset).
 * Returns 0 on success. */
int case_alloc(attn_case_t *c, uint64_t seed, const test_allocator_t *allocator);

/* case_alloc with every buffer placed by placement (NULL: at the start of
 * its allocation, as case_alloc does). */
int case_alloc_at(attn_case_t *c, uint64_t seed, const test_allocator_t *allocator,
                  const case_placement_t *placement);

/* Frees what case_alloc allocated. */
void case_free(attn_case_t *c);

#endif /* SDPA_TESTS_ABI_ATTN_CASE_H */
