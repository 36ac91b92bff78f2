/*
 * sdpa_bench.c - times our attention backend on typical shapes against host
 * baselines measured in the same run, and prints a table plus one
 * machine-readable BENCH line per case.
 *
 * Run it with `make bench` (the CPU Level Zero driver unless
 * SDPA_ZE_DRIVER=system), or by hand with ZE_ENABLE_ALT_DRIVERS and
 * SDPA_PLUGIN_DIR set; `sdpa_bench --help` lists the options.
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
    int all;          /* --case all: every case, including small ones */
    int no_baselines; /* --no-baseline */
    bench_policy_t policy;
} bench_options_t;

/* One line of the table. */
typedef struct bench_row {
    const bench_case_t *c;
    const char *skipped; /* why it did not run, or NULL */
    int failed;          /* an error stopped it */
    bench_ours_t ours;
    int have_naive, have_sgemm;
    bench_naive_t naive;
    bench_sgemm_t sgemm;
    /* Accuracy against the naive baseline: largest |ours - naive|, largest
     * |naive|, and (forward) the tolerance of the dtype. */
    int checked;
    double max_err, max_ref, tol;
} bench_row_t;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: sdpa_bench [--case NAME]... [--reps N] [--budget SECONDS] [--backend NAME]\n"
            "                  [--no-baseline] [--list]\n"
            "  --case NAME     run only this case (repeatable; \"all\" runs every case)\n"
            "  --reps N        timed runs per measurement (default: as many as fit in the\n"
            "                  budget, at least 3, at most the case's limit)\n"
            "  --budget S      seconds of timed runs to aim for per measurement (default 3)\n"
            "  --backend NAME  backend to measure: \"ze\" (default) or \"ref\" (development)\n"
            "  --no-baseline   skip the OpenBLAS baselines\n"
            "  --list          list the cases and exit\n"
            "Times are medians after one warm-up run, each run waited for on an event.\n");
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

static int row_mismatch(const bench_row_t *row)
{
    return row->checked && !(row->max_err <= row->tol);
}

/* ------------------------------------------------------------------------- */
/* One case                                                                  */
/* ------------------------------------------------------------------------- */

static void run_case(const bench_options_t *o, bench_device_t *d, const bench_backend_t *b,
                     bench_row_t *row)
{
    const bench_case_t *c = row->c;
    bench_host_t host = {0};
    bench_outputs_t ours = {0}, naive = {0};
    int baselines = bench_have_baselines() && !o->no_baselines;

    if (bench_host_create(c, &host) != 0 || bench_outputs_create(c, &ours) != 0 ||
        (baselines && bench_outputs_create(c, &naive) != 0)) {
        fprintf(stderr, "sdpa_bench: %s: out of host memory for the tensors\n", c->name);
        row->failed = 1;
        goto cleanup;
    }
    fprintf(stderr, "  %s: %s backend...\n", c->name, b->iface->name);
    if (bench_run_ours(d, b, c, &host, &o->policy, &ours, &row->ours) != 0) {
        row->failed = 1;
        goto cleanup;
    }
    if (baselines) {
        fprintf(stderr, "  %s: naive baseline...\n", c->name);
        row->have_naive = bench_run_naive(c, &host, &o->policy, &naive, &row->naive) == 0;
        fprintf(stderr, "  %s: sgemm baseline...\n", c->name);
        row->have_sgemm = bench_run_sgemm(bench_case_flops(c), &o->policy, &row->sgemm) == 0;
        if (row->have_naive)
            check_row(row, &ours, &naive);
    }

cleanup:
    bench_outputs_destroy(&naive);
    bench_outputs_destroy(&ours);
    bench_host_destroy(&host);
}

/* ------------------------------------------------------------------------- */
/* Output                                                                    */
/* ------------------------------------------------------------------------- */

static double mib(double bytes)
{
    return bytes / (1024.0 * 1024.0);
}

