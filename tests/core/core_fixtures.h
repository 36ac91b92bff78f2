/*
 * core_fixtures.h - devices and problems for the core's unit tests, built by
 * hand (no device, no sdpa_problem_check).
 */
#ifndef SDPA_TESTS_CORE_FIXTURES_H
#define SDPA_TESTS_CORE_FIXTURES_H

#include <stdint.h>

#include "device.h"
#include "problem.h"
#include "sdpa.h"

/* Our CPU driver as measured (sub-groups 4..64, 8192 work-items, 256 KiB
 * local memory, fp16). */
void fixture_cpu_device(sdpa_device_info_t *out);

/* A GPU of class c: for Xe-LP, Xe-HPG, Xe-HPC, Xe2 and Xe3 the ISA gate's
 * models (tools/gpu_models.h: Tiger Lake 512 work-items and 64 KiB local
 * memory, Arc A770 1024 / 64 KiB, Max 1550, Arc B580 and Panther Lake's
 * Arc B390 (integrated) 1024 / 128 KiB), for the others a plausible one
 * named "test <class>": an unknown GPU 512 / 64 KiB; sub-groups 8, 16, 32
 * (16, 32 from Xe-HPC on). */
void fixture_gpu_device(sdpa_device_class_t c, sdpa_device_info_t *out);

/* A dense [d0, d1, d2, d3] tensor of dtype. */
sdpa_tensor_desc_t fixture_tensor(sdpa_dtype_t dtype, int64_t d0, int64_t d1, int64_t d2,
                                  int64_t d3);

/* A forward inference problem with dense Q/K/V/O of dtype, no mask, host
 * scale, and its shape, as sdpa_problem_check would return them. */
void fixture_problem(sdpa_dtype_t dtype, int64_t batch, int64_t q_heads, int64_t kv_heads,
                     int64_t q_len, int64_t k_len, int64_t head_size, sdpa_problem_desc_t *problem,
                     sdpa_shape_t *shape);

/* Turns a forward fixture into a backward problem: dense gradients of
 * dtype (same shapes as q, k, v, dst). */
void fixture_make_backward(sdpa_problem_desc_t *problem, sdpa_dtype_t grad_dtype);

/* fixture_problem made a backward problem with dtype gradients. */
void fixture_backward_problem(sdpa_dtype_t dtype, int64_t batch, int64_t q_heads, int64_t kv_heads,
                              int64_t q_len, int64_t k_len, int64_t head_size,
                              sdpa_problem_desc_t *p, sdpa_shape_t *shape);

/* The ABI 1.1 features the fast path leaves to the portable kernels
 * (sdpa_xe_unimplemented_feature): window, softcap, ALiBi, varlen, sinks (ABI
 * 1.2), paged KV;
 * the first FIXTURE_SCORE_FEATURES need no other member of the problem for a
 * plan to be made. */
#define FIXTURE_XE_UNIMPLEMENTED 6
#define FIXTURE_SCORE_FEATURES 3

/* Turns on feature i (< FIXTURE_XE_UNIMPLEMENTED) in problem. Returns the
 * reason the fast path gives for refusing it. */
const char *fixture_xe_unimplemented(sdpa_problem_desc_t *problem, int i);

/* Sets or clears an environment variable (NULL clears). */
/* Asserts a plan's launch: its work-group size local and its group counts
 * groups (three each), at the caller's line. */
#define ck_assert_launch(local, groups, l0, l1, l2, g0, g1, g2)                                    \
    do {                                                                                           \
        const uint32_t *local_ = (local), *groups_ = (groups);                                     \
        ck_assert_uint_eq(local_[0], l0);                                                          \
        ck_assert_uint_eq(local_[1], l1);                                                          \
        ck_assert_uint_eq(local_[2], l2);                                                          \
        ck_assert_uint_eq(groups_[0], g0);                                                         \
        ck_assert_uint_eq(groups_[1], g1);                                                         \
        ck_assert_uint_eq(groups_[2], g2);                                                         \
    } while (0)

void fixture_setenv(const char *name, const char *value);

#endif /* SDPA_TESTS_CORE_FIXTURES_H */
