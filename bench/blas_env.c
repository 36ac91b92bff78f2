/* blas_env.c - make the OpenBLAS baseline fair on virtual CPUs.
 *
 * OpenBLAS picks its kernels from CPUID when the library loads; on this
 * project's virtual CPUs it misdetects the core and runs without AVX
 * (doc/design.md, "Benchmark"). OPENBLAS_CORETYPE overrides the choice, but
 * it is read before main runs, so the benchmark sets it and executes itself
 * again. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

/* Set for the re-executed process, to the origin of the core type: it tells
 * that process not to execute again and what to report. */
#define REEXEC_MARK "SDPA_BENCH_REEXECUTED"

static char origin[96] = "OpenBLAS's own detection";

/* 1 if the "flags" line of /proc/cpuinfo lists flag. */
static int cpu_has_flag(const char *flag)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL)
        return 0;
    char line[8192];
    int found = 0;
    size_t len = strlen(flag);
    while (!found && fgets(line, sizeof(line), f)) {
        if (strncmp(line, "flags", 5) != 0)
            continue;
        for (char *at = strstr(line, flag); at && !found; at = strstr(at + 1, flag))
            found = at[-1] == ' ' && (at[len] == ' ' || at[len] == '\n' || at[len] == '\0');
        break; /* every core lists the same flags */
    }
    fclose(f);
    return found;
}

void blas_env_prepare(char **argv)
{
    if (!bench_have_baselines())
        return;
    const char *mark = getenv(REEXEC_MARK);
    if (mark != NULL) {
        snprintf(origin, sizeof(origin), "%s", mark);
        return;
    }
    const char *already = getenv("OPENBLAS_CORETYPE");
    int changed = 0;
    if (already && *already) {
        snprintf(origin, sizeof(origin), "OPENBLAS_CORETYPE=%s from the environment", already);
    } else {
        const char *core = NULL, *flag = NULL;
        if (cpu_has_flag("avx512f"))
            core = "SkylakeX", flag = "avx512f";
        else if (cpu_has_flag("avx2"))
            core = "Haswell", flag = "avx2";
        if (core) {
            setenv("OPENBLAS_CORETYPE", core, 1);
            snprintf(origin, sizeof(origin), "OPENBLAS_CORETYPE=%s from CPU flag %s", core, flag);
            changed = 1;
        }
    }
    if (getenv("OPENBLAS_NUM_THREADS") == NULL) {
        char threads[24];
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        snprintf(threads, sizeof(threads), "%ld", online > 0 ? online : 1);
        setenv("OPENBLAS_NUM_THREADS", threads, 1);
        changed = 1;
    }
    if (!changed)
        return;
    setenv(REEXEC_MARK, origin, 1);
    fflush(NULL);
    execv("/proc/self/exe", argv);
    fprintf(stderr, "sdpa_bench: warning: could not re-execute with OPENBLAS_CORETYPE set; the "
                    "baseline uses OpenBLAS's own core detection\n");
    snprintf(origin, sizeof(origin), "OpenBLAS's own detection (re-execution failed)");
}

const char *blas_env_origin(void)
{
    return origin;
}
