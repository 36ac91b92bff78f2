/* test_fwd_xe_plan.c - when the forward fast path serves a problem, its
 * configuration rules, its table, and the plans it makes (xe_fwd_plan.h). */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "core_fixtures.h"
#include "error.h"
#include "fwd_plan.h"
#include "xe_fwd_plan.h"
#include "kernel_abi_xe.h"
#include "spirv_registry.h"
#include "xe_plan_cases.h"

static xe_devices_t dev;

static void setup(void)
{
    xe_devices_init(&dev);
    fixture_setenv("SDPA_CONFIG", NULL);
    fixture_setenv("QUANTIZED_SDPA_CONFIG", NULL);
}

XE_SUITE_ADAPTERS(sdpa_fwd_plan_t, sdpa_fwd_plan_make, sdpa_fwd_config_t, sdpa_fwd_config_from_ints,
                  SDPA_FWD_KIND_XE)

static const xe_suite_direction_t forward = {
        .xe = &sdpa_fwd_xe_direction,
        .config_ints = SDPA_FWD_CONFIG_INTS,
        .config_from_ints = xe_config_from_ints,
        .problem = fixture_problem,
        .serves = sdpa_fwd_xe_serves,
        .plan = xe_plan,
        .modes = 1,
};

START_TEST(kernel_set_names)
{
    sdpa_kernel_set_t set = SDPA_KERNELS_PORTABLE;
    ck_assert_int_eq(sdpa_kernel_set_parse(NULL, &set), 0);
    ck_assert_int_eq(set, SDPA_KERNELS_AUTO);
    ck_assert_int_eq(sdpa_kernel_set_parse("", &set), 0);
    ck_assert_int_eq(set, SDPA_KERNELS_AUTO);
    const char *names[] = {"auto", "portable", "xe", "xe_hpg"};
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(sdpa_kernel_set_parse(names[i], &set), 0);
        ck_assert_int_eq(set, i);
        ck_assert_str_eq(sdpa_kernel_set_name(set), names[i]);
    }
    set = SDPA_KERNELS_XE;
    ck_assert_int_eq(sdpa_kernel_set_parse("XE", &set), -1);
    ck_assert_int_eq(sdpa_kernel_set_parse("xe ", &set), -1);
    ck_assert_int_eq(set, SDPA_KERNELS_XE); /* untouched */
}
END_TEST

/* Where the fast path runs by default, and what SDPA_ZE_KERNELS changes. */
START_TEST(devices_and_kernel_sets)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t s;
    fixture_problem(SDPA_DTYPE_F16, 1, 4, 4, 100, 200, 64, &p, &s);
    xe_assert_default_devices(&forward, &p, &s, &dev);
    dev.cpu.kernels = SDPA_KERNELS_XE;
    ck_assert(xe_takes_fast_path(&forward, &p, &s, &dev.cpu));

    /* The CPU runs the emulated variants, with Xe-HPC's or Xe-HPG's rows. */
    sdpa_fwd_plan_t plan;
    plan_ok(&p, &s, &dev.cpu, &plan);
    ck_assert_str_eq(plan.config_string, "fwd xe sdpa_xe_fwd-k32-d64-emu sg16 "
                                         "cfg=32,16,64,16,1,4,1,4 (xe table: xe_hpc h64)");
    ck_assert_str_eq(plan.build_flags, "");
    dev.cpu.kernels = SDPA_KERNELS_XE_HPG;
    plan_ok(&p, &s, &dev.cpu, &plan);
    ck_assert_str_eq(plan.config_string, "fwd xe sdpa_xe_fwd-k16-d32-emu sg8 "
                                         "cfg=16,8,32,8,2,8,2,8 (xe table: xe_hpg h64)");

    /* Natively: the same rows, the native variants, with the large register
     * file (the current compiler spills Xe-HPG's tiles in 128 registers). */
    dev.pvc.kernels = SDPA_KERNELS_PORTABLE;
    plan_ok(&p, &s, &dev.pvc, &plan);
    ck_assert_str_eq(plan.variant, "sdpa_fwd");
    dev.pvc.kernels = SDPA_KERNELS_AUTO;
    plan_ok(&p, &s, &dev.pvc, &plan);
    ck_assert_str_eq(plan.variant, "sdpa_xe_fwd-k32-d64");
    ck_assert_str_eq(plan.kernel_name, SDPA_XE_FWD_KERNEL);
    ck_assert_str_eq(plan.build_flags, SDPA_ZE_FLAG_LARGE_GRF);
    plan_ok(&p, &s, &dev.dg2, &plan);
    ck_assert_str_eq(plan.variant, "sdpa_xe_fwd-k16-d32");
    ck_assert_uint_eq(plan.subgroup_size, 8);
    ck_assert_str_eq(plan.build_flags, SDPA_ZE_FLAG_LARGE_GRF);
    /* With dropout too; the emulation on the CPU without it. */
    p.dropout.enabled = 1;
    plan_ok(&p, &s, &dev.dg2, &plan);
    ck_assert_str_eq(plan.build_flags, SDPA_ZE_FLAG_LARGE_GRF);
    dev.cpu.kernels = SDPA_KERNELS_XE_HPG;
    plan_ok(&p, &s, &dev.cpu, &plan);
    ck_assert_str_eq(plan.build_flags, "");
}
END_TEST

