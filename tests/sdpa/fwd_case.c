/* fwd_case.c - a forward case on ze against ref. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "element.h"
#include "fwd_case.h"
#include "problem.h"

void fwd_case_init(fwd_case_t *c, int64_t batch, int64_t q_heads, int64_t kv_heads, int64_t q_len,
                   int64_t k_len, int64_t head_size)
{
    memset(c, 0, sizeof(*c));
    c->batch = batch;
    c->q_heads = q_heads;
    c->kv_heads = kv_heads;
    c->q_len = q_len;
    c->k_len = k_len;
    c->head_size = head_size;
    c->q_dtype = c->k_dtype = c->v_dtype = SDPA_DTYPE_F32;
    c->scale_kind = SDPA_SCALE_HOST;
    c->scale_dtype = SDPA_DTYPE_F32;
}

void fwd_case_init_typed(fwd_case_t *c, sdpa_dtype_t dtype, int64_t batch, int64_t q_heads,
                         int64_t kv_heads, int64_t q_len, int64_t k_len, int64_t head_size)
{
    fwd_case_init(c, batch, q_heads, kv_heads, q_len, k_len, head_size);
    c->q_dtype = c->k_dtype = c->v_dtype = dtype;
}

void fwd_case_resize(fwd_case_t *c, const fwd_case_sizes_t *s)
{
    c->batch = s->batch;
    c->q_heads = s->q_heads;
    c->kv_heads = s->kv_heads;
    c->q_len = s->q_len;
    c->k_len = s->k_len;
}

size_t fwd_case_family(const char *direction, int width, const char *name,
                       const fwd_case_sizes_t *sizes, size_t count, uint64_t seed,
                       double (*run)(const void *base, const fwd_case_sizes_t *s, uint64_t seed),
                       const void *base)
{
    double worst = 0;
    for (size_t i = 0; i < count; i++) {
        const double r = run(base, &sizes[i], seed + i);
        if (r > worst)
            worst = r;
    }
    printf("%s family %-*s %zu cases, worst error/tolerance %.3f\n", direction, width, name, count,
           worst);
    return count;
}

static const char *order_name(tensor_order_t o)
{
    static const char *names[] = {"bhsd", "bshd", "bhds", "hbsd"};
    return names[o];
}

static const char *mask_name(sdpa_mask_kind_t m)
{
    static const char *names[] = {"none", "buffer", "causal_tl", "causal_br"};
    return names[m];
}

void fwd_case_describe(const fwd_case_t *c, char *out, size_t size)
{
    int n = snprintf(out, size,
                     "B%lld H%lld/%lld Sq%lld Sk%lld D%lld q=%s k=%s v=%s layout=%s,%s,%s,%s "
                     "pad%lld mask=%s",
                     (long long)c->batch, (long long)c->q_heads, (long long)c->kv_heads,
                     (long long)c->q_len, (long long)c->k_len, (long long)c->head_size,
                     sdpa_dtype_name(c->q_dtype), sdpa_dtype_name(c->k_dtype),
                     sdpa_dtype_name(c->v_dtype), order_name(c->q_order), order_name(c->k_order),
                     order_name(c->v_order), order_name(c->dst_order), (long long)c->pad,
                     mask_name(c->mask_kind));
    if (c->mask_kind == SDPA_MASK_BUFFER)
        n += snprintf(out + n, size - (size_t)n, "(%s%s%s%s%s)", sdpa_dtype_name(c->mask_dtype),
                      c->mask_broadcast_batch ? ",bb" : "", c->mask_broadcast_heads ? ",bh" : "",
                      c->mask_broadcast_queries ? ",bq" : "",
                      c->fully_masked_rows ? ",dead-rows" : "");
    n += snprintf(out + n, size - (size_t)n, " scale=%s%s%s%s%s%s",
                  c->scale_kind == SDPA_SCALE_NONE   ? "none"
                  : c->scale_kind == SDPA_SCALE_HOST ? "host"
                                                     : sdpa_dtype_name(c->scale_dtype),
                  c->invert_scale ? "/inv" : "",
                  c->softmax == SDPA_SOFTMAX_INF_AS_ZERO ? " inf0" : "",
                  c->f16_accumulation ? " f16acc" : "", c->training ? " train" : "",
                  c->k_quant.scales || c->v_quant.scales ? " quant" : "");
    if (c->k_quant.scales || c->v_quant.scales)
        snprintf(out + n, size - (size_t)n, "(k:%d/%d g%lld v:%d/%d g%lld)", c->k_quant.scales,
                 c->k_quant.zero_points, (long long)c->k_quant.group_size, c->v_quant.scales,
                 c->v_quant.zero_points, (long long)c->v_quant.group_size);
}

static void dims4(int64_t out[4], int64_t a, int64_t b, int64_t c, int64_t d)
{
    out[0] = a;
    out[1] = b;
    out[2] = c;
    out[3] = d;
}

void fwd_case_problem(const fwd_case_t *c, sdpa_problem_desc_t *p)
{
    memset(p, 0, sizeof(*p));
    p->struct_size = sizeof(*p);
    p->struct_version = SDPA_PROBLEM_DESC_VERSION;
    p->prop_kind = c->training ? SDPA_FORWARD_TRAINING : SDPA_FORWARD_INFERENCE;
    int64_t d[4];
    dims4(d, c->batch, c->q_heads, c->q_len, c->head_size);
    tensor_layout(&p->q, c->q_dtype, d, c->q_order, c->pad);
    tensor_layout(&p->dst, c->q_dtype, d, c->dst_order, c->pad);
    dims4(d, c->batch, c->kv_heads, c->k_len, c->head_size);
    tensor_layout(&p->k, c->k_dtype, d, c->k_order, c->pad);
    tensor_layout(&p->v, c->v_dtype, d, c->v_order, c->pad);
    if (c->huge_batch_stride) {
        const int64_t stride = ((int64_t)1 << 31) + 64;
        p->q.strides[0] = p->k.strides[0] = p->v.strides[0] = p->dst.strides[0] = stride;
    }
    p->mask_kind = c->mask_kind;
    if (c->mask_kind == SDPA_MASK_BUFFER) {
        dims4(d, c->mask_broadcast_batch ? 1 : c->batch, c->mask_broadcast_heads ? 1 : c->q_heads,
              c->mask_broadcast_queries ? 1 : c->q_len, c->k_len);
        tensor_layout(&p->mask, c->mask_dtype, d, ORDER_BHSD, c->pad);
    }
    p->scale_kind = c->scale_kind;
    p->scale_dtype = c->scale_kind == SDPA_SCALE_DEVICE ? c->scale_dtype : SDPA_DTYPE_UNDEF;
    p->invert_scale = (uint32_t)c->invert_scale;
    p->softmax_kind = c->softmax;
    p->kq_acc_dtype = p->vs_acc_dtype = c->f16_accumulation ? SDPA_DTYPE_F16 : SDPA_DTYPE_F32;
    p->k_quant = c->k_quant;
    p->v_quant = c->v_quant;
}

/* Scales/zero points of a quantized tensor: [B, Hkv, Sk, D/G] or one value. */
static void quant_param_layout(const fwd_case_t *c, sdpa_quant_kind_t kind, int64_t group,
                               sdpa_dtype_t dtype, sdpa_tensor_desc_t *out)
{
    int64_t d[4];
    if (kind == SDPA_QUANT_PER_GROUP)
        dims4(d, c->batch, c->kv_heads, c->k_len, c->head_size / group);
    else
        dims4(d, 1, 1, 1, 1);
    tensor_layout(out, dtype, d, ORDER_BHSD, 0);
}

