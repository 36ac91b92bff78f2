/*
 * test_sizes.c - sizes at and past the limits, on the device:
 *   - a backward whose scratch exceeds the device's maxMemAllocSize is
 *     refused at creation (SDPA_ERROR_UNSUPPORTED), by ze, not at execution;
 *   - the workspace query of a huge (broadcast) training problem is exact;
 *   - a real execution whose K and V have more than 2^31 elements each
 *     (int4, 1 GiB apiece), checked against a double-precision oracle.
 * (Descriptors whose buffers cannot exist at all are in the invalid-problem
 * table, which every backend runs.)
 */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "element.h"
#include "small_problem.h"

static void problem_init(sdpa_problem_desc_t *p, sdpa_prop_kind_t kind)
{
    memset(p, 0, sizeof(*p));
    p->struct_size = sizeof(*p);
    p->struct_version = SDPA_PROBLEM_DESC_VERSION;
    p->prop_kind = kind;
    p->scale_kind = SDPA_SCALE_HOST;
}

START_TEST(scratch_past_max_alloc_refused_at_creation)
{
    /* Deterministic GQA backward: f32 dK/dV partials [B, Hq, Sk, D], two of
     * them, just past the device's largest allocation. Nothing is allocated:
     * creation must refuse. */
    const uint64_t max_alloc = suite_env.device_props.maxMemAllocSize;
    const int64_t hq = 64, d = 64;
    int64_t sk = (int64_t)(max_alloc / (2 * (uint64_t)hq * d * 4)) + 1;
    ck_assert_int_le(sk, INT32_MAX);
    sdpa_problem_desc_t p;
    problem_init(&p, SDPA_BACKWARD);
    p.q = p.dst = p.diff_q = p.diff_dst = small_dense(SDPA_DTYPE_F16, 1, hq, 16, d);
    p.k = p.v = p.diff_k = p.diff_v = small_dense(SDPA_DTYPE_F16, 1, 1, sk, d);
    p.deterministic = 1;
    sdpa_primitive_t *prim = NULL;
    sdpa_status_t st = suite_env.ze->primitive_create(suite_env.ze_ctx, &p, &prim);
    const char *msg = suite_env.ze->last_error();
    printf("scratch past maxMemAllocSize (%llu bytes), Sk = %lld: %s: %s\n",
           (unsigned long long)max_alloc, (long long)sk, sdpa_status_name(st), msg);
    ck_assert_ptr_null(prim);
    ck_assert_int_eq(st, SDPA_ERROR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(msg, "maxMemAllocSize"));
    char limit[32];
    snprintf(limit, sizeof(limit), "%llu bytes", (unsigned long long)max_alloc);
    ck_assert_ptr_nonnull(strstr(msg, limit));

    /* One key fewer per 4 fits again: the check is the limit, not a guess. */
    p.k = p.v = p.diff_k = p.diff_v = small_dense(SDPA_DTYPE_F16, 1, 1, sk - sk / 4, d);
    st = suite_env.ze->primitive_create(suite_env.ze_ctx, &p, &prim);
    ck_assert_msg(st == SDPA_SUCCESS, "%s", suite_env.ze->last_error());
    size_t scratch = 0;
    ck_assert_int_eq(suite_env.ze->primitive_query(prim, SDPA_QUERY_SCRATCH_BYTES, &scratch,
                                                   sizeof(scratch)),
                     SDPA_SUCCESS);
    ck_assert_uint_le(scratch, max_alloc);
    ck_assert_uint_ge(scratch, 2 * (uint64_t)hq * (uint64_t)(sk - sk / 4) * d * 4);
    suite_env.ze->primitive_destroy(prim);
}
END_TEST

