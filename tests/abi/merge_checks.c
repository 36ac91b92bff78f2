/* merge_checks.c - the merge checks both backends' suites run (merge_checks.h). */
#include <check.h>
#include <math.h>
#include <string.h>

#include "merge_case.h"
#include "merge_checks.h"

typedef struct desc_row {
    const char *name;
    void (*mutate)(sdpa_merge_desc_t *d);
    sdpa_status_t status;
    const char *words; /* in the message */
} desc_row_t;

static void valid_desc(sdpa_merge_desc_t *d)
{
    merge_desc_init(d, 3, 2, 2, 3, 16, SDPA_DTYPE_F16, SDPA_DTYPE_F32, 1, SDPA_SOFTMAX_ACCURATE,
                    MERGE_DENSE);
}

static void size_small(sdpa_merge_desc_t *d)
{
    d->struct_size = 8;
}
static void version_future(sdpa_merge_desc_t *d)
{
    d->struct_version = SDPA_MERGE_DESC_VERSION + 1;
}
static void no_states(sdpa_merge_desc_t *d)
{
    d->num_states = 0;
}
static void too_many_states(sdpa_merge_desc_t *d)
{
    d->num_states = SDPA_MERGE_MAX_STATES + 1;
}
static void bad_softmax(sdpa_merge_desc_t *d)
{
    d->softmax_kind = (sdpa_softmax_kind_t)7;
}
static void integer_states(sdpa_merge_desc_t *d)
{
    d->states.dtype = SDPA_DTYPE_S8;
}
static void undef_states(sdpa_merge_desc_t *d)
{
    d->states.dtype = SDPA_DTYPE_UNDEF;
}
static void negative_stride(sdpa_merge_desc_t *d)
{
    d->states.strides[2] = -16;
}
static void huge_head(sdpa_merge_desc_t *d)
{
    d->states.dims[3] = d->dst.dims[3] = 1024;
}
static void f16_lse(sdpa_merge_desc_t *d)
{
    d->states_lse.dtype = SDPA_DTYPE_F16;
}
static void lse_dim3(sdpa_merge_desc_t *d)
{
    d->states_lse.dims[3] = 16;
}
static void lse_queries(sdpa_merge_desc_t *d)
{
    d->states_lse.dims[2] = 2;
}
static void dst_queries(sdpa_merge_desc_t *d)
{
    d->dst.dims[2] = 7;
}
static void dst_s4(sdpa_merge_desc_t *d)
{
    d->dst.dtype = SDPA_DTYPE_S4;
}
static void dst_lse_bf16(sdpa_merge_desc_t *d)
{
    d->dst_lse.dtype = SDPA_DTYPE_BF16;
}
static void dst_lse_heads(sdpa_merge_desc_t *d)
{
    d->dst_lse.dims[1] = 1;
}

static const desc_row_t desc_rows[] = {
        {"struct_size", size_small, SDPA_ERROR_INVALID_STRUCT, "desc->struct_size = 8"},
        {"struct_version", version_future, SDPA_ERROR_INVALID_STRUCT, "desc->struct_version = 2"},
        {"num_states 0", no_states, SDPA_ERROR_INVALID_ARGUMENT, "num_states = 0"},
        {"num_states 17", too_many_states, SDPA_ERROR_INVALID_ARGUMENT, "num_states = 17"},
        {"softmax_kind", bad_softmax, SDPA_ERROR_INVALID_ARGUMENT, "softmax_kind = 7"},
        {"states s8", integer_states, SDPA_ERROR_INVALID_ARGUMENT, "states.dtype = s8"},
        {"states undef", undef_states, SDPA_ERROR_INVALID_ARGUMENT, "states.dtype = undef"},
        {"states stride", negative_stride, SDPA_ERROR_INVALID_ARGUMENT, "states.strides[2] = -16"},
        {"head size", huge_head, SDPA_ERROR_UNSUPPORTED, "states.dims[3] = 1024"},
        {"states_lse f16", f16_lse, SDPA_ERROR_INVALID_ARGUMENT, "states_lse.dtype = f16"},
        {"states_lse dims[3]", lse_dim3, SDPA_ERROR_INVALID_ARGUMENT, "states_lse.dims[3] = 16"},
        {"states_lse queries", lse_queries, SDPA_ERROR_INVALID_ARGUMENT,
         "states_lse.dims[2] = 2 (queries) differs from states.dims[2] = 3"},
        {"dst queries", dst_queries, SDPA_ERROR_INVALID_ARGUMENT,
         "dst.dims[2] = 7 (queries) differs from states.dims[2] = 3"},
        {"dst s4", dst_s4, SDPA_ERROR_INVALID_ARGUMENT, "dst.dtype = s4"},
        {"dst_lse bf16", dst_lse_bf16, SDPA_ERROR_INVALID_ARGUMENT, "dst_lse.dtype = bf16"},
        {"dst_lse heads", dst_lse_heads, SDPA_ERROR_INVALID_ARGUMENT,
         "dst_lse.dims[1] = 1 (heads) differs from states.dims[1] = 2"},
};

