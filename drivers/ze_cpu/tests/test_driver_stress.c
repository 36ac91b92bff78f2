/*
 * test_driver_stress.c - the driver under threads (issue 9, driver side):
 * every pattern the driver promises is safe, run by 8 threads at once,
 * every result checked.
 *
 * 1. One kernel object shared by all threads: each sets its arguments and
 *    appends under a lock of its own (as Level Zero requires of the
 *    caller) to its own regular list, executes it on its own queue, and
 *    checks every launch got the arguments it captured, while the other
 *    threads' workers replay earlier captures of the same kernel. Lists
 *    and events are created and destroyed every round (registry churn).
 * 2. The same on immediate lists, synchronous and asynchronous.
 * 3. One closed list executed on 8 queues at once.
 * 4. A ring of events passed from thread to thread, by host signals and by
 *    appended signals on immediate lists.
 * 5. One immediate list (synchronous, then asynchronous) appended to by 8
 *    threads at once, each with a kernel object of its own and no lock:
 *    Level Zero forbids it, but a program that shares a list by mistake
 *    (issue 9: a library's default list) must get its launches, not a
 *    replay that reads a recording another thread is growing (the driver
 *    serializes appends per list).
 *
 * The kernel is spec_probe's many_args (45 arguments of every kind, each
 * weighted by its position in the sums it writes), so a launch that ran
 * with another launch's arguments gives the wrong sums. ZE_CPU_STRESS_SCALE
 * (default 1) multiplies the rounds, for long runs by hand.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_main.h"
#include "ze_test.h"

enum {
    THREADS = 8,
    LAUNCHES = 12,  /* launches per list */
    GROUP = 16,     /* work-items of a many_args group */
    OUT_LONGS = 8,  /* out[0..2] sums, out[3] the group's sum of in */
    NUM_LONGS = 14, /* arguments l0..l13, then i0..i13, f0..f13 */
    /* Rounds per pattern: about 30 s on a shared 2-core machine. */
    KERNEL_ROUNDS = 700,
    LIST_ROUNDS = 800,
    RING_LAPS = 3000,
    SHARED_LIST_ROUNDS = 150,
};

static int scale(void)
{
    const char *text = getenv("ZE_CPU_STRESS_SCALE");
    int value = text != NULL ? atoi(text) : 1;
    return value > 0 ? value : 1;
}

/* What one launch captures, derived from (thread, round, launch). */
typedef struct launch_args {
    int64_t l[NUM_LONGS];
    int32_t i[NUM_LONGS];
    float f[NUM_LONGS];
} launch_args_t;

static launch_args_t args_for(int thread, int round, int launch)
{
    launch_args_t a;
    for (int k = 0; k < NUM_LONGS; k++) {
        a.l[k] = (int64_t)(thread + 1) * 1000003 + (int64_t)round * 1009 + launch * 31 + k;
        a.i[k] = (thread * 131 + round * 17 + launch * 7 + k) % 1000;
        a.f[k] = (float)((thread + round + launch + k) % 64) * 0.5f;
    }
    return a;
}

static void set_many_args(ze_kernel_handle_t kernel, int64_t *out, const int32_t *in,
                          const launch_args_t *a)
{
    ZE_OK(zeKernelSetArgumentValue(kernel, 0, sizeof out, &out));
    ZE_OK(zeKernelSetArgumentValue(kernel, 1, sizeof in, &in));
    ZE_OK(zeKernelSetArgumentValue(kernel, 2, GROUP * sizeof(int32_t), NULL));
    for (uint32_t k = 0; k < NUM_LONGS; k++) {
        ZE_OK(zeKernelSetArgumentValue(kernel, 3 + k, sizeof a->l[k], &a->l[k]));
        ZE_OK(zeKernelSetArgumentValue(kernel, 3 + NUM_LONGS + k, sizeof a->i[k], &a->i[k]));
        ZE_OK(zeKernelSetArgumentValue(kernel, 3 + 2 * NUM_LONGS + k, sizeof a->f[k], &a->f[k]));
    }
    ZE_OK(zeKernelSetGroupSize(kernel, GROUP, 1, 1));
}

/* Checks what many_args wrote for the launch that captured a; in holds
 * GROUP ints. */
