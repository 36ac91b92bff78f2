/*
 * xe_plan_cases.h - what the forward and backward fast-path suites
 * (test_fwd_xe_plan.c, test_bwd_xe_plan.c) check the same way: the
 * devices they plan for, the features that send a problem to the portable
 * kernels, the configuration rules case by case, and that every row of an
 * xe table is chosen for some problem. A direction is described once
 * (xe_suite_direction_t), as the code under test describes it
 * (sdpa_xe_direction_t).
 */
#ifndef SDPA_TESTS_XE_PLAN_CASES_H
#define SDPA_TESTS_XE_PLAN_CASES_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

#include "check_main.h"
#include "device.h"
#include "problem.h"
#include "xe_config_choose.h"
#include "xe_target.h"

/* The devices both suites plan for: the CPU, Xe-HPC (Max 1550), discrete
 * Xe-HPG (Arc A770), integrated Xe-HPG (Meteor Lake's Xe-LPG: no matrix
 * engine), Xe2 and Xe-LP (Tiger Lake). */
typedef struct xe_devices {
    sdpa_device_info_t cpu, pvc, dg2, mtl, bmg, tgl;
} xe_devices_t;

void xe_devices_init(xe_devices_t *out);

/* Room for a plan's configuration string. */
#define XE_PLAN_STRING 512

/* One direction of the fast path under test. */
typedef struct xe_suite_direction {
    const sdpa_xe_direction_t *xe; /* its table and rules */
    int config_ints;               /* SDPA_FWD_CONFIG_INTS or SDPA_BWD_CONFIG_INTS */
    /* The configuration of config_ints values into config. */
    void (*config_from_ints)(const int *values, void *config);
    /* A problem of the direction with Q, K, V, O (and the gradients) in
     * dtype. */
    void (*problem)(sdpa_dtype_t dtype, int64_t batch, int64_t q_heads, int64_t kv_heads,
                    int64_t q_len, int64_t k_len, int64_t head_size, sdpa_problem_desc_t *p,
                    sdpa_shape_t *s);
    /* sdpa_fwd_xe_serves or sdpa_bwd_xe_serves. */
    int (*serves)(const sdpa_problem_desc_t *p, const sdpa_shape_t *s,
                  const sdpa_device_info_t *device, sdpa_xe_target_t *target, const char **why);
    /* Plans p on device, asserting success; returns 1 if the plan runs
     * the fast path, and its configuration string into buf. */
    int (*plan)(const sdpa_problem_desc_t *p, const sdpa_shape_t *s,
                const sdpa_device_info_t *device, char *buf, size_t size);
    int modes; /* 1, or 2: every row is also checked with deterministic = 1 */
} xe_suite_direction_t;

/* Defines the adapters a suite of one direction needs, over its plan type
 * (sdpa_fwd_plan_t), planner (sdpa_fwd_plan_make), configuration type and
 * reader (sdpa_fwd_config_from_ints) and fast-path kind (SDPA_FWD_KIND_XE):
 * plan_ok(p, s, device, &plan) plans
 * or fails the test; xe_plan and xe_config_from_ints are the direction's
 * plan and config_from_ints. */
#define XE_SUITE_ADAPTERS(plan_type, plan_make, config_type, config_from_ints, xe_kind)            \
    static void plan_ok(const sdpa_problem_desc_t *p, const sdpa_shape_t *s,                       \
                        const sdpa_device_info_t *device, plan_type *plan)                         \
    {                                                                                              \
        sdpa_status_t status = plan_make(p, s, device, plan);                                      \
        ck_assert_msg(status == SDPA_SUCCESS, "%s: %s", sdpa_status_string(status),                \
                      sdpa_error_message());                                                       \
    }                                                                                              \
    static int xe_plan(const sdpa_problem_desc_t *p, const sdpa_shape_t *s,                        \
                       const sdpa_device_info_t *device, char *buf, size_t size)                   \
    {                                                                                              \
        plan_type plan;                                                                            \
        plan_ok(p, s, device, &plan);                                                              \
        snprintf(buf, size, "%s", plan.config_string);                                             \
        return plan.kind == xe_kind;                                                               \
    }                                                                                              \
    static void xe_config_from_ints(const int *values, void *config)                               \
    {                                                                                              \
        config_from_ints(values, (config_type *)config);                                           \
    }

/* 1 if the plan of p on device (which must succeed) runs d's fast path. */
int xe_takes_fast_path(const xe_suite_direction_t *d, const sdpa_problem_desc_t *p,
                       const sdpa_shape_t *s, const sdpa_device_info_t *device);

/* Asserts where d's fast path plans p by default: on Xe-HPC, Xe2 and
 * discrete Xe-HPG, not on integrated Xe-HPG (no matrix engine), Xe-LP or
 * the CPU; and not on Xe-HPC with SDPA_ZE_KERNELS=portable (devices->pvc
 * is left with SDPA_KERNELS_AUTO). */
void xe_assert_default_devices(const xe_suite_direction_t *d, const sdpa_problem_desc_t *p,
                               const sdpa_shape_t *s, xe_devices_t *devices);

/* A configuration of up to 12 values for target at head size d, and the
 * text of the rule it breaks (NULL: it passes). */
typedef struct xe_rule_case {
    const sdpa_xe_target_t *target;
    int values[12];
    int64_t head_size;
    const char *rule;
} xe_rule_case_t;

/* Checks each of the n cases on device with d's rules. */
void xe_assert_rules(const xe_suite_direction_t *d, const xe_rule_case_t *cases, size_t n,
                     const sdpa_device_info_t *device);

/* Adds to t the tests of d that need nothing else of the suite, over
 * devices (the suite's, set up by its fixture):
 *   llm_features_take_the_portable_kernels: each ABI 1.1 feature the fast
 *     path lacks (fixture_xe_unimplemented) refuses a problem the fast path
 *     otherwise serves, on Xe-HPC and Xe-HPG, with its reason, and the plan
 *     takes the portable kernels;
 *   every_row_is_selectable: every row of d's table passes the rules on
 *     its class's devices, native and emulated, and is the first choice of
 *     a problem of its head size, thin or not, quantized or not (in each of
 *     d->modes): no row is dead.
 * One direction per program: xe_run_suite runs the suite of desc with the
 * table's tests and these two (test_run_table), then returns its status. */
int xe_run_suite(const test_suite_t *desc, const test_entry_t *table, size_t count,
                 const xe_suite_direction_t *d, const xe_devices_t *devices);

#endif /* SDPA_TESTS_XE_PLAN_CASES_H */