/* Problems outside the fast path go to the portable kernel, each for its
 * reason. */
START_TEST(problems_it_does_not_serve)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t s;
    const char *why = NULL;
    sdpa_xe_target_t t;

    fixture_problem(SDPA_DTYPE_F32, 1, 4, 4, 100, 200, 64, &p, &s);
    ck_assert(!sdpa_fwd_xe_serves(&p, &s, &dev.pvc, &t, &why));
    ck_assert_str_eq(why, "Q is neither f16 nor bf16");
    ck_assert(!xe_takes_fast_path(&forward, &p, &s, &dev.pvc));

    /* K/V in another dtype or layout: the converting variants. */
    fixture_problem(SDPA_DTYPE_BF16, 1, 4, 4, 100, 200, 64, &p, &s);
    ck_assert(sdpa_fwd_xe_serves(&p, &s, &dev.pvc, &t, &why));
    ck_assert_int_eq(t.convert_kv, 0);
    p.v.dtype = SDPA_DTYPE_F16;
    ck_assert(sdpa_fwd_xe_serves(&p, &s, &dev.pvc, &t, &why));
    ck_assert_int_eq(t.convert_kv, 1);

    fixture_problem(SDPA_DTYPE_F16, 1, 4, 4, 100, 200, 320, &p, &s);
    ck_assert(!sdpa_fwd_xe_serves(&p, &s, &dev.pvc, &t, &why));
    ck_assert_str_eq(why, "the head size is above 256");

    fixture_problem(SDPA_DTYPE_F16, 1, 4, 4, 100, 200, 64, &p, &s);
    p.v.strides[3] = 2;
    ck_assert(sdpa_fwd_xe_serves(&p, &s, &dev.pvc, &t, &why));
    ck_assert_int_eq(t.convert_kv, 1);
    fixture_problem(SDPA_DTYPE_F16, 1, 4, 4, 100, 200, 64, &p, &s);
    p.k.strides[3] = 200; /* [.., D, Sk]: transposed K is read directly */
    p.k.strides[2] = 1;
    ck_assert(sdpa_fwd_xe_serves(&p, &s, &dev.pvc, &t, &why));
    ck_assert_int_eq(t.convert_kv, 0);
    p.k.strides[2] = 2;
    ck_assert(sdpa_fwd_xe_serves(&p, &s, &dev.pvc, &t, &why));
    ck_assert_int_eq(t.convert_kv, 1);
    p.dst.strides[3] = 2;
    ck_assert(!sdpa_fwd_xe_serves(&p, &s, &dev.pvc, &t, &why));
    ck_assert_str_eq(why, "Q or O is not contiguous along the head dimension");

    /* V's head size apart from Q's (DeepSeek's 192 / 128): declined, the
     * portable kernel plans it, and its bucket holds the larger. */
    fixture_problem(SDPA_DTYPE_BF16, 1, 4, 4, 100, 200, 192, &p, &s);
    p.v.dims[3] = p.dst.dims[3] = 128;
    s.head_size_v = 128;
    ck_assert(!sdpa_fwd_xe_serves(&p, &s, &dev.pvc, &t, &why));
    ck_assert_str_eq(why, "V's head size differs from Q's (the fast path's tiles share one)");
    ck_assert(!xe_takes_fast_path(&forward, &p, &s, &dev.pvc));
    sdpa_fwd_plan_t dv_plan;
    plan_ok(&p, &s, &dev.pvc, &dv_plan);
    ck_assert_int_eq(dv_plan.kind, SDPA_FWD_KIND_PORTABLE);
    ck_assert_int_eq(dv_plan.d_max, 256);
    ck_assert_int_eq(dv_plan.head_size_v, 128);
    s.head_size = 64;
    p.q.dims[3] = p.k.dims[3] = 64;
    ck_assert(!sdpa_fwd_xe_serves(&p, &s, &dev.pvc, &t, &why));

    /* Quantized K/V: the converting variant, the QUANTIZED rows. */
    fixture_problem(SDPA_DTYPE_F16, 1, 8, 2, 1, 300, 128, &p, &s);
    p.k.dtype = p.v.dtype = SDPA_DTYPE_S8;
    p.k_quant = p.v_quant =
            (sdpa_quant_desc_t){SDPA_QUANT_PER_TENSOR, SDPA_DTYPE_F32, SDPA_QUANT_NONE, 0, 0};
    sdpa_fwd_plan_t plan;
    plan_ok(&p, &s, &dev.pvc, &plan);
    ck_assert_str_eq(plan.config_string,
                     "fwd xe sdpa_xe_fwd-k32-d64-cvt sg16 "
                     "cfg=32,16,64,16,2,1,2,1 (xe table: xe_hpc h128 thin quant)");
    ck_assert_uint_eq(plan.slm_bytes, SDPA_XE_FWD_SLM_BYTES(128, 16, 64, 2, 16, 1));

    /* Xe-HPC without sub-group 16 (not a real device: the rule itself). */
    fixture_problem(SDPA_DTYPE_F16, 1, 4, 4, 100, 200, 64, &p, &s);
    dev.pvc.subgroup_sizes[0] = 32;
    ck_assert(!sdpa_fwd_xe_serves(&p, &s, &dev.pvc, &t, &why));
    ck_assert_str_eq(why, "the device lacks the fast path's sub-group size");
}
END_TEST