/* ratio_naive: naive time / our time (> 1: we are faster).
 * ratio_sgemm: the time sgemm needs for our flops / our time (1: we run at
 * host sgemm throughput). */
static double ratio_naive(const bench_row_t *r)
{
    return r->naive.seconds / r->ours.seconds;
}

static double sgemm_equivalent_seconds(const bench_row_t *r)
{
    return bench_case_flops(r->c) / (r->sgemm.gflops * 1e9);
}

static void print_table(const bench_row_t *rows, int count)
{
    printf("\n%-22s %4s %9s %8s %9s %9s | %9s %10s %7s | %9s %7s | %9s %s\n", "case", "pass",
           "ours ms", "TFLOP/s", "moved MiB", "peak MiB", "naive ms", "naive MiB", "x naive",
           "sgemm GF", "x sgemm", "max err", "reps");
    for (int i = 0; i < count; i++) {
        const bench_row_t *r = &rows[i];
        printf("%-22s %4s ", r->c->name, bench_pass_name(r->c->pass));
        if (r->skipped || r->failed) {
            printf("%s\n", r->skipped ? r->skipped : "FAILED (see the messages above)");
            continue;
        }
        double flops = bench_case_flops(r->c);
        printf("%9.2f %8.4f %9.1f %9.1f | ", r->ours.seconds * 1e3, flops / r->ours.seconds * 1e-12,
               mib(bench_case_min_bytes(r->c)), mib((double)r->ours.peak_bytes));
        if (r->have_naive)
            printf("%9.2f %10.1f %6.2fx | ", r->naive.seconds * 1e3, mib((double)r->naive.bytes),
                   ratio_naive(r));
        else
            printf("%9s %10s %7s | ", "-", "-", "-");
        if (r->have_sgemm)
            printf("%9.1f %6.3fx | ", r->sgemm.gflops,
                   sgemm_equivalent_seconds(r) / r->ours.seconds);
        else
            printf("%9s %7s | ", "-", "-");
        if (r->checked)
            printf("%9.2e%s ", r->max_err, row_mismatch(r) ? "!" : " ");
        else
            printf("%9s  ", "-");
        printf("%d", r->ours.reps);
        if (r->have_naive)
            printf("/%d", r->naive.reps);
        if (r->have_sgemm)
            printf("/%d", r->sgemm.reps);
        printf("\n");
    }
    printf("\nours ms: median execution time; TFLOP/s: model flops (4*B*Hq*Sq*Sk*D, halved when "
           "causal; backward 2.5x) / time;\n"
           "moved MiB: the least bytes a pass must read and write; peak MiB: every Level Zero "
           "allocation of the case\n"
           "(tensors, workspace, scratch); naive: f32 S = QK^T, softmax, PV with OpenBLAS sgemm, "
           "one head's S at a time;\n"
           "x naive: naive time / ours (> 1: we are faster); sgemm GF: host sgemm GFLOP/s at "
           "the case's flops;\n"
           "x sgemm: the time sgemm needs for our flops / ours (1: host sgemm throughput); "
           "max err: |ours - naive|,\n"
           "relative to max|grad| for backward, '!' above the forward tolerance; reps: "
           "ours/naive/sgemm timed runs.\n");
}

