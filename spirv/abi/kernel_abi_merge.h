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

/* The kernel's parameter list and, on the host, enum sdpa_merge_args_index
 * (SDPA_MERGE_ARG_<NAME>), sdpa_merge_args_t and sdpa_merge_args_table,
 * from sdpa_merge_args.def (kernel_args.h). */
#include "kernel_args.h"
#ifndef __OPENCL_C_VERSION__
#define SDPA_ARGS_FILE "sdpa_merge_args.def"
#define SDPA_ARGS_PREFIX SDPA_MERGE_ARG_
#define SDPA_ARGS_NAME sdpa_merge_kernel_args
#include "kernel_args_host.h"
#endif

#endif /* SDPA_SPIRV_KERNEL_ABI_MERGE_H */
