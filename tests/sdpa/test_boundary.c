/*
 * test_boundary.c - the ABI boundary as a framework meets it (issue 8),
 * through sdpa.h only, on the ze and the ref backend, each against the
 * independent double-precision oracle of tests/abi/abi_util.c:
 *
 *   - fully masked rows (an additive mask with whole rows of -inf, and
 *     causal bottom-right with Sq > Sk), both softmax modes, f32, f16 and
 *     bf16, backward atomic and deterministic: a training forward, then a
 *     backward from that forward's own O and workspace. The workspace holds
 *     -inf for those rows, backward treats them as probabilities of 0 (dQ
 *     and dS rows 0) and no NaN reaches dK or dV;
 *   - pointers as frameworks pass them (a 64-byte aligned allocation, views
 *     1, 3 and D elements into it) for every tensor of a forward and a
 *     backward: q, k, v, dst, mask, workspace, dO and the gradients.
 *
 * ref runs the whole matrix of the first item. On ze every module build
 * costs seconds, so ze runs six cells that contain every pair of factor
 * levels, and the pointer cases reuse three of those cells' modules.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi_util.h"
#include "ze_env.h"

/* One backend under test: ze, or ref (on the same shared USM). */
typedef struct backend {
    const char *name;
    const sdpa_backend_iface_t *iface;
    sdpa_context_t *ctx;
} backend_t;

static backend_t backend_of(int is_ze)
{
    return is_ze ? (backend_t){"ze", suite_env.ze, suite_env.ze_ctx}
                 : (backend_t){"ref", suite_env.ref, suite_env.ref_ctx};
}

static const test_allocator_t shared_allocator = {suite_shared_alloc, suite_shared_release, NULL};

/* Creates a primitive for desc on be, executes args, destroys it. */
static void run(const backend_t *be, const sdpa_problem_desc_t *desc, const sdpa_exec_args_t *args,
                const char *what)
{
    sdpa_primitive_t *prim = NULL;
    sdpa_status_t status = be->iface->primitive_create(be->ctx, desc, &prim);
    ck_assert_msg(status == SDPA_SUCCESS, "%s on %s: primitive_create: %s: %s", what, be->name,
                  sdpa_status_name(status), be->iface->last_error());
    status = be->iface->primitive_execute(prim, args);
    be->iface->primitive_destroy(prim);
    ck_assert_msg(status == SDPA_SUCCESS, "%s on %s: primitive_execute: %s: %s", what, be->name,
                  sdpa_status_name(status), be->iface->last_error());
}

/* ------------------------------------------------------------------------- */
/* Tolerances                                                                */
/* ------------------------------------------------------------------------- */

static double *doubles(int64_t count)
{
    double *p = malloc(sizeof(double) * (size_t)(count > 0 ? count : 1));
    ck_assert_ptr_nonnull(p);
    return p;
}

/* Largest finite |x[e]|. */
static double max_abs(const double *x, int64_t count)
{
    double m = 0;
    for (int64_t e = 0; e < count; e++)
        if (isfinite(x[e]) && fabs(x[e]) > m)
            m = fabs(x[e]);
    return m;
}

/* The magnitudes the results are built from, independent of cancellation:
 * |dP| <= max|dO| max|V| sqrt(D)-ish sums; dQ and dK multiply dS by the
 * score multiplier and max|K| or max|Q| over Sk or Sq terms; dV sums
 * probabilities (at most 1 per query) times dO. */
typedef struct magnitudes {
    double o, lse, dq, dk, dv, ds;
} magnitudes_t;

static magnitudes_t magnitudes_of(const oracle_t *o)
{
    const int64_t nq = o->B * o->Hq * o->Sq * o->D, nk = o->B * o->Hkv * o->Sk * o->D;
    const double q = max_abs(o->q, nq), k = max_abs(o->k, nk), v = max_abs(o->v, nk);
    const double dout = o->dout ? max_abs(o->dout, nq) : 0;
    magnitudes_t m;
    m.o = v;
    m.lse = fabs(o->scale) * q * k * (double)o->D + log((double)o->Sk) + 1;
    m.ds = dout * v * sqrt((double)o->D);
    m.dq = fabs(o->scale) * m.ds * k * sqrt((double)o->Sk);
    m.dk = fabs(o->scale) * m.ds * q * sqrt((double)o->Sq);
    m.dv = dout * sqrt((double)o->Sq);
    return m;
}

