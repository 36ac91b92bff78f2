/*
 * test_dropout.c - forward dropout on the ze backend against the ref backend
 * and the host Philox (src/validate/philox.c).
 *
 * Both backends draw the keep mask from the same Philox4x32-10 stream, so
 * for the same p, seed and offset they drop the same elements: O is compared
 * with ref within the forward tolerances (scaled by 1 / (1 - p), the largest
 * factor a probability takes), the keep mask output byte for byte with
 * sdpa_dropout_keep_run, and the log-sum-exp workspace with ref's, which is
 * that of the undropped softmax. The keep rate is checked against the
 * binomial distribution, and the mask against a second run (same seed and
 * offset: the same mask; another offset or seed: another mask).
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fwd_case.h"
#include "philox.h"
#include "problem.h"
#include "ze_env.h"

static int cases_run;

/* Bytes after the keep mask that must stay untouched. */
#define GUARD 256

/* Passed as the offset when with_offset = 0: backends must ignore it. */
#define IGNORED_OFFSET INT64_C(0x5bd1e9955bd1e995)

/* A forward case (training is forced on) with dropout. */
typedef struct drop_case {
    fwd_case_t f;
    float p;
    int64_t seed, offset;
    int device;      /* p, seed and offset through device pointers */
    int with_offset; /* 0: the offset is 0 (IGNORED_OFFSET is passed) */
    int mask_output; /* ze and ref write the keep mask */
} drop_case_t;

/* What a run leaves for the caller to compare between runs: host copies of
 * ze's outputs (free with drop_output_free). */
typedef struct drop_output {
    uint8_t *keep; /* keep mask, NULL without mask_output */
    void *dst;     /* O, dst_bytes bytes */
    float *lse;    /* log-sum-exp [B, Hq, Sq] */
    int64_t elements, rows;
    size_t dst_bytes;
} drop_output_t;

static void drop_output_free(drop_output_t *o)
{
    free(o->keep);
    free(o->dst);
    free(o->lse);
    memset(o, 0, sizeof(*o));
}

static void drop_case_init(drop_case_t *c, int64_t batch, int64_t q_heads, int64_t kv_heads,
                           int64_t q_len, int64_t k_len, int64_t head_size, sdpa_dtype_t dt)
{
    memset(c, 0, sizeof(*c));
    fwd_case_init(&c->f, batch, q_heads, kv_heads, q_len, k_len, head_size);
    c->f.q_dtype = c->f.k_dtype = c->f.v_dtype = dt;
    c->f.training = 1;
    c->p = 0.5f;
    c->seed = INT64_C(0x0123456789abcdef);
    c->offset = INT64_C(0x00000001fffffff0); /* the counter's high word changes */
    c->with_offset = 1;
    c->mask_output = 1;
}

static void drop_case_describe(const drop_case_t *c, char *out, size_t size)
{
    fwd_case_describe(&c->f, out, size);
    size_t n = strlen(out);
    snprintf(out + n, size - n, " dropout p=%g seed=%#llx offset=%s%#llx %s%s", (double)c->p,
             (unsigned long long)c->seed, c->with_offset ? "" : "(none) ",
             (unsigned long long)(c->with_offset ? c->offset : 0), c->device ? "device" : "host",
             c->mask_output ? " mask-out" : "");
}

/* (b, h, i, j) of linear index n of [B, Hq, Sq, Sk], for messages. */
static void unravel(const fwd_case_t *c, int64_t n, int64_t idx[4])
{
    idx[3] = n % c->k_len;
    n /= c->k_len;
    idx[2] = n % c->q_len;
    n /= c->q_len;
    idx[1] = n % c->q_heads;
    idx[0] = n / c->q_heads;
}

/* Asserts that got holds the host Philox keep flags of every element. */
static void check_keep_mask(const drop_case_t *c, const uint8_t *got, const uint8_t *want,
                            int64_t elements, const char *who, const char *what)
{
    int64_t bad = 0, first = -1;
    for (int64_t n = 0; n < elements; n++)
        if (got[n] != want[n]) {
            if (first < 0)
                first = n;
            bad++;
        }
    if (bad) {
        int64_t idx[4];
        unravel(&c->f, first, idx);
        ck_abort_msg("%s: %s keep mask differs from the host Philox in %lld of %lld bytes; first "
                     "at [%lld,%lld,%lld,%lld]: %u, want %u",
                     what, who, (long long)bad, (long long)elements, (long long)idx[0],
                     (long long)idx[1], (long long)idx[2], (long long)idx[3], got[first],
                     want[first]);
    }
}

