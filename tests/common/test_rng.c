/* test_rng.c - xorshift64* for test data. */
#include "test_rng.h"

uint64_t rng_next(test_rng_t *rng)
{
    /* xorshift has one fixed point, 0: start elsewhere. */
    uint64_t x = rng->state ? rng->state : 0x9e3779b97f4a7c15ull;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng->state = x;
    return x * 0x2545f4914f6cdd1dull;
}

int64_t rng_int(test_rng_t *rng, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rng_next(rng) % (uint64_t)(hi - lo + 1));
}

double rng_uniform(test_rng_t *rng, double lo, double hi)
{
    return lo + (hi - lo) * ((double)(rng_next(rng) >> 11) * 0x1.0p-53);
}
