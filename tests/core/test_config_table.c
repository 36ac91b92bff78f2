/* test_config_table.c - matching and ordering of configuration rows, and the
 * tables' contents against the constraint checks. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "config_table_rows.h"
#include "kernel_config.h"
#include "config_check.h"
#include "config_choose.h"
#include "core_fixtures.h"
#include "error.h"

static const sdpa_device_class_t all_classes[] = {
        SDPA_DEVICE_CLASS_UNKNOWN_GPU, SDPA_DEVICE_CLASS_CPU,    SDPA_DEVICE_CLASS_XE_LP,
        SDPA_DEVICE_CLASS_XE_HPG,      SDPA_DEVICE_CLASS_XE_HPC, SDPA_DEVICE_CLASS_XE2,
        SDPA_DEVICE_CLASS_XE3};
#define N_CLASSES (sizeof(all_classes) / sizeof(all_classes[0]))

static sdpa_config_query_t query(sdpa_device_class_t c, int64_t head, int64_t seq, unsigned props)
{
    return (sdpa_config_query_t){c, head, seq, props};
}

/* The best forward row for q (the first candidate). */
static const sdpa_fwd_config_row_t *best_fwd(sdpa_config_query_t q)
{
    const sdpa_fwd_config_row_t *rows[SDPA_CONFIG_MAX_CANDIDATES];
    size_t n = sdpa_fwd_config_candidates(&q, rows, SDPA_CONFIG_MAX_CANDIDATES);
    ck_assert_uint_gt(n, 0);
    return rows[0];
}

static void assert_fwd_config(const sdpa_fwd_config_t *c, const int expected[8])
{
    int values[8];
    sdpa_fwd_config_to_ints(c, values);
    char got[64], want[64];
    sdpa_fwd_config_format(c, got, sizeof(got));
    sdpa_fwd_config_t e;
    sdpa_fwd_config_from_ints(expected, &e);
    sdpa_fwd_config_format(&e, want, sizeof(want));
    ck_assert_str_eq(got, want);
}

static int is_fwd_fallback(const sdpa_fwd_config_row_t *row)
{
    for (size_t i = 0; i < sdpa_fwd_config_fallbacks_size; i++)
        if (row == &sdpa_fwd_config_fallbacks[i])
            return 1;
    return 0;
}

START_TEST(match_rules)
{
    sdpa_config_criteria_t key = {SDPA_DEVICE_CLASS_XE_HPC, 128, 512, FMA | F32 | INTEG};
    sdpa_config_query_t q = query(SDPA_DEVICE_CLASS_XE_HPC, 128, 512, FMA | F32 | INTEG);
    ck_assert(sdpa_config_criteria_match(&key, &q));
    q.head_size = 64; /* smaller head, shorter sequence: served */
    q.seq_len = 1;
    ck_assert(sdpa_config_criteria_match(&key, &q));
    q.head_size = 129;
    ck_assert(!sdpa_config_criteria_match(&key, &q));
    q.head_size = 128;
    q.seq_len = 513;
    ck_assert(!sdpa_config_criteria_match(&key, &q));
    q.seq_len = 100;
    q.device_class = SDPA_DEVICE_CLASS_XE2;
    ck_assert(!sdpa_config_criteria_match(&key, &q));
    q.device_class = SDPA_DEVICE_CLASS_XE_HPC;
    /* Exact props must be equal both ways. */
    q.props = FMA | F32 | INTEG | THIN;
    ck_assert(!sdpa_config_criteria_match(&key, &q));
    q.props = F32 | INTEG;
    ck_assert(!sdpa_config_criteria_match(&key, &q));
    /* Optional props the key names must be present ... */
    q.props = FMA | INTEG;
    ck_assert(!sdpa_config_criteria_match(&key, &q));
    /* ... and those it does not name may be. */
    key.props = FMA;
    q.props = FMA | F32 | INTEG | F16ACC;
    ck_assert(sdpa_config_criteria_match(&key, &q));
    key.seq_len = ANY;
    q.seq_len = 1 << 30;
    ck_assert(sdpa_config_criteria_match(&key, &q));
}
END_TEST