/* ze's tolerance for a result of dtype dt: one unit in the last place of dt
 * relative, plus f32 rounding growing with the square root of the reduction
 * lengths and, where the result reads O back (D_i = rowsum(dO o O) in
 * backward), the rounding of O to its dtype, relative to the larger of the
 * result's largest element and the magnitude of its terms. */
static void ze_tolerance(const oracle_t *o, sdpa_dtype_t dt, const double *want, int64_t count,
                         double terms_magnitude, int reads_o, double *rel, double *abs)
{
    const double terms = sqrt((double)(o->Sq + o->Sk + o->D));
    const double eps_o = reads_o && dt != SDPA_DTYPE_F32 ? dtype_rel_tolerance(dt) : 0;
    double magnitude = max_abs(want, count);
    if (terms_magnitude > magnitude)
        magnitude = terms_magnitude;
    *rel = dtype_rel_tolerance(dt);
    *abs = 8 * magnitude * (0x1p-24 * terms + eps_o) + dtype_abs_tolerance(dt);
}

/* Asserts that t (written by be) matches the oracle's want: ref within one
 * correct rounding, ze within ze_tolerance. NaN must meet NaN, -inf -inf. */
static void check_result(const backend_t *be, const oracle_t *o, const char *what, const char *name,
                         const sdpa_tensor_desc_t *t, const void *got, const double *want,
                         double terms_magnitude, int reads_o)
{
    int ok;
    if (strcmp(be->name, "ref") == 0) {
        ok = compare_rounded(name, t, got, want);
    } else {
        double rel, abs;
        const int64_t count = t->dims[0] * t->dims[1] * t->dims[2] * t->dims[3];
        ze_tolerance(o, t->dtype, want, count, terms_magnitude, reads_o, &rel, &abs);
        ok = compare_tensor(name, t, got, want, rel, abs, NULL);
    }
    ck_assert_msg(ok, "%s on %s: %s differs from the oracle (first difference above)", what,
                  be->name, name);
}

/* ------------------------------------------------------------------------- */
/* A training step checked against the oracle                               */
/* ------------------------------------------------------------------------- */

/* Runs the training forward of c (its desc is the backward problem) on be,
 * then the backward from that forward's O and workspace, and checks O, the
 * workspace and every gradient against the oracle. */
static void check_training_step(const backend_t *be, attn_case_t *c, const char *what)
{
    const sdpa_problem_desc_t *d = &c->desc;
    sdpa_problem_desc_t fwd = *d;
    fwd.prop_kind = SDPA_FORWARD_TRAINING;
    run(be, &fwd, &c->args, what);

    oracle_t o;
    oracle_init(&o, c);
    const magnitudes_t m = magnitudes_of(&o);
    const int64_t rows = o.B * o.Hq * o.Sq;
    double *out = doubles(rows * o.D), *lse = doubles(rows);
    oracle_forward(&o, out, lse);
    check_result(be, &o, what, "O", &d->dst, c->args.dst, out, m.o, 0);
    sdpa_tensor_desc_t ws = dense_tensor(SDPA_DTYPE_F32, o.B, o.Hq, o.Sq, 1);
    check_result(be, &o, what, "workspace (log-sum-exp)", &ws, c->args.workspace, lse, m.lse, 0);

    run(be, d, &c->args, what);
    const int64_t nk = o.B * o.Hkv * o.Sk * o.D;
    double *dq = doubles(rows * o.D), *dk = doubles(nk), *dv = doubles(nk);
    double *ds = doubles(rows * o.Sk);
    oracle_backward(&o, dq, dk, dv, ds);
    check_result(be, &o, what, "dQ", &d->diff_q, c->args.diff_q, dq, m.dq, 1);
    check_result(be, &o, what, "dK", &d->diff_k, c->args.diff_k, dk, m.dk, 1);
    check_result(be, &o, what, "dV", &d->diff_v, c->args.diff_v, dv, m.dv, 1);
    if (d->ds.dtype != SDPA_DTYPE_UNDEF)
        check_result(be, &o, what, "dS", &d->ds, c->args.ds, ds, m.ds, 1);
    free(dq);
    free(dk);
    free(dv);
    free(ds);
    free(out);
    free(lse);
    oracle_free(&o);
}