static void alloc_quant(test_env_t *env, const fwd_case_t *c, const sdpa_quant_desc_t *q,
                        test_tensor_t *scales, test_tensor_t *zp, test_rng_t *rng)
{
    sdpa_tensor_desc_t desc;
    if (q->scales) {
        quant_param_layout(c, q->scales, q->group_size, q->scales_dtype, &desc);
        tensor_alloc(env, scales, &desc);
        tensor_fill_uniform(scales, rng, 0.01, 0.05);
    }
    if (q->zero_points) {
        quant_param_layout(c, q->zero_points, q->group_size, q->zero_points_dtype, &desc);
        tensor_alloc(env, zp, &desc);
        int is_signed = q->zero_points_dtype == SDPA_DTYPE_S8 ||
                        q->zero_points_dtype == SDPA_DTYPE_S4 ||
                        q->zero_points_dtype == SDPA_DTYPE_S32;
        int wide = sdpa_dtype_bits(q->zero_points_dtype) > 4;
        tensor_fill_uniform(zp, rng, is_signed ? (wide ? -20 : -4) : 0, wide ? 20 : 7);
    }
}

/* Integer K/V values span their dtype's range; float ones [-1, 1). */
static void fill_operand(test_tensor_t *t, test_rng_t *rng)
{
    switch (t->desc.dtype) {
    case SDPA_DTYPE_S8:
        tensor_fill_uniform(t, rng, -128, 127);
        break;
    case SDPA_DTYPE_U8:
        tensor_fill_uniform(t, rng, 0, 255);
        break;
    case SDPA_DTYPE_S4:
        tensor_fill_uniform(t, rng, -8, 7);
        break;
    case SDPA_DTYPE_U4:
        tensor_fill_uniform(t, rng, 0, 15);
        break;
    default:
        tensor_fill_uniform(t, rng, -1, 1);
        break;
    }
}