START_TEST(workspace_query_of_a_huge_problem_is_exact)
{
    /* B = 2^20, Hq = 2^10, Sq = 2^10 with one row per (batch, head): the
     * tensors are small views, the workspace 2^42 bytes. */
    sdpa_problem_desc_t p;
    problem_init(&p, SDPA_FORWARD_TRAINING);
    sdpa_tensor_desc_t q = {SDPA_DTYPE_F16, {1 << 20, 1 << 10, 1 << 10, 64}, {0, 0, 0, 1}};
    sdpa_tensor_desc_t kv = {SDPA_DTYPE_F16, {1 << 20, 1 << 10, 8, 64}, {0, 0, 0, 1}};
    p.q = p.dst = q;
    p.k = p.v = kv;
    const sdpa_backend_iface_t *backends[2] = {suite_env.ze, suite_env.ref};
    sdpa_context_t *contexts[2] = {suite_env.ze_ctx, suite_env.ref_ctx};
    for (int b = 0; b < 2; b++) {
        sdpa_primitive_t *prim = NULL;
        ck_assert_msg(backends[b]->primitive_create(contexts[b], &p, &prim) == SDPA_SUCCESS,
                      "%s: %s", backends[b]->name, backends[b]->last_error());
        size_t ws = 0;
        ck_assert_int_eq(
                backends[b]->primitive_query(prim, SDPA_QUERY_WORKSPACE_BYTES, &ws, sizeof(ws)),
                SDPA_SUCCESS);
        ck_assert_uint_eq(ws, (size_t)1 << 42);
        backends[b]->primitive_destroy(prim);
    }
    /* Twice the batch and four times the queries: 2^45 bytes, still exact;
     * 2^61 (B = Hq = 2^30, Sq = 16: 2^66 bytes) is refused by the table. */
    p.q.dims[0] = p.dst.dims[0] = p.k.dims[0] = p.v.dims[0] = 1 << 21;
    p.q.dims[2] = p.dst.dims[2] = 1 << 12;
    sdpa_primitive_t *prim = NULL;
    ck_assert_int_eq(suite_env.ze->primitive_create(suite_env.ze_ctx, &p, &prim), SDPA_SUCCESS);
    size_t ws = 0;
    ck_assert_int_eq(
            suite_env.ze->primitive_query(prim, SDPA_QUERY_WORKSPACE_BYTES, &ws, sizeof(ws)),
            SDPA_SUCCESS);
    ck_assert_uint_eq(ws, (size_t)1 << 45);
    suite_env.ze->primitive_destroy(prim);
}
END_TEST

/* ------------------------------------------------------------------------- */
/* More than 2^31 elements                                                   */
/* ------------------------------------------------------------------------- */

/* int4 K and V, [1, 3, 2^24, 64], dense: 3 * 2^30 elements each (1.5 GiB),
 * the third head entirely past element 2^31. Decode: Q is one query per
 * head.
 *
 * The data make the exact answer robust to f32 summation over 2^24 keys:
 * "hot" keys (every HOT_EVERY-th, and the last) have K = 7 in every dim, a
 * score of about 84; every other key scores within +-16 of 0, so its weight
 * is below e^-60 and all of O comes from the hot keys' V, averaged with
 * equal weights (the hot scores are bit-identical). V of the hot keys
 * depends on the head, the key and the dim, so that reading any other
 * element than the right one - a 32-bit offset that wraps - moves O by
 * whole units. The oracle still sums every key, in double. */
#define BIG_HEADS 3
#define BIG_SK ((int64_t)1 << 24)
#define BIG_D 64
#define ROW_BYTES (BIG_D / 2)
#define HOT_EVERY 4099

static const float k_scale = 0.25f, v_scale = 0.5f, score_scale = 1.0f;

/* Hot keys sit at different places in each head, so that reading another
 * head's K finds none where it should. */
static int is_hot(int64_t h, int64_t j)
{
    return (j + 1000 * h) % HOT_EVERY == 0 || j == BIG_SK - 1;
}

static int k_value(int64_t h, int64_t j, int64_t d)
{
    return is_hot(h, j) ? 7 : (int)((j + d + h) % 3) - 1;
}

/* Hot V: about (3d + 5h) mod 14 - 7 + 1/2, distinct per head and dim. */
static int v_value(int64_t h, int64_t j, int64_t d)
{
    if (!is_hot(h, j))
        return (int)((j + d) % 8);
    return (int)((3 * d + 5 * h) % 14) - 7 + (int)((j / HOT_EVERY) & 1);
}

static void pack_row(uint8_t *row, int (*value)(int64_t, int64_t, int64_t), int64_t h, int64_t j)
{
    for (int64_t d = 0; d < BIG_D; d += 2)
        row[d / 2] = (uint8_t)((value(h, j, d) & 0xf) | (value(h, j, d + 1) & 0xf) << 4);
}

/* Cold rows repeat every COLD_PERIOD keys (K every 3, V every 8): each head
 * is that block copied over, then its hot rows. */
