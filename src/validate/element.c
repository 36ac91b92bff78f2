/* element.c - reading any dtype as double and rounding double to the
 * output dtypes, the way the kernels read and write them. */
#include <math.h>
#include <string.h>

#include "element.h"

/* binary16: 1 sign, 5 exponent (bias 15), 10 mantissa bits. */
static double f16_to_double(uint16_t bits)
{
    int sign = bits >> 15;
    int exponent = (bits >> 10) & 0x1f;
    int mantissa = bits & 0x3ff;
    double magnitude;
    if (exponent == 0x1f)
        magnitude = mantissa ? NAN : INFINITY;
    else if (exponent == 0)
        magnitude = ldexp(mantissa, -24); /* subnormal */
    else
        magnitude = ldexp(mantissa + 1024, exponent - 25);
    return sign ? -magnitude : magnitude;
}

/* An OCP FP8 code, exactly: 1 sign, exponent_bits exponent bits (bias
 * 2^(exponent_bits - 1) - 1), the rest mantissa, with subnormals. E5M2
 * (ieee_specials) has infinities and NaNs as IEEE 754 does; E4M3FN has no
 * infinities and one NaN per sign, S.1111.111. */
static double fp8_to_double(uint8_t bits, int exponent_bits, int ieee_specials)
{
    const int mantissa_bits = 7 - exponent_bits;
    const int bias = (1 << (exponent_bits - 1)) - 1;
    const int all_ones = (1 << exponent_bits) - 1;
    const int exponent = (bits >> mantissa_bits) & all_ones;
    const int mantissa = bits & ((1 << mantissa_bits) - 1);
    double magnitude;
    if (ieee_specials && exponent == all_ones)
        magnitude = mantissa ? NAN : INFINITY;
    else if (!ieee_specials && (bits & 0x7f) == 0x7f)
        magnitude = NAN;
    else if (exponent == 0)
        magnitude = ldexp(mantissa, 1 - bias - mantissa_bits); /* subnormal */
    else
        magnitude = ldexp(mantissa + (1 << mantissa_bits), exponent - bias - mantissa_bits);
    return (bits & 0x80) ? -magnitude : magnitude;
}

/* bfloat16 is the high half of an f32. */
static double bf16_to_double(uint16_t bits)
{
    uint32_t word = (uint32_t)bits << 16;
    float value;
    memcpy(&value, &word, sizeof(value));
    return value;
}

/* Rounds |value| (finite, not NaN) to a binary format with mantissa_bits
 * stored mantissa bits and exponents emin..emax, to nearest even, in one
 * step from double, and returns the encoding without the sign bit. */
static uint16_t encode_magnitude(double magnitude, int mantissa_bits, int emin, int emax)
{
    const int bias = emax;
    const uint16_t exp_all_ones = (uint16_t)((2 * emax + 1) << mantissa_bits);
    if (magnitude < ldexp(1.0, emin)) {
        /* Subnormal: a multiple of 2^(emin - mantissa_bits). rint rounds to
         * nearest even; reaching 2^mantissa_bits gives the smallest normal,
         * whose encoding is exactly that integer. */
        return (uint16_t)rint(ldexp(magnitude, mantissa_bits - emin));
    }
    int exponent;
    frexp(magnitude, &exponent); /* magnitude = m * 2^exponent, m in [0.5, 1) */
    exponent -= 1;               /* magnitude in [2^exponent, 2^(exponent + 1)) */
    double scaled = rint(ldexp(magnitude, mantissa_bits - exponent)); /* in [2^mb, 2^(mb+1)] */
    if (scaled >= ldexp(1.0, mantissa_bits + 1)) {
        scaled = ldexp(1.0, mantissa_bits);
        exponent += 1;
    }
    if (exponent > emax)
        return exp_all_ones; /* overflow: infinity */
    return (uint16_t)(((exponent + bias) << mantissa_bits) |
                      ((uint32_t)scaled - (1u << mantissa_bits)));
}

static uint16_t double_to_half_format(double value, int mantissa_bits, int emin, int emax)
{
    const uint16_t sign = signbit(value) ? 0x8000u : 0;
    const uint16_t exp_all_ones = (uint16_t)((2 * emax + 1) << mantissa_bits);
    if (isnan(value))
        return sign | exp_all_ones | (uint16_t)(1u << (mantissa_bits - 1)); /* quiet NaN */
    if (isinf(value))
        return sign | exp_all_ones;
    return sign | encode_magnitude(fabs(value), mantissa_bits, emin, emax);
}

/* Element idx of a 4-bit tensor: low nibble of byte idx / 2 when idx is even. */
static unsigned nibble(const void *base, int64_t idx)
{
    uint8_t byte = ((const uint8_t *)base)[idx >> 1];
    return (idx & 1) ? (unsigned)(byte >> 4) : (unsigned)(byte & 0xf);
}

double sdpa_element_load(const void *base, int64_t idx, sdpa_dtype_t dtype)
{
    switch (dtype) {
    case SDPA_DTYPE_F32:
        return ((const float *)base)[idx];
    case SDPA_DTYPE_F16:
        return f16_to_double(((const uint16_t *)base)[idx]);
    case SDPA_DTYPE_BF16:
        return bf16_to_double(((const uint16_t *)base)[idx]);
    case SDPA_DTYPE_S8:
        return ((const int8_t *)base)[idx];
    case SDPA_DTYPE_U8:
        return ((const uint8_t *)base)[idx];
    case SDPA_DTYPE_S4: {
        unsigned n = nibble(base, idx);
        return n >= 8 ? (double)n - 16 : (double)n;
    }
    case SDPA_DTYPE_U4:
        return nibble(base, idx);
    case SDPA_DTYPE_S32:
        return ((const int32_t *)base)[idx];
    case SDPA_DTYPE_F8_E4M3:
        return fp8_to_double(((const uint8_t *)base)[idx], 4, 0);
    case SDPA_DTYPE_F8_E5M2:
        return fp8_to_double(((const uint8_t *)base)[idx], 5, 1);
    case SDPA_DTYPE_UNDEF:
        break;
    }
    return NAN;
}

void sdpa_element_store(void *base, int64_t idx, sdpa_dtype_t dtype, double value)
{
    switch (dtype) {
    case SDPA_DTYPE_F32:
        ((float *)base)[idx] = (float)value;
        break;
    case SDPA_DTYPE_F16:
        ((uint16_t *)base)[idx] = double_to_half_format(value, 10, -14, 15);
        break;
    case SDPA_DTYPE_BF16:
        ((uint16_t *)base)[idx] = double_to_half_format(value, 7, -126, 127);
        break;
    default:
        break; /* outputs are f32, f16 or bf16 (checked) */
    }
}

double sdpa_element_round(sdpa_dtype_t dtype, double value)
{
    uint32_t storage = 0;
    sdpa_element_store(&storage, 0, dtype, value);
    return sdpa_element_load(&storage, 0, dtype);
}

double sdpa_dtype_epsilon(sdpa_dtype_t dtype)
{
    switch (dtype) {
    case SDPA_DTYPE_F32:
        return 0x1.0p-23;
    case SDPA_DTYPE_F16:
        return 0x1.0p-10;
    case SDPA_DTYPE_BF16:
        return 0x1.0p-7;
    default:
        return 0;
    }
}
