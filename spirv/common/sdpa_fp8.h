/*
 * sdpa_fp8.h - OCP FP8 codes (an FP8 KV cache) as f32. OpenCL C has no
 * 8-bit float type, so the bits are moved into an f16 with integer
 * operations, without a table, and converted (one instruction: vcvtph2ps
 * on the CPU device, a conversion on GPUs): one place for both formats.
 *
 *   E4M3FN: 1 sign, 4 exponent (bias 7), 3 mantissa bits; subnormals; no
 *           infinities; S.1111.111 is NaN; largest 448.
 *   E5M2:   1 sign, 5 exponent (bias 15), 2 mantissa bits; subnormals;
 *           infinities and NaNs as in IEEE 754; largest finite 57344.
 *
 * Every FP8 value is exact in f16 (and in f32 and bf16), so nothing
 * rounds. The f16 subnormals this makes (FP8 subnormals, and E4M3's codes
 * before the rescaling) convert exactly: conversions do not flush them.
 */
#ifndef SDPA_SPIRV_FP8_H
#define SDPA_SPIRV_FP8_H

/* The FP8 code in the low byte of `bits` with exponent_bits = 4 (E4M3FN)
 * or 5 (E5M2) as f32. exponent_bits is a constant at every call: the
 * other format's code folds away. */
static inline __attribute__((always_inline)) float sdpa_fp8_to_f32(uint bits, int exponent_bits)
{
    if (exponent_bits == 5) /* E5M2 is the high byte of an f16, specials included */
        return (float)as_half((ushort)(bits << 8));
    /* E4M3FN: sign to f16's sign, exponent and mantissa into the low bits
     * of f16's: an f16 of 2^(e - 15) (1 + m / 8), or m 2^-17 for e = 0,
     * which 2^8 (exact) turns into E4M3's 2^(e - 7) (1 + m / 8) and m 2^-9. */
    const uint magnitude = bits & 0x7fu;
    const float value =
            (float)as_half((ushort)(((bits & 0x80u) << 8) | (magnitude << 7))) * 0x1.0p8f;
    return magnitude == 0x7fu ? NAN : value;
}

#endif /* SDPA_SPIRV_FP8_H */