START_TEST(ordering_most_specific_first)
{
    const sdpa_device_class_t hpc = SDPA_DEVICE_CLASS_XE_HPC;
    sdpa_config_criteria_t a, b;
    /* Class, then head size ascending. */
    a = (sdpa_config_criteria_t){SDPA_DEVICE_CLASS_XE_HPG, 512, ANY, 0};
    b = (sdpa_config_criteria_t){hpc, 32, 64, FMA};
    ck_assert_int_lt(sdpa_config_criteria_compare(&a, &b), 0);
    a = (sdpa_config_criteria_t){hpc, 64, ANY, 0};
    b = (sdpa_config_criteria_t){hpc, 128, 32, FMA | THIN};
    ck_assert_int_lt(sdpa_config_criteria_compare(&a, &b), 0);
    /* More props first, whatever the sequence bound. */
    a = (sdpa_config_criteria_t){hpc, 64, ANY, FMA | F32};
    b = (sdpa_config_criteria_t){hpc, 64, 384, FMA};
    ck_assert_int_lt(sdpa_config_criteria_compare(&a, &b), 0);
    ck_assert_int_gt(sdpa_config_criteria_compare(&b, &a), 0);
    /* Rows without props last. */
    a = (sdpa_config_criteria_t){hpc, 64, 32, 0};
    b = (sdpa_config_criteria_t){hpc, 64, ANY, FMA};
    ck_assert_int_gt(sdpa_config_criteria_compare(&a, &b), 0);
    /* Equal props: smaller sequence bound first, bounded before any. */
    a = (sdpa_config_criteria_t){hpc, 64, 384, FMA};
    b = (sdpa_config_criteria_t){hpc, 64, 1024, FMA};
    ck_assert_int_lt(sdpa_config_criteria_compare(&a, &b), 0);
    b.seq_len = ANY;
    ck_assert_int_lt(sdpa_config_criteria_compare(&a, &b), 0);
    /* Tie between single props: FMA before QUANTIZED before THIN_Q. */
    a = (sdpa_config_criteria_t){hpc, 64, ANY, FMA};
    b = (sdpa_config_criteria_t){hpc, 64, ANY, QUANT};
    ck_assert_int_lt(sdpa_config_criteria_compare(&a, &b), 0);
    a.props = THIN;
    ck_assert_int_gt(sdpa_config_criteria_compare(&a, &b), 0);
    ck_assert_int_eq(sdpa_config_criteria_compare(&a, &a), 0);
}
END_TEST

/* The criteria of the best forward row for q, formatted. */
static const char *best_fwd_row(sdpa_config_query_t q)
{
    static char buf[96];
    return sdpa_config_criteria_format(&best_fwd(q)->criteria, buf, sizeof(buf));
}

