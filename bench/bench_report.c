/* bench_report.c - what the benchmark prints: the table, one BENCH line per
 * case, and the tab-separated data the plot is drawn from. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "element.h"
#include "problem.h"

int bench_row_mismatch(const bench_row_t *row)
{
    return row->checked && !(row->max_err <= row->tol);
}

static double mib(double bytes)
{
    return bytes / (1024.0 * 1024.0);
}

/* ratio_naive: naive time / our time (> 1: we are faster).
 * ratio_sgemm: the time sgemm needs for our flops / our time (1: we run at
 * host sgemm throughput).
 * ratio_torch: torch time / our time (> 1: we are faster). */
static double ratio_naive(const bench_row_t *r)
{
    return r->naive.seconds / r->ours.seconds;
}

static double sgemm_equivalent_seconds(const bench_row_t *r)
{
    return bench_case_flops(r->c) / (r->sgemm.gflops * 1e9);
}

/* ratio_stream: the time the host takes to read the case's bytes once / our
 * time (1: we read at the host's streaming rate). */
static double ratio_stream(const bench_row_t *r)
{
    return r->stream.seconds / r->ours.seconds;
}

/* The streaming rate a goal of x sgemm would need, as a fraction of the
 * measured one: at x sgemm a run takes sgemm_equivalent / x seconds for
 * the same bytes. */
static double stream_fraction_at_sgemm(const bench_row_t *r, double x)
{
    return r->stream.seconds * x / sgemm_equivalent_seconds(r);
}

static double ratio_torch(const bench_row_t *r)
{
    return r->torch.seconds / r->ours.seconds;
}

static int row_ran(const bench_row_t *r)
{
    return !r->skipped && !r->failed;
}

void bench_print_table(const bench_row_t *rows, int count, int torch)
{
    printf("\n%-22s %4s %9s %8s %9s %9s | %8s %7s | %9s %10s %7s | %9s %7s | %8s | ", "case",
           "pass", "ours ms", "TFLOP/s", "moved MiB", "peak MiB", "cold ms", "warm ms", "naive ms",
           "naive MiB", "x naive", "sgemm GF", "x sgemm", "x stream");
    if (torch)
        printf("%9s %7s | ", "torch ms", "x torch");
    printf("%9s %s\n", "max err", "reps");
    for (int i = 0; i < count; i++) {
        const bench_row_t *r = &rows[i];
        printf("%-22s %4s ", r->c->name, bench_pass_name(r->c->pass));
        if (!row_ran(r)) {
            printf("%s\n", r->skipped ? r->skipped : "FAILED (see the messages above)");
            continue;
        }
        double flops = bench_case_flops(r->c);
        printf("%9.2f %8.4f %9.1f %9.1f | ", r->ours.seconds * 1e3, flops / r->ours.seconds * 1e-12,
               mib(bench_case_min_bytes(r->c)), mib((double)r->ours.peak_bytes));
        if (r->create.have)
            printf("%8.1f %7.1f%s| ", r->create.cold_ms, r->create.warm_ms,
                   r->create.warm_built ? "!" : " ");
        else
            printf("%8s %7s | ", "-", "-");
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
        if (r->have_stream)
            printf("%7.3fx | ", ratio_stream(r));
        else
            printf("%8s | ", "-");
        if (torch && r->have_torch)
            printf("%9.2f %6.2fx | ", r->torch.seconds * 1e3, ratio_torch(r));
        else if (torch)
            printf("%9s %7s | ", "-", "-");
        if (r->checked)
            printf("%9.2e%s ", r->max_err, bench_row_mismatch(r) ? "!" : " ");
        else
            printf("%9s  ", "-");
        printf("%d", r->ours.reps);
        if (r->have_naive)
            printf("/%d", r->naive.reps);
        if (r->have_sgemm)
            printf("/%d", r->sgemm.reps);
        if (torch && r->have_torch)
            printf("/%d", r->torch.reps);
        printf("\n");
    }
    printf("\nours ms: median execution time; TFLOP/s: model flops (4*B*Hq*Sq*Sk*D, with V's "
           "head size 2*B*Hq*Sq*Sk*(D+Dv);\nhalved when causal; backward 2.5x) / time;\n"
           "moved MiB: the least bytes a pass must read and write; peak MiB: every Level Zero "
           "allocation of the case\n"
           "(tensors, workspace, scratch); cold ms, warm ms: primitive creation (the pass's "
           "primitive) in a new process\n"
           "with an empty persistent module cache, then in another with the cache the first "
           "left ('!': the warm one built);\n"
           "naive: f32 S = QK^T, softmax, PV with OpenBLAS sgemm, one head's S at a time;\n"
           "x naive: naive time / ours (> 1: we are faster); sgemm GF: host sgemm GFLOP/s at "
           "the case's flops;\n"
           "x sgemm: the time sgemm needs for our flops / ours (1: host sgemm throughput);\n"
           "x stream (decode rows): the time the host, one thread per core, takes to read the "
           "moved bytes once\n(summing them) / ours (1: we read K/V as fast as the host streams "
           "them);\n");
    if (torch)
        printf("torch ms: PyTorch's CPU scaled_dot_product_attention on the same case; x torch: "
               "torch time / ours (> 1: we are faster);\n");
    printf("max err: |ours - naive|, relative to max|grad| for backward, '!' above the forward "
           "tolerance;\nreps: ours/naive/sgemm%s timed runs.\n",
           torch ? "/torch" : "");
    for (int i = 0; i < count; i++) {
        const bench_row_t *r = &rows[i];
        if (!row_ran(r) || !r->have_stream)
            continue;
        printf("stream %s: %.1f GB/s read by %d threads (%.3f ms), ours %.1f GB/s", r->c->name,
               r->stream.bytes / r->stream.seconds * 1e-9, r->stream.threads,
               r->stream.seconds * 1e3, r->stream.bytes / r->ours.seconds * 1e-9);
        if (r->have_sgemm)
            printf("; 0.7x sgemm would read at %.2fx that rate", stream_fraction_at_sgemm(r, 0.7));
        printf("\n");
    }
    for (int i = 0; torch && i < count; i++)
        if (row_ran(&rows[i]) && !rows[i].have_torch)
            printf("torch %s: %s\n", rows[i].c->name, rows[i].torch.why);
}

