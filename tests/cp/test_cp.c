/*
 * test_cp.c - context-parallel attention (libsdpa_cp) across the ranks of
 * MPI_COMM_WORLD. tests/cp/run-mpi.sh runs it under mpiexec with 2 and with 4
 * ranks on one machine; each rank drives its own Level Zero context on the
 * device (the CPU device here: one rank per process).
 *
 * Every rank generates the same whole sequence (exact values from one seed,
 * tests/abi/abi_util.c), takes its shard by sdpa_cp_global_token, runs the
 * ring, and compares its shard of the results with the double-precision
 * oracle over the whole sequence - the result of one attention over all S
 * tokens - within tolerances that follow from the dtype; the deterministic
 * cases also compare two runs bit for bit. Assertions are collective (every
 * rank learns whether every rank passed) so that a failure never leaves a
 * rank waiting in the ring.
 */
#include <check.h>
#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "abi_util.h"
#include "checked_iface.h"
#include "element.h"
#include "sdpa_cp.h"
#include "tensors.h"
#include "ze_env.h"

static int world_rank, world_size;

/* CP_TEST_VERBOSE set: every comparison prints its worst error in units of
 * its tolerance, and every creation its time. */
static int verbose(void)
{
    const char *v = getenv("CP_TEST_VERBOSE");
    return v && *v && strcmp(v, "0") != 0;
}

/* CP_TEST_MPI_FIRST set (and not "0"): MPI_Init before zeInit. */
static int mpi_first(void)
{
    const char *v = getenv("CP_TEST_MPI_FIRST");
    return v && *v && strcmp(v, "0") != 0;
}

/* Fails the running test on every rank unless ok holds on every rank. */
static void assert_everywhere(int ok, const char *what)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    ck_assert_msg(all, "%s: failed on some rank (rank %d: %s)", what, world_rank,
                  ok ? "passed" : "failed, see its stderr");
}

/* ------------------------------------------------------------------------- */
/* Cases                                                                     */
/* ------------------------------------------------------------------------- */

typedef struct cp_case {
    const char *name;
    sdpa_cp_layout_t layout;
    int causal;
    sdpa_dtype_t dtype;
    int64_t batch, q_heads, kv_heads, local_len, head_size;
    tensor_order_t kv_order; /* ORDER_BSHD: K and V views of a [B, S, H, D] projection */
    int deterministic;
} cp_case_t;

/* One case on this rank: the whole sequence and the oracle's results over
 * it, the rank's shards, and the shard problems. */
typedef struct cp_run {
    const cp_case_t *c;
    int64_t seq; /* S */
    attn_case_t full;
    double *o, *lse, *dq, *dk, *dv; /* oracle, dense over S */
    test_tensor_t q, k, v, o_shard, do_shard, dq_shard, dk_shard, dv_shard;
    float *ws;
    size_t ws_bytes;
    sdpa_problem_desc_t fwd, bwd;
    sdpa_exec_args_t args;
    sdpa_cp_t *cp_fwd, *cp_bwd;
} cp_run_t;

static double *doubles(int64_t count)
{
    double *p = malloc(sizeof(double) * (size_t)count);
    ck_assert_ptr_nonnull(p);
    return p;
}

/* Copies the rows this rank holds of full (desc full_desc) into shard. */
static void take_shard(const cp_run_t *r, const sdpa_tensor_desc_t *full_desc, const void *full,
                       test_tensor_t *shard)
{
    const sdpa_tensor_desc_t *t = &shard->desc;
    for (int64_t i = 0; i < t->dims[2]; i++) {
        int64_t g = sdpa_cp_global_token(r->c->layout, world_size, world_rank, t->dims[2], i);
        ck_assert_int_ge(g, 0);
        for (int64_t b = 0; b < t->dims[0]; b++)
            for (int64_t h = 0; h < t->dims[1]; h++)
                for (int64_t d = 0; d < t->dims[3]; d++)
                    tensor_set(t, shard->data, b, h, i, d, tensor_get(full_desc, full, b, h, g, d));
    }
}

/* The rows this rank holds of dense [B][H][S][D] full, dense [B][H][L][D]. */
static double *expected_rows(const cp_run_t *r, const double *full, int64_t heads, int64_t depth)
{
    const int64_t B = r->c->batch, L = r->c->local_len, S = r->seq;
    double *out = doubles(B * heads * L * depth);
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < heads; h++)
            for (int64_t i = 0; i < L; i++) {
                int64_t g = sdpa_cp_global_token(r->c->layout, world_size, world_rank, L, i);
                memcpy(out + ((b * heads + h) * L + i) * depth,
                       full + ((b * heads + h) * S + g) * depth, sizeof(double) * (size_t)depth);
            }
    return out;
}

static void shard_alloc(test_tensor_t *t, sdpa_dtype_t dtype, int64_t b, int64_t h, int64_t l,
                        int64_t d, tensor_order_t order)
{
    sdpa_tensor_desc_t desc;
    int64_t dims[4] = {b, h, l, d};
    tensor_layout(&desc, dtype, dims, order, 0);
    tensor_alloc(&suite_env, t, &desc);
}

