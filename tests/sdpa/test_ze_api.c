/*
 * test_ze_api.c - the ze backend as a framework uses it: the module cache,
 * the features it reports, launches on the caller's command lists with
 * events and fences, concurrent executions, 64-bit offsets, a context
 * destroyed before its primitives, and the table of invalid problems every
 * backend must refuse the same way.
 */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi_util.h"
#include "fwd_case.h"
#include "invalid_table.h"
#include "problem.h"
#include "ze_env.h"

static sdpa_primitive_t *create(const sdpa_problem_desc_t *p)
{
    sdpa_primitive_t *prim = NULL;
    sdpa_status_t st = suite_env.ze->primitive_create(suite_env.ze_ctx, p, &prim);
    ck_assert_msg(st == SDPA_SUCCESS, "primitive_create: %s", suite_env.ze->last_error());
    return prim;
}

/* --- the module cache --------------------------------------------------------- */

START_TEST(module_cache_reuses_modules)
{
    fwd_case_t c;
    fwd_case_init_typed(&c, SDPA_DTYPE_F16, 1, 2, 2, 37, 50, 64);
    sdpa_problem_desc_t p;
    fwd_case_problem(&c, &p);

    uint64_t before = test_modules_built(&suite_env);
    sdpa_primitive_t *first = create(&p);
    uint64_t after_first = test_modules_built(&suite_env);
    ck_assert_uint_le(after_first, before + 1);

    /* The same problem, and one that differs only in sizes the kernel takes
     * as arguments (batch, heads, keys), build nothing. Keys stay within
     * the same configuration row (the CPU's head-size-64 rows change tile
     * past 256 keys). */
    sdpa_primitive_t *same = create(&p);
    fwd_case_t c2 = c;
    c2.batch = 3;
    c2.q_heads = c2.kv_heads = 5;
    c2.k_len = 250;
    sdpa_problem_desc_t p2;
    fwd_case_problem(&c2, &p2);
    sdpa_primitive_t *resized = create(&p2);
    ck_assert_uint_eq(test_modules_built(&suite_env), after_first);

    /* Another dtype is another module. */
    fwd_case_t c3 = c;
    c3.q_dtype = c3.k_dtype = c3.v_dtype = SDPA_DTYPE_BF16;
    sdpa_problem_desc_t p3;
    fwd_case_problem(&c3, &p3);
    sdpa_primitive_t *other = create(&p3);
    ck_assert_uint_eq(test_modules_built(&suite_env), after_first + 1);
    printf("module cache: %llu module(s) for 4 primitives, 3 sharing one\n",
           (unsigned long long)(test_modules_built(&suite_env) - before));

    /* The tests run with the persistent cache off (SDPA_CACHE=0, run_env.am):
     * every module was built, none looked up on disk. */
    uint64_t hits = 99, misses = 99;
    ck_assert_int_eq(suite_env.ze->context_query(suite_env.ze_ctx, SDPA_QUERY_MODULE_CACHE_HITS,
                                                 &hits, sizeof(hits)),
                     SDPA_SUCCESS);
    ck_assert_int_eq(suite_env.ze->context_query(suite_env.ze_ctx,
                                                 SDPA_QUERY_MODULE_CACHE_MISSES, &misses,
                                                 sizeof(misses)),
                     SDPA_SUCCESS);
    ck_assert_uint_eq(hits, 0);
    ck_assert_uint_eq(misses, 0);

    suite_env.ze->primitive_destroy(other);
    suite_env.ze->primitive_destroy(resized);
    suite_env.ze->primitive_destroy(same);
    suite_env.ze->primitive_destroy(first);
}
END_TEST

/* --- features and queries ----------------------------------------------------- */

