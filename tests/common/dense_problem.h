/*
 * dense_problem.h - the problem descriptor the ABI's cases (abi/attn_case.c)
 * and the core's fixtures (core/core_fixtures.c) both start from. A header
 * alone, so that the libFuzzer build of the core's fixtures needs no
 * library of the tests.
 */
#ifndef SDPA_TESTS_DENSE_PROBLEM_H
#define SDPA_TESTS_DENSE_PROBLEM_H

#include <stdint.h>
#include <string.h>

#include "problem.h"
#include "sdpa.h"

/* A problem of kind prop with dense Q and O in qdt, K and V in kvdt
 * ([batch, heads, length, head size]) and a host scale; every other field
 * is zero. */
static inline void test_dense_problem(sdpa_problem_desc_t *d, sdpa_prop_kind_t prop, int64_t B,
                                      int64_t Hq, int64_t Hkv, int64_t Sq, int64_t Sk, int64_t D,
                                      sdpa_dtype_t qdt, sdpa_dtype_t kvdt)
{
    memset(d, 0, sizeof(*d));
    d->struct_size = sizeof(*d);
    d->struct_version = SDPA_PROBLEM_DESC_VERSION;
    d->prop_kind = prop;
    d->q = sdpa_tensor_dense(qdt, B, Hq, Sq, D);
    d->k = sdpa_tensor_dense(kvdt, B, Hkv, Sk, D);
    d->v = sdpa_tensor_dense(kvdt, B, Hkv, Sk, D);
    d->dst = sdpa_tensor_dense(qdt, B, Hq, Sq, D);
    d->scale_kind = SDPA_SCALE_HOST;
}

#endif /* SDPA_TESTS_DENSE_PROBLEM_H */
