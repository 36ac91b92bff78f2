/* bench_progress.c - one progress line on stderr while a measurement runs.
 *
 * On a terminal the line is rewritten in place ("\r", erase to the end) and
 * cleared when the measurement ends; elsewhere (a log, CI) it is printed as
 * a plain line when the measurement starts and again at most every
 * PLAIN_INTERVAL seconds, so long cases show they are alive without
 * flooding the log. */
#include <stdio.h>
#include <unistd.h>

#include "bench.h"

#define PLAIN_INTERVAL 10.0

static struct {
    char label[160];
    int active, terminal;
    double start, last_print;
} progress;

void bench_progress_begin(const char *label)
{
    snprintf(progress.label, sizeof(progress.label), "%s", label);
    progress.active = 1;
    progress.terminal = isatty(fileno(stderr));
    progress.start = progress.last_print = bench_seconds_now();
    if (progress.terminal)
        fprintf(stderr, "\r%s...\033[K", progress.label);
    else
        fprintf(stderr, "%s...\n", progress.label);
    fflush(stderr);
}

void bench_progress_update(int done, int total)
{
    if (!progress.active)
        return;
    double now = bench_seconds_now();
    if (!progress.terminal && now - progress.last_print < PLAIN_INTERVAL)
        return;
    progress.last_print = now;
    char what[48];
    if (done == 0)
        snprintf(what, sizeof(what), "warm-up done");
    else
        snprintf(what, sizeof(what), "run %d/%d", done, total);
    fprintf(stderr, "%s%s: %s, %.1f s%s", progress.terminal ? "\r" : "", progress.label, what,
            now - progress.start, progress.terminal ? "\033[K" : "\n");
    fflush(stderr);
}

void bench_progress_end(void)
{
    if (progress.active && progress.terminal) {
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
    }
    progress.active = 0;
}
