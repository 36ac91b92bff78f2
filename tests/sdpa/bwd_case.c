/* bwd_case.c - a backward case on ze against ref. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bwd_case.h"
#include "element.h"
#include "problem.h"

void bwd_case_init(bwd_case_t *c, int64_t batch, int64_t q_heads, int64_t kv_heads, int64_t q_len,
                   int64_t k_len, int64_t head_size)
{
    memset(c, 0, sizeof(*c));
    fwd_case_init(&c->fwd, batch, q_heads, kv_heads, q_len, k_len, head_size);
}

/* d in a problem, forward or backward. */
static void dropout_problem(const bwd_dropout_t *d, sdpa_problem_desc_t *p)
{
    p->dropout.enabled = d->enabled != 0;
    p->dropout.host_scalars = d->enabled && !d->device;
    p->dropout.with_offset = d->enabled && d->with_offset;
}

/* Dropout scalars on the device (shared USM), as the pointers expect. */
typedef struct dropout_scalars {
    int64_t seed, offset;
    float p;
} dropout_scalars_t;

/* d's scalars, with `offset` as the offset, in a: host values, or device
 * pointers to a new dropout_scalars_t (returned; free it with test_free).
 * Without with_offset the offset is passed all the same: it must be
 * ignored. */
static dropout_scalars_t *dropout_args(test_env_t *env, const bwd_dropout_t *d, int64_t offset,
                                       sdpa_exec_args_t *a)
{
    if (!d->enabled)
        return NULL;
    if (!d->device) {
        a->dropout_p = d->p;
        a->dropout_seed = d->seed;
        a->dropout_offset = offset;
        return NULL;
    }
    dropout_scalars_t *s = test_alloc(env, sizeof(*s));
    s->seed = d->seed;
    s->offset = offset;
    s->p = d->p;
    a->dropout_seed_ptr = &s->seed;
    a->dropout_offset_ptr = &s->offset;
    a->dropout_p_ptr = &s->p;
    return s;
}

void bwd_case_problem(const bwd_case_t *c, sdpa_problem_desc_t *p)
{
    fwd_case_problem(&c->fwd, p);
    p->prop_kind = SDPA_BACKWARD;
    p->diff_dst = p->dst;
    p->diff_q = p->q;
    p->diff_k = p->k;
    p->diff_v = p->v;
    p->diff_k.dtype = p->diff_v.dtype = p->q.dtype;
    if (c->gradient_layouts_differ) {
        /* Dense gradients whatever the inputs' layouts. */
        tensor_layout(&p->diff_q, p->q.dtype, p->q.dims, ORDER_BHSD, 0);
        tensor_layout(&p->diff_k, p->q.dtype, p->k.dims, ORDER_BSHD, 1);
        tensor_layout(&p->diff_v, p->q.dtype, p->v.dims, ORDER_HBSD, 0);
        tensor_layout(&p->diff_dst, p->dst.dtype, p->dst.dims, ORDER_BSHD, 0);
    }
    if (c->ds_dtype != SDPA_DTYPE_UNDEF) {
        int64_t d[4] = {c->fwd.batch, c->fwd.q_heads, c->fwd.q_len, c->fwd.k_len};
        tensor_layout(&p->ds, c->ds_dtype, d, ORDER_BHSD, 0);
    }
    p->deterministic = (uint32_t)c->deterministic;
    dropout_problem(&c->dropout, p);
}

typedef struct grads {
    test_tensor_t dq, dk, dv, ds;
} grads_t;

static void grads_alloc(test_env_t *env, const sdpa_problem_desc_t *p, grads_t *g)
{
    memset(g, 0, sizeof(*g));
    tensor_alloc(env, &g->dq, &p->diff_q);
    tensor_alloc(env, &g->dk, &p->diff_k);
    tensor_alloc(env, &g->dv, &p->diff_v);
    if (p->ds.dtype != SDPA_DTYPE_UNDEF)
        tensor_alloc(env, &g->ds, &p->ds);
}

