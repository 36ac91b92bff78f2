/*
 * tensors.h - test tensors in shared memory: strided layouts (dense,
 * sequence-major, padded rows, transposed), random contents, and a comparison
 * with tolerances.
 *
 * Every buffer is first filled with 0xff bytes (NaN for f32/f16/bf16) so that
 * a kernel reading padding poisons its result, and output padding can be
 * checked untouched afterwards.
 */
#ifndef SDPA_TEST_TENSORS_H
#define SDPA_TEST_TENSORS_H

#include <stdint.h>

#include "sdpa.h"
#include "test_rng.h"
#include "ze_env.h"

/* Memory orders, outermost dim first. */
typedef enum tensor_order {
    ORDER_BHSD = 0, /* dense [B, H, S, D] */
    ORDER_BSHD,     /* sequence-major, heads interleaved (PyTorch's [B, S, H, D]) */
    ORDER_BHDS,     /* head_dim-major: a transposed K */
    ORDER_HBSD,     /* batch inside heads */
} tensor_order_t;

typedef struct test_tensor {
    sdpa_tensor_desc_t desc;
    void *data;
    size_t bytes;
} test_tensor_t;

/* Fills desc for dims in memory order order, with pad extra elements after
 * every innermost row (kept even for 4-bit types). */
void tensor_layout(sdpa_tensor_desc_t *desc, sdpa_dtype_t dtype, const int64_t dims[4],
                   tensor_order_t order, int64_t pad);

/* Elements between the first and the last element, inclusive. */
int64_t tensor_span(const sdpa_tensor_desc_t *desc);

/* Allocates (shared USM) a tensor for desc, filled with 0xff bytes, or left
 * untouched when sparse (then only its elements are ever written). */
void tensor_alloc(test_env_t *env, test_tensor_t *t, const sdpa_tensor_desc_t *desc);
void tensor_alloc_sparse(test_env_t *env, test_tensor_t *t, const sdpa_tensor_desc_t *desc);
void tensor_free(test_env_t *env, test_tensor_t *t);

/* Writes a uniform value in [lo, hi) (integers for integer dtypes) to every
 * element of t. */
void tensor_fill_uniform(test_tensor_t *t, test_rng_t *rng, double lo, double hi);

/* The result of comparing a tensor with the oracle's. */
typedef struct compare_result {
    int64_t checked, bad;
    double max_abs_err;
    double worst_ratio;   /* max |got - want| / tolerance */
    int64_t worst_idx[4]; /* where worst_ratio was reached */
    double worst_got, worst_want, worst_tol;
} compare_result_t;

/* Per-element tolerance: abs_tol + ulps * ulp_of(desc->dtype, |want|).
 * Both NaN counts as equal; NaN against a number is bad. */
void tensor_compare(const sdpa_tensor_desc_t *desc, const void *got, const void *want,
                    double abs_tol, double ulps, compare_result_t *out);

/* The spacing of dtype's numbers at magnitude (the unit in the last place). */
double ulp_of(sdpa_dtype_t dtype, double magnitude);

/* 1 if every byte of t outside its elements is still 0xff (nothing wrote
 * padding). */
int tensor_padding_intact(const test_tensor_t *t);

/* The tensors of one attention's forward and backward, by role (NULL: a
 * role not used). */
typedef enum attention_role {
    ROLE_Q,
    ROLE_K,
    ROLE_V,
    ROLE_DST,
    ROLE_DIFF_DST,
    ROLE_DIFF_Q,
    ROLE_DIFF_K,
    ROLE_DIFF_V,
    ROLE_COUNT
} attention_role_t;

/* *fwd: a FORWARD_TRAINING problem over t's q, k, v into dst, with a host
 * scale and mask; *bwd: the same problem as a BACKWARD with t's gradients. */
void attention_problems(const test_tensor_t *const t[ROLE_COUNT], sdpa_mask_kind_t mask,
                        sdpa_problem_desc_t *fwd, sdpa_problem_desc_t *bwd);

/* *a: exec args with the data of every tensor of t, workspace and the host
 * scale; the rest zero. */
void attention_exec_args(const test_tensor_t *const t[ROLE_COUNT], void *workspace, float scale,
                         sdpa_exec_args_t *a);

#endif /* SDPA_TEST_TENSORS_H */