START_TEST(features_describe_the_device)
{
    sdpa_features_t f = {.struct_size = sizeof(f), .struct_version = SDPA_FEATURES_VERSION};
    ck_assert_int_eq(suite_env.ze->context_get_features(suite_env.ze_ctx, &f), SDPA_SUCCESS);
    ck_assert_str_eq(f.device_name, suite_env.device_props.name);
    ck_assert_uint_eq(f.max_head_size, 576);
    ck_assert_uint_gt(f.subgroup_size, 0);
    ck_assert_uint_eq(f.has_bf16, 1);
    printf("ze features: %s, sub-group %u, f16 %u\n", f.device_name, f.subgroup_size, f.has_f16);

    fwd_case_t c;
    fwd_case_init(&c, 2, 4, 2, 37, 50, 64);
    c.training = 1;
    sdpa_problem_desc_t p;
    fwd_case_problem(&c, &p);
    sdpa_primitive_t *prim = create(&p);
    size_t ws = 0, scratch = 1;
    ck_assert_int_eq(
            suite_env.ze->primitive_query(prim, SDPA_QUERY_WORKSPACE_BYTES, &ws, sizeof(ws)),
            SDPA_SUCCESS);
    ck_assert_uint_eq(ws, 2 * 4 * 37 * sizeof(float));
    ck_assert_int_eq(suite_env.ze->primitive_query(prim, SDPA_QUERY_SCRATCH_BYTES, &scratch,
                                                   sizeof(scratch)),
                     SDPA_SUCCESS);
    ck_assert_uint_eq(scratch, 0);
    char config[256];
    ck_assert_int_eq(
            suite_env.ze->primitive_query(prim, SDPA_QUERY_CONFIG_STRING, config, sizeof(config)),
            SDPA_SUCCESS);
    ck_assert_msg(strstr(config, "fwd d64") != NULL, "config string: %s", config);
    printf("config: %s\n", config);
    suite_env.ze->primitive_destroy(prim);
}
END_TEST

/* --- the caller's command lists, events and fences ----------------------------- */

/* A dense f16 problem with buffers, its expected output from ref. */
typedef struct launch_fixture {
    fwd_case_t c;
    sdpa_problem_desc_t p;
    test_tensor_t q, k, v, dst, expected;
    sdpa_primitive_t *prim;
} launch_fixture_t;

static void fixture_args(const launch_fixture_t *f, sdpa_exec_args_t *a)
{
    const test_tensor_t *t[ROLE_COUNT] = {&f->q, &f->k, &f->v, &f->dst};
    attention_exec_args(t, NULL, 0.125f, a);
}

/* Executes prim (f's or one of another context) on f's buffers: appended
 * to list (NULL: the context's), after *wait (NULL: nothing) and
 * signalling signal (NULL: none). Asserts success. */
static void fixture_execute(const launch_fixture_t *f, sdpa_primitive_t *prim,
                            ze_command_list_handle_t list, ze_event_handle_t *wait,
                            ze_event_handle_t signal)
{
    sdpa_exec_args_t a;
    fixture_args(f, &a);
    a.command_list = list;
    a.num_wait_events = wait != NULL;
    a.wait_events = wait;
    a.signal_event = signal;
    ck_assert_int_eq(suite_env.ze->primitive_execute(prim, &a), SDPA_SUCCESS);
}