#define COLD_PERIOD 24

static void fill_head(uint8_t *rows, int (*value)(int64_t, int64_t, int64_t), int64_t h)
{
    uint8_t block[COLD_PERIOD * ROW_BYTES];
    for (int64_t r = 0; r < COLD_PERIOD; r++) /* key COLD_PERIOD + r: cold, same phase as r */
        pack_row(block + r * ROW_BYTES, value, h, COLD_PERIOD + r);
    int64_t j = 0;
    for (; j + COLD_PERIOD <= BIG_SK; j += COLD_PERIOD)
        memcpy(rows + j * ROW_BYTES, block, sizeof(block));
    memcpy(rows + j * ROW_BYTES, block, (size_t)(BIG_SK - j) * ROW_BYTES);
    for (j = 0; j < BIG_SK; j++)
        if (is_hot(h, j))
            pack_row(rows + j * ROW_BYTES, value, h, j);
}

static void fill_kv(uint8_t *k, uint8_t *v)
{
    for (int64_t h = 0; h < BIG_HEADS; h++) {
        fill_head(k + h * BIG_SK * ROW_BYTES, k_value, h);
        fill_head(v + h * BIG_SK * ROW_BYTES, v_value, h);
    }
}

typedef struct oracle_job {
    int64_t head;
    const uint8_t *k, *v; /* the head's rows, as the kernel reads them */
    double q[BIG_D];
    double out[BIG_D];
} oracle_job_t;

/* Signed nibbles of a byte: element 2i low, 2i + 1 high. */
static void unpack(uint8_t byte, int *lo, int *hi)
{
    *lo = (int)(int8_t)(uint8_t)(byte << 4) >> 4;
    *hi = (int)(int8_t)byte >> 4;
}

/* O of one head in double from the bytes in memory: softmax(q.K^T * scale)
 * V, streaming over the keys (online max). A key whose weight is below
 * 2^-200 of the running sum cannot move a double result; its V is skipped. */
static void *oracle_head(void *arg)
{
    oracle_job_t *job = arg;
    double m = -INFINITY, l = 0, acc[BIG_D] = {0};
    for (int64_t j = 0; j < BIG_SK; j++) {
        const uint8_t *kr = job->k + j * ROW_BYTES;
        double s = 0;
        for (int64_t i = 0; i < ROW_BYTES; i++) {
            int lo, hi;
            unpack(kr[i], &lo, &hi);
            s += job->q[2 * i] * lo + job->q[2 * i + 1] * hi;
        }
        s *= k_scale * score_scale;
        if (s > m) {
            double c = exp(m - s);
            l *= c;
            for (int64_t d = 0; d < BIG_D; d++)
                acc[d] *= c;
            m = s;
        }
        double p = exp(s - m);
        l += p;
        if (p < 0x1.0p-200 * l)
            continue;
        const uint8_t *vr = job->v + j * ROW_BYTES;
        for (int64_t i = 0; i < ROW_BYTES; i++) {
            int lo, hi;
            unpack(vr[i], &lo, &hi);
            acc[2 * i] += p * lo * v_scale;
            acc[2 * i + 1] += p * hi * v_scale;
        }
    }
    for (int64_t d = 0; d < BIG_D; d++)
        job->out[d] = acc[d] / l;
    return NULL;
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0->tv_nsec);
}