/* ------------------------------------------------------------------------- */
/* Fully masked rows                                                         */
/* ------------------------------------------------------------------------- */

/* How some queries come to see no key. */
typedef enum dead_rows {
    DEAD_BY_MASK,   /* additive mask buffer, whole rows of -inf */
    DEAD_BY_CAUSAL, /* causal bottom-right with Sq > Sk */
} dead_rows_t;

/* B1 Hq2 Hkv1 (GQA: dK and dV sum both query heads, dead rows included)
 * Sq23 D64 (rows of 128 bytes in f16, the size the old forward wanted its
 * pointers aligned to); Sk25 with the mask, Sk13 causal bottom-right (query
 * i sees keys j <= i - 10: queries 0..9 see none). */
enum { BATCH = 1, HQ = 2, HKV = 1, SQ = 23, SK_MASK = 25, SK_CAUSAL = 13, HEAD = 64 };

/* Rows (head, query) whose mask is -inf for every key. */
static const int dead_mask_rows[][2] = {{0, 0}, {0, 5}, {0, 22}, {1, 7}, {1, 22}};
#define DEAD_MASK_ROWS (sizeof(dead_mask_rows) / sizeof(dead_mask_rows[0]))

/* The backward problem of a group (dS requested, in the gradients' dtype). */
static void dead_rows_problem(sdpa_problem_desc_t *d, dead_rows_t how, sdpa_dtype_t dt,
                              sdpa_softmax_kind_t softmax, int deterministic)
{
    const int64_t sk = how == DEAD_BY_MASK ? SK_MASK : SK_CAUSAL;
    problem_init(d, SDPA_BACKWARD, BATCH, HQ, HKV, SQ, sk, HEAD, dt, dt);
    if (how == DEAD_BY_MASK) {
        d->mask_kind = SDPA_MASK_BUFFER;
        d->mask = dense_tensor(dt, BATCH, HQ, SQ, sk);
    } else {
        d->mask_kind = SDPA_MASK_CAUSAL_BOTTOM_RIGHT;
    }
    d->softmax_kind = softmax;
    d->ds = dense_tensor(dt, BATCH, HQ, SQ, sk);
    d->deterministic = (uint32_t)deterministic;
}

/* Masks every key of the rows in dead_mask_rows (the other rows keep
 * case_alloc's random mask, some -inf among finite values). */
static void kill_mask_rows(attn_case_t *c)
{
    const sdpa_tensor_desc_t *m = &c->desc.mask;
    for (size_t r = 0; r < DEAD_MASK_ROWS; r++)
        for (int64_t j = 0; j < m->dims[3]; j++)
            tensor_set(m, (void *)c->args.mask, 0, dead_mask_rows[r][0], dead_mask_rows[r][1], j,
                       -INFINITY);
}

/* Asserts what the issue saw go wrong, in so many words: the workspace of
 * a dead row is -inf, its dQ and dS rows are 0, and no dK or dV element is
 * NaN. (check_training_step compares everything; this names the rule.) */
static void check_dead_rows(const backend_t *be, const attn_case_t *c, const char *what)
{
    const sdpa_problem_desc_t *d = &c->desc;
    const float *lse = c->args.workspace;
    int dead = 0;
    for (int64_t h = 0; h < HQ; h++)
        for (int64_t i = 0; i < SQ; i++) {
            const float l = lse[h * SQ + i];
            if (!(isinf(l) && l < 0))
                continue;
            dead++;
            for (int64_t e = 0; e < HEAD; e++)
                ck_assert_msg(tensor_get(&d->diff_q, c->args.diff_q, 0, h, i, e) == 0.0,
                              "%s on %s: dQ of dead row (%lld, %lld) is not 0", what, be->name,
                              (long long)h, (long long)i);
            for (int64_t j = 0; j < d->k.dims[2]; j++)
                ck_assert_msg(tensor_get(&d->ds, c->args.ds, 0, h, i, j) == 0.0,
                              "%s on %s: dS of dead row (%lld, %lld) is not 0", what, be->name,
                              (long long)h, (long long)i);
        }
    const int want = d->mask_kind == SDPA_MASK_BUFFER ? (int)DEAD_MASK_ROWS : HQ * (SQ - SK_CAUSAL);
    ck_assert_msg(dead == want, "%s on %s: %d rows have a -inf log-sum-exp, expected %d", what,
                  be->name, dead, want);
    for (int64_t j = 0; j < d->k.dims[2]; j++)
        for (int64_t e = 0; e < HEAD; e++) {
            ck_assert_msg(!isnan(tensor_get(&d->diff_k, c->args.diff_k, 0, 0, j, e)),
                          "%s on %s: dK[%lld, %lld] is NaN", what, be->name, (long long)j,
                          (long long)e);
            ck_assert_msg(!isnan(tensor_get(&d->diff_v, c->args.diff_v, 0, 0, j, e)),
                          "%s on %s: dV[%lld, %lld] is NaN", what, be->name, (long long)j,
                          (long long)e);
        }
}

