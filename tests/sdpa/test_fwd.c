/*
 * test_fwd.c - forward attention on the ze backend against the ref backend,
 * over generated cases that cover every forward feature.
 *
 * Cases come in families: a family fixes the features (dtypes, layout, mask,
 * scale, softmax, accumulation, training, GQA) and varies the sizes, so that
 * most of a family's cases reuse the modules its first case built.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fwd_case.h"
#include "problem.h"
#include "ze_env.h"

static int cases_run;

/* Sizes a family runs at. They differ only in what the kernels take as
 * arguments (batch, heads, Sk and its remainder, Sq within one remainder
 * class), so a family's cases share its first case's module: Sq is more than
 * 16 (not "thin") and not a multiple of 8 (a query remainder for every tile
 * size), K/V heads equal query heads. Thin queries, exact multiples, GQA and
 * decode have families of their own. */
static const fwd_case_sizes_t family_sizes[] = {
        {1, 2, 2, 37, 1},   {2, 2, 2, 37, 29},  {1, 3, 3, 75, 130},
        {2, 1, 1, 101, 37}, {1, 2, 2, 37, 300}, {1, 1, 1, 75, 64},
};

static double run_sized(const void *base, const fwd_case_sizes_t *s, uint64_t seed)
{
    fwd_case_t c = *(const fwd_case_t *)base;
    fwd_case_resize(&c, s);
    return fwd_case_run(&suite_env, &c, seed);
}

/* Runs base at every family size (head size from base). */
static void run_family(const fwd_case_t *base, const char *family)
{
    cases_run += (int)fwd_case_family("fwd", 28, family, family_sizes, TEST_COUNT(family_sizes),
                                      1000, run_sized, base);
}

static void base_case(fwd_case_t *c, int64_t head_size, sdpa_dtype_t dt)
{
    fwd_case_init_typed(c, dt, 1, 1, 1, 1, 1, head_size);
}

/* --- dtypes ---------------------------------------------------------------- */

static const sdpa_dtype_t dtype_triples[][3] = {
        {SDPA_DTYPE_F32, SDPA_DTYPE_F32, SDPA_DTYPE_F32},
        {SDPA_DTYPE_F16, SDPA_DTYPE_F16, SDPA_DTYPE_F16},
        {SDPA_DTYPE_BF16, SDPA_DTYPE_BF16, SDPA_DTYPE_BF16},
        {SDPA_DTYPE_F16, SDPA_DTYPE_BF16, SDPA_DTYPE_F32},
        {SDPA_DTYPE_BF16, SDPA_DTYPE_F16, SDPA_DTYPE_F16},
        {SDPA_DTYPE_F32, SDPA_DTYPE_F16, SDPA_DTYPE_BF16},
};

START_TEST(dtypes)
{
    /* Representative: f32, f16, bf16 and a mix (rerun_leaves_out). */
    if (rerun_leaves_out(_i <= 3, 0))
        return;
    fwd_case_t c;
    base_case(&c, 64, SDPA_DTYPE_F32);
    c.q_dtype = dtype_triples[_i][0];
    c.k_dtype = dtype_triples[_i][1];
    c.v_dtype = dtype_triples[_i][2];
    char name[64];
    snprintf(name, sizeof(name), "dtypes q%s k%s v%s", sdpa_dtype_name(c.q_dtype),
             sdpa_dtype_name(c.k_dtype), sdpa_dtype_name(c.v_dtype));
    run_family(&c, name);
}
END_TEST

/* --- head sizes: every bucket, below, at and above its edge ---------------- */

static const int64_t head_sizes[] = {1, 5, 32, 33, 64, 80, 128, 200, 256, 320, 512};

START_TEST(head_sizes_f16)
{
    /* Representative: one size inside each bucket (up to 32, 64, 128, 256:
     * padded), the largest and those past it; D 32, 64 and 128 exactly are
     * other rows'. */
    const int64_t d = head_sizes[_i];
    if (rerun_leaves_out(d == 1 || d == 33 || d == 80 || d == 200 || d >= 256, 0))
        return;
    fwd_case_t c;
    base_case(&c, head_sizes[_i], SDPA_DTYPE_F16);
    char name[64];
    snprintf(name, sizeof(name), "head size %lld", (long long)head_sizes[_i]);
    run_family(&c, name);
}
END_TEST

/* --- layouts: sequence-major, transposed K, batch inside heads, padding ---- */