static void run_open(cp_run_t *r, const cp_case_t *c, uint64_t seed)
{
    memset(r, 0, sizeof(*r));
    r->c = c;
    r->seq = c->local_len * world_size;
    const int64_t B = c->batch, Hq = c->q_heads, Hkv = c->kv_heads, S = r->seq, L = c->local_len,
                  D = c->head_size;
    sdpa_mask_kind_t mask = c->causal ? SDPA_MASK_CAUSAL_TOP_LEFT : SDPA_MASK_NONE;

    /* The whole sequence, the same on every rank, and the oracle over it. */
    problem_init(&r->full.desc, SDPA_BACKWARD, B, Hq, Hkv, S, S, D, c->dtype, c->dtype);
    r->full.desc.mask_kind = mask;
    ck_assert_int_eq(case_alloc(&r->full, seed, NULL), 0);
    oracle_t oracle;
    oracle_init(&oracle, &r->full);
    r->o = doubles(B * Hq * S * D);
    r->lse = doubles(B * Hq * S);
    r->dq = doubles(B * Hq * S * D);
    r->dk = doubles(B * Hkv * S * D);
    r->dv = doubles(B * Hkv * S * D);
    oracle_forward(&oracle, r->o, r->lse);
    oracle_backward(&oracle, r->dq, r->dk, r->dv, NULL);
    oracle_free(&oracle);

    /* This rank's shards. */
    shard_alloc(&r->q, c->dtype, B, Hq, L, D, ORDER_BHSD);
    shard_alloc(&r->k, c->dtype, B, Hkv, L, D, c->kv_order);
    shard_alloc(&r->v, c->dtype, B, Hkv, L, D, c->kv_order);
    shard_alloc(&r->o_shard, c->dtype, B, Hq, L, D, ORDER_BHSD);
    shard_alloc(&r->do_shard, c->dtype, B, Hq, L, D, ORDER_BHSD);
    shard_alloc(&r->dq_shard, c->dtype, B, Hq, L, D, ORDER_BHSD);
    shard_alloc(&r->dk_shard, c->dtype, B, Hkv, L, D, c->kv_order);
    shard_alloc(&r->dv_shard, c->dtype, B, Hkv, L, D, c->kv_order);
    const sdpa_problem_desc_t *f = &r->full.desc;
    const sdpa_exec_args_t *fa = &r->full.args;
    take_shard(r, &f->q, fa->q, &r->q);
    take_shard(r, &f->k, fa->k, &r->k);
    take_shard(r, &f->v, fa->v, &r->v);
    take_shard(r, &f->diff_dst, fa->diff_dst, &r->do_shard);
    r->ws_bytes = (size_t)(B * Hq * L) * sizeof(float);
    r->ws = test_alloc(&suite_env, r->ws_bytes);

    /* The shard problems. */
    const test_tensor_t *t[ROLE_COUNT] = {&r->q,        &r->k,        &r->v,        &r->o_shard,
                                          &r->do_shard, &r->dq_shard, &r->dk_shard, &r->dv_shard};
    attention_problems(t, mask, &r->fwd, &r->bwd);
    r->bwd.deterministic = (uint32_t)c->deterministic;
    attention_exec_args(t, r->ws, fa->scale, &r->args);
}

static void run_close(cp_run_t *r)
{
    sdpa_cp_destroy(r->cp_fwd);
    sdpa_cp_destroy(r->cp_bwd);
    test_tensor_t *t[] = {&r->q,        &r->k,        &r->v,        &r->o_shard,
                          &r->do_shard, &r->dq_shard, &r->dk_shard, &r->dv_shard};
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        tensor_free(&suite_env, t[i]);
    test_free(&suite_env, r->ws);
    free(r->o);
    free(r->lse);
    free(r->dq);
    free(r->dk);
    free(r->dv);
    case_free(&r->full);
}

/* The desc of problem over MPI_COMM_WORLD on the suite's device. */
static sdpa_cp_desc_t world_desc(const sdpa_problem_desc_t *problem, sdpa_cp_layout_t layout)
{
    return (sdpa_cp_desc_t){.struct_size = sizeof(sdpa_cp_desc_t),
                            .struct_version = SDPA_CP_DESC_VERSION,
                            .comm = MPI_COMM_WORLD,
                            .backend = suite_env.ze,
                            .context = suite_env.ze_ctx,
                            .ze_context = suite_env.context,
                            .ze_device = suite_env.device,
                            .layout = layout,
                            .problem = problem};
}

/* Creates a cp object for problem (collective) and fails unless every rank
 * succeeded. */
static sdpa_cp_t *create(const cp_run_t *r, const sdpa_problem_desc_t *problem)
{
    sdpa_cp_desc_t d = world_desc(problem, r->c->layout);
    sdpa_cp_t *cp = NULL;
    double start = MPI_Wtime();
    sdpa_status_t status = sdpa_cp_create(&d, &cp);
    if (verbose())
        printf("rank %d: %s: sdpa_cp_create (%s) %.2f s\n", world_rank, r->c->name,
               problem->prop_kind == SDPA_BACKWARD ? "backward" : "forward", MPI_Wtime() - start);
    if (status != SDPA_SUCCESS)
        fprintf(stderr, "rank %d: %s: sdpa_cp_create: %s\n", world_rank, r->c->name,
                sdpa_cp_last_error());
    assert_everywhere(status == SDPA_SUCCESS, "sdpa_cp_create");
    ck_assert_msg(test_last_error_matches(status, sdpa_cp_last_error()), "sdpa_cp_last_error: %s",
                  sdpa_cp_last_error());
    return cp;
}