static const char *dtype_label(sdpa_dtype_t dt)
{
    return dt == SDPA_DTYPE_F32 ? "f32" : dt == SDPA_DTYPE_F16 ? "f16" : "bf16";
}

/* One cell of the matrix: how rows die, dtype, softmax mode, backward mode. */
typedef struct cell {
    dead_rows_t how;
    sdpa_dtype_t dtype;
    sdpa_softmax_kind_t softmax;
    int deterministic;
} cell_t;

/* Runs cell on be with seed: a training step checked against the oracle,
 * then the dead-row rules by name. */
static void run_cell(const backend_t *be, const cell_t *cell, uint64_t seed)
{
    char what[160];
    snprintf(what, sizeof(what), "dead rows by %s, %s, %s, %s backward",
             cell->how == DEAD_BY_MASK ? "mask" : "causal Sq > Sk", dtype_label(cell->dtype),
             cell->softmax == SDPA_SOFTMAX_ACCURATE ? "ACCURATE" : "INF_AS_ZERO",
             cell->deterministic ? "deterministic" : "atomic");
    attn_case_t c;
    dead_rows_problem(&c.desc, cell->how, cell->dtype, cell->softmax, cell->deterministic);
    ck_assert_int_eq(case_alloc(&c, seed, &shared_allocator), 0);
    if (cell->how == DEAD_BY_MASK)
        kill_mask_rows(&c);
    check_training_step(be, &c, what);
    check_dead_rows(be, &c, what);
    case_free(&c);
}

static int cases_run;

/* ref: the whole matrix, 2 x 3 x 2 x 2 cells (ref builds no modules). */
#define REF_CELLS 24

START_TEST(dead_rows_ref)
{
    static const sdpa_dtype_t dtypes[3] = {SDPA_DTYPE_F32, SDPA_DTYPE_F16, SDPA_DTYPE_BF16};
    const cell_t cell = {(dead_rows_t)(_i / 12), dtypes[(_i / 4) % 3],
                         (sdpa_softmax_kind_t)((_i / 2) % 2), _i % 2};
    const backend_t be = backend_of(0);
    run_cell(&be, &cell, 800 + (uint64_t)_i);
    cases_run++;
}
END_TEST

/* ze: every pair of levels of the four factors in six cells (each cell
 * builds a forward and a backward module, seconds each): mask source x
 * dtype, dtype x softmax, dtype x backward mode, mask source x softmax,
 * mask source x backward mode and softmax x backward mode all occur.
 * Cell 1 is the case (f16, additive mask, ACCURATE). */
#define ZE_CELLS 6
static const cell_t ze_cells[ZE_CELLS] = {
        {DEAD_BY_MASK, SDPA_DTYPE_F32, SDPA_SOFTMAX_ACCURATE, 1},
        {DEAD_BY_MASK, SDPA_DTYPE_F16, SDPA_SOFTMAX_ACCURATE, 0},
        {DEAD_BY_MASK, SDPA_DTYPE_BF16, SDPA_SOFTMAX_INF_AS_ZERO, 1},
        {DEAD_BY_CAUSAL, SDPA_DTYPE_F32, SDPA_SOFTMAX_INF_AS_ZERO, 0},
        {DEAD_BY_CAUSAL, SDPA_DTYPE_F16, SDPA_SOFTMAX_INF_AS_ZERO, 1},
        {DEAD_BY_CAUSAL, SDPA_DTYPE_BF16, SDPA_SOFTMAX_ACCURATE, 0},
};

START_TEST(dead_rows_ze)
{
    const backend_t be = backend_of(1);
    run_cell(&be, &ze_cells[_i], 850 + (uint64_t)_i);
    cases_run++;
}
END_TEST