/* Additive mask values in [-3, 0], a few -inf, and, when asked, whole rows
 * of -inf (queries that see no key). */
static void fill_mask(test_tensor_t *t, const fwd_case_t *c, test_rng_t *rng)
{
    const sdpa_tensor_desc_t *d = &t->desc;
    int64_t i[4];
    for (i[0] = 0; i[0] < d->dims[0]; i[0]++)
        for (i[1] = 0; i[1] < d->dims[1]; i[1]++)
            for (i[2] = 0; i[2] < d->dims[2]; i[2]++) {
                int dead = c->fully_masked_rows && (i[2] % 3 == 1);
                for (i[3] = 0; i[3] < d->dims[3]; i[3]++) {
                    int64_t idx = i[0] * d->strides[0] + i[1] * d->strides[1] +
                                  i[2] * d->strides[2] + i[3] * d->strides[3];
                    double value = rng_uniform(rng, -3, 0);
                    if (dead || rng_uniform(rng, 0, 1) < 0.05)
                        value = -INFINITY;
                    sdpa_element_store(t->data, idx, d->dtype, value);
                }
            }
}

void fwd_buffers_alloc(test_env_t *env, const fwd_case_t *c, const sdpa_problem_desc_t *p,
                       fwd_buffers_t *b, test_rng_t *rng)
{
    memset(b, 0, sizeof(*b));
    void (*alloc)(test_env_t *, test_tensor_t *, const sdpa_tensor_desc_t *) =
            c->huge_batch_stride ? tensor_alloc_sparse : tensor_alloc;
    alloc(env, &b->q, &p->q);
    alloc(env, &b->k, &p->k);
    alloc(env, &b->v, &p->v);
    alloc(env, &b->dst, &p->dst);
    alloc(env, &b->dst_ref, &p->dst);
    fill_operand(&b->q, rng);
    fill_operand(&b->k, rng);
    fill_operand(&b->v, rng);
    if (c->mask_kind == SDPA_MASK_BUFFER) {
        tensor_alloc(env, &b->mask, &p->mask);
        fill_mask(&b->mask, c, rng);
    }
    if (c->training) {
        int64_t d[4];
        dims4(d, c->batch, c->q_heads, c->q_len, 1);
        sdpa_tensor_desc_t ws;
        tensor_layout(&ws, SDPA_DTYPE_F32, d, ORDER_BHSD, 0);
        tensor_alloc(env, &b->ws, &ws);
        tensor_alloc(env, &b->ws_ref, &ws);
    }
    if (c->scale_kind == SDPA_SCALE_DEVICE) {
        int64_t d[4];
        dims4(d, 1, 1, 1, 1);
        sdpa_tensor_desc_t sd;
        tensor_layout(&sd, c->scale_dtype, d, ORDER_BHSD, 0);
        tensor_alloc(env, &b->scale, &sd);
        double s = 1.0 / sqrt((double)c->head_size);
        sdpa_element_store(b->scale.data, 0, c->scale_dtype, c->invert_scale ? 1.0 / s : s);
    }
    alloc_quant(env, c, &c->k_quant, &b->k_scales, &b->k_zp, rng);
    alloc_quant(env, c, &c->v_quant, &b->v_scales, &b->v_zp, rng);
}

void fwd_buffers_free(test_env_t *env, fwd_buffers_t *b)
{
    test_tensor_t *all[] = {&b->q,    &b->k,        &b->v,      &b->dst,   &b->dst_ref,
                            &b->mask, &b->ws,       &b->ws_ref, &b->scale, &b->k_scales,
                            &b->k_zp, &b->v_scales, &b->v_zp};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        tensor_free(env, all[i]);
}

