/*
 * test_gpu_rows.c - the tilings of the GPU configuration rows compute the
 * right results.
 *
 * No GPU runs our tests, and the CPU device chooses its own rows. So each
 * distinct tiling of a GPU row or fallback row that is valid at sub-group
 * 16 (the CPU device's) is forced through the override variables
 * (SDPA_CONFIG, QUANTIZED_SDPA_CONFIG, BWD_SDPA_CONFIG) and run against the
 * ref backend at the row's head size, with query and key remainders (thin
 * rows with few queries, quantized rows with s8 K/V). The rows valid only at
 * sub-group 8 (Xe-HPG's, with 8-wide tiles) cannot run here; the ISA gate
 * compiles them (doc/gpu-isa.md).
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwd_case.h"
#include "config_check.h"
#include "config_choose.h"
#include "fwd_case.h"
#include "kernel_config.h"
#include "ze_env.h"

#define MAX_TILINGS 64

/* One forced configuration: its text, the head size and the problem kind it
 * is run with. */
typedef struct tiling {
    char config[64];
    int64_t head_size;
    unsigned props; /* THIN and QUANTIZED of the row */
} tiling_t;

typedef struct tilings {
    tiling_t items[MAX_TILINGS];
    size_t count;
} tilings_t;

/* Adds (config, head, props) unless an equal one is there. */
static void add_tiling(tilings_t *t, const char *config, int64_t head, unsigned props)
{
    for (size_t i = 0; i < t->count; i++)
        if (strcmp(t->items[i].config, config) == 0 && t->items[i].head_size == head &&
            t->items[i].props == props)
            return;
    ck_assert_uint_lt(t->count, MAX_TILINGS);
    tiling_t *n = &t->items[t->count++];
    snprintf(n->config, sizeof(n->config), "%s", config);
    n->head_size = head;
    n->props = props;
}

/* The distinct forward tilings of the GPU rows and fallbacks valid at
 * sub-group 16 for their head size. */
static void fwd_tilings(tilings_t *t)
{
    t->count = 0;
    const size_t n = sdpa_fwd_config_table_size + sdpa_fwd_config_fallbacks_size;
    for (size_t i = 0; i < n; i++) {
        const sdpa_fwd_config_row_t *row =
                i < sdpa_fwd_config_table_size
                        ? &sdpa_fwd_config_table[i]
                        : &sdpa_fwd_config_fallbacks[i - sdpa_fwd_config_table_size];
        if (row->criteria.device_class == SDPA_DEVICE_CLASS_CPU)
            continue;
        int64_t head = row->criteria.head_size;
        sdpa_kernel_target_t target = {NULL, 16, sdpa_head_size_bucket(head), head};
        if (sdpa_fwd_config_check(&row->config, &target, "row") != SDPA_SUCCESS)
            continue;
        char text[64];
        sdpa_fwd_config_format(&row->config, text, sizeof(text));
        add_tiling(t, text, head,
                   row->criteria.props & (SDPA_CONFIG_THIN_Q | SDPA_CONFIG_QUANTIZED));
    }
}

static void bwd_tilings(tilings_t *t)
{
    t->count = 0;
    const size_t n = sdpa_bwd_config_table_size + sdpa_bwd_config_fallbacks_size;
    for (size_t i = 0; i < n; i++) {
        const sdpa_bwd_config_row_t *row =
                i < sdpa_bwd_config_table_size
                        ? &sdpa_bwd_config_table[i]
                        : &sdpa_bwd_config_fallbacks[i - sdpa_bwd_config_table_size];
        if (row->criteria.device_class == SDPA_DEVICE_CLASS_CPU)
            continue;
        int64_t head = row->criteria.head_size;
        sdpa_kernel_target_t target = {NULL, 16, sdpa_head_size_bucket(head), head};
        if (sdpa_bwd_config_check(&row->config, &target, "row") != SDPA_SUCCESS)
            continue;
        char text[64];
        sdpa_bwd_config_format(&row->config, text, sizeof(text));
        add_tiling(t, text, head, row->criteria.props & SDPA_CONFIG_THIN_Q);
    }
}

/* Fails unless ze plans problem with the forced configuration (the
 * override was read, not silently replaced by a CPU row). */
