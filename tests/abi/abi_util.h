/*
 * abi_util.h - what the ABI tests share: host tensors filled with values the
 * dtypes hold exactly, attention problems with their buffers, and an
 * independent double-precision oracle (naive softmax(QK^T * scale + mask) V
 * and its gradients on dense copies of the inputs).
 */
#ifndef SDPA_TESTS_ABI_UTIL_H
#define SDPA_TESTS_ABI_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "sdpa.h"
#include "test_rng.h"

/* ------------------------------------------------------------------------- */
/* Elements                                                                  */
/* ------------------------------------------------------------------------- */

/* Bytes a tensor spans with its strides (4-bit types: two per byte). */
size_t tensor_bytes(const sdpa_tensor_desc_t *t);

/* A dense tensor desc: strides from dims, innermost 1. */
sdpa_tensor_desc_t dense_tensor(sdpa_dtype_t dtype, int64_t d0, int64_t d1, int64_t d2, int64_t d3);

/* Element idx of data as double (this file's own decoding). */
double elem_get(const void *data, int64_t idx, sdpa_dtype_t dtype);

/* Stores value, which must be exactly representable in dtype (aborts
 * otherwise: tests only feed exact values). */
void elem_set(void *data, int64_t idx, sdpa_dtype_t dtype, double value);

/* Element (i0, i1, i2, i3) of tensor t at data. */
double tensor_get(const sdpa_tensor_desc_t *t, const void *data, int64_t i0, int64_t i1, int64_t i2,
                  int64_t i3);
void tensor_set(const sdpa_tensor_desc_t *t, void *data, int64_t i0, int64_t i1, int64_t i2,
                int64_t i3, double value);

/* k / 128 with k in -255..255: exact in f32, f16 and bf16. */
double rng_exact(test_rng_t *rng);

/* ------------------------------------------------------------------------- */
/* Attention problems with host buffers                                      */
/* ------------------------------------------------------------------------- */

/* Allocator for the buffers of a case (host malloc for the ref backend). */
typedef struct test_allocator {
    void *(*alloc)(size_t bytes, void *user);
    void (*release)(void *pointer, void *user);
    void *user;
} test_allocator_t;

#define ATTN_CASE_MAX_BUFFERS 24

/* Where case_alloc_at puts the first element of every buffer it allocates:
 * skew_bytes past the start of the allocation (whose alignment is the
 * allocator's: malloc's, or 256 bytes for the tests' shared USM), plus
 * skew_elements elements of the buffer's own type (a byte for 4-bit types):
 * views a framework passes, e.g. q carved from a fused QKV tensor. */
typedef struct case_placement {
    size_t skew_bytes;
    int64_t skew_elements;
} case_placement_t;

typedef struct attn_case {
    sdpa_problem_desc_t desc;
    sdpa_exec_args_t args;
    void *buffers[ATTN_CASE_MAX_BUFFERS]; /* allocations (not skewed) */
    size_t buffer_bytes[ATTN_CASE_MAX_BUFFERS];
    int buffer_count;
    test_allocator_t allocator;
    case_placement_t placement;
} attn_case_t;

/* A valid dense problem: q, dst (qdt) [B, Hq, Sq, D], k, v (kvdt)
 * [B, Hkv, Sk, D], host scale, and for BACKWARD the gradients (q's dtype). */
void problem_init(sdpa_problem_desc_t *d, sdpa_prop_kind_t prop, int64_t B, int64_t Hq, int64_t Hkv,
                  int64_t Sq, int64_t Sk, int64_t D, sdpa_dtype_t qdt, sdpa_dtype_t kvdt);

/* Allocates every buffer c->desc uses with allocator (NULL: malloc), fills
 * the inputs from seed (exact values; integer K/V in their range, positive
 * scales, zero points, a mask with some -inf), fills outputs with 0xff bytes
 * (NaN) and sets c->args (host scale 0.25, dropout p 0.25, seed, offset).
 * Returns 0 on success. */
