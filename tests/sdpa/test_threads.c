/*
 * test_threads.c - every concurrency pattern sdpa.h documents, under load:
 * 8 threads, hundreds of executions each, every result bit-for-bit equal to
 * the same problem executed alone (which is itself checked against ref).
 *
 * Patterns (sdpa.h, "Threads"):
 *   - one primitive shared by every thread, each on its own command list;
 *   - a primitive per thread (mixed shapes) on the context's default list;
 *   - a primitive per thread on its own asynchronous immediate list, several
 *     executions appended before each wait;
 *   - backward with the context's scratch, a primitive per thread (mixed
 *     shapes), half the threads on their own lists and half on the default
 *     list, and one backward primitive shared by every thread.
 *
 * Shapes are tiny so that the launches, not the arithmetic, dominate: what
 * is stressed is the backend's bookkeeping. STRESS_ITERATIONS in the
 * environment overrides the executions per thread (default 1000 forward,
 * 500 backward).
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "small_problem.h"

#define THREADS 8
#define SHAPES 3
#define BURST 4 /* executions appended per wait on an asynchronous list */

/* A problem, and its outputs computed by ze alone (checked against ref). */
typedef struct stress_problem {
    small_problem_t sp;
    test_tensor_t alone[SMALL_OUTPUTS];
} stress_problem_t;

static stress_problem_t fwd_problems[SHAPES], bwd_problems[SHAPES];

/* Shape i: mixed sizes, dtypes and masks, GQA in backward (so that the
 * deterministic backward needs scratch for its dK/dV partials). */
static void stress_desc(int backward, int i, sdpa_problem_desc_t *p)
{
    static const int64_t sq[SHAPES] = {16, 9, 24}, sk[SHAPES] = {24, 33, 17},
                         d[SHAPES] = {32, 64, 16}, hq[SHAPES] = {2, 4, 2};
    static const sdpa_dtype_t dt[SHAPES] = {SDPA_DTYPE_F32, SDPA_DTYPE_F16, SDPA_DTYPE_F32};
    memset(p, 0, sizeof(*p));
    p->struct_size = sizeof(*p);
    p->struct_version = SDPA_PROBLEM_DESC_VERSION;
    p->prop_kind = backward ? SDPA_BACKWARD : SDPA_FORWARD_INFERENCE;
    p->q = small_dense(dt[i], 1, hq[i], sq[i], d[i]);
    p->k = p->v = small_dense(dt[i], 1, 1, sk[i], d[i]);
    p->dst = p->q;
    p->mask_kind = i == 1 ? SDPA_MASK_CAUSAL_BOTTOM_RIGHT : SDPA_MASK_NONE;
    p->scale_kind = SDPA_SCALE_HOST;
    if (backward) {
        p->diff_dst = p->diff_q = p->q;
        p->diff_k = p->diff_v = p->k;
        p->deterministic = 1; /* bit-identical by contract */
    }
}

/* Inputs and ref's outputs, then ze's outputs alone, which must agree with
 * ref (f32 sums: a few units of 2^-24 per term, far below 1e-4 here). */
static void stress_problem_open(stress_problem_t *st, int backward, int i)
{
    sdpa_problem_desc_t p;
    stress_desc(backward, i, &p);
    small_problem_open(&st->sp, &p, 1234 + 17 * (uint64_t)i + (uint64_t)backward);
    small_outputs_alloc(&st->sp, st->alone);
    sdpa_exec_args_t a;
    small_problem_args(&st->sp, st->alone, &a);
    sdpa_primitive_t *prim = NULL;
    ck_assert_msg(suite_env.ze->primitive_create(suite_env.ze_ctx, &p, &prim) == SDPA_SUCCESS, "%s",
                  suite_env.ze->last_error());
    ck_assert_msg(suite_env.ze->primitive_execute(prim, &a) == SDPA_SUCCESS, "%s",
                  suite_env.ze->last_error());
    suite_env.ze->primitive_destroy(prim);
    char why[256];
    ck_assert_msg(small_outputs_match_ref(&st->sp, st->alone, 1e-4, 4.0, why, sizeof(why)),
                  "shape %d alone: %s", i, why);
}

static void stress_problem_close(stress_problem_t *st)
{
    small_outputs_free(&st->sp, st->alone);
    small_problem_close(&st->sp);
}

/* ------------------------------------------------------------------------- */
/* Threads                                                                   */
/* ------------------------------------------------------------------------- */