static void assert_forced(const sdpa_problem_desc_t *problem, const char *config)
{
    sdpa_primitive_t *prim = NULL;
    ck_assert_int_eq(suite_env.ze->primitive_create(suite_env.ze_ctx, problem, &prim),
                     SDPA_SUCCESS);
    char text[256] = "";
    ck_assert_int_eq(
            suite_env.ze->primitive_query(prim, SDPA_QUERY_CONFIG_STRING, text, sizeof(text)),
            SDPA_SUCCESS);
    suite_env.ze->primitive_destroy(prim);
    char want[96];
    snprintf(want, sizeof(want), "cfg=%s (", config);
    ck_assert_msg(strstr(text, want) && strstr(text, "SDPA_CONFIG)"), "planned \"%s\", not %s",
                  text, config);
}

static void unset_overrides(void)
{
    unsetenv("SDPA_CONFIG");
    unsetenv("QUANTIZED_SDPA_CONFIG");
    unsetenv("BWD_SDPA_CONFIG");
}

START_TEST(forward_tilings)
{
    static tilings_t t;
    fwd_tilings(&t);
    ck_assert_uint_ge(t.count, 8);
    double worst = 0;
    for (size_t i = 0; i < t.count; i++) {
        const tiling_t *x = &t.items[i];
        const int thin = (x->props & SDPA_CONFIG_THIN_Q) != 0;
        const int quant = (x->props & SDPA_CONFIG_QUANTIZED) != 0;
        fwd_case_t c;
        /* Thin: 5 queries; else 37. 75 keys: remainders for every tile. */
        fwd_case_init_typed(&c, SDPA_DTYPE_F16, 1, 2, 1, thin ? 5 : 37, 75, x->head_size);
        c.mask_kind = SDPA_MASK_CAUSAL_BOTTOM_RIGHT;
        if (quant) {
            c.k_dtype = c.v_dtype = SDPA_DTYPE_S8;
            sdpa_quant_desc_t q = {SDPA_QUANT_PER_TENSOR, SDPA_DTYPE_F32, SDPA_QUANT_NONE,
                                   SDPA_DTYPE_UNDEF, 0};
            c.k_quant = c.v_quant = q;
        }
        ck_assert_int_eq(setenv(quant ? "QUANTIZED_SDPA_CONFIG" : "SDPA_CONFIG", x->config, 1), 0);
        sdpa_problem_desc_t problem;
        fwd_case_problem(&c, &problem);
        assert_forced(&problem, x->config);
        double r = fwd_case_run(&suite_env, &c, 7000 + i);
        unset_overrides();
        worst = r > worst ? r : worst;
    }
    printf("gpu rows: %zu forward tilings, worst error/tolerance %.3f\n", t.count, worst);
}
END_TEST

START_TEST(backward_tilings)
{
    static tilings_t t;
    bwd_tilings(&t);
    ck_assert_uint_ge(t.count, 4);
    double worst = 0;
    for (size_t i = 0; i < t.count; i++) {
        const tiling_t *x = &t.items[i];
        bwd_case_t c;
        /* GQA (dK, dV summed over two query heads), and every other tiling
         * deterministic (the dQ pass runs too). */
        bwd_case_init(&c, 1, 2, 1, (x->props & SDPA_CONFIG_THIN_Q) ? 5 : 37, 75, x->head_size);
        c.fwd.q_dtype = c.fwd.k_dtype = c.fwd.v_dtype = SDPA_DTYPE_F16;
        c.fwd.mask_kind = SDPA_MASK_CAUSAL_BOTTOM_RIGHT;
        c.deterministic = (int)(i % 2);
        ck_assert_int_eq(setenv("BWD_SDPA_CONFIG", x->config, 1), 0);
        sdpa_problem_desc_t problem;
        bwd_case_problem(&c, &problem);
        assert_forced(&problem, x->config);
        double r = bwd_case_run(&suite_env, &c, 7500 + i, 0);
        unset_overrides();
        worst = r > worst ? r : worst;
    }
    printf("gpu rows: %zu backward tilings, worst error/tolerance %.3f\n", t.count, worst);
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_ONCE(forward_tilings),
            TEST_ONCE(backward_tilings),
    };
    Suite *s = suite_create("ze gpu rows");
    TCase *t = test_add_case(s, "gpu rows", 1800, tests, TEST_COUNT(tests));
    tcase_add_unchecked_fixture(t, test_env_fixture, NULL);
    tcase_add_checked_fixture(t, NULL, unset_overrides);
    return test_env_run_suite(s);
}