/* Asserts that kept of n elements is within 5 standard deviations of the
 * binomial mean n (1 - p). */
static void check_keep_rate(int64_t kept, int64_t n, float p, const char *what)
{
    const double mean = (double)n * (1.0 - p), sigma = sqrt((double)n * p * (1.0 - p));
    ck_assert_msg(fabs((double)kept - mean) <= 5 * sigma,
                  "%s: %lld of %lld elements kept, binomial mean %.1f, 5 sigma = %.1f", what,
                  (long long)kept, (long long)n, mean, 5 * sigma);
}

/*
 * Runs c on ze and ref with the same inputs (from seed) and asserts: O and
 * the log-sum-exp agree within tolerances, the keep masks equal the host
 * Philox (or, without mask_output, the mask buffer is untouched), and the
 * keep rate is plausible. Fills out (if not NULL) with ze's outputs. Returns
 * the worst error/tolerance ratio.
 */
static double drop_case_run(const drop_case_t *c, uint64_t seed, drop_output_t *out)
{
    char what[768];
    drop_case_describe(c, what, sizeof(what));
    const fwd_case_t *f = &c->f;
    ck_assert_msg(f->training, "%s: dropout needs a training forward", what);
    sdpa_problem_desc_t p;
    fwd_case_problem(f, &p);
    p.dropout.enabled = 1;
    p.dropout.host_scalars = !c->device;
    p.dropout.with_offset = (uint32_t)c->with_offset;
    p.dropout.with_mask_output = (uint32_t)c->mask_output;
    if (!out && rerun_skips_case(&suite_env, &p))
        return 0;

    test_rng_t rng = {seed};
    fwd_buffers_t b;
    fwd_buffers_alloc(&suite_env, f, &p, &b, &rng);
    const int64_t rows = f->batch * f->q_heads * f->q_len, elements = rows * f->k_len;
    const int64_t passed_offset = c->with_offset ? c->offset : IGNORED_OFFSET;
    const uint64_t offset = c->with_offset ? (uint64_t)c->offset : 0;

    /* Keep masks start as 0xff, neither 0 nor 1: an element left unwritten
     * shows. Without mask_output they must stay so, and the GUARD bytes
     * after the mask always. */
    const size_t mask_bytes = (size_t)elements + GUARD;
    uint8_t *keep = test_alloc(&suite_env, mask_bytes);
    uint8_t *keep_ref = test_alloc(&suite_env, mask_bytes);
    memset(keep, 0xff, mask_bytes);
    memset(keep_ref, 0xff, mask_bytes);
    float *p_dev = test_alloc(&suite_env, sizeof(float));
    int64_t *seed_dev = test_alloc(&suite_env, sizeof(int64_t));
    int64_t *offset_dev = test_alloc(&suite_env, sizeof(int64_t));
    *p_dev = c->p;
    *seed_dev = c->seed;
    *offset_dev = passed_offset;

    sdpa_exec_args_t a;
    int xe = 0;
    for (int reference = 0; reference < 2; reference++) {
        fwd_exec_args(f, &b, reference, &a);
        if (c->device) {
            a.dropout_p_ptr = p_dev;
            a.dropout_seed_ptr = seed_dev;
            a.dropout_offset_ptr = offset_dev;
        } else {
            a.dropout_p = c->p;
            a.dropout_seed = c->seed;
            a.dropout_offset = passed_offset;
        }
        a.dropout_mask = reference ? keep_ref : keep;
        xe |= run_on_backend(reference ? suite_env.ref : suite_env.ze,
                             reference ? suite_env.ref_ctx : suite_env.ze_ctx, &p, &a,
                             reference ? "ref" : "ze", what) &&
              !reference;
    }

    /* O: the tolerance of fwd_case_run, times 1 / (1 - p), the factor of a
     * kept probability (it scales the terms and their rounding errors). */
    const double eps_acc = 0x1.0p-24;
    const double terms = sqrt((double)f->k_len) + sqrt((double)f->head_size);
    double abs_tol = 8 * eps_acc * terms / (1.0 - (double)c->p);
    if (xe)
        abs_tol += fwd_xe_tolerance(f, 1.0 / (1.0 - c->p));
    /* The log-sum-exp is that of the undropped softmax, as ref computes it. */
    double worst = fwd_case_compare(&p, &b, abs_tol, 1, 8 * eps_acc * terms * 4, 1, what);

    for (size_t i = (size_t)elements; i < mask_bytes; i++)
        ck_assert_msg(keep[i] == 0xff, "%s: ze wrote past the end of the keep mask", what);
    if (c->mask_output) {
        uint8_t *want = malloc((size_t)elements);
        ck_assert_ptr_nonnull(want);
        sdpa_dropout_keep_run((uint64_t)c->seed, offset, 0, elements, c->p, want);
        check_keep_mask(c, keep, want, elements, "ze", what);
        check_keep_mask(c, keep_ref, want, elements, "ref", what);
        int64_t kept = 0;
        for (int64_t n = 0; n < elements; n++)
            kept += keep[n];
        check_keep_rate(kept, elements, c->p, what);
        free(want);
    } else {
        for (int64_t n = 0; n < elements; n++)
            ck_assert_msg(keep[n] == 0xff, "%s: ze wrote the keep mask without mask output", what);
    }

    if (out) {
        memset(out, 0, sizeof(*out));
        out->elements = elements;
        out->rows = rows;
        out->dst_bytes = b.dst.bytes;
        out->dst = malloc(b.dst.bytes);
        out->lse = malloc((size_t)rows * sizeof(float));
        ck_assert(out->dst && out->lse);
        memcpy(out->dst, b.dst.data, b.dst.bytes);
        memcpy(out->lse, b.ws.data, (size_t)rows * sizeof(float));
        if (c->mask_output) {
            out->keep = malloc((size_t)elements);
            ck_assert_ptr_nonnull(out->keep);
            memcpy(out->keep, keep, (size_t)elements);
        }
    }

    test_free(&suite_env, keep);
    test_free(&suite_env, keep_ref);
    test_free(&suite_env, p_dev);
    test_free(&suite_env, seed_dev);
    test_free(&suite_env, offset_dev);
    fwd_buffers_free(&suite_env, &b);
    cases_run++;
    return worst;
}

