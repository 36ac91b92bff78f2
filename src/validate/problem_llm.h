/*
 * problem_llm.h - the checks of the ABI 1.1 problem members (varlen, paged
 * KV, sliding window, softcap, ALiBi, num_splits) and what the rest of the
 * core needs to know about them. problem.c calls these at a few points;
 * everything about the features themselves is here.
 */
#ifndef SDPA_CORE_PROBLEM_LLM_H
#define SDPA_CORE_PROBLEM_LLM_H

#include <stddef.h>
#include <stdint.h>

#include "sdpa.h"

/* Sizes of version 1 of the structs that grew in ABI 1.1. */
#define SDPA_PROBLEM_DESC_V1_SIZE offsetof(sdpa_problem_desc_t, varlen)
#define SDPA_EXEC_ARGS_V1_SIZE offsetof(sdpa_exec_args_t, cu_seqlens_q)
/* ... and of version 2, which grew in ABI 1.2: 1.1's sizeof, whose tail
 * padding the appended sinks member now occupies. */
#define SDPA_PROBLEM_DESC_V2_SIZE                                                                  \
    ((offsetof(sdpa_problem_desc_t, sinks) + _Alignof(sdpa_problem_desc_t) - 1) /                 \
     _Alignof(sdpa_problem_desc_t) * _Alignof(sdpa_problem_desc_t))
#define SDPA_EXEC_ARGS_V2_SIZE offsetof(sdpa_exec_args_t, sinks)
#define SDPA_FEATURES_V1_SIZE offsetof(sdpa_features_t, has_varlen)
/* ... and of version 2 of the features, which grew in ABI 1.2. */
#define SDPA_FEATURES_V2_SIZE offsetof(sdpa_features_t, has_supports_query)

/* The size of version `version` of the problem descriptor, the exec args
 * and the features (0 for versions that do not exist). */
size_t sdpa_problem_desc_size(uint32_t version);
size_t sdpa_exec_args_size(uint32_t version);
size_t sdpa_features_size(uint32_t version);

/* Zeroes the members d's struct_version does not have (a version 2
 * caller's tail padding lies where sinks is now). */
void sdpa_llm_zero_newer(sdpa_problem_desc_t *d, uint32_t version);
void sdpa_llm_zero_newer_args(sdpa_exec_args_t *a, uint32_t version);

/* The enums and booleans of the new members (first, so that later checks
 * may read paged_kv.enabled and varlen.enabled). */
sdpa_status_t sdpa_llm_check_flags(const sdpa_problem_desc_t *d);

/* The sizes of the varlen and paged layouts and their limits, once q, k, v
 * and dst have passed: before anything derives the scores' dims from them
 * (sdpa_llm_scores_dims), so that no check multiplies an unchecked size or
 * quotes a size made of one. */
sdpa_status_t sdpa_llm_check_layout(const sdpa_problem_desc_t *d);

/* Everything else about the new members, after the mask and the backward
 * tensors have passed: the window, the softcap, and the combinations these
 * backends refuse. */
sdpa_status_t sdpa_llm_check(const sdpa_problem_desc_t *d);

/* The dims of the scores [B, Hq, Sq, Sk] every query x key tensor follows
 * (mask, dropout keep mask and element index, dS): q's and k's dims, or with
 * varlen [batch, Hq, max_seqlen_q, max_seqlen_k], or with a paged cache
 * [B, Hq, Sq, max_blocks_per_seq * block_size]. Meaningful once
 * sdpa_llm_check_layout has passed; before, the product saturates at
 * INT64_MAX rather than overflow. */
void sdpa_llm_scores_dims(const sdpa_problem_desc_t *d, int64_t out[4]);

/* Zeroes the new members a problem does not use (a disabled window's
 * bounds, a disabled varlen's sizes, ...), for memcmp equality. */
void sdpa_llm_normalize(sdpa_problem_desc_t *d);

/* Copies the new members of d into out member by member (no padding). */
void sdpa_llm_copy(sdpa_problem_desc_t *out, const sdpa_problem_desc_t *d);

/* The pointers the new members need in the execution arguments: present
 * and 4-byte aligned (int32 and f32 arrays). */
sdpa_status_t sdpa_llm_args_check(const sdpa_problem_desc_t *p, const sdpa_exec_args_t *a);

#endif /* SDPA_CORE_PROBLEM_LLM_H */
