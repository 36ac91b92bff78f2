/* test_config_check.c - each constraint rule, its message, and how choosing
 * a configuration applies them (overrides, skipped rows, fallbacks). */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "config_check.h"
#include "config_choose.h"
#include "core_fixtures.h"
#include "error.h"
#include "kernel_abi.h"
#include "kernel_abi_bwd.h"

/* Asserts that the forward config fails on target with a message that
 * starts with "<source> <config> breaks the rule <rule>" and contains
 * details. */
static void assert_fwd_breaks(const int values[8], const sdpa_kernel_target_t *target,
                              const char *rule, const char *details)
{
    sdpa_fwd_config_t c;
    sdpa_fwd_config_from_ints(values, &c);
    char cfg[64], prefix[512];
    sdpa_fwd_config_format(&c, cfg, sizeof(cfg));
    ck_assert_int_eq(sdpa_fwd_config_check(&c, target, "SDPA_CONFIG"), SDPA_ERROR_INVALID_CONFIG);
    const char *msg = sdpa_error_message();
    snprintf(prefix, sizeof(prefix), "SDPA_CONFIG %s breaks the rule %s", cfg, rule);
    ck_assert_msg(strstr(msg, prefix) == msg, "message \"%s\" does not start with \"%s\"", msg,
                  prefix);
    ck_assert_msg(strstr(msg, details), "message \"%s\" lacks \"%s\"", msg, details);
}

static void assert_bwd_breaks(const int values[12], const sdpa_kernel_target_t *target,
                              const char *rule, const char *details)
{
    sdpa_bwd_config_t c;
    sdpa_bwd_config_from_ints(values, &c);
    char cfg[96], prefix[512];
    sdpa_bwd_config_format(&c, cfg, sizeof(cfg));
    ck_assert_int_eq(sdpa_bwd_config_check(&c, target, "BWD_SDPA_CONFIG"),
                     SDPA_ERROR_INVALID_CONFIG);
    const char *msg = sdpa_error_message();
    snprintf(prefix, sizeof(prefix), "BWD_SDPA_CONFIG %s breaks the rule %s", cfg, rule);
    ck_assert_msg(strstr(msg, prefix) == msg, "message \"%s\" does not start with \"%s\"", msg,
                  prefix);
    ck_assert_msg(strstr(msg, details), "message \"%s\" lacks \"%s\"", msg, details);
}

static int fwd_passes(const int values[8], const sdpa_kernel_target_t *target)
{
    sdpa_fwd_config_t c;
    sdpa_fwd_config_from_ints(values, &c);
    return sdpa_fwd_config_check(&c, target, "x") == SDPA_SUCCESS;
}

START_TEST(fwd_onednn_rules)
{
    sdpa_device_info_t cpu;
    fixture_cpu_device(&cpu);
    sdpa_kernel_target_t t = {&cpu, 16, 64, 64};
    ck_assert(fwd_passes((int[]){16, 16, 16, 16, 4, 2, 4, 2}, &t));
    assert_fwd_breaks((int[]){16, 16, 16, 8, 4, 2, 4, 2}, &t,
                      "unroll_n_kq * wg_n_kq == unroll_n_vs * wg_n_vs", "32 != 16");
    assert_fwd_breaks((int[]){16, 16, 16, 32, 4, 2, 4, 1}, &t, "unroll_n_kq % unroll_n_vs == 0",
                      "16 % 32 = 16");
    assert_fwd_breaks((int[]){16, 16, 16, 16, 4, 2, 2, 2}, &t, "unroll_m_vs * wg_m_vs >= head size",
                      "16 * 2 = 32 < 64");
    /* Head coverage is checked against the problem's D, not the bucket. */
    const int bd48[8] = {16, 16, 16, 16, 3, 2, 3, 2};
    ck_assert(!fwd_passes(bd48, &t));
    t.head_size = 40;
    ck_assert(fwd_passes(bd48, &t));
}
END_TEST