START_TEST(specific_rows_win)
{
    const sdpa_device_class_t xe2 = SDPA_DEVICE_CLASS_XE2;
    /* A bounded row up to its bound, the unbounded one after. */
    ck_assert_str_eq(best_fwd_row(query(xe2, 32, 300, FMA)), "xe2 h32 sk<=384 fma");
    ck_assert_str_eq(best_fwd_row(query(xe2, 32, 384, FMA)), "xe2 h32 sk<=384 fma");
    ck_assert_str_eq(best_fwd_row(query(xe2, 32, 385, FMA)), "xe2 h32 fma");
    /* The smallest bucket that holds the head size. */
    ck_assert_str_eq(best_fwd_row(query(xe2, 16, 1000, FMA)), "xe2 h16 fma");
    ck_assert_str_eq(best_fwd_row(query(xe2, 20, 1000, FMA)), "xe2 h32 fma");
    /* Integrated rows only for integrated devices. */
    ck_assert_str_eq(best_fwd_row(query(xe2, 64, 100, FMA | INTEG)), "xe2 h64 fma integ");
    assert_fwd_config(&best_fwd(query(xe2, 64, 100, FMA | INTEG))->config,
                      (int[]){16, 16, 32, 16, 2, 4, 2, 4});
    ck_assert_str_eq(best_fwd_row(query(xe2, 64, 1000, FMA)), "xe2 h64 fma");
    /* Thin and quantized queries take only rows that say so. */
    ck_assert_str_eq(best_fwd_row(query(xe2, 32, 300, FMA | THIN)), "xe2 h32 sk<=385 thin fma");
    const sdpa_device_class_t hpg = SDPA_DEVICE_CLASS_XE_HPG;
    ck_assert_str_eq(best_fwd_row(query(hpg, 64, 4096, FMA | QUANT | THIN)),
                     "xe_hpg h64 thin quant fma");
    assert_fwd_config(&best_fwd(query(hpg, 64, 4096, FMA | QUANT | THIN))->config,
                      (int[]){4, 8, 16, 4, 8, 1, 4, 2});
    /* Rows that do not name F32 or F16_ACC serve such queries too ... */
    ck_assert_str_eq(best_fwd_row(query(hpg, 128, 400, FMA | F16ACC)), "xe_hpg h128 fma");
    const sdpa_device_class_t hpc = SDPA_DEVICE_CLASS_XE_HPC;
    ck_assert_str_eq(best_fwd_row(query(hpc, 64, 1000, FMA | F32)), "xe_hpc h64 fma");
    ck_assert_str_eq(best_fwd_row(query(hpc, 80, 1000, FMA)), "xe_hpc h128 fma");
    /* ... but a row that names F32 outranks them for f32, and never serves
     * f16. */
    const sdpa_device_class_t cpu = SDPA_DEVICE_CLASS_CPU;
    ck_assert_str_eq(best_fwd_row(query(cpu, 64, 1000, FMA | F32)), "cpu h64 fma f32");
    ck_assert_str_eq(best_fwd_row(query(cpu, 64, 1000, FMA)), "cpu h64 fma");
    /* Up to 256 keys the CPU keeps 64-query tiles (more work-groups). */
    ck_assert_str_eq(best_fwd_row(query(cpu, 64, 256, FMA)), "cpu h64 sk<=256 fma");
    ck_assert_str_eq(best_fwd_row(query(cpu, 64, 256, FMA | F32)), "cpu h64 sk<=256 fma f32");
}
END_TEST

START_TEST(fallback_classes)
{
    /* Xe3 uses Xe2's rows, without INTEGRATED. */
    assert_fwd_config(&best_fwd(query(SDPA_DEVICE_CLASS_XE3, 64, 100, FMA | INTEG))->config,
                      (int[]){16, 16, 16, 16, 4, 4, 4, 4});
    /* Xe-LP uses Xe-HPG's. */
    assert_fwd_config(&best_fwd(query(SDPA_DEVICE_CLASS_XE_LP, 64, 100, FMA | INTEG))->config,
                      (int[]){8, 16, 16, 16, 4, 2, 4, 2});
    /* An unknown GPU only has the fallbacks. */
    const sdpa_fwd_config_row_t *rows[SDPA_CONFIG_MAX_CANDIDATES];
    sdpa_config_query_t q = query(SDPA_DEVICE_CLASS_UNKNOWN_GPU, 100, 100, FMA | THIN | QUANT);
    ck_assert_uint_eq(sdpa_fwd_config_candidates(&q, rows, SDPA_CONFIG_MAX_CANDIDATES), 1);
    ck_assert(is_fwd_fallback(rows[0]));
    ck_assert_int_eq(rows[0]->criteria.head_size, 128);
    /* xe_hpg has no forward rows above 128: at 256 only 64 elements of O
     * per lane fit its 64 KiB, which Debian 12's IGC spills. */
    q = query(SDPA_DEVICE_CLASS_XE_HPG, 200, 100, FMA | QUANT);
    ck_assert_uint_eq(sdpa_fwd_config_candidates(&q, rows, SDPA_CONFIG_MAX_CANDIDATES), 1);
    ck_assert(is_fwd_fallback(rows[0]));
    ck_assert_int_eq(rows[0]->criteria.head_size, 256);
    /* Above 576 nothing serves, above 256 nothing on a GPU. */
    q = query(SDPA_DEVICE_CLASS_CPU, 577, 100, FMA);
    ck_assert_uint_eq(sdpa_fwd_config_candidates(&q, rows, SDPA_CONFIG_MAX_CANDIDATES), 0);
    q = query(SDPA_DEVICE_CLASS_XE_HPC, 257, 100, FMA);
    ck_assert_uint_eq(sdpa_fwd_config_candidates(&q, rows, SDPA_CONFIG_MAX_CANDIDATES), 0);
}
END_TEST

