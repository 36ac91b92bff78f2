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
    printf("\n%-22s %4s %9s %8s %9s %9s | %9s %10s %7s | %9s %7s | ", "case", "pass", "ours ms",
           "TFLOP/s", "moved MiB", "peak MiB", "naive ms", "naive MiB", "x naive", "sgemm GF",
           "x sgemm");
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
    printf("\nours ms: median execution time; TFLOP/s: model flops (4*B*Hq*Sq*Sk*D, halved when "
           "causal; backward 2.5x) / time;\n"
           "moved MiB: the least bytes a pass must read and write; peak MiB: every Level Zero "
           "allocation of the case\n"
           "(tensors, workspace, scratch); naive: f32 S = QK^T, softmax, PV with OpenBLAS sgemm, "
           "one head's S at a time;\n"
           "x naive: naive time / ours (> 1: we are faster); sgemm GF: host sgemm GFLOP/s at "
           "the case's flops;\n"
           "x sgemm: the time sgemm needs for our flops / ours (1: host sgemm throughput);\n");
    if (torch)
        printf("torch ms: PyTorch's CPU scaled_dot_product_attention on the same case; x torch: "
               "torch time / ours (> 1: we are faster);\n");
    printf("max err: |ours - naive|, relative to max|grad| for backward, '!' above the forward "
           "tolerance;\nreps: ours/naive/sgemm%s timed runs.\n",
           torch ? "/torch" : "");
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
    if (r->have_torch)
        printf(" torch_ms=%.4f torch_reps=%d torch_backend=%s ratio_torch=%.4f",
               r->torch.seconds * 1e3, r->torch.reps, r->torch.backend, ratio_torch(r));
    if (r->checked) {
        printf(" max_err=%.3e", r->max_err);
        if (c->pass == BENCH_FORWARD)
            printf(" tol=%.3e check=%s", r->tol, bench_row_mismatch(r) ? "FAIL" : "ok");
    }
    printf(" config=\"%s\"\n", r->ours.config);
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