static void grads_free(test_env_t *env, grads_t *g)
{
    tensor_free(env, &g->dq);
    tensor_free(env, &g->dk);
    tensor_free(env, &g->dv);
    tensor_free(env, &g->ds);
}

static void set_grads(sdpa_exec_args_t *a, const grads_t *g)
{
    a->diff_q = g->dq.data;
    a->diff_k = g->dk.data;
    a->diff_v = g->dv.data;
    a->ds = g->ds.data;
}

/* Largest |element| of a (finite elements only). */
static double max_abs(const test_tensor_t *t)
{
    const sdpa_tensor_desc_t *d = &t->desc;
    double m = 0;
    int64_t i[4];
    for (i[0] = 0; i[0] < d->dims[0]; i[0]++)
        for (i[1] = 0; i[1] < d->dims[1]; i[1]++)
            for (i[2] = 0; i[2] < d->dims[2]; i[2]++)
                for (i[3] = 0; i[3] < d->dims[3]; i[3]++) {
                    double v = fabs(sdpa_element_load(t->data,
                                                      i[0] * d->strides[0] + i[1] * d->strides[1] +
                                                              i[2] * d->strides[2] +
                                                              i[3] * d->strides[3],
                                                      d->dtype));
                    if (isfinite(v) && v > m)
                        m = v;
                }
    return m;
}

/* The magnitudes a gradient is built from, independent of cancellation
 * (with Sk = 1, dS = P (dP - D_i) is exactly 0 in exact arithmetic but a
 * rounding error of |dP| in f32): |dP| <= max|dO| max|V| sqrt(D)-ish sums,
 * dQ and dK multiply dS by the score multiplier and max|K| or max|Q|, dV
 * sums probabilities (at most 1 per query) times dO. */
typedef struct grad_scales {
    double dq, dk, dv, ds;
} grad_scales_t;

/* The cases pass scale 1/sqrt(D), or sqrt(D) with invert_scale: the scores'
 * multiplier is 1/sqrt(D) either way (1 without a scale). */
static double multiplier(const fwd_case_t *f)
{
    return f->scale_kind == SDPA_SCALE_NONE ? 1 : 1.0 / sqrt((double)f->head_size);
}

/* With dropout, kept probabilities and their dP are scaled by 1 / (1 - p):
 * every term grows by that factor. */
static void natural_scales(const bwd_case_t *c, const fwd_buffers_t *b, const test_tensor_t *d_dst,
                           grad_scales_t *out)
{
    const fwd_case_t *f = &c->fwd;
    double keep = c->dropout.enabled ? 1.0 / (1.0 - (double)c->dropout.p) : 1.0;
    double dp = keep * max_abs(d_dst) * max_abs(&b->v) * sqrt((double)f->head_size);
    double m = multiplier(f);
    out->ds = dp;
    out->dq = m * dp * max_abs(&b->k) * sqrt((double)f->k_len);
    out->dk = m * dp * max_abs(&b->q) * sqrt((double)f->q_len);
    out->dv = keep * max_abs(d_dst) * sqrt((double)f->q_len);
}

/* Tolerance of a gradient: f32 rounding that grows with the square root of
 * the reduction lengths (Sq, Sk and D), plus the rounding of O to its dtype,
 * which ze reads back to form D_i = rowsum(dO * O) while ref forms D_i from
 * exact probabilities; relative to the larger of the gradient's largest
 * element and the magnitude of its terms. tensor_compare adds one unit in the
 * last place of the gradient's own dtype for its final rounding. */
static double gradient_tolerance(const bwd_case_t *c, const test_tensor_t *want, double scale)
{
    const fwd_case_t *f = &c->fwd;
    double terms = sqrt((double)(f->q_len + f->k_len + f->head_size));
    double eps_o = f->q_dtype == SDPA_DTYPE_F32 ? 0 : sdpa_dtype_epsilon(f->q_dtype);
    double magnitude = max_abs(want);
    if (scale > magnitude)
        magnitude = scale;
    return 8 * magnitude * (0x1.0p-24 * terms + eps_o);
}