static void fixture_open(launch_fixture_t *f, uint64_t seed)
{
    memset(f, 0, sizeof(*f));
    fwd_case_init(&f->c, 1, 4, 2, 45, 77, 64);
    f->c.q_dtype = f->c.k_dtype = f->c.v_dtype = SDPA_DTYPE_F16;
    f->c.mask_kind = SDPA_MASK_CAUSAL_BOTTOM_RIGHT;
    fwd_case_problem(&f->c, &f->p);
    test_rng_t rng = {seed};
    tensor_alloc(&suite_env, &f->q, &f->p.q);
    tensor_alloc(&suite_env, &f->k, &f->p.k);
    tensor_alloc(&suite_env, &f->v, &f->p.v);
    tensor_alloc(&suite_env, &f->dst, &f->p.dst);
    tensor_alloc(&suite_env, &f->expected, &f->p.dst);
    tensor_fill_uniform(&f->q, &rng, -1, 1);
    tensor_fill_uniform(&f->k, &rng, -1, 1);
    tensor_fill_uniform(&f->v, &rng, -1, 1);
    f->prim = create(&f->p);

    sdpa_primitive_t *ref = NULL;
    ck_assert_int_eq(suite_env.ref->primitive_create(suite_env.ref_ctx, &f->p, &ref), SDPA_SUCCESS);
    sdpa_exec_args_t a;
    fixture_args(f, &a);
    a.dst = f->expected.data;
    ck_assert_int_eq(suite_env.ref->primitive_execute(ref, &a), SDPA_SUCCESS);
    suite_env.ref->primitive_destroy(ref);
}

static void fixture_check(const launch_fixture_t *f, void *dst, const char *what)
{
    compare_result_t r;
    tensor_compare(&f->p.dst, dst, f->expected.data, 1e-4, 1.0, &r);
    ck_assert_msg(r.bad == 0, "%s: %lld of %lld elements differ from ref (ze %g, ref %g)", what,
                  (long long)r.bad, (long long)r.checked, r.worst_got, r.worst_want);
}

static void fixture_close(launch_fixture_t *f)
{
    suite_env.ze->primitive_destroy(f->prim);
    tensor_free(&suite_env, &f->q);
    tensor_free(&suite_env, &f->k);
    tensor_free(&suite_env, &f->v);
    tensor_free(&suite_env, &f->dst);
    tensor_free(&suite_env, &f->expected);
}

START_TEST(regular_list_queue_and_fence)
{
    launch_fixture_t f;
    fixture_open(&f, 11);
    ze_command_queue_handle_t queue;
    ze_command_list_handle_t list;
    test_env_queue_and_list(&queue, &list);
    ze_fence_desc_t fdesc = {.stype = ZE_STRUCTURE_TYPE_FENCE_DESC};
    ze_fence_handle_t fence;
    ck_assert_int_eq(zeFenceCreate(queue, &fdesc, &fence), ZE_RESULT_SUCCESS);

    fixture_execute(&f, f.prim, list, NULL, NULL);
    /* Appending ran nothing: O still holds the 0xff fill. */
    ck_assert_uint_eq(((const uint16_t *)f.dst.data)[0], 0xffff);
    ck_assert_int_eq(zeCommandListClose(list), ZE_RESULT_SUCCESS);
    ck_assert_int_eq(zeCommandQueueExecuteCommandLists(queue, 1, &list, fence), ZE_RESULT_SUCCESS);
    ck_assert_int_eq(zeFenceHostSynchronize(fence, UINT64_MAX), ZE_RESULT_SUCCESS);
    fixture_check(&f, f.dst.data, "regular list");

    zeFenceDestroy(fence);
    zeCommandListDestroy(list);
    zeCommandQueueDestroy(queue);
    fixture_close(&f);
}
END_TEST