typedef enum list_kind {
    LIST_DEFAULT,   /* the context's (synchronous) list */
    LIST_OWN_SYNC,  /* a synchronous immediate list per thread */
    LIST_OWN_ASYNC, /* an asynchronous immediate list per thread, BURST appends per wait */
    LIST_HALF_HALF, /* even threads the default list, odd ones their own */
} list_kind_t;

typedef struct pattern {
    const char *name;
    int backward;
    int shared_primitive;
    list_kind_t lists;
} pattern_t;

typedef struct worker {
    const pattern_t *pattern;
    int index, iterations;
    stress_problem_t *st;
    sdpa_primitive_t *prim;
    test_tensor_t out[SMALL_OUTPUTS];
    ze_command_list_handle_t list; /* NULL: the context's */
    ze_event_pool_handle_t pool;
    ze_event_handle_t done;
    /* Results, read by the main thread after the join. */
    int executed, mismatches;
    sdpa_status_t status;
    char error[512];
} worker_t;

static int uses_own_list(const pattern_t *pt, int index)
{
    return pt->lists == LIST_OWN_SYNC || pt->lists == LIST_OWN_ASYNC ||
           (pt->lists == LIST_HALF_HALF && index % 2 == 1);
}

static void worker_open_list(worker_t *w)
{
    if (!uses_own_list(w->pattern, w->index))
        return;
    int async = w->pattern->lists == LIST_OWN_ASYNC;
    w->list = async ? test_env_async_list() : test_env_sync_list();
    if (!async)
        return;
    ze_event_pool_desc_t pd = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
                               .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
                               .count = 1};
    ck_assert_int_eq(zeEventPoolCreate(suite_env.context, &pd, 1, &suite_env.device, &w->pool),
                     ZE_RESULT_SUCCESS);
    ze_event_desc_t ed = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC,
                          .signal = ZE_EVENT_SCOPE_FLAG_HOST,
                          .wait = ZE_EVENT_SCOPE_FLAG_HOST};
    ck_assert_int_eq(zeEventCreate(w->pool, &ed, &w->done), ZE_RESULT_SUCCESS);
}

static void worker_close(worker_t *w)
{
    if (w->done)
        zeEventDestroy(w->done);
    if (w->pool)
        zeEventPoolDestroy(w->pool);
    if (w->list)
        zeCommandListDestroy(w->list);
    small_outputs_free(&w->st->sp, w->out);
}

static void record_failure(worker_t *w, sdpa_status_t status, const char *what)
{
    w->status = status;
    snprintf(w->error, sizeof(w->error), "%s: %s", what, suite_env.ze->last_error());
}

static void *worker_run(void *arg)
{
    worker_t *w = arg;
    int async = w->pattern->lists == LIST_OWN_ASYNC;
    for (int i = 0; i < w->iterations && w->status == SDPA_SUCCESS;) {
        /* Poison the outputs: a skipped or partial execution cannot pass. */
        small_outputs_poison(&w->st->sp, w->out);
        int appends = async ? BURST : 1;
        for (int b = 0; b < appends && w->status == SDPA_SUCCESS; b++, i++) {
            sdpa_exec_args_t a;
            small_problem_args(&w->st->sp, w->out, &a);
            a.command_list = w->list;
            if (async && b == appends - 1)
                a.signal_event = w->done;
            sdpa_status_t st = suite_env.ze->primitive_execute(w->prim, &a);
            if (st != SDPA_SUCCESS)
                record_failure(w, st, "primitive_execute");
            else
                w->executed++;
        }
        if (w->status != SDPA_SUCCESS)
            break;
        if (async) {
            ze_result_t r = zeEventHostSynchronize(w->done, UINT64_MAX);
            if (r == ZE_RESULT_SUCCESS)
                r = zeEventHostReset(w->done);
            if (r != ZE_RESULT_SUCCESS) {
                w->status = SDPA_ERROR_DEVICE;
                snprintf(w->error, sizeof(w->error), "event: 0x%x", (unsigned)r);
                break;
            }
        }
        w->mismatches += !small_outputs_identical(&w->st->sp, w->out, w->st->alone);
    }
    return NULL;
}

static int iterations_for(const pattern_t *pt)
{
    const char *env = getenv("STRESS_ITERATIONS");
    int n = env && *env ? atoi(env) : (pt->backward ? 500 : 1000);
    return n < BURST ? BURST : n - n % BURST;
}

static uint64_t scratch_allocations(void)
{
    uint64_t n = 0;
    ck_assert_int_eq(suite_env.ze->context_query(suite_env.ze_ctx, SDPA_QUERY_SCRATCH_ALLOCATIONS,
                                                 &n, sizeof(n)),
                     SDPA_SUCCESS);
    return n;
}

