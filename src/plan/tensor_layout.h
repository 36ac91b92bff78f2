/*
 * tensor_layout.h - facts about a strided tensor's memory layout that decide
 * how kernels may access it (alignment, density, extent).
 *
 * All take a tensor that passed sdpa_problem_check (non-negative strides,
 * 4-bit types with even outer strides).
 */
#ifndef SDPA_CORE_TENSOR_LAYOUT_H
#define SDPA_CORE_TENSOR_LAYOUT_H

#include <stdint.h>

#include "sdpa.h"

/* Largest alignment the kernels are told about (oneDNN's alignmentForLD
 * caps at 128 bytes too). */
#define SDPA_MAX_ROW_ALIGNMENT 128

/* The byte alignment every row of t starts at, relative to t's base: the
 * largest power of two up to SDPA_MAX_ROW_ALIGNMENT that divides the byte
 * stride of every axis but the contiguous one. A row is the run of elements
 * along the contiguous axis: head_dim if strides[3] == 1, the sequence if
 * strides[2] == 1 (transposed K), none otherwise. Axes of size 1 do not
 * count. For the usual [B, H, S, D] layout this is oneDNN's
 * alignmentForLD(ld * element size) with ld = strides[2]; unlike oneDNN it
 * also covers the batch and head strides, so a kernel may rely on it for the
 * start of every (batch, head) matrix, not only within one. The base pointer
 * is only element-aligned (sdpa.h): a kernel adds its own alignment at run
 * time. */
int sdpa_tensor_row_alignment(const sdpa_tensor_desc_t *t);

/* Elements of t (the product of its dims), saturated at INT64_MAX. */
int64_t sdpa_tensor_elements(const sdpa_tensor_desc_t *t);

/* 1 if the elements of t fill offsets 0..elements-1 exactly once: some
 * permutation of the axes is the dense row-major layout. Only then may a
 * buffer fill of elements * size bytes stand for "every element" (a strided
 * view would have the gaps, which belong to someone else, overwritten). */
int sdpa_tensor_is_dense(const sdpa_tensor_desc_t *t);

/* Bytes from t's base to the end of its last element (0 for an UNDEF
 * tensor), saturated at UINT64_MAX. */
uint64_t sdpa_tensor_span_bytes(const sdpa_tensor_desc_t *t);

#endif /* SDPA_CORE_TENSOR_LAYOUT_H */
