/*
 * fwd_case.h - one forward attention problem run on the ze backend and on
 * the ref backend, with the outputs compared.
 */
#ifndef SDPA_TEST_FWD_CASE_H
#define SDPA_TEST_FWD_CASE_H

#include "tensors.h"
#include "ze_env.h"

typedef struct fwd_case {
    int64_t batch, q_heads, kv_heads, q_len, k_len, head_size;
    sdpa_dtype_t q_dtype, k_dtype, v_dtype; /* dst has q's dtype */
    tensor_order_t q_order, k_order, v_order, dst_order;
    int64_t pad; /* extra elements after each row of every tensor */

    sdpa_mask_kind_t mask_kind;
    sdpa_dtype_t mask_dtype;
    int mask_broadcast_batch, mask_broadcast_heads, mask_broadcast_queries;
    int fully_masked_rows; /* BUFFER: some query rows see no key at all */

    sdpa_scale_kind_t scale_kind;
    sdpa_dtype_t scale_dtype; /* SCALE_DEVICE */
    int invert_scale;
    sdpa_softmax_kind_t softmax;
    int f16_accumulation;
    int training;

    /* Quantized K/V: k_dtype/v_dtype integer, with these descriptions. */
    sdpa_quant_desc_t k_quant, v_quant;

    /* Batch stride of Q, K, V and O beyond 2^31 elements: offsets need 64
     * bits. The buffers are allocated untouched (their pages between batches
     * cost nothing) and only the elements are written. */
    int huge_batch_stride;
} fwd_case_t;

/* A case with defaults: dense f32 tensors, no mask, host scale 1/sqrt(D). */
void fwd_case_init(fwd_case_t *c, int64_t batch, int64_t q_heads, int64_t kv_heads, int64_t q_len,
                   int64_t k_len, int64_t head_size);

/* fwd_case_init with Q, K, V and O in dtype. */
void fwd_case_init_typed(fwd_case_t *c, sdpa_dtype_t dtype, int64_t batch, int64_t q_heads,
                         int64_t kv_heads, int64_t q_len, int64_t k_len, int64_t head_size);

/* The sizes a family of cases runs at (test_fwd.c, test_bwd.c). */
typedef struct fwd_case_sizes {
    int64_t batch, q_heads, kv_heads, q_len, k_len;
} fwd_case_sizes_t;

/* Sets c's batch, heads and lengths to s. */
void fwd_case_resize(fwd_case_t *c, const fwd_case_sizes_t *s);

/* Runs a family: run(base, &sizes[i], seed + i) for each of the count
 * sizes, which returns the case's worst error/tolerance; prints
 * "<direction> family <name> <count> cases, worst ..." (name padded to
 * width) and returns count. */
size_t fwd_case_family(const char *direction, int width, const char *name,
                       const fwd_case_sizes_t *sizes, size_t count, uint64_t seed,
                       double (*run)(const void *base, const fwd_case_sizes_t *s, uint64_t seed),
                       const void *base);

/* "B2 H8/2 Sq17 Sk33 D64 q=f16 k=f16 v=bf16 mask=buffer(f16,bq) ..." */
void fwd_case_describe(const fwd_case_t *c, char *out, size_t size);

/* The problem descriptor of c (without tensors' data). */
void fwd_case_problem(const fwd_case_t *c, sdpa_problem_desc_t *out);

/* The buffers of a forward case. */
typedef struct fwd_buffers {
    test_tensor_t q, k, v, dst, dst_ref, mask, ws, ws_ref, scale;
    test_tensor_t k_scales, k_zp, v_scales, v_zp;
} fwd_buffers_t;

/* Allocates and fills the inputs of c (problem p) from rng; outputs are
 * 0xff-filled. */
void fwd_buffers_alloc(test_env_t *env, const fwd_case_t *c, const sdpa_problem_desc_t *p,
                       fwd_buffers_t *b, test_rng_t *rng);
void fwd_buffers_free(test_env_t *env, fwd_buffers_t *b);

/* Execution arguments for c's buffers; reference selects dst_ref/ws_ref. */
void fwd_exec_args(const fwd_case_t *c, const fwd_buffers_t *b, int reference, sdpa_exec_args_t *a);

/* Creates a primitive for p on backend be, executes a, destroys it;
 * asserts success, naming what. Returns 1 if the primitive ran the ze
 * backend's fast path (its configuration string starts with "fwd xe" or
 * "bwd xe", see SDPA_ZE_KERNELS), else 0, and counts those runs in
 * xe_runs. */
