/*
 * compare.h - comparing a tensor with the oracle's values within a dtype's tolerance.
 */
#ifndef SDPA_TESTS_ABI_COMPARE_H
#define SDPA_TESTS_ABI_COMPARE_H

#include "sdpa.h"

/* Relative tolerance for one rounding to dtype (one ulp) and the absolute
 * floor below which differences do not matter. */
double dtype_rel_tolerance(sdpa_dtype_t dtype);
double dtype_abs_tolerance(sdpa_dtype_t dtype);

/* 1 if got matches expected within rel * |expected| + abs (NaN matches NaN,
 * infinities must be equal). */
int close_enough(double got, double expected, double rel, double abs);

/* Compares tensor t at data with dense expected [d0][d1][d2][d3]; on the
 * first mismatch prints what, the index and both values and returns 0.
 * Returns 1 if everything matches; *max_error gets the largest error in
 * units of the tolerance (may be NULL). */
int compare_tensor(const char *what, const sdpa_tensor_desc_t *t, const void *data,
                   const double *expected, double rel, double abs, double *max_error);

/* Like compare_tensor, with the tolerance of one correct rounding to the
 * tensor's own dtype: half an ulp of the expected value in that dtype (its
 * subnormal spacing included) plus 1e-12 for the summation-order noise of
 * two double computations. Output dtypes only (f32, f16, bf16). */
int compare_rounded(const char *what, const sdpa_tensor_desc_t *t, const void *data,
                    const double *expected);

/* Half an ulp of value in dtype (f32, f16 or bf16). */
double half_ulp(double value, sdpa_dtype_t dtype);

#endif /* SDPA_TESTS_ABI_COMPARE_H */
