/*
 * bwd_plan.h - everything about a backward execution that is fixed when the
 * primitive is created: the SPIR-V variant and configuration, the
 * specialization constants, the scratch layout and zero fills, the strides
 * buffer's contents, and the geometry of each launch of the pipeline
 * (kernel_abi_bwd.h):
 *
 *   fills -> copy strides -> preprocess -> main -> [dq pass] -> postprocesses
 *
 * The ze backend appends them in that order with a barrier between
 * dependent steps.
 */
#ifndef SDPA_CORE_BWD_PLAN_H
#define SDPA_CORE_BWD_PLAN_H

#include <stdint.h>

#include "bwd_scratch.h"
#include "config_choose.h"
#include "device.h"
#include "kernel_abi.h"
#include "kernel_abi_bwd.h"
#include "kernel_config.h"
#include "problem.h"
#include "sdpa.h"
#include "spec_values.h"

/* The largest head size backward serves (its largest SPIR-V variant; the
 * device's local memory may lower it, which the configuration checks say). */
#define SDPA_BWD_MAX_HEAD_SIZE 512

/* Partial dQ (bwd_scratch.h): the portable backward's main kernel stores
 * dQ per key block into ceil(Sk / Bc) f32 slices per head when there are at
 * most SDPA_BWD_DQ_PARTIALS_MAX_SLICES of them (the scratch then holds at
 * most that many copies of dQ in f32, read once more by the postprocess)
 * and they take at most SDPA_BWD_DQ_PARTIALS_MAX_BYTES; longer sequences
 * and larger problems keep the atomic sums or the dQ pass. Deterministic
 * mode on every device (the dQ pass costs three products per block where
 * the slices cost one); atomic mode on the CPU device, where it measured
 * faster than the compare-and-swap loops (doc/cpu-performance.md), and not
 * on GPUs, where native float atomics may win and nothing was measured. */
#define SDPA_BWD_DQ_PARTIALS_MAX_SLICES 8
#define SDPA_BWD_DQ_PARTIALS_MAX_BYTES ((uint64_t)256 << 20)

/* Where a gradient buffer a kernel writes lives. */
typedef enum sdpa_bwd_target {
    SDPA_BWD_TARGET_NONE = 0, /* not used */
    SDPA_BWD_TARGET_OUTPUT,   /* the caller's diff_q / diff_k / diff_v */
    SDPA_BWD_TARGET_SCRATCH,  /* a scratch region (sdpa_bwd_scratch_t) */
} sdpa_bwd_target_t;

/* One sdpa_bwd_postprocess launch: f32 sums to a gradient. */
typedef struct sdpa_bwd_post {
    sdpa_bwd_buffer_t dst;     /* SDPA_BWD_BUFFER_DIFF_Q, _DIFF_K or _DIFF_V */
    sdpa_scratch_region_t src; /* in the scratch */
    /* Its arguments (sdpa_bwd_post_args.def) but the pointers DST and SRC,
     * which the backend sets per execution from dst and src. */
    sdpa_bwd_post_args_t args;
    uint32_t group_count[3];
} sdpa_bwd_post_t;

/* The backward's main kernels: the fast path's where it serves the problem
 * (sdpa_bwd_xe_serves and sdpa_xe_config_choose), else the portable ones. */
typedef enum sdpa_bwd_kind {
    SDPA_BWD_KIND_XE,      /* kernel_abi_xe.h, xe_bwd_plan.h */
    SDPA_BWD_KIND_PORTABLE /* kernel_abi.h */
} sdpa_bwd_kind_t;