static void execute(const cp_run_t *r, sdpa_cp_t *cp, const sdpa_exec_args_t *a)
{
    sdpa_status_t status = sdpa_cp_execute(cp, a);
    if (status != SDPA_SUCCESS)
        fprintf(stderr, "rank %d: %s: sdpa_cp_execute: %s\n", world_rank, r->c->name,
                sdpa_cp_last_error());
    assert_everywhere(status == SDPA_SUCCESS, "sdpa_cp_execute");
    ck_assert_msg(test_last_error_matches(status, sdpa_cp_last_error()), "sdpa_cp_last_error: %s",
                  sdpa_cp_last_error());
}

/* ------------------------------------------------------------------------- */
/* Tolerances                                                                */
/* ------------------------------------------------------------------------- */

/* Inputs are k / 128 with |k| <= 255 (rng_exact): below 2 in magnitude. */
#define VALUE_BOUND 2.0

/* O. Each step's partial O is rounded once to the dtype (at most half a
 * unit of VALUE_BOUND, and the merge weights sum to 1), the merges are f32,
 * the f32 sums of the kernels err like the square root of their terms, and
 * the final O is rounded once more (the relative part). */
static void o_tolerance(const cp_run_t *r, double *rel, double *abs)
{
    double eps = sdpa_dtype_epsilon(r->c->dtype), e32 = 0x1.0p-24;
    double terms = sqrt((double)r->seq) + sqrt((double)r->c->head_size);
    *rel = eps;
    *abs = VALUE_BOUND * (eps + 8 * e32 * terms);
}

/* The log-sum-exp: f32 scores (D terms), and per merge one log and one exp
 * (N merges at most per row), relative to its magnitude. */
static void lse_tolerance(const cp_run_t *r, double *rel, double *abs)
{
    double e32 = 0x1.0p-24;
    double terms = sqrt((double)r->seq) + sqrt((double)r->c->head_size);
    *rel = 8 * e32 * world_size;
    *abs = 8 * e32 * terms * 4;
}

static double max_abs(const double *x, int64_t count)
{
    double m = 0;
    for (int64_t i = 0; i < count; i++)
        if (fabs(x[i]) > m)
            m = fabs(x[i]);
    return m;
}

/* A gradient of magnitude scale (its largest element, or the natural size
 * of its terms if larger): the f32 sums of the kernels (square root of the
 * terms), O rounded to the dtype where backward reads it back (D_i), and
 * the partial gradients of the tasks, each rounded to the dtype and summed
 * in f32 on the host: at most 2N of them per element. */
static void gradient_tolerance(const cp_run_t *r, double scale, double *rel, double *abs)
{
    double eps = sdpa_dtype_epsilon(r->c->dtype), e32 = 0x1.0p-24;
    double eps_o = r->c->dtype == SDPA_DTYPE_F32 ? 0 : eps;
    double terms = sqrt((double)(2 * r->seq + r->c->head_size));
    double parts = 2.0 * world_size;
    *rel = eps;
    *abs = 8 * scale * (e32 * terms + eps_o) + scale * eps * parts;
}

/* Compares shard (this rank's rows) with the oracle's rows; prints the
 * first mismatch. Returns 1 if it matches. */
static int compare_shard(const cp_run_t *r, const char *name, const test_tensor_t *shard,
                         const double *full, int64_t heads, double rel, double abs)
{
    char what[128];
    snprintf(what, sizeof(what), "rank %d: %s: %s", world_rank, r->c->name, name);
    double *want = expected_rows(r, full, heads, r->c->head_size);
    double worst = 0;
    int ok = compare_tensor(what, &shard->desc, shard->data, want, rel, abs, &worst);
    if (verbose())
        printf("%s: worst error %.3f of the tolerance\n", what, worst);
    free(want);
    return ok;
}

/* The cp workspace, f32 [C][B][Hq][c], against the oracle's log-sum-exp. */
static int compare_workspace(const cp_run_t *r)
{
    const int64_t C = r->c->layout == SDPA_CP_LAYOUT_ZIGZAG ? 2 : 1;
    const int64_t B = r->c->batch, Hq = r->c->q_heads, L = r->c->local_len, c = L / C;
    double *rows = expected_rows(r, r->lse, Hq, 1); /* [B][Hq][L] */
    double *want = doubles(B * Hq * L);
    for (int64_t a = 0; a < C; a++)
        for (int64_t bh = 0; bh < B * Hq; bh++)
            for (int64_t i = 0; i < c; i++)
                want[(a * B * Hq + bh) * c + i] = rows[bh * L + a * c + i];
    sdpa_tensor_desc_t desc = dense_tensor(SDPA_DTYPE_F32, C, B, Hq, c);
    char what[128];
    snprintf(what, sizeof(what), "rank %d: %s: workspace", world_rank, r->c->name);
    double rel, abs, worst = 0;
    lse_tolerance(r, &rel, &abs);
    int ok = compare_tensor(what, &desc, r->ws, want, rel, abs, &worst);
    if (verbose())
        printf("%s: worst error %.3f of the tolerance\n", what, worst);
    free(rows);
    free(want);
    return ok;
}

