/*
 * test_rng.h - the tests' deterministic random numbers (xorshift64*): the
 * same seed gives the same tensors on every machine.
 */
#ifndef SDPA_TEST_RNG_H
#define SDPA_TEST_RNG_H

#include <stdint.h>

typedef struct test_rng {
    uint64_t state; /* any value, 0 included */
} test_rng_t;

uint64_t rng_next(test_rng_t *rng);
/* Uniform integer in [lo, hi]. */
int64_t rng_int(test_rng_t *rng, int64_t lo, int64_t hi);
/* Uniform in [lo, hi). */
double rng_uniform(test_rng_t *rng, double lo, double hi);

#endif /* SDPA_TEST_RNG_H */
