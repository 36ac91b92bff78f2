/* test_bwd_xe_plan.c - when the backward fast path serves a problem, its
 * configuration rules, its table, and the plans it makes (xe_bwd_plan.h);
 * which f32 atomic-add variant a backward plan takes, fast path or not. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "bwd_plan.h"
#include "xe_bwd_plan.h"
#include "check_main.h"
#include "core_fixtures.h"
#include "error.h"
#include "fwd_plan.h"
#include "kernel_abi_bwd.h"
#include "kernel_abi_xe.h"
#include "xe_plan_cases.h"
#include "spirv_registry.h"

static xe_devices_t dev;

static void setup(void)
{
    xe_devices_init(&dev);
    fixture_setenv("BWD_SDPA_CONFIG", NULL);
}

XE_SUITE_ADAPTERS(sdpa_bwd_plan_t, sdpa_bwd_plan_make, sdpa_bwd_config_t, sdpa_bwd_config_from_ints,
                  SDPA_BWD_KIND_XE)

static const xe_suite_direction_t backward = {
        .xe = &sdpa_bwd_xe_direction,
        .config_ints = SDPA_BWD_CONFIG_INTS,
        .config_from_ints = xe_config_from_ints,
        .problem = fixture_backward_problem,
        .serves = sdpa_bwd_xe_serves,
        .plan = xe_plan,
        .modes = 2,
};

/* Where the backward fast path runs, with which variant, kernels and
 * build flags. */
START_TEST(devices_and_kernel_sets)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t s;
    fixture_backward_problem(SDPA_DTYPE_F16, 1, 4, 4, 100, 200, 64, &p, &s);
    xe_assert_default_devices(&backward, &p, &s, &dev);

    sdpa_bwd_plan_t plan;
    dev.cpu.kernels = SDPA_KERNELS_XE;
    plan_ok(&p, &s, &dev.cpu, &plan);
    ck_assert_str_eq(plan.config_string,
                     "bwd xe sdpa_xe_bwd-k16-d16-emu sg16 atomic "
                     "cfg=16,16,16,16,16,16,2,1,4,2,4,1 (xe table: xe_hpc h64)");
    ck_assert_str_eq(plan.main_build_flags, "");
    dev.cpu.kernels = SDPA_KERNELS_XE_HPG;
    plan_ok(&p, &s, &dev.cpu, &plan);
    ck_assert_str_eq(plan.config_string, "bwd xe sdpa_xe_bwd-k8-d16-emu sg8 atomic "
                                         "cfg=8,16,16,8,16,16,2,1,4,2,4,1 (xe table: xe_hpg h64)");

    /* Natively both classes build with the 256-register file. */
    plan_ok(&p, &s, &dev.pvc, &plan);
    ck_assert_str_eq(plan.main_variant, "sdpa_xe_bwd-k16-d16-fadd");
    ck_assert_str_eq(plan.main_kernel, SDPA_XE_BWD_KERNEL);
    ck_assert_str_eq(plan.dq_kernel, SDPA_XE_BWD_DQ_KERNEL);
    ck_assert_str_eq(plan.main_build_flags, SDPA_ZE_FLAG_LARGE_GRF);
    plan_ok(&p, &s, &dev.dg2, &plan);
    ck_assert_str_eq(plan.main_variant, "sdpa_xe_bwd-k8-d16-fadd");
    ck_assert_uint_eq(plan.subgroup_size, 8);
    ck_assert_str_eq(plan.main_build_flags, SDPA_ZE_FLAG_LARGE_GRF);

    /* The portable plan keeps the portable kernels and flags. */
    plan_ok(&p, &s, &dev.tgl, &plan);
    ck_assert_str_eq(plan.main_kernel, SDPA_BWD_KERNEL);
    ck_assert_str_eq(plan.dq_kernel, SDPA_BWD_DQ_KERNEL);
    ck_assert_str_eq(plan.main_build_flags, "");
}
END_TEST