/* Geometry and local memory of a fast-path plan. */
START_TEST(plan_geometry)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t s;
    sdpa_fwd_plan_t plan;
    fixture_problem(SDPA_DTYPE_F16, 2, 16, 16, 2048, 2000, 128, &p, &s);
    plan_ok(&p, &s, &dev.pvc, &plan);
    ck_assert_str_eq(plan.config_string, "fwd xe sdpa_xe_fwd-k32-d64 sg16 "
                                         "cfg=32,16,64,16,2,4,2,4 (xe table: xe_hpc h128)");
    /* BQ = 64 queries, 8 sub-groups, BK = 64 keys. */
    ck_assert_launch(plan.local_size, plan.group_count, 16, 8, 1, 32, 16, 2);
    ck_assert_uint_eq(plan.slm_bytes, SDPA_XE_FWD_SLM_BYTES(128, 64, 64, 2, 16, 0));
    ck_assert_uint_eq(plan.slm_bytes, 2 * 64 * 128 + 2 * 64 * 64 + 4 * 2 * 64);
    ck_assert_int_eq(plan.d_max, 0);

    /* Decode: Sq = 1, 8 query heads per K/V head: one thin query block. */
    fixture_problem(SDPA_DTYPE_BF16, 1, 32, 4, 1, 4000, 128, &p, &s);
    plan_ok(&p, &s, &dev.pvc, &plan);
    ck_assert_str_eq(plan.config_string, "fwd xe sdpa_xe_fwd-k32-d64 sg16 "
                                         "cfg=32,16,64,16,2,1,2,1 (xe table: xe_hpc h128 thin)");
    ck_assert_uint_eq(plan.group_count[0], 1);
    ck_assert_uint_eq(plan.group_count[1], 4);
    ck_assert(sdpa_spec_values_get_bool(&plan.constants, SDPA_SC_Q1_GQA_BATCH));

    /* A head size that is not a multiple of 16 pads local memory. */
    fixture_problem(SDPA_DTYPE_F16, 1, 2, 2, 100, 100, 40, &p, &s);
    plan_ok(&p, &s, &dev.dg2, &plan);
    ck_assert_uint_eq(plan.slm_bytes, SDPA_XE_FWD_SLM_BYTES(40, 64, 32, 2, 8, 0));
    ck_assert_uint_eq(SDPA_XE_D_PAD(40), 48);
}
END_TEST

