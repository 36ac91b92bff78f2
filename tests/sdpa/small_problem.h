/*
 * small_problem.h - one small forward or backward problem run many times:
 * its inputs in shared memory, the outputs ref computes for it (the
 * oracle), and the execution arguments that make a run write a given set
 * of outputs. Shared by the tests that hammer one problem (threads, faults).
 */
#ifndef SDPA_TEST_SMALL_PROBLEM_H
#define SDPA_TEST_SMALL_PROBLEM_H

#include "tensors.h"
#include "ze_env.h"

/* Outputs: O for a forward problem, dQ, dK, dV for a backward one. */
#define SMALL_OUTPUTS 3

typedef struct small_problem {
    sdpa_problem_desc_t p;
    test_tensor_t q, k, v;
    test_tensor_t o, ws, d_o; /* backward inputs: O and the workspace from ref, dO */
    test_tensor_t want[SMALL_OUTPUTS];
    int outputs;
} small_problem_t;

/* A dense [b, h, s, d] tensor of dtype. */
sdpa_tensor_desc_t small_dense(sdpa_dtype_t dtype, int64_t b, int64_t h, int64_t s, int64_t d);

/* Allocates the inputs of p (inference or backward, dense, host scale) with
 * values in [-1, 1) from seed, and computes want with ref (for backward, O
 * and the workspace first, with ref's training forward). */
void small_problem_open(small_problem_t *sp, const sdpa_problem_desc_t *p, uint64_t seed);
void small_problem_close(small_problem_t *sp);

/* Arguments of one execution of sp writing into out (scale 0.25). */
void small_problem_args(const small_problem_t *sp, const test_tensor_t *out, sdpa_exec_args_t *a);

/* A set of outputs for sp: allocated 0xff-filled, poisoned again (0xff)
 * before a run, freed. */
void small_outputs_alloc(const small_problem_t *sp, test_tensor_t *out);
void small_outputs_poison(const small_problem_t *sp, test_tensor_t *out);
void small_outputs_free(const small_problem_t *sp, test_tensor_t *out);

/* 1 if out equals other byte for byte. */
int small_outputs_identical(const small_problem_t *sp, const test_tensor_t *out,
                            const test_tensor_t *other);

/* 1 if out agrees with ref's outputs within abs_tol + ulps units of the
 * output dtype; otherwise 0 and a sentence in why. */
int small_outputs_match_ref(const small_problem_t *sp, const test_tensor_t *out, double abs_tol,
                            double ulps, char *why, size_t why_size);

#endif /* SDPA_TEST_SMALL_PROBLEM_H */