/* Sizes that share one module (as in test_fwd.c: Sq > 16 and not a multiple
 * of 8, K/V heads equal query heads), with odd, even and long Sk. */
static const int64_t sizes[][5] = {
        {1, 2, 2, 37, 1},
        {2, 2, 2, 37, 29},
        {1, 3, 3, 75, 130},
        {1, 2, 2, 37, 300},
};
#define SIZES (sizeof(sizes) / sizeof(sizes[0]))

/* Runs base at every size of `sizes`, printing the family's worst ratio. */
static void run_family(const drop_case_t *base, const char *family)
{
    double worst = 0;
    for (size_t i = 0; i < SIZES; i++) {
        drop_case_t c = *base;
        c.f.batch = sizes[i][0];
        c.f.q_heads = sizes[i][1];
        c.f.kv_heads = sizes[i][2];
        c.f.q_len = sizes[i][3];
        c.f.k_len = sizes[i][4];
        double r = drop_case_run(&c, 5000 + i, NULL);
        worst = r > worst ? r : worst;
    }
    printf("dropout family %-52s %zu cases, worst error/tolerance %.3f\n", family, (size_t)SIZES,
           worst);
}

static const float probabilities[] = {0.0f, 0.1f, 0.5f, 0.9f};

/* f32 and f16, every p: O, log-sum-exp, keep mask and keep rate. */
START_TEST(probability)
{
    const sdpa_dtype_t dt = _i / 4 ? SDPA_DTYPE_F16 : SDPA_DTYPE_F32;
    drop_case_t c;
    drop_case_init(&c, 1, 1, 1, 1, 1, 64, dt);
    c.p = probabilities[_i % 4];
    char name[64];
    snprintf(name, sizeof(name), "%s p=%g", sdpa_dtype_name(dt), (double)c.p);
    run_family(&c, name);
}
END_TEST

/* Host scalars or device pointers, with or without an offset, with or
 * without the mask output (then the mask buffer stays untouched). */