/* XE_KV_SURF_PER_BLOCK: on Xe-HPC's rows (natively and emulated) for K and
 * V in Q's dtype up to head size 128 without a mask buffer; nowhere else. */
static int kv_surf_per_block(const sdpa_problem_desc_t *p, const sdpa_shape_t *s,
                             const sdpa_device_info_t *device)
{
    sdpa_fwd_plan_t plan;
    plan_ok(p, s, device, &plan);
    const int on = sdpa_spec_values_get_bool(&plan.constants, SDPA_SC_XE_KV_SURF_PER_BLOCK);
    ck_assert_int_eq(on, plan.xe_kv_surf_per_block);
    ck_assert(!on || plan.kind == SDPA_FWD_KIND_XE);
    return on;
}

START_TEST(kv_surface_per_block)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t s;
    const int heads[] = {32, 64, 128};
    for (int i = 0; i < 3; i++) {
        fixture_problem(SDPA_DTYPE_F16, 1, 4, 4, 100, 200, heads[i], &p, &s);
        ck_assert(kv_surf_per_block(&p, &s, &dev.pvc));
        ck_assert(!kv_surf_per_block(&p, &s, &dev.bmg));
        ck_assert(!kv_surf_per_block(&p, &s, &dev.dg2));
        ck_assert(!kv_surf_per_block(&p, &s, &dev.tgl));
        ck_assert(!kv_surf_per_block(&p, &s, &dev.cpu)); /* the portable kernel */
    }
    fixture_problem(SDPA_DTYPE_BF16, 1, 32, 4, 1, 4000, 128, &p, &s); /* decode */
    ck_assert(kv_surf_per_block(&p, &s, &dev.pvc));
    p.prop_kind = SDPA_FORWARD_TRAINING;
    p.dropout.enabled = 1;
    ck_assert(kv_surf_per_block(&p, &s, &dev.pvc));

    /* The emulation on the CPU takes Xe-HPC's rows and the constant. */
    fixture_problem(SDPA_DTYPE_F16, 1, 4, 4, 100, 200, 64, &p, &s);
    dev.cpu.kernels = SDPA_KERNELS_XE;
    ck_assert(kv_surf_per_block(&p, &s, &dev.cpu));
    dev.cpu.kernels = SDPA_KERNELS_XE_HPG;
    ck_assert(!kv_surf_per_block(&p, &s, &dev.cpu));

    /* Not with a mask buffer, at head size 256 or with converted K. */
    p.mask_kind = SDPA_MASK_BUFFER;
    p.mask = fixture_tensor(SDPA_DTYPE_F16, 1, 1, 100, 200);
    ck_assert(!kv_surf_per_block(&p, &s, &dev.pvc));
    fixture_problem(SDPA_DTYPE_F16, 1, 4, 4, 100, 200, 256, &p, &s);
    ck_assert(!kv_surf_per_block(&p, &s, &dev.pvc));
    fixture_problem(SDPA_DTYPE_F16, 1, 8, 2, 100, 300, 128, &p, &s);
    p.k.dtype = p.v.dtype = SDPA_DTYPE_S8;
    p.k_quant = p.v_quant =
            (sdpa_quant_desc_t){SDPA_QUANT_PER_TENSOR, SDPA_DTYPE_F32, SDPA_QUANT_NONE, 0, 0};
    ck_assert(!kv_surf_per_block(&p, &s, &dev.pvc));
}
END_TEST

