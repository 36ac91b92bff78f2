/*
 * sdpa_bench.c - times our attention backend on typical shapes against host
 * baselines measured in the same run, and prints a table plus one
 * machine-readable BENCH line per case.
 *
 * Run it with `make bench` (the CPU Level Zero driver unless
 * SDPA_ZE_DRIVER=system), or by hand with ZE_ENABLE_ALT_DRIVERS and
 * SDPA_PLUGIN_DIR set; `sdpa_bench --help` lists the options. With
 * BENCH_PYTHON naming a Python with torch >= 2.5, PyTorch's CPU attention is
 * a further column; BENCH_CLOCK=cpu times runs in process CPU time (every
 * thread), which a shared, loaded machine distorts less; --sweep runs the sequence-length sweep `make bench-plot`
 * draws, and --data writes what the plot is drawn from.
 *
 * Exit status: 0 if every case ran and every forward result matched the
 * baseline within its tolerance, 1 if a result did not match, 2 on errors.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "element.h"
#include "problem.h"

enum { MAX_SELECTED = 64 };

typedef struct bench_options {
    const char *backend;
    const char *selected[MAX_SELECTED]; /* --case names; none: the default run */
    int selected_count;
    int all;                 /* --case all: every case, including small ones */
    int no_baselines;        /* --no-baseline */
    int no_torch;            /* --no-torch */
    int sweep;               /* --sweep: the sequence-length sweep instead of the cases */
    const char *data;        /* --data FILE: GFLOP/s per row for plots */
    const char *cache_dir;   /* --cache-dir DIR: the private module cache (kept) */
    const char *create_only; /* --create-only NAME: the child of a cold/warm measurement */
    int no_create;           /* --no-create: no cold/warm creation columns */
    int only_create;         /* --only-create: the cold/warm creation columns alone */
    const char *note;        /* --note TEXT: a line for the data file (the plot shows it) */
    bench_policy_t policy;
} bench_options_t;

static void usage(FILE *out)
{
    fprintf(out, "usage: sdpa_bench [--case NAME]... [--sweep] [--reps N] [--budget SECONDS]\n"
                 "                  [--backend NAME] [--no-baseline] [--no-torch] [--data FILE]\n"
                 "                  [--note TEXT] [--list]\n"
                 "  --case NAME     run only this case (repeatable; \"all\" runs every case)\n"
                 "  --sweep         run the sequence-length sweep (S = 256..4096, forward and\n"
                 "                  backward) instead of the cases\n"
                 "  --reps N        timed runs per measurement (default: as many as fit in the\n"
                 "                  budget, at least 3, at most the case's limit)\n"
                 "  --budget S      seconds of timed runs to aim for per measurement (default 3)\n"
                 "  --backend NAME  backend to measure: \"ze\" (default) or \"ref\" (development)\n"
                 "  --no-baseline   skip the OpenBLAS baselines and the decode rows' streaming read\n"
                 "  --no-torch      skip the PyTorch column even when BENCH_PYTHON is set\n"
                 "  --data FILE     also write GFLOP/s per row, tab-separated, for plots\n"
                 "  --note TEXT     a note for the data file, shown under the plot's title\n"
                 "  --no-create     skip the cold and warm creation columns\n"
                 "  --only-create   measure only the cold and warm creation (no runs, no\n"
                 "                  baselines): a table of its own and the goals' summary\n"
                 "  --cache-dir DIR the benchmark's persistent module cache (default: a new\n"
                 "                  directory in $TMPDIR, removed at the end; never the user's)\n"
                 "  --create-only NAME  (internal) create case NAME's primitive, print its time\n"
                 "  --list          list the cases and exit\n"
                 "Times are medians after one warm-up run, each run waited for on an event.\n"
                 "BENCH_PYTHON=/path/to/python (torch >= 2.5) adds PyTorch's CPU attention.\n");
}

static void list_cases(void)
{
    size_t count = 0;
    const bench_case_t *cases = bench_cases(&count);
    for (size_t i = 0; i < count; i++)
        printf("  %-22s %s%s\n", cases[i].name, cases[i].about,
               cases[i].in_default_run ? "" : " [only with --case]");
}