START_TEST(candidates_ordered_and_end_with_fallback)
{
    const sdpa_fwd_config_row_t *rows[SDPA_CONFIG_MAX_CANDIDATES];
    sdpa_config_query_t q = query(SDPA_DEVICE_CLASS_CPU, 60, 300, FMA | F32);
    size_t n = sdpa_fwd_config_candidates(&q, rows, SDPA_CONFIG_MAX_CANDIDATES);
    ck_assert_uint_eq(n, 9); /* fma f32 and fma of h64, h128, h256, h512, the fallback */
    for (size_t i = 0; i + 1 < n; i++) {
        ck_assert(sdpa_config_criteria_match(&rows[i]->criteria, &q));
        if (i + 2 < n)
            ck_assert_int_le(
                    sdpa_config_criteria_compare(&rows[i]->criteria, &rows[i + 1]->criteria), 0);
    }
    ck_assert(is_fwd_fallback(rows[n - 1]));
    ck_assert_int_eq(rows[n - 1]->criteria.head_size, 64);
    /* A short output array gets the best ones. */
    const sdpa_fwd_config_row_t *first[2];
    ck_assert_uint_eq(sdpa_fwd_config_candidates(&q, first, 2), n);
    ck_assert_ptr_eq(first[0], rows[0]);
    ck_assert_ptr_eq(first[1], rows[1]);
}
END_TEST

/* The props combinations a forward query can have. */
static const unsigned fwd_prop_sets[] = {
        FMA,          FMA | THIN,          FMA | QUANT,       FMA | THIN | QUANT,
        FMA | F32,    FMA | F32 | THIN,    FMA | F32 | QUANT, FMA | F32 | THIN | QUANT,
        FMA | F16ACC, FMA | THIN | F16ACC, FMA | INTEG,       FMA | INTEG | THIN | QUANT,
};

static void device_for(sdpa_device_class_t c, sdpa_device_info_t *dev)
{
    if (c == SDPA_DEVICE_CLASS_CPU)
        fixture_cpu_device(dev);
    else
        fixture_gpu_device(c, dev);
}

/* 1 if class c takes xe_hpg's rows (its own or, for xe_lp, by fallback). */
static int has_hpg_rows(sdpa_device_class_t c)
{
    return c == SDPA_DEVICE_CLASS_XE_HPG || c == SDPA_DEVICE_CLASS_XE_LP;
}

/* The fallback row of the bucket of d. */
static const sdpa_fwd_config_row_t *fwd_fallback_for(int64_t d)
{
    for (size_t i = 0; i < sdpa_fwd_config_fallbacks_size; i++)
        if (d <= sdpa_fwd_config_fallbacks[i].criteria.head_size)
            return &sdpa_fwd_config_fallbacks[i];
    return NULL;
}

static const sdpa_bwd_config_row_t *bwd_fallback_for(int64_t d)
{
    for (size_t i = 0; i < sdpa_bwd_config_fallbacks_size; i++)
        if (d <= sdpa_bwd_config_fallbacks[i].criteria.head_size)
            return &sdpa_bwd_config_fallbacks[i];
    return NULL;
}

/* What a configuration chosen for dev at head size d must fit: dev's
 * sub-group size and d's bucket. */
static sdpa_kernel_target_t device_target(const sdpa_device_info_t *dev, int64_t d)
{
    return (sdpa_kernel_target_t){dev, sdpa_device_subgroup_size(dev), sdpa_head_size_bucket(d), d};
}