void bench_print_line(const bench_row_t *r, const char *backend)
{
    const bench_case_t *c = r->c;
    printf("BENCH name=%s pass=%s backend=%s dtype=%s B=%lld Hq=%lld Hkv=%lld Sq=%lld Sk=%lld "
           "D=%lld causal=%d",
           c->name, bench_pass_name(c->pass), backend, sdpa_dtype_name(c->dtype),
           (long long)c->batch, (long long)c->q_heads, (long long)c->kv_heads, (long long)c->q_len,
           (long long)c->k_len, (long long)c->head_size, c->mask != SDPA_MASK_NONE);
    if (!row_ran(r)) {
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
    if (r->have_stream) {
        printf(" stream_ms=%.4f stream_gbps=%.3f stream_threads=%d ratio_stream=%.4f",
               r->stream.seconds * 1e3, r->stream.bytes / r->stream.seconds * 1e-9,
               r->stream.threads, ratio_stream(r));
        if (r->have_sgemm)
            printf(" stream_fraction_at_07_sgemm=%.4f", stream_fraction_at_sgemm(r, 0.7));
    }
    if (r->have_torch)
        printf(" torch_ms=%.4f torch_reps=%d torch_backend=%s ratio_torch=%.4f",
               r->torch.seconds * 1e3, r->torch.reps, r->torch.backend, ratio_torch(r));
    if (r->create.have)
        printf(" cold_create_ms=%.3f cold_modules_built=%llu warm_create_ms=%.3f "
               "warm_modules_built=%llu warm_cache_hits=%llu",
               r->create.cold_ms, r->create.cold_built, r->create.warm_ms, r->create.warm_built,
               r->create.warm_hits);
    if (r->checked) {
        printf(" max_err=%.3e", r->max_err);
        if (c->pass == BENCH_FORWARD)
            printf(" tol=%.3e check=%s", r->tol, bench_row_mismatch(r) ? "FAIL" : "ok");
    }
    printf(" config=\"%s\"\n", r->ours.config);
}

void bench_print_create_summary(const bench_row_t *rows, int count)
{
    /* The goals of issue 14 for a warm start (doc/module-cache.md). */
    static const double goal_ms[2] = {20.0, 50.0};
    static const double goal_cold_ratio = 1.5; /* cold backward / cold forward */
    double cold_medians[2] = {0.0, 0.0};
    unsigned long long warm_built = 0;
    int measured = 0;
    for (int pass = BENCH_FORWARD; pass <= BENCH_BACKWARD; pass++) {
        double cold[64], warm[64];
        int n = 0;
        for (int i = 0; i < count && n < 64; i++) {
            const bench_row_t *r = &rows[i];
            if (!r->create.have || r->c->pass != (bench_pass_t)pass)
                continue;
            cold[n] = r->create.cold_ms;
            warm[n] = r->create.warm_ms;
            warm_built += r->create.warm_built;
            n++;
        }
        if (n == 0)
            continue;
        measured += n;
        double cold_median = bench_median(cold, n), warm_median = bench_median(warm, n);
        cold_medians[pass] = cold_median;
        printf("create %s: median over %d cases: cold %.1f ms, warm %.1f ms (goal <= %.0f ms: "
               "%s), %.0fx faster\n",
               bench_pass_name((bench_pass_t)pass), n, cold_median, warm_median, goal_ms[pass],
               warm_median <= goal_ms[pass] ? "met" : "missed", cold_median / warm_median);
    }
    if (cold_medians[BENCH_FORWARD] > 0.0 && cold_medians[BENCH_BACKWARD] > 0.0) {
        double ratio = cold_medians[BENCH_BACKWARD] / cold_medians[BENCH_FORWARD];
        printf("create: cold backward / cold forward (medians): %.2f (goal <= %.1f: %s)\n", ratio,
               goal_cold_ratio, ratio <= goal_cold_ratio ? "met" : "missed");
    }
    if (measured)
        printf("create: modules built by the warm processes: %llu (goal 0: %s)\n", warm_built,
               warm_built == 0 ? "met" : "missed");
    for (int i = 0; i < count; i++)
        if (!rows[i].create.have && rows[i].create.why[0])
            printf("create %s: %s\n", rows[i].c->name, rows[i].create.why);
}

void bench_print_create_table(const bench_row_t *rows, int count)
{
    printf("\n%-22s %4s | %9s %6s | %9s %6s %5s\n", "case", "pass", "cold ms", "built", "warm ms",
           "built", "hits");
    for (int i = 0; i < count; i++) {
        const bench_row_t *r = &rows[i];
        printf("%-22s %4s | ", r->c->name, bench_pass_name(r->c->pass));
        if (r->create.have)
            printf("%9.1f %6llu | %9.1f %6llu %5llu\n", r->create.cold_ms, r->create.cold_built,
                   r->create.warm_ms, r->create.warm_built, r->create.warm_hits);
        else
            printf("%s\n", r->skipped         ? r->skipped
                           : r->create.why[0] ? r->create.why
                                              : "FAILED (see the messages above)");
    }
    printf("\ncold ms: primitive creation in a new process with an empty persistent module "
           "cache; warm ms: in another\nprocess with the cache the first left; built: modules "
           "built from SPIR-V; hits: loaded from the cache.\n");
}

void bench_print_create_line(const bench_row_t *r)
{
    const bench_case_t *c = r->c;
    printf("BENCH name=%s pass=%s backend=ze dtype=%s B=%lld Hq=%lld Hkv=%lld Sq=%lld Sk=%lld "
           "D=%lld causal=%d deterministic=%d",
           c->name, bench_pass_name(c->pass), sdpa_dtype_name(c->dtype), (long long)c->batch,
           (long long)c->q_heads, (long long)c->kv_heads, (long long)c->q_len, (long long)c->k_len,
           (long long)c->head_size, c->mask != SDPA_MASK_NONE, c->deterministic);
    if (!r->create.have) {
        printf(" status=%s\n", r->skipped ? "skipped" : "failed");
        return;
    }
    printf(" status=ok cold_create_ms=%.3f cold_modules_built=%llu warm_create_ms=%.3f "
           "warm_modules_built=%llu warm_cache_hits=%llu\n",
           r->create.cold_ms, r->create.cold_built, r->create.warm_ms, r->create.warm_built,
           r->create.warm_hits);
}

/* /proc/cpuinfo's "model name", or "unknown CPU". */
static void cpu_model(char *out, size_t size)
{
    snprintf(out, size, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL)
        return;
    char line[512];
    while (fgets(line, sizeof(line), f)) {
        const char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            snprintf(out, size, "%.*s", (int)strcspn(colon + 2, "\n"), colon + 2);
            break;
        }
    }
    fclose(f);
}