/* ------------------------------------------------------------------------- */
/* Running a case                                                            */
/* ------------------------------------------------------------------------- */

static void check_forward(const cp_run_t *r)
{
    double rel, abs;
    o_tolerance(r, &rel, &abs);
    int ok = compare_shard(r, "O", &r->o_shard, r->o, r->c->q_heads, rel, abs);
    assert_everywhere(ok, "forward O against the oracle");
    assert_everywhere(compare_workspace(r), "forward log-sum-exp against the oracle");
}

static void check_backward(const cp_run_t *r)
{
    const int64_t B = r->c->batch, Hq = r->c->q_heads, Hkv = r->c->kv_heads, S = r->seq,
                  D = r->c->head_size;
    /* The natural sizes of the gradients' terms (tests/sdpa/bwd_case.c). */
    double scale = r->full.args.scale;
    double dp = VALUE_BOUND * VALUE_BOUND * sqrt((double)D);
    double natural_dq = scale * dp * VALUE_BOUND * sqrt((double)S);
    double natural_dv = VALUE_BOUND * sqrt((double)S);
    struct {
        const char *name;
        const test_tensor_t *shard;
        const double *full;
        int64_t heads, count;
        double natural;
    } g[3] = {{"dQ", &r->dq_shard, r->dq, Hq, B * Hq * S * D, natural_dq},
              {"dK", &r->dk_shard, r->dk, Hkv, B * Hkv * S * D, natural_dq},
              {"dV", &r->dv_shard, r->dv, Hkv, B * Hkv * S * D, natural_dv}};
    for (int i = 0; i < 3; i++) {
        double magnitude = max_abs(g[i].full, g[i].count), rel, abs;
        (void)g[i].natural;
        gradient_tolerance(r, magnitude, &rel, &abs);
        int ok = compare_shard(r, g[i].name, g[i].shard, g[i].full, g[i].heads, rel, abs);
        char what[64];
        snprintf(what, sizeof(what), "backward %s against the oracle", g[i].name);
        assert_everywhere(ok, what);
    }
}

/* Saves the bytes of t. */
static void *snapshot(const void *data, size_t bytes)
{
    void *copy = malloc(bytes);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, data, bytes);
    return copy;
}

static int same_bytes(const void *copy, const test_tensor_t *t)
{
    return memcmp(copy, t->data, t->bytes) == 0;
}

/* Forward and backward of c, checked; with deterministic, each run twice
 * and compared bit for bit. */
static void run_case(const cp_case_t *c, uint64_t seed)
{
    cp_run_t r;
    run_open(&r, c, seed);
    r.cp_fwd = create(&r, &r.fwd);
    execute(&r, r.cp_fwd, &r.args);
    check_forward(&r);
    r.cp_bwd = create(&r, &r.bwd);
    execute(&r, r.cp_bwd, &r.args);
    check_backward(&r);
    if (c->deterministic) {
        void *o = snapshot(r.o_shard.data, r.o_shard.bytes), *ws = snapshot(r.ws, r.ws_bytes);
        void *dq = snapshot(r.dq_shard.data, r.dq_shard.bytes);
        void *dk = snapshot(r.dk_shard.data, r.dk_shard.bytes);
        void *dv = snapshot(r.dv_shard.data, r.dv_shard.bytes);
        memset(r.o_shard.data, 0xff, r.o_shard.bytes);
        memset(r.dq_shard.data, 0xff, r.dq_shard.bytes);
        execute(&r, r.cp_fwd, &r.args);
        int same_fwd = same_bytes(o, &r.o_shard) && memcmp(ws, r.ws, r.ws_bytes) == 0;
        execute(&r, r.cp_bwd, &r.args);
        int same_bwd = same_bytes(dq, &r.dq_shard) && same_bytes(dk, &r.dk_shard) &&
                       same_bytes(dv, &r.dv_shard);
        free(o);
        free(ws);
        free(dq);
        free(dk);
        free(dv);
        assert_everywhere(same_fwd, "forward bit-identical across runs");
        assert_everywhere(same_bwd, "deterministic backward bit-identical across runs");
    }
    run_close(&r);
}

/* ------------------------------------------------------------------------- */
/* Tests                                                                     */
/* ------------------------------------------------------------------------- */

/* Causal, balanced (zigzag), f16, grouped-query heads, deterministic. */
START_TEST(test_zigzag_causal_f16)
{
    static const cp_case_t c = {"zigzag causal f16 GQA", SDPA_CP_LAYOUT_ZIGZAG, 1, SDPA_DTYPE_F16,
                                1, 4, 2, 32, 32, ORDER_BHSD, 1};
    run_case(&c, 18);
}
END_TEST

/* Without a mask, bf16, batch 2, K/V (and dK/dV) strided as views of a
 * [B, S, H, D] projection, the atomic backward. */
START_TEST(test_contiguous_bf16_strided)
{
    static const cp_case_t c = {"contiguous bf16 strided K/V", SDPA_CP_LAYOUT_CONTIGUOUS, 0,
                                SDPA_DTYPE_BF16, 2, 2, 2, 16, 32, ORDER_BSHD, 0};
    run_case(&c, 19);
}
END_TEST