/* Problems outside the backward fast path, each for its reason. */
START_TEST(problems_it_does_not_serve)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t s;
    const char *why = NULL;
    sdpa_xe_target_t t;

    fixture_backward_problem(SDPA_DTYPE_BF16, 1, 4, 4, 100, 200, 64, &p, &s);
    ck_assert(sdpa_bwd_xe_serves(&p, &s, &dev.pvc, &t, &why));
    ck_assert_ptr_null(why);
    ck_assert_int_eq(t.large_grf, 1);

    fixture_backward_problem(SDPA_DTYPE_F32, 1, 4, 4, 100, 200, 64, &p, &s);
    ck_assert(!sdpa_bwd_xe_serves(&p, &s, &dev.pvc, &t, &why));
    ck_assert_str_eq(why, "Q is neither f16 nor bf16");
    ck_assert(!xe_takes_fast_path(&backward, &p, &s, &dev.pvc));

    const sdpa_dtype_t other = SDPA_DTYPE_F16;
    for (int i = 0; i < 4; i++) {
        fixture_backward_problem(SDPA_DTYPE_BF16, 1, 4, 4, 100, 200, 64, &p, &s);
        sdpa_tensor_desc_t *tensors[] = {&p.k, &p.v, &p.dst, &p.diff_dst};
        tensors[i]->dtype = other;
        ck_assert_msg(!sdpa_bwd_xe_serves(&p, &s, &dev.pvc, &t, &why), "tensor %d", i);
        ck_assert_str_eq(why, "K, V, O or dO is not in Q's dtype");
    }

    fixture_backward_problem(SDPA_DTYPE_F16, 1, 4, 4, 100, 200, 320, &p, &s);
    ck_assert(!sdpa_bwd_xe_serves(&p, &s, &dev.pvc, &t, &why));
    ck_assert_str_eq(why, "the head size is above 256");

    fixture_backward_problem(SDPA_DTYPE_F16, 1, 4, 4, 100, 200, 64, &p, &s);
    dev.pvc.has_fp16 = 0;
    ck_assert(!sdpa_bwd_xe_serves(&p, &s, &dev.pvc, &t, &why));
    ck_assert_str_eq(why, "the device has no fp16");
    dev.pvc.has_fp16 = 1;

    /* Xe-HPG has no rows above head size 128: the portable kernels. */
    fixture_backward_problem(SDPA_DTYPE_F16, 1, 4, 4, 100, 200, 256, &p, &s);
    ck_assert(sdpa_bwd_xe_serves(&p, &s, &dev.dg2, &t, &why));
    sdpa_bwd_config_t config;
    sdpa_config_source_t source;
    int use = 1;
    ck_assert_int_eq(sdpa_xe_config_choose(&sdpa_bwd_xe_direction, &p, &s, &dev.dg2, &t, &config,
                                           &source, &use),
                     SDPA_SUCCESS);
    ck_assert_int_eq(use, 0);

    /* Any layout: transposed K, strided V. */
    fixture_backward_problem(SDPA_DTYPE_F16, 1, 4, 4, 100, 200, 64, &p, &s);
    p.k.strides[3] = 200;
    p.k.strides[2] = 1;
    p.v.strides[3] = 2;
    ck_assert(xe_takes_fast_path(&backward, &p, &s, &dev.pvc));
}
END_TEST

/* Geometry and local memory of a fast-path plan, both modes. */
START_TEST(plan_geometry)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t s;
    sdpa_bwd_plan_t plan;
    fixture_backward_problem(SDPA_DTYPE_F16, 2, 16, 16, 2048, 2000, 128, &p, &s);
    plan_ok(&p, &s, &dev.pvc, &plan);
    ck_assert_str_eq(plan.config_string,
                     "bwd xe sdpa_xe_bwd-k16-d16-fadd sg16 atomic "
                     "cfg=16,16,16,16,16,16,2,1,8,2,8,1 (xe table: xe_hpc h128)");
    /* 2 key groups of 16 keys x 8 column slices of 16: 16 sub-groups. */
    /* ceil(2000 / 32) key groups. */
    ck_assert_launch(plan.local_size, plan.main_groups, 16, 16, 1, 63, 16, 2);
    ck_assert_uint_eq(plan.slm_bytes, SDPA_XE_BWD_SLM_BYTES(128, 32, 1));
    /* K, V: 32 rows of 136; Q, dO twice: 16 rows; P^T Z, dS^T, dS^T pairs
     * (+8 rows); LSE and D_i; K^T: 128 rows of 32 keys. */
    ck_assert_uint_eq(plan.slm_bytes, 4 * 32 * 136 + 8 * 16 * 136 + 2 * (3 * 32 + 8) * 16 + 8 * 16 +
                                              2 * 128 * 32);
    ck_assert(plan.dq_target != SDPA_BWD_TARGET_NONE);

    p.deterministic = 1;
    plan_ok(&p, &s, &dev.pvc, &plan);
    ck_assert_ptr_nonnull(strstr(plan.config_string, " deterministic "));
    ck_assert_int_eq(plan.dq_target, SDPA_BWD_TARGET_NONE);
    /* dQ in its own pass: no K^T in the main kernel's local memory. */
    ck_assert_uint_eq(plan.slm_bytes, SDPA_XE_BWD_SLM_BYTES(128, 32, 0));
    ck_assert_uint_eq(plan.slm_bytes, 4 * 32 * 136 + 8 * 16 * 136 + 2 * (3 * 32 + 8) * 16 + 8 * 16);
    ck_assert_uint_eq(plan.dq_groups[0], 64); /* ceil(2048 / 32) */
    ck_assert_uint_eq(plan.dq_slm_bytes, SDPA_XE_BWD_DQ_SLM_BYTES(128, 16, 32));
    ck_assert_uint_eq(plan.dq_slm_bytes,
                      4 * 16 * 136 + 8 * 32 * 136 + 2 * (3 * 16 + 8) * 32 + 8 * 32);

    /* Thin queries: the THIN rows. */
    fixture_backward_problem(SDPA_DTYPE_BF16, 1, 8, 2, 5, 300, 32, &p, &s);
    plan_ok(&p, &s, &dev.dg2, &plan);
    ck_assert_str_eq(plan.config_string,
                     "bwd xe sdpa_xe_bwd-k8-d16-fadd sg8 atomic "
                     "cfg=8,16,16,8,16,16,2,1,2,2,2,1 (xe table: xe_hpg h32 thin)");
}
END_TEST

