/*
 * element.h - one element of a tensor on the host, in any sdpa_dtype_t, as
 * double: exact decoding of f16/bf16/integers and round-to-nearest-even
 * encoding of outputs, the way the kernels read and write them. The ref
 * backend, the tests, the example and the benchmark all use these.
 */
#ifndef SDPA_CORE_ELEMENT_H
#define SDPA_CORE_ELEMENT_H

#include <stdint.h>

#include "sdpa.h"

/* Element idx of base (counted in elements; 4-bit types two per byte, low
 * nibble first) as double; integers give their value. NaN for UNDEF. */
double sdpa_element_load(const void *base, int64_t idx, sdpa_dtype_t dtype);

/* Stores value at element idx of base, rounded once to nearest even into
 * dtype (f32, f16 or bf16; other dtypes are ignored). Overflow gives
 * infinity, NaN stays NaN. */
void sdpa_element_store(void *base, int64_t idx, sdpa_dtype_t dtype, double value);

/* value rounded to the nearest number of dtype (f32, f16 or bf16), as
 * storing and loading it again would. */
double sdpa_element_round(sdpa_dtype_t dtype, double value);

/* The distance from 1 to the next larger number of dtype: 2^-23 (f32),
 * 2^-10 (f16), 2^-7 (bf16); 0 for other dtypes. */
double sdpa_dtype_epsilon(sdpa_dtype_t dtype);

#endif /* SDPA_CORE_ELEMENT_H */