START_TEST(every_head_size_and_length_gets_a_valid_fwd_config)
{
    static const int64_t lengths[] = {1, 77, 384, 100000};
    size_t checked = 0, refused = 0;
    for (size_t ci = 0; ci < N_CLASSES; ci++) {
        sdpa_device_info_t dev;
        device_for(all_classes[ci], &dev);
        for (int64_t d = 1; d <= 512; d++) {
            const sdpa_kernel_target_t target = device_target(&dev, d);
            for (size_t li = 0; li < sizeof(lengths) / sizeof(lengths[0]); li++)
                for (size_t pi = 0; pi < sizeof(fwd_prop_sets) / sizeof(fwd_prop_sets[0]); pi++) {
                    sdpa_config_query_t q =
                            query(all_classes[ci], d, lengths[li], fwd_prop_sets[pi]);
                    sdpa_fwd_config_t c;
                    sdpa_config_source_t source;
                    sdpa_status_t status = sdpa_fwd_config_choose(&q, 0, &target, &c, &source);
                    checked++;
                    if (status == SDPA_SUCCESS) {
                        ck_assert_int_eq(sdpa_fwd_config_check(&c, &target, "chosen"),
                                         SDPA_SUCCESS);
                        continue;
                    }
                    /* Refused only when not even the fallback fits the
                     * device: head sizes above 128 on 64 KiB devices, above
                     * 256 on 128 KiB ones (kernel_abi.h keeps Q, K, V, S and
                     * O tiles in local memory), where GPUs have no row. */
                    ck_assert_msg(status == SDPA_ERROR_UNSUPPORTED &&
                                          d > (dev.slm_bytes >= 128 * 1024 ? 256 : 128) &&
                                          all_classes[ci] != SDPA_DEVICE_CLASS_CPU,
                                  "%s D %lld Sk %lld props 0x%x: %s",
                                  sdpa_device_class_name(all_classes[ci]), (long long)d,
                                  (long long)lengths[li], fwd_prop_sets[pi], sdpa_error_message());
                    ck_assert(d > 256 ||
                              sdpa_fwd_config_check(&fwd_fallback_for(d)->config, &target,
                                                    "fallback") != SDPA_SUCCESS);
                    refused++;
                }
        }
    }
    ck_assert_uint_eq(checked, N_CLASSES * 512 * 4 * 12);
    /* xe_lp, xe_hpg and unknown_gpu (64 KiB) for D 129..512; xe_hpc, xe2
     * and xe3 (128 KiB) for D 257..512. */
    ck_assert_uint_eq(refused, (3 * 384 + 3 * 256) * 4 * 12);
}
END_TEST

START_TEST(every_head_size_and_length_gets_a_valid_bwd_config)
{
    static const unsigned prop_sets[] = {FMA, FMA | THIN, FMA | F32, FMA | F32 | THIN, FMA | INTEG};
    for (size_t ci = 0; ci < N_CLASSES; ci++) {
        sdpa_device_info_t dev;
        device_for(all_classes[ci], &dev);
        for (int64_t d = 1; d <= 512; d++) {
            const sdpa_kernel_target_t target = device_target(&dev, d);
            for (int64_t sk = 1; sk <= 100000; sk *= 17)
                for (size_t pi = 0; pi < sizeof(prop_sets) / sizeof(prop_sets[0]); pi++) {
                    sdpa_config_query_t q = query(all_classes[ci], d, sk, prop_sets[pi]);
                    sdpa_bwd_config_t c;
                    sdpa_status_t status = sdpa_bwd_config_choose(&q, &target, &c, NULL);
                    if (status == SDPA_SUCCESS) {
                        ck_assert_int_eq(sdpa_bwd_config_check(&c, &target, "chosen"),
                                         SDPA_SUCCESS);
                        continue;
                    }
                    /* The backward kernel stages K, V, Q and dO in local
                     * memory: GPUs serve up to 128 (64 KiB) or 256
                     * (128 KiB, and xe_hpg's rows in 64 KiB); the CPU
                     * everything. */
                    ck_assert_msg(status == SDPA_ERROR_UNSUPPORTED && d > 128 &&
                                          all_classes[ci] != SDPA_DEVICE_CLASS_CPU,
                                  "%s D %lld: %s", sdpa_device_class_name(all_classes[ci]),
                                  (long long)d, sdpa_error_message());
                    ck_assert(d > 256 ||
                              sdpa_bwd_config_check(&bwd_fallback_for(d)->config, &target,
                                                    "fallback") != SDPA_SUCCESS);
                    if (dev.slm_bytes >= 128 * 1024 || has_hpg_rows(all_classes[ci]))
                        ck_assert_int_gt(d, 256);
                }
        }
    }
}
END_TEST

