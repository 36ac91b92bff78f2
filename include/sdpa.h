/*
 * sdpa.h - scaled-dot-product attention (flash attention) backends for Level Zero.
 *
 * This is the one header a framework needs. It describes
 *
 *   1. the backend ABI: a plugin (libsdpa_ze.so, libsdpa_ref.so, or your own)
 *      exports one function, sdpa_backend_negotiate(), that hands out a
 *      versioned table of function pointers (sdpa_backend_iface_t);
 *   2. the front loader (libsdpa.so): sdpa_backend_open() picks a backend by
 *      name or path, honouring the SDPA_BACKEND environment variable, dlopens
 *      it and negotiates the ABI version.
 *
 * A framework may use the front loader, or dlopen a backend itself and call
 * its sdpa_backend_negotiate() directly; both paths give the same table.
 *
 * Object model. A *context* is bound to the caller's Level Zero context and
 * device (and optionally a command list). A *primitive* is one attention
 * problem (shapes, dtypes, strides, mask, scale, ...). Creating a primitive is
 * expensive (it may build a Level Zero module; modules are cached per
 * context); executing it is cheap and asynchronous: it appends kernel launches
 * to a command list and returns.
 *
 * Conventions.
 *   - Every function returns an sdpa_status_t. On failure the backend's
 *     last_error() returns one sentence naming the offending field and value.
 *     Messages are per thread and describe the most recent call made on the
 *     calling thread through that backend's table: every member that returns
 *     a status sets it, to "" when it succeeds (whatever it tried and dropped
 *     on the way) and to the sentence when it fails; the destroy functions
 *     and last_error itself leave it as it was. sdpa_backend_negotiate counts
 *     as a call, and the front loader (sdpa_loader_last_error) and libsdpa_cp
 *     (sdpa_cp_last_error) follow the same rule for their own functions.
 *   - Every descriptor passed by pointer starts with struct_size and
 *     struct_version. Set struct_size = sizeof(the struct) and struct_version to
 *     the matching SDPA_*_VERSION constant. A backend refuses sizes it does not
 *     know with SDPA_ERROR_INVALID_STRUCT; structs only grow at the end.
 *   - Tensors are described by dtype, four dims and four strides counted in
 *     elements (not bytes), in the order [batch, heads, sequence, head_dim].
 *     Any strides are accepted (transposed K is just strides[2] == 1), as long
 *     as they are non-negative. Offsets are 64-bit throughout. Pointers need
 *     only the alignment of their elements (see sdpa_exec_args_t).
 *   - Nothing in this header allocates. Handles are opaque. There is no global
 *     mutable state: two contexts never share anything.
 *   - Sizes: a problem whose tensors, or the buffers it implies (workspace,
 *     dropout keep mask and element index, per-group quantization
 *     parameters, backward scratch), would pass 2^63 - 1 bytes is refused by
 *     primitive_create with SDPA_ERROR_UNSUPPORTED naming the field, so no
 *     size a query returns ever wraps.
 *
 * Threads. Every function may be called from any thread. primitive_execute
 * is safe from any number of threads at once, for any mix of primitives,
 * command lists and scratch:
 *   - the backend serializes its own appends to each Level Zero command list
 *     (the context's default list and lists passed in exec args alike), and
 *     its use of a primitive's kernels;
 *   - a backward without exec_args.scratch uses the scratch the context keeps
 *     for the command list it appends to: executions on one list run in
 *     order and share it, executions on different lists never do, and no
 *     execution allocates once that list's scratch is large enough.
 * What stays the caller's: not appending to a command list from another
 * thread while primitive_execute appends to it (Level Zero forbids
 * concurrent appends to one list; the backend only orders its own), not
 * submitting one regular list to two queues at once if it holds backward
 * executions that use the context's scratch, and not destroying a primitive
 * or context while calls on it run or its launches are pending. The context
 * keeps each list's scratch until it is destroyed: a caller that records onto
 * many short-lived lists should pass its own scratch.
 *
 * Lifetime. Destroy a context's primitives before the context, and the
 * context before the Level Zero context it is bound to; neither destroy
 * waits, so the work they appended must have finished. A primitive still
 * alive when its context is destroyed is orphaned: context_destroy releases
 * every Level Zero object the backend made for it (kernels, memory, modules),
 * so that zeContextDestroy of the caller's context succeeds afterwards;
 * primitive_execute then refuses it (SDPA_ERROR_INVALID_ARGUMENT),
 * primitive_query still answers, and primitive_destroy frees it without any
 * Level Zero call. Destroying a context while another thread uses it or one
 * of its primitives is the caller's error.
 *
 * Environment variables. SDPA_BACKEND and SDPA_PLUGIN_DIR steer the front
 * loader; SDPA_ZE_* settings, configuration overrides (SDPA_CONFIG,
 * QUANTIZED_SDPA_CONFIG, BWD_SDPA_CONFIG), the persistent module cache
 * (SDPA_CACHE*) and verbose mode (SDPA_VERBOSE, like ONEDNN_VERBOSE) steer
 * the backends. Each is described, with when it is read and the status a bad
 * value gets (SDPA_ERROR_INVALID_CONFIG), in doc/environment.md (installed
 * as PREFIX/share/doc/sdpa-ze/environment.md), with the verbose format.
 *
 * Persistent module cache (ze). A context stores the native binary of every
 * module it builds on disk and a later process loads it instead of building
 * again; the key holds everything the binary depends on, so a new driver,
 * device or release never loads a stale binary. The cache never makes
 * creation fail. SDPA_QUERY_MODULES_BUILT counts builds only;
 * SDPA_QUERY_MODULE_CACHE_HITS and _MISSES count the cache's work. Its
 * behaviour is in doc/module-cache.md.
 */
#ifndef SDPA_H
#define SDPA_H

#include <stddef.h>
#include <stdint.h>

#include <level_zero/ze_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------- */
/* Versions                                                                  */
/* ------------------------------------------------------------------------- */

/* An ABI version packs major (16 bits) and minor (16 bits). A minor bump only
 * appends members to sdpa_backend_iface_t and to descriptors; a major bump
 * changes existing members and needs a new negotiation. */
#define SDPA_MAKE_VERSION(major, minor) ((((uint32_t)(major)) << 16) | ((uint32_t)(minor)&0xffffu))
#define SDPA_VERSION_MAJOR(version) ((uint32_t)(version) >> 16)
#define SDPA_VERSION_MINOR(version) ((uint32_t)(version)&0xffffu)

/* The ABI this header describes. 1.1 appended merge_create and
 * merge_execute to sdpa_backend_iface_t (merging attention states); 1.2
 * appended primitive_supports (would creation serve this problem, and how),
 * attention sinks (sdpa_problem_desc_t.sinks) and an FP8 KV cache
 * (SDPA_DTYPE_F8_E4M3, SDPA_DTYPE_F8_E5M2, SDPA_QUANT_PER_HEAD). */
#define SDPA_ABI_VERSION SDPA_MAKE_VERSION(1, 2)

/* Versions of the descriptors (struct_version fields). */
#define SDPA_CONTEXT_DESC_VERSION 1u
/* Version 2 (ABI 1.1) appends the LLM features: varlen, paged_kv, window,
 * softcap, alibi, num_splits (sdpa_problem_desc_t); version 3 (ABI 1.2)
 * sinks. */