int merge_invalid_desc_count(void)
{
    return (int)(sizeof(desc_rows) / sizeof(desc_rows[0]));
}

static void expect(sdpa_status_t got, sdpa_status_t want, const char *words, const char *name,
                   const sdpa_backend_iface_t *iface)
{
    const char *message = iface->last_error();
    ck_assert_msg(got == want, "%s: %s, expected %s (%s)", name, sdpa_status_name(got),
                  sdpa_status_name(want), message);
    ck_assert_msg(strstr(message, words) != NULL, "%s: message \"%s\" lacks \"%s\"", name, message,
                  words);
}

void merge_invalid_desc_check(int i, const sdpa_backend_iface_t *iface, sdpa_context_t *ctx)
{
    const desc_row_t *row = &desc_rows[i];
    sdpa_merge_desc_t d;
    valid_desc(&d);
    row->mutate(&d);
    sdpa_primitive_t *prim = (sdpa_primitive_t *)&d; /* must be reset to NULL */
    expect(iface->merge_create(ctx, &d, &prim), row->status, row->words, row->name, iface);
    ck_assert_ptr_null(prim);
}

/* ------------------------------------------------------------------------- */
/* Arguments                                                                 */
/* ------------------------------------------------------------------------- */

typedef struct args_row {
    const char *name;
    void (*mutate)(merge_case_t *c, sdpa_merge_args_t *a);
    const char *words;
} args_row_t;

static void args_size(merge_case_t *c, sdpa_merge_args_t *a)
{
    (void)c;
    a->struct_size = sizeof(*a) + 8;
}
static void null_states(merge_case_t *c, sdpa_merge_args_t *a)
{
    (void)c;
    a->states = NULL;
}
static void null_lse_array(merge_case_t *c, sdpa_merge_args_t *a)
{
    (void)c;
    a->states_lse = NULL;
}
static void null_state(merge_case_t *c, sdpa_merge_args_t *a)
{
    c->states[2] = NULL;
    a->states = c->states;
}
static void misaligned_state(merge_case_t *c, sdpa_merge_args_t *a)
{
    c->states[1] = (const char *)c->states[1] + 1; /* f16: 2-byte elements */
    a->states = c->states;
}
static void misaligned_lse(merge_case_t *c, sdpa_merge_args_t *a)
{
    c->states_lse[0] = (const float *)((const char *)c->states_lse[0] + 2);
    a->states_lse = c->states_lse;
}
static void null_dst(merge_case_t *c, sdpa_merge_args_t *a)
{
    (void)c;
    a->dst = NULL;
}
static void null_dst_lse(merge_case_t *c, sdpa_merge_args_t *a)
{
    (void)c;
    a->dst_lse = NULL;
}
static void null_wait_events(merge_case_t *c, sdpa_merge_args_t *a)
{
    (void)c;
    a->num_wait_events = 2;
    a->wait_events = NULL;
}

static const args_row_t args_rows[] = {
        {"struct_size", args_size, "args->struct_size"},
        {"states NULL", null_states, "args->states is NULL but num_states = 3"},
        {"states_lse NULL", null_lse_array, "args->states_lse is NULL but num_states = 3"},
        {"states[2] NULL", null_state, "args->states[2] is NULL"},
        {"states[1] misaligned", misaligned_state, "args->states[1]"},
        {"states_lse[0] misaligned", misaligned_lse, "args->states_lse[0]"},
        {"dst NULL", null_dst, "args->dst is NULL"},
        {"dst_lse NULL", null_dst_lse, "args->dst_lse is NULL but dst_lse.dtype = f32"},
        {"wait_events NULL", null_wait_events, "args->num_wait_events = 2"},
};

int merge_invalid_args_count(void)
{
    return (int)(sizeof(args_rows) / sizeof(args_rows[0]));
}