static void expect_sums(const int64_t *out, const int32_t *in, const launch_args_t *a,
                        const char *what)
{
    int64_t ls = 0, is = 0, group = 0;
    float fs = 0.0f;
    for (int k = 0; k < NUM_LONGS; k++) {
        ls += (k + 1) * a->l[k];
        is += (k + 1) * a->i[k];
        fs += (float)(k + 1) * a->f[k];
    }
    for (int k = 0; k < GROUP; k++)
        group += in[k];
    int32_t fbits;
    memcpy(&fbits, &fs, sizeof fbits);
    ck_assert_msg(out[0] == ls && out[1] == is && (int32_t)out[2] == fbits && out[3] == group,
                  "%s: sums %lld %lld %d %lld, expected %lld %lld %d %lld", what, (long long)out[0],
                  (long long)out[1], (int)out[2], (long long)out[3], (long long)ls, (long long)is,
                  (int)fbits, (long long)group);
}

/* --- 1 and 2: one kernel, many threads ------------------------------------------------ */

typedef struct shared_kernel {
    ze_kernel_handle_t kernel;
    pthread_mutex_t lock; /* the callers' serialization of set-args + append */
    int rounds;
} shared_kernel_t;

typedef struct worker {
    pthread_t thread;
    int index;
    shared_kernel_t *shared;
    ze_command_queue_mode_t immediate_mode; /* pattern 2 */
    long launches;
} worker_t;

/* Appends LAUNCHES launches of the shared kernel to list, launch j writing
 * out + j * OUT_LONGS; the last signals signal. */
static void append_round(worker_t *w, ze_command_list_handle_t list, int round, int64_t *out,
                         const int32_t *in, ze_event_handle_t signal)
{
    ze_group_count_t one = {1, 1, 1};
    for (int j = 0; j < LAUNCHES; j++) {
        launch_args_t a = args_for(w->index, round, j);
        pthread_mutex_lock(&w->shared->lock);
        set_many_args(w->shared->kernel, out + j * OUT_LONGS, in, &a);
        ZE_OK(zeCommandListAppendLaunchKernel(list, w->shared->kernel, &one,
                                              j == LAUNCHES - 1 ? signal : NULL, 0, NULL));
        pthread_mutex_unlock(&w->shared->lock);
    }
    w->launches += LAUNCHES;
}

static void expect_round(const worker_t *w, int round, int64_t *out, const int32_t *in)
{
    for (int j = 0; j < LAUNCHES; j++) {
        launch_args_t a = args_for(w->index, round, j);
        char what[64];
        snprintf(what, sizeof what, "thread %d round %d launch %d", w->index, round, j);
        expect_sums(out + j * OUT_LONGS, in, &a, what);
    }
    memset(out, 0, LAUNCHES * OUT_LONGS * sizeof *out);
}

static int32_t *make_input(int thread)
{
    int32_t *in = ze_test_alloc_shared(GROUP * sizeof *in);
    for (int k = 0; k < GROUP; k++)
        in[k] = thread * 100 + k;
    return in;
}

static void *regular_lists_worker(void *arg)
{
    worker_t *w = arg;
    const ze_test_env_t *e = ze_test_env();
    int32_t *in = make_input(w->index);
    int64_t *out = ze_test_alloc_shared(LAUNCHES * OUT_LONGS * sizeof *out);
    memset(out, 0, LAUNCHES * OUT_LONGS * sizeof *out);
    ze_command_queue_handle_t queue = ze_test_queue(ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
    ze_event_pool_handle_t pool = ze_test_event_pool(1, 0);
    ze_fence_desc_t fence_desc = {.stype = ZE_STRUCTURE_TYPE_FENCE_DESC};
    ze_fence_handle_t fence = NULL;
    ZE_OK(zeFenceCreate(queue, &fence_desc, &fence));
    for (int round = 0; round < w->shared->rounds; round++) {
        ze_command_list_desc_t list_desc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC};
        ze_command_list_handle_t list = NULL;
        ZE_OK(zeCommandListCreate(e->context, e->device, &list_desc, &list));
        ze_event_handle_t done = ze_test_event(pool, 0);
        append_round(w, list, round, out, in, done);
        ZE_OK(zeCommandListClose(list));
        ZE_OK(zeCommandQueueExecuteCommandLists(queue, 1, &list, fence));
        ZE_OK(zeFenceHostSynchronize(fence, UINT64_MAX));
        ZE_OK(zeEventQueryStatus(done));
        expect_round(w, round, out, in);
        ZE_OK(zeFenceReset(fence));
        ZE_OK(zeCommandListDestroy(list));
        ZE_OK(zeEventDestroy(done));
    }
    ZE_OK(zeFenceDestroy(fence));
    ZE_OK(zeEventPoolDestroy(pool));
    ZE_OK(zeCommandQueueDestroy(queue));
    ze_test_free(out);
    ze_test_free(in);
    return NULL;
}

