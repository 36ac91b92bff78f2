/*
 * fuzz_main.c - a seeded random driver for a fuzz target, for builds without
 * libFuzzer (what `make check` runs).
 *
 *   fuzz_<target> [-runs=N] [-seed=S] [-max_len=L] [FILE...]
 *
 * With files, runs each file's bytes once (a reproducer, from this driver
 * or from libFuzzer). Otherwise runs N inputs of random bytes (default:
 * $FUZZ_RUNS, else FUZZ_DEFAULT_RUNS) from a generator seeded with S
 * (default 1), so a run is repeatable: lengths are mostly short, some up to
 * 1 KiB and a few up to L (default FUZZ_DEFAULT_MAX_LEN). A failing input is
 * written to fuzz-<target>-failure.bin before the program aborts.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuzz.h"

#ifndef FUZZ_DEFAULT_RUNS
#define FUZZ_DEFAULT_RUNS 10000
#endif
#ifndef FUZZ_DEFAULT_MAX_LEN
#define FUZZ_DEFAULT_MAX_LEN 4096
#endif

static const char *target_name = "fuzz";
static const uint8_t *current;
static size_t current_size;

void fuzz_fail(const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    fprintf(stderr, "%s: ", target_name);
    vfprintf(stderr, format, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    char path[256];
    snprintf(path, sizeof(path), "fuzz-%s-failure.bin", target_name);
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(current, 1, current_size, f);
        fclose(f);
        fprintf(stderr, "%s: input (%zu bytes) written to %s\n", target_name, current_size, path);
    }
    abort();
}

static void run(const uint8_t *data, size_t size)
{
    current = data;
    current_size = size;
    LLVMFuzzerTestOneInput(data, size);
}

/* xorshift64*: small, fast, and the same everywhere. */
static uint64_t next(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dull;
}

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *data = malloc(size > 0 ? (size_t)size : 1);
    if (!data || fread(data, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "%s: cannot read\n", path);
        fclose(f);
        free(data);
        return 1;
    }
    fclose(f);
    run(data, (size_t)size);
    free(data);
    printf("%s: %s ran\n", target_name, path);
    return 0;
}

int main(int argc, char **argv)
{
    const char *slash = strrchr(argv[0], '/');
    target_name = slash ? slash + 1 : argv[0];
    if (strncmp(target_name, "lt-", 3) == 0) /* libtool's wrapper */
        target_name += 3;
    const char *env_runs = getenv("FUZZ_RUNS");
    long long runs = env_runs && *env_runs ? atoll(env_runs) : FUZZ_DEFAULT_RUNS;
    unsigned long long seed = 1;
    size_t max_len = FUZZ_DEFAULT_MAX_LEN;
    int files = 0, status = 0;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "-runs=", 6) == 0)
            runs = atoll(argv[i] + 6);
        else if (strncmp(argv[i], "-seed=", 6) == 0)
            seed = strtoull(argv[i] + 6, NULL, 0);
        else if (strncmp(argv[i], "-max_len=", 9) == 0)
            max_len = (size_t)strtoull(argv[i] + 9, NULL, 0);
        else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: %s [-runs=N] [-seed=S] [-max_len=L] [FILE...]\n", argv[0]);
            return 2;
        } else {
            files++;
            status |= run_file(argv[i]);
        }
    }
    if (files)
        return status;

    uint8_t *data = malloc(max_len ? max_len : 1);
    if (!data)
        return 1;
    uint64_t state = seed * 0x9e3779b97f4a7c15ull + 1;
    size_t longest = 0;
    clock_t start = clock();
    for (long long r = 0; r < runs; r++) {
        uint64_t shape = next(&state) % 100;
        size_t limit = shape < 80 ? 64 : shape < 98 ? 1024 : max_len;
        if (limit > max_len)
            limit = max_len;
        size_t size = (size_t)(next(&state) % (limit + 1));
        for (size_t i = 0; i < size; i += 8) {
            uint64_t word = next(&state);
            memcpy(data + i, &word, size - i < 8 ? size - i : 8);
        }
        if (size > longest)
            longest = size;
        run(data, size);
    }
    free(data);
    printf("%s: %lld inputs (seed %llu, longest %zu bytes), no failure, %.1f s of CPU; %s\n",
           target_name, runs, seed, longest, (double)(clock() - start) / CLOCKS_PER_SEC,
           fuzz_stats());
    return 0;
}
