/*
 * test_merge.c - the merge kernel (spirv/portable/sdpa_merge.cl) on the device
 * against the independent oracle of tests/abi/merge_case.c, with f32
 * tolerances: every variant the ref suite runs, the -inf / NaN rules, in
 * place, states from ze forward executions over chunks of the keys against
 * one ref execution over all of them, the refusals of the shared table,
 * and the number of modules all this builds.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi_util.h"
#include "merge_case.h"
#include "merge_checks.h"
#include "ze_env.h"

static const test_allocator_t shared_allocator = {suite_shared_alloc, suite_shared_release, NULL};

static void run_merge(merge_case_t *c)
{
    const merge_backend_t ze = {suite_env.ze, suite_env.ze_ctx};
    merge_run(&ze, c);
}

START_TEST(test_merge_variant)
{
    const merge_backend_t ze = {suite_env.ze, suite_env.ze_ctx};
    merge_variant_check(&ze, _i, &shared_allocator, 0);
}
END_TEST

/* NaN and +inf LSEs poison their rows; both softmax modes for rows where no
 * state saw a key (the f32 variant modules, two states). */
START_TEST(test_merge_poison)
{
    merge_case_t c;
    merge_desc_init(&c.desc, 3, 1, 2, 33, 8, SDPA_DTYPE_F32, SDPA_DTYPE_F32, 1,
                    (sdpa_softmax_kind_t)_i, MERGE_DENSE);
    ck_assert_int_eq(merge_case_alloc(&c, 77, &shared_allocator, MERGE_LSE_POISON), 0);
    run_merge(&c);
    ck_assert(merge_compare(&c, 0));
    const float *lse = c.args.dst_lse;
    ck_assert(isnan(lse[5]) && isnan(lse[16]) && lse[3] == -INFINITY); /* NaN, +inf, none */
    merge_case_free(&c);
}
END_TEST

/* (O, LSE) = merge((O, LSE), ...): dst and dst_lse are a state's buffers. */
START_TEST(test_merge_in_place)
{
    const merge_backend_t ze = {suite_env.ze, suite_env.ze_ctx};
    merge_in_place_check(&ze, (merge_layout_t)_i, &shared_allocator, 0);
}
END_TEST

/* Forward executions on ze over 3 chunks of the keys (one of a single key),
 * merged on ze, against one ref execution over all keys. */
START_TEST(test_merge_forward_chunks)
{
    const merge_backend_t ze = {suite_env.ze, suite_env.ze_ctx};
    const merge_backend_t ref = {suite_env.ref, suite_env.ref_ctx};
    const int64_t bounds[] = {0, 1, 17, 40};
    merge_forward_chunks_check(&ze, &ze, &ref, bounds, 3, &shared_allocator, 0);
}
END_TEST

START_TEST(test_merge_invalid_desc)
{
    merge_invalid_desc_check(_i, suite_env.ze, suite_env.ze_ctx);
}
END_TEST

START_TEST(test_merge_invalid_args)
{
    merge_invalid_args_check(_i, suite_env.ze, suite_env.ze_ctx, &shared_allocator);
}
END_TEST

START_TEST(test_merge_kinds)
{
    merge_kinds_check(suite_env.ze, suite_env.ze_ctx, &shared_allocator);
}
END_TEST

/* One module per (states, state dtype, dst dtype, LSE written, softmax
 * mode), whatever the shapes and layouts: the 9 variants, 2 for poison (n =
 * 3 f32 in both modes; the chunks' merge shares one), 1 for the refusals'
 * valid merge (the kinds check shares it), 1 for in place with 3 states
 * (with 2 it shares variant 1's), and 2 forward modules (the chunks', the
 * kinds check's). */
START_TEST(test_merge_module_count)
{
    ck_assert_uint_eq(test_modules_built(&suite_env), MERGE_VARIANTS + 4 + 2);
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_LOOP(test_merge_variant, MERGE_VARIANTS),
            TEST_LOOP(test_merge_poison, 2),
            TEST_LOOP(test_merge_in_place, 2),
            TEST_ONCE(test_merge_forward_chunks),
            TEST_LOOP(test_merge_invalid_desc, merge_invalid_desc_count()),
            TEST_LOOP(test_merge_invalid_args, merge_invalid_args_count()),
            TEST_ONCE(test_merge_kinds),
            TEST_ONCE(test_merge_module_count),
    };
    return test_env_run_table("merge on ze", 600, tests, TEST_COUNT(tests));
}
