/*
 * problem.h - checking an sdpa_problem_desc_t and deriving its shape.
 *
 * Both backends call this first, so "ze" and "ref" accept and refuse exactly
 * the same problems with the same messages.
 *
 * Descriptor sizes and versions (every struct that starts with struct_size
 * and struct_version). A struct_version is accepted if it is between 1 and
 * the version this code was built with; 0 and versions from the future are
 * refused. struct_size must be at least the size of version 1 of the struct
 * and at most the size this code knows: a larger size with a known version
 * contradicts the version (each version has one layout), and we never guess
 * at members we do not know. Both refusals are SDPA_ERROR_INVALID_STRUCT.
 * Members beyond the caller's struct_size read as zero.
 *
 * Status codes follow the rule at sdpa_status_t. SDPA_ERROR_INVALID_ARGUMENT:
 * outside what sdpa.h defines or inconsistent: a NULL pointer, an
 * out-of-range enum or boolean, a missing required tensor, a dtype sdpa.h
 * does not allow in that place (an integer Q, an s32 K, a u8 mask, bf16
 * accumulation), values that contradict each other or a rule of sdpa.h
 * (mismatched dims, a mask that does not broadcast, quantization parameters
 * on a float K). SDPA_ERROR_UNSUPPORTED: a request sdpa.h defines that these
 * backends cannot serve (a head size above SDPA_MAX_HEAD_SIZE, quantized
 * K/V in backward, a dimension above INT32_MAX, a tensor or an implied
 * dense buffer - workspace, dropout index, per-group scales - past
 * SDPA_MAX_BUFFER_BYTES, see size_math.h).
 */
#ifndef SDPA_CORE_PROBLEM_H
#define SDPA_CORE_PROBLEM_H

#include <stddef.h>
#include <stdint.h>

#include "sdpa.h"

/* Largest head size any backend accepts. */
#define SDPA_MAX_HEAD_SIZE 576

/* The sizes every later stage needs, read off a checked descriptor: the
 * logical problem [B, Hq, Sq, Sk] (with varlen, B sequences of at most
 * max_seqlen_q queries and max_seqlen_k keys; with a paged cache, Sk is
 * max_blocks_per_seq * block_size). */
typedef struct sdpa_shape {
    int64_t batch;         /* B */
    int64_t q_heads;       /* Hq */
    int64_t kv_heads;      /* Hkv */
    int64_t kv_group_size; /* Hq / Hkv */
    int64_t q_len;         /* Sq */
    int64_t k_len;         /* Sk */
    int64_t head_size;     /* D: of Q and K */
    int64_t head_size_v;   /* Dv: of V, O and dO (sdpa.h), D unless set apart */
} sdpa_shape_t;

/* The larger of the two head sizes, D and Dv: what a kernel's head-size
 * bucket and tiles must hold. */
static inline int64_t sdpa_shape_widest_head(const sdpa_shape_t *shape)
{
    return shape->head_size_v > shape->head_size ? shape->head_size_v : shape->head_size;
}

/* Checks desc completely (struct_size and struct_version, every enum, dims,
 * strides, dtypes, mask broadcast, scale, quantization, dropout and, for
 * backward, the gradient tensors) and copies it into *out as a current-version
 * struct (members beyond the caller's struct_size zeroed, UNDEF accumulation
 * types replaced by F32). On failure returns the status and sets a message
 * that names the field and its value, e.g.
 * "k.dims[1] = 3 (K/V heads) does not divide q.dims[1] = 32 (query heads)".
 * out and shape may not be NULL (SDPA_ERROR_INVALID_ARGUMENT if they are).
 *
 * Rules beyond what sdpa.h states: diff_dst has dst's dims and dtype; a
 * mask tensor (mask.dtype not UNDEF) with a mask_kind other than BUFFER,
 * and dropout.with_offset or with_mask_output without dropout.enabled, are
 * refused, since the caller evidently expected them to take effect; backward
 * tensors given with a forward prop_kind are ignored (one descriptor may
 * serve both directions).
 *
 * The copy is normalized so that equal problems compare equal with memcmp
 * (useful as a cache key): padding bytes are zero, the mask tensor is
 * zeroed unless mask_kind is BUFFER, scale_dtype unless scale_kind is
 * DEVICE, invert_scale without a scale, group_size unless a quantization is
 * PER_GROUP, the dtypes of absent scales and zero points,
 * dropout.host_scalars without dropout, and the backward tensors and
 * deterministic outside BACKWARD (ds too when its dtype is UNDEF). */
sdpa_status_t sdpa_problem_check(const sdpa_problem_desc_t *desc, sdpa_problem_desc_t *out,
                                 sdpa_shape_t *shape);

/* Checks an execution's arguments against a checked problem: struct_size and
 * struct_version, and every pointer the problem needs is non-NULL (naming the
 * member, e.g. "args->k_scales is NULL but k_quant.scales = PER_GROUP") and a
 * multiple of its element size (sdpa.h: no other alignment is required), a
 * host dropout probability in [0, 1), and wait_events non-NULL when
 * num_wait_events > 0. Values behind device pointers are not read. Copies
 * the arguments into *out as a current-version struct. problem must be the
 * output of sdpa_problem_check. */
