/*
 * elements.h - host tensors: elements of every dtype as doubles, exact values, strided access.
 */
#ifndef SDPA_TESTS_ABI_ELEMENTS_H
#define SDPA_TESTS_ABI_ELEMENTS_H

#include <stddef.h>
#include <stdint.h>

#include "sdpa.h"
#include "test_rng.h"

/* Bits per element of dtype (this file's own table, not the library's). */
int dtype_bits(sdpa_dtype_t dtype);

/* Bytes a tensor spans with its strides (4-bit types: two per byte). */
size_t tensor_bytes(const sdpa_tensor_desc_t *t);

/* A dense tensor desc: strides from dims, innermost 1. */
sdpa_tensor_desc_t dense_tensor(sdpa_dtype_t dtype, int64_t d0, int64_t d1, int64_t d2, int64_t d3);

/* Element idx of data as double (this file's own decoding). */
double elem_get(const void *data, int64_t idx, sdpa_dtype_t dtype);

/* Stores value, which must be exactly representable in dtype (aborts
 * otherwise: tests only feed exact values). */
void elem_set(void *data, int64_t idx, sdpa_dtype_t dtype, double value);

/* Element (i0, i1, i2, i3) of tensor t at data. */
double tensor_get(const sdpa_tensor_desc_t *t, const void *data, int64_t i0, int64_t i1, int64_t i2,
                  int64_t i3);
void tensor_set(const sdpa_tensor_desc_t *t, void *data, int64_t i0, int64_t i1, int64_t i2,
                int64_t i3, double value);

/* k / 128 with k in -255..255: exact in f32, f16 and bf16. */
double rng_exact(test_rng_t *rng);

/* The value of FP8 code `code` of dtype (F8_E4M3 or F8_E5M2), from the
 * format's definition (an independent decoder: not the library's). */
double fp8_value(uint8_t code, sdpa_dtype_t dtype);

/* A random finite FP8 value of dtype with |value| <= 2, drawn by code
 * (subnormals and zeros of both signs included). */
double rng_fp8(test_rng_t *rng, sdpa_dtype_t dtype);

#endif /* SDPA_TESTS_ABI_ELEMENTS_H */