/* BWD_SDPA_CONFIG forces any row: a fast-path one the fast path, a portable
 * one the portable kernels, one valid for neither fails. */
START_TEST(override_chooses_the_kernel)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t s;
    sdpa_bwd_plan_t plan;
    fixture_backward_problem(SDPA_DTYPE_F16, 1, 4, 4, 100, 200, 128, &p, &s);

    fixture_setenv("BWD_SDPA_CONFIG", "16,16,16,16,16,16,1,1,8,1,8,1");
    plan_ok(&p, &s, &dev.pvc, &plan);
    ck_assert_str_eq(plan.config_string, "bwd xe sdpa_xe_bwd-k16-d16-fadd sg16 atomic "
                                         "cfg=16,16,16,16,16,16,1,1,8,1,8,1 (BWD_SDPA_CONFIG)");
    /* The same row on a device without the fast path: not a portable row. */
    ck_assert_int_eq(sdpa_bwd_plan_make(&p, &s, &dev.tgl, &plan), SDPA_ERROR_INVALID_CONFIG);

    fixture_setenv("BWD_SDPA_CONFIG", "16,4,32,16,32,16,1,4,4,1,4,1");
    plan_ok(&p, &s, &dev.pvc, &plan);
    ck_assert_int_ne(plan.kind, SDPA_BWD_KIND_XE);
    ck_assert_str_eq(plan.main_kernel, SDPA_BWD_KERNEL);
    ck_assert_ptr_nonnull(strstr(plan.config_string, "(BWD_SDPA_CONFIG)"));

    fixture_setenv("BWD_SDPA_CONFIG", "16,16,16,16,16,16,2,1,4,2,4,1"); /* 64 columns < 128 */
    ck_assert_int_eq(sdpa_bwd_plan_make(&p, &s, &dev.pvc, &plan), SDPA_ERROR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(sdpa_error_message(), "BWD_SDPA_CONFIG"));
}
END_TEST

