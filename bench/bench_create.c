/* bench_create.c - cold and warm primitive creation, each in a process of
 * its own: what a framework's start-up pays with an empty persistent module
 * cache and with the cache an earlier run left (doc/module-cache.md).
 *
 * The benchmark never uses the user's cache: it makes a private directory
 * (or uses --cache-dir) holding one subdirectory per case, where the cold
 * process builds and stores, and the warm process loads. The measuring
 * process points its own context at "main" in it, and each case's entries
 * are copied there, so that it loads rather than builds them again. */
#define _XOPEN_SOURCE 700 /* nftw */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"

/* "CREATE ms=... built=... hits=... misses=..." on the child's stdout. */
#define CREATE_LINE "CREATE ms=%lf built=%llu hits=%llu misses=%llu"

static uint64_t context_counter(const bench_backend_t *b, sdpa_query_t what)
{
    uint64_t value = 0;
    b->iface->context_query(b->ctx, what, &value, sizeof(value));
    return value;
}

int bench_create_only(const char *name)
{
    size_t count = 0;
    const bench_case_t *cases = bench_cases(&count), *c = NULL;
    for (size_t i = 0; i < count && !c; i++)
        if (strcmp(cases[i].name, name) == 0)
            c = &cases[i];
    if (!c) {
        fprintf(stderr, "sdpa_bench: --create-only: no case named \"%s\"\n", name);
        return 2;
    }
    bench_device_t device = {0};
    bench_backend_t backend = {0};
    int rc = 2;
    if (bench_device_open(&device) == 0 && bench_backend_open("ze", &device, &backend) == 0) {
        sdpa_problem_desc_t p = bench_make_problem(
                c, c->pass == BENCH_FORWARD ? SDPA_FORWARD_INFERENCE : SDPA_BACKWARD);
        sdpa_primitive_t *prim = NULL;
        double start = bench_seconds_now();
        sdpa_status_t status = backend.iface->primitive_create(backend.ctx, &p, &prim);
        double ms = (bench_seconds_now() - start) * 1e3;
        if (status == SDPA_SUCCESS) {
            printf("CREATE ms=%.3f built=%llu hits=%llu misses=%llu\n", ms,
                   (unsigned long long)context_counter(&backend, SDPA_QUERY_MODULES_BUILT),
                   (unsigned long long)context_counter(&backend, SDPA_QUERY_MODULE_CACHE_HITS),
                   (unsigned long long)context_counter(&backend, SDPA_QUERY_MODULE_CACHE_MISSES));
            rc = 0;
        } else {
            fprintf(stderr, "sdpa_bench: --create-only %s: primitive_create: %s: %s\n", name,
                    sdpa_status_name(status), backend.iface->last_error());
        }
        backend.iface->primitive_destroy(prim);
    }
    bench_backend_close(&backend);
    bench_device_close(&device);
    return rc;
}

/* Runs this program with --create-only c->name and SDPA_CACHE_DIR=dir;
 * reads its CREATE line. Returns 0 or -1 with why. */
static int create_in_child(const bench_case_t *c, const char *dir, double *ms,
                           unsigned long long *built, unsigned long long *hits, char *why,
                           size_t why_size)
{
    const char *argv[] = {"sdpa_bench", "--create-only", c->name, NULL};
    const char *env[] = {"SDPA_CACHE", "1", "SDPA_CACHE_DIR", dir, NULL};
    char line[256];
    unsigned long long misses = 0;
    if (bench_run_child("/proc/self/exe", argv, env, "CREATE ", line, sizeof(line), why,
                        why_size) != 0)
        return -1;
    if (sscanf(line, CREATE_LINE, ms, built, hits, &misses) != 4) {
        snprintf(why, why_size, "the creation process printed \"%.100s\"", line);
        return -1;
    }
    return 0;
}

/* Copies the entries of from into to (best effort: the measuring process
 * builds what is missing). */
static void copy_entries(const char *from, const char *to)
{
    DIR *d = opendir(from);
    if (!d)
        return;
    char src[8192], dst[8192];
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (!strstr(e->d_name, ".zebin"))
            continue;
        snprintf(src, sizeof(src), "%s/%s", from, e->d_name);
        snprintf(dst, sizeof(dst), "%s/%s", to, e->d_name);
        FILE *in = fopen(src, "rb"), *out = in ? fopen(dst, "wb") : NULL;
        char buffer[65536];
        size_t n;
        while (out && (n = fread(buffer, 1, sizeof(buffer), in)) > 0)
            fwrite(buffer, 1, n, out);
        if (out)
            fclose(out);
        if (in)
            fclose(in);
    }
    closedir(d);
}

int bench_measure_create(const bench_case_t *c, int index, const bench_cache_dirs_t *dirs,
                         bench_create_t *out)
{
    *out = (bench_create_t){0};
    char dir[4200];
    snprintf(dir, sizeof(dir), "%s/case-%d", dirs->root, index);
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        snprintf(out->why, sizeof(out->why), "cannot make the case's cache directory: %s",
                 strerror(errno));
        return -1;
    }
    if (create_in_child(c, dir, &out->cold_ms, &out->cold_built, &out->cold_hits, out->why,
                        sizeof(out->why)) != 0 ||
        create_in_child(c, dir, &out->warm_ms, &out->warm_built, &out->warm_hits, out->why,
                        sizeof(out->why)) != 0)
        return -1;
    copy_entries(dir, dirs->main);
    out->have = 1;
    return 0;
}

/* --- The private directory ---------------------------------------------------------- */

int bench_cache_dirs_open(const char *given, bench_cache_dirs_t *dirs)
{
    *dirs = (bench_cache_dirs_t){0};
    if (given) {
        snprintf(dirs->root, sizeof(dirs->root), "%s", given);
        if (mkdir(dirs->root, 0700) != 0 && errno != EEXIST) {
            fprintf(stderr, "sdpa_bench: --cache-dir %s: %s\n", given, strerror(errno));
            return -1;
        }
        dirs->keep = 1;
    } else {
        const char *tmp = getenv("TMPDIR");
        snprintf(dirs->root, sizeof(dirs->root), "%s/sdpa-bench-cache.XXXXXX",
                 tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(dirs->root)) {
            fprintf(stderr, "sdpa_bench: cannot make %s: %s\n", dirs->root, strerror(errno));
            return -1;
        }
    }
    snprintf(dirs->main, sizeof(dirs->main), "%s/main", dirs->root);
    if (mkdir(dirs->main, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, "sdpa_bench: cannot make %s: %s\n", dirs->main, strerror(errno));
        return -1;
    }
    /* The measuring process's context reads these when it is created. */
    setenv("SDPA_CACHE", "1", 1);
    setenv("SDPA_CACHE_DIR", dirs->main, 1);
    return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0; /* on with the rest */
}

/* Removes dir and everything in it (links, not what they point at). */
static void remove_tree(const char *dir)
{
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void bench_cache_dirs_close(bench_cache_dirs_t *dirs)
{
    if (dirs->root[0] && !dirs->keep)
        remove_tree(dirs->root);
    *dirs = (bench_cache_dirs_t){0};
}