START_TEST(fwd_range_rule)
{
    sdpa_kernel_target_t t = {NULL, 16, 64, 64};
    assert_fwd_breaks((int[]){16, 16, 16, 16, 0, 2, 4, 2}, &t, "every value is in 1..1024",
                      "wg_m_kq = 0");
    assert_fwd_breaks((int[]){16, 16, 16, 16, 4, 2, 4, -2}, &t, "every value is in 1..1024",
                      "wg_n_vs = -2");
    assert_fwd_breaks((int[]){2048, 16, 16, 16, 4, 2, 4, 2}, &t, "every value is in 1..1024",
                      "unroll_m_kq = 2048");
}
END_TEST

START_TEST(fwd_kernel_rules)
{
    sdpa_kernel_target_t t = {NULL, 16, 64, 64};
    /* Both grids run on the work-group's sub-groups. */
    assert_fwd_breaks((int[]){16, 32, 16, 32, 4, 1, 8, 1}, &t,
                      "wg_m_kq * wg_n_kq == wg_m_vs * wg_n_vs (both grids are the work-group's "
                      "sub-groups)",
                      "4 != 8");
    /* Lane axes hold whole sub-groups. */
    t.head_size = 16;
    assert_fwd_breaks((int[]){16, 8, 16, 8, 1, 1, 1, 1}, &t,
                      "unroll_n_kq % sub-group size == 0 (lanes run along the queries of S)",
                      "8 % 16 = 8");
    assert_fwd_breaks((int[]){16, 16, 8, 16, 2, 1, 2, 1}, &t,
                      "unroll_m_vs % sub-group size == 0 (lanes run along the head dimension of O)",
                      "8 % 16 = 8");
    /* The same tiles are fine at sub-group 8. */
    t.subgroup_size = 8;
    ck_assert(fwd_passes((int[]){16, 8, 16, 8, 1, 1, 1, 1}, &t));
    ck_assert(fwd_passes((int[]){16, 16, 8, 16, 2, 1, 2, 1}, &t));

    /* Private memory per lane (kernel_abi.h). */
    t.subgroup_size = 16;
    t.head_size = 64;
    char details[64];
    snprintf(details, sizeof(details), "768 > %d", SDPA_FWD_MAX_S_PER_LANE(64));
    ck_assert_int_lt(SDPA_FWD_MAX_S_PER_LANE(64), 768);
    assert_fwd_breaks((int[]){256, 48, 64, 48, 1, 1, 1, 1}, &t,
                      "unroll_m_kq * (unroll_n_kq / sub-group) <= ", details);
    ck_assert_int_lt(SDPA_FWD_MAX_O_PER_LANE(64), 384);
    snprintf(details, sizeof(details), "384 > %d", SDPA_FWD_MAX_O_PER_LANE(64));
    assert_fwd_breaks((int[]){16, 96, 64, 96, 1, 1, 1, 1}, &t,
                      "unroll_n_vs * (unroll_m_vs / sub-group) <= ", details);
    /* At sub-group 32 the same tiles fit the lanes. */
    t.subgroup_size = 32;
    ck_assert(fwd_passes((int[]){16, 96, 64, 96, 1, 1, 1, 1}, &t));
    /* Queries per lane; d_max 512 leaves room for the O tile. */
    t = (sdpa_kernel_target_t){NULL, 16, 512, 64};
    ck_assert_int_lt(SDPA_FWD_MAX_Q_PER_LANE(512), 16);
    snprintf(details, sizeof(details), "16 > %d", SDPA_FWD_MAX_Q_PER_LANE(512));
    assert_fwd_breaks((int[]){1, 256, 64, 256, 1, 1, 1, 1}, &t,
                      "unroll_n_kq / sub-group <= ", details);
}
END_TEST