/* SDPA_CONFIG forces any row: a fast-path configuration runs the fast path,
 * a portable one the portable kernel, a bad one fails. */
START_TEST(override_chooses_the_kernel)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t s;
    sdpa_fwd_plan_t plan;
    fixture_problem(SDPA_DTYPE_F16, 1, 4, 4, 100, 200, 128, &p, &s);

    fixture_setenv("SDPA_CONFIG", "32,16,64,16,2,2,2,2");
    plan_ok(&p, &s, &dev.pvc, &plan);
    ck_assert_str_eq(plan.config_string,
                     "fwd xe sdpa_xe_fwd-k32-d64 sg16 cfg=32,16,64,16,2,2,2,2 (SDPA_CONFIG)");

    fixture_setenv("SDPA_CONFIG", "4,16,32,16,4,1,4,1");
    plan_ok(&p, &s, &dev.pvc, &plan);
    ck_assert_int_ne(plan.kind, SDPA_FWD_KIND_XE);
    ck_assert_str_eq(plan.config_string, "fwd d128 sg16 cfg=4,16,32,16,4,1,4,1 (SDPA_CONFIG)");

    fixture_setenv("SDPA_CONFIG", "32,16,64,16,1,2,1,2"); /* 64 rows < 128 */
    ck_assert_int_eq(sdpa_fwd_plan_make(&p, &s, &dev.pvc, &plan), SDPA_ERROR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(sdpa_error_message(), "SDPA_CONFIG 32,16,64,16,1,2,1,2"));
}
END_TEST

/* The rules, one at a time. */
START_TEST(config_rules)
{
    const sdpa_xe_target_t hpc = {SDPA_DEVICE_CLASS_XE_HPC, 16, 0, 1, 0};
    const sdpa_xe_target_t hpg_emu = {SDPA_DEVICE_CLASS_XE_HPG, 8, 1, 0, 0};
    const sdpa_xe_target_t hpg_cvt = {SDPA_DEVICE_CLASS_XE_HPG, 8, 0, 0, 1};
    const xe_rule_case_t cases[] = {
            {&hpc, {32, 16, 64, 16, 2, 4, 2, 4}, 128, NULL},
            {&hpc, {32, 16, 64, 16, 2, 4, 2, 4}, 129, "unroll_m_vs * wg_m_vs >= head size"},
            {&hpc, {32, 8, 64, 8, 2, 4, 2, 4}, 128, "== sub-group size"},
            {&hpc, {32, 16, 64, 16, 2, 4, 1, 4}, 64, "wg_m_kq == wg_m_vs"},
            {&hpc, {24, 16, 64, 16, 2, 4, 2, 4}, 64, "unroll_m_kq % 16 == 0"},
            {&hpc, {48, 16, 64, 16, 2, 4, 2, 4}, 64, "is a built variant"},
            {&hpc, {32, 16, 64, 16, 2, 0, 2, 0}, 64, "every value is in 1..1024"},
            {&hpc, {32, 16, 64, 16, 2, 64, 2, 64}, 64, "wg_m_kq * wg_n_kq <= work-group limit"},
            {&hpc, {32, 16, 64, 16, 8, 8, 8, 8}, 256, "local memory"},
            {&hpg_emu, {16, 8, 32, 8, 4, 4, 4, 4}, 128, NULL},
            {&hpg_emu, {32, 8, 32, 8, 4, 4, 4, 4}, 128, "is a built variant"},
            {&hpg_cvt, {16, 8, 32, 8, 4, 4, 4, 4}, 128, NULL},
    };
    xe_assert_rules(&forward, cases, sizeof(cases) / sizeof(cases[0]), &dev.pvc);
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_ONCE(kernel_set_names),
            TEST_ONCE(devices_and_kernel_sets),
            TEST_ONCE(problems_it_does_not_serve),
            TEST_ONCE(plan_geometry),
            TEST_ONCE(kv_surface_per_block),
            TEST_ONCE(override_chooses_the_kernel),
            TEST_ONCE(config_rules),
    };
    const test_suite_t suite = {.name = "fwd_xe_plan", .setup = setup};
    return xe_run_suite(&suite, tests, TEST_COUNT(tests), &forward, &dev);
}