/* Sub-group size a class's rows are meant for. */
static uint32_t class_subgroup(sdpa_device_class_t c)
{
    sdpa_device_info_t dev;
    device_for(c, &dev);
    return sdpa_device_subgroup_size(&dev);
}

/* What a table row is checked against: the device-independent rules for
 * the largest head it serves, at the sub-group size of its class. GPU rows
 * may need more than a given GPU has (they are skipped then); CPU rows must
 * fit ours. Names the row in what. */
static sdpa_kernel_target_t row_target(const sdpa_config_criteria_t *criteria, char *what,
                                       size_t what_size)
{
    static sdpa_device_info_t cpu; /* static: the target points at it */
    fixture_cpu_device(&cpu);
    sdpa_config_criteria_format(criteria, what, what_size);
    sdpa_kernel_target_t target = {NULL, class_subgroup(criteria->device_class),
                                   sdpa_head_size_bucket(criteria->head_size), criteria->head_size};
    if (criteria->device_class == SDPA_DEVICE_CLASS_CPU)
        target.device = &cpu;
    return target;
}

START_TEST(every_fwd_row_passes_the_kernel_rules)
{
    for (size_t i = 0; i < sdpa_fwd_config_table_size; i++) {
        const sdpa_fwd_config_row_t *row = &sdpa_fwd_config_table[i];
        char what[96];
        const sdpa_kernel_target_t target = row_target(&row->criteria, what, sizeof(what));
        ck_assert_int_le(row->criteria.head_size, 576);
        if (row->criteria.device_class == SDPA_DEVICE_CLASS_CPU)
            ck_assert(row->criteria.props & FMA);
        ck_assert_msg(sdpa_fwd_config_check(&row->config, &target, what) == SDPA_SUCCESS, "%s",
                      sdpa_error_message());
    }
    /* The fallbacks fit every plausible device at sub-group 8 and 16 up to
     * head size 128, the 256 one with 128 KiB of local memory. */
    static const uint32_t subgroups[] = {8, 16};
    for (size_t ci = 0; ci < N_CLASSES; ci++) {
        sdpa_device_info_t dev;
        device_for(all_classes[ci], &dev);
        for (size_t i = 0; i < sdpa_fwd_config_fallbacks_size; i++) {
            const sdpa_fwd_config_row_t *row = &sdpa_fwd_config_fallbacks[i];
            ck_assert_int_eq(row->criteria.head_size, 32 << i);
            for (size_t s = 0; s < 2; s++) {
                sdpa_kernel_target_t target = {&dev, subgroups[s], row->criteria.head_size,
                                               row->criteria.head_size};
                sdpa_status_t status = sdpa_fwd_config_check(&row->config, &target, "fallback");
                int64_t need_kib = row->criteria.head_size <= 128 ? 64 : 128;
                if (dev.slm_bytes >= (uint64_t)need_kib * 1024)
                    ck_assert_msg(status == SDPA_SUCCESS, "%s", sdpa_error_message());
                else
                    ck_assert_int_eq(status, SDPA_ERROR_INVALID_CONFIG);
            }
        }
    }
}
END_TEST

