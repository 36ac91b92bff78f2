/* bench_torch.c - the PyTorch peer: PyTorch's CPU scaled_dot_product_attention
 * on the same case, timed by torch_peer.py in the Python named by
 * $BENCH_PYTHON (a venv with torch >= 2.5), with as many threads as the
 * machine has cores (what our CPU device and the OpenBLAS baselines use).
 *
 * The script runs as a child process per case (fork + execv, no shell), so
 * it never shares the cores with our measurements; it prints one line
 * "TORCH status=... key=value ..." that this file parses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#ifndef SDPA_BENCH_TORCH_PEER
#define SDPA_BENCH_TORCH_PEER "torch_peer.py"
#endif

enum { MAX_ARGS = 40 };

static const char *python_path(void)
{
    const char *python = getenv("BENCH_PYTHON");
    return python && *python ? python : NULL;
}

/* Runs the script with args (NULL-terminated, after the script's path) and
 * stores its TORCH line in line. Returns 0, or -1 with why filled. */
static int run_peer(const char *const *args, char *line, size_t line_size, char *why,
                    size_t why_size)
{
    const char *argv[MAX_ARGS] = {python_path(), SDPA_BENCH_TORCH_PEER};
    int n = 2;
    for (; args[n - 2] != NULL && n < MAX_ARGS - 1; n++)
        argv[n] = args[n - 2];
    argv[n] = NULL;
    return bench_run_child(argv[0], argv, NULL, "TORCH ", line, line_size, why, why_size);
}

/* The value of key in a TORCH line (key=value or key="two words"). */
static int field(const char *line, const char *key, char *value, size_t size)
{
    size_t key_length = strlen(key);
    for (const char *at = strstr(line, key); at; at = strstr(at + 1, key)) {
        if (at[-1] != ' ' || at[key_length] != '=')
            continue;
        const char *start = at + key_length + 1;
        size_t length = *start == '"' ? strcspn(++start, "\"") : strcspn(start, " ");
        snprintf(value, size, "%.*s", (int)length, start);
        return 1;
    }
    return 0;
}

/* 0 for status=ok; otherwise why gets the reason the script gave. */
static int line_ok(const char *line, char *why, size_t why_size)
{
    char status[16] = "";
    field(line, "status", status, sizeof(status));
    if (strcmp(status, "ok") == 0)
        return 0;
    if (!field(line, "reason", why, why_size))
        snprintf(why, why_size, "%s", line);
    return -1;
}

static int threads(void)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (int)online : 1;
}

int bench_torch_probe(char *about, size_t size)
{
    if (python_path() == NULL) {
        snprintf(about, size, "set BENCH_PYTHON to a Python with torch >= 2.5 for this column");
        return 0;
    }
    char count[16], line[512], version[64] = "?", got_threads[16] = "?";
    snprintf(count, sizeof(count), "%d", threads());
    const char *args[] = {"--probe", "--threads", count, NULL};
    if (run_peer(args, line, sizeof(line), about, size) != 0 || line_ok(line, about, size) != 0)
        return 0;
    field(line, "version", version, sizeof(version));
    field(line, "threads", got_threads, sizeof(got_threads));
    snprintf(about, size, "PyTorch %s (%s), CPU scaled_dot_product_attention, %s threads", version,
             python_path(), got_threads);
    return 1;
}

int bench_torch_run(const bench_case_t *c, const bench_policy_t *policy, bench_torch_t *result)
{
    *result = (bench_torch_t){0};
    if (c->kv_dtype != SDPA_DTYPE_UNDEF) {
        snprintf(result->why, sizeof(result->why), "n/a (no quantized K/V)");
        return -1;
    }
    if (c->head_size_v > 0) {
        snprintf(result->why, sizeof(result->why), "n/a (the peer runs one head size)");
        return -1;
    }
    if (c->sinks) {
        snprintf(result->why, sizeof(result->why), "n/a (no attention sinks in SDPA)");
        return -1;
    }
    if (c->window_left > 0 || c->varlen_count > 0) {
        snprintf(result->why, sizeof(result->why), "n/a (no %s in SDPA)",
                 c->varlen_count > 0 ? "packed varlen batch" : "sliding window");
        return -1;
    }
    char shape[6][24], count[16], reps[16], budget[32], min_reps[16], max_reps[16];
    const int64_t dims[6] = {c->batch, c->q_heads, c->kv_heads, c->q_len, c->k_len, c->head_size};
    for (int i = 0; i < 6; i++)
        snprintf(shape[i], sizeof(shape[i]), "%lld", (long long)dims[i]);
    snprintf(count, sizeof(count), "%d", threads());
    snprintf(reps, sizeof(reps), "%d", policy->reps);
    snprintf(budget, sizeof(budget), "%g", policy->budget);
    snprintf(min_reps, sizeof(min_reps), "%d", policy->min_reps);
    snprintf(max_reps, sizeof(max_reps), "%d", c->max_reps);
    const char *dtype = c->dtype == SDPA_DTYPE_F16    ? "f16"
                        : c->dtype == SDPA_DTYPE_BF16 ? "bf16"
                                                      : "f32";
    const char *args[] = {"--pass",
                          bench_pass_name(c->pass),
                          "--shape",
                          shape[0],
                          shape[1],
                          shape[2],
                          shape[3],
                          shape[4],
                          shape[5],
                          "--dtype",
                          dtype,
                          "--causal",
                          c->mask != SDPA_MASK_NONE ? "1" : "0",
                          "--threads",
                          count,
                          "--reps",
                          reps,
                          "--budget",
                          budget,
                          "--min-reps",
                          min_reps,
                          "--max-reps",
                          max_reps,
                          NULL};
    char line[512], value[32];
    if (run_peer(args, line, sizeof(line), result->why, sizeof(result->why)) != 0 ||
        line_ok(line, result->why, sizeof(result->why)) != 0)
        return -1;
    if (!field(line, "ms", value, sizeof(value)) || (result->seconds = atof(value) * 1e-3) <= 0) {
        snprintf(result->why, sizeof(result->why), "no time in \"%.120s\"", line);
        return -1;
    }
    if (field(line, "reps", value, sizeof(value)))
        result->reps = atoi(value);
    field(line, "backend", result->backend, sizeof(result->backend));
    return 0;
}