/* Causal over contiguous shards (correct, unbalanced), f32. */
START_TEST(test_contiguous_causal_f32)
{
    static const cp_case_t c = {"contiguous causal f32", SDPA_CP_LAYOUT_CONTIGUOUS, 1,
                                SDPA_DTYPE_F32, 1, 2, 1, 24, 32, ORDER_BHSD, 1};
    run_case(&c, 20);
}
END_TEST

/* ------------------------------------------------------------------------- */
/* Refusals                                                                  */
/* ------------------------------------------------------------------------- */

/* A valid desc of a small f32 shard (forward inference, no mask). */
static void valid_desc(sdpa_cp_desc_t *d, sdpa_problem_desc_t *p)
{
    problem_init(p, SDPA_FORWARD_INFERENCE, 1, 2, 1, 8, 8, 32, SDPA_DTYPE_F32, SDPA_DTYPE_F32);
    *d = world_desc(p, SDPA_CP_LAYOUT_ZIGZAG);
}

/* sdpa_cp_create(d) fails with want on every rank, NULL in *out, and this
 * rank's message contains needle (NULL: any message). */
static void expect_refusal(const sdpa_cp_desc_t *d, sdpa_status_t want, const char *needle)
{
    sdpa_cp_t *cp = (sdpa_cp_t *)&cp; /* not NULL: create must clear it */
    sdpa_status_t got = sdpa_cp_create(d, &cp);
    const char *message = sdpa_cp_last_error();
    int ok = got == want && cp == NULL && (needle == NULL || strstr(message, needle) != NULL);
    if (!ok)
        fprintf(stderr, "rank %d: expected %s with \"%s\", got %s: %s\n", world_rank,
                sdpa_status_name(want), needle ? needle : "", sdpa_status_name(got), message);
    if (got == SDPA_SUCCESS)
        sdpa_cp_destroy(cp);
    assert_everywhere(ok, needle ? needle : "refusal");
}

/* Bad descs and arguments: a status and a message naming the field on every
 * rank, also when only one rank is wrong, and nobody left waiting. */
START_TEST(test_refusals)
{
    sdpa_cp_desc_t d;
    sdpa_problem_desc_t p;
    sdpa_cp_t *cp = NULL;

    /* Local: nothing to talk to the other ranks with. */
    ck_assert_int_eq(sdpa_cp_create(NULL, &cp), SDPA_ERROR_INVALID_ARGUMENT);
    valid_desc(&d, &p);
    d.struct_size = 8;
    ck_assert_int_eq(sdpa_cp_create(&d, &cp), SDPA_ERROR_INVALID_STRUCT);
    ck_assert_ptr_null(cp);

    valid_desc(&d, &p);
    p.prop_kind = SDPA_FORWARD_TRAINING;
    p.dropout.enabled = 1;
    expect_refusal(&d, SDPA_ERROR_UNSUPPORTED, "problem->dropout.enabled");
    valid_desc(&d, &p);
    p.mask_kind = SDPA_MASK_BUFFER;
    p.mask = dense_tensor(SDPA_DTYPE_F32, 1, 1, 8, 8);
    expect_refusal(&d, SDPA_ERROR_UNSUPPORTED, "mask_kind = BUFFER");
    valid_desc(&d, &p);
    p.k.dtype = p.v.dtype = SDPA_DTYPE_F16;
    expect_refusal(&d, SDPA_ERROR_UNSUPPORTED, "problem->k.dtype");
    valid_desc(&d, &p);
    problem_init(&p, SDPA_FORWARD_INFERENCE, 1, 2, 1, 7, 7, 32, SDPA_DTYPE_F32, SDPA_DTYPE_F32);
    expect_refusal(&d, SDPA_ERROR_INVALID_ARGUMENT, "is odd");
#if SDPA_PROBLEM_DESC_VERSION >= 2
    valid_desc(&d, &p);
    p.window.enabled = 1;
    p.window.left = 2;
    p.window.right = 0;
    expect_refusal(&d, SDPA_ERROR_UNSUPPORTED, "problem->window.enabled = 1");
#endif
    valid_desc(&d, &p);
    d.layout = (sdpa_cp_layout_t)7;
    expect_refusal(&d, SDPA_ERROR_INVALID_ARGUMENT, "desc->layout = 7");
    valid_desc(&d, &p);
    d.timeout_seconds = -1;
    expect_refusal(&d, SDPA_ERROR_INVALID_ARGUMENT, "desc->timeout_seconds = -1");
    valid_desc(&d, &p);
    d.timeout_seconds = NAN;
    expect_refusal(&d, SDPA_ERROR_INVALID_ARGUMENT, "desc->timeout_seconds = nan");
    valid_desc(&d, &p);
    setenv("SDPA_CP_TIMEOUT", "soon", 1);
    expect_refusal(&d, SDPA_ERROR_INVALID_CONFIG, "SDPA_CP_TIMEOUT=soon");
    unsetenv("SDPA_CP_TIMEOUT");

    /* One rank wrong: the others fail too, naming it. */
    valid_desc(&d, &p);
    if (world_rank == world_size - 1)
        d.backend = NULL;
    char other[64];
    snprintf(other, sizeof(other), "rank %d failed", world_size - 1);
    expect_refusal(&d, SDPA_ERROR_INVALID_ARGUMENT,
                   world_rank == world_size - 1 ? "desc->backend is NULL" : other);
    /* Ranks that disagree on the problem. */
    if (world_size > 1) {
        valid_desc(&d, &p);
        if (world_rank == 0)
            problem_init(&p, SDPA_FORWARD_INFERENCE, 1, 4, 1, 8, 8, 32, SDPA_DTYPE_F32,
                         SDPA_DTYPE_F32);
        expect_refusal(&d, SDPA_ERROR_INVALID_ARGUMENT, "query heads) differs between ranks");
    }

    /* A version 1 desc (without timeout_seconds) is served. */
    valid_desc(&d, &p);
    d.struct_version = 1;
    d.struct_size = offsetof(sdpa_cp_desc_t, timeout_seconds);
    sdpa_status_t status = sdpa_cp_create(&d, &cp);
    assert_everywhere(status == SDPA_SUCCESS, "sdpa_cp_create of a version 1 desc");
    sdpa_cp_destroy(cp);
    cp = NULL;

    /* Execution arguments and queries. */
    valid_desc(&d, &p);
    status = sdpa_cp_create(&d, &cp);
    assert_everywhere(status == SDPA_SUCCESS, "sdpa_cp_create of a valid desc");
    sdpa_exec_args_t a = {.struct_size = sizeof(a), .struct_version = SDPA_EXEC_ARGS_VERSION};
    status = sdpa_cp_execute(cp, &a); /* q is NULL */
    assert_everywhere(status == SDPA_ERROR_INVALID_ARGUMENT, "sdpa_cp_execute without q");
    size_t bytes = 1;
    ck_assert_int_eq(sdpa_cp_query(cp, SDPA_CP_QUERY_WORKSPACE_BYTES, &bytes, sizeof(bytes)),
                     SDPA_SUCCESS);
    ck_assert_str_eq(sdpa_cp_last_error(), ""); /* the failed execute's message is gone */
    ck_assert_uint_eq(bytes, 0); /* inference */
    ck_assert_int_eq(sdpa_cp_query(cp, (sdpa_cp_query_t)99, &bytes, sizeof(bytes)),
                     SDPA_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(sdpa_cp_last_error(), "what = 99"));
    char transport[160];
    ck_assert_int_eq(sdpa_cp_query(cp, SDPA_CP_QUERY_TRANSPORT, transport, sizeof(transport)),
                     SDPA_SUCCESS);
    ck_assert_ptr_nonnull(strstr(transport, "host-staged"));
    int peer = 7;
    ck_assert_int_eq(sdpa_cp_query(cp, SDPA_CP_QUERY_FAILED_PEER, &peer, sizeof(peer)),
                     SDPA_SUCCESS);
    ck_assert_int_eq(peer, -1); /* no timeout, nothing broken */
    sdpa_cp_stats_t st = {.struct_size = 4, .struct_version = SDPA_CP_STATS_VERSION};
    ck_assert_int_eq(sdpa_cp_get_stats(cp, &st), SDPA_ERROR_INVALID_STRUCT);
    sdpa_cp_destroy(cp);
    ck_assert_int_eq(sdpa_cp_global_token(SDPA_CP_LAYOUT_ZIGZAG, 2, 0, 7, 0), -1);
}
END_TEST