void merge_invalid_args_check(int i, const sdpa_backend_iface_t *iface, sdpa_context_t *ctx,
                              const test_allocator_t *allocator)
{
    const args_row_t *row = &args_rows[i];
    merge_case_t c;
    valid_desc(&c.desc);
    ck_assert_int_eq(merge_case_alloc(&c, 5, allocator, MERGE_LSE_MIXED), 0);
    sdpa_primitive_t *prim = NULL;
    ck_assert_int_eq(iface->merge_create(ctx, &c.desc, &prim), SDPA_SUCCESS);
    sdpa_merge_args_t a = c.args;
    row->mutate(&c, &a);
    sdpa_status_t want =
            a.struct_size != sizeof(a) ? SDPA_ERROR_INVALID_STRUCT : SDPA_ERROR_INVALID_ARGUMENT;
    expect(iface->merge_execute(prim, &a), want, row->words, row->name, iface);
    expect(iface->merge_execute(prim, NULL), SDPA_ERROR_INVALID_ARGUMENT, "args is NULL", "NULL",
           iface);
    iface->primitive_destroy(prim);
    merge_case_free(&c);
}

void merge_kinds_check(const sdpa_backend_iface_t *iface, sdpa_context_t *ctx,
                       const test_allocator_t *allocator)
{
    merge_case_t c;
    valid_desc(&c.desc);
    ck_assert_int_eq(merge_case_alloc(&c, 9, allocator, MERGE_LSE_MIXED), 0);
    sdpa_primitive_t *merge = NULL, *attention = NULL;
    ck_assert_int_eq(iface->merge_create(ctx, &c.desc, &merge), SDPA_SUCCESS);

    attn_case_t a;
    problem_init(&a.desc, SDPA_FORWARD_INFERENCE, 1, 2, 2, 4, 8, 16, SDPA_DTYPE_F32,
                 SDPA_DTYPE_F32);
    ck_assert_int_eq(case_alloc(&a, 3, allocator), 0);
    ck_assert_int_eq(iface->primitive_create(ctx, &a.desc, &attention), SDPA_SUCCESS);

    expect(iface->primitive_execute(merge, &a.args), SDPA_ERROR_INVALID_ARGUMENT, "merge primitive",
           "primitive_execute(merge)", iface);
    expect(iface->merge_execute(attention, &c.args), SDPA_ERROR_INVALID_ARGUMENT,
           "attention primitive", "merge_execute(attention)", iface);
    expect(iface->merge_execute(NULL, &c.args), SDPA_ERROR_INVALID_ARGUMENT, "prim is NULL",
           "merge_execute(NULL)", iface);
    sdpa_primitive_t *none = attention;
    expect(iface->merge_create(ctx, NULL, &none), SDPA_ERROR_INVALID_ARGUMENT, "desc is NULL",
           "merge_create(NULL desc)", iface);
    ck_assert_ptr_null(none);

    size_t bytes = 1;
    char config[96] = "";
    ck_assert_int_eq(
            iface->primitive_query(merge, SDPA_QUERY_WORKSPACE_BYTES, &bytes, sizeof(bytes)),
            SDPA_SUCCESS);
    ck_assert_uint_eq(bytes, 0);
    ck_assert_int_eq(iface->primitive_query(merge, SDPA_QUERY_SCRATCH_BYTES, &bytes, sizeof(bytes)),
                     SDPA_SUCCESS);
    ck_assert_uint_eq(bytes, 0);
    ck_assert_int_eq(
            iface->primitive_query(merge, SDPA_QUERY_CONFIG_STRING, config, sizeof(config)),
            SDPA_SUCCESS);
    ck_assert_msg(strstr(config, "merge n3") != NULL, "config string \"%s\"", config);

    /* The descriptor was copied: changing it changes nothing. */
    c.desc.num_states = 0;
    ck_assert_int_eq(iface->merge_execute(merge, &c.args), SDPA_SUCCESS);
    iface->primitive_destroy(merge);
    iface->primitive_destroy(attention);
    case_free(&a);
    merge_case_free(&c);
}

/* ------------------------------------------------------------------------- */
/* Results                                                                   */
/* ------------------------------------------------------------------------- */

#define ck_assert_ok(be, call)                                                                     \
    do {                                                                                           \
        sdpa_status_t ok_status_ = (call);                                                         \
        ck_assert_msg(ok_status_ == SDPA_SUCCESS, "%s: %s: %s", #call,                             \
                      sdpa_status_name(ok_status_), (be)->iface->last_error());                    \
    } while (0)

void merge_run(const merge_backend_t *be, merge_case_t *c)
{
    sdpa_primitive_t *prim = NULL;
    ck_assert_ok(be, be->iface->merge_create(be->ctx, &c->desc, &prim));
    ck_assert_ok(be, be->iface->merge_execute(prim, &c->args));
    be->iface->primitive_destroy(prim);
}

void merge_variant_check(const merge_backend_t *be, int i, const test_allocator_t *allocator,
                         int exact)
{
    merge_case_t c;
    merge_variant_init(&c.desc, i);
    ck_assert_int_eq(merge_case_alloc(&c, (uint64_t)i + 1, allocator, MERGE_LSE_MIXED), 0);
    merge_run(be, &c);
    ck_assert(merge_compare(&c, exact));
    merge_case_free(&c);
}

