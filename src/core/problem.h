/*
 * problem.h - checking an sdpa_problem_desc_t and deriving its shape.
 *
 * Both backends call this first, so "ze" and "ref" accept and refuse exactly
 * the same problems with the same messages.
 */
#ifndef SDPA_CORE_PROBLEM_H
#define SDPA_CORE_PROBLEM_H

#include <stddef.h>
#include <stdint.h>

#include "sdpa.h"

/* Largest head size any backend accepts. */
#define SDPA_MAX_HEAD_SIZE 512

/* The sizes every later stage needs, read off a checked descriptor. */
typedef struct sdpa_shape {
    int64_t batch;         /* B */
    int64_t q_heads;       /* Hq */
    int64_t kv_heads;      /* Hkv */
    int64_t kv_group_size; /* Hq / Hkv */
    int64_t q_len;         /* Sq */
    int64_t k_len;         /* Sk */
    int64_t head_size;     /* D */
} sdpa_shape_t;

/* Checks desc completely (struct_size and struct_version, every enum, dims,
 * strides, dtypes, mask broadcast, scale, quantization, dropout and, for
 * backward, the gradient tensors) and copies it into *out as a current-version
 * struct (members beyond the caller's struct_size zeroed, UNDEF accumulation
 * types replaced by F32). On failure returns the status and sets a message
 * that names the field and its value, e.g.
 * "k.dims[1] = 3 (K/V heads) does not divide q.dims[1] = 32 (query heads)".
 * out and shape may not be NULL. */
sdpa_status_t sdpa_problem_check(const sdpa_problem_desc_t *desc, sdpa_problem_desc_t *out,
                                 sdpa_shape_t *shape);

/* Checks an execution's arguments against a checked problem: struct_size and
 * struct_version, and every pointer the problem needs is non-NULL (naming the
 * member, e.g. "args->k_scales is NULL but k_quant.scales = PER_GROUP"). Copies
 * them into *out as a current-version struct. */
sdpa_status_t sdpa_exec_args_check(const sdpa_problem_desc_t *problem,
                                   const sdpa_exec_args_t *args, sdpa_exec_args_t *out);

/* Bits per element of dtype (4 for S4/U4), 0 for UNDEF or unknown values. */
int sdpa_dtype_bits(sdpa_dtype_t dtype);

/* "f32", "f16", ... or "invalid". */
const char *sdpa_dtype_name(sdpa_dtype_t dtype);

/* Bytes of the forward log-sum-exp workspace: f32 [B, Hq, Sq]; 0 unless
 * prop_kind is FORWARD_TRAINING or BACKWARD. */
size_t sdpa_workspace_bytes(const sdpa_problem_desc_t *problem, const sdpa_shape_t *shape);

#endif /* SDPA_CORE_PROBLEM_H */
