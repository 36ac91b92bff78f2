/*
 * merge_checks.h - the merge checks both backends' suites run, ref's
 * (abi/test_merge) and ze's (sdpa/test_merge): the merges every backend
 * must refuse, with the status and the words of the message; merge and
 * attention primitives kept apart; in place; states from forward
 * executions over chunks of the keys against one execution over all.
 */
#ifndef SDPA_TESTS_MERGE_CHECKS_H
#define SDPA_TESTS_MERGE_CHECKS_H

#include "abi_util.h"
#include "merge_case.h"
#include "sdpa.h"

/* Number of rows in the table of invalid descriptors and of invalid
 * arguments (for tcase_add_loop_test). */
int merge_invalid_desc_count(void);
int merge_invalid_args_count(void);

/* Row i: mutates a valid merge and asserts (Check) that merge_create, or
 * merge_execute, refuses it with the row's status and a message holding its
 * words; allocator places the buffers (NULL: malloc). */
void merge_invalid_desc_check(int i, const sdpa_backend_iface_t *iface, sdpa_context_t *ctx);
void merge_invalid_args_check(int i, const sdpa_backend_iface_t *iface, sdpa_context_t *ctx,
                              const test_allocator_t *allocator);

/* Merge primitives and attention primitives are not interchangeable:
 * primitive_execute refuses a merge, merge_execute an attention primitive;
 * primitive_query answers both. */
void merge_kinds_check(const sdpa_backend_iface_t *iface, sdpa_context_t *ctx,
                       const test_allocator_t *allocator);

/* A backend under test and its context. */
typedef struct merge_backend {
    const sdpa_backend_iface_t *iface;
    sdpa_context_t *ctx;
} merge_backend_t;

/* Creates, executes and destroys the merge of c on be (Check asserts). */
void merge_run(const merge_backend_t *be, merge_case_t *c);

/* Variant i (merge_variant_init) on be, its LSEs mixed, against the
 * oracle; exact as in merge_compare. */
void merge_variant_check(const merge_backend_t *be, int i, const test_allocator_t *allocator,
                         int exact);

/* Merges 2 or 3 (layout != DENSE) f16 states into the buffers of state
 * layout - 1 (dst is that state's O, dst_lse its LSE) on be, against the
 * oracle of the inputs before the merge; exact as in merge_compare. */
void merge_in_place_check(const merge_backend_t *be, merge_layout_t layout,
                          const test_allocator_t *allocator, int exact);

/* Forward training executions on fwd over the key chunks bounds[s] ..
 * bounds[s + 1] (s < n) of an f32 problem with a mask buffer that hides some
 * rows from some chunk entirely, merged on merge, against one execution on
 * full over all the keys: exact = 1 allows a few f32 roundings (states held
 * in f32), exact = 0 also the f32 forward's own error. */
void merge_forward_chunks_check(const merge_backend_t *fwd, const merge_backend_t *merge,
                                const merge_backend_t *full, const int64_t *bounds, uint32_t n,
                                const test_allocator_t *allocator, int exact);

#endif /* SDPA_TESTS_MERGE_CHECKS_H */