/* ------------------------------------------------------------------------- */
/* A peer that never comes                                                   */
/* ------------------------------------------------------------------------- */

/* The object's timeout, and the most a rank may take to give up from its
 * call: the timeout, the device's small work and 4 ranks sharing 2 cores. */
#define TIMEOUT_SECONDS 2.0
#define GIVE_UP_BOUND (TIMEOUT_SECONDS + 4.0)

/* A small forward (or backward) on every rank with a timeout, and its
 * tensors (zeros: only the statuses matter here). */
typedef struct timed_run {
    sdpa_problem_desc_t p;
    test_tensor_t t[8]; /* q, k, v, dst, then diff_dst, diff_q, diff_k, diff_v */
    int tensors;
    float *ws;
    sdpa_exec_args_t a;
    sdpa_cp_t *cp;
} timed_run_t;

static void timed_open(timed_run_t *t, sdpa_prop_kind_t prop)
{
    sdpa_cp_desc_t d;
    memset(t, 0, sizeof(*t));
    valid_desc(&d, &t->p);
    problem_init(&t->p, prop, 1, 2, 1, 8, 8, 32, SDPA_DTYPE_F32, SDPA_DTYPE_F32);
    d.timeout_seconds = TIMEOUT_SECONDS;
    const sdpa_tensor_desc_t *desc[8] = {&t->p.q,        &t->p.k,      &t->p.v,
                                         &t->p.dst,      &t->p.diff_dst, &t->p.diff_q,
                                         &t->p.diff_k,   &t->p.diff_v};
    t->tensors = prop == SDPA_BACKWARD ? 8 : 4;
    for (int i = 0; i < t->tensors; i++) {
        tensor_alloc(&suite_env, &t->t[i], desc[i]);
        memset(t->t[i].data, 0, t->t[i].bytes);
    }
    const size_t ws_bytes = 2 * 8 * sizeof(float); /* B Hq L */
    t->ws = test_alloc(&suite_env, ws_bytes);
    memset(t->ws, 0, ws_bytes);
    t->a = (sdpa_exec_args_t){.struct_size = sizeof(t->a),
                              .struct_version = SDPA_EXEC_ARGS_VERSION,
                              .q = t->t[0].data,
                              .k = t->t[1].data,
                              .v = t->t[2].data,
                              .dst = t->t[3].data,
                              .workspace = prop == SDPA_FORWARD_INFERENCE ? NULL : t->ws,
                              .scale = 0.125f};
    if (prop == SDPA_BACKWARD) {
        t->a.diff_dst = t->t[4].data;
        t->a.diff_q = t->t[5].data;
        t->a.diff_k = t->t[6].data;
        t->a.diff_v = t->t[7].data;
    }
    sdpa_status_t status = sdpa_cp_create(&d, &t->cp);
    if (status != SDPA_SUCCESS)
        fprintf(stderr, "rank %d: sdpa_cp_create: %s\n", world_rank, sdpa_cp_last_error());
    assert_everywhere(status == SDPA_SUCCESS, "sdpa_cp_create with a timeout");
    int peer = 7;
    ck_assert_int_eq(sdpa_cp_query(t->cp, SDPA_CP_QUERY_FAILED_PEER, &peer, sizeof(peer)),
                     SDPA_SUCCESS);
    ck_assert_int_eq(peer, -1);
    /* A healthy execution with the timeout on: the polled waits work. */
    status = sdpa_cp_execute(t->cp, &t->a);
    if (status != SDPA_SUCCESS)
        fprintf(stderr, "rank %d: sdpa_cp_execute: %s\n", world_rank, sdpa_cp_last_error());
    assert_everywhere(status == SDPA_SUCCESS, "a healthy execution");
}