/* Returns 0 to run, 1 after --help/--list, -1 on a bad option. */
static int parse_options(int argc, char **argv, bench_options_t *o)
{
    *o = (bench_options_t){.backend = "ze", .policy = {.reps = 0, .budget = 3.0, .min_reps = 3}};
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            return 1;
        } else if (strcmp(arg, "--list") == 0) {
            list_cases();
            return 1;
        } else if (strcmp(arg, "--no-baseline") == 0) {
            o->no_baselines = 1;
            continue;
        } else if (strcmp(arg, "--no-torch") == 0) {
            o->no_torch = 1;
            continue;
        } else if (strcmp(arg, "--sweep") == 0) {
            o->sweep = 1;
            continue;
        } else if (strcmp(arg, "--no-create") == 0) {
            o->no_create = 1;
            continue;
        } else if (strcmp(arg, "--only-create") == 0) {
            o->only_create = 1;
            continue;
        }
        if (value == NULL) {
            fprintf(stderr, "sdpa_bench: %s needs a value\n", arg);
            return -1;
        }
        if (strcmp(arg, "--case") == 0) {
            if (strcmp(value, "all") == 0)
                o->all = 1;
            else if (o->selected_count < MAX_SELECTED)
                o->selected[o->selected_count++] = value;
        } else if (strcmp(arg, "--backend") == 0) {
            o->backend = value;
        } else if (strcmp(arg, "--data") == 0) {
            o->data = value;
        } else if (strcmp(arg, "--note") == 0) {
            o->note = value;
        } else if (strcmp(arg, "--cache-dir") == 0) {
            o->cache_dir = value;
        } else if (strcmp(arg, "--create-only") == 0) {
            o->create_only = value;
        } else if (strcmp(arg, "--reps") == 0) {
            long reps = strtol(value, &end, 10);
            if (*end != '\0' || reps < 1 || reps > 10000) {
                fprintf(stderr, "sdpa_bench: --reps needs an integer in 1..10000, got \"%s\"\n",
                        value);
                return -1;
            }
            o->policy.reps = (int)reps;
        } else if (strcmp(arg, "--budget") == 0) {
            double budget = strtod(value, &end);
            if (*end != '\0' || !(budget >= 0.0)) {
                fprintf(stderr, "sdpa_bench: --budget needs seconds >= 0, got \"%s\"\n", value);
                return -1;
            }
            o->policy.budget = budget;
        } else {
            fprintf(stderr, "sdpa_bench: unknown option \"%s\"\n", arg);
            usage(stderr);
            return -1;
        }
        i++;
    }
    if (o->only_create && (o->no_create || o->sweep || strcmp(o->backend, "ze") != 0)) {
        fprintf(stderr, "sdpa_bench: --only-create measures the ze backend's cases; it cannot be "
                        "combined with --no-create, --sweep or another backend\n");
        return -1;
    }
    size_t count = 0;
    const bench_case_t *cases = bench_cases(&count);
    for (int s = 0; s < o->selected_count; s++) {
        size_t i = 0;
        while (i < count && strcmp(cases[i].name, o->selected[s]) != 0)
            i++;
        if (i == count) {
            fprintf(stderr, "sdpa_bench: no case named \"%s\"; the cases are:\n", o->selected[s]);
            list_cases();
            return -1;
        }
    }
    return 0;
}

static int case_selected(const bench_options_t *o, const bench_case_t *c)
{
    if (o->all)
        return 1;
    if (o->selected_count == 0)
        return c->in_default_run;
    for (int s = 0; s < o->selected_count; s++)
        if (strcmp(o->selected[s], c->name) == 0)
            return 1;
    return 0;
}

/* ------------------------------------------------------------------------- */
/* Accuracy                                                                  */
/* ------------------------------------------------------------------------- */

/* Largest |a - b| over count values (NaN counts as infinite); max_b gets
 * the largest |b|. */
static double max_difference(const float *a, const float *b, int64_t count, double *max_b)
{
    double worst = 0.0;
    for (int64_t i = 0; i < count; i++) {
        double err = fabs((double)a[i] - (double)b[i]);
        if (!(err <= worst))
            worst = isnan(err) ? INFINITY : err;
        if (fabs((double)b[i]) > *max_b)
            *max_b = fabs((double)b[i]);
    }
    return worst;
}

/* Forward tolerance for inputs in [-1, 1), against an f32 baseline: our
 * output rounded to dtype, P possibly rounded to dtype before P.V (each at
 * most half an ulp of max|V| = 1), plus f32 round-off growing like the square
 * root of the reduction lengths (softmax and P.V over Sk keys, Q.K over D
 * dims with |score| <= scale * D = sqrt(D)), four times for margin. The same
 * derivation as examples/sdpa_example.c. */