START_TEST(every_bwd_row_passes_the_kernel_rules)
{
    for (size_t i = 0; i < sdpa_bwd_config_table_size; i++) {
        const sdpa_bwd_config_row_t *row = &sdpa_bwd_config_table[i];
        char what[96];
        const sdpa_kernel_target_t target = row_target(&row->criteria, what, sizeof(what));
        ck_assert_msg(sdpa_bwd_config_check(&row->config, &target, what) == SDPA_SUCCESS, "%s",
                      sdpa_error_message());
    }
    /* Fallbacks: up to 128 in 64 KiB, 256 in 128 KiB at sub-group 8 and 16. */
    sdpa_device_info_t small, large;
    fixture_gpu_device(SDPA_DEVICE_CLASS_UNKNOWN_GPU, &small);
    fixture_gpu_device(SDPA_DEVICE_CLASS_XE_HPC, &large);
    for (size_t i = 0; i < sdpa_bwd_config_fallbacks_size; i++) {
        const sdpa_bwd_config_row_t *row = &sdpa_bwd_config_fallbacks[i];
        int head = row->criteria.head_size;
        ck_assert_int_eq(head, 32 << i);
        const sdpa_device_info_t *dev = head <= 128 ? &small : &large;
        for (uint32_t sg = 8; sg <= 16; sg *= 2) {
            sdpa_kernel_target_t target = {dev, sg, head, head};
            ck_assert_msg(sdpa_bwd_config_check(&row->config, &target, "fallback") == SDPA_SUCCESS,
                          "%s", sdpa_error_message());
        }
    }
}
END_TEST

START_TEST(cpu_rows_cover_every_bucket_and_props)
{
    static const unsigned fwd_props[] = {
            FMA, FMA | THIN, FMA | F32, FMA | F32 | THIN, FMA | QUANT, FMA | QUANT | THIN};
    for (int head = 32; head <= 512; head *= 2)
        for (size_t p = 0; p < sizeof(fwd_props) / sizeof(fwd_props[0]); p++) {
            const sdpa_fwd_config_row_t *row =
                    best_fwd(query(SDPA_DEVICE_CLASS_CPU, head, 1000, fwd_props[p]));
            ck_assert_int_eq(row->criteria.device_class, SDPA_DEVICE_CLASS_CPU);
            /* 512 takes the 576 bucket (head_size_buckets.def) */
            ck_assert_int_eq(row->criteria.head_size, sdpa_head_size_bucket(head));
            ck_assert_uint_eq(row->criteria.props, fwd_props[p]);
        }
    static const unsigned bwd_props[] = {FMA, FMA | THIN, FMA | F32, FMA | F32 | THIN};
    for (int head = 32; head <= 512; head *= 2)
        for (size_t p = 0; p < sizeof(bwd_props) / sizeof(bwd_props[0]); p++) {
            const sdpa_bwd_config_row_t *rows[SDPA_CONFIG_MAX_CANDIDATES];
            sdpa_config_query_t q = query(SDPA_DEVICE_CLASS_CPU, head, 1000, bwd_props[p]);
            ck_assert_uint_gt(sdpa_bwd_config_candidates(&q, rows, SDPA_CONFIG_MAX_CANDIDATES), 0);
            ck_assert_int_eq(rows[0]->criteria.device_class, SDPA_DEVICE_CLASS_CPU);
            ck_assert_int_eq(rows[0]->criteria.head_size, head);
            ck_assert_uint_eq(rows[0]->criteria.props, bwd_props[p]);
        }
}
END_TEST

