/*
 * size_math.h - overflow-checked sizes. Every element count, byte count and
 * offset computed from the caller's dims and strides goes through these.
 *
 * Sizes saturate: a result that does not fit in 64 bits is
 * SDPA_SIZE_OVERFLOW (UINT64_MAX), and every later operation keeps it there,
 * so a chain of products needs one comparison at the end, against
 * SDPA_MAX_BUFFER_BYTES (or the limit that matters). Negative inputs (which a
 * checked problem never has) count as overflow.
 */
#ifndef SDPA_CORE_SIZE_MATH_H
#define SDPA_CORE_SIZE_MATH_H

#include <stddef.h>
#include <stdint.h>

#define SDPA_SIZE_OVERFLOW UINT64_MAX

/* The largest buffer, in bytes, that a problem may imply: kernels address
 * bytes with signed 64-bit offsets, the host with size_t. */
#define SDPA_MAX_BUFFER_BYTES ((uint64_t)(SIZE_MAX < INT64_MAX ? SIZE_MAX : INT64_MAX))

/* a * b, or SDPA_SIZE_OVERFLOW. */
static inline uint64_t sdpa_size_mul(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? SDPA_SIZE_OVERFLOW : r;
}

/* a + b, or SDPA_SIZE_OVERFLOW (also if either is already). */
static inline uint64_t sdpa_size_add(uint64_t a, uint64_t b)
{
    uint64_t r;
    if (a == SDPA_SIZE_OVERFLOW || b == SDPA_SIZE_OVERFLOW || __builtin_add_overflow(a, b, &r))
        return SDPA_SIZE_OVERFLOW;
    return r;
}

/* A signed dim or stride as a size (a negative one is SDPA_SIZE_OVERFLOW). */
static inline uint64_t sdpa_size_of(int64_t value)
{
    return value < 0 ? SDPA_SIZE_OVERFLOW : (uint64_t)value;
}

/* The product of n values (elements of a dense tensor of these dims). */
static inline uint64_t sdpa_size_product(const int64_t *values, int n)
{
    uint64_t r = 1;
    for (int i = 0; i < n; i++)
        r = sdpa_size_mul(r, sdpa_size_of(values[i]));
    return r;
}

/* Bytes of count elements of bits bits each (4-bit elements round up). */
static inline uint64_t sdpa_size_bytes(uint64_t count, int bits)
{
    if (count == SDPA_SIZE_OVERFLOW || bits < 0)
        return SDPA_SIZE_OVERFLOW;
    /* Whole groups of 8 elements take bits bytes; the rest rounds up. */
    uint64_t rest = ((count % 8) * (uint64_t)bits + 7) / 8;
    return sdpa_size_add(sdpa_size_mul(count / 8, (uint64_t)bits), rest);
}

/* Elements from a strided 4-D tensor's base to its last element, inclusive:
 * 1 + sum((dims[n] - 1) * strides[n]); 0 if a dim is below 1. */
static inline uint64_t sdpa_size_span_elements(const int64_t dims[4], const int64_t strides[4])
{
    uint64_t last = 0;
    for (int n = 0; n < 4; n++) {
        if (dims[n] < 1)
            return 0;
        last = sdpa_size_add(last,
                             sdpa_size_mul((uint64_t)(dims[n] - 1), sdpa_size_of(strides[n])));
    }
    return sdpa_size_add(last, 1);
}

/* value as an int64_t, saturated at INT64_MAX (for strides the kernels take
 * as int64 and that the caller has already bounded). */
static inline int64_t sdpa_size_to_int64(uint64_t value)
{
    return value > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)value;
}

#endif /* SDPA_CORE_SIZE_MATH_H */
