/*
 * kernel_abi_merge.h - what the host and the merge kernel (sdpa_merge.cl)
 * agree on: kernel name, variant, arguments (sdpa_merge_args.def) and
 * work-group geometry. The merge itself (weights, -inf and NaN rules, in
 * place) is specified at sdpa_merge_desc_t in include/sdpa.h.
 *
 * Variant: sdpa_merge.0.0, one module per set of constants: no array is
 * sized by the head size and the kernel uses no sub-group operation, so it
 * needs neither a head-size bucket nor a sub-group size.
 *
 * Geometry: one work-group per row (b, h, i) of the output:
 *   group count = { S, H, B }
 *   local size  = { SDPA_MERGE_LOCAL_SIZE(D), 1, 1 }
 * work-item t handles head-dim elements t, t + local size, ... < D, so that
 * the reads and the write of an O element are the same work-item's (which
 * makes dst == a state's O safe). Every work-item reads the row's LSEs
 * before a work-group barrier, and only then does work-item 0 write the
 * merged LSE (dst_lse == a state's LSE is safe).
 *
 * Specialization constants read: MERGE_NUM_STATES, MERGE_STATE_DT, DST_DT,
 * MERGE_WRITE_LSE, SOFTMAX_INF_AS_ZERO.
 */
#ifndef SDPA_SPIRV_KERNEL_ABI_MERGE_H
#define SDPA_SPIRV_KERNEL_ABI_MERGE_H

#define SDPA_MERGE_SOURCE "sdpa_merge"
#define SDPA_MERGE_KERNEL "sdpa_merge"

/* Work-items per row: the head size rounded up to a power of two, at least
 * 8 and at most 64 (more lanes than elements idle; beyond 64 a work-item
 * loops over the row). */
#define SDPA_MERGE_LOCAL_SIZE(d) ((d) <= 8 ? 8 : (d) <= 16 ? 16 : (d) <= 32 ? 32 : 64)

/* The host's enum of argument indices, SDPA_MERGE_ARG_<NAME>, and the
 * kernel's parameter list, both from sdpa_merge_args.def. */
#ifdef __OPENCL_C_VERSION__
/* A kernel's parameter list: `kernel void f(\n#include "..._args.def"\n)`. */
#define SDPA_MERGE_ARG(name, type, kind, meaning) type name,
#define SDPA_MERGE_ARG_LAST(name, type, kind, meaning) type name
#else
enum sdpa_merge_arg {
#define SDPA_MERGE_ARG(name, type, kind, meaning) SDPA_MERGE_ARG_##name,
#define SDPA_MERGE_ARG_LAST(name, type, kind, meaning) SDPA_MERGE_ARG_##name, SDPA_MERGE_ARG_COUNT
#include "sdpa_merge_args.def"
#undef SDPA_MERGE_ARG
#undef SDPA_MERGE_ARG_LAST
};
#endif

#endif /* SDPA_SPIRV_KERNEL_ABI_MERGE_H */