/* The rules, one at a time. */
START_TEST(config_rules)
{
    const sdpa_xe_target_t hpc = {SDPA_DEVICE_CLASS_XE_HPC, 16, 0, 1, 0};
    const sdpa_xe_target_t hpg_emu = {SDPA_DEVICE_CLASS_XE_HPG, 8, 1, 0, 0};
    const xe_rule_case_t cases[] = {
            {&hpc, {16, 16, 16, 16, 16, 16, 2, 1, 8, 2, 8, 1}, 128, NULL},
            {&hpc, {16, 16, 16, 16, 16, 16, 2, 1, 8, 2, 8, 1}, 129, "* wg_m_DBc >= head size"},
            {&hpc, {16, 8, 16, 16, 16, 8, 2, 1, 8, 2, 8, 1}, 128, "blocks of 16 queries"},
            {&hpc, {16, 16, 16, 16, 16, 16, 2, 2, 8, 2, 8, 2}, 128, "blocks of 16 queries"},
            {&hpc, {16, 16, 16, 8, 16, 16, 2, 1, 8, 2, 8, 1}, 128, "keys per sub-group"},
            {&hpc, {32, 16, 16, 32, 16, 16, 2, 1, 8, 2, 8, 1}, 128, "keys per sub-group"},
            {&hpc, {16, 16, 8, 16, 8, 16, 2, 1, 16, 2, 16, 1}, 128, "a multiple of the sub-group"},
            {&hpc, {16, 16, 16, 16, 32, 16, 2, 1, 8, 2, 8, 1}, 128, "a multiple of the sub-group"},
            {&hpc, {16, 16, 16, 16, 16, 16, 2, 1, 8, 1, 8, 1}, 128, "one sub-group grid"},
            {&hpc, {16, 16, 16, 16, 16, 16, 2, 1, 8, 2, 4, 1}, 64, "one sub-group grid"},
            {&hpc, {16, 16, 48, 16, 48, 16, 2, 1, 4, 2, 4, 1}, 128, "is a built variant"},
            {&hpc, {16, 16, 16, 16, 16, 16, 2, 1, 0, 2, 0, 1}, 128, "every value is in 1..1024"},
            {&hpc,
             {16, 16, 16, 16, 16, 16, 16, 1, 8, 16, 8, 1},
             128,
             "wg_m_DBc * wg_n_DBc <= work-group limit"},
            {&hpc, {16, 16, 16, 16, 16, 16, 4, 1, 16, 4, 16, 1}, 256, "local memory"},
            {&hpg_emu, {8, 16, 16, 8, 16, 16, 2, 1, 8, 2, 8, 1}, 128, NULL},
            {&hpg_emu, {16, 16, 16, 16, 16, 16, 2, 1, 8, 2, 8, 1}, 128, "is a built variant"},
    };
    xe_assert_rules(&backward, cases, sizeof(cases) / sizeof(cases[0]), &dev.pvc);
}
END_TEST

/* 1 if the SPIR-V module declares capability (OpCapability, opcode 17). */
static int declares_capability(const sdpa_spirv_module_t *m, uint32_t capability)
{
    const unsigned char *b = m->code;
    for (size_t i = 5 * 4; i + 8 <= m->size;) {
        const uint32_t word = (uint32_t)b[i] | (uint32_t)b[i + 1] << 8 |
                              (uint32_t)b[i + 2] << 16 | (uint32_t)b[i + 3] << 24;
        const uint32_t count = word >> 16;
        if ((word & 0xFFFF) == 17 &&
            ((uint32_t)b[i + 4] | (uint32_t)b[i + 5] << 8 | (uint32_t)b[i + 6] << 16 |
             (uint32_t)b[i + 7] << 24) == capability)
            return 1;
        if (count == 0)
            return 0;
        i += 4 * (size_t)count;
    }
    return 0;
}

/* The plan's main variant is built in, and declares the native f32 add
 * (AtomicFloat32AddEXT, 6033) exactly when its name says -fadd. */
static void check_variant(const sdpa_bwd_plan_t *plan, int fadd)
{
    const sdpa_spirv_module_t *m =
            sdpa_spirv_find(plan->main_variant, SDPA_BWD_VARIANT_D_MAX, (int)plan->subgroup_size);
    ck_assert_msg(m != NULL, "%s.0.%u is not built in", plan->main_variant, plan->subgroup_size);
    ck_assert_int_eq(plan->native_f32_add, fadd);
    ck_assert_int_eq(strstr(plan->main_variant, SDPA_BWD_FADD_FIELD) != NULL, fadd);
    ck_assert_int_eq(declares_capability(m, 6033), fadd);
}

/* The native f32 atomic add where the device reports it: by default on GPUs
 * but Xe-LP, with SDPA_ZE_FLOAT_ATOMICS=native on the CPU device and Xe-LP
 * too, never with cas; on the fast path and the portable kernels, in both
 * modes. */