START_TEST(scalars)
{
    drop_case_t c;
    /* Both dtypes on both scalar paths. */
    drop_case_init(&c, 1, 1, 1, 1, 1, 64, (_i ^ (_i >> 1)) & 1 ? SDPA_DTYPE_F16 : SDPA_DTYPE_F32);
    c.device = _i & 1;
    c.with_offset = (_i >> 1) & 1;
    c.mask_output = !((_i >> 2) & 1);
    c.p = 0.25f;
    c.seed = -INT64_C(987654321987); /* negative: every bit of the key used */
    char name[96];
    snprintf(name, sizeof(name), "%s %s scalars, %s offset, %s mask output",
             sdpa_dtype_name(c.f.q_dtype), c.device ? "device" : "host",
             c.with_offset ? "with" : "no", c.mask_output ? "with" : "no");
    run_family(&c, name);
}
END_TEST

/* Causal masks (the mask output still covers the keys past the band, which
 * the kernel's key loop skips), an additive mask, GQA, and decode (Sq = 1,
 * where a work-group's rows are query heads). */
START_TEST(masks_and_gqa)
{
    static const struct {
        int64_t batch, q_heads, kv_heads, q_len, k_len;
        sdpa_mask_kind_t mask;
        sdpa_dtype_t dt;
    } shapes[] = {
            {1, 2, 2, 75, 130, SDPA_MASK_CAUSAL_TOP_LEFT, SDPA_DTYPE_F32},
            {2, 1, 1, 37, 300, SDPA_MASK_CAUSAL_TOP_LEFT, SDPA_DTYPE_F16},
            {1, 2, 2, 37, 130, SDPA_MASK_CAUSAL_BOTTOM_RIGHT, SDPA_DTYPE_F32},
            {1, 2, 2, 75, 29, SDPA_MASK_CAUSAL_BOTTOM_RIGHT, SDPA_DTYPE_F32}, /* rows see no key */
            {2, 2, 2, 37, 61, SDPA_MASK_BUFFER, SDPA_DTYPE_F16},
            {2, 4, 2, 37, 130, SDPA_MASK_NONE, SDPA_DTYPE_F32},
            {1, 8, 2, 75, 130, SDPA_MASK_CAUSAL_BOTTOM_RIGHT, SDPA_DTYPE_F16},
            {1, 8, 1, 1, 301, SDPA_MASK_NONE, SDPA_DTYPE_F32},
            {2, 8, 2, 1, 130, SDPA_MASK_NONE, SDPA_DTYPE_F16},
            {1, 8, 1, 1, 77, SDPA_MASK_CAUSAL_BOTTOM_RIGHT, SDPA_DTYPE_F32},
    };
    const int n = (int)(sizeof(shapes) / sizeof(shapes[0]));
    double worst = 0;
    for (int i = 0; i < n; i++) {
        drop_case_t c;
        drop_case_init(&c, shapes[i].batch, shapes[i].q_heads, shapes[i].kv_heads, shapes[i].q_len,
                       shapes[i].k_len, 64, shapes[i].dt);
        c.f.mask_kind = shapes[i].mask;
        c.f.mask_dtype = shapes[i].dt;
        c.p = probabilities[1 + i % 3];
        c.device = i % 2;
        c.seed = 1000 + i;
        double r = drop_case_run(&c, 6000 + (uint64_t)i, NULL);
        worst = r > worst ? r : worst;
    }
    printf("dropout family %-52s %d cases, worst error/tolerance %.3f\n",
           "causal, buffer mask, GQA, decode", n, worst);
}
END_TEST

/* Other head sizes (other SPIR-V variants and configurations). */
START_TEST(head_sizes)
{
    static const int64_t heads[] = {32, 128, 256};
    drop_case_t c;
    drop_case_init(&c, 1, 2, 1, 37, 130, heads[_i], _i == 1 ? SDPA_DTYPE_F16 : SDPA_DTYPE_F32);
    c.f.mask_kind = _i == 2 ? SDPA_MASK_CAUSAL_TOP_LEFT : SDPA_MASK_NONE;
    c.p = 0.3f;
    double r = drop_case_run(&c, 7000 + (uint64_t)_i, NULL);
    printf("dropout family D%-51lld 1 case, worst error/tolerance %.3f\n", (long long)heads[_i], r);
}
END_TEST

/* Fraction of bytes that differ between two keep masks. */
static double mask_difference(const uint8_t *a, const uint8_t *b, int64_t n)
{
    int64_t differ = 0;
    for (int64_t i = 0; i < n; i++)
        differ += a[i] != b[i];
    return (double)differ / (double)n;
}