START_TEST(fwd_device_rules)
{
    sdpa_device_info_t cpu;
    fixture_cpu_device(&cpu);
    sdpa_kernel_target_t t = {&cpu, 16, 512, 512};
    assert_fwd_breaks((int[]){16, 16, 16, 16, 32, 32, 32, 32}, &t,
                      "sub-group * wg_m_kq * wg_n_kq <= work-group limit",
                      "sub-group 16 * wg_m_kq * wg_n_kq = 16384 > 8192 on test CPU");
    /* Without a device those rules are not checked. */
    t.device = NULL;
    ck_assert(fwd_passes((int[]){16, 16, 16, 16, 32, 32, 32, 32}, &t));

    /* A per-dimension limit: Y holds at most 16 sub-groups here. */
    sdpa_device_info_t gpu;
    fixture_gpu_device(SDPA_DEVICE_CLASS_XE_HPC, &gpu);
    gpu.max_group_size_xyz[1] = 16;
    t = (sdpa_kernel_target_t){&gpu, 16, 128, 128};
    assert_fwd_breaks((int[]){16, 16, 16, 8, 16, 2, 8, 4}, &t,
                      "sub-group * wg_m_kq * wg_n_kq <= work-group limit",
                      "local size {16, 32, 1} exceeds {1024, 16, 1024}");

    /* Local memory: d_max 512, BQ 64, BK 256, wg_m_kq 16. */
    fixture_gpu_device(SDPA_DEVICE_CLASS_XE_HPG, &gpu);
    t = (sdpa_kernel_target_t){&gpu, 16, 512, 512};
    const long long slm = SDPA_FWD_SLM_BYTES(512LL, 64, 256, 16);
    char details[160];
    snprintf(details, sizeof(details),
             "SDPA_FWD_SLM_BYTES(d_max 512, BQ 64, BK 256, wg_m_kq 16) = %lld > 65536 bytes on "
             "Intel(R) Arc(TM) A770 Graphics",
             slm);
    assert_fwd_breaks((int[]){16, 16, 32, 16, 16, 4, 16, 4}, &t, "local memory <= the device's",
                      details);
    gpu.slm_bytes = (uint64_t)slm;
    ck_assert(fwd_passes((int[]){16, 16, 32, 16, 16, 4, 16, 4}, &t));
}
END_TEST

START_TEST(bwd_rules)
{
    sdpa_device_info_t gpu;
    fixture_gpu_device(SDPA_DEVICE_CLASS_XE_HPC, &gpu);
    sdpa_kernel_target_t t = {&gpu, 16, 64, 64};
    /* A good one: Bc 32, Br 32, D 64 by both. */
    const int good[12] = {16, 16, 32, 16, 32, 16, 2, 2, 2, 2, 2, 2};
    sdpa_bwd_config_t c;
    sdpa_bwd_config_from_ints(good, &c);
    ck_assert_int_eq(sdpa_bwd_config_check(&c, &t, "x"), SDPA_SUCCESS);

    /* oneDNN's four checks, each half on its own. */
    assert_bwd_breaks((int[]){16, 16, 32, 16, 32, 16, 2, 2, 2, 1, 2, 2}, &t,
                      "unroll_m_BcBr * wg_m_BcBr == unroll_n_DBc * wg_n_DBc", "32 != 16");
    assert_bwd_breaks((int[]){16, 16, 32, 8, 32, 16, 2, 2, 2, 4, 2, 2}, &t,
                      "wg_m_DBc * wg_n_DBc <= wg_m_BcBr * wg_n_BcBr", "8 > 4 sub-groups");
    assert_bwd_breaks((int[]){16, 16, 16, 16, 32, 16, 2, 2, 2, 2, 2, 2}, &t,
                      "unroll_m_DBc * wg_m_DBc >= head size", "16 * 2 = 32 < 64");
    assert_bwd_breaks((int[]){16, 16, 32, 16, 32, 16, 2, 2, 2, 2, 2, 1}, &t,
                      "unroll_n_BcBr * wg_n_BcBr == unroll_n_DBr * wg_n_DBr", "32 != 16");
    assert_bwd_breaks((int[]){16, 16, 32, 16, 32, 8, 2, 2, 2, 2, 2, 4}, &t,
                      "wg_m_DBr * wg_n_DBr <= wg_m_BcBr * wg_n_BcBr", "8 > 4 sub-groups");
    assert_bwd_breaks((int[]){16, 16, 32, 16, 16, 16, 2, 2, 2, 2, 2, 2}, &t,
                      "unroll_m_DBr * wg_m_DBr >= head size", "16 * 2 = 32 < 64");
    assert_bwd_breaks((int[]){16, 16, 32, 16, 32, 16, 0, 2, 2, 2, 2, 2}, &t,
                      "every value is in 1..1024", "wg_m_BcBr = 0");

    /* kernel_abi_bwd.h: lane axes. */
    assert_bwd_breaks((int[]){8, 1, 32, 16, 32, 16, 4, 32, 2, 2, 2, 2}, &t,
                      "unroll_m_BcBr % sub-group size == 0 (lanes run along the keys of S)",
                      "8 % 16 = 8");
    assert_bwd_breaks((int[]){16, 16, 32, 8, 32, 16, 2, 4, 2, 4, 2, 4}, &t,
                      "unroll_n_DBc % sub-group size == 0 (lanes run along the keys of dK/dV)",
                      "8 % 16 = 8");
    assert_bwd_breaks((int[]){16, 16, 32, 16, 24, 32, 2, 2, 2, 2, 4, 1}, &t,
                      "unroll_m_DBr % sub-group size == 0 (lanes run along the head dim of dQ)",
                      "24 % 16 = 8");
    /* Every tile lives in local memory: large unrolls pass the lane rules. */
    sdpa_bwd_config_from_ints((int[]){64, 32, 64, 64, 64, 32, 1, 2, 1, 1, 1, 2}, &c);
    sdpa_kernel_target_t no_device = {NULL, 16, 64, 64};
    ck_assert_int_eq(sdpa_bwd_config_check(&c, &no_device, "x"), SDPA_SUCCESS);

    char details[160];
    /* The device. */
    assert_bwd_breaks((int[]){16, 16, 32, 16, 32, 16, 32, 32, 2, 32, 2, 32}, &t,
                      "sub-group * wg_m_BcBr * wg_n_BcBr <= work-group limit",
                      "sub-group 16 * wg_m_BcBr * wg_n_BcBr = 16384 > 1024");
    gpu.slm_bytes = 4096;
    int slm = SDPA_BWD_SLM_BYTES(64, 32, 32);
    if (SDPA_BWD_DQ_SLM_BYTES(64, 32, 32) > slm)
        slm = SDPA_BWD_DQ_SLM_BYTES(64, 32, 32);
    snprintf(details, sizeof(details),
             "backward local memory (head size 64, Bc 32, Br 32) = %d > 4096 bytes on Intel(R) "
             "Data Center GPU Max 1550",
             slm);
    assert_bwd_breaks(good, &t, "local memory <= the device's", details);
}
END_TEST

