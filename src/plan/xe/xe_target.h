/*
 * xe_target.h - whether and how a device runs the fast-path (xe) kernels
 * (spirv/abi/kernel_abi_xe.h): the device class and the kernel set
 * (SDPA_ZE_KERNELS, device.h) decide, for the forward (xe_fwd_plan.h) and
 * the backward (xe_bwd_plan.h) alike.
 *
 * The fast path runs where a device has matrix engines: discrete Xe-HPG
 * (Arc A-series, Flex; sub-groups of 8), Xe-HPC, Xe2 and Xe3 (sub-groups of
 * 16; Xe3 has no rows in xe_config_table.c yet, so its problems find no
 * configuration and keep the portable kernels). Integrated Xe-HPG parts (Meteor Lake's Xe-LPG) have
 * none, and the class cannot tell them from Arrow Lake's, which has: they keep the portable
 * kernels. "xe" and "xe_hpg" run the fast path on a device without matrix engines through the
 * variants that emulate the products, with the configuration rows of Xe-HPC or Xe-HPG.
 */
#ifndef SDPA_CORE_XE_TARGET_H
#define SDPA_CORE_XE_TARGET_H

#include <stdint.h>

#include "device.h"
#include "problem.h"
#include "sdpa.h"

/* How the fast path runs on a device (and, for convert_kv, a problem). */
typedef struct sdpa_xe_target {
    sdpa_device_class_t rows_class; /* whose rows of the xe table apply */
    uint32_t subgroup_size;         /* 16 (Xe-HPC, Xe2, Xe3 rows) or 8 (Xe-HPG) */
    int emulate;                    /* no matrix engine: the -emu variants */
    int large_grf;                  /* build with the 256-register file */
    /* A property of the problem rather than the device: K or V is not in
     * Q's dtype, or not laid out for direct operand loads, so the -cvt
     * variants convert them into local memory first. */
    int convert_kv;
} sdpa_xe_target_t;

/* 1 and *t if device runs the fast path under its kernel set (t->convert_kv
 * 0), else 0 and *why (static text: the reason). large_grf is the
 * forward's choice (every native target; the emulated variants need none);
 * the backward sets its own. */
int sdpa_xe_target_of(const sdpa_device_info_t *device, sdpa_xe_target_t *t, const char **why);

/* The largest head size the fast path serves, both directions: Q^T's
 * operands (forward) and the K, V, Q and dO tiles (backward) in local
 * memory grow with it, and the xe tables have rows up to it. */
#define SDPA_XE_MAX_HEAD_SIZE 256

/* Why the fast path, in either direction, cannot serve problem p (checked,
 * with its shape) on device: static text naming the first of these
 * reasons: the device does not run it (sdpa_xe_target_of's), lacks its
 * sub-group size, Q is neither f16 nor bf16, Q is f16 and the device has
 * no fp16, the head size is above SDPA_XE_MAX_HEAD_SIZE, p uses a feature
 * it lacks (sdpa_xe_unimplemented_feature). NULL if none, with *t set
 * (sdpa_xe_target_of's). The forward and the backward add their own
 * rules (sdpa_fwd_xe_serves, sdpa_bwd_xe_serves). */
const char *sdpa_xe_refusal(const sdpa_problem_desc_t *p, const sdpa_shape_t *shape,
                            const sdpa_device_info_t *device, sdpa_xe_target_t *t);

/* Why the fast path cannot serve problem p for lack of an ABI 1.1 feature
 * its kernels do not implement (sliding window, softcap, ALiBi, varlen,
 * paged KV cache): static text naming the first such feature p uses, or
 * NULL if it uses none. The fast-path kernels take the portable kernels'
 * argument tables, so these features reach their parameter lists; this
 * refusal routes such problems to the portable kernels instead. */
const char *sdpa_xe_unimplemented_feature(const sdpa_problem_desc_t *p);

#endif /* SDPA_CORE_XE_TARGET_H */