#define SDPA_PROBLEM_DESC_VERSION 3u
/* Version 2 (ABI 1.1) appends cu_seqlens_q, cu_seqlens_k, block_table,
 * cache_seqlens and alibi_slopes; version 3 (ABI 1.2) sinks and
 * diff_sinks. */
#define SDPA_EXEC_ARGS_VERSION 3u
/* Version 2 (ABI 1.1) appends has_varlen .. has_merge; version 3 (ABI 1.2)
 * has_supports_query .. has_fp8_kv (a version 3 struct that ends
 * earlier, from a caller built before the later members, is filled up
 * to its struct_size). */
#define SDPA_FEATURES_VERSION 3u
#define SDPA_MERGE_DESC_VERSION 1u /* ABI 1.1 */
#define SDPA_MERGE_ARGS_VERSION 1u /* ABI 1.1 */
#define SDPA_SUPPORT_VERSION 1u    /* ABI 1.2 */

/* The name of the one symbol a backend plugin exports. */
#define SDPA_BACKEND_ENTRY_POINT "sdpa_backend_negotiate"

/* ------------------------------------------------------------------------- */
/* Status codes                                                              */
/* ------------------------------------------------------------------------- */

/* Which refusal is which: a request outside what this header defines, or
 * inconsistent with itself, is SDPA_ERROR_INVALID_ARGUMENT, even when every
 * value in it is a valid enum (q.dtype = S8: this header says q is f32, f16
 * or bf16); a request this header defines that the backend or its device
 * cannot serve is SDPA_ERROR_UNSUPPORTED (a head size above
 * sdpa_features_t.max_head_size, quantized K/V in backward, a device pointer
 * handed to "ref"). Fixing an INVALID_ARGUMENT means fixing the call;
 * an UNSUPPORTED call may work with another backend or device. */
typedef enum sdpa_status {
    SDPA_SUCCESS = 0,
    /* Outside what this header defines, or inconsistent: a NULL pointer, an
     * out-of-range enum or boolean, a dtype not allowed in that place, a
     * pointer not aligned to its elements, values that contradict each other
     * (mismatched dims, a mask that does not broadcast, ...). */
    SDPA_ERROR_INVALID_ARGUMENT = 1,
    /* struct_size or struct_version of a descriptor is not one this backend
     * knows (too small, or a version from the future). */
    SDPA_ERROR_INVALID_STRUCT = 2,
    /* A request this header defines that this backend or device cannot serve
     * (a head size or dimension beyond what it implements, quantized K/V in
     * backward, a device pointer handed to the host reference backend, a
     * feature the device lacks, a buffer past 2^63 - 1 bytes, or a backward
     * scratch above the device's largest allocation, maxMemAllocSize: refused
     * at creation). Level Zero's UNSUPPORTED_SIZE/_FEATURE/_VERSION/_ALIGNMENT
     * map here. */
    SDPA_ERROR_UNSUPPORTED = 3,
    /* SDPA_CONFIG, QUANTIZED_SDPA_CONFIG or BWD_SDPA_CONFIG is malformed or
     * violates the kernel's constraints. */
    SDPA_ERROR_INVALID_CONFIG = 4,
    /* A host allocation failed, or a Level Zero call returned
     * ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY. */
    SDPA_ERROR_OUT_OF_HOST_MEMORY = 5,
    /* A Level Zero call (an allocation, a kernel creation, a launch, ...)
     * returned ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY. */
    SDPA_ERROR_OUT_OF_DEVICE_MEMORY = 6,
    /* Building a Level Zero module failed; the message carries the build log. */
    SDPA_ERROR_BUILD_FAILED = 7,
    /* Another Level Zero call failed; the message names it and its result. */
    SDPA_ERROR_DEVICE = 8,
    /* Front loader: the backend library could not be loaded (dlopen error). */
    SDPA_ERROR_BACKEND_NOT_FOUND = 9,
    /* Front loader: the library does not export sdpa_backend_negotiate. */
    SDPA_ERROR_SYMBOL_NOT_FOUND = 10,
    /* Negotiation: the two sides speak different ABI majors, or the table the
     * backend returned is smaller than its version promises. */
    SDPA_ERROR_ABI_VERSION = 11,
    /* Caller-supplied scratch is smaller than SDPA_QUERY_SCRATCH_BYTES. */
    SDPA_ERROR_INSUFFICIENT_SCRATCH = 12,
} sdpa_status_t;

/* ------------------------------------------------------------------------- */
/* Tensors                                                                   */
/* ------------------------------------------------------------------------- */

typedef enum sdpa_dtype {
    SDPA_DTYPE_UNDEF = 0, /* absent tensor / "use the default" */
    SDPA_DTYPE_F32 = 1,
    SDPA_DTYPE_F16 = 2,  /* IEEE binary16 */
    SDPA_DTYPE_BF16 = 3, /* bfloat16: the high half of an f32 */
    SDPA_DTYPE_S8 = 4,
    SDPA_DTYPE_U8 = 5,
    /* 4-bit integers, two per byte: element 2i is the low nibble of byte i and
     * element 2i+1 the high nibble. Strides count elements; the innermost
     * stride must be 1 and every other stride even. */
    SDPA_DTYPE_S4 = 6,
    SDPA_DTYPE_U4 = 7,
    SDPA_DTYPE_S32 = 8, /* zero points only */
    /* ABI 1.2: 8-bit floats for K and V only (an FP8 KV cache), read
     * through k_quant / v_quant (see sdpa_quant_desc_t).
     * F8_E4M3 is OCP FP8 E4M3FN: 1 sign, 4 exponent (bias 7), 3 mantissa
     * bits, subnormals, no infinities, S.1111.111 is NaN, largest 448.
     * F8_E5M2 is OCP FP8 E5M2 (the high byte of an f16): 1 sign, 5
     * exponent (bias 15), 2 mantissa bits, subnormals, infinities and NaNs
     * as in IEEE 754, largest finite 57344. */
    SDPA_DTYPE_F8_E4M3 = 9,
    SDPA_DTYPE_F8_E5M2 = 10,
} sdpa_dtype_t;

/* A strided 4D tensor. Index order is [batch, heads, sequence, head_dim];
 * element (i0,i1,i2,i3) lives at base + sum(i_n * strides[n]) elements. */
typedef struct sdpa_tensor_desc {
    sdpa_dtype_t dtype;
    int64_t dims[4];
    int64_t strides[4];
} sdpa_tensor_desc_t;

/* ------------------------------------------------------------------------- */
/* Problem description                                                       */
/* ------------------------------------------------------------------------- */

typedef enum sdpa_prop_kind {
    SDPA_FORWARD_INFERENCE = 0,
    SDPA_FORWARD_TRAINING = 1, /* also writes the log-sum-exp workspace */
    SDPA_BACKWARD = 2,         /* consumes the workspace, O and dO */
} sdpa_prop_kind_t;