START_TEST(choose_prefers_valid_override)
{
    sdpa_device_info_t cpu;
    fixture_cpu_device(&cpu);
    sdpa_kernel_target_t t = {&cpu, 16, 128, 128};
    sdpa_config_query_t q = {SDPA_DEVICE_CLASS_CPU, 128, 1000, SDPA_CONFIG_FMA};
    sdpa_fwd_config_t c;
    sdpa_config_source_t source;

    fixture_setenv("SDPA_CONFIG", NULL);
    fixture_setenv("QUANTIZED_SDPA_CONFIG", NULL);
    ck_assert_int_eq(sdpa_fwd_config_choose(&q, 0, &t, &c, &source), SDPA_SUCCESS);
    ck_assert_str_eq(source.text, "table: cpu h128 fma");
    ck_assert_int_eq(source.from_env, 0);
    ck_assert_int_eq(source.skipped_rows, 0);

    fixture_setenv("SDPA_CONFIG", "16,16,16,16,8,1,8,1");
    ck_assert_int_eq(sdpa_fwd_config_choose(&q, 0, &t, &c, &source), SDPA_SUCCESS);
    ck_assert_str_eq(source.text, "SDPA_CONFIG");
    ck_assert_int_eq(source.from_env, 1);
    ck_assert_int_eq(c.wg_m_kq, 8);
    /* Quantized problems read the other variable. */
    ck_assert_int_eq(sdpa_fwd_config_choose(&q, 1, &t, &c, &source), SDPA_SUCCESS);
    ck_assert_int_eq(source.from_env, 0);

    /* An override that does not cover D = 128 is an error, not ignored. */
    fixture_setenv("SDPA_CONFIG", "16,16,16,16,4,1,4,1");
    ck_assert_int_eq(sdpa_fwd_config_choose(&q, 0, &t, &c, &source), SDPA_ERROR_INVALID_CONFIG);
    ck_assert_ptr_eq(strstr(sdpa_error_message(), "SDPA_CONFIG 16,16,16,16,4,1,4,1 breaks the rule "
                                                  "unroll_m_vs * wg_m_vs >= head size"),
                     sdpa_error_message());
    fixture_setenv("SDPA_CONFIG", "16,16,16");
    ck_assert_int_eq(sdpa_fwd_config_choose(&q, 0, &t, &c, &source), SDPA_ERROR_INVALID_CONFIG);
    fixture_setenv("SDPA_CONFIG", NULL);

    sdpa_bwd_config_t b;
    fixture_setenv("BWD_SDPA_CONFIG", "16,16,64,16,32,16,4,2,2,4,4,2");
    ck_assert_int_eq(sdpa_bwd_config_choose(&q, &t, &b, &source), SDPA_SUCCESS);
    ck_assert_str_eq(source.text, "BWD_SDPA_CONFIG");
    fixture_setenv("BWD_SDPA_CONFIG", "16,16,64,16,32,16,4,2,2,4,4,1");
    ck_assert_int_eq(sdpa_bwd_config_choose(&q, &t, &b, &source), SDPA_ERROR_INVALID_CONFIG);
    fixture_setenv("BWD_SDPA_CONFIG", NULL);
    ck_assert_int_eq(sdpa_bwd_config_choose(&q, &t, &b, &source), SDPA_SUCCESS);
    ck_assert_str_eq(source.text, "table: cpu h128 fma");
}
END_TEST

