/*
 * test_dropout_bwd.c - backward attention with dropout on the ze backend
 * against the ref backend's analytic double-precision gradients with the
 * same p, seed and offset (the ref forward with that dropout provides O and
 * the log-sum-exp), and a check that the offset really moves the mask.
 *
 * Every module build takes seconds, so the cases are grouped by the
 * constants that select a module (dtypes, mask, GQA group, mode, dS,
 * dropout scalars on host or device, with or without offset): p, seed,
 * offset and the shapes are run-time values, and each group runs them all.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "bwd_case.h"
#include "ze_env.h"

static int cases_run;

/* Shapes with partial key and query blocks; every group runs them all. */
typedef struct sizes {
    int64_t batch, q_len, k_len;
} sizes_t;

static const sizes_t sizes[] = {{2, 37, 29}, {1, 75, 130}};
#define SIZES (sizeof(sizes) / sizeof(sizes[0]))

/* Run-time dropout values: p in {0.1, 0.5}; seeds and offsets with high
 * words set, and an offset whose Philox counter carries into the high word
 * within the problem. */
typedef struct drop_values {
    float p;
    int64_t seed, offset;
} drop_values_t;

static const drop_values_t values[] = {
        {0.1f, 0x243F6A8885A308D3, 12345},
        {0.5f, 0x13198A2E03707344, (int64_t)0x00000001FFFFFF00},
        {0.5f, 7, 0x0123456789ABCDEF},
};
#define VALUES (sizeof(values) / sizeof(values[0]))

/* One group: base (dtypes, heads, mask, mode, dS, dropout flags) with every
 * size and every set of dropout values. */
static void run_group(const bwd_case_t *base, const char *name, int repeat_bits)
{
    double worst = 0;
    int n = 0;
    for (size_t s = 0; s < SIZES; s++)
        for (size_t v = 0; v < VALUES; v++) {
            bwd_case_t c = *base;
            c.fwd.batch = sizes[s].batch;
            c.fwd.q_len = sizes[s].q_len;
            c.fwd.k_len = sizes[s].k_len;
            c.dropout.enabled = 1;
            c.dropout.p = values[v].p;
            c.dropout.seed = values[v].seed;
            c.dropout.offset = values[v].offset;
            double r = bwd_case_run(&suite_env, &c, 7000 + 10 * s + v, repeat_bits);
            worst = r > worst ? r : worst;
            n++;
        }
    cases_run += n;
    printf("bwd dropout %-44s %d cases, worst error/tolerance %.3f\n", name, n, worst);
}

static void base_case(bwd_case_t *c, sdpa_dtype_t dt, int64_t q_heads, int64_t kv_heads)
{
    bwd_case_init(c, 1, q_heads, kv_heads, 1, 1, 64);
    c->fwd.q_dtype = c->fwd.k_dtype = c->fwd.v_dtype = dt;
}

/* The groups: every one of the four ways to pass the scalars (host or
 * device, with or without offset), f32, f16 and bf16, both causal masks,
 * GQA in the atomic and deterministic modes (the latter's dQ pass
 * recomputes the mask on its own), and dS once. */
START_TEST(groups)
{
    bwd_case_t c;
    const char *name = "";
    int repeat_bits = 0;
    switch (_i) {
    case 0:
        base_case(&c, SDPA_DTYPE_F32, 2, 2);
        c.dropout.with_offset = 1;
        name = "f32 host offset";
        break;
    case 1:
        base_case(&c, SDPA_DTYPE_F32, 4, 2);
        c.dropout.device = 1;
        c.dropout.with_offset = 1;
        name = "f32 device offset, GQA 4/2 atomic";
        break;
    case 2:
        base_case(&c, SDPA_DTYPE_F16, 2, 2);
        c.fwd.mask_kind = SDPA_MASK_CAUSAL_TOP_LEFT;
        name = "f16 host no-offset, causal top-left";
        break;
    case 3:
        base_case(&c, SDPA_DTYPE_BF16, 2, 1);
        c.dropout.device = 1;
        c.fwd.mask_kind = SDPA_MASK_CAUSAL_BOTTOM_RIGHT;
        c.ds_dtype = SDPA_DTYPE_F32;
        name = "bf16 device no-offset, causal bottom-right, GQA 2/1, dS";
        break;
    default:
        base_case(&c, SDPA_DTYPE_F16, 4, 2);
        c.dropout.with_offset = 1;
        c.deterministic = 1;
        c.fwd.mask_kind = SDPA_MASK_CAUSAL_TOP_LEFT;
        repeat_bits = 1;
        name = "f16 host offset, GQA 4/2 deterministic, causal";
        break;
    }
    run_group(&c, name, repeat_bits);
}
END_TEST

/* A different offset (host and device scalars) gives other gradients: most
 * elements move well beyond the tolerances, so the kernels do apply the
 * mask the offset selects. p = 0 keeps every element whatever the offset. */
START_TEST(offset_moves_mask)
{
    bwd_case_t c;
    base_case(&c, SDPA_DTYPE_F32, _i ? 4 : 2, 2);
    c.dropout.enabled = 1;
    c.dropout.device = _i;
    c.dropout.with_offset = 1;
    c.dropout.seed = 42;
    c.dropout.offset = 1000;
    c.fwd.batch = 2;
    c.fwd.q_len = 37;
    c.fwd.k_len = 29;
    c.dropout.p = 0.5f;
    double moved = bwd_case_offset_effect(&suite_env, &c, 7500, 1001);
    ck_assert_msg(moved > 0.5, "offset 1000 -> 1001 moved only %.3f of the gradients' elements",
                  moved);
    c.dropout.p = 0.0f;
    double kept = bwd_case_offset_effect(&suite_env, &c, 7501, 1001);
    ck_assert_msg(kept == 0, "p = 0: offset 1000 -> 1001 moved %.3f of the gradients' elements",
                  kept);
    cases_run += 2;
    printf("bwd dropout offset 1000 -> 1001 (%s): %.3f of the elements moved; p = 0: %.3f\n",
           _i ? "device" : "host", moved, kept);
}
END_TEST

/* Printed and checked last: every case ran (5 groups of SIZES x VALUES,
 * 2 x 2 offset comparisons) and the grouping held: one main backward module
 * per group, the deterministic group's dQ pass, one pre/post module per
 * dtype (f32, f16, bf16); the offset tests share groups 0 and 1's modules,
 * the forwards run on ref. */
START_TEST(case_count)
{
    const uint64_t built = test_modules_built(&suite_env);
    const int xe = xe_runs_checked();
    printf("bwd dropout: %d cases (%d runs on the fast path), %llu modules built\n", cases_run, xe,
           (unsigned long long)built);
    ck_assert_int_eq(cases_run, 5 * (int)(SIZES * VALUES) + 2 * 2);
    ck_assert_uint_ge(built, 1);
    /* On the fast path a group may also build the fast path's own module
     * for its main and dQ kernels (the pre/post modules stay shared). */
    ck_assert_uint_le(built, 5 + 1 + 3 + (xe ? 5 : 0));
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_LOOP(groups, 5),
            TEST_LOOP(offset_moves_mask, 2),
            TEST_ONCE(case_count),
    };
    return test_env_run_table("ze backward dropout", 600, tests, TEST_COUNT(tests));
}