int run_on_backend(const sdpa_backend_iface_t *be, sdpa_context_t *ctx,
                   const sdpa_problem_desc_t *p, const sdpa_exec_args_t *a, const char *name,
                   const char *what);

/* Primitives run_on_backend found on the fast path, for the suites' final
 * counts (SDPA_ZE_KERNELS=xe must actually exercise it), and those that
 * took a backward variant with the native f32 atomic add ("fadd" in the
 * configuration string, SDPA_ZE_FLOAT_ATOMICS). */
extern int xe_runs, fadd_runs;

/* In a rerun (the tests/sdpa.am RERUNS), 1 if p would run kernels
 * another run of the suite ran: through the fast path (SDPA_ZE_KERNELS=xe
 * or xe_hpg), a problem the fast path declines runs the same portable or
 * decode kernels as the suite's run without SDPA_ZE_KERNELS (or with +fadd,
 * the @fadd rerun); with SDPA_ZE_FLOAT_ATOMICS=native, a problem whose
 * configuration has no -fadd variant (a forward) runs those of the run
 * without it. The case is skipped and counted in rerun_skips. 0 otherwise,
 * and for a problem creation refuses. Found by primitive_supports: nothing
 * is built. */
int rerun_skips_case(test_env_t *env, const sdpa_problem_desc_t *p);
extern int rerun_skips;

/* A rerun runs a representative subset of the rows of a suite, whose own
 * run runs them all (doc/fast-path.md, "Testing without the hardware"):
 * through the fast path (SDPA_ZE_KERNELS=xe or xe_hpg) the rows marked
 * representative, which hold every dtype, feature and head-size bucket at
 * least once, not every combination of them; with
 * SDPA_ZE_FLOAT_ATOMICS=native (the -fadd variants) those of them whose
 * difference reaches the backward's f32 adds into global memory (shapes,
 * layouts, dtypes, GQA; not masks, scales, dS, the deterministic mode or
 * the context's bookkeeping). 1 if this run leaves the row out, counted in
 * rerun_left_out; 0 in the suite's own run. */
int rerun_leaves_out(int representative, int reaches_adds);
extern int rerun_left_out;

/* Asserts (Check) that some primitive ran the fast path when
 * SDPA_ZE_KERNELS asks for it ("xe", "xe_hpg"), that some took a -fadd
 * variant when SDPA_ZE_FLOAT_ATOMICS is "native" and none when it is "cas";
 * prints rerun_skips and rerun_left_out in a rerun; returns xe_runs. */
int xe_runs_checked(void);

/* What the fast path adds to the error of O in case c: it rounds P to Q's
 * dtype (the matrix engine's operand type) before P V, an error of at most
 * u, the unit roundoff of that dtype (2^-11 for f16, 2^-8 for bf16),
 * relative to each probability; O = sum_j p_j v_j / sum_j p_j then moves by
 * at most u max |v| <= u value_bound (times keep_scale = 1 / (1 - p) with
 * dropout). K and V in another dtype are rounded to Q's too: V by the same
 * argument, K through the scores, whose relative change u moves the
 * weights by as much to first order: another u value_bound each. */
double fwd_xe_tolerance(const fwd_case_t *c, double keep_scale);

/* The largest |value| O can take in case c: O averages V rows. */
double fwd_case_value_bound(const fwd_case_t *c);

/* Asserts (Check) that ze's O in b agrees with ref's within dst_tol
 * (absolute, plus one unit of O's dtype) and, with check_lse, that the
 * log-sum-exp workspaces agree within lse_tol (plus 16 f32 units); with
 * check_padding, that ze wrote nothing outside O's elements. Failures name
 * what and the worst element. Returns the worst error/tolerance ratio. */
double fwd_case_compare(const sdpa_problem_desc_t *p, const fwd_buffers_t *b, double dst_tol,
                        int check_lse, double lse_tol, int check_padding, const char *what);

/* Runs c on ze and ref and asserts (Check) that O (and the log-sum-exp
 * workspace when training) agree within tolerances that follow from the
 * dtypes, D and Sk, and that nothing wrote outside O. Returns the worst
 * error/tolerance ratio seen. */
double fwd_case_run(test_env_t *env, const fwd_case_t *c, uint64_t seed);

#endif /* SDPA_TEST_FWD_CASE_H */
