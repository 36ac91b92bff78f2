/*
 * test_quant.c - quantized K/V (s8, u8, s4, u4 with scales and optional zero
 * points, per tensor or per group along head_dim) on the ze backend against
 * the ref backend, which dequantizes on the host.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fwd_case.h"
#include "problem.h"
#include "ze_env.h"

static int cases_run;

/* Sizes sharing one module (see test_fwd.c), with odd and even Sk. */
static const int64_t sizes[][5] = {
        {1, 2, 2, 37, 1},   {2, 2, 1, 37, 29}, {1, 4, 2, 75, 130},
        {1, 2, 2, 37, 301}, {2, 1, 1, 75, 64},
};
#define SIZES (sizeof(sizes) / sizeof(sizes[0]))

static void run_family(fwd_case_t *c, const char *family)
{
    double worst = 0;
    for (size_t i = 0; i < SIZES; i++) {
        c->batch = sizes[i][0];
        c->q_heads = sizes[i][1];
        c->kv_heads = sizes[i][2];
        c->q_len = sizes[i][3];
        c->k_len = sizes[i][4];
        double r = fwd_case_run(&suite_env, c, 3000 + i);
        worst = r > worst ? r : worst;
        cases_run++;
    }
    printf("quant family %-44s %zu cases, worst error/tolerance %.3f\n", family, (size_t)SIZES,
           worst);
}

static const sdpa_dtype_t kv_dtypes[] = {SDPA_DTYPE_S8, SDPA_DTYPE_U8, SDPA_DTYPE_S4,
                                         SDPA_DTYPE_U4};
static const sdpa_dtype_t zp_dtypes[] = {SDPA_DTYPE_S8, SDPA_DTYPE_U8, SDPA_DTYPE_S4, SDPA_DTYPE_U4,
                                         SDPA_DTYPE_S32};
static const sdpa_dtype_t scale_dtypes[] = {SDPA_DTYPE_F32, SDPA_DTYPE_F16, SDPA_DTYPE_BF16};
static const int64_t group_sizes[] = {16, 32, 64, 128};

/* Loop index -> one combination: both K and V quantized alike. */
START_TEST(k_and_v)
{
    int i = _i;
    sdpa_dtype_t kv = kv_dtypes[i % 4];
    sdpa_quant_kind_t scales = (i / 4) % 2 ? SDPA_QUANT_PER_GROUP : SDPA_QUANT_PER_TENSOR;
    sdpa_quant_kind_t zp = (sdpa_quant_kind_t)((i / 8) % 3);
    fwd_case_t c;
    fwd_case_init(&c, 1, 1, 1, 1, 1, 128);
    c.q_dtype = i % 3 == 0 ? SDPA_DTYPE_F16 : i % 3 == 1 ? SDPA_DTYPE_BF16 : SDPA_DTYPE_F32;
    c.k_dtype = c.v_dtype = kv;
    sdpa_quant_desc_t q = {
            .scales = scales,
            .scales_dtype = scale_dtypes[i % 3],
            .zero_points = zp,
            .zero_points_dtype = zp ? zp_dtypes[i % 5] : SDPA_DTYPE_UNDEF,
            .group_size = group_sizes[(i / 2) % 4],
    };
    if (scales != SDPA_QUANT_PER_GROUP && zp != SDPA_QUANT_PER_GROUP)
        q.group_size = 0;
    c.k_quant = c.v_quant = q;
    c.mask_kind = i % 4 == 3 ? SDPA_MASK_CAUSAL_BOTTOM_RIGHT : SDPA_MASK_NONE;
    char name[96];
    snprintf(name, sizeof(name), "%s scales %s/%s zp %s/%s g%lld", sdpa_dtype_name(kv),
             sdpa_quant_kind_name(scales), sdpa_dtype_name(q.scales_dtype),
             sdpa_quant_kind_name(zp), zp ? sdpa_dtype_name(q.zero_points_dtype) : "-",
             (long long)q.group_size);
    run_family(&c, name);
}
END_TEST