static void timed_close(timed_run_t *t)
{
    sdpa_cp_destroy(t->cp);
    for (int i = 0; i < t->tensors; i++)
        tensor_free(&suite_env, &t->t[i]);
    test_free(&suite_env, t->ws);
}

/* Executes, and checks that it gave up in time naming peer (-1: any other
 * rank) with a message containing needle. Returns 1 if so. */
static int expect_give_up(timed_run_t *t, int peer, const char *needle, double bound)
{
    double start = MPI_Wtime();
    sdpa_status_t status = sdpa_cp_execute(t->cp, &t->a);
    double took = MPI_Wtime() - start;
    char message[1024];
    snprintf(message, sizeof(message), "%s", sdpa_cp_last_error());
    int named = -2;
    sdpa_cp_query(t->cp, SDPA_CP_QUERY_FAILED_PEER, &named, sizeof(named));
    int ok = status == SDPA_ERROR_DEVICE && took <= bound &&
             (peer >= 0 ? named == peer : named >= 0 && named < world_size && named != world_rank) &&
             strstr(message, needle) != NULL;
    if (!ok || verbose())
        fprintf(stderr, "rank %d: gave up after %.2f s (bound %.1f), %s, peer %d (want %d): %s\n",
                world_rank, took, bound, sdpa_status_name(status), named, peer, message);
    return ok;
}

/* Later executions of a broken object fail at once, on every rank. */
static void expect_broken(timed_run_t *t)
{
    double start = MPI_Wtime();
    sdpa_status_t status = sdpa_cp_execute(t->cp, &t->a);
    int ok = status == SDPA_ERROR_DEVICE && MPI_Wtime() - start < 0.5 &&
             strstr(sdpa_cp_last_error(), "broke in an earlier execution") != NULL;
    if (!ok)
        fprintf(stderr, "rank %d: a broken object's execution: %s: %s\n", world_rank,
                sdpa_status_name(status), sdpa_cp_last_error());
    assert_everywhere(ok, "a broken object fails at once");
}

/* The last rank does not call execute: the others give up naming it. It
 * then calls (pairing with their abandoned call, the "skipped one
 * collective" case) and gives up too, within the bound, instead of
 * hanging. */
START_TEST(test_timeout_absent_rank)
{
    timed_run_t t;
    timed_open(&t, SDPA_FORWARD_INFERENCE);
    const int absent = world_size - 1;
    int ok = 1;
    char needle[32];
    snprintf(needle, sizeof(needle), "for rank %d", absent);
    if (world_rank != absent)
        ok = expect_give_up(&t, absent, needle, GIVE_UP_BOUND);
    MPI_Barrier(MPI_COMM_WORLD);
    if (world_rank == absent)
        ok = expect_give_up(&t, -1, "waited", GIVE_UP_BOUND);
    assert_everywhere(ok, "every rank gives up in time, naming the absent rank");
    expect_broken(&t);
    timed_close(&t);
}
END_TEST

/* One rank stops (SIGSTOP) before executing: the others give up naming it,
 * then (once all of them have) resume it (SIGCONT); it gives up too. */
START_TEST(test_timeout_stopped_rank)
{
    timed_run_t t;
    timed_open(&t, SDPA_FORWARD_INFERENCE);
    const int stopped = world_size / 2;
    int pid = (int)getpid(), stopped_pid = 0;
    MPI_Allreduce(world_rank == stopped ? &pid : &stopped_pid, &stopped_pid, 1, MPI_INT, MPI_MAX,
                  MPI_COMM_WORLD);
    MPI_Comm others;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank == stopped, world_rank, &others);
    int ok;
    char needle[32];
    snprintf(needle, sizeof(needle), "for rank %d", stopped);
    if (world_rank == stopped) {
        raise(SIGSTOP);
        ok = expect_give_up(&t, -1, "waited", GIVE_UP_BOUND);
    } else {
        ok = expect_give_up(&t, stopped, needle, GIVE_UP_BOUND);
        MPI_Barrier(others);
        kill((pid_t)stopped_pid, SIGCONT);
    }
    MPI_Comm_free(&others);
    assert_everywhere(ok, "every rank gives up in time, naming the stopped rank");
    expect_broken(&t);
    timed_close(&t);
}
END_TEST