typedef enum sdpa_mask_kind {
    SDPA_MASK_NONE = 0,
    /* Additive mask tensor, dims [B or 1, Hq or 1, Sq or 1, Sk], dtype f32,
     * f16 or bf16; a dim of 1 broadcasts. */
    SDPA_MASK_BUFFER = 1,
    /* Query i sees keys j <= i. */
    SDPA_MASK_CAUSAL_TOP_LEFT = 2,
    /* Query i sees keys j <= i + (Sk - Sq): the last query sees every key. */
    SDPA_MASK_CAUSAL_BOTTOM_RIGHT = 3,
} sdpa_mask_kind_t;

typedef enum sdpa_scale_kind {
    SDPA_SCALE_NONE = 0,   /* scores are not scaled */
    SDPA_SCALE_HOST = 1,   /* sdpa_exec_args_t.scale, a host float */
    SDPA_SCALE_DEVICE = 2, /* one element of scale_dtype at exec_args.scale_ptr */
} sdpa_scale_kind_t;

/* A fully masked row is a query that sees no key: every score of its row is
 * -inf (an additive mask row of -inf, or a causal mask with Sq > Sk that
 * leaves the first queries no key). Its O row is NaN (ACCURATE) or 0
 * (INF_AS_ZERO); its log-sum-exp in the workspace is -inf in both modes.
 * Backward treats such a row as probabilities of 0 in both modes: it adds
 * nothing to dK and dV, and its dQ (and dS) row is 0. */
typedef enum sdpa_softmax_kind {
    /* A fully masked row gives NaN, as exp(-inf - -inf) does. */
    SDPA_SOFTMAX_ACCURATE = 0,
    /* A fully masked row gives 0. */
    SDPA_SOFTMAX_INF_AS_ZERO = 1,
} sdpa_softmax_kind_t;

typedef enum sdpa_quant_kind {
    SDPA_QUANT_NONE = 0,
    SDPA_QUANT_PER_TENSOR = 1, /* one value for the whole tensor */
    SDPA_QUANT_PER_GROUP = 2,  /* one value per group_size head_dim elements of each token */
    SDPA_QUANT_PER_HEAD = 3,   /* ABI 1.2: one value per K/V head, [Hkv] */
} sdpa_quant_kind_t;

/* Dequantization of an integer K or V: x = (q - zero_point) * scale; of
 * an FP8 K or V (ABI 1.2, F8_E4M3 or F8_E5M2): x = fp8 * scale.
 *
 * Integer K/V need scales (zero points are optional). FP8 K/V take scales
 * or none (scales = NONE: x = fp8, a scale of 1) and no zero points
 * (zero_points other than NONE: SDPA_ERROR_INVALID_ARGUMENT). A float K/V
 * (f32, f16, bf16) takes neither. An FP8 NaN (E4M3's S.1111.111, E5M2's
 * NaNs) or E5M2 infinity is read as such and propagates as the same value
 * in f32 would. FP8 K/V are forward only: backward refuses them
 * (SDPA_ERROR_UNSUPPORTED; training uses f16 or bf16 K/V), as it does
 * integer K/V. sdpa_features_t.has_fp8_kv says whether a backend serves
 * them.
 *
 * PER_TENSOR: one value, element 0 of its array. PER_HEAD (ABI 1.2, any
 * quantized K/V, scales and zero points): the array is dense [Hkv], K/V
 * head h (the head of k.dims[1], shared by its Hq / Hkv query heads) uses
 * entry h, in every layout (dense, varlen, paged). PER_GROUP: the array is
 * dense [B, Hkv, Sk, G] with G = D / group_size groups per token, whatever
 * the strides of K and V: element (b, h, j, d) of K uses entry
 *     ((b * Hkv + h) * Sk + j) * G + d / group_size.
 * With varlen, K and V are [1, Hkv, total_k, D]: the entries are
 * [Hkv, total_k, G], j the packed key row (cu_seqlens_k[b] + position).
 * 4-bit zero points (s4, u4) are packed like 4-bit tensors, entry 2i in the
 * low nibble of byte i and entry 2i + 1 in its high nibble, straight across
 * tokens: with an odd G (D = 96, group_size = 32: G = 3) the zero points of
 * every odd token start in the high nibble of a byte shared with the token
 * before it. There is no padding between tokens. */
typedef struct sdpa_quant_desc {
    sdpa_quant_kind_t scales;
    sdpa_dtype_t scales_dtype; /* f32, f16 or bf16 */
    sdpa_quant_kind_t zero_points;
    sdpa_dtype_t zero_points_dtype; /* s8, u8, s4, u4 or s32 */
    /* PER_GROUP: head_dim elements per group, a power of two dividing D. */
    int64_t group_size;
} sdpa_quant_desc_t;

/* Dropout on the attention probabilities (FORWARD_TRAINING and BACKWARD
 * only): a probability p in [0, 1), an int64 seed and an optional int64
 * offset, each a host scalar or a device pointer. Kept probabilities are
 * scaled by 1 / (1 - p); the softmax sum and the log-sum-exp are those of
 * the probabilities before dropout.
 *
 * The keep decision is part of the ABI, so that a framework can reproduce a
 * mask or continue a random stream. Element (b, h, i, j) of the
 * probabilities [B, Hq, Sq, Sk] has the linear index
 *     n = ((b * Hq + h) * Sq + i) * Sk + j
 * and the random word w = word n % 4 of Philox4x32-10 (Salmon et al.,
 * SC'11: 10 rounds, multipliers 0xD2511F53 and 0xCD9E8D57, key increments
 * 0x9E3779B9 and 0xBB67AE85, as in Random123) with
 *     c       = offset + n / 4          (uint64 arithmetic, wrapping)
 *     counter = { lo32(c), hi32(c), 0, 0 }
 *     key     = { lo32(seed), hi32(seed) }
 * The element is kept iff (w >> 8) * 2^-24 >= p. One execution uses the
 * counters offset .. offset + ceil(B Hq Sq Sk / 4) - 1: the next step of a
 * stream passes an offset past them. Backward regenerates the mask forward
 * used from the same p, seed and offset. */
typedef struct sdpa_dropout_desc {
    uint32_t enabled;
    uint32_t host_scalars; /* 1: values in exec args; 0: device pointers */
    uint32_t with_offset;  /* 0: offset is 0 */
    /* Forward writes the keep mask: uint8 [B, Hq, Sq, Sk], dense, one byte
     * per element: 1 = kept, 0 = dropped (masked keys included). */
    uint32_t with_mask_output;
} sdpa_dropout_desc_t;

/* ------------------------------------------------------------------------- */
/* LLM features (ABI 1.1, struct_version 2 of the problem and the arguments) */
/* ------------------------------------------------------------------------- */

/* Every member below reads as zero from a caller that passes a version 1
 * struct, and zero means "off" for each of them.
 *
 * Positions. Where a feature needs to place query i among the keys (the
 * sliding window, ALiBi) the queries are the last Sq positions of the key
 * sequence, as in FlashAttention: query i sits at position
 *     pos_i = i + Sk - Sq
 * (bottom-right aligned; with Sq = Sk, pos_i = i), with Sq and Sk the
 * lengths of the query's own sequence (varlen, paged KV). This is also
 * where CAUSAL_BOTTOM_RIGHT puts the diagonal; CAUSAL_TOP_LEFT keeps its
 * own (j <= i) and combines with a window by intersection.
 *
 * Scores. s_ij = cap(scale * q_i.k_j) + bias_ij + mask_ij, in that order:
 * cap is the logit softcap (identity when off), bias the ALiBi bias, mask
 * the additive mask buffer; keys outside the causal band or the window are
 * -inf. softmax, dropout and the log-sum-exp then act on s as before, and
 * a query whose keys are all -inf is a fully masked row (sdpa.h,
 * sdpa_softmax_kind_t). dS (backward) is the gradient with respect to s,
 * the softmax input: with a softcap, that of the capped score, P o (dP -
 * D_i) as without one; the gradient with respect to scale * q_i.k_j is dS
 * times the cap's derivative 1 - tanh^2(scale * q_i.k_j / c). */

