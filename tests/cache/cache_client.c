/*
 * cache_client.c - one process of the persistent module cache's tests
 * (test_module_cache.c starts it with SDPA_CACHE* set): creates and runs
 * the primitives its arguments name on ze and on ref and checks their
 * results against ref, whether ze built its modules or loaded them, then
 * prints its context's counters on one line:
 *     counters built=B hits=H misses=M
 * Arguments: "fwd" (f16 forward, D 32), "fwd_bf16" (the same in bf16: another
 * module), "bwd" (f16 backward, D 32, GQA). Exit status 0 if every result
 * was right.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwd_case.h"
#include "fwd_case.h"
#include "ze_env.h"

static int arg_count;
static char **args;

static uint64_t counter(sdpa_query_t what)
{
    uint64_t value = 0;
    ck_assert_int_eq(suite_env.ze->context_query(suite_env.ze_ctx, what, &value, sizeof(value)),
                     SDPA_SUCCESS);
    return value;
}

START_TEST(run_the_named_primitives)
{
    for (int i = 0; i < arg_count; i++) {
        if (strcmp(args[i], "fwd") == 0 || strcmp(args[i], "fwd_bf16") == 0) {
            fwd_case_t c;
            fwd_case_init(&c, 1, 4, 2, 37, 50, 32);
            c.q_dtype = c.k_dtype = c.v_dtype =
                    strcmp(args[i], "fwd") == 0 ? SDPA_DTYPE_F16 : SDPA_DTYPE_BF16;
            c.mask_kind = SDPA_MASK_CAUSAL_BOTTOM_RIGHT;
            fwd_case_run(&suite_env, &c, 7);
        } else if (strcmp(args[i], "bwd") == 0) {
            bwd_case_t c;
            bwd_case_init(&c, 1, 4, 2, 29, 41, 32);
            c.fwd.q_dtype = c.fwd.k_dtype = c.fwd.v_dtype = SDPA_DTYPE_F16;
            bwd_case_run(&suite_env, &c, 11, 0);
        } else {
            ck_abort_msg("unknown primitive \"%s\" (fwd, fwd_bf16, bwd)", args[i]);
        }
    }
    printf("counters built=%llu hits=%llu misses=%llu\n",
           (unsigned long long)counter(SDPA_QUERY_MODULES_BUILT),
           (unsigned long long)counter(SDPA_QUERY_MODULE_CACHE_HITS),
           (unsigned long long)counter(SDPA_QUERY_MODULE_CACHE_MISSES));
    fflush(stdout);
}
END_TEST

int main(int argc, char **argv)
{
    arg_count = argc - 1;
    args = argv + 1;
    Suite *s = suite_create("cache_client");
    TCase *tc = tcase_create("client");
    tcase_add_unchecked_fixture(tc, test_env_fixture, NULL);
    tcase_add_test(tc, run_the_named_primitives);
    suite_add_tcase(s, tc);
    return test_env_run_suite(s);
}