/* ------------------------------------------------------------------------- */
/* Pointers                                                                  */
/* ------------------------------------------------------------------------- */

/* Every buffer 64 bytes into a 256-byte aligned allocation (so 64-byte but
 * not 128-byte aligned), then 0, 1, 3 or D elements further. */
static const int64_t skews[] = {0, 1, 3, HEAD};
#define SKEWS (sizeof(skews) / sizeof(skews[0]))

/* The problems of three ze cells at each placement, on ze and ref, sharing
 * those cells' modules: 1 (f16, additive mask, atomic: every tensor, the
 * mask included), 4 (f16, causal, deterministic: dQ written by its own
 * pass) and 3 (f32, causal, atomic: dQ, dK and dV added atomically straight
 * into the caller's f32 gradients, and zero-filled there first). */
static const int pointer_cells[] = {1, 4, 3};
#define POINTER_CELLS (sizeof(pointer_cells) / sizeof(pointer_cells[0]))

START_TEST(pointer_views)
{
    const cell_t *cell = &ze_cells[pointer_cells[_i]];
    const size_t unit = cell->dtype == SDPA_DTYPE_F32 ? 4 : 2;
    for (size_t s = 0; s < SKEWS; s++)
        for (int is_ze = 1; is_ze >= 0; is_ze--) {
            const backend_t be = backend_of(is_ze);
            char what[160];
            snprintf(what, sizeof(what), "%s %s, %s, pointers 64 bytes + %lld elements in",
                     dtype_label(cell->dtype), cell->how == DEAD_BY_MASK ? "mask" : "causal",
                     cell->deterministic ? "deterministic" : "atomic", (long long)skews[s]);
            attn_case_t c;
            dead_rows_problem(&c.desc, cell->how, cell->dtype, cell->softmax, cell->deterministic);
            const case_placement_t at = {64, skews[s]};
            ck_assert_int_eq(case_alloc_at(&c, 900 + s, &shared_allocator, &at), 0);
            /* Each pointer where it should be: the tensors' elements, an f32
             * workspace. */
            const void *tensors[] = {c.args.q,      c.args.k,        c.args.v,
                                     c.args.dst,    c.args.diff_dst, c.args.diff_q,
                                     c.args.diff_k, c.args.diff_v,   c.args.ds};
            for (size_t p = 0; p < sizeof(tensors) / sizeof(tensors[0]); p++)
                ck_assert_uint_eq((uintptr_t)tensors[p] % 256,
                                  (64 + unit * (size_t)skews[s]) % 256);
            ck_assert_uint_eq((uintptr_t)c.args.workspace % 256, (64 + 4 * (size_t)skews[s]) % 256);
            if (cell->how == DEAD_BY_MASK)
                ck_assert_uint_eq((uintptr_t)c.args.mask % 256,
                                  (64 + unit * (size_t)skews[s]) % 256);
            check_training_step(&be, &c, what);
            case_free(&c);
            cases_run++;
        }
}
END_TEST

/* Every case ran, and the cells shared their modules: per ze cell a forward
 * module and the backward's main module (and its dQ pass when
 * deterministic), one backward pre/post module per dtype (f32, f16, bf16),
 * none for the pointer cases. */
START_TEST(case_count)
{
    const uint64_t built = test_modules_built(&suite_env);
    int deterministic_cells = 0;
    for (int i = 0; i < ZE_CELLS; i++)
        deterministic_cells += ze_cells[i].deterministic;
    const int pointer_cases = (int)(POINTER_CELLS * SKEWS);
    printf("boundary: %d cases (%d on ref, %d on ze), %llu modules built\n", cases_run,
           REF_CELLS + pointer_cases, ZE_CELLS + pointer_cases, (unsigned long long)built);
    ck_assert_int_eq(cases_run, REF_CELLS + ZE_CELLS + 2 * pointer_cases);
    ck_assert_uint_le(built, 2 * ZE_CELLS + deterministic_cells + 3);
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_LOOP(dead_rows_ref, REF_CELLS),
            TEST_LOOP(dead_rows_ze, ZE_CELLS),
            TEST_LOOP(pointer_views, (int)POINTER_CELLS),
            TEST_ONCE(case_count),
    };
    return test_env_run_table("ABI boundary", 600, tests, TEST_COUNT(tests));
}