typedef struct sdpa_bwd_plan {
    int d_max;
    uint32_t subgroup_size;
    /* The main and deterministic-dQ kernels and their variants: the portable
     * ones (SDPA_BWD_KERNEL from SDPA_BWD_MAIN_SOURCE, SDPA_BWD_DQ_KERNEL
     * from SDPA_BWD_DQ_SOURCE) or the fast path's, both from its one variant
     * (xe: xe_bwd_plan.h, "sdpa_xe_bwd-k16-d16", kernel_abi_xe.h), built
     * with main_build_flags; the preprocess and postprocess always come from
     * the portable pre/post module (SDPA_BWD_PREPOST_SOURCE,
     * SDPA_BWD_VARIANT_D_MAX). */
    sdpa_bwd_kind_t kind;
    /* The main variant adds f32 with the device's atomic add (its name has
     * SDPA_BWD_FADD_FIELD; sdpa_device_native_f32_add), else with
     * compare-and-swap loops. The portable deterministic dQ pass executes no
     * atomics and has one variant; the fast path's comes from main_variant. */
    int native_f32_add;
    char main_variant[64], dq_variant[64];
    const char *main_kernel, *dq_kernel;
    const char *main_build_flags;
    sdpa_bwd_config_t config;
    sdpa_config_source_t source;
    /* Every backward constant; the postprocess reads only QRY_DT. */
    sdpa_spec_values_t constants;
    const char *build_flags;

    sdpa_bwd_scratch_t scratch;
    /* Where sdpa_bwd adds dQ (ATOMIC mode) or stores its partial dQ slices
     * (scratch.dq_slices > 0: SCRATCH), NONE when the dQ pass writes diff_q
     * (DETERMINISTIC mode without slices); where it puts dK, dV. */
    sdpa_bwd_target_t dq_target, dkv_target;
    /* The dQ pass (sdpa_bwd_dq or the fast path's) runs: DETERMINISTIC
     * mode without partial dQ slices. */
    int dq_pass;

    /* The strides buffer (kernel_abi_bwd.h), copied to scratch.strides. */
    int64_t strides[SDPA_BWD_STRIDES_COUNT];
    /* Mask and dS strides arguments (mask: 0 on broadcast dims). */
    int64_t mask_strides[4], ds_strides[4];
    int32_t head_size, head_size_v, k_len, q_len; /* D (Q, K), Dv (V, O), Sk, Sq */

    uint32_t pre_local[3], pre_groups[3];
    uint32_t local_size[3]; /* sdpa_bwd and sdpa_bwd_dq */
    uint32_t main_groups[3], dq_groups[3];
    uint32_t slm_bytes, dq_slm_bytes;
    uint32_t post_local[3];
    uint32_t num_posts;
    sdpa_bwd_post_t posts[3];

    char config_string[352];
} sdpa_bwd_plan_t;

/* The configuration-table query of a backward problem: oneDNN's (thin when
 * Sq <= 16, never quantized, keyed by Sk). */
void sdpa_bwd_config_query_for(const sdpa_problem_desc_t *problem, const sdpa_shape_t *shape,
                               const sdpa_device_info_t *device, sdpa_config_query_t *out);

/* The partial dQ slices per head (bwd_scratch.h) of a backward problem on
 * the portable kernels of device with Bc = bc keys per work-group:
 * ceil(Sk / bc) if the problem is not varlen, its mode and device are the
 * ones above, and the slices fit the two bounds above; else 0 (no slices). */
int64_t sdpa_bwd_dq_slices_for(const sdpa_problem_desc_t *problem, const sdpa_shape_t *shape,
                               const sdpa_device_info_t *device, int64_t bc);

/* Plans the backward pass of problem (checked, prop_kind BACKWARD) on
 * device. Returns SDPA_SUCCESS, SDPA_ERROR_INVALID_CONFIG (a bad
 * BWD_SDPA_CONFIG), or SDPA_ERROR_UNSUPPORTED (head size above the largest
 * backward variant, no configuration fits the device, sizes overflow, or
 * the scratch exceeds device->max_alloc_bytes when that is not 0). */
sdpa_status_t sdpa_bwd_plan_make(const sdpa_problem_desc_t *problem, const sdpa_shape_t *shape,
                                 const sdpa_device_info_t *device, sdpa_bwd_plan_t *out);

#endif /* SDPA_CORE_BWD_PLAN_H */