typedef struct late_signal {
    ze_event_handle_t event;
    double seconds;
} late_signal_t;

static void *signal_late(void *arg)
{
    const late_signal_t *late = arg;
    usleep((useconds_t)(late->seconds * 1e6));
    zeEventHostSignal(late->event);
    return NULL;
}

/* One rank's device waits (for an event its host signals after 3 timeouts)
 * after every rank has arrived: its successor gives up in the ring naming
 * it, the others each name the peer they waited for; it gives up too. */
static void timeout_in_ring(sdpa_prop_kind_t prop)
{
    timed_run_t t;
    timed_open(&t, prop);
    const int late = world_size - 1, successor = (late + 1) % world_size;
    ze_event_pool_desc_t pd = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
                               .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
                               .count = 1};
    ze_event_pool_handle_t pool = NULL;
    ze_event_handle_t event = NULL;
    ck_assert_int_eq(zeEventPoolCreate(suite_env.context, &pd, 1, &suite_env.device, &pool),
                     ZE_RESULT_SUCCESS);
    ze_event_desc_t ed = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC,
                          .signal = ZE_EVENT_SCOPE_FLAG_HOST,
                          .wait = ZE_EVENT_SCOPE_FLAG_HOST};
    ck_assert_int_eq(zeEventCreate(pool, &ed, &event), ZE_RESULT_SUCCESS);
    late_signal_t signal = {event, 3 * TIMEOUT_SECONDS};
    pthread_t thread;
    int ok;
    if (world_rank == late) {
        t.a.num_wait_events = 1;
        t.a.wait_events = &event;
        ck_assert_int_eq(pthread_create(&thread, NULL, signal_late, &signal), 0);
        ok = expect_give_up(&t, -1, "", signal.seconds + GIVE_UP_BOUND);
        pthread_join(thread, NULL);
    } else if (world_rank == successor) {
        ok = expect_give_up(&t, late, "K/V block", GIVE_UP_BOUND);
    } else {
        ok = expect_give_up(&t, -1, "", GIVE_UP_BOUND);
    }
    t.a.num_wait_events = 0;
    t.a.wait_events = NULL;
    assert_everywhere(ok, "every rank gives up in time, the late rank's successor naming it");
    expect_broken(&t);
    timed_close(&t);
    zeEventDestroy(event);
    zeEventPoolDestroy(pool);
}

START_TEST(test_timeout_in_ring)
{
    timeout_in_ring(SDPA_FORWARD_TRAINING);
}
END_TEST

START_TEST(test_timeout_in_backward_ring)
{
    timeout_in_ring(SDPA_BACKWARD);
}
END_TEST

/* One test case per case, tagged with its name, so that the runs with
 * different numbers of ranks (cp/run-mpi.sh) pick theirs by CK_INCLUDE_TAGS
 * and one case can be run alone (CK_RUN_CASE). */
static void add_case(Suite *s, const char *name, const TTest *test)
{
    TCase *t = tcase_create(name);
    tcase_set_tags(t, name);
    tcase_add_unchecked_fixture(t, test_env_fixture, NULL);
    tcase_set_timeout(t, 600);
    tcase_add_test(t, test);
    suite_add_tcase(s, t);
}

static Suite *cp_suite(void)
{
    Suite *s = suite_create("context-parallel attention");
    add_case(s, "zigzag", test_zigzag_causal_f16);
    add_case(s, "strided", test_contiguous_bf16_strided);
    add_case(s, "causal_f32", test_contiguous_causal_f32);
    add_case(s, "refusals", test_refusals);
    add_case(s, "timeout_absent", test_timeout_absent_rank);
    add_case(s, "timeout_stopped", test_timeout_stopped_rank);
    add_case(s, "timeout_ring", test_timeout_in_ring);
    add_case(s, "timeout_backward", test_timeout_in_backward_ring);
    return s;
}

int main(int argc, char **argv)
{
    /* Either order of zeInit and MPI_Init works. CP_TEST_MPI_FIRST set:
     * MPI_Init first, as frameworks do (cp/ring-*ranks-mpi-first.sh), where
     * Open MPI's hwloc loads the OpenCL ICD loader before the CPU driver
     * can point it at its engine; otherwise zeInit first. */
    if (mpi_first()) {
        MPI_Init(&argc, &argv);
        if (zeInit(0) != ZE_RESULT_SUCCESS)
            fprintf(stderr, "zeInit after MPI_Init failed\n");
    } else {
        if (zeInit(0) != ZE_RESULT_SUCCESS)
            fprintf(stderr, "zeInit failed\n");
        MPI_Init(&argc, &argv);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    SRunner *runner = srunner_create(cp_suite());
    srunner_set_fork_status(runner, CK_NOFORK);
    srunner_run_all(runner, world_rank == 0 ? CK_NORMAL : CK_SILENT);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    test_env_close(&suite_env);
    MPI_Finalize();
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
