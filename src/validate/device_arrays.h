/*
 * device_arrays.h - the contract of the int32 arrays an execution passes in
 * device memory (varlen cu_seqlens_q/k, the paged block_table and
 * cache_seqlens), checked on the host: the ref backend refuses an
 * execution that breaks it, and the ze backend's checking mode
 * (SDPA_ZE_CHECK_DEVICE_ARRAYS) reads the arrays back and does the same.
 * The kernels cannot refuse: they clamp (spirv/common/sdpa_device_arrays.h).
 */
#ifndef SDPA_CORE_DEVICE_ARRAYS_H
#define SDPA_CORE_DEVICE_ARRAYS_H

#include <stddef.h>
#include <stdint.h>

#include "problem.h"

/* The host copies of a problem's arrays, NULL where it has none. */
typedef struct sdpa_device_arrays {
    const int32_t *cu_seqlens_q, *cu_seqlens_k; /* varlen: [B + 1] */
    const int32_t *block_table;                 /* paged: rows block_table_stride apart */
    const int32_t *cache_seqlens;               /* paged: [B] */
} sdpa_device_arrays_t;

/* Elements of each array the problem reads: cu_seqlens (each), the block
 * table (B - 1 rows' stride plus one row) and cache_seqlens; 0 for the
 * arrays it has none of. */
void sdpa_device_array_counts(const sdpa_problem_desc_t *p, const sdpa_shape_t *shape,
                              size_t *cu_seqlens, size_t *block_table, size_t *cache_seqlens);

/* Checks the arrays of checked problem p (shape its shape) against sdpa.h:
 * cu_seqlens from 0, non-decreasing, each length at most its max_seqlen,
 * the last at most the packed rows; each cache length in 0 ..
 * max_blocks_per_seq * block_size and every block it uses a block of the
 * cache. Returns SDPA_SUCCESS, or SDPA_ERROR_INVALID_ARGUMENT with a
 * message naming the first bad entry: the array, its index, its value and
 * the range allowed. */
sdpa_status_t sdpa_device_arrays_check(const sdpa_problem_desc_t *p, const sdpa_shape_t *shape,
                                       const sdpa_device_arrays_t *arrays);

#endif /* SDPA_CORE_DEVICE_ARRAYS_H */
