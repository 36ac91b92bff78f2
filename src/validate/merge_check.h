/*
 * merge_check.h - checking a merge of attention states (sdpa_merge_desc_t,
 * sdpa_merge_args_t, ABI 1.1).
 *
 * Both backends call these first, so "ze" and "ref" accept and refuse the
 * same merges with the same messages. Struct sizes and versions follow the
 * rule of problem.h; status codes the rule at sdpa_status_t.
 */
#ifndef SDPA_CORE_MERGE_CHECK_H
#define SDPA_CORE_MERGE_CHECK_H

#include "sdpa.h"

/* Checks desc completely (struct_size and struct_version, num_states in
 * 1..SDPA_MERGE_MAX_STATES, softmax_kind, the states' O tensor f32/f16/bf16
 * [B, H, S, D], the LSE tensors f32 [B, H, S, 1], dst with the states' dims,
 * dst_lse absent or like the states' LSE) and copies it into *out as a
 * current-version struct with every byte the merge does not use zeroed
 * (padding, strides[3] of the LSE tensors, dst_lse when absent), so that
 * equal merges compare equal with memcmp. On failure returns the status
 * and sets a message naming the field, e.g.
 * "dst.dims[2] = 7 (queries) differs from states.dims[2] = 8". */
sdpa_status_t sdpa_merge_check(const sdpa_merge_desc_t *desc, sdpa_merge_desc_t *out);

/* Checks one execution's arguments against a checked merge: struct_size
 * and struct_version, states and states_lse non-NULL arrays whose
 * num_states pointers are non-NULL and element-aligned, dst (and dst_lse
 * when the merge writes it) likewise, wait_events non-NULL when
 * num_wait_events > 0. Copies the arguments into *out as a current-version
 * struct (the arrays stay the caller's: they are read, not copied). */
sdpa_status_t sdpa_merge_args_check(const sdpa_merge_desc_t *merge, const sdpa_merge_args_t *args,
                                    sdpa_merge_args_t *out);

#endif /* SDPA_CORE_MERGE_CHECK_H */