static void *immediate_lists_worker(void *arg)
{
    worker_t *w = arg;
    int32_t *in = make_input(w->index);
    int64_t *out = ze_test_alloc_shared(LAUNCHES * OUT_LONGS * sizeof *out);
    memset(out, 0, LAUNCHES * OUT_LONGS * sizeof *out);
    ze_command_list_handle_t list = ze_test_immediate_list(w->immediate_mode);
    ze_event_pool_handle_t pool = ze_test_event_pool(1, 0);
    ze_event_handle_t done = ze_test_event(pool, 0);
    for (int round = 0; round < w->shared->rounds; round++) {
        append_round(w, list, round, out, in, done);
        ZE_OK(zeEventHostSynchronize(done, UINT64_MAX));
        ZE_OK(zeEventHostReset(done));
        expect_round(w, round, out, in);
    }
    ZE_OK(zeEventDestroy(done));
    ZE_OK(zeEventPoolDestroy(pool));
    ZE_OK(zeCommandListDestroy(list));
    ze_test_free(out);
    ze_test_free(in);
    return NULL;
}

static double seconds_since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0->tv_nsec);
}

static void run_workers(void *(*body)(void *), int rounds, const char *what)
{
    shared_kernel_t shared = {.rounds = rounds};
    shared.kernel = ze_test_kernel(ze_test_probe_module(16, NULL), "many_args");
    pthread_mutex_init(&shared.lock, NULL);
    worker_t workers[THREADS];
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int t = 0; t < THREADS; t++) {
        workers[t] = (worker_t){.index = t, .shared = &shared};
        workers[t].immediate_mode =
                t % 2 ? ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS : ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
        ck_assert_int_eq(pthread_create(&workers[t].thread, NULL, body, &workers[t]), 0);
    }
    long launches = 0;
    for (int t = 0; t < THREADS; t++) {
        pthread_join(workers[t].thread, NULL);
        launches += workers[t].launches;
    }
    printf("%s: %d threads x %d rounds, %ld launches of one 45-argument kernel checked, %.1f s\n",
           what, THREADS, rounds, launches, seconds_since(&t0));
    fflush(stdout);
    ck_assert_int_eq(launches, (long)THREADS * rounds * LAUNCHES);
    pthread_mutex_destroy(&shared.lock);
    ZE_OK(zeKernelDestroy(shared.kernel));
}

START_TEST(one_kernel_many_regular_lists)
{
    ze_test_env();
    run_workers(regular_lists_worker, KERNEL_ROUNDS * scale(), "regular lists, a queue each");
}
END_TEST

START_TEST(one_kernel_many_immediate_lists)
{
    ze_test_env();
    run_workers(immediate_lists_worker, KERNEL_ROUNDS * scale(), "immediate lists, sync and async");
}
END_TEST

/* --- 3: one list, many queues --------------------------------------------------------- */

typedef struct list_runner {
    pthread_t thread;
    ze_command_list_handle_t list;
    int rounds;
} list_runner_t;