START_TEST(execution_past_2_pow_31_elements)
{
    sdpa_problem_desc_t p;
    problem_init(&p, SDPA_FORWARD_INFERENCE);
    p.q = p.dst = small_dense(SDPA_DTYPE_F16, 1, BIG_HEADS, 1, BIG_D);
    p.k = small_dense(SDPA_DTYPE_S4, 1, BIG_HEADS, BIG_SK, BIG_D);
    p.v = p.k;
    p.k_quant.scales = p.v_quant.scales = SDPA_QUANT_PER_TENSOR;
    p.k_quant.scales_dtype = p.v_quant.scales_dtype = SDPA_DTYPE_F32;
    int64_t elements = BIG_HEADS * BIG_SK * BIG_D;
    ck_assert_int_gt(elements, (int64_t)1 << 31);

    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    test_tensor_t q, o, k, v;
    tensor_alloc(&suite_env, &q, &p.q);
    tensor_alloc(&suite_env, &o, &p.dst);
    tensor_alloc_sparse(&suite_env, &k, &p.k);
    tensor_alloc_sparse(&suite_env, &v, &p.v);
    ck_assert_uint_eq(k.bytes, (size_t)elements / 2);
    test_rng_t rng = {77};
    tensor_fill_uniform(&q, &rng, 0.5, 1.0);
    fill_kv(k.data, v.data);
    float *scales = test_alloc(&suite_env, 2 * sizeof(float));
    scales[0] = k_scale;
    scales[1] = v_scale;
    double fill_s = seconds_since(&t0);

    sdpa_exec_args_t a = {.struct_size = sizeof(a), .struct_version = SDPA_EXEC_ARGS_VERSION};
    a.q = q.data;
    a.k = k.data;
    a.v = v.data;
    a.dst = o.data;
    a.scale = score_scale;
    a.k_scales = &scales[0];
    a.v_scales = &scales[1];
    sdpa_primitive_t *prim = NULL;
    ck_assert_msg(suite_env.ze->primitive_create(suite_env.ze_ctx, &p, &prim) == SDPA_SUCCESS, "%s",
                  suite_env.ze->last_error());
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ck_assert_msg(suite_env.ze->primitive_execute(prim, &a) == SDPA_SUCCESS, "%s",
                  suite_env.ze->last_error());
    double ze_s = seconds_since(&t0);
    suite_env.ze->primitive_destroy(prim);

    /* The oracle, one thread per head. */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    oracle_job_t jobs[BIG_HEADS];
    pthread_t threads[BIG_HEADS];
    for (int64_t h = 0; h < BIG_HEADS; h++) {
        for (int64_t d = 0; d < BIG_D; d++)
            jobs[h].q[d] = sdpa_element_load(q.data, h * BIG_D + d, SDPA_DTYPE_F16);
        jobs[h].head = h;
        jobs[h].k = (const uint8_t *)k.data + h * BIG_SK * ROW_BYTES;
        jobs[h].v = (const uint8_t *)v.data + h * BIG_SK * ROW_BYTES;
        ck_assert_int_eq(pthread_create(&threads[h], NULL, oracle_head, &jobs[h]), 0);
    }
    for (int h = 0; h < BIG_HEADS; h++)
        pthread_join(threads[h], NULL);
    double oracle_s = seconds_since(&t0);

    /* O comes from equally weighted hot keys, whatever the order of the f32
     * sums: rounding O to f16, plus a few f32 units for the division. */
    double worst = 0;
    int failures = 0;
    char first[256] = "";
    for (int64_t h = 0; h < BIG_HEADS; h++)
        for (int64_t d = 0; d < BIG_D; d++) {
            double got = sdpa_element_load(o.data, h * BIG_D + d, SDPA_DTYPE_F16);
            double want = jobs[h].out[d];
            double tol = ulp_of(SDPA_DTYPE_F16, fabs(want)) + 16 * 0x1.0p-24 * 8 * v_scale;
            double err = fabs(got - want);
            if (err / tol > worst)
                worst = err / tol;
            if (err > tol && failures++ == 0)
                snprintf(first, sizeof(first), "O[%lld][%lld] = %.6f, oracle %.6f, tolerance %.2g",
                         (long long)h, (long long)d, got, want, tol);
        }
    printf("%lld-element int4 K and V (%zu MiB each): fill %.1f s, ze %.1f s, oracle %.1f s; "
           "O[h][0] = %.4f %.4f %.4f, %d of %d elements beyond tolerance (worst error/tolerance "
           "%.3f)\n",
           (long long)elements, k.bytes >> 20, fill_s, ze_s, oracle_s, jobs[0].out[0],
           jobs[1].out[0], jobs[2].out[0], failures, BIG_HEADS * BIG_D, worst);
    ck_assert_msg(failures == 0, "%d elements of O differ; first: %s", failures, first);

    test_free(&suite_env, scales);
    tensor_free(&suite_env, &q);
    tensor_free(&suite_env, &o);
    tensor_free(&suite_env, &k);
    tensor_free(&suite_env, &v);
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_ONCE(scratch_past_max_alloc_refused_at_creation),
            TEST_ONCE(workspace_query_of_a_huge_problem_is_exact),
            TEST_ONCE(execution_past_2_pow_31_elements),
    };
    return test_env_run_table("sizes", 1800, tests, TEST_COUNT(tests));
}