void merge_in_place_check(const merge_backend_t *be, merge_layout_t layout,
                          const test_allocator_t *allocator, int exact)
{
    const uint32_t n = layout == MERGE_DENSE ? 2 : 3;
    merge_case_t c;
    merge_desc_init(&c.desc, n, 2, 3, 5, 24, SDPA_DTYPE_F16, SDPA_DTYPE_F16, 1,
                    SDPA_SOFTMAX_INF_AS_ZERO, layout);
    ck_assert_int_eq(merge_case_alloc(&c, 31, allocator, MERGE_LSE_MIXED), 0);
    merge_expected_t e;
    ck_assert_int_eq(merge_expect(&c, &e), 0);
    c.args.dst = (void *)c.states[n - 1];
    c.args.dst_lse = (float *)c.states_lse[n - 1];
    merge_run(be, &c);
    ck_assert(merge_check(&c, &e, exact));
    merge_expected_free(&e);
    merge_case_free(&c);
}

/* Creates, executes and destroys an attention primitive on be. */
static void run_attention(const merge_backend_t *be, const sdpa_problem_desc_t *d,
                          const sdpa_exec_args_t *a)
{
    sdpa_primitive_t *prim = NULL;
    ck_assert_ok(be, be->iface->primitive_create(be->ctx, d, &prim));
    ck_assert_ok(be, be->iface->primitive_execute(prim, a));
    be->iface->primitive_destroy(prim);
}

void merge_forward_chunks_check(const merge_backend_t *fwd, const merge_backend_t *merge,
                                const merge_backend_t *full_be, const int64_t *bounds, uint32_t n,
                                const test_allocator_t *allocator, int exact)
{
    const int64_t B = 2, Hq = 4, Hkv = 2, Sq = 6, Sk = bounds[n], D = 32;
    attn_case_t full;
    problem_init(&full.desc, SDPA_FORWARD_TRAINING, B, Hq, Hkv, Sq, Sk, D, SDPA_DTYPE_F32,
                 SDPA_DTYPE_F32);
    full.desc.mask_kind = SDPA_MASK_BUFFER;
    full.desc.mask = dense_tensor(SDPA_DTYPE_F32, B, Hq, Sq, Sk);
    ck_assert_int_eq(case_alloc(&full, 12, allocator), 0);
    run_attention(full_be, &full.desc, &full.args);

    merge_case_t m;
    merge_desc_init(&m.desc, n, B, Hq, Sq, D, SDPA_DTYPE_F32, SDPA_DTYPE_F32, 1,
                    SDPA_SOFTMAX_ACCURATE, MERGE_DENSE);
    ck_assert_int_eq(merge_case_alloc(&m, 1, allocator, MERGE_LSE_MIXED), 0);
    int empty_states = 0;
    for (uint32_t s = 0; s < n; s++) {
        sdpa_problem_desc_t d;
        sdpa_exec_args_t a;
        merge_key_chunk(&full, bounds[s], bounds[s + 1] - bounds[s], &d, &a);
        a.dst = (void *)m.states[s];
        a.workspace = (void *)m.states_lse[s];
        run_attention(fwd, &d, &a);
        for (int64_t r = 0; r < B * Hq * Sq; r++)
            empty_states += m.states_lse[s][r] == -INFINITY;
    }
    ck_assert_msg(empty_states > 0, "no chunk hides a row entirely: the case tests less");
    merge_run(merge, &m);

    /* Exact: the states were rounded to f32 once. Otherwise also the f32
     * forward's own error on values of magnitude ~1. */
    const double o_tol = exact ? 1e-6 : ldexp(1.0, -16);
    const float *o = m.args.dst, *lse = m.args.dst_lse, *want_o = full.args.dst,
                *want_lse = full.args.workspace;
    for (int64_t r = 0; r < B * Hq * Sq; r++) {
        const double lse_tol = ldexp(fmax(1.0, fabs(want_lse[r])), exact ? -21 : -18);
        ck_assert_msg(close_enough(lse[r], want_lse[r], 0, lse_tol), "LSE row %lld: %.9g vs %.9g",
                      (long long)r, lse[r], want_lse[r]);
        for (int64_t e = 0; e < D; e++)
            ck_assert_msg(close_enough(o[r * D + e], want_o[r * D + e], 0, o_tol),
                          "O[%lld][%lld]: %.9g vs %.9g", (long long)r, (long long)e, o[r * D + e],
                          want_o[r * D + e]);
    }
    merge_case_free(&m);
    case_free(&full);
}
