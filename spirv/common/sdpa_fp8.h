/*
 * sdpa_fp8.h - OCP FP8 codes (an FP8 KV cache) as f32. OpenCL C has no
 * 8-bit float type, so the bits are decoded with integer operations and
 * selects, without a table: one place for both formats.
 *
 *   E4M3FN: 1 sign, 4 exponent (bias 7), 3 mantissa bits; subnormals; no
 *           infinities; S.1111.111 is NaN; largest 448.
 *   E5M2:   1 sign, 5 exponent (bias 15), 2 mantissa bits; subnormals;
 *           infinities and NaNs as in IEEE 754; largest finite 57344.
 *
 * Every FP8 value is exact in f32 (and in f16 and bf16), so the decoding
 * rounds nothing. Subnormal codes are built as (float)mantissa * 2^-k, not
 * through f32 subnormals, which some devices flush to zero.
 */
#ifndef SDPA_SPIRV_FP8_H
#define SDPA_SPIRV_FP8_H

/* The FP8 code in the low byte of `bits` with exponent_bits = 4 (E4M3FN)
 * or 5 (E5M2) as f32. exponent_bits is a constant at every call: the
 * shifts and constants fold. */
static inline __attribute__((always_inline)) float sdpa_fp8_to_f32(uint bits, int exponent_bits)
{
    const int mantissa_bits = 7 - exponent_bits;
    const uint bias = (1u << (exponent_bits - 1)) - 1u;
    const uint magnitude = bits & 0x7fu;
    const uint exponent = magnitude >> mantissa_bits;
    const uint mantissa = magnitude & ((1u << mantissa_bits) - 1u);
    /* A normal code: its exponent and mantissa fields moved to f32's
     * places, and the exponent rebiased from `bias` to 127. */
    float value = as_float((magnitude << (23 - mantissa_bits)) + ((127u - bias) << 23));
    /* A subnormal code: mantissa * 2^(1 - bias - mantissa_bits), 2^-9
     * (E4M3) or 2^-16 (E5M2). */
    const float subnormal_unit = exponent_bits == 4 ? 0x1.0p-9f : 0x1.0p-16f;
    value = exponent == 0u ? (float)mantissa * subnormal_unit : value;
    if (exponent_bits == 5) /* all-ones exponent: infinity or NaN */
        value = exponent == 31u ? (mantissa ? NAN : INFINITY) : value;
    else /* E4M3FN: only S.1111.111, NaN */
        value = magnitude == 0x7fu ? NAN : value;
    return as_float(as_uint(value) | ((bits & 0x80u) << 24));
}

#endif /* SDPA_SPIRV_FP8_H */