static double compare_grad(const bwd_case_t *c, const char *what, const char *name,
                           const test_tensor_t *got, const test_tensor_t *want, double scale)
{
    compare_result_t r;
    tensor_compare(&want->desc, got->data, want->data, gradient_tolerance(c, want, scale), 1.0, &r);
    ck_assert_msg(r.bad == 0,
                  "%s: %s differs in %lld of %lld elements; worst at [%lld,%lld,%lld,%lld]: ze "
                  "%.9g ref %.9g tolerance %.3g",
                  what, name, (long long)r.bad, (long long)r.checked, (long long)r.worst_idx[0],
                  (long long)r.worst_idx[1], (long long)r.worst_idx[2], (long long)r.worst_idx[3],
                  r.worst_got, r.worst_want, r.worst_tol);
    ck_assert_msg(tensor_padding_intact(got), "%s: ze wrote outside %s's elements", what, name);
    return r.worst_ratio;
}

static void assert_same_bits(const test_tensor_t *a, const test_tensor_t *b, const char *what,
                             const char *name)
{
    if (a->data)
        ck_assert_msg(memcmp(a->data, b->data, a->bytes) == 0,
                      "%s: %s differs between two deterministic runs", what, name);
}

/* The inputs of a backward: the ref forward's O and log-sum-exp (training,
 * with c's dropout) and a random dO; `a` has every input, no gradient;
 * `what` names the case in messages. */
typedef struct bwd_inputs {
    char what[700];
    fwd_buffers_t b;
    test_tensor_t d_dst;
    sdpa_problem_desc_t p; /* the backward problem */
    sdpa_exec_args_t a;
    dropout_scalars_t *drop;
} bwd_inputs_t;

static void describe(const bwd_case_t *c, char *what, size_t size)
{
    fwd_case_describe(&c->fwd, what, size);
    size_t n = strlen(what);
    n += (size_t)snprintf(what + n, size - n, " BWD%s%s%s",
                          c->deterministic ? " deterministic" : "", c->ds_dtype ? " dS" : "",
                          c->gradient_layouts_differ ? " own-layouts" : "");
    const bwd_dropout_t *d = &c->dropout;
    if (d->enabled && n < size)
        snprintf(what + n, size - n, " dropout(p=%g seed=%lld offset=%lld%s%s)", (double)d->p,
                 (long long)d->seed, (long long)d->offset, d->with_offset ? "" : " ignored",
                 d->device ? " device" : "");
}

static void inputs_make(test_env_t *env, const bwd_case_t *c, uint64_t seed, bwd_inputs_t *in)
{
    describe(c, in->what, sizeof(in->what));
    const char *what = in->what;
    /* Forward (training) on ref: O and the log-sum-exp the backward reads. */
    fwd_case_t fc = c->fwd;
    fc.training = 1;
    sdpa_problem_desc_t pf;
    fwd_case_problem(&fc, &pf);
    dropout_problem(&c->dropout, &pf);
    test_rng_t rng = {seed};
    fwd_buffers_alloc(env, &fc, &pf, &in->b, &rng);
    fwd_exec_args(&fc, &in->b, 0, &in->a);
    in->drop = dropout_args(env, &c->dropout, c->dropout.offset, &in->a);
    run_on_backend(env->ref, env->ref_ctx, &pf, &in->a, "ref (forward)", what);

    bwd_case_problem(c, &in->p);
    /* O in the layout of diff_dst's twin: the problem's dst layout. */
    tensor_alloc(env, &in->d_dst, &in->p.diff_dst);
    tensor_fill_uniform(&in->d_dst, &rng, -1, 1);
    in->a.diff_dst = in->d_dst.data;
}

static void inputs_free(test_env_t *env, bwd_inputs_t *in)
{
    if (in->drop)
        test_free(env, in->drop);
    tensor_free(env, &in->d_dst);
    fwd_buffers_free(env, &in->b);
}