static double forward_tolerance(const bench_case_t *c)
{
    double f32_unit = ldexp(1.0, -24), d = (double)c->head_size;
    return 1.5 * sdpa_dtype_epsilon(c->dtype) +
           4.0 * f32_unit * (sqrt((double)c->k_len) + sqrt(d) * sqrt(d));
}

static void check_row(bench_row_t *row, const bench_outputs_t *ours, const bench_outputs_t *naive)
{
    const bench_case_t *c = row->c;
    int64_t q = bench_q_elements(c), kv = bench_kv_elements(c);
    row->checked = 1;
    row->max_ref = 0.0;
    if (c->pass == BENCH_FORWARD) {
        row->max_err = max_difference(ours->dst, naive->dst, q, &row->max_ref);
        row->tol = forward_tolerance(c);
        return;
    }
    /* Backward: reported relative to the largest gradient, not judged. */
    double e[3], m[3] = {0, 0, 0};
    e[0] = max_difference(ours->diff_q, naive->diff_q, q, &m[0]) / (m[0] > 0 ? m[0] : 1);
    e[1] = max_difference(ours->diff_k, naive->diff_k, kv, &m[1]) / (m[1] > 0 ? m[1] : 1);
    e[2] = max_difference(ours->diff_v, naive->diff_v, kv, &m[2]) / (m[2] > 0 ? m[2] : 1);
    row->max_err = fmax(e[0], fmax(e[1], e[2]));
    row->max_ref = 1.0;
    row->tol = INFINITY;
}

/* ------------------------------------------------------------------------- */
/* One case                                                                  */
/* ------------------------------------------------------------------------- */

/* "[i/n] case pass: what" for the progress line. */
static void progress_begin(const bench_row_t *row, int index, int total, const char *what)
{
    char label[160];
    snprintf(label, sizeof(label), "  [%d/%d] %s %s: %s", index, total, row->c->name,
             bench_pass_name(row->c->pass), what);
    bench_progress_begin(label);
}

static void run_case(const bench_options_t *o, bench_device_t *d, const bench_backend_t *b,
                     const bench_cache_dirs_t *dirs, int torch, bench_row_t *row, int index,
                     int total)
{
    const bench_case_t *c = row->c;
    bench_host_t host = {0};
    bench_outputs_t ours = {0}, naive = {0};
    int baselines = bench_have_baselines() && !o->no_baselines;

    if (o->only_create) { /* no tensors: the creation processes make their own */
        progress_begin(row, index, total, "cold and warm creation");
        row->failed = bench_measure_create(c, index, dirs, &row->create) != 0;
        bench_progress_end();
        return;
    }
    if (bench_host_create(c, &host) != 0 || bench_outputs_create(c, &ours) != 0 ||
        (baselines && bench_outputs_create(c, &naive) != 0)) {
        fprintf(stderr, "sdpa_bench: %s: out of host memory for the tensors\n", c->name);
        row->failed = 1;
        goto cleanup;
    }
    if (!o->sweep && !o->no_create && strcmp(b->iface->name, "ze") == 0) {
        progress_begin(row, index, total, "cold and warm creation");
        bench_measure_create(c, index, dirs, &row->create);
        bench_progress_end();
    }
    progress_begin(row, index, total, b->iface->name);
    int ours_failed = bench_run_ours(d, b, c, &host, &o->policy, &ours, &row->ours) != 0;
    bench_progress_end();
    if (ours_failed) {
        row->failed = 1;
        goto cleanup;
    }
    if (baselines) {
        progress_begin(row, index, total, "naive baseline");
        row->have_naive = bench_run_naive(c, &host, &o->policy, &naive, &row->naive) == 0;
        progress_begin(row, index, total, "sgemm baseline");
        row->have_sgemm = bench_run_sgemm(bench_case_flops(c), &o->policy, &row->sgemm) == 0;
        bench_progress_end();
        if (row->have_naive)
            check_row(row, &ours, &naive);
    }
    if (bench_case_is_decode(c) && !o->no_baselines) {
        progress_begin(row, index, total, "streaming-read baseline");
        row->have_stream = bench_run_stream(c, &o->policy, &row->stream) == 0;
        bench_progress_end();
    }
    if (torch) {
        progress_begin(row, index, total, "torch");
        row->have_torch = bench_torch_run(c, &o->policy, &row->torch) == 0;
        bench_progress_end();
    }

cleanup:
    bench_outputs_destroy(&naive);
    bench_outputs_destroy(&ours);
    bench_host_destroy(&host);
}

static const char *device_type_name(ze_device_type_t type)
{
    switch (type) {
    case ZE_DEVICE_TYPE_GPU:
        return "GPU";
    case ZE_DEVICE_TYPE_CPU:
        return "CPU";
    default:
        return "other";
    }
}