/* Variable-length batches (flash_attn_varlen_func): B sequences packed
 * along the sequence dim. q and dst are [1, Hq, total_q, D], k and v
 * [1, Hkv, total_k, D] (any strides; PyTorch's [total, H, D] is strides
 * {0, D, H * D, 1}), and sequence b owns query rows cu_seqlens_q[b] ..
 * cu_seqlens_q[b + 1] - 1 and key rows cu_seqlens_k[b] .. cu_seqlens_k[b + 1]
 * - 1 (int32 device arrays of B + 1 entries in exec args: cu[0] = 0,
 * non-decreasing, cu[B] <= total, each length <= its maximum below; a
 * sequence may be empty). Each sequence is its own attention problem:
 * causal masks, the window and ALiBi use its own lengths, and a query of a
 * sequence without keys is a fully masked row. The log-sum-exp workspace
 * follows Q: f32 [Hq, total_q] (FlashAttention's layout). The tensors
 * indexed by query and key - the mask buffer, the dropout keep mask and its
 * element index, dS - keep the layout of the padded problem
 * [B, Hq, max_seqlen_q, max_seqlen_k], (b, h, i, j) with i and j the
 * positions inside sequence b, so dropout draws the numbers of the padded
 * equivalent. Rows of Q, K, V outside every sequence are not read, and the
 * outputs there (O, LSE, dQ, dK, dV) and the padding of the padded tensors
 * are not written. Forward and backward; not with paged_kv. */
typedef struct sdpa_varlen_desc {
    uint32_t enabled;
    int64_t batch;        /* B: the cu_seqlens arrays have B + 1 entries */
    int64_t max_seqlen_q; /* the longest query sequence, >= 1 */
    int64_t max_seqlen_k; /* the longest key sequence, >= 1 */
} sdpa_varlen_desc_t;

/* A paged KV cache (vLLM, flash_attn_with_kvcache): k and v are caches
 * [num_blocks, Hkv, block_size, D] (any strides, so [num_blocks,
 * block_size, Hkv, D] too; block_size a power of two in 16..256; quantized
 * dtypes allowed, PER_GROUP parameters then dense [num_blocks, Hkv,
 * block_size, D / group_size]), q and dst [B, Hq, Sq, D]. Key j of sequence
 * b is row j % block_size of block block_table[b][j / block_size], with
 * block_table int32 [B, max_blocks_per_seq] (row stride block_table_stride
 * elements, >= max_blocks_per_seq; 0 means max_blocks_per_seq) and the keys
 * of sequence b are 0 .. cache_seqlens[b] - 1 (int32 [B], each in
 * 0 .. max_blocks_per_seq * block_size), both device arrays in exec args.
 * Entries of the block table past a sequence's last block are not read.
 * Decode (Sq = 1) and chunked prefill (Sq > 1, usually with
 * CAUSAL_BOTTOM_RIGHT: the chunk is the last Sq positions). The mask
 * buffer, the dropout keep mask and the logical Sk of the other rules are
 * [B, Hq, Sq, max_blocks_per_seq * block_size]. Forward only; no mask
 * buffer, no dropout, not with varlen. */
typedef struct sdpa_paged_kv_desc {
    uint32_t enabled;
    int64_t max_blocks_per_seq; /* columns of the block table, <= num_blocks */
    int64_t block_table_stride; /* elements between rows; 0: max_blocks_per_seq */
} sdpa_paged_kv_desc_t;

/* Device arrays: cu_seqlens_q/k, block_table and cache_seqlens live in
 * device memory, and earlier commands on the same list may write them, so
 * primitive_execute cannot check their contents. Whatever they hold, no
 * backend reads or writes outside the tensors the descriptor describes:
 *   - ref reads them on the host and refuses an execution that breaks the
 *     rules above (SDPA_ERROR_INVALID_ARGUMENT naming the first bad entry:
 *     the array, its index, its value and the range allowed);
 *   - ze clamps every entry in its kernels: a cumulative offset into
 *     [0, total] (total: q.dims[2] or k.dims[2]), each sequence's rows
 *     [cu[b], cu[b + 1]) kept monotone inside [0, total] and its length
 *     capped at max_seqlen_q / max_seqlen_k (the rows past it are not
 *     written); a cache length into 0 .. max_blocks_per_seq * block_size;
 *     a block id into 0 .. num_blocks - 1. An execution with bad entries
 *     then succeeds with wrong numbers in the rows of the sequences they
 *     feed (and, as a clamped sequence may overlap another's rows, possibly
 *     in those), never an access outside a buffer. Its checking mode,
 *     SDPA_ZE_CHECK_DEVICE_ARRAYS=1, reads the arrays back before each
 *     launch on the context's own list and refuses bad ones as ref does
 *     (doc/reliability.md); outside it, and on a caller's command list,
 *     ze refuses nothing;
 *   - nobody can check entries that are in range but wrong (a block of
 *     another sequence, shorter or shifted sequences): in every backend
 *     they give wrong numbers, silently. */

/* Sliding window (Mistral, Gemma): query i sees keys j with
 *     pos_i - left <= j <= pos_i + right
 * (pos_i above; -1 = unbounded on that side), alone or with a causal mask
 * (both apply). left = right = 0 is the diagonal alone; a window wider than
 * Sk is no restriction, whatever its bounds up to INT64_MAX. Forward and
 * backward. */
typedef struct sdpa_window_desc {
    uint32_t enabled;
    int64_t left, right; /* >= -1 */
} sdpa_window_desc_t;

/* ALiBi (Press et al.): bias_ij = -slope_h * |pos_i - j| with per-query-
 * head f32 slopes in exec args (alibi_slopes). Forward and backward. */
typedef enum sdpa_alibi_kind {
    SDPA_ALIBI_NONE = 0,
    SDPA_ALIBI_PER_HEAD = 1,       /* f32 [Hq], one set for every sequence */
    SDPA_ALIBI_PER_BATCH_HEAD = 2, /* f32 [B, Hq], dense */
} sdpa_alibi_kind_t;

