/*
 * fwd_plan.h - everything about a forward launch that is fixed when the
 * primitive is created: SPIR-V variant, configuration, specialization
 * constants, geometry and the scalar kernel arguments that depend only on
 * the problem.
 *
 * The ze backend builds (or finds) the module from variant + constants +
 * build_flags, sets the arguments listed here once per execution (they are
 * stateful per kernel), adds the pointers and the scale/dropout values of
 * the execution, and launches group_count groups of local_size.
 */
#ifndef SDPA_CORE_FWD_PLAN_H
#define SDPA_CORE_FWD_PLAN_H

#include <stdint.h>

#include "kernel_config.h"
#include "config_choose.h"
#include "device.h"
#include "kernel_abi.h"
#include "merge_plan.h"
#include "plan_common.h"
#include "problem.h"
#include "sdpa.h"
#include "spec_values.h"

/* Stride arguments SDPA_FWD_ARG_K_S0 .. SDPA_FWD_ARG_MSK_S3. */
#define SDPA_FWD_STRIDE_ARGS (SDPA_FWD_ARG_MSK_S3 - SDPA_FWD_ARG_K_S0 + 1)

/* Build flag for buffers of 4 GiB or more (stateless addressing). */
#define SDPA_ZE_FLAG_LARGE_BUFFERS "-ze-opt-greater-than-4GB-buffer-required"
/* Build flag for the 256-register file (the fast path on Xe-HPC, Xe2). */
#define SDPA_ZE_FLAG_LARGE_GRF "-ze-opt-large-register-file"

/* The forward's kernels, in the order sdpa_fwd_plan_make offers them the
 * problem: each takes sdpa_fwd_args.def. */
typedef enum sdpa_fwd_kind {
    SDPA_FWD_KIND_XE,      /* the fast path (kernel_abi_xe.h, xe_fwd_plan.h) */
    SDPA_FWD_KIND_DECODE,  /* the thin-Q decode kernel (kernel_abi_decode.h, decode_plan.h) */
    SDPA_FWD_KIND_PORTABLE /* the portable kernel (kernel_abi.h), options below */
} sdpa_fwd_kind_t;

/* The portable kernel's options (fwd_plan.c, portable_config): on the CPU
 * device's narrow decode tiles, where it measured faster, it reads V
 * straight from global memory in O += V P instead of staging it
 * (V_FROM_GLOBAL), and likewise K in S = K^T Q, with keys along lanes
 * (K_FROM_GLOBAL). */
typedef struct sdpa_fwd_portable_options {
    int k_from_global;
    int v_from_global;
} sdpa_fwd_portable_options_t;

typedef struct sdpa_fwd_plan {
    sdpa_fwd_kind_t kind;
    /* SDPA_XE_FWD_KERNEL, SDPA_DECODE_KERNEL or SDPA_FWD_KERNEL. */
    const char *kernel_name;
    /* The SPIR-V variant: sdpa_spirv_find(variant, d_max, subgroup_size);
     * variant is SDPA_FWD_SOURCE ("sdpa_fwd", d_max the head-size bucket;
     * "sdpa_fwd-kvg" with K or V read from global memory, below)
     * or a fast-path name ("sdpa_xe_fwd-k32-d64", d_max 0). */
    char variant[64];
    int d_max;
    uint32_t subgroup_size;
    sdpa_fwd_config_t config;
    /* All 0 unless kind is SDPA_FWD_KIND_PORTABLE. */
    sdpa_fwd_portable_options_t portable;
    /* SDPA_FWD_KIND_XE only: sdpa_fwd_xe_kv_surf_per_block (else 0). */
    int xe_kv_surf_per_block;
    /* Every forward constant of spec_constants.def. Call
     * sdpa_spec_values_ze(&plan->constants) for ze_module_constants_t after
     * the plan has reached its final address. */
    sdpa_spec_values_t constants;
    /* zeModuleCreate build flags: "", SDPA_ZE_FLAG_LARGE_BUFFERS and/or
     * SDPA_ZE_FLAG_LARGE_GRF. Static storage. */
    const char *build_flags;

    /* zeKernelSetGroupSize and the ze_group_count_t of the launch. */
    uint32_t local_size[3];
    uint32_t group_count[3];
    /* The values of the arguments (sdpa_fwd_args.def) that depend only on
     * the problem: SLM (the local-memory size), D, D_VAL, SK, SQ, and K_S0 + i for
     * i < SDPA_FWD_STRIDE_ARGS: the strides of K, Q, V, O and the mask in
     * elements; the mask's are 0 on broadcast dims and all 0 without a mask
     * buffer. */
    uint32_t slm_bytes;
    int32_t head_size, head_size_v, k_len, q_len;
    int64_t strides[SDPA_FWD_STRIDE_ARGS];

    /* SDPA_QUERY_CONFIG_STRING, e.g.
     * "fwd d128 sg16 cfg=16,16,32,16,4,2,4,2 (table: cpu h128 fma f32)", or
     * for the fast path "fwd xe sdpa_xe_fwd-k32-d64 sg16 cfg=... (xe table:
     * xe_hpc h128)". */
    char config_string[192];
    sdpa_config_source_t source;

    /* The decode kind only: with num_splits > 1 it writes num_splits
     * partial states to scratch (split_scratch_bytes, the log-sum-exps from
     * split_lse_offset) and a second launch, the merge kernel with plan
     * merge, combines them into O (and the workspace). */
    uint32_t num_splits;
    /* The decode kind only: rows one work-group serves (a block of the
     * K/V head's Hq / Hkv * Sq) and the blocks per K/V head
     * (sdpa_decode_row_block). */
    uint32_t decode_rows, decode_row_blocks;
    size_t split_scratch_bytes, split_lse_offset;
    sdpa_merge_plan_t merge;
} sdpa_fwd_plan_t;

/* The table query for a forward problem on device: head size, Sk, and the
 * props THIN_Q (at most 16 queries, where Sq == 1 counts the KV_GROUP_SIZE
 * query heads one work-group serves), QUANTIZED, INTEGRATED, FMA, F32 (Q is
 * f32) and F16_ACC. */
void sdpa_fwd_config_query_for(const sdpa_problem_desc_t *problem, const sdpa_shape_t *shape,
                               const sdpa_device_info_t *device, sdpa_config_query_t *out);

/* Plans the forward pass of problem (the output of sdpa_problem_check, with
 * its shape; prop_kind FORWARD_INFERENCE or FORWARD_TRAINING) on device.
 * Chooses the kernel kind (the fast path when sdpa_fwd_xe_serves the problem
 * and sdpa_xe_config_choose finds it a configuration, else the decode kernel
 * when sdpa_decode_chosen, else the portable one), the variant (portable:
 * the smallest head-size bucket >= D and sdpa_device_subgroup_size), the
 * configuration (portable: sdpa_fwd_config_choose),
 * derives the constants and launch values. Returns SDPA_SUCCESS,
 * SDPA_ERROR_INVALID_CONFIG (a bad override), SDPA_ERROR_UNSUPPORTED (the
 * device cannot serve the problem: no usable sub-group size, f16
 * accumulation without fp16, too many work-groups) or
 * SDPA_ERROR_INVALID_ARGUMENT (a backward problem). *out is fully written on
 * success. */
sdpa_status_t sdpa_fwd_plan_make(const sdpa_problem_desc_t *problem, const sdpa_shape_t *shape,
                                 const sdpa_device_info_t *device, sdpa_fwd_plan_t *out);

#endif /* SDPA_CORE_FWD_PLAN_H */