START_TEST(bwd_specific_rows_win)
{
    const sdpa_bwd_config_row_t *rows[SDPA_CONFIG_MAX_CANDIDATES];
    char what[96];
    /* xe_hpc: its h64, h128 and h256 rows serve D = 64 (f32 too, no row
     * names F32), then the fallback. */
    sdpa_config_query_t q = query(SDPA_DEVICE_CLASS_XE_HPC, 64, 1000, FMA | F32);
    ck_assert_uint_eq(sdpa_bwd_config_candidates(&q, rows, SDPA_CONFIG_MAX_CANDIDATES), 4);
    ck_assert_str_eq(sdpa_config_criteria_format(&rows[0]->criteria, what, sizeof(what)),
                     "xe_hpc h64 fma");
    int v[12];
    sdpa_bwd_config_to_ints(&rows[0]->config, v);
    ck_assert_int_eq(v[0] * v[6], 64); /* Bc */
    ck_assert_int_eq(v[1] * v[7], 32); /* Br */
    /* Thin queries their thin rows; Xe-LP Xe-HPG's. */
    q = query(SDPA_DEVICE_CLASS_XE_LP, 100, 8, FMA | THIN | INTEG);
    sdpa_bwd_config_candidates(&q, rows, SDPA_CONFIG_MAX_CANDIDATES);
    ck_assert_str_eq(sdpa_config_criteria_format(&rows[0]->criteria, what, sizeof(what)),
                     "xe_hpg h128 thin fma");
    /* Xe2 and Xe3 have no backward rows of their own: the fallback. */
    q = query(SDPA_DEVICE_CLASS_XE3, 64, 60, FMA);
    ck_assert_uint_eq(sdpa_bwd_config_candidates(&q, rows, SDPA_CONFIG_MAX_CANDIDATES), 1);
    ck_assert_int_eq(rows[0]->criteria.device_class, SDPA_DEVICE_CLASS_UNKNOWN_GPU);
}
END_TEST

START_TEST(formats)
{
    char buf[96];
    sdpa_config_criteria_t c = {SDPA_DEVICE_CLASS_XE_HPC, 128, 512,
                                THIN | QUANT | FMA | F32 | F16ACC | INTEG};
    ck_assert_str_eq(sdpa_config_criteria_format(&c, buf, sizeof(buf)),
                     "xe_hpc h128 sk<=512 thin quant fma f32 f16acc integ");
    c = (sdpa_config_criteria_t){SDPA_DEVICE_CLASS_CPU, 64, ANY, 0};
    ck_assert_str_eq(sdpa_config_criteria_format(&c, buf, sizeof(buf)), "cpu h64");
    sdpa_fwd_config_t f = {1, 2, 3, 4, 5, 6, 7, 8};
    ck_assert_str_eq(sdpa_fwd_config_format(&f, buf, sizeof(buf)), "1,2,3,4,5,6,7,8");
    ck_assert_str_eq(sdpa_fwd_config_format(&f, buf, 6), "1,2,3");
    sdpa_bwd_config_t b = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    ck_assert_str_eq(sdpa_bwd_config_format(&b, buf, sizeof(buf)), "1,2,3,4,5,6,7,8,9,10,11,12");
    int v[12];
    sdpa_bwd_config_to_ints(&b, v);
    for (int i = 0; i < 12; i++)
        ck_assert_int_eq(v[i], i + 1);
    ck_assert_int_eq(sdpa_head_size_bucket(1), 32);
    ck_assert_int_eq(sdpa_head_size_bucket(32), 32);
    ck_assert_int_eq(sdpa_head_size_bucket(33), 64);
    ck_assert_int_eq(sdpa_head_size_bucket(257), 576);
    ck_assert_int_eq(sdpa_head_size_bucket(512), 576);
    ck_assert_int_eq(sdpa_head_size_bucket(576), 576);
    ck_assert_int_eq(sdpa_head_size_bucket(577), 0);
    ck_assert_int_eq(sdpa_head_size_bucket(0), 0);
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_ONCE(match_rules),
            TEST_ONCE(ordering_most_specific_first),
            TEST_ONCE(specific_rows_win),
            TEST_ONCE(fallback_classes),
            TEST_ONCE(candidates_ordered_and_end_with_fallback),
            TEST_ONCE(every_head_size_and_length_gets_a_valid_fwd_config),
            TEST_ONCE(every_head_size_and_length_gets_a_valid_bwd_config),
            TEST_ONCE(every_fwd_row_passes_the_kernel_rules),
            TEST_ONCE(every_bwd_row_passes_the_kernel_rules),
            TEST_ONCE(cpu_rows_cover_every_bucket_and_props),
            TEST_ONCE(bwd_specific_rows_win),
            TEST_ONCE(formats),
    };
    const test_suite_t suite = {.name = "config_table", .timeout = 60};
    return test_run_table(&suite, tests, TEST_COUNT(tests));
}