typedef struct sdpa_problem_desc {
    uint32_t struct_size;    /* sizeof(sdpa_problem_desc_t) */
    uint32_t struct_version; /* SDPA_PROBLEM_DESC_VERSION */
    sdpa_prop_kind_t prop_kind;

    /* q: [B, Hq, Sq, D]; k: [B, Hkv, Sk, D]; v: [B, Hkv, Sk, Dv];
     * dst (O): [B, Hq, Sq, Dv]. Hq must be a multiple of Hkv (GQA/MQA):
     * query head h reads K/V head h / (Hq / Hkv), so consecutive query heads
     * share a K/V head, and backward sums the dK, dV of those Hq / Hkv query
     * heads. q and dst share one dtype (f32, f16, bf16); k and v may be
     * f32, f16, bf16, or s8, u8, s4, u4 with k_quant/v_quant, or (ABI 1.2)
     * f8_e4m3, f8_e5m2 with optional scales in k_quant/v_quant (each of k
     * and v its own dtype).
     *
     * V's head size (ABI 1.2). Dv = v.dims[3] may differ from D = q.dims[3]
     * = k.dims[3] (DeepSeek-V2/V3 prefill: D 192, Dv 128); each is in
     * 1..max_head_size. O and dO take Dv (dst.dims[3] = v.dims[3], else
     * SDPA_ERROR_INVALID_ARGUMENT naming dst.dims[3]), dQ and dK take D, dV
     * takes Dv; v_quant's group_size divides Dv, k_quant's D. Every feature
     * combines with it. sdpa_features_t.has_value_head_size says whether a
     * backend serves Dv != D, forward and backward: ref and ze (ze on its
     * portable, decode and split-KV kernels; its fast path declines, and
     * primitive_supports reports the portable or decode kernel that serves
     * instead). The ze backward's largest head size stays 512.
     *
     * MLA: V as a view of K (ABI 1.2; DeepSeek, Kimi decode with absorbed
     * projections). When V is the first Dv elements of each row of K, pass
     * exec_args.v = exec_args.k and a v descriptor with K's dtype, dims and
     * strides except dims[3] = Dv < D (for MLA, D = 576 = 512 latent + 64
     * rope, Dv = 512; one K/V head for all query heads, Hkv = 1). With a
     * paged cache the block table and cache lengths are shared, so V is
     * the same cache. No copy is made and nothing refuses the aliasing (two
     * read-only inputs); any other overlap of inputs is allowed too, as
     * long as no output overlaps an input. Backward takes the same form
     * with dK and dV in buffers of their own: the gradient of the shared
     * cache is dK with dV added into its first Dv columns (the caller's
     * sum). sdpa_features_t.has_v_view_of_k says it is served (ref and
     * ze; ze's largest head size is 576, 512 in backward). */
    sdpa_tensor_desc_t q, k, v, dst;

    sdpa_mask_kind_t mask_kind;
    sdpa_tensor_desc_t mask; /* SDPA_MASK_BUFFER only */

    sdpa_scale_kind_t scale_kind;
    sdpa_dtype_t scale_dtype; /* SDPA_SCALE_DEVICE: f32, f16 or bf16 */
    uint32_t invert_scale;    /* 1: scores are divided by the scale */

    sdpa_softmax_kind_t softmax_kind;

    /* Accumulation types of Q.K^T and P.V: SDPA_DTYPE_F32 (or UNDEF, the
     * default) or SDPA_DTYPE_F16 (faster on some GPUs, less accurate). */
    sdpa_dtype_t kq_acc_dtype, vs_acc_dtype;

    sdpa_quant_desc_t k_quant, v_quant;
    sdpa_dropout_desc_t dropout;

    /* Backward only (prop_kind == SDPA_BACKWARD). diff_dst has dst's shape;
     * diff_q, diff_k, diff_v have q's, k's and v's shapes and q's dtype.
     * ds (dtype UNDEF: not requested) is [B, Hq, Sq, Sk], dtype f32, f16 or
     * bf16: the gradient of the loss with respect to the softmax input (the
     * scaled, masked scores s_ij), i.e. dS_ij = P_ij * (dP_ij - D_i). */
    sdpa_tensor_desc_t diff_dst, diff_q, diff_k, diff_v, ds;
    /* 1: bit-identical results from run to run (no floating-point atomics). */
    uint32_t deterministic;

    /* --- ABI 1.1, struct_version 2 (see "LLM features" above) ------------ */
    sdpa_varlen_desc_t varlen;
    sdpa_paged_kv_desc_t paged_kv;
    sdpa_window_desc_t window;
    /* Logit softcap (Gemma 2): s <- softcap * tanh(s / softcap) on the
     * scaled score, before the bias and the mask; 0 = off, else a finite
     * value > 0. Forward and backward. Every finite value > 0 is served,
     * denormals and FLT_MAX included: a cap far above the scores gives the
     * uncapped scores, one far below them gives scores of +-softcap (0 for
     * a score of 0), and its derivative 1 - tanh^2 follows, up to f32
     * rounding on devices that flush denormals to 0. */
    float softcap;
    sdpa_alibi_kind_t alibi;
    /* Split-KV decode (flash-decoding): the keys of each query row are
     * split into chunks that work-groups process in parallel, and a second
     * small kernel merges their partial results as merge_execute does.
     * 0: the backend decides from the problem and the device's compute
     * units; 1: never split; n >= 2: split into at most n chunks where the
     * backend can (fewer when the keys are fewer tiles). Forward only;
     * results agree with the unsplit pass within f32 rounding; a backend
     * that does not split (sdpa_features_t.has_split_kv = 0: ref) ignores
     * it. ze splits at most 16 ways, one tile of sub-group-size keys at
     * least per split, the problems its decode kernel serves (Sq <= 8, no
     * dropout, no varlen, f32 accumulation; Hq / Hkv * Sq rows in blocks of
     * at most 16 that fit the device's local memory) and
     * ignores num_splits for the others; with 0 it splits on GPUs, not on
     * the CPU device (doc/decode.md). A split execution uses scratch
     * (SDPA_QUERY_SCRATCH_BYTES). */
    uint32_t num_splits;

    /* --- ABI 1.2, struct_version 3 (reads as 0 from older callers) ------- */
    /* Attention sinks (gpt-oss, StreamingLLM): 1 = every query head h has
     * one learned logit sink_h (exec_args.sinks, f32 [Hq]) that joins the
     * softmax denominator of each of its rows and takes no value:
     *     m     = max(sink_h, max_j s_ij)
     *     O_i   = sum_j exp(s_ij - m) V_j / (exp(sink_h - m) + sum_j exp(s_ij - m))
     *     lse_i = m + log(exp(sink_h - m) + sum_j exp(s_ij - m))
     * (the workspace holds this lse_i). A query that sees no key is then not
     * a fully masked row: its O row is 0 exactly, in both softmax modes, and
     * its lse_i is sink_h. A sink of -inf is no sink for its head; +inf or
     * NaN gives NaN rows. Dropout drops keys' probabilities, never the
     * sink's share. Backward writes the sinks' gradient to
     * exec_args.diff_sinks (f32 [Hq], overwritten, not accumulated):
     *     dsink_h = -sum over the rows (b, i) of head h of P_sink_i D_i,
     *     P_sink_i = exp(sink_h - lse_i), D_i = dO_i . O_i;
     * dQ, dK, dV and dS keep their formulas (P_ij = exp(s_ij - lse_i)).
     * Forward (split-KV too: the merge counts the sink once) and backward,
     * with every other feature. merge_create takes no sinks: a sink is the
     * state O = 0, LSE = sink_h, so a caller merging the parts of a problem
     * with sinks (each computed without them) adds that state once.
     * sdpa_features_t.has_sinks says whether a backend serves them (ref
     * and ze both: ze on its portable and decode kernels, its fast path
     * declines them). */
    uint32_t sinks;
} sdpa_problem_desc_t;

