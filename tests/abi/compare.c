/* compare.c - comparing a tensor with the oracle's values within a dtype's tolerance. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "elements.h"

double dtype_rel_tolerance(sdpa_dtype_t dtype)
{
    switch (dtype) {
    case SDPA_DTYPE_F16:
        return ldexp(1.0, -10);
    case SDPA_DTYPE_BF16:
        return ldexp(1.0, -7);
    default:
        return ldexp(1.0, -23);
    }
}

double dtype_abs_tolerance(sdpa_dtype_t dtype)
{
    /* f16 subnormals are 2^-24 apart; elsewhere only double rounding
     * differences of ~1e-16 remain. */
    return dtype == SDPA_DTYPE_F16 ? ldexp(1.0, -24) : 1e-12;
}

int close_enough(double got, double expected, double rel, double abs)
{
    if (isnan(expected))
        return isnan(got);
    if (isinf(expected))
        return got == expected;
    if (isnan(got) || isinf(got))
        return 0;
    return fabs(got - expected) <= rel * fabs(expected) + abs;
}

double half_ulp(double value, sdpa_dtype_t dtype)
{
    int mantissa_bits = 23, emin = -126;
    if (dtype == SDPA_DTYPE_F16) {
        mantissa_bits = 10;
        emin = -14;
    } else if (dtype == SDPA_DTYPE_BF16) {
        mantissa_bits = 7;
    }
    int exponent = emin;
    if (value != 0.0) {
        frexp(value, &exponent); /* |value| in [2^(exponent-1), 2^exponent) */
        exponent -= 1;
        if (exponent < emin)
            exponent = emin;
    }
    return ldexp(1.0, exponent - mantissa_bits - 1);
}

/* Every element of t's data against expected (dense, in index order):
 * within rel * |want| + abs, or when rounded within compare_rounded's
 * tolerance (non-finite values exactly). Prints the first mismatch; stores the worst
 * error of the finite ones, in units of their tolerance, in *max_error. */
static int compare_each(const char *what, const sdpa_tensor_desc_t *t, const void *data,
                        const double *expected, double rel, double abs, int rounded,
                        double *max_error)
{
    double worst = 0;
    int ok = 1;
    for (int64_t a = 0; a < t->dims[0]; a++)
        for (int64_t b = 0; b < t->dims[1]; b++)
            for (int64_t i = 0; i < t->dims[2]; i++)
                for (int64_t j = 0; j < t->dims[3]; j++) {
                    int64_t e = ((a * t->dims[1] + b) * t->dims[2] + i) * t->dims[3] + j;
                    double got = tensor_get(t, data, a, b, i, j);
                    double want = expected[e];
                    double tolerance = abs;
                    if (rounded)
                        tolerance = isfinite(want) ? half_ulp(want, t->dtype) + 1e-12 : 0;
                    if (!close_enough(got, want, rel, tolerance)) {
                        if (ok && rounded)
                            fprintf(stderr,
                                    "%s[%lld,%lld,%lld,%lld]: got %.9g, expected %.12g (+- %g)\n",
                                    what, (long long)a, (long long)b, (long long)i, (long long)j,
                                    got, want, tolerance);
                        else if (ok)
                            fprintf(stderr,
                                    "%s[%lld,%lld,%lld,%lld]: got %.9g, expected %.9g (rel %g, "
                                    "abs %g)\n",
                                    what, (long long)a, (long long)b, (long long)i, (long long)j,
                                    got, want, rel, abs);
                        ok = 0;
                    } else if (isfinite(want)) {
                        double err = fabs(got - want) / (rel * fabs(want) + tolerance);
                        if (err > worst)
                            worst = err;
                    }
                }
    if (max_error)
        *max_error = worst;
    return ok;
}

int compare_rounded(const char *what, const sdpa_tensor_desc_t *t, const void *data,
                    const double *expected)
{
    return compare_each(what, t, data, expected, 0.0, 0.0, 1, NULL);
}

int compare_tensor(const char *what, const sdpa_tensor_desc_t *t, const void *data,
                   const double *expected, double rel, double abs, double *max_error)
{
    return compare_each(what, t, data, expected, rel, abs, 0, max_error);
}