static void *run_list_repeatedly(void *arg)
{
    list_runner_t *r = arg;
    ze_command_queue_handle_t queue = ze_test_queue(ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
    for (int i = 0; i < r->rounds; i++) {
        ZE_OK(zeCommandQueueExecuteCommandLists(queue, 1, &r->list, NULL));
        if (i % 4 == 3)
            ZE_OK(zeCommandQueueSynchronize(queue, UINT64_MAX));
    }
    ZE_OK(zeCommandQueueSynchronize(queue, UINT64_MAX));
    ZE_OK(zeCommandQueueDestroy(queue));
    return NULL;
}

START_TEST(one_list_many_queues)
{
    const int rounds = LIST_ROUNDS * scale();
    ze_kernel_handle_t kernel = ze_test_kernel(ze_test_probe_module(16, NULL), "many_args");
    int32_t *in = make_input(0);
    int64_t *out = ze_test_alloc_shared(LAUNCHES * OUT_LONGS * sizeof *out);
    memset(out, 0, LAUNCHES * OUT_LONGS * sizeof *out);
    ze_command_list_handle_t list = ze_test_list();
    ze_group_count_t one = {1, 1, 1};
    for (int j = 0; j < LAUNCHES; j++) {
        launch_args_t a = args_for(0, 0, j);
        set_many_args(kernel, out + j * OUT_LONGS, in, &a);
        ZE_OK(zeCommandListAppendLaunchKernel(list, kernel, &one, NULL, 0, NULL));
    }
    ZE_OK(zeCommandListClose(list));
    ZE_OK(zeKernelDestroy(kernel)); /* the recorded launches hold it */
    list_runner_t runners[THREADS];
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int t = 0; t < THREADS; t++) {
        runners[t] = (list_runner_t){.list = list, .rounds = rounds};
        ck_assert_int_eq(pthread_create(&runners[t].thread, NULL, run_list_repeatedly, &runners[t]),
                         0);
    }
    for (int t = 0; t < THREADS; t++)
        pthread_join(runners[t].thread, NULL);
    printf("one list on %d queues at once: %d executions of %d launches, %.1f s\n", THREADS,
           THREADS * rounds, LAUNCHES, seconds_since(&t0));
    fflush(stdout);
    for (int j = 0; j < LAUNCHES; j++) {
        launch_args_t a = args_for(0, 0, j);
        expect_sums(out + j * OUT_LONGS, in, &a, "one list, many queues");
    }
    ZE_OK(zeCommandListDestroy(list));
    ze_test_free(out);
    ze_test_free(in);
}
END_TEST

/* --- 4: a ring of events ------------------------------------------------------------ */

typedef struct ring_member {
    pthread_t thread;
    int index, laps;
    ze_event_handle_t *events; /* THREADS: member i waits events[i], signals events[i + 1] */
    int64_t *visits;           /* shared: each member increments its own slot */
} ring_member_t;

static void *pass_the_token(void *arg)
{
    ring_member_t *m = arg;
    ze_command_list_handle_t immediate = ze_test_immediate_list(
            m->index % 2 ? ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS : ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
    ze_event_handle_t mine = m->events[m->index];
    ze_event_handle_t next = m->events[(m->index + 1) % THREADS];
    for (int lap = 0; lap < m->laps; lap++) {
        ZE_OK(zeEventHostSynchronize(mine, UINT64_MAX));
        ZE_OK(zeEventHostReset(mine));
        m->visits[m->index]++;
        if (lap % 2 == 0)
            ZE_OK(zeEventHostSignal(next));
        else
            ZE_OK(zeCommandListAppendSignalEvent(immediate, next));
    }
    ZE_OK(zeCommandListDestroy(immediate));
    return NULL;
}

START_TEST(ring_of_events)
{
    const int laps = RING_LAPS * scale();
    ze_event_pool_handle_t pool = ze_test_event_pool(THREADS, 0);
    ze_event_handle_t events[THREADS];
    int64_t visits[THREADS] = {0};
    for (int t = 0; t < THREADS; t++)
        events[t] = ze_test_event(pool, (uint32_t)t);
    ring_member_t members[THREADS];
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int t = 0; t < THREADS; t++) {
        members[t] = (ring_member_t){.index = t, .laps = laps, .events = events, .visits = visits};
        ck_assert_int_eq(pthread_create(&members[t].thread, NULL, pass_the_token, &members[t]), 0);
    }
    ZE_OK(zeEventHostSignal(events[0]));
    for (int t = 0; t < THREADS; t++)
        pthread_join(members[t].thread, NULL);
    printf("ring of %d events: %d laps, %.1f s\n", THREADS, laps, seconds_since(&t0));
    fflush(stdout);
    for (int t = 0; t < THREADS; t++)
        ck_assert_int_eq(visits[t], laps);
    /* The last member's last signal came back to the first. */
    ZE_OK(zeEventHostSynchronize(events[0], UINT64_MAX));
    for (int t = 0; t < THREADS; t++)
        ZE_OK(zeEventDestroy(events[t]));
    ZE_OK(zeEventPoolDestroy(pool));
}
END_TEST

