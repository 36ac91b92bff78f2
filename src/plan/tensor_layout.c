/* tensor_layout.c - alignment, density and extent of strided tensors. */
#include "tensor_layout.h"
#include "problem.h"
#include "size_math.h"

/* The axis whose elements are adjacent in memory (a row), or -1. */
static int contiguous_axis(const sdpa_tensor_desc_t *t)
{
    if (t->dims[3] > 1 && t->strides[3] == 1)
        return 3;
    if (t->dims[2] > 1 && t->strides[2] == 1)
        return 2;
    return -1;
}

int sdpa_tensor_row_alignment(const sdpa_tensor_desc_t *t)
{
    int bits = sdpa_dtype_bits(t->dtype);
    int inner = contiguous_axis(t);
    int alignment = SDPA_MAX_ROW_ALIGNMENT;
    for (int axis = 0; axis < 4; axis++) {
        if (axis == inner || t->dims[axis] <= 1)
            continue;
        int64_t stride_bits;
        if (__builtin_mul_overflow(t->strides[axis], (int64_t)bits, &stride_bits) ||
            stride_bits % 8 != 0)
            return 1;
        int64_t bytes = stride_bits / 8;
        if (bytes == 0)
            continue; /* a broadcast axis starts every row at the same place */
        while (bytes % alignment != 0)
            alignment /= 2;
    }
    return alignment;
}

int64_t sdpa_tensor_elements(const sdpa_tensor_desc_t *t)
{
    return sdpa_size_to_int64(sdpa_size_product(t->dims, 4));
}

int sdpa_tensor_is_dense(const sdpa_tensor_desc_t *t)
{
    /* Axes of size > 1 sorted by stride must each step over exactly the
     * elements of the axes inside it. */
    int order[4], n = 0;
    for (int axis = 0; axis < 4; axis++)
        if (t->dims[axis] > 1)
            order[n++] = axis;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && t->strides[order[j]] < t->strides[order[j - 1]]; j--) {
            int swap = order[j];
            order[j] = order[j - 1];
            order[j - 1] = swap;
        }
    uint64_t expected = 1; /* saturates only past the last axis checked */
    for (int i = 0; i < n; i++) {
        if (sdpa_size_of(t->strides[order[i]]) != expected)
            return 0;
        expected = sdpa_size_mul(expected, sdpa_size_of(t->dims[order[i]]));
    }
    return 1;
}

uint64_t sdpa_tensor_span_bytes(const sdpa_tensor_desc_t *t)
{
    int bits = sdpa_dtype_bits(t->dtype);
    if (bits == 0)
        return 0;
    return sdpa_size_bytes(sdpa_size_span_elements(t->dims, t->strides), bits);
}