/* The same seed and offset give the same mask and O, bit for bit; another
 * offset or seed gives another mask: two independent masks differ in a
 * fraction 2 p (1 - p) of the elements. */
START_TEST(reproducible)
{
    drop_case_t c;
    drop_case_init(&c, 2, 2, 2, 37, 130, 64, SDPA_DTYPE_F32);
    c.p = 0.5f;
    drop_output_t first, again, shifted, reseeded;
    drop_case_run(&c, 8000, &first);
    drop_case_run(&c, 8000, &again);
    ck_assert_msg(memcmp(first.keep, again.keep, (size_t)first.elements) == 0,
                  "the same seed and offset gave different keep masks");
    ck_assert_msg(memcmp(first.dst, again.dst, first.dst_bytes) == 0,
                  "the same seed and offset gave different outputs");

    drop_case_t other = c;
    other.offset = c.offset + first.elements / 4 + 1; /* past every counter of the first run */
    drop_case_run(&other, 8000, &shifted);
    other = c;
    other.seed = c.seed + 1;
    drop_case_run(&other, 8000, &reseeded);

    const double expect = 2 * c.p * (1 - c.p);
    const double sigma = sqrt(expect * (1 - expect) / (double)first.elements);
    const double d_offset = mask_difference(first.keep, shifted.keep, first.elements);
    const double d_seed = mask_difference(first.keep, reseeded.keep, first.elements);
    ck_assert_msg(fabs(d_offset - expect) <= 5 * sigma,
                  "another offset: masks differ in a fraction %.4f of the elements, expected %.4f "
                  "+- %.4f",
                  d_offset, expect, 5 * sigma);
    ck_assert_msg(fabs(d_seed - expect) <= 5 * sigma,
                  "another seed: masks differ in a fraction %.4f of the elements, expected %.4f "
                  "+- %.4f",
                  d_seed, expect, 5 * sigma);
    printf("dropout reproducible: same seed/offset identical; another offset differs in %.4f, "
           "another seed in %.4f (expected %.4f)\n",
           d_offset, d_seed, expect);
    drop_output_free(&first);
    drop_output_free(&again);
    drop_output_free(&shifted);
    drop_output_free(&reseeded);
}
END_TEST

/* The log-sum-exp workspace with dropout is that of the same forward
 * without dropout (dropout acts after the softmax denominator), and p = 0
 * gives the undropped O. Compared on ze itself, against the plain forward
 * suite's path. */
START_TEST(lse_undropped)
{
    drop_case_t c;
    drop_case_init(&c, 1, 2, 1, 75, 130, 64, _i ? SDPA_DTYPE_F16 : SDPA_DTYPE_F32);
    c.f.mask_kind = _i ? SDPA_MASK_CAUSAL_BOTTOM_RIGHT : SDPA_MASK_NONE;
    char what[512];
    fwd_case_describe(&c.f, what, sizeof(what));

    /* The undropped forward of the same inputs, on ze. */
    sdpa_problem_desc_t p;
    fwd_case_problem(&c.f, &p);
    test_rng_t rng = {9000};
    fwd_buffers_t b;
    fwd_buffers_alloc(&suite_env, &c.f, &p, &b, &rng);
    sdpa_exec_args_t a;
    fwd_exec_args(&c.f, &b, 0, &a);
    run_on_backend(suite_env.ze, suite_env.ze_ctx, &p, &a, "ze", what);

    for (int k = 0; k < 2; k++) {
        c.p = k ? 0.7f : 0.0f;
        drop_output_t o;
        drop_case_run(&c, 9000, &o);
        compare_result_t w;
        tensor_compare(&b.ws.desc, o.lse, b.ws.data, 0.0, 2.0, &w);
        ck_assert_msg(w.bad == 0,
                      "%s p=%g: log-sum-exp with dropout differs from the undropped one in %lld of "
                      "%lld rows; worst at [%lld,%lld,%lld]: %.9g, undropped %.9g",
                      what, (double)c.p, (long long)w.bad, (long long)w.checked,
                      (long long)w.worst_idx[0], (long long)w.worst_idx[1],
                      (long long)w.worst_idx[2], w.worst_got, w.worst_want);
        if (c.p == 0.0f) {
            compare_result_t r;
            tensor_compare(&p.dst, o.dst, b.dst.data, 0.0, 2.0, &r);
            ck_assert_msg(r.bad == 0,
                          "%s: O with p = 0 differs from the undropped O in %lld of %lld elements; "
                          "worst at [%lld,%lld,%lld,%lld]: %.9g, undropped %.9g",
                          what, (long long)r.bad, (long long)r.checked, (long long)r.worst_idx[0],
                          (long long)r.worst_idx[1], (long long)r.worst_idx[2],
                          (long long)r.worst_idx[3], r.worst_got, r.worst_want);
        }
        drop_output_free(&o);
    }
    fwd_buffers_free(&suite_env, &b);
}
END_TEST