START_TEST(async_immediate_list_with_events)
{
    launch_fixture_t f;
    fixture_open(&f, 12);
    ze_command_list_handle_t list = test_env_async_list();
    ze_event_pool_desc_t pdesc = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
                                  .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
                                  .count = 2};
    ze_event_pool_handle_t pool;
    ck_assert_int_eq(zeEventPoolCreate(suite_env.context, &pdesc, 1, &suite_env.device, &pool),
                     ZE_RESULT_SUCCESS);
    ze_event_handle_t go, done;
    ze_event_desc_t e0 = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC,
                          .index = 0,
                          .signal = ZE_EVENT_SCOPE_FLAG_HOST,
                          .wait = ZE_EVENT_SCOPE_FLAG_HOST};
    ze_event_desc_t e1 = e0;
    e1.index = 1;
    ck_assert_int_eq(zeEventCreate(pool, &e0, &go), ZE_RESULT_SUCCESS);
    ck_assert_int_eq(zeEventCreate(pool, &e1, &done), ZE_RESULT_SUCCESS);

    fixture_execute(&f, f.prim, list, &go, done);
    /* The launch waits for the host. */
    ck_assert_int_eq(zeEventHostSynchronize(done, 50u * 1000 * 1000), ZE_RESULT_NOT_READY);
    ck_assert_int_eq(zeEventHostSignal(go), ZE_RESULT_SUCCESS);
    ck_assert_int_eq(zeEventHostSynchronize(done, UINT64_MAX), ZE_RESULT_SUCCESS);
    fixture_check(&f, f.dst.data, "asynchronous immediate list");

    zeEventDestroy(done);
    zeEventDestroy(go);
    zeEventPoolDestroy(pool);
    zeCommandListDestroy(list);
    fixture_close(&f);
}
END_TEST

START_TEST(context_with_the_callers_list)
{
    launch_fixture_t f;
    fixture_open(&f, 13);
    ze_command_list_handle_t list = test_env_sync_list();
    sdpa_context_desc_t desc = test_env_context_desc(&suite_env);
    desc.command_list = list;
    sdpa_context_t *ctx;
    ck_assert_int_eq(suite_env.ze->context_create(&desc, &ctx), SDPA_SUCCESS);
    sdpa_primitive_t *prim;
    ck_assert_int_eq(suite_env.ze->primitive_create(ctx, &f.p, &prim), SDPA_SUCCESS);
    fixture_execute(&f, prim, NULL, NULL, NULL);
    fixture_check(&f, f.dst.data, "context bound to the caller's list");
    suite_env.ze->primitive_destroy(prim);
    suite_env.ze->context_destroy(ctx);
    zeCommandListDestroy(list);
    fixture_close(&f);
}
END_TEST

/* --- one primitive, several threads ------------------------------------------- */

typedef struct thread_job {
    launch_fixture_t *f;
    void *dst;
    ze_command_list_handle_t list;
    sdpa_status_t status;
} thread_job_t;

static void *execute_in_thread(void *arg)
{
    thread_job_t *job = arg;
    for (int i = 0; i < 8 && job->status == SDPA_SUCCESS; i++) {
        sdpa_exec_args_t a;
        fixture_args(job->f, &a);
        a.dst = job->dst;
        a.command_list = job->list;
        job->status = suite_env.ze->primitive_execute(job->f->prim, &a);
    }
    return NULL;
}

START_TEST(concurrent_executions)
{
    enum { THREADS = 4 };
    launch_fixture_t f;
    fixture_open(&f, 14);
    thread_job_t jobs[THREADS];
    pthread_t threads[THREADS];
    for (int t = 0; t < THREADS; t++) {
        jobs[t].f = &f;
        jobs[t].dst = test_alloc(&suite_env, f.dst.bytes);
        jobs[t].status = SDPA_SUCCESS;
        jobs[t].list = test_env_sync_list();
    }
    for (int t = 0; t < THREADS; t++)
        ck_assert_int_eq(pthread_create(&threads[t], NULL, execute_in_thread, &jobs[t]), 0);
    for (int t = 0; t < THREADS; t++)
        pthread_join(threads[t], NULL);
    for (int t = 0; t < THREADS; t++) {
        ck_assert_int_eq(jobs[t].status, SDPA_SUCCESS);
        fixture_check(&f, jobs[t].dst, "concurrent execution");
        zeCommandListDestroy(jobs[t].list);
        test_free(&suite_env, jobs[t].dst);
    }
    fixture_close(&f);
}
END_TEST

/* --- 64-bit offsets ------------------------------------------------------------ */