START_TEST(choose_skips_rows_the_device_cannot_run)
{
    /* The CPU's h256 row needs about 247 KiB of local memory, the h576 row
     * at d_max 256 about 102, the h256 fallback about 103. */
    sdpa_device_info_t cpu;
    fixture_cpu_device(&cpu);
    sdpa_kernel_target_t t = {&cpu, 16, 256, 256};
    sdpa_config_query_t q = {SDPA_DEVICE_CLASS_CPU, 256, 5000, SDPA_CONFIG_FMA};
    sdpa_fwd_config_t c;
    sdpa_config_source_t source;
    fixture_setenv("SDPA_CONFIG", NULL);
    ck_assert_int_eq(sdpa_fwd_config_choose(&q, 0, &t, &c, &source), SDPA_SUCCESS);
    ck_assert_str_eq(source.text, "table: cpu h256 fma");
    ck_assert_int_eq(source.skipped_rows, 0);
    ck_assert_int_eq(c.wg_n_kq, 2);

    /* Next best: the h576 row, which serves D = 256 too and, with the
     * variant's d_max of 256, needs about 102 KiB. */
    cpu.slm_bytes = 112 * 1024;
    ck_assert_int_eq(sdpa_fwd_config_choose(&q, 0, &t, &c, &source), SDPA_SUCCESS);
    ck_assert_str_eq(source.text, "table: cpu h576 fma");
    ck_assert_int_eq(source.skipped_rows, 1);
    ck_assert_int_eq(sdpa_fwd_config_check(&c, &t, "x"), SDPA_SUCCESS);
    ck_assert_int_eq(c.wg_n_kq, 1);

    /* The fallback needs more local memory than the h576 row: when 32
     * items per work-group leave out every row (the fallback's 8
     * sub-groups last), the device cannot serve. */
    cpu.max_group_size = 32;
    ck_assert_int_eq(sdpa_fwd_config_choose(&q, 0, &t, &c, &source), SDPA_ERROR_UNSUPPORTED);
    ck_assert_ptr_eq(strstr(sdpa_error_message(), "fallback: h256 2,16,32,16,8,1,8,1 breaks the "
                                                  "rule sub-group * wg_m_kq * wg_n_kq"),
                     sdpa_error_message());
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_ONCE(fwd_onednn_rules),
            TEST_ONCE(fwd_range_rule),
            TEST_ONCE(fwd_kernel_rules),
            TEST_ONCE(fwd_device_rules),
            TEST_ONCE(bwd_rules),
            TEST_ONCE(choose_prefers_valid_override),
            TEST_ONCE(choose_skips_rows_the_device_cannot_run),
    };
    const test_suite_t suite = {.name = "config_check"};
    return test_run_table(&suite, tests, TEST_COUNT(tests));
}
