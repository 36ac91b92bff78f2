/* test_merge.c - merging attention states (sdpa.h ABI 1.1) on the ref
 * backend: every rule of sdpa_merge_desc_t against the independent oracle
 * of merge_case.c, in place, states from real forward executions against
 * one execution over all keys, and the table of refusals. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi_util.h"
#include "check_main.h"
#include "merge_case.h"
#include "merge_checks.h"
#include "ref_fixture.h"
#include "sdpa.h"

#define ck_assert_ok(call)                                                                         \
    do {                                                                                           \
        sdpa_status_t ok_status_ = (call);                                                         \
        ck_assert_msg(ok_status_ == SDPA_SUCCESS, "%s: %s: %s", #call,                             \
                      sdpa_status_name(ok_status_), ref_env.iface->last_error());                  \
    } while (0)

static void run_merge(merge_case_t *c)
{
    const merge_backend_t be = {ref_env.iface, ref_env.ctx};
    merge_run(&be, c);
}

START_TEST(test_merge_variant)
{
    const merge_backend_t be = {ref_env.iface, ref_env.ctx};
    merge_variant_check(&be, _i, NULL, 1);
}
END_TEST

/* The rules by name: a state that saw no key adds nothing (its O is NaN),
 * a row where none did is NaN or 0 with LSE -inf, a NaN or +inf LSE
 * poisons its row. */
START_TEST(test_merge_rules)
{
    for (int softmax = 0; softmax < 2; softmax++) {
        merge_case_t c;
        merge_desc_init(&c.desc, 3, 1, 2, 33, 8, SDPA_DTYPE_F32, SDPA_DTYPE_F32, 1,
                        (sdpa_softmax_kind_t)softmax, MERGE_DENSE);
        ck_assert_int_eq(merge_case_alloc(&c, 77, NULL, MERGE_LSE_POISON), 0);
        run_merge(&c);
        ck_assert(merge_compare(&c, 1));
        const float *lse = c.args.dst_lse, *o = c.args.dst;
        int empty = 0, poisoned = 0, partial = 0;
        for (int64_t row = 0; row < 2 * 33; row++) {
            if (merge_row_poisoned(row)) {
                ck_assert(isnan(lse[row]) && isnan(o[row * 8]));
                poisoned++;
            } else if (merge_row_all_empty(row)) {
                ck_assert(lse[row] == -INFINITY);
                ck_assert(softmax ? o[row * 8] == 0.0f : isnan(o[row * 8]));
                empty++;
            } else {
                ck_assert_msg(isfinite(lse[row]) && isfinite(o[row * 8]), "row %lld",
                              (long long)row);
                partial++;
            }
        }
        ck_assert(empty > 0 && poisoned > 0 && partial > 0);
        merge_case_free(&c);
    }
}
END_TEST

/* (O, LSE) = merge((O, LSE), ...): dst and dst_lse are a state's buffers. */
START_TEST(test_merge_in_place)
{
    const merge_backend_t be = {ref_env.iface, ref_env.ctx};
    merge_in_place_check(&be, (merge_layout_t)_i, NULL, 1);
}
END_TEST

/* States from real forward executions over 4 chunks of the keys (one of a
 * single key) merge into the O and log-sum-exp of one execution over all. */
START_TEST(test_merge_forward_chunks)
{
    const merge_backend_t be = {ref_env.iface, ref_env.ctx};
    const int64_t bounds[] = {0, 5, 6, 15, 23};
    merge_forward_chunks_check(&be, &be, &be, bounds, 4, NULL, 1);
}
END_TEST

START_TEST(test_merge_invalid_desc)
{
    merge_invalid_desc_check(_i, ref_env.iface, ref_env.ctx);
}
END_TEST

START_TEST(test_merge_invalid_args)
{
    merge_invalid_args_check(_i, ref_env.iface, ref_env.ctx, NULL);
}
END_TEST

START_TEST(test_merge_kinds)
{
    merge_kinds_check(ref_env.iface, ref_env.ctx, NULL);
}
END_TEST

/* A merge primitive outliving its context is an orphan like any other. */
START_TEST(test_merge_orphan)
{
    sdpa_context_t *own = NULL;
    sdpa_context_desc_t desc = {.struct_size = sizeof(desc),
                                .struct_version = SDPA_CONTEXT_DESC_VERSION};
    ck_assert_ok(ref_env.iface->context_create(&desc, &own));
    merge_case_t c;
    merge_desc_init(&c.desc, 2, 1, 1, 2, 4, SDPA_DTYPE_F32, SDPA_DTYPE_F32, 0,
                    SDPA_SOFTMAX_ACCURATE, MERGE_DENSE);
    ck_assert_int_eq(merge_case_alloc(&c, 2, NULL, MERGE_LSE_MIXED), 0);
    sdpa_primitive_t *prim = NULL;
    ck_assert_ok(ref_env.iface->merge_create(own, &c.desc, &prim));
    ref_env.iface->context_destroy(own);
    ck_assert_int_eq(ref_env.iface->merge_execute(prim, &c.args), SDPA_ERROR_INVALID_ARGUMENT);
    char config[64];
    ck_assert_ok(
            ref_env.iface->primitive_query(prim, SDPA_QUERY_CONFIG_STRING, config, sizeof(config)));
    ref_env.iface->primitive_destroy(prim);
    merge_case_free(&c);
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_LOOP(test_merge_variant, MERGE_VARIANTS),
            TEST_ONCE(test_merge_rules),
            TEST_LOOP(test_merge_in_place, 2),
            TEST_ONCE(test_merge_forward_chunks),
            TEST_LOOP(test_merge_invalid_desc, merge_invalid_desc_count()),
            TEST_LOOP(test_merge_invalid_args, merge_invalid_args_count()),
            TEST_ONCE(test_merge_kinds),
            TEST_ONCE(test_merge_orphan),
    };
    const test_suite_t suite = {.name = "merge", .open = ref_env_open, .close = ref_env_close};
    return test_run_table(&suite, tests, TEST_COUNT(tests));
}