START_TEST(layouts)
{
    static const struct {
        tensor_order_t q, k, v, dst;
        int64_t pad;
        const char *name;
    } layout_table[] = {
            {ORDER_BSHD, ORDER_BSHD, ORDER_BSHD, ORDER_BSHD, 0, "bshd"},
            {ORDER_BHSD, ORDER_BHDS, ORDER_BHSD, ORDER_BHSD, 0, "transposed K"},
            {ORDER_HBSD, ORDER_BHDS, ORDER_BSHD, ORDER_HBSD, 3, "mixed, padded"},
            {ORDER_BHSD, ORDER_BHSD, ORDER_BHSD, ORDER_BHSD, 8, "padded rows"},
    };
    fwd_case_t c;
    base_case(&c, 48, _i % 2 ? SDPA_DTYPE_F16 : SDPA_DTYPE_F32);
    c.q_order = layout_table[_i].q;
    c.k_order = layout_table[_i].k;
    c.v_order = layout_table[_i].v;
    c.dst_order = layout_table[_i].dst;
    c.pad = layout_table[_i].pad;
    run_family(&c, layout_table[_i].name);
}
END_TEST

/* --- masks ----------------------------------------------------------------- */

START_TEST(mask_buffer)
{
    static const struct {
        sdpa_dtype_t dtype;
        int bb, bh, bq;
    } masks[] = {
            {SDPA_DTYPE_F32, 0, 0, 0}, {SDPA_DTYPE_F16, 1, 0, 0}, {SDPA_DTYPE_BF16, 0, 1, 0},
            {SDPA_DTYPE_F16, 0, 0, 1}, {SDPA_DTYPE_F32, 1, 1, 0}, {SDPA_DTYPE_BF16, 1, 1, 1},
    };
    /* Representative: each mask dtype, each broadcast. */
    if (rerun_leaves_out(_i == 0 || _i == 3 || _i == 5, 0))
        return;
    fwd_case_t c;
    base_case(&c, 64, SDPA_DTYPE_F16);
    c.mask_kind = SDPA_MASK_BUFFER;
    c.mask_dtype = masks[_i].dtype;
    c.mask_broadcast_batch = masks[_i].bb;
    c.mask_broadcast_heads = masks[_i].bh;
    c.mask_broadcast_queries = masks[_i].bq;
    run_family(&c, "mask buffer");
}
END_TEST

START_TEST(mask_causal)
{
    /* Representative: top-left in f16, bottom-right in bf16. */
    if (rerun_leaves_out(_i == 0 || _i == 3, 0))
        return;
    fwd_case_t c;
    base_case(&c, 64, _i < 2 ? SDPA_DTYPE_F16 : SDPA_DTYPE_BF16);
    c.mask_kind = _i % 2 ? SDPA_MASK_CAUSAL_BOTTOM_RIGHT : SDPA_MASK_CAUSAL_TOP_LEFT;
    /* Sq > Sk leaves top-left rows fully masked: softmax inf-as-zero gives 0. */
    c.softmax = SDPA_SOFTMAX_INF_AS_ZERO;
    run_family(&c, _i % 2 ? "causal bottom-right" : "causal top-left");
}
END_TEST

START_TEST(fully_masked_rows)
{
    fwd_case_t c;
    base_case(&c, 32, SDPA_DTYPE_F32);
    c.mask_kind = SDPA_MASK_BUFFER;
    c.mask_dtype = SDPA_DTYPE_F32;
    c.fully_masked_rows = 1;
    c.softmax = _i ? SDPA_SOFTMAX_INF_AS_ZERO : SDPA_SOFTMAX_ACCURATE;
    c.training = 1;
    run_family(&c, _i ? "dead rows inf-as-zero" : "dead rows accurate (NaN)");
}
END_TEST

/* --- scale ------------------------------------------------------------------ */

START_TEST(scales)
{
    static const struct {
        sdpa_scale_kind_t kind;
        sdpa_dtype_t dtype;
        int invert;
        const char *name;
    } scale_table[] = {
            {SDPA_SCALE_NONE, SDPA_DTYPE_UNDEF, 0, "no scale"},
            {SDPA_SCALE_HOST, SDPA_DTYPE_UNDEF, 1, "host scale, inverted"},
            {SDPA_SCALE_DEVICE, SDPA_DTYPE_F32, 0, "device f32 scale"},
            {SDPA_SCALE_DEVICE, SDPA_DTYPE_F16, 1, "device f16 scale, inverted"},
            {SDPA_SCALE_DEVICE, SDPA_DTYPE_BF16, 0, "device bf16 scale"},
    };
    fwd_case_t c;
    base_case(&c, 32, SDPA_DTYPE_F16);
    c.scale_kind = scale_table[_i].kind;
    c.scale_dtype = scale_table[_i].dtype;
    c.invert_scale = scale_table[_i].invert;
    run_family(&c, scale_table[_i].name);
}
END_TEST

/* --- GQA/MQA, decode ---------------------------------------------------------- */

