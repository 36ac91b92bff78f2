/* xe_plan_cases.c - the checks both fast-path suites share. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "core_fixtures.h"
#include "error.h"
#include "kernel_config.h"
#include "xe_plan_cases.h"

void xe_devices_init(xe_devices_t *out)
{
    fixture_cpu_device(&out->cpu);
    fixture_gpu_device(SDPA_DEVICE_CLASS_XE_HPC, &out->pvc);
    fixture_gpu_device(SDPA_DEVICE_CLASS_XE_HPG, &out->dg2);
    fixture_gpu_device(SDPA_DEVICE_CLASS_XE_HPG, &out->mtl);
    out->mtl.integrated = 1;
    fixture_gpu_device(SDPA_DEVICE_CLASS_XE2, &out->bmg);
    fixture_gpu_device(SDPA_DEVICE_CLASS_XE_LP, &out->tgl);
}

int xe_takes_fast_path(const xe_suite_direction_t *d, const sdpa_problem_desc_t *p,
                       const sdpa_shape_t *s, const sdpa_device_info_t *device)
{
    char cfg[XE_PLAN_STRING];
    return d->plan(p, s, device, cfg, sizeof(cfg));
}

void xe_assert_default_devices(const xe_suite_direction_t *d, const sdpa_problem_desc_t *p,
                               const sdpa_shape_t *s, xe_devices_t *devices)
{
    ck_assert(xe_takes_fast_path(d, p, s, &devices->pvc));
    ck_assert(xe_takes_fast_path(d, p, s, &devices->bmg));
    ck_assert(xe_takes_fast_path(d, p, s, &devices->dg2));
    ck_assert(!xe_takes_fast_path(d, p, s, &devices->mtl));
    ck_assert(!xe_takes_fast_path(d, p, s, &devices->tgl));
    ck_assert(!xe_takes_fast_path(d, p, s, &devices->cpu));
    devices->pvc.kernels = SDPA_KERNELS_PORTABLE;
    ck_assert(!xe_takes_fast_path(d, p, s, &devices->pvc));
    devices->pvc.kernels = SDPA_KERNELS_AUTO;
}

static void assert_unimplemented_features(const xe_suite_direction_t *d,
                                          const xe_devices_t *devices)
{
    for (int i = 0; i < FIXTURE_XE_UNIMPLEMENTED; i++) {
        sdpa_problem_desc_t p;
        sdpa_shape_t s;
        const char *why = NULL;
        sdpa_xe_target_t t;
        d->problem(SDPA_DTYPE_F16, 1, 4, 4, 100, 200, 64, &p, &s);
        ck_assert(xe_takes_fast_path(d, &p, &s, &devices->pvc));
        const char *reason = fixture_xe_unimplemented(&p, i);
        ck_assert_msg(!d->serves(&p, &s, &devices->pvc, &t, &why), "%s", reason);
        ck_assert_str_eq(why, reason);
        ck_assert_msg(!d->serves(&p, &s, &devices->dg2, &t, &why), "%s", reason);
        if (i < FIXTURE_SCORE_FEATURES)
            ck_assert_msg(!xe_takes_fast_path(d, &p, &s, &devices->pvc), "%s", reason);
    }
}

/* Room for either direction's configuration. */
typedef union any_config {
    sdpa_fwd_config_t fwd;
    sdpa_bwd_config_t bwd;
} any_config_t;

void xe_assert_rules(const xe_suite_direction_t *d, const xe_rule_case_t *cases, size_t n,
                     const sdpa_device_info_t *device)
{
    for (size_t i = 0; i < n; i++) {
        any_config_t c;
        ck_assert_uint_le(d->xe->config_size, sizeof(c));
        d->config_from_ints(cases[i].values, &c);
        sdpa_status_t st = d->xe->check(&c, cases[i].target, device, cases[i].head_size, "test");
        if (!cases[i].rule) {
            ck_assert_msg(st == SDPA_SUCCESS, "case %zu: %s", i, sdpa_error_message());
        } else {
            ck_assert_msg(st == SDPA_ERROR_INVALID_CONFIG, "case %zu passed", i);
            ck_assert_msg(strstr(sdpa_error_message(), cases[i].rule), "case %zu: %s", i,
                          sdpa_error_message());
        }
    }
}

static void assert_every_row_selectable(const xe_suite_direction_t *d)
{
    for (size_t i = 0; i < *d->xe->count; i++) {
        const char *row = (const char *)d->xe->rows + i * d->xe->row_size;
        const sdpa_config_criteria_t *c = (const sdpa_config_criteria_t *)(const void *)row;
        sdpa_device_info_t dev;
        fixture_gpu_device(c->device_class, &dev);
        char what[96];
        sdpa_config_criteria_format(c, what, sizeof(what));
        sdpa_problem_desc_t p;
        sdpa_shape_t s;
        /* A problem of the row: its head size, thin or not, quantized or
         * not. */
        const int thin = (c->props & SDPA_CONFIG_THIN_Q) != 0;
        d->problem(SDPA_DTYPE_BF16, 1, 2, 2, thin ? 7 : 500, 1000, c->head_size, &p, &s);
        if (c->props & SDPA_CONFIG_QUANTIZED) {
            p.k.dtype = p.v.dtype = SDPA_DTYPE_U8;
            p.k_quant = p.v_quant = (sdpa_quant_desc_t){SDPA_QUANT_PER_TENSOR, SDPA_DTYPE_F16,
                                                        SDPA_QUANT_NONE, 0, 0};
        }
        sdpa_xe_target_t t;
        ck_assert_msg(d->serves(&p, &s, &dev, &t, NULL), "%s", what);
        for (int emulate = 0; emulate < 2; emulate++) {
            t.emulate = emulate;
            ck_assert_msg(d->xe->check(row + d->xe->config_offset, &t, &dev, c->head_size, what) ==
                                  SDPA_SUCCESS,
                          "%s: %s", what, sdpa_error_message());
        }
        char expected[128], cfg[XE_PLAN_STRING];
        snprintf(expected, sizeof(expected), "(xe table: %s)", what);
        for (int mode = 0; mode < d->modes; mode++) {
            p.deterministic = mode;
            ck_assert_msg(d->plan(&p, &s, &dev, cfg, sizeof(cfg)), "%s: %s", what, cfg);
            ck_assert_msg(strstr(cfg, expected), "%s is not chosen: %s", what, cfg);
        }
    }
}

/* The suite's direction and devices, for the tests below. */
static const xe_suite_direction_t *suite_direction;
static const xe_devices_t *suite_devices;

START_TEST(llm_features_take_the_portable_kernels)
{
    assert_unimplemented_features(suite_direction, suite_devices);
}
END_TEST

START_TEST(every_row_is_selectable)
{
    assert_every_row_selectable(suite_direction);
}
END_TEST

int xe_run_suite(const test_suite_t *desc, const test_entry_t *table, size_t count,
                 const xe_suite_direction_t *d, const xe_devices_t *devices)
{
    suite_direction = d;
    suite_devices = devices;
    TCase *t;
    Suite *s = test_suite_of(desc, table, count, &t);
    tcase_add_test(t, llm_features_take_the_portable_kernels);
    tcase_add_test(t, every_row_is_selectable);
    return test_run_suite(s);
}