/* ------------------------------------------------------------------------- */
/* Execution arguments                                                       */
/* ------------------------------------------------------------------------- */

/* The byte alignment of caller scratch (sdpa_exec_args_t.scratch). */
#define SDPA_SCRATCH_ALIGNMENT 256

/* Device (or shared/host USM) pointers for one execution. Members a problem
 * does not use are ignored.
 *
 * Alignment. A pointer needs only the alignment of its own elements: 4 bytes
 * for f32 and s32, 2 for f16 and bf16, 1 for s8, u8, the 8-bit floats and
 * the 4-bit types (whose pointer is the byte holding element 0 in its low
 * nibble); 4 for the
 * workspace and dropout_p_ptr, 8 for dropout_seed_ptr and dropout_offset_ptr,
 * 1 for dropout_mask. Any such pointer is served, forward and backward:
 * views into a larger allocation at any element offset (q, k and v carved
 * from one fused projection, a slice of a KV cache, a sub-block of a caching
 * allocator). A pointer less aligned than its elements is refused with
 * SDPA_ERROR_INVALID_ARGUMENT. Caller scratch must be aligned to
 * SDPA_SCRATCH_ALIGNMENT bytes.
 *
 * The log-sum-exp workspace is f32 [B, Hq, Sq], dense: for query row i,
 * lse_i = log(sum_j exp(s_ij)) in natural log, with s_ij the scaled and
 * masked scores (scale included); -inf for a fully masked row, in both
 * softmax modes (see sdpa_softmax_kind_t). Backward recomputes the
 * probabilities as exp(s_ij - lse_i) and takes a row whose lse_i is -inf as
 * all zeros. See SDPA_QUERY_WORKSPACE_BYTES. */
typedef struct sdpa_exec_args {
    uint32_t struct_size;    /* sizeof(sdpa_exec_args_t) */
    uint32_t struct_version; /* SDPA_EXEC_ARGS_VERSION */

    const void *q, *k, *v;
    void *dst;
    const void *mask;
    void *workspace; /* training forward writes it, backward reads it */

    float scale;           /* SDPA_SCALE_HOST */
    const void *scale_ptr; /* SDPA_SCALE_DEVICE */

    const void *k_scales, *k_zero_points, *v_scales, *v_zero_points;

    /* Dropout, host scalars (host_scalars = 1) ... */
    float dropout_p;
    int64_t dropout_seed, dropout_offset;
    /* ... or device pointers to one f32 / int64 / int64 (host_scalars = 0). */
    const void *dropout_p_ptr, *dropout_seed_ptr, *dropout_offset_ptr;
    void *dropout_mask; /* with_mask_output: uint8 [B, Hq, Sq, Sk], dense, 1 = kept */

    /* Backward. */
    const void *diff_dst;
    void *diff_q, *diff_k, *diff_v, *ds;

    /* Optional caller-owned scratch (device memory of at least
     * SDPA_QUERY_SCRATCH_BYTES, aligned to SDPA_SCRATCH_ALIGNMENT). NULL:
     * the scratch the context keeps for the command list this execution
     * appends to, grown on demand (see Threads at the top). */
    void *scratch;
    size_t scratch_size;

    /* Optional: append to this command list instead of the context's. */
    ze_command_list_handle_t command_list;
    /* Optional: the launches wait for these events and the last one signals
     * signal_event. The ref backend waits on the host. */
    ze_event_handle_t signal_event;
    uint32_t num_wait_events;
    ze_event_handle_t *wait_events;

    /* --- ABI 1.1, struct_version 2 ----------------------------------------- */
    /* varlen: int32 [B + 1] device arrays, 4-byte aligned. */
    const void *cu_seqlens_q, *cu_seqlens_k;
    /* paged_kv: int32 [B, max_blocks_per_seq] (rows block_table_stride
     * apart) and int32 [B]. */
    const void *block_table, *cache_seqlens;
    /* alibi: f32 [Hq] or [B, Hq]. */
    const void *alibi_slopes;

    /* --- ABI 1.2, struct_version 3 ----------------------------------------- */
    /* sinks = 1: f32 [Hq], 4-byte aligned; backward writes the gradient
     * f32 [Hq] to diff_sinks (sdpa_problem_desc_t.sinks). */
    const void *sinks;
    void *diff_sinks;
} sdpa_exec_args_t;

/* ------------------------------------------------------------------------- */
/* Merging attention states (ABI 1.1)                                        */
/* ------------------------------------------------------------------------- */

/* The most states one merge takes. More states merge in steps: the merge is
 * associative, merge(merge(a, b), c) = merge(a, b, c) up to rounding. */
#define SDPA_MERGE_MAX_STATES 16

/* A merge combines n attention states (O_s, LSE_s) of the same queries, each
 * the attention of those queries over a part of the keys (split-KV decode,
 * context-parallel attention across devices, a KV cache in two pieces), into
 * the state of the attention over all of the keys. For every row (b, h, i):
 *
 *     m    = max_s LSE_s
 *     w_s  = exp(LSE_s - m)          (0 for a state whose LSE_s is -inf)
 *     O    = sum_s w_s O_s / sum_s w_s
 *     LSE  = m + log(sum_s w_s)
 *
 * LSE_s is what a training forward writes to its workspace (natural log,
 * scale included; -inf for a query that saw no key), so the states of
 * FORWARD_TRAINING executions over disjoint key ranges merge into exactly
 * the O and log-sum-exp of one execution over all of them.
 *   - A state whose LSE_s is -inf (it saw no key) contributes nothing,
 *     whatever its O_s row holds (NaN in ACCURATE mode).
 *   - If every LSE_s of a row is -inf, its O row is NaN (ACCURATE) or 0
 *     (INF_AS_ZERO), as for a fully masked row of a forward, and its LSE is
 *     -inf.
 *   - If some LSE_s is NaN or +inf, the row's O and LSE are NaN.
 *   - With n = 1 the merge converts O_1 to dst's dtype and layout (and applies
 *     the two rules above).
 * Merges accumulate in at least f32 and round each output once.
 *
 * In place: dst may be the very buffer of one state's O (same pointer,
 * dtype and strides), and dst_lse that of one state's LSE, as in
 * (O, LSE) = merge((O, LSE), (O_new, LSE_new)). Any other overlap between
 * outputs and inputs is undefined. */
typedef struct sdpa_merge_desc {
    uint32_t struct_size;    /* sizeof(sdpa_merge_desc_t) */
    uint32_t struct_version; /* SDPA_MERGE_DESC_VERSION */
    uint32_t num_states;     /* n, 1..SDPA_MERGE_MAX_STATES */
    /* The O row of a row whose states all saw no key: NaN or 0. */
    sdpa_softmax_kind_t softmax_kind;
    /* Every O_s: [B, H, S, D], f32, f16 or bf16, one dtype and one layout
     * for all states (each at its own pointer). D <= 576. */
    sdpa_tensor_desc_t states;
    /* Every LSE_s: f32 [B, H, S, 1] (strides[3] is not used), one layout for
     * all states; the workspace of a forward is dense, strides
     * {H * S, S, 1, 1}. */
    sdpa_tensor_desc_t states_lse;
    /* O: [B, H, S, D], f32, f16 or bf16 (any of them, whatever the states'). */
    sdpa_tensor_desc_t dst;
    /* LSE: f32 [B, H, S, 1], or dtype UNDEF: not written. */
    sdpa_tensor_desc_t dst_lse;
} sdpa_merge_desc_t;