START_TEST(offsets_beyond_2_pow_31)
{
    /* Batch 1 of every tensor starts 2^31 + 64 elements after batch 0. */
    fwd_case_t c;
    fwd_case_init_typed(&c, SDPA_DTYPE_F16, 2, 2, 1, 19, 45, 32);
    c.huge_batch_stride = 1;
    double worst = fwd_case_run(&suite_env, &c, 21);
    printf("offsets beyond 2^31 elements: worst error/tolerance %.3f\n", worst);
}
END_TEST

/* --- lifetime ------------------------------------------------------------------ */

/* A framework that destroys the context before its primitives (sdpa.h,
 * "Lifetime"): context_destroy releases every Level Zero object the
 * primitives held, so the caller's zeContextDestroy succeeds; the orphans
 * refuse to execute, still answer queries, and primitive_destroy frees them
 * without touching Level Zero (whose context is gone by then). */
/* SDPA_ZE_FLOAT_ATOMICS at context creation: a bad value is refused with
 * its name and value; "native" gives a backward the -fadd variant where the
 * device reports the add (the CPU device does), "cas" the compare-and-swap
 * one, "auto" the compare-and-swap one on the CPU device. */
START_TEST(float_atomics_variable)
{
    const sdpa_backend_iface_t *ze = suite_env.ze;
    ze_float_atomic_ext_properties_t atomics = {
            .stype = ZE_STRUCTURE_TYPE_FLOAT_ATOMIC_EXT_PROPERTIES};
    ze_device_module_properties_t module = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES,
                                            .pNext = &atomics};
    ze_device_properties_t props = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
    ck_assert_int_eq(zeDeviceGetModuleProperties(suite_env.device, &module), ZE_RESULT_SUCCESS);
    ck_assert_int_eq(zeDeviceGetProperties(suite_env.device, &props), ZE_RESULT_SUCCESS);
    const int has = (atomics.fp32Flags & ZE_DEVICE_FP_ATOMIC_EXT_FLAG_GLOBAL_ADD) != 0;
    /* "auto" on a GPU depends on its class (sdpa_device_native_f32_add): unchecked. */
    const int cpu = props.type == ZE_DEVICE_TYPE_CPU;
    const int expected[] = {has, 0, cpu ? 0 : -1};
    const sdpa_context_desc_t desc = test_env_context_desc(&suite_env);
    const char *saved = getenv("SDPA_ZE_FLOAT_ATOMICS");
    char *old = saved ? strdup(saved) : NULL;
    sdpa_context_t *ctx = NULL;
    setenv("SDPA_ZE_FLOAT_ATOMICS", "fast", 1);
    ck_assert_int_eq(ze->context_create(&desc, &ctx), SDPA_ERROR_INVALID_CONFIG);
    ck_assert_ptr_nonnull(strstr(ze->last_error(), "SDPA_ZE_FLOAT_ATOMICS = \"fast\""));

    static const char *const values[] = {"native", "cas", "auto"};
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        setenv("SDPA_ZE_FLOAT_ATOMICS", values[i], 1);
        ck_assert_int_eq(ze->context_create(&desc, &ctx), SDPA_SUCCESS);
        sdpa_problem_desc_t bwd;
        problem_init(&bwd, SDPA_BACKWARD, 1, 2, 2, 8, 8, 32, SDPA_DTYPE_F32, SDPA_DTYPE_F32);
        sdpa_primitive_t *prim;
        ck_assert_int_eq(ze->primitive_create(ctx, &bwd, &prim), SDPA_SUCCESS);
        char config[256] = "";
        ck_assert_int_eq(ze->primitive_query(prim, SDPA_QUERY_CONFIG_STRING, config,
                                             sizeof(config)),
                         SDPA_SUCCESS);
        ck_assert_msg(expected[i] < 0 || (strstr(config, "fadd") != NULL) == expected[i],
                      "%s: %s", values[i], config);
        ze->primitive_destroy(prim);
        ze->context_destroy(ctx);
    }
    if (old)
        setenv("SDPA_ZE_FLOAT_ATOMICS", old, 1);
    else
        unsetenv("SDPA_ZE_FLOAT_ATOMICS");
    free(old);
}
END_TEST

