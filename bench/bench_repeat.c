/* bench_repeat.c - warm-up, adaptive repetition count and median. */
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "bench.h"

double bench_seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int bench_repeat(const bench_policy_t *policy, int max_reps, bench_run_fn run, void *context,
                 double *median, int *reps)
{
    /* The warm-up pays first-launch costs (and tells us how long a run is). */
    double warm = run(context);
    if (warm < 0)
        return -1;
    bench_progress_update(0, 0);
    int count = policy->reps;
    if (count <= 0) {
        double wanted = warm > 0 ? ceil(policy->budget / warm) : (double)max_reps;
        count = wanted > (double)max_reps ? max_reps : (int)wanted;
        if (count < policy->min_reps)
            count = policy->min_reps;
    }
    if (count < 1)
        count = 1;
    double *times = malloc((size_t)count * sizeof(double));
    if (times == NULL)
        return -1;
    for (int i = 0; i < count; i++) {
        times[i] = run(context);
        if (times[i] < 0) {
            free(times);
            return -1;
        }
        bench_progress_update(i + 1, count);
    }
    qsort(times, (size_t)count, sizeof(double), compare_doubles);
    *median = count % 2 ? times[count / 2] : 0.5 * (times[count / 2 - 1] + times[count / 2]);
    *reps = count;
    free(times);
    return 0;
}