/* The buffers of one merge. Alignment as for sdpa_exec_args_t: each pointer
 * that of its elements. states and states_lse are host arrays of num_states
 * device pointers, read during merge_execute only. */
typedef struct sdpa_merge_args {
    uint32_t struct_size;    /* sizeof(sdpa_merge_args_t) */
    uint32_t struct_version; /* SDPA_MERGE_ARGS_VERSION */
    const void *const *states;      /* O_s, s < num_states */
    const float *const *states_lse; /* LSE_s, s < num_states */
    void *dst;
    float *dst_lse; /* dst_lse.dtype F32 only */
    /* As in sdpa_exec_args_t. */
    ze_command_list_handle_t command_list;
    ze_event_handle_t signal_event;
    uint32_t num_wait_events;
    ze_event_handle_t *wait_events;
} sdpa_merge_args_t;

/* ------------------------------------------------------------------------- */
/* Contexts, primitives, queries                                             */
/* ------------------------------------------------------------------------- */

typedef struct sdpa_context sdpa_context_t;
typedef struct sdpa_primitive sdpa_primitive_t;

typedef struct sdpa_context_desc {
    uint32_t struct_size;           /* sizeof(sdpa_context_desc_t) */
    uint32_t struct_version;        /* SDPA_CONTEXT_DESC_VERSION */
    ze_context_handle_t ze_context; /* required by "ze"; ignored by "ref" */
    ze_device_handle_t ze_device;   /* required by "ze"; ignored by "ref" */
    /* Optional default command list (immediate or regular) for launches.
     * NULL: the context creates an in-order synchronous immediate list. */
    ze_command_list_handle_t command_list;
    uint32_t flags; /* reserved, must be 0 */
} sdpa_context_desc_t;

/* What a context's device and backend can do. */
typedef struct sdpa_features {
    uint32_t struct_size;    /* sizeof(sdpa_features_t) */
    uint32_t struct_version; /* SDPA_FEATURES_VERSION */
    char device_name[256];
    uint32_t max_head_size; /* largest D */
    uint32_t subgroup_size; /* sub-group size the kernels use (0: host) */
    uint32_t has_f16, has_bf16;
    uint32_t has_backward, has_deterministic_backward;
    uint32_t has_quantized_kv, has_dropout;
    /* ABI 1.1, struct_version 2: 1 if the backend serves the feature on
     * this device (forward, and backward where the feature has one). */
    uint32_t has_varlen, has_paged_kv, has_window, has_softcap, has_alibi;
    uint32_t has_split_kv; /* num_splits is honoured (0: ignored; ze: 1) */
    uint32_t has_merge;    /* merge_create / merge_execute */
    /* ABI 1.2, struct_version 3. */
    uint32_t has_supports_query; /* primitive_supports answers */
    uint32_t has_sinks;          /* sdpa_problem_desc_t.sinks, forward and backward */
    /* V's head size may differ from Q's and K's (Dv != D, see
     * sdpa_problem_desc_t), forward and backward. */
    uint32_t has_value_head_size;
    /* "MLA: V as a view of K" (see sdpa_problem_desc_t) is served, with
     * head sizes up to max_head_size. */
    uint32_t has_v_view_of_k;
    uint32_t has_fp8_kv; /* F8_E4M3 / F8_E5M2 K and V and PER_HEAD scales, forward */
} sdpa_features_t;

typedef enum sdpa_query {
    /* size_t: bytes of the log-sum-exp workspace (0 for inference). */
    SDPA_QUERY_WORKSPACE_BYTES = 1,
    /* size_t: bytes of scratch one execution needs (0 if none). */
    SDPA_QUERY_SCRATCH_BYTES = 2,
    /* char[]: the chosen kernel configuration, e.g. "fwd d128 sg16 cfg=...". */
    SDPA_QUERY_CONFIG_STRING = 3,
    /* uint64_t, on a context: modules this context has built from SPIR-V so
     * far (a second primitive with the same kernels builds none, and a
     * module loaded from the persistent module cache is not built). */
    SDPA_QUERY_MODULES_BUILT = 4,
    /* uint64_t, on a context: device allocations the context has made for
     * scratch so far, over all command lists (it grows a list's scratch only
     * when a larger execution on that list needs it). */
    SDPA_QUERY_SCRATCH_ALLOCATIONS = 5,
    /* uint64_t, on a context: modules this context loaded from the
     * persistent module cache (native binaries an earlier build stored,
     * see SDPA_CACHE) instead of building them. 0 with the cache off. */
    SDPA_QUERY_MODULE_CACHE_HITS = 6,
    /* uint64_t, on a context: modules this context looked up in the
     * persistent module cache and did not find usable (absent, damaged,
     * of another format, or refused by the driver), and so built. 0 with
     * the cache off; with it on, every build was a miss. */
    SDPA_QUERY_MODULE_CACHE_MISSES = 7,
} sdpa_query_t;

/* The kernels a primitive runs, as primitive_supports reports them. */
typedef enum sdpa_kernel_kind {
    SDPA_KERNEL_NONE = 0,     /* refused: creation would fail */
    SDPA_KERNEL_HOST = 1,     /* computed on the host (ref) */
    SDPA_KERNEL_PORTABLE = 2, /* the portable device kernels */
    SDPA_KERNEL_DECODE = 3,   /* the thin-query decode kernel (split-KV or not) */
    SDPA_KERNEL_FAST = 4,     /* a device-specific fast path (ze: the Xe kernels) */
} sdpa_kernel_kind_t;

/* The answer of primitive_supports (ABI 1.2): what primitive_create would
 * do with a problem, found without building or allocating anything. The
 * caller sets struct_size and struct_version; the backend fills the rest
 * (up to struct_size). */
typedef struct sdpa_support {
    uint32_t struct_size;    /* sizeof(sdpa_support_t) */
    uint32_t struct_version; /* SDPA_SUPPORT_VERSION */
    /* The status primitive_create would return, unless building a module
     * or an allocation fails there (SDPA_ERROR_BUILD_FAILED,
     * _OUT_OF_HOST_MEMORY, _OUT_OF_DEVICE_MEMORY, _DEVICE): those only
     * creation finds. */
    sdpa_status_t status;
    /* SDPA_KERNEL_NONE when status is not SDPA_SUCCESS. */
    sdpa_kernel_kind_t kernel_kind;
    /* What the primitive would answer to SDPA_QUERY_WORKSPACE_BYTES and
     * SDPA_QUERY_SCRATCH_BYTES (0 when refused). */
    uint64_t workspace_bytes, scratch_bytes;
    /* "" when status is SDPA_SUCCESS, else the sentence last_error() would
     * give after primitive_create (cut to fit, always NUL-terminated). */
    char message[1024];
    /* What SDPA_QUERY_CONFIG_STRING would answer ("" when refused). */
    char config_string[384];
} sdpa_support_t;

/* ------------------------------------------------------------------------- */
/* The backend interface                                                     */
/* ------------------------------------------------------------------------- */