double bwd_case_run(test_env_t *env, const bwd_case_t *c, uint64_t seed, int repeat_bits)
{
    sdpa_problem_desc_t declined;
    bwd_case_problem(c, &declined);
    if (rerun_skips_case(env, &declined))
        return 0;
    bwd_inputs_t in;
    inputs_make(env, c, seed, &in);
    const char *what = in.what;
    const sdpa_problem_desc_t *p = &in.p;
    sdpa_exec_args_t a = in.a;

    grads_t ze, ref;
    grads_alloc(env, p, &ze);
    grads_alloc(env, p, &ref);
    set_grads(&a, &ze);
    run_on_backend(env->ze, env->ze_ctx, p, &a, "ze", what);
    set_grads(&a, &ref);
    run_on_backend(env->ref, env->ref_ctx, p, &a, "ref", what);

    grad_scales_t scales;
    natural_scales(c, &in.b, &in.d_dst, &scales);
    double worst = compare_grad(c, what, "dQ", &ze.dq, &ref.dq, scales.dq);
    double r = compare_grad(c, what, "dK", &ze.dk, &ref.dk, scales.dk);
    worst = r > worst ? r : worst;
    r = compare_grad(c, what, "dV", &ze.dv, &ref.dv, scales.dv);
    worst = r > worst ? r : worst;
    if (c->ds_dtype) {
        r = compare_grad(c, what, "dS", &ze.ds, &ref.ds, scales.ds);
        worst = r > worst ? r : worst;
    }

    if (repeat_bits) {
        grads_t again;
        grads_alloc(env, p, &again);
        set_grads(&a, &again);
        sdpa_primitive_t *prim = NULL;
        ck_assert_int_eq(env->ze->primitive_create(env->ze_ctx, p, &prim), SDPA_SUCCESS);
        for (int run = 0; run < 2; run++) {
            ck_assert_msg(env->ze->primitive_execute(prim, &a) == SDPA_SUCCESS, "%s: %s", what,
                          env->ze->last_error());
            assert_same_bits(&again.dq, &ze.dq, what, "dQ");
            assert_same_bits(&again.dk, &ze.dk, what, "dK");
            assert_same_bits(&again.dv, &ze.dv, what, "dV");
            assert_same_bits(&again.ds, &ze.ds, what, "dS");
        }
        env->ze->primitive_destroy(prim);
        grads_free(env, &again);
    }

    grads_free(env, &ref);
    grads_free(env, &ze);
    inputs_free(env, &in);
    return worst;
}

/* Elements of got outside want's tolerance, and elements checked. */
static void count_differences(const bwd_case_t *c, const test_tensor_t *got,
                              const test_tensor_t *want, double scale, int64_t *bad,
                              int64_t *checked)
{
    compare_result_t r;
    tensor_compare(&want->desc, got->data, want->data, gradient_tolerance(c, want, scale), 1.0, &r);
    *bad += r.bad;
    *checked += r.checked;
}

double bwd_case_offset_effect(test_env_t *env, const bwd_case_t *c, uint64_t seed, int64_t offset)
{
    bwd_inputs_t in;
    inputs_make(env, c, seed, &in);
    const char *what = in.what;
    const sdpa_problem_desc_t *p = &in.p;

    grads_t same, other;
    grads_alloc(env, p, &same);
    grads_alloc(env, p, &other);
    sdpa_exec_args_t a = in.a;
    set_grads(&a, &same);
    run_on_backend(env->ze, env->ze_ctx, p, &a, "ze", what);
    sdpa_exec_args_t b = in.a;
    dropout_scalars_t *drop = dropout_args(env, &c->dropout, offset, &b);
    set_grads(&b, &other);
    run_on_backend(env->ze, env->ze_ctx, p, &b, "ze (other offset)", what);

    grad_scales_t scales;
    natural_scales(c, &in.b, &in.d_dst, &scales);
    int64_t bad = 0, checked = 0;
    count_differences(c, &other.dq, &same.dq, scales.dq, &bad, &checked);
    count_differences(c, &other.dk, &same.dk, scales.dk, &bad, &checked);
    count_differences(c, &other.dv, &same.dv, scales.dv, &bad, &checked);

    if (drop)
        test_free(env, drop);
    grads_free(env, &other);
    grads_free(env, &same);
    inputs_free(env, &in);
    return checked ? (double)bad / (double)checked : 0;
}