/* Dropout needs a training forward: inference with dropout is refused. */
START_TEST(inference_refused)
{
    fwd_case_t f;
    fwd_case_init(&f, 1, 1, 1, 17, 17, 64);
    sdpa_problem_desc_t p;
    fwd_case_problem(&f, &p);
    p.dropout.enabled = 1;
    p.dropout.host_scalars = 1;
    sdpa_primitive_t *prim = NULL;
    ck_assert_int_ne(suite_env.ze->primitive_create(suite_env.ze_ctx, &p, &prim), SDPA_SUCCESS);
    ck_assert_ptr_null(prim);
}
END_TEST

/* A configuration override whose key tile is not a multiple of 4 keys per
 * sub-group (the kernel draws a Philox block per four keys, and per key for
 * the rest) and splits the keys between three sub-groups. */
#define ODD_TILES_CONFIG "7,16,16,16,3,1,3,1"

static void unset_config(void)
{
    unsetenv("SDPA_CONFIG");
}

START_TEST(odd_tiles)
{
    ck_assert_int_eq(setenv("SDPA_CONFIG", ODD_TILES_CONFIG, 1), 0);
    static const int64_t shapes[][3] = {{37, 130, SDPA_MASK_NONE},
                                        {75, 61, SDPA_MASK_CAUSAL_TOP_LEFT},
                                        {37, 300, SDPA_MASK_CAUSAL_BOTTOM_RIGHT}};
    double worst = 0;
    for (int i = 0; i < 3; i++) {
        drop_case_t c;
        drop_case_init(&c, 2, 2, 1, shapes[i][0], shapes[i][1], 32, SDPA_DTYPE_F32);
        c.f.mask_kind = (sdpa_mask_kind_t)shapes[i][2];
        c.p = 0.4f;
        c.seed = 77 + i;
        c.offset = i; /* elements start at every word of a block */
        double r = drop_case_run(&c, 9500 + (uint64_t)i, NULL);
        worst = r > worst ? r : worst;
    }
    unset_config();
    printf("dropout family %-52s 3 cases, worst error/tolerance %.3f\n",
           "SDPA_CONFIG=" ODD_TILES_CONFIG, worst);
}
END_TEST

START_TEST(case_count)
{
    printf("dropout cases run against ref: %d (%d primitives on the fast path), modules built: "
           "%llu\n",
           cases_run, xe_runs_checked(), (unsigned long long)test_modules_built(&suite_env));
    ck_assert_int_ge(cases_run, 1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ze forward dropout");
    TCase *t = tcase_create("dropout");
    tcase_add_unchecked_fixture(t, test_env_fixture, NULL);
    tcase_set_timeout(t, 1800);
    tcase_add_loop_test(t, probability, 0, 8);
    tcase_add_loop_test(t, scalars, 0, 8);
    tcase_add_test(t, masks_and_gqa);
    tcase_add_loop_test(t, head_sizes, 0, 3);
    tcase_add_test(t, reproducible);
    tcase_add_loop_test(t, lse_undropped, 0, 2);
    tcase_add_test(t, inference_refused);
    suite_add_tcase(s, t);
    /* Last: it sets SDPA_CONFIG, which the teardown clears even on failure. */
    TCase *odd = tcase_create("odd tiles");
    tcase_add_unchecked_fixture(odd, test_env_fixture, NULL);
    tcase_add_checked_fixture(odd, NULL, unset_config);
    tcase_set_timeout(odd, 1800);
    tcase_add_test(odd, odd_tiles);
    tcase_add_test(odd, case_count);
    suite_add_tcase(s, odd);
    return test_env_run_suite(s);
}