/* A table of functions, handed out by sdpa_backend_negotiate. Read a member
 * only if its offset is below struct_size: a backend built against an older
 * minor version has a shorter table. Members are never reordered or removed
 * within a major version; new ones are appended. A backend that speaks minor
 * version m sets every member up to m's: with 1.1, merge_create and
 * merge_execute, with 1.2 primitive_supports (the front loader refuses a
 * table that leaves one NULL). */
typedef struct sdpa_backend_iface {
    uint32_t abi_version; /* SDPA_ABI_VERSION the backend implements */
    uint32_t struct_size; /* sizeof(sdpa_backend_iface_t) in that version */
    const char *name;     /* "ze", "ref", ... */

    /* One sentence about the failure of the most recent call made through
     * this table on the calling thread, or "" if that call succeeded or there
     * was none (see Conventions at the top: the destroy functions do not
     * count). The string stays valid until the next call made on this
     * thread. */
    const char *(*last_error)(void);

    /* Creates a context bound to desc->ze_context and desc->ze_device. */
    sdpa_status_t (*context_create)(const sdpa_context_desc_t *desc, sdpa_context_t **out);
    /* Waits for nothing: the caller must have finished using the context's
     * primitives. Frees the module cache and scratch, and orphans the
     * primitives still alive (see Lifetime at the top). NULL is ignored. */
    void (*context_destroy)(sdpa_context_t *ctx);
    /* Fills out (whose struct_size/struct_version the caller sets). */
    sdpa_status_t (*context_get_features)(sdpa_context_t *ctx, sdpa_features_t *out);
    /* Context-wide queries (SDPA_QUERY_MODULES_BUILT,
     * SDPA_QUERY_SCRATCH_ALLOCATIONS, SDPA_QUERY_MODULE_CACHE_HITS,
     * SDPA_QUERY_MODULE_CACHE_MISSES). */
    sdpa_status_t (*context_query)(sdpa_context_t *ctx, sdpa_query_t what, void *out,
                                   size_t out_size);

    /* Validates desc, chooses a kernel configuration, builds or reuses the
     * modules. desc is copied; the caller may free it afterwards. */
    sdpa_status_t (*primitive_create)(sdpa_context_t *ctx, const sdpa_problem_desc_t *desc,
                                      sdpa_primitive_t **out);
    /* NULL is ignored. The caller must have finished executing it. Valid on
     * an orphan (a primitive whose context was destroyed first). */
    void (*primitive_destroy)(sdpa_primitive_t *prim);
    /* Answers SDPA_QUERY_WORKSPACE_BYTES, _SCRATCH_BYTES (size_t) and
     * _CONFIG_STRING (char[out_size], always NUL-terminated). */
    sdpa_status_t (*primitive_query)(sdpa_primitive_t *prim, sdpa_query_t what, void *out,
                                     size_t out_size);
    /* Appends the launches for one execution and returns; the results are
     * ready once the command list has executed (or signal_event is
     * signalled). Safe to call from any number of threads at once, on the
     * same or different primitives and command lists (see Threads at the
     * top). */
    sdpa_status_t (*primitive_execute)(sdpa_primitive_t *prim, const sdpa_exec_args_t *args);

    /* --- ABI 1.1 ---------------------------------------------------------- */

    /* Creates a merge primitive (see sdpa_merge_desc_t): checks desc and
     * builds or reuses its module. desc is copied. The primitive is destroyed
     * with primitive_destroy and answers primitive_query (no workspace, no
     * scratch, a configuration string "merge n2 ..."); primitive_execute
     * refuses it, and merge_execute refuses attention primitives
     * (SDPA_ERROR_INVALID_ARGUMENT). */
    sdpa_status_t (*merge_create)(sdpa_context_t *ctx, const sdpa_merge_desc_t *desc,
                                  sdpa_primitive_t **out);
    /* Appends the merge of args->states into args->dst (and args->dst_lse)
     * and returns, as primitive_execute does; the same thread rules apply. */
    sdpa_status_t (*merge_execute)(sdpa_primitive_t *prim, const sdpa_merge_args_t *args);

    /* --- ABI 1.2 ---------------------------------------------------------- */

    /* Would primitive_create(ctx, desc) serve this problem, and how: fills
     * *out (see sdpa_support_t) from the same checks and the same choice of
     * kernels and configuration, without building a module, allocating
     * device memory or creating anything (a framework may ask for every
     * call it routes: it takes microseconds). Returns SDPA_SUCCESS when *out
     * holds the answer, whatever the answer is (a refusal of desc is
     * out->status and out->message, and last_error() is then ""); fails only
     * on a NULL ctx or out (SDPA_ERROR_INVALID_ARGUMENT) or an out whose
     * struct_size or struct_version this backend does not know
     * (SDPA_ERROR_INVALID_STRUCT). Safe from any number of threads. */
    sdpa_status_t (*primitive_supports)(sdpa_context_t *ctx, const sdpa_problem_desc_t *desc,
                                        sdpa_support_t *out);
} sdpa_backend_iface_t;

/* The entry point every backend plugin exports (SDPA_BACKEND_ENTRY_POINT).
 *
 * The caller passes in *abi_version the version it speaks (SDPA_ABI_VERSION).
 * If the backend implements that major version it stores its table in *iface,
 * sets *abi_version to its own version (same major, any minor) and returns
 * SDPA_SUCCESS. Otherwise it sets *abi_version to the version it does speak,
 * leaves *iface NULL and returns SDPA_ERROR_ABI_VERSION. The table is static:
 * it outlives every context and is never freed. */
typedef sdpa_status_t (*sdpa_backend_negotiate_fn)(uint32_t *abi_version,
                                                   const sdpa_backend_iface_t **iface);

/* ------------------------------------------------------------------------- */
/* The front loader (libsdpa)                                                */
/* ------------------------------------------------------------------------- */

typedef struct sdpa_backend sdpa_backend_t;

/* Opens a backend. name may be NULL (use $SDPA_BACKEND, else "ze"), a short
 * name ("ze", "ref": libsdpa_<name>.so searched in $SDPA_PLUGIN_DIR, then the
 * install's plugin directory, then the dynamic linker's path), or a path
 * containing '/'. Negotiates SDPA_ABI_VERSION. On failure *out is NULL and
 * sdpa_loader_last_error() explains. */
sdpa_status_t sdpa_backend_open(const char *name, sdpa_backend_t **out);

/* The negotiated table; valid until sdpa_backend_close. */
const sdpa_backend_iface_t *sdpa_backend_get_iface(const sdpa_backend_t *backend);

/* The path the backend was loaded from. */
const char *sdpa_backend_path(const sdpa_backend_t *backend);

/* Unloads the backend. Every context it created must be destroyed first.
 * NULL is ignored. */
void sdpa_backend_close(sdpa_backend_t *backend);

/* The front loader's message about the failure of its most recent
 * sdpa_backend_open on this thread, or "" if that call succeeded or there was
 * none. */
const char *sdpa_loader_last_error(void);

/* A short constant name for a status ("SDPA_ERROR_INVALID_ARGUMENT"). */
const char *sdpa_status_name(sdpa_status_t status);

#ifdef __cplusplus
}
#endif

#endif /* SDPA_H */
