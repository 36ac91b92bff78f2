/* elements.c - host tensors: elements of every dtype as doubles, exact values, strided access. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elements.h"
#include "problem.h"

int dtype_bits(sdpa_dtype_t dtype)
{
    switch (dtype) {
    case SDPA_DTYPE_F32:
    case SDPA_DTYPE_S32:
        return 32;
    case SDPA_DTYPE_F16:
    case SDPA_DTYPE_BF16:
        return 16;
    case SDPA_DTYPE_S8:
    case SDPA_DTYPE_U8:
        return 8;
    case SDPA_DTYPE_S4:
    case SDPA_DTYPE_U4:
        return 4;
    default:
        return 8;
    }
}

size_t tensor_bytes(const sdpa_tensor_desc_t *t)
{
    int64_t last = 0;
    for (int n = 0; n < 4; n++)
        last += (t->dims[n] - 1) * t->strides[n];
    size_t elements = (size_t)last + 1;
    return (elements * (size_t)dtype_bits(t->dtype) + 7) / 8;
}

sdpa_tensor_desc_t dense_tensor(sdpa_dtype_t dtype, int64_t d0, int64_t d1, int64_t d2, int64_t d3)
{
    return sdpa_tensor_dense(dtype, d0, d1, d2, d3);
}

static float float_from_bits(uint32_t bits)
{
    float f;
    memcpy(&f, &bits, sizeof(f));
    return f;
}

static uint32_t bits_from_float(float f)
{
    uint32_t bits;
    memcpy(&bits, &f, sizeof(bits));
    return bits;
}

static double half_get(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
    if (exponent == 0) {
        double magnitude = mantissa / 16777216.0; /* 2^-24 units */
        return sign ? -magnitude : magnitude;
    }
    if (exponent == 31)
        return float_from_bits(sign | 0x7f800000u | (mantissa << 13));
    return float_from_bits(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

static uint16_t half_set_exact(double value)
{
    float f = (float)value;
    if ((double)f != value && !isnan(value)) {
        fprintf(stderr, "elem_set: %.17g is not exact in f16\n", value);
        abort();
    }
    uint32_t bits = bits_from_float(f);
    uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
    if (isinf(f))
        return sign | 0x7c00u;
    if (f == 0.0f)
        return sign;
    int exponent = (int)((bits >> 23) & 0xff) - 127;
    uint32_t mantissa = bits & 0x7fffffu;
    if (exponent < -14 || exponent > 15 || (mantissa & 0x1fffu) != 0) {
        fprintf(stderr, "elem_set: %.17g is not a normal f16\n", value);
        abort();
    }
    return sign | (uint16_t)((exponent + 15) << 10) | (uint16_t)(mantissa >> 13);
}

double fp8_value(uint8_t code, sdpa_dtype_t dtype)
{
    /* From the OCP FP8 tables: E4M3FN has bias 7, 3 mantissa bits, no
     * infinities and NaN at S.1111.111; E5M2 bias 15, 2 mantissa bits and
     * IEEE infinities and NaNs. */
    const int e5m2 = dtype == SDPA_DTYPE_F8_E5M2;
    const int mbits = e5m2 ? 2 : 3, bias = e5m2 ? 15 : 7;
    const int exponent = (code & 0x7f) >> mbits, mantissa = code & ((1 << mbits) - 1);
    const double sign = (code & 0x80) ? -1.0 : 1.0;
    if (e5m2 && exponent == 31)
        return mantissa ? NAN : sign * INFINITY;
    if (!e5m2 && (code & 0x7f) == 0x7f)
        return NAN;
    const double fraction = (double)mantissa / (double)(1 << mbits);
    if (exponent == 0)
        return sign * fraction * pow(2.0, 1 - bias);
    return sign * (1.0 + fraction) * pow(2.0, exponent - bias);
}

/* The code of an FP8 value (exact, not NaN); aborts if there is none. */
static uint8_t fp8_code(double value, sdpa_dtype_t dtype)
{
    for (int code = 0; code < 256; code++)
        if (fp8_value((uint8_t)code, dtype) == value && (signbit(value) != 0) == (code >> 7))
            return (uint8_t)code;
    fprintf(stderr, "elem_set: %.17g is not exact in %s\n", value,
            dtype == SDPA_DTYPE_F8_E5M2 ? "f8_e5m2" : "f8_e4m3");
    abort();
}

double elem_get(const void *data, int64_t idx, sdpa_dtype_t dtype)
{
    const uint8_t *bytes = data;
    switch (dtype) {
    case SDPA_DTYPE_F32:
        return ((const float *)data)[idx];
    case SDPA_DTYPE_F16:
        return half_get(((const uint16_t *)data)[idx]);
    case SDPA_DTYPE_BF16:
        return float_from_bits((uint32_t)((const uint16_t *)data)[idx] << 16);
    case SDPA_DTYPE_S8:
        return ((const int8_t *)data)[idx];
    case SDPA_DTYPE_U8:
        return bytes[idx];
    case SDPA_DTYPE_S32:
        return ((const int32_t *)data)[idx];
    case SDPA_DTYPE_S4:
    case SDPA_DTYPE_U4: {
        int nib = idx % 2 == 0 ? bytes[idx / 2] & 0x0f : bytes[idx / 2] >> 4;
        if (dtype == SDPA_DTYPE_S4 && nib > 7)
            nib -= 16;
        return nib;
    }
    case SDPA_DTYPE_F8_E4M3:
    case SDPA_DTYPE_F8_E5M2:
        return fp8_value(bytes[idx], dtype);
    default:
        abort();
    }
}

static void check_integer(double value, double lo, double hi)
{
    if (value != floor(value) || value < lo || value > hi) {
        fprintf(stderr, "elem_set: %.17g is not an integer in %g..%g\n", value, lo, hi);
        abort();
    }
}

void elem_set(void *data, int64_t idx, sdpa_dtype_t dtype, double value)
{
    uint8_t *bytes = data;
    switch (dtype) {
    case SDPA_DTYPE_F32:
        if ((double)(float)value != value && !isnan(value))
            abort();
        ((float *)data)[idx] = (float)value;
        return;
    case SDPA_DTYPE_F16:
        ((uint16_t *)data)[idx] = half_set_exact(value);
        return;
    case SDPA_DTYPE_BF16: {
        uint32_t bits = bits_from_float((float)value);
        if ((bits & 0xffffu) != 0 || (double)(float)value != value)
            abort();
        ((uint16_t *)data)[idx] = (uint16_t)(bits >> 16);
        return;
    }
    case SDPA_DTYPE_S8:
        check_integer(value, -128, 127);
        ((int8_t *)data)[idx] = (int8_t)value;
        return;
    case SDPA_DTYPE_U8:
        check_integer(value, 0, 255);
        bytes[idx] = (uint8_t)value;
        return;
    case SDPA_DTYPE_S32:
        check_integer(value, -2147483648.0, 2147483647.0);
        ((int32_t *)data)[idx] = (int32_t)value;
        return;
    case SDPA_DTYPE_S4:
    case SDPA_DTYPE_U4: {
        if (dtype == SDPA_DTYPE_S4)
            check_integer(value, -8, 7);
        else
            check_integer(value, 0, 15);
        unsigned nib = (unsigned)((int)value & 0xf);
        uint8_t *byte = &bytes[idx / 2];
        if (idx % 2 == 0)
            *byte = (uint8_t)((*byte & 0xf0u) | nib);
        else
            *byte = (uint8_t)((*byte & 0x0fu) | (nib << 4));
        return;
    }
    case SDPA_DTYPE_F8_E4M3:
    case SDPA_DTYPE_F8_E5M2:
        bytes[idx] = fp8_code(value, dtype);
        return;
    default:
        abort();
    }
}

static int64_t offset4(const sdpa_tensor_desc_t *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3)
{
    return i0 * t->strides[0] + i1 * t->strides[1] + i2 * t->strides[2] + i3 * t->strides[3];
}

double tensor_get(const sdpa_tensor_desc_t *t, const void *data, int64_t i0, int64_t i1, int64_t i2,
                  int64_t i3)
{
    return elem_get(data, offset4(t, i0, i1, i2, i3), t->dtype);
}

void tensor_set(const sdpa_tensor_desc_t *t, void *data, int64_t i0, int64_t i1, int64_t i2,
                int64_t i3, double value)
{
    elem_set(data, offset4(t, i0, i1, i2, i3), t->dtype, value);
}

double rng_exact(test_rng_t *rng)
{
    return (double)rng_int(rng, -255, 255) / 128.0;
}

double rng_fp8(test_rng_t *rng, sdpa_dtype_t dtype)
{
    for (;;) {
        const double value = fp8_value((uint8_t)rng_int(rng, 0, 255), dtype);
        if (fabs(value) <= 2.0) /* not NaN, not infinite */
            return value;
    }
}