sdpa_status_t sdpa_exec_args_check(const sdpa_problem_desc_t *problem, const sdpa_exec_args_t *args,
                                   sdpa_exec_args_t *out);

/* Checks the struct_size / struct_version pair of a descriptor named what
 * ("desc", "args", "out", ...) by the rule at the top of this file: version in
 * 1..known_version, size in v1_size..known_size. Returns SDPA_SUCCESS or
 * SDPA_ERROR_INVALID_STRUCT with a message. */
sdpa_status_t sdpa_struct_check(const char *what, uint32_t struct_size, uint32_t struct_version,
                                uint32_t known_version, size_t v1_size, size_t known_size);

/* problem_copy.c: copies min(in_size, out_size) bytes of in to out and
 * zeroes the rest of out (a caller's struct of another version). */
void sdpa_copy_struct(void *out, size_t out_size, const void *in, size_t in_size);

/* *out = *d, every member, with every padding byte zero (so that equal
 * problems compare equal with memcmp). */
void sdpa_problem_copy(sdpa_problem_desc_t *out, const sdpa_problem_desc_t *d);

/* The checks of a required tensor of any descriptor, named name in
 * messages: dtype a valid enum and not UNDEF (else "<name>.dtype = undef:
 * <why>"), dims in 1..INT32_MAX with dims[3] in 1..SDPA_MAX_HEAD_SIZE,
 * non-negative strides, an addressable extent and the packing rules of
 * 4-bit types. dim_names names the four dims in messages. SDPA_SUCCESS or
 * the status and message of the first failure. */
sdpa_status_t sdpa_tensor_check(const char *name, const sdpa_tensor_desc_t *t,
                                const char *const dim_names[4], const char *why);

/* Bits per element of dtype (4 for S4/U4), 0 for UNDEF or unknown values. */
int sdpa_dtype_bits(sdpa_dtype_t dtype);

/* A dense tensor of dims {d0, d1, d2, d3}: the last dim contiguous, each
 * stride the product of the dims after it. */
static inline sdpa_tensor_desc_t sdpa_tensor_dense(sdpa_dtype_t dtype, int64_t d0, int64_t d1,
                                                   int64_t d2, int64_t d3)
{
    return (sdpa_tensor_desc_t){dtype, {d0, d1, d2, d3}, {d1 * d2 * d3, d2 * d3, d3, 1}};
}

/* The enum and boolean checks of every descriptor: "<field> = <value>: not
 * a valid <type_name>" / "must be 0 or 1" (SDPA_ERROR_INVALID_ARGUMENT). */
sdpa_status_t sdpa_check_enum(const char *field, unsigned value, unsigned last,
                              const char *type_name);
sdpa_status_t sdpa_check_bool(const char *field, uint32_t value);

/* Bytes of one element of dtype as pointers must be aligned to (sdpa.h):
 * 1 for the 4-bit types, whose pointers address bytes. */
size_t sdpa_dtype_alignment(sdpa_dtype_t dtype);

/* 1 for F32, F16 and BF16; 0 otherwise. */
int sdpa_dtype_is_float(sdpa_dtype_t dtype);

/* 1 for S8, U8, S4 and U4 (the integer K/V types); 0 otherwise. */
int sdpa_dtype_is_quantized(sdpa_dtype_t dtype);

/* 1 for F8_E4M3 and F8_E5M2; 0 otherwise. */
int sdpa_dtype_is_fp8(sdpa_dtype_t dtype);

/* 1 for the K/V types that k_quant/v_quant dequantize: the integer ones
 * and the 8-bit floats; 0 otherwise. */
int sdpa_dtype_is_dequantized(sdpa_dtype_t dtype);

/* "f32", "f16", ... or "invalid". */
const char *sdpa_dtype_name(sdpa_dtype_t dtype);

/* Short names of the enums ("FORWARD_TRAINING", "CAUSAL_TOP_LEFT",
 * "DEVICE", "INF_AS_ZERO", "PER_GROUP"), or "invalid". */
const char *sdpa_prop_kind_name(sdpa_prop_kind_t kind);
const char *sdpa_mask_kind_name(sdpa_mask_kind_t kind);
const char *sdpa_scale_kind_name(sdpa_scale_kind_t kind);
const char *sdpa_softmax_kind_name(sdpa_softmax_kind_t kind);
const char *sdpa_quant_kind_name(sdpa_quant_kind_t kind);

/* Bytes of the forward log-sum-exp workspace: f32 [B, Hq, Sq] as Q's dims
 * have them (varlen: [Hq, total_q]); 0 unless
 * prop_kind is FORWARD_TRAINING or BACKWARD. */
size_t sdpa_workspace_bytes(const sdpa_problem_desc_t *problem, const sdpa_shape_t *shape);

#endif /* SDPA_CORE_PROBLEM_H */