static void print_bench_line(const bench_row_t *r, const char *backend)
{
    const bench_case_t *c = r->c;
    printf("BENCH name=%s pass=%s backend=%s dtype=%s B=%lld Hq=%lld Hkv=%lld Sq=%lld Sk=%lld "
           "D=%lld causal=%d",
           c->name, bench_pass_name(c->pass), backend, sdpa_dtype_name(c->dtype),
           (long long)c->batch, (long long)c->q_heads, (long long)c->kv_heads, (long long)c->q_len,
           (long long)c->k_len, (long long)c->head_size, c->mask != SDPA_MASK_NONE);
    if (r->skipped || r->failed) {
        printf(" status=%s\n", r->skipped ? "skipped" : "failed");
        return;
    }
    double flops = bench_case_flops(c), bytes = bench_case_min_bytes(c);
    printf(" status=ok ms=%.4f reps=%d create_ms=%.1f flops=%.6g tflops=%.6f bytes=%.0f "
           "gbps=%.3f peak_bytes=%zu scratch_bytes=%zu workspace_bytes=%zu",
           r->ours.seconds * 1e3, r->ours.reps, r->ours.create_ms, flops,
           flops / r->ours.seconds * 1e-12, bytes, bytes / r->ours.seconds * 1e-9,
           r->ours.peak_bytes, r->ours.scratch_bytes, r->ours.workspace_bytes);
    if (r->have_naive)
        printf(" naive_ms=%.4f naive_reps=%d naive_bytes=%zu naive_all_heads_bytes=%zu "
               "ratio_naive=%.4f",
               r->naive.seconds * 1e3, r->naive.reps, r->naive.bytes, r->naive.all_heads_bytes,
               ratio_naive(r));
    if (r->have_sgemm)
        printf(" sgemm_n=%lld sgemm_gflops=%.3f sgemm_equiv_ms=%.4f ratio_sgemm=%.4f",
               (long long)r->sgemm.n, r->sgemm.gflops, sgemm_equivalent_seconds(r) * 1e3,
               sgemm_equivalent_seconds(r) / r->ours.seconds);
    if (r->checked) {
        printf(" max_err=%.3e", r->max_err);
        if (c->pass == BENCH_FORWARD)
            printf(" tol=%.3e check=%s", r->tol, row_mismatch(r) ? "FAIL" : "ok");
    }
    printf(" config=\"%s\"\n", r->ours.config);
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

    double start = bench_seconds_now();
    bench_device_t device = {0};
    bench_backend_t backend = {0};
    bench_row_t rows[MAX_SELECTED];
    int row_count = 0, rc = 2;

    if (bench_device_open(&device) != 0 || bench_backend_open(opts.backend, &device, &backend))
        goto cleanup;
    /* The host reference computes on the host: it needs shared USM. */
    device.shared_memory = strcmp(backend.iface->name, "ref") == 0;

    printf("device:    %s (%s)\n", device.name, device_type_name(device.type));
    printf("backend:   %s (%s), sub-group size %u, tensors in %s USM\n", backend.iface->name,
           sdpa_backend_path(backend.backend), backend.features.subgroup_size,
           device.shared_memory ? "shared" : "device");
    if (opts.no_baselines)
        printf("baseline:  skipped (--no-baseline)\n");
    else
        bench_describe_baselines();
    if (opts.policy.reps > 0)
        printf("runs:      1 warm-up + %d timed per measurement\n", opts.policy.reps);
    else
        printf("runs:      1 warm-up + enough timed runs for %.1f s (at least %d, at most the "
               "case's limit)\n",
               opts.policy.budget, opts.policy.min_reps);

    size_t count = 0;
    const bench_case_t *cases = bench_cases(&count);
    for (size_t i = 0; i < count && row_count < MAX_SELECTED; i++) {
        if (!case_selected(&opts, &cases[i]))
            continue;
        bench_row_t *row = &rows[row_count++];
        *row = (bench_row_t){.c = &cases[i]};
        if (cases[i].pass == BENCH_BACKWARD && !backend.features.has_backward) {
            row->skipped = "skipped: the backend has no backward yet";
            continue;
        }
        run_case(&opts, &device, &backend, row);
    }

    print_table(rows, row_count);
    printf("\n");
    int failed = 0, mismatched = 0;
    for (int i = 0; i < row_count; i++) {
        print_bench_line(&rows[i], backend.iface->name);
        failed |= rows[i].failed;
        mismatched |= row_mismatch(&rows[i]);
    }
    printf("total: %.1f s\n", bench_seconds_now() - start);
    rc = failed ? 2 : mismatched ? 1 : 0;

cleanup:
    bench_backend_close(&backend);
    bench_device_close(&device);
    return rc;
}