START_TEST(float_atomics_choose_the_variant)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t s;
    sdpa_bwd_plan_t plan;
    fixture_backward_problem(SDPA_DTYPE_F16, 1, 4, 2, 100, 200, 64, &p, &s);
    const sdpa_float_atomics_t modes[] = {SDPA_FLOAT_ATOMICS_AUTO, SDPA_FLOAT_ATOMICS_CAS,
                                          SDPA_FLOAT_ATOMICS_NATIVE};
    for (int deterministic = 0; deterministic < 2; deterministic++) {
        p.deterministic = deterministic;
        for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
            const sdpa_float_atomics_t mode = modes[m];
            sdpa_device_info_t *devices[] = {&dev.pvc, &dev.dg2, &dev.tgl, &dev.cpu};
            for (size_t i = 0; i < sizeof(devices) / sizeof(devices[0]); i++) {
                sdpa_device_info_t *d = devices[i];
                d->float_atomics = mode;
                for (int has = 0; has < 2; has++) {
                    d->has_f32_atomic_add = has;
                    const int gpu = d->device_class != SDPA_DEVICE_CLASS_CPU &&
                                    d->device_class != SDPA_DEVICE_CLASS_XE_LP;
                    const int native = has && (mode == SDPA_FLOAT_ATOMICS_NATIVE ||
                                               (mode == SDPA_FLOAT_ATOMICS_AUTO && gpu));
                    ck_assert_int_eq(sdpa_device_native_f32_add(d), native);
                    plan_ok(&p, &s, d, &plan);
                    check_variant(&plan, native);
                    ck_assert_int_eq(strstr(plan.config_string, "fadd") != NULL, native);
                }
            }
            dev.cpu.kernels = SDPA_KERNELS_XE;
            dev.cpu.has_f32_atomic_add = 1;
            plan_ok(&p, &s, &dev.cpu, &plan);
            ck_assert_int_eq(plan.kind, SDPA_BWD_KIND_XE);
            ck_assert_str_eq(plan.main_variant, mode == SDPA_FLOAT_ATOMICS_NATIVE
                                                        ? "sdpa_xe_bwd-k16-d16-emu-fadd"
                                                        : "sdpa_xe_bwd-k16-d16-emu");
            check_variant(&plan, mode == SDPA_FLOAT_ATOMICS_NATIVE);
            dev.cpu.kernels = SDPA_KERNELS_AUTO;
        }
    }
    /* The ISA gate's models report the add, as Intel's GPU driver does; Xe-LP
     * keeps the compare-and-swap loop. */
    fixture_gpu_device(SDPA_DEVICE_CLASS_XE_LP, &dev.tgl);
    fixture_gpu_device(SDPA_DEVICE_CLASS_XE_HPC, &dev.pvc);
    ck_assert(dev.tgl.has_f32_atomic_add && dev.pvc.has_f32_atomic_add);
    p.deterministic = 0;
    plan_ok(&p, &s, &dev.tgl, &plan);
    ck_assert_str_eq(plan.main_variant, SDPA_BWD_MAIN_SOURCE);
    fixture_backward_problem(SDPA_DTYPE_F32, 1, 4, 2, 100, 200, 64, &p, &s);
    plan_ok(&p, &s, &dev.pvc, &plan);
    ck_assert_int_ne(plan.kind, SDPA_BWD_KIND_XE);
    ck_assert_str_eq(plan.main_variant, SDPA_BWD_MAIN_SOURCE SDPA_BWD_FADD_FIELD);

    sdpa_float_atomics_t mode = SDPA_FLOAT_ATOMICS_CAS;
    ck_assert_int_eq(sdpa_float_atomics_parse(NULL, &mode), 0);
    ck_assert_int_eq(mode, SDPA_FLOAT_ATOMICS_AUTO);
    ck_assert_int_eq(sdpa_float_atomics_parse("cas", &mode), 0);
    ck_assert_int_eq(mode, SDPA_FLOAT_ATOMICS_CAS);
    ck_assert_int_eq(sdpa_float_atomics_parse("native", &mode), 0);
    ck_assert_int_eq(mode, SDPA_FLOAT_ATOMICS_NATIVE);
    ck_assert_int_eq(sdpa_float_atomics_parse("auto", &mode), 0);
    ck_assert_int_eq(mode, SDPA_FLOAT_ATOMICS_AUTO);
    ck_assert_int_eq(sdpa_float_atomics_parse("", &mode), 0);
    ck_assert_int_eq(sdpa_float_atomics_parse("fadd", &mode), -1);
    ck_assert_int_eq(mode, SDPA_FLOAT_ATOMICS_AUTO);
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_ONCE(devices_and_kernel_sets),
            TEST_ONCE(problems_it_does_not_serve),
            TEST_ONCE(plan_geometry),
            TEST_ONCE(override_chooses_the_kernel),
            TEST_ONCE(config_rules),
            TEST_ONCE(float_atomics_choose_the_variant),
    };
    const test_suite_t suite = {.name = "bwd_xe_plan", .setup = setup};
    return xe_run_suite(&suite, tests, TEST_COUNT(tests), &backward, &dev);
}