void fwd_exec_args(const fwd_case_t *c, const fwd_buffers_t *b, int reference, sdpa_exec_args_t *a)
{
    const test_tensor_t *t[ROLE_COUNT] = {&b->q, &b->k, &b->v, reference ? &b->dst_ref : &b->dst};
    double s = 1.0 / sqrt((double)c->head_size);
    attention_exec_args(t, reference ? b->ws_ref.data : b->ws.data,
                        (float)(c->invert_scale ? 1.0 / s : s), a);
    a->mask = b->mask.data;
    a->scale_ptr = b->scale.data;
    a->k_scales = b->k_scales.data;
    a->k_zero_points = b->k_zp.data;
    a->v_scales = b->v_scales.data;
    a->v_zero_points = b->v_zp.data;
}

double fwd_case_value_bound(const fwd_case_t *c)
{
    if (!sdpa_dtype_is_quantized(c->v_dtype))
        return 1.0;
    /* (q - zp) * scale with |q - zp| < 256 + 20 and scale < 0.05. */
    return 0.05 * (sdpa_dtype_bits(c->v_dtype) == 4 ? 16 + 7 : 256 + 20);
}

int xe_runs, fadd_runs;

int run_on_backend(const sdpa_backend_iface_t *be, sdpa_context_t *ctx,
                   const sdpa_problem_desc_t *p, const sdpa_exec_args_t *a, const char *name,
                   const char *what)
{
    sdpa_primitive_t *prim = NULL;
    sdpa_status_t st = be->primitive_create(ctx, p, &prim);
    ck_assert_msg(st == SDPA_SUCCESS, "%s: %s primitive_create: %s", what, name, be->last_error());
    char config[256] = "";
    st = be->primitive_query(prim, SDPA_QUERY_CONFIG_STRING, config, sizeof(config));
    ck_assert_msg(st == SDPA_SUCCESS, "%s: %s config query: %s", what, name, be->last_error());
    int xe = strncmp(config, "fwd xe ", 7) == 0 || strncmp(config, "bwd xe ", 7) == 0;
    xe_runs += xe;
    fadd_runs += strstr(config, "fadd") != NULL;
    st = be->primitive_execute(prim, a);
    ck_assert_msg(st == SDPA_SUCCESS, "%s: %s execute: %s", what, name, be->last_error());
    be->primitive_destroy(prim);
    return xe;
}

int rerun_skips;

/* The reruns' environments (tests/sdpa/rerun.sh): the fast path (xe or
 * xe_hpg), the native f32 add (fadd). */
static int rerun_fast_path(void)
{
    const char *kernels = getenv("SDPA_ZE_KERNELS");
    return kernels && strncmp(kernels, "xe", 2) == 0;
}

static int rerun_native_add(void)
{
    const char *atomics = getenv("SDPA_ZE_FLOAT_ATOMICS");
    return atomics && strcmp(atomics, "native") == 0;
}

int rerun_skips_case(test_env_t *env, const sdpa_problem_desc_t *p)
{
    const int fast = rerun_fast_path(), native_add = rerun_native_add();
    if ((!fast && !native_add) || !env->ze->primitive_supports)
        return 0;
    sdpa_support_t s;
    memset(&s, 0, sizeof(s));
    s.struct_size = sizeof(s);
    s.struct_version = SDPA_SUPPORT_VERSION;
    sdpa_status_t st = env->ze->primitive_supports(env->ze_ctx, p, &s);
    /* Refusals go on to creation, which reports them. */
    if (st != SDPA_SUCCESS || s.status != SDPA_SUCCESS)
        return 0;
    /* Declined by the fast path, or without a -fadd variant (a forward):
     * the kernels of another run of the suite. */
    if ((fast && s.kernel_kind != SDPA_KERNEL_FAST) ||
        (native_add && strstr(s.config_string, "fadd") == NULL)) {
        rerun_skips++;
        return 1;
    }
    return 0;
}

int rerun_left_out;

int rerun_leaves_out(int representative, int reaches_adds)
{
    const int native_add = rerun_native_add();
    if (((rerun_fast_path() || native_add) && !representative) || (native_add && !reaches_adds)) {
        rerun_left_out++;
        return 1;
    }
    return 0;
}

int xe_runs_checked(void)
{
    const char *kernels = getenv("SDPA_ZE_KERNELS");
    const char *atomics = getenv("SDPA_ZE_FLOAT_ATOMICS");
    if (rerun_fast_path())
        ck_assert_msg(xe_runs > 0, "SDPA_ZE_KERNELS=%s, but no primitive ran the fast path",
                      kernels);
    if (rerun_fast_path() || rerun_native_add())
        printf("cases whose kernels another run of the suite ran (declined by the fast path, "
               "or without a -fadd variant), skipped here: %d; rows left out of this rerun's "
               "representative subset: %d\n",
               rerun_skips, rerun_left_out);
    if (rerun_native_add())
        ck_assert_msg(fadd_runs > 0, "SDPA_ZE_FLOAT_ATOMICS=native, but no backward primitive "
                                     "took a -fadd variant");
    if (atomics && strcmp(atomics, "cas") == 0)
        ck_assert_msg(fadd_runs == 0, "SDPA_ZE_FLOAT_ATOMICS=cas, but %d primitives took a -fadd "
                                      "variant", fadd_runs);
    return xe_runs;
}