/* Only K, or only V, quantized; the other f16; decode (Sq = 1, GQA). */
START_TEST(one_side_and_decode)
{
    fwd_case_t c;
    fwd_case_init(&c, 1, 1, 1, 1, 1, 64);
    c.q_dtype = SDPA_DTYPE_F16;
    sdpa_quant_desc_t grouped = {SDPA_QUANT_PER_GROUP, SDPA_DTYPE_F16, SDPA_QUANT_PER_GROUP,
                                 SDPA_DTYPE_U8, 32};
    if (_i == 0) {
        c.k_dtype = SDPA_DTYPE_S8;
        c.v_dtype = SDPA_DTYPE_F16;
        c.k_quant = grouped;
        c.k_quant.zero_points_dtype = SDPA_DTYPE_S8;
        run_family(&c, "K s8 only");
    } else if (_i == 1) {
        c.k_dtype = SDPA_DTYPE_F16;
        c.v_dtype = SDPA_DTYPE_U4;
        c.v_quant = grouped;
        c.v_quant.zero_points_dtype = SDPA_DTYPE_U4;
        run_family(&c, "V u4 only");
    } else {
        /* Decode: one query per head, 8 query heads per K/V head. */
        c.k_dtype = c.v_dtype = _i == 2 ? SDPA_DTYPE_U8 : SDPA_DTYPE_S4;
        c.k_quant = c.v_quant = grouped;
        c.k_quant.zero_points_dtype = c.v_quant.zero_points_dtype =
                _i == 2 ? SDPA_DTYPE_U8 : SDPA_DTYPE_S4;
        c.head_size = 128;
        double worst = 0;
        for (int64_t k_len = 1; k_len <= 1001; k_len += 250) {
            c.batch = 1;
            c.q_heads = 8;
            c.kv_heads = 1;
            c.q_len = 1;
            c.k_len = k_len;
            double r = fwd_case_run(&suite_env, &c, 4000 + (uint64_t)k_len);
            worst = r > worst ? r : worst;
            cases_run++;
        }
        printf("quant family decode %s Sq1 H8/1                 5 cases, worst error/tolerance "
               "%.3f\n",
               sdpa_dtype_name(c.k_dtype), worst);
    }
}
END_TEST

/* The CPU device's narrow decode tiles read K and V straight from global
 * memory (K_FROM_GLOBAL, V_FROM_GLOBAL, src/plan/fwd_plan.c): one query per
 * head, at most 8 query heads per K/V head (6: two blocks of rows in S),
 * D equal to its bucket, K's and V's rows contiguous. Each dtype
 * once (one module each), over key counts that end in a partial key tile;
 * the configuration string proves the path ran. */
START_TEST(v_from_global)
{
    static const int64_t v_sizes[][4] = {
            {1, 4, 1, 1}, {1, 4, 1, 37}, {2, 2, 1, 75}, {1, 4, 2, 301}, {1, 6, 1, 45}};
    fwd_case_t c;
    fwd_case_init(&c, 1, 1, 1, 1, 1, _i % 2 ? 64 : 128);
    const sdpa_dtype_t dense[3] = {SDPA_DTYPE_F16, SDPA_DTYPE_BF16, SDPA_DTYPE_F32};
    c.q_dtype = c.k_dtype = c.v_dtype = dense[_i % 3];
    if (_i >= 3) { /* s8 with per-group scales; u8 with per-group zero points too */
        c.k_dtype = c.v_dtype = _i == 3 ? SDPA_DTYPE_S8 : SDPA_DTYPE_U8;
        sdpa_quant_desc_t grouped = {SDPA_QUANT_PER_GROUP, SDPA_DTYPE_F16,
                                     _i == 3 ? SDPA_QUANT_NONE : SDPA_QUANT_PER_GROUP,
                                     _i == 3 ? SDPA_DTYPE_UNDEF : SDPA_DTYPE_U8, _i == 3 ? 32 : 16};
        c.k_quant = c.v_quant = grouped;
    }
    double worst = 0;
    for (size_t i = 0; i < sizeof(v_sizes) / sizeof(v_sizes[0]); i++) {
        c.batch = v_sizes[i][0];
        c.q_heads = v_sizes[i][1];
        c.kv_heads = v_sizes[i][2];
        c.q_len = 1;
        c.k_len = v_sizes[i][3];
        sdpa_problem_desc_t p;
        fwd_case_problem(&c, &p);
        char config[256];
        test_config_string(&suite_env, &p, config, sizeof(config));
        /* Under SDPA_ZE_KERNELS (sdpa/test_quant@xe.rerun) the fast path runs them. */
        const int fast = getenv("SDPA_ZE_KERNELS") && strncmp(config, "fwd xe", 6) == 0;
        ck_assert_msg(fast || strstr(config, "K global V global") != NULL,
                      "not K_FROM_GLOBAL and V_FROM_GLOBAL: %s", config);
        double r = fwd_case_run(&suite_env, &c, 5000 + i);
        worst = r > worst ? r : worst;
        cases_run++;
    }
    printf("quant family V global %s/%s D%lld          %zu cases, worst error/tolerance %.3f\n",
           sdpa_dtype_name(c.q_dtype), sdpa_dtype_name(c.v_dtype), (long long)c.head_size,
           sizeof(v_sizes) / sizeof(v_sizes[0]), worst);
}
END_TEST

START_TEST(case_count)
{
    printf("quantized cases run against ref: %d (%d primitives on the fast path), modules built: "
           "%llu\n",
           cases_run, xe_runs_checked(),
           (unsigned long long)test_modules_built(&suite_env));
    ck_assert_int_ge(cases_run, 1);
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_LOOP(k_and_v, 24),
            TEST_LOOP(one_side_and_decode, 4),
            TEST_LOOP(v_from_global, 5),
            TEST_ONCE(case_count),
    };
    return test_env_run_table("ze quantized K/V", 1800, tests, TEST_COUNT(tests));
}
