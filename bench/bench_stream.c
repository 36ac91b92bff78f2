/* bench_stream.c - the memory-bound baseline of the decode rows: how long the
 * host takes to read the bytes a decode step must read.
 *
 * A decode step does 4 flops per K/V element it reads (per query head of a
 * K/V head), so its bound is the memory, not the FMA units: the sgemm
 * column cannot say how close it is. This baseline reads a buffer of the
 * case's least bytes (bench_case_min_bytes: Q, K, V, O, scales) once per
 * run with one thread per online core (the device runtime runs one worker
 * per core), each summing its contiguous share with 64-bit integer vector
 * adds into eight independent accumulators. The threads are started once
 * per measurement and released for each run through a condition variable,
 * so a run costs the reads and a wake-up. The buffer is read again every run, as the
 * backend reads the same K/V cache every run: both see the same caches. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

/* 16 bytes of 64-bit lanes (one SSE2 register on x86-64): two loads per
 * cycle of these outrun any cache level below L1. */
typedef uint64_t stream_vec_t __attribute__((vector_size(16)));

enum { STREAM_MAX_THREADS = 64, STREAM_ACCUMULATORS = 8 };

typedef struct stream_shared {
    const stream_vec_t *data;
    size_t vectors; /* of data */
    int threads;
    pthread_mutex_t lock;
    pthread_cond_t start, done;
    unsigned long generation; /* a run starts when it changes */
    int finished;             /* workers done with this run */
    int stop;                 /* the workers leave */
    volatile uint64_t sink[STREAM_MAX_THREADS]; /* keeps the sums (and reads) alive */
} stream_shared_t;

typedef struct stream_worker {
    stream_shared_t *s;
    int index;
} stream_worker_t;

/* Sums thread index's share of the buffer into s->sink[index]. */
static void stream_share(stream_shared_t *s, int index)
{
    size_t per = (s->vectors / (size_t)s->threads) & ~(size_t)(STREAM_ACCUMULATORS - 1);
    size_t begin = per * (size_t)index;
    size_t end = index == s->threads - 1 ? s->vectors : begin + per;
    /* Eight named accumulators: an array indexed in a loop stays in memory
     * at -O2. */
    stream_vec_t a0 = {0, 0}, a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    const stream_vec_t *p = s->data;
    size_t i = begin;
    for (; i + STREAM_ACCUMULATORS <= end; i += STREAM_ACCUMULATORS) {
        a0 += p[i];
        a1 += p[i + 1];
        a2 += p[i + 2];
        a3 += p[i + 3];
        a4 += p[i + 4];
        a5 += p[i + 5];
        a6 += p[i + 6];
        a7 += p[i + 7];
    }
    for (; i < end; i++)
        a0 += p[i];
    stream_vec_t all = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
    uint64_t sum = all[0] + all[1];
    s->sink[index] = sum;
}

static void *stream_worker_main(void *arg)
{
    stream_worker_t *w = arg;
    stream_shared_t *s = w->s;
    unsigned long seen = 0;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        while (s->generation == seen && !s->stop)
            pthread_cond_wait(&s->start, &s->lock);
        if (s->stop)
            break;
        seen = s->generation;
        pthread_mutex_unlock(&s->lock);
        stream_share(s, w->index);
        pthread_mutex_lock(&s->lock);
        s->finished++;
        pthread_cond_signal(&s->done);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

/* One timed run: the calling thread reads share 0 while the workers read
 * theirs. */
static double stream_once(void *context)
{
    stream_shared_t *s = context;
    double t0 = bench_run_seconds_now();
    pthread_mutex_lock(&s->lock);
    s->finished = 0;
    s->generation++;
    pthread_cond_broadcast(&s->start);
    pthread_mutex_unlock(&s->lock);
    stream_share(s, 0);
    pthread_mutex_lock(&s->lock);
    while (s->finished < s->threads - 1)
        pthread_cond_wait(&s->done, &s->lock);
    pthread_mutex_unlock(&s->lock);
    return bench_run_seconds_now() - t0;
}

int bench_run_stream(const bench_case_t *c, const bench_policy_t *policy, bench_stream_t *result)
{
    *result = (bench_stream_t){0};
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = online < 1 ? 1 : online > STREAM_MAX_THREADS ? STREAM_MAX_THREADS : (int)online;
    size_t bytes = (size_t)bench_case_min_bytes(c);
    size_t vectors = (bytes + sizeof(stream_vec_t) - 1) / sizeof(stream_vec_t);
    stream_shared_t *s = calloc(1, sizeof(*s));
    stream_vec_t *data = aligned_alloc(64, (vectors * sizeof(stream_vec_t) + 63) / 64 * 64);
    if (s == NULL || data == NULL) {
        free(data);
        free(s);
        return -1;
    }
    /* Written, so the pages exist and the reads are not of the zero page. */
    for (size_t i = 0; i < vectors; i++)
        data[i] = (stream_vec_t){i, i + 1};
    s->data = data;
    s->vectors = vectors;
    s->threads = threads;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->start, NULL);
    pthread_cond_init(&s->done, NULL);
    pthread_t ids[STREAM_MAX_THREADS];
    stream_worker_t workers[STREAM_MAX_THREADS];
    int started = 1, rc = -1;
    for (; started < threads; started++) {
        workers[started] = (stream_worker_t){s, started};
        if (pthread_create(&ids[started], NULL, stream_worker_main, &workers[started]) != 0)
            break;
    }
    if (started == threads) {
        double median = 0.0;
        rc = bench_repeat(policy, 1000, stream_once, s, &median, &result->reps);
        result->seconds = median;
        result->bytes = (double)bytes;
        result->threads = threads;
    }
    pthread_mutex_lock(&s->lock);
    s->stop = 1;
    pthread_cond_broadcast(&s->start);
    pthread_mutex_unlock(&s->lock);
    for (int t = 1; t < started; t++)
        pthread_join(ids[t], NULL);
    pthread_cond_destroy(&s->done);
    pthread_cond_destroy(&s->start);
    pthread_mutex_destroy(&s->lock);
    free(data);
    free(s);
    return rc;
}