double fwd_xe_tolerance(const fwd_case_t *c, double keep_scale)
{
    const double u = 0.5 * sdpa_dtype_epsilon(c->q_dtype);
    const int rounded = 1 + (c->v_dtype != c->q_dtype) + (c->k_dtype != c->q_dtype);
    return rounded * u * fwd_case_value_bound(c) * keep_scale;
}

double fwd_case_compare(const sdpa_problem_desc_t *p, const fwd_buffers_t *b, double dst_tol,
                        int check_lse, double lse_tol, int check_padding, const char *what)
{
    compare_result_t r;
    tensor_compare(&p->dst, b->dst.data, b->dst_ref.data, dst_tol, 1.0, &r);
    ck_assert_msg(r.bad == 0,
                  "%s: O differs in %lld of %lld elements; worst at [%lld,%lld,%lld,%lld]: ze %.9g "
                  "ref %.9g tolerance %.3g",
                  what, (long long)r.bad, (long long)r.checked, (long long)r.worst_idx[0],
                  (long long)r.worst_idx[1], (long long)r.worst_idx[2], (long long)r.worst_idx[3],
                  r.worst_got, r.worst_want, r.worst_tol);
    if (check_padding)
        ck_assert_msg(tensor_padding_intact(&b->dst), "%s: ze wrote outside O's elements", what);
    double worst = r.worst_ratio;

    if (check_lse) {
        compare_result_t w;
        tensor_compare(&b->ws.desc, b->ws.data, b->ws_ref.data, lse_tol, 16.0, &w);
        ck_assert_msg(w.bad == 0,
                      "%s: workspace (log-sum-exp) differs in %lld of %lld rows; worst at "
                      "[%lld,%lld,%lld]: ze %.9g ref %.9g tolerance %.3g",
                      what, (long long)w.bad, (long long)w.checked, (long long)w.worst_idx[0],
                      (long long)w.worst_idx[1], (long long)w.worst_idx[2], w.worst_got,
                      w.worst_want, w.worst_tol);
        if (w.worst_ratio > worst)
            worst = w.worst_ratio;
    }
    return worst;
}

double fwd_case_run(test_env_t *env, const fwd_case_t *c, uint64_t seed)
{
    char what[512];
    fwd_case_describe(c, what, sizeof(what));
    sdpa_problem_desc_t p;
    fwd_case_problem(c, &p);
    if (rerun_skips_case(env, &p))
        return 0;
    test_rng_t rng = {seed};
    fwd_buffers_t b;
    fwd_buffers_alloc(env, c, &p, &b, &rng);

    sdpa_exec_args_t a;
    fwd_exec_args(c, &b, 0, &a);
    int xe = run_on_backend(env->ze, env->ze_ctx, &p, &a, "ze", what);
    fwd_exec_args(c, &b, 1, &a);
    run_on_backend(env->ref, env->ref_ctx, &p, &a, "ref", what);

    /* Tolerance: O is rounded once to its dtype by both backends (so they may
     * differ by one unit in the last place), plus the accumulation error of
     * ze's f32 (or emulated f16) sums, which grows like the square root of
     * the number of terms: D for the scores, Sk for the weighted sum of V
     * rows of magnitude at most value_bound. */
    double eps_acc = c->f16_accumulation ? 0x1.0p-11 : 0x1.0p-24;
    double terms = sqrt((double)c->k_len) + sqrt((double)c->head_size);
    double abs_tol = 8 * eps_acc * terms * fwd_case_value_bound(c);
    if (xe)
        abs_tol += fwd_xe_tolerance(c, 1.0);
    /* The log-sum-exp is f32 in both; its error is that of the scores
     * (D terms each) plus log/exp rounding, relative to its magnitude. */
    double lse_tol = 8 * eps_acc * terms * 4;
    double worst =
            fwd_case_compare(&p, &b, abs_tol, c->training, lse_tol, !c->huge_batch_stride, what);
    fwd_buffers_free(env, &b);
    return worst;
}