int case_alloc(attn_case_t *c, uint64_t seed, const test_allocator_t *allocator);

/* case_alloc with every buffer placed by placement (NULL: at the start of
 * its allocation, as case_alloc does). */
int case_alloc_at(attn_case_t *c, uint64_t seed, const test_allocator_t *allocator,
                  const case_placement_t *placement);

/* Frees what case_alloc allocated. */
void case_free(attn_case_t *c);

/* ------------------------------------------------------------------------- */
/* The oracle                                                                */
/* ------------------------------------------------------------------------- */

typedef struct oracle {
    int64_t B, Hq, Hkv, Sq, Sk, D;
    double *q, *k, *v; /* dense [B][H][S][D], K/V dequantized */
    double *bias;      /* [B][Hq][Sq][Sk]: mask value, -inf where causally masked */
    double *drop;      /* [B][Hq][Sq][Sk]: 0 or 1 / (1 - p) (1 without dropout) */
    double *dout;      /* [B][Hq][Sq][D] (backward) or NULL */
    double scale;      /* multiplier of q.k */
    int inf_as_zero;
} oracle_t;

/* Reads c's inputs into dense doubles; the dropout keep rule is evaluated
 * from Philox4x32-10 with the counter layout of sdpa.h. Returns 0. */
int oracle_init(oracle_t *o, const attn_case_t *c);
void oracle_free(oracle_t *o);

/* O [B][Hq][Sq][D] and lse [B][Hq][Sq] (either may be NULL). A query that
 * sees no key has lse -inf and an O row of NaN (ACCURATE) or 0
 * (INF_AS_ZERO), as sdpa.h specifies. */
void oracle_forward(const oracle_t *o, double *out, double *lse);

/* Analytic gradients of L = sum(dout * O): dq like q, dk/dv like k/v, ds
 * [B][Hq][Sq][Sk] (any may be NULL). A query that sees no key has
 * probabilities 0 in both softmax modes (sdpa.h): its dQ and dS rows are 0
 * and it adds nothing to dK and dV. */
void oracle_backward(const oracle_t *o, double *dq, double *dk, double *dv, double *ds);

/* L = sum(dout * O) for the current inputs (finite differences), with the
 * O rows of queries that see no key taken as 0, as backward does. */
double oracle_loss(const oracle_t *o);

/* ------------------------------------------------------------------------- */
/* Comparisons                                                               */
/* ------------------------------------------------------------------------- */

/* Relative tolerance for one rounding to dtype (one ulp) and the absolute
 * floor below which differences do not matter. */
double dtype_rel_tolerance(sdpa_dtype_t dtype);
double dtype_abs_tolerance(sdpa_dtype_t dtype);

/* 1 if got matches expected within rel * |expected| + abs (NaN matches NaN,
 * infinities must be equal). */
int close_enough(double got, double expected, double rel, double abs);

/* Compares tensor t at data with dense expected [d0][d1][d2][d3]; on the
 * first mismatch prints what, the index and both values and returns 0.
 * Returns 1 if everything matches; *max_error gets the largest error in
 * units of the tolerance (may be NULL). */
int compare_tensor(const char *what, const sdpa_tensor_desc_t *t, const void *data,
                   const double *expected, double rel, double abs, double *max_error);

/* Like compare_tensor, with the tolerance of one correct rounding to the
 * tensor's own dtype: half an ulp of the expected value in that dtype (its
 * subnormal spacing included) plus 1e-12 for the summation-order noise of
 * two double computations. Output dtypes only (f32, f16, bf16). */
int compare_rounded(const char *what, const sdpa_tensor_desc_t *t, const void *data,
                    const double *expected);

/* Half an ulp of value in dtype (f32, f16 or bf16). */
double half_ulp(double value, sdpa_dtype_t dtype);

#endif /* SDPA_TESTS_ABI_UTIL_H */