/* ------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* Before anything else: it may execute the program again. */
    blas_env_prepare(argv);

    bench_options_t opts;
    int parsed = parse_options(argc, argv, &opts);
    if (parsed != 0)
        return parsed > 0 ? 0 : 2;
    if (opts.create_only)
        return bench_create_only(opts.create_only);

    double start = bench_seconds_now();
    bench_device_t device = {0};
    bench_backend_t backend = {0};
    bench_cache_dirs_t dirs = {0};
    bench_row_t rows[MAX_SELECTED];
    int row_count = 0, rc = 2;

    /* Before the context: it reads where its persistent cache is. */
    if (bench_cache_dirs_open(opts.cache_dir, &dirs) != 0 || bench_device_open(&device) != 0 ||
        bench_backend_open(opts.backend, &device, &backend))
        goto cleanup;
    /* The host reference computes on the host: it needs shared USM. */
    device.shared_memory = strcmp(backend.iface->name, "ref") == 0;

    printf("device:    %s (%s)\n", device.name, device_type_name(device.type));
    printf("backend:   %s (%s), sub-group size %u, tensors in %s USM\n", backend.iface->name,
           sdpa_backend_path(backend.backend), backend.features.subgroup_size,
           device.shared_memory ? "shared" : "device");
    if (opts.only_create)
        printf("runs:      none (--only-create): cold and warm creation only\n");
    else if (opts.no_baselines)
        printf("baseline:  skipped (--no-baseline)\n");
    else
        bench_describe_baselines();
    char torch_about[256];
    int torch = !opts.no_torch && !opts.only_create &&
                bench_torch_probe(torch_about, sizeof(torch_about));
    if (opts.only_create)
        ; /* nothing runs */
    else if (opts.no_torch)
        printf("torch:     skipped (--no-torch)\n");
    else
        printf("torch:     %s%s\n", torch ? "" : "skipped: ", torch_about);
    if (opts.only_create)
        ;
    else if (opts.policy.reps > 0)
        printf("runs:      1 warm-up + %d timed per measurement\n", opts.policy.reps);
    else
        printf("runs:      1 warm-up + enough timed runs for %.1f s (at least %d, at most the "
               "case's limit)\n",
               opts.policy.budget, opts.policy.min_reps);
    if (bench_cpu_clock())
        printf("clock:     BENCH_CLOCK=cpu: ms are CPU time of all the measuring process's threads "
               "per run, not wall-clock\n");

    size_t count = 0;
    const bench_case_t *cases = opts.sweep ? bench_sweep_cases(&count) : bench_cases(&count);
    for (size_t i = 0; i < count && row_count < MAX_SELECTED; i++)
        if (opts.sweep || case_selected(&opts, &cases[i]))
            rows[row_count++] = (bench_row_t){.c = &cases[i]};
    for (int i = 0; i < row_count; i++) {
        if (rows[i].c->pass == BENCH_BACKWARD && !backend.features.has_backward)
            rows[i].skipped = "skipped: the backend has no backward yet";
        else
            run_case(&opts, &device, &backend, &dirs, torch, &rows[i], i + 1, row_count);
    }

    if (opts.only_create) {
        bench_print_create_table(rows, row_count);
        printf("\n");
        bench_print_create_summary(rows, row_count);
        int failed = 0;
        for (int i = 0; i < row_count; i++) {
            bench_print_create_line(&rows[i]);
            failed |= rows[i].failed;
        }
        printf("total: %.1f s\n", bench_seconds_now() - start);
        rc = failed ? 2 : 0;
        goto cleanup;
    }
    bench_print_table(rows, row_count, torch);
    printf("\n");
    bench_print_create_summary(rows, row_count);
    int failed = 0, mismatched = 0;
    for (int i = 0; i < row_count; i++) {
        bench_print_line(&rows[i], backend.iface->name);
        failed |= rows[i].failed;
        mismatched |= bench_row_mismatch(&rows[i]);
    }
    if (opts.data && bench_write_data(opts.data, rows, row_count, device.name, opts.note) != 0)
        failed = 1;
    else if (opts.data)
        printf("data:      %s\n", opts.data);
    printf("total: %.1f s\n", bench_seconds_now() - start);
    rc = failed ? 2 : mismatched ? 1 : 0;

cleanup:
    bench_backend_close(&backend);
    bench_device_close(&device);
    bench_cache_dirs_close(&dirs);
    return rc;
}
