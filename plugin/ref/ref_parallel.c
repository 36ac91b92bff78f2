/* ref_parallel.c - spreading independent work items over the host's cores. */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "ref.h"

/* More threads than this gain nothing for a reference. */
#define REF_MAX_WORKERS 64

typedef struct parallel_job {
    atomic_llong next_item;
    int64_t items;
    void (*task)(void *context, int64_t item, int worker);
    void *context;
} parallel_job_t;

typedef struct worker_arg {
    parallel_job_t *job;
    int worker;
} worker_arg_t;

/* Takes items until none are left, so a missing thread's share moves on. */
static void drain(parallel_job_t *job, int worker)
{
    for (;;) {
        int64_t item = (int64_t)atomic_fetch_add(&job->next_item, 1);
        if (item >= job->items)
            return;
        job->task(job->context, item, worker);
    }
}

static void *worker_main(void *arg)
{
    worker_arg_t *w = arg;
    drain(w->job, w->worker);
    return NULL;
}

int ref_worker_count(int64_t items)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1)
        cpus = 1;
    if (cpus > REF_MAX_WORKERS)
        cpus = REF_MAX_WORKERS;
    if (items < cpus)
        cpus = items < 1 ? 1 : (long)items;
    return (int)cpus;
}

void ref_parallel_run(int workers, int64_t items,
                      void (*task)(void *context, int64_t item, int worker), void *context)
{
    parallel_job_t job = {.items = items, .task = task, .context = context};
    atomic_init(&job.next_item, 0);
    pthread_t threads[REF_MAX_WORKERS];
    worker_arg_t args[REF_MAX_WORKERS];
    int started[REF_MAX_WORKERS] = {0};
    if (workers > REF_MAX_WORKERS)
        workers = REF_MAX_WORKERS;
    for (int w = 1; w < workers; w++) {
        args[w].job = &job;
        args[w].worker = w;
        started[w] = pthread_create(&threads[w], NULL, worker_main, &args[w]) == 0;
    }
    drain(&job, 0);
    for (int w = 1; w < workers; w++) {
        if (started[w])
            pthread_join(threads[w], NULL);
    }
}