START_TEST(gqa_decode)
{
    static const struct {
        int64_t q_heads, kv_heads, k_len;
    } groups[] = {{8, 1, 100}, {8, 2, 257}, {32, 8, 64}, {6, 3, 33}, {4, 4, 513}};
    /* Representative: MQA without a mask, GQA causal. */
    if (rerun_leaves_out(_i <= 1, 0))
        return;
    fwd_case_t c;
    base_case(&c, 128, SDPA_DTYPE_F16);
    c.mask_kind = _i % 2 ? SDPA_MASK_CAUSAL_BOTTOM_RIGHT : SDPA_MASK_NONE;
    double worst = 0;
    for (int64_t b = 1; b <= 2; b++)
        for (int64_t q_len = 1; q_len <= 3; q_len += 2) {
            c.batch = b;
            c.q_heads = groups[_i].q_heads;
            c.kv_heads = groups[_i].kv_heads;
            c.q_len = q_len;
            c.k_len = groups[_i].k_len;
            double r = fwd_case_run(&suite_env, &c, 7 + (uint64_t)b);
            worst = r > worst ? r : worst;
            cases_run++;
        }
    printf("fwd family gqa %lld/%lld Sk%lld        4 cases, worst error/tolerance %.3f\n",
           (long long)groups[_i].q_heads, (long long)groups[_i].kv_heads,
           (long long)groups[_i].k_len, worst);
}
END_TEST

/* --- training, f16 accumulation -------------------------------------------- */

START_TEST(training)
{
    fwd_case_t c;
    base_case(&c, _i ? 80 : 64, _i ? SDPA_DTYPE_BF16 : SDPA_DTYPE_F32);
    c.training = 1;
    c.mask_kind = _i ? SDPA_MASK_CAUSAL_TOP_LEFT : SDPA_MASK_NONE;
    c.softmax = SDPA_SOFTMAX_INF_AS_ZERO;
    run_family(&c, "training (log-sum-exp)");
}
END_TEST

START_TEST(f16_accumulation)
{
    fwd_case_t c;
    base_case(&c, _i ? 128 : 64, SDPA_DTYPE_F16);
    c.f16_accumulation = 1;
    c.mask_kind = _i ? SDPA_MASK_BUFFER : SDPA_MASK_NONE;
    c.mask_dtype = SDPA_DTYPE_F16;
    run_family(&c, "f16 accumulation");
}
END_TEST

/* --- query counts outside the families' class -------------------------------- */

START_TEST(thin_and_exact)
{
    /* Sq <= 16 selects the thin-query configurations; multiples of 64 have no
     * query remainder; Sk multiples of 64 no key remainder. */
    static const struct {
        int64_t q_len, k_len;
    } shapes[] = {{1, 1}, {2, 17}, {16, 33}, {5, 64}, {64, 64}, {128, 192}, {64, 1}, {13, 700}};
    /* Representative: the shapes at D 128 bf16, and at D 64 f16 causal. */
    if (rerun_leaves_out(_i == 1 || _i == 2, 0))
        return;
    fwd_case_t c;
    base_case(&c, _i % 2 ? 128 : 64, _i % 2 ? SDPA_DTYPE_BF16 : SDPA_DTYPE_F16);
    c.mask_kind = _i == 2 ? SDPA_MASK_CAUSAL_BOTTOM_RIGHT : SDPA_MASK_NONE;
    double worst = 0;
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
        c.batch = 1 + (int64_t)(i % 2);
        c.q_heads = c.kv_heads = 2;
        c.q_len = shapes[i].q_len;
        c.k_len = shapes[i].k_len;
        double r = fwd_case_run(&suite_env, &c, 50 + i);
        worst = r > worst ? r : worst;
        cases_run++;
    }
    printf("fwd family thin/exact sizes %d          8 cases, worst error/tolerance %.3f\n", _i,
           worst);
}
END_TEST

/* Printed last, so that the log shows how many cases ran. */
START_TEST(case_count)
{
    printf("forward cases run against ref: %d (%d on the fast path), modules built: %llu\n",
           cases_run, xe_runs_checked(), (unsigned long long)test_modules_built(&suite_env));
    ck_assert_int_ge(cases_run, 1);
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_LOOP(dtypes, sizeof(dtype_triples) / sizeof(dtype_triples[0])),
            TEST_LOOP(head_sizes_f16, sizeof(head_sizes) / sizeof(head_sizes[0])),
            TEST_LOOP(layouts, 4),
            TEST_LOOP(mask_buffer, 6),
            TEST_LOOP(mask_causal, 4),
            TEST_LOOP(fully_masked_rows, 2),
            TEST_LOOP(scales, 5),
            TEST_LOOP(gqa_decode, 5),
            TEST_LOOP(training, 2),
            TEST_LOOP(f16_accumulation, 2),
            TEST_LOOP(thin_and_exact, 4),
            TEST_ONCE(case_count),
    };
    return test_env_run_table("ze forward", 1800, tests, TEST_COUNT(tests));
}