static void run_pattern(const pattern_t *pt)
{
    stress_problem_t *problems = pt->backward ? bwd_problems : fwd_problems;
    worker_t workers[THREADS];
    pthread_t threads[THREADS];
    sdpa_primitive_t *shared = NULL;
    if (pt->shared_primitive)
        ck_assert_msg(suite_env.ze->primitive_create(suite_env.ze_ctx, &problems[0].sp.p,
                                                     &shared) == SDPA_SUCCESS,
                      "%s", suite_env.ze->last_error());
    int own_lists = 0;
    for (int t = 0; t < THREADS; t++) {
        worker_t *w = &workers[t];
        memset(w, 0, sizeof(*w));
        w->pattern = pt;
        w->index = t;
        w->iterations = iterations_for(pt);
        w->st = &problems[pt->shared_primitive ? 0 : t % SHAPES];
        w->prim = shared;
        if (!shared)
            ck_assert_msg(suite_env.ze->primitive_create(suite_env.ze_ctx, &w->st->sp.p,
                                                         &w->prim) == SDPA_SUCCESS,
                          "%s", suite_env.ze->last_error());
        small_outputs_alloc(&w->st->sp, w->out);
        worker_open_list(w);
        own_lists += w->list != NULL;
    }

    uint64_t allocations = scratch_allocations();
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int t = 0; t < THREADS; t++)
        ck_assert_int_eq(pthread_create(&threads[t], NULL, worker_run, &workers[t]), 0);
    for (int t = 0; t < THREADS; t++)
        pthread_join(threads[t], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    allocations = scratch_allocations() - allocations;

    int executed = 0, mismatches = 0;
    for (int t = 0; t < THREADS; t++) {
        worker_t *w = &workers[t];
        ck_assert_msg(w->status == SDPA_SUCCESS, "%s: thread %d after %d executions: %s (%s)",
                      pt->name, t, w->executed, sdpa_status_name(w->status), w->error);
        executed += w->executed;
        mismatches += w->mismatches;
    }
    double seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    printf("threads: %-58s %d x %d executions in %.2f s, %d results differ, %llu scratch "
           "allocations\n",
           pt->name, THREADS, workers[0].iterations, seconds, mismatches,
           (unsigned long long)allocations);
    ck_assert_msg(mismatches == 0, "%s: %d results differ from the single-threaded run", pt->name,
                  mismatches);
    ck_assert_int_eq(executed, THREADS * workers[0].iterations);
    /* The context's scratch grows per list (at most once per size here), never per
     * execution. */
    if (pt->backward)
        ck_assert_uint_le(allocations, 2 * (uint64_t)(own_lists + 1));

    for (int t = 0; t < THREADS; t++) {
        worker_close(&workers[t]);
        if (!shared)
            suite_env.ze->primitive_destroy(workers[t].prim);
    }
    suite_env.ze->primitive_destroy(shared);
}

static const pattern_t patterns[] = {
        {"forward, one primitive, a list per thread", 0, 1, LIST_OWN_SYNC},
        {"forward, a primitive per thread, the default list", 0, 0, LIST_DEFAULT},
        {"forward, a primitive per thread, async lists", 0, 0, LIST_OWN_ASYNC},
        {"backward, a primitive per thread, context scratch, mixed lists", 1, 0, LIST_HALF_HALF},
        {"backward, one primitive, context scratch, async lists", 1, 1, LIST_OWN_ASYNC},
};
#define PATTERNS ((int)(sizeof(patterns) / sizeof(patterns[0])))

static void problems_open(void)
{
    test_env_fixture();
    for (int i = 0; i < SHAPES; i++) {
        stress_problem_open(&fwd_problems[i], 0, i);
        stress_problem_open(&bwd_problems[i], 1, i);
    }
}

static void problems_close(void)
{
    for (int i = 0; i < SHAPES; i++) {
        stress_problem_close(&fwd_problems[i]);
        stress_problem_close(&bwd_problems[i]);
    }
}

START_TEST(pattern)
{
    run_pattern(&patterns[_i]);
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_LOOP(pattern, PATTERNS),
    };
    Suite *s = suite_create("threads");
    TCase *t = test_add_case(s, "patterns", 1800, tests, TEST_COUNT(tests));
    tcase_add_unchecked_fixture(t, problems_open, problems_close);
    return test_env_run_suite(s);
}