/* --- 5: one immediate list, many threads, no caller lock ------------------------------ */

typedef struct sharer {
    pthread_t thread;
    int index, rounds;
    ze_command_list_handle_t list; /* shared */
    ze_event_pool_handle_t pool;   /* shared: slot index is this thread's */
} sharer_t;

static void *append_to_shared_list(void *arg)
{
    sharer_t *s = arg;
    ze_kernel_handle_t kernel = ze_test_kernel(ze_test_probe_module(16, NULL), "many_args");
    ze_event_handle_t done = ze_test_event(s->pool, (uint32_t)s->index);
    int32_t *in = make_input(s->index);
    int64_t *out = ze_test_alloc_shared(LAUNCHES * OUT_LONGS * sizeof *out);
    ze_group_count_t one = {1, 1, 1};
    for (int round = 0; round < s->rounds; round++) {
        for (int j = 0; j < LAUNCHES; j++) {
            launch_args_t a = args_for(s->index, round, j);
            set_many_args(kernel, out + j * OUT_LONGS, in, &a);
            ZE_OK(zeCommandListAppendLaunchKernel(s->list, kernel, &one,
                                                  j == LAUNCHES - 1 ? done : NULL, 0, NULL));
        }
        ZE_OK(zeEventHostSynchronize(done, UINT64_MAX));
        ZE_OK(zeEventHostReset(done));
        for (int j = 0; j < LAUNCHES; j++) {
            launch_args_t a = args_for(s->index, round, j);
            expect_sums(out + j * OUT_LONGS, in, &a, "shared immediate list");
        }
    }
    ze_test_free(out);
    ze_test_free(in);
    ZE_OK(zeEventDestroy(done));
    ZE_OK(zeKernelDestroy(kernel));
    return NULL;
}

START_TEST(one_immediate_list_many_threads)
{
    const int rounds = SHARED_LIST_ROUNDS * scale();
    ze_test_probe_module(16, NULL); /* built once, before the threads */
    ze_event_pool_handle_t pool = ze_test_event_pool(THREADS, 0);
    const ze_command_queue_mode_t modes[2] = {ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS,
                                              ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS};
    for (int m = 0; m < 2; m++) {
        ze_command_list_handle_t list = ze_test_immediate_list(modes[m]);
        sharer_t sharers[THREADS];
        struct timespec t0;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int t = 0; t < THREADS; t++) {
            sharers[t] = (sharer_t){.index = t, .rounds = rounds, .list = list, .pool = pool};
            ck_assert_int_eq(
                    pthread_create(&sharers[t].thread, NULL, append_to_shared_list, &sharers[t]),
                    0);
        }
        for (int t = 0; t < THREADS; t++)
            pthread_join(sharers[t].thread, NULL);
        printf("one %s immediate list, %d threads without a lock: %d launches checked, %.1f s\n",
               m == 0 ? "synchronous" : "asynchronous", THREADS, THREADS * rounds * LAUNCHES,
               seconds_since(&t0));
        fflush(stdout);
        ZE_OK(zeCommandListDestroy(list));
    }
    ZE_OK(zeEventPoolDestroy(pool));
}
END_TEST

int main(void)
{
    const char *driver = getenv("SDPA_ZE_DRIVER");
    if (driver != NULL && strcmp(driver, "system") == 0) {
        printf("SKIP: these tests check the CPU driver (SDPA_ZE_DRIVER=%s)\n", driver);
        return 77;
    }
    const test_entry_t tests[] = {
            TEST_ONCE(one_kernel_many_regular_lists),
            TEST_ONCE(one_kernel_many_immediate_lists),
            TEST_ONCE(one_list_many_queues),
            TEST_ONCE(ring_of_events),
            TEST_ONCE(one_immediate_list_many_threads),
    };
    const test_suite_t suite = {.name = "stress", .timeout = 600};
    int status = test_run_table(&suite, tests, TEST_COUNT(tests));
    ze_test_teardown();
    return status;
}