START_TEST(context_destroyed_before_its_primitives)
{
    ze_context_desc_t zdesc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    ze_context_handle_t zctx;
    ck_assert_int_eq(zeContextCreate(suite_env.driver, &zdesc, &zctx), ZE_RESULT_SUCCESS);
    sdpa_context_desc_t desc = test_env_context_desc(&suite_env);
    desc.ze_context = zctx;
    const sdpa_backend_iface_t *ze = suite_env.ze;
    sdpa_context_t *ctx;
    ck_assert_int_eq(ze->context_create(&desc, &ctx), SDPA_SUCCESS);
    /* A forward (a kernel) and a backward (four kernels, host memory). */
    sdpa_problem_desc_t fwd, bwd;
    problem_init(&fwd, SDPA_FORWARD_TRAINING, 1, 2, 2, 8, 8, 32, SDPA_DTYPE_F32, SDPA_DTYPE_F32);
    problem_init(&bwd, SDPA_BACKWARD, 1, 2, 2, 8, 8, 32, SDPA_DTYPE_F32, SDPA_DTYPE_F32);
    sdpa_primitive_t *prims[2];
    ck_assert_int_eq(ze->primitive_create(ctx, &fwd, &prims[0]), SDPA_SUCCESS);
    ck_assert_int_eq(ze->primitive_create(ctx, &bwd, &prims[1]), SDPA_SUCCESS);

    ze->context_destroy(ctx);
    ck_assert_int_eq(zeContextDestroy(zctx), ZE_RESULT_SUCCESS);

    sdpa_exec_args_t a = {.struct_size = sizeof(a), .struct_version = SDPA_EXEC_ARGS_VERSION};
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(ze->primitive_execute(prims[i], &a), SDPA_ERROR_INVALID_ARGUMENT);
        ck_assert_msg(strstr(ze->last_error(), "outlived its context") != NULL, "%s",
                      ze->last_error());
        size_t workspace = 0;
        ck_assert_int_eq(ze->primitive_query(prims[i], SDPA_QUERY_WORKSPACE_BYTES, &workspace,
                                             sizeof(workspace)),
                         SDPA_SUCCESS);
        ck_assert_uint_eq(workspace, 2 * 8 * sizeof(float));
        ze->primitive_destroy(prims[i]);
    }
}
END_TEST

static const test_allocator_t shared_allocator = {suite_shared_alloc, suite_shared_release, NULL};
static invalid_env_t invalid_env;

int main(void)
{
    Suite *s = suite_create("ze api");
    TCase *t = tcase_create("api");
    tcase_add_unchecked_fixture(t, test_env_fixture, NULL);
    tcase_set_timeout(t, 1800);
    tcase_add_test(t, module_cache_reuses_modules);
    tcase_add_test(t, features_describe_the_device);
    tcase_add_test(t, regular_list_queue_and_fence);
    tcase_add_test(t, async_immediate_list_with_events);
    tcase_add_test(t, context_with_the_callers_list);
    tcase_add_test(t, concurrent_executions);
    tcase_add_test(t, offsets_beyond_2_pow_31);
    tcase_add_test(t, context_destroyed_before_its_primitives);
    tcase_add_test(t, float_atomics_variable);
    suite_add_tcase(s, t);

    /* The invalid-problem table, through ze, on this context's device (no
     * Check assertion may run outside a test: open the environment here). */
    if (test_env_open_suite() != 0)
        return EXIT_FAILURE;
    invalid_env.context_desc = test_env_context_desc(&suite_env);
    invalid_env.allocator = &shared_allocator;
    suite_add_tcase(s, invalid_table_tcase("ze", &invalid_env));

    return test_env_run_suite(s);
}
