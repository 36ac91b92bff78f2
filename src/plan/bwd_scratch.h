/*
 * bwd_scratch.h - the device scratch one backward execution needs, carved
 * from one allocation, and the zero fills it needs before the main kernel.
 *
 * Backward, as in the seed: a preprocess kernel computes D_i = rowsum(dO * O)
 * into f32 [B, Hq, Sq]; the main kernel walks key blocks, accumulates dK/dV
 * of its keys in registers and adds dQ; a postprocess kernel converts f32
 * accumulators to the output dtype. How the sums are formed depends on the
 * mode:
 *
 *   ATOMIC: dQ is added with f32 atomics into an f32 buffer: diff_q itself if
 *     it is f32 and dense, else an f32 scratch [B, Hq, Sq, D] converted
 *     afterwards. With GQA (several query heads per K/V head) dK/dV are
 *     added atomically too: into diff_k/diff_v if both are f32 and dense,
 *     else f32 scratch [B, Hkv, Sk, D] each (one decision for the pair, so
 *     that one pair of strides serves both). Every buffer added into is
 *     zero-filled first. Without GQA each work-group owns its keys' dK/dV
 *     and writes them directly. Results vary in the last bits from run to
 *     run (the order of atomic additions).
 *
 *   DETERMINISTIC: no floating-point atomics. dQ is computed in its own pass
 *     (a work-group owns a query block and walks the keys) and written
 *     directly, so it needs no scratch. With GQA each query head writes its
 *     own f32 partial dK/dV slice, [B, Hq, Sk, D] each, and a reduction pass
 *     sums the KV_GROUP_SIZE slices of a K/V head in a fixed order into
 *     diff_k/diff_v. Every element of a partial is written by exactly one
 *     work-group (zeros for keys no query sees), so nothing is filled.
 *
 * PARTIAL dQ (either mode, dq_slices = n_key_blocks > 0, chosen by
 *   bwd_plan.c within SDPA_BWD_DQ_PARTIALS_MAX_SLICES and _MAX_BYTES): in
 *   place of the atomic dQ sums and of the deterministic dQ pass, each
 *   sdpa_bwd work-group (Bc keys of one batch and query head) stores its
 *   contribution to every query's dQ into its own f32 slice, region dq =
 *   [B, Hq, n_key_blocks, Sq, D] (zeros for the queries that cannot see its
 *   keys), and the postprocess sums the n_key_blocks slices of a head in a
 *   fixed order into diff_q, as it sums deterministic GQA's dK/dV partials:
 *   deterministic, without atomics and without a fill. Not with varlen.
 *
 * Both modes need D_i and the strides buffer (SDPA_BWD_STRIDES_COUNT int64
 * values the kernels read instead of ~30 stride arguments, laid out as
 * kernel_abi_bwd.h's enum sdpa_bwd_stride). Every region starts at a
 * multiple of SDPA_BWD_SCRATCH_ALIGNMENT bytes from the scratch base (which
 * the backend aligns as much).
 */
#ifndef SDPA_CORE_BWD_SCRATCH_H
#define SDPA_CORE_BWD_SCRATCH_H

#include <stddef.h>
#include <stdint.h>

#include "problem.h"
#include "scratch_layout.h"
#include "sdpa.h"

/* The alignment sdpa.h promises callers' scratch needs. */
#define SDPA_BWD_SCRATCH_ALIGNMENT SDPA_SCRATCH_ALIGNMENT
#define SDPA_BWD_STRIDES_COUNT 32

typedef enum sdpa_bwd_mode {
    SDPA_BWD_MODE_ATOMIC = 0,
    SDPA_BWD_MODE_DETERMINISTIC = 1,
} sdpa_bwd_mode_t;

/* What a zero fill targets. */
typedef enum sdpa_bwd_buffer {
    SDPA_BWD_BUFFER_SCRATCH = 0, /* the scratch, at offset */
    SDPA_BWD_BUFFER_DIFF_Q,      /* the caller's diff_q (f32, dense), from its base */
    SDPA_BWD_BUFFER_DIFF_K,
    SDPA_BWD_BUFFER_DIFF_V,
} sdpa_bwd_buffer_t;

/* zeCommandListAppendMemoryFill(buffer + offset, 0, bytes) before the main
 * kernel. */
typedef struct sdpa_zero_fill {
    sdpa_bwd_buffer_t buffer;
    size_t offset, bytes;
} sdpa_zero_fill_t;

typedef struct sdpa_bwd_scratch {
    sdpa_bwd_mode_t mode;

    /* Where the main kernel sums (DKV_ATOMIC is a constant, DETERMINISTIC
     * is mode; the scratch targets are pointers and strides). */
    int dq_f32_scratch;  /* dQ accumulates in region dq, then converted to diff_q */
    int dkv_f32_scratch; /* dK/dV accumulate in regions dk, dv (f32), then converted */
    int dkv_atomic;      /* several query heads add into one dK/dV */
    int dkv_partials;    /* deterministic GQA: dk, dv are [B, Hq, Sk, D] partials to reduce */
    int64_t dq_slices;   /* > 0: dq holds that many partial dQ slices per head (PARTIAL dQ) */

    sdpa_scratch_region_t dq;      /* f32 [B, Hq, Sq, D], or [B, Hq, dq_slices, Sq, D] */
    sdpa_scratch_region_t dk, dv;  /* f32 [B, Hkv, Sk, D], or [B, Hq, Sk, D] partials */
    sdpa_scratch_region_t d_i;     /* f32 [B, Hq, Sq] */
    sdpa_scratch_region_t strides; /* int64 [SDPA_BWD_STRIDES_COUNT] */
    size_t total_bytes;            /* SDPA_QUERY_SCRATCH_BYTES */

    uint32_t num_fills;
    sdpa_zero_fill_t fills[3];
} sdpa_bwd_scratch_t;

/* The mode a problem asks for: DETERMINISTIC if problem->deterministic. */
sdpa_bwd_mode_t sdpa_bwd_mode_of(const sdpa_problem_desc_t *problem);

/* The shape of the buffers indexed by position (Q, K, V, gradients, the f32
 * sums and partials, D_i): shape itself, or with varlen the packed
 * [1, H, total, D] tensors (q.dims[2] query rows, k.dims[2] key rows). */
sdpa_shape_t sdpa_bwd_storage_shape(const sdpa_problem_desc_t *problem, const sdpa_shape_t *shape);

/* Lays out the scratch of a backward problem (the output of
 * sdpa_problem_check, prop_kind BACKWARD, with its shape) in mode, with
 * dq_slices partial dQ slices per head (0: none; PARTIAL dQ above).
 * Returns SDPA_SUCCESS, SDPA_ERROR_INVALID_ARGUMENT for a forward problem
 * or slices with varlen or below 0, or SDPA_ERROR_UNSUPPORTED if the sizes
 * overflow size_t. */
sdpa_status_t sdpa_bwd_scratch_plan(const sdpa_problem_desc_t *problem, const sdpa_shape_t *shape,
                                    sdpa_bwd_mode_t mode, int64_t dq_slices,
                                    sdpa_bwd_scratch_t *out);

#endif /* SDPA_CORE_BWD_SCRATCH_H */