static void write_gflops(FILE *f, int have, double flops, double seconds)
{
    if (have && seconds > 0)
        fprintf(f, "\t%.3f", flops / seconds * 1e-9);
    else
        fprintf(f, "\tNaN");
}

int bench_write_data(const char *path, const bench_row_t *rows, int count, const char *device,
                     const char *note)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        perror(path);
        return -1;
    }
    char cpu[256], date[32];
    cpu_model(cpu, sizeof(cpu));
    time_t now = time(NULL);
    strftime(date, sizeof(date), "%Y-%m-%d", localtime(&now));
    fprintf(f, "# title: sdpa-ze on %s (%s, %ld cores), %s\n", device, cpu,
            sysconf(_SC_NPROCESSORS_ONLN), date);
    fprintf(f, "# note: %s\n", note ? note : "");
    fprintf(f, "# GFLOP/s from the model flops (bench_case_flops); NaN: the side did not run\n");
    fprintf(f, "case\tpass\tsq\tsk\tours\tnaive\tsgemm\ttorch\n");
    for (int i = 0; i < count; i++) {
        const bench_row_t *r = &rows[i];
        if (!row_ran(r))
            continue;
        double flops = bench_case_flops(r->c);
        fprintf(f, "%s\t%s\t%lld\t%lld", r->c->name, bench_pass_name(r->c->pass),
                (long long)r->c->q_len, (long long)r->c->k_len);
        write_gflops(f, 1, flops, r->ours.seconds);
        write_gflops(f, r->have_naive, flops, r->naive.seconds);
        fprintf(f, r->have_sgemm ? "\t%.3f" : "\tNaN", r->sgemm.gflops);
        write_gflops(f, r->have_torch, flops, r->torch.seconds);
        fprintf(f, "\n");
    }
    if (fclose(f) != 0) {
        perror(path);
        return -1;
    }
    return 0;
}
