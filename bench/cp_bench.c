/*
 * cp_bench.c - the context-parallel benchmark (libsdpa_cp): one sequence of
 * S tokens sharded over the ranks of MPI_COMM_WORLD, forward (training, as a
 * framework runs it before the backward) and backward, each rank on its own
 * Level Zero device (the CPU device here: one rank per process). Run it with
 * mpiexec; `make cp-bench` in bench/ runs 1, 2 and 4 ranks, strong and weak.
 *
 * Per pass, rank 0 prints one Markdown table row:
 *   ms/rank:   wall time of one sdpa_cp_execute, the slowest rank's mean
 *              over --reps executions after one warm-up;
 *   ms/step:   ms/rank over the ring's N steps (weak scaling: constant when
 *              the ring scales, since each step is one L x L block);
 *   MiB sent:  payload one rank sends per execution (K/V blocks, and dK/dV
 *              accumulators in backward), the largest over ranks;
 *   comm ms, exposed ms: per execution, the time the ring's transfers were
 *              in flight, and the part of it the rank spent waiting for them
 *              after its device work was done (sdpa_cp_stats_t), largest
 *              over ranks; overlap = 1 - exposed / comm, the fraction hidden
 *              behind compute (over all ranks' sums);
 *   host ms:   per execution, the host's own work on the critical path
 *              (waiting for the staging copy, adding dQ/dK/dV partials in f32),
 *              largest over ranks;
 *   MiB/rank:  the largest rank's device and host USM: its shards (Q, K, V,
 *              O, the workspace; dO, dQ, dK, dV in backward) plus what the cp
 *              object holds (SDPA_CP_QUERY_MEMORY_BYTES, scratch included).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "problem.h"
#include "sdpa_cp.h"

typedef struct options {
    int64_t seq, local, heads, kv_heads, head_size;
    sdpa_dtype_t dtype;
    int causal, backward, deterministic, reps;
    sdpa_cp_layout_t layout;
} options_t;

static int rank, ranks;

static void usage(void)
{
    if (rank == 0)
        fprintf(stderr,
                "usage: mpiexec -n N sdpa_cp_bench [--seq S | --local L] [--heads H]\n"
                "       [--kv-heads HKV] [--head-size D] [--dtype f16|bf16|f32] [--no-causal]\n"
                "       [--contiguous] [--backward] [--deterministic] [--reps R]\n"
                "  --seq S: tokens of the whole sequence (default 32768; S / N per rank)\n"
                "  --local L: tokens per rank instead (weak scaling: S = N L)\n");
}

static int parse(int argc, char **argv, options_t *o)
{
    *o = (options_t){.seq = 32768, .heads = 1, .head_size = 128, .dtype = SDPA_DTYPE_F16,
                     .causal = 1, .reps = 2, .layout = SDPA_CP_LAYOUT_ZIGZAG};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t *number = !strcmp(a, "--seq")         ? &o->seq
                          : !strcmp(a, "--local")     ? &o->local
                          : !strcmp(a, "--heads")     ? &o->heads
                          : !strcmp(a, "--kv-heads")  ? &o->kv_heads
                          : !strcmp(a, "--head-size") ? &o->head_size
                                                      : NULL;
        if (number && value) {
            *number = atoll(value);
            i++;
        } else if (!strcmp(a, "--reps") && value) {
            o->reps = atoi(value);
            i++;
        } else if (!strcmp(a, "--dtype") && value) {
            o->dtype = !strcmp(value, "f32")    ? SDPA_DTYPE_F32
                       : !strcmp(value, "bf16") ? SDPA_DTYPE_BF16
                       : !strcmp(value, "f16")  ? SDPA_DTYPE_F16
                                                : SDPA_DTYPE_UNDEF;
            i++;
        } else if (!strcmp(a, "--no-causal")) {
            o->causal = 0;
        } else if (!strcmp(a, "--contiguous")) {
            o->layout = SDPA_CP_LAYOUT_CONTIGUOUS;
        } else if (!strcmp(a, "--backward")) {
            o->backward = 1;
        } else if (!strcmp(a, "--deterministic")) {
            o->deterministic = 1;
        } else {
            usage();
            return -1;
        }
    }
    if (o->kv_heads == 0)
        o->kv_heads = o->heads;
    if (o->local == 0)
        o->local = o->seq / ranks;
    o->seq = o->local * ranks;
    if (o->dtype == SDPA_DTYPE_UNDEF || o->local < 2 || o->reps < 1 || o->heads < 1 ||
        o->kv_heads < 1 || o->head_size < 1) {
        usage();
        return -1;
    }
    return 0;
}

/* The rank's tensors: [1, H, L, D] dense. */
typedef struct shards {
    void *q, *k, *v, *o, *d_o, *dq, *dk, *dv;
    float *lse;
    size_t q_bytes, kv_bytes, lse_bytes;
} shards_t;

static sdpa_tensor_desc_t dense(const options_t *o, int64_t heads)
{
    int64_t l = o->local, d = o->head_size;
    return (sdpa_tensor_desc_t){o->dtype, {1, heads, l, d}, {heads * l * d, l * d, d, 1}};
}

/* Uniform values in [-1, 1) from a per-rank stream. */
static int fill(bench_device_t *dev, void *dst, int64_t count, sdpa_dtype_t dtype, uint64_t *state)
{
    float *values = malloc(sizeof(float) * (size_t)count);
    if (values == NULL)
        return -1;
    for (int64_t i = 0; i < count; i++) {
        *state = *state * 6364136223846793005ull + 1442695040888963407ull;
        values[i] = (float)((double)(*state >> 40) / (double)(1ull << 23) - 1.0);
    }
    int rc = bench_upload(dev, dst, values, count, dtype);
    free(values);
    return rc;
}

static int shards_alloc(bench_device_t *dev, const options_t *o, shards_t *s)
{
    const int64_t qn = o->heads * o->local * o->head_size, kvn = o->kv_heads * o->local * o->head_size;
    const size_t e = (size_t)sdpa_dtype_bits(o->dtype) / 8;
    s->q_bytes = (size_t)qn * e;
    s->kv_bytes = (size_t)kvn * e;
    s->lse_bytes = (size_t)(o->heads * o->local) * sizeof(float);
    void **q_like[] = {&s->q, &s->o, &s->d_o, &s->dq}, **kv_like[] = {&s->k, &s->v, &s->dk, &s->dv};
    int count = o->backward ? 4 : 2;
    for (int i = 0; i < count; i++)
        if ((*q_like[i] = bench_alloc(dev, s->q_bytes)) == NULL ||
            (*kv_like[i] = bench_alloc(dev, s->kv_bytes)) == NULL)
            return -1;
    if ((s->lse = bench_alloc(dev, s->lse_bytes)) == NULL)
        return -1;
    uint64_t state = 0x5eed0000u + (uint64_t)rank;
    if (fill(dev, s->q, qn, o->dtype, &state) || fill(dev, s->k, kvn, o->dtype, &state) ||
        fill(dev, s->v, kvn, o->dtype, &state) ||
        (o->backward && fill(dev, s->d_o, qn, o->dtype, &state)))
        return -1;
    return 0;
}

static void shards_free(bench_device_t *dev, shards_t *s)
{
    bench_free(dev, s->lse, s->lse_bytes);
    void *q_like[] = {s->q, s->o, s->d_o, s->dq}, *kv_like[] = {s->k, s->v, s->dk, s->dv};
    for (int i = 3; i >= 0; i--) {
        bench_free(dev, kv_like[i], s->kv_bytes);
        bench_free(dev, q_like[i], s->q_bytes);
    }
}

/* One pass: creates its cp object, runs it once, then reps timed times, and
 * prints its row on rank 0. Returns 0 or -1 (on every rank). */
static int run_pass(const options_t *o, const sdpa_backend_iface_t *be, sdpa_context_t *ctx,
                    bench_device_t *dev, shards_t *s, sdpa_prop_kind_t kind, sdpa_cp_t **keep)
{
    sdpa_problem_desc_t p;
    memset(&p, 0, sizeof(p));
    p.struct_size = sizeof(p);
    p.struct_version = SDPA_PROBLEM_DESC_VERSION;
    p.prop_kind = kind;
    p.q = p.dst = dense(o, o->heads);
    p.k = p.v = dense(o, o->kv_heads);
    p.mask_kind = o->causal ? SDPA_MASK_CAUSAL_TOP_LEFT : SDPA_MASK_NONE;
    p.scale_kind = SDPA_SCALE_HOST;
    if (kind == SDPA_BACKWARD) {
        p.diff_dst = p.diff_q = p.q;
        p.diff_k = p.diff_v = p.k;
        p.deterministic = (uint32_t)o->deterministic;
    }
    sdpa_cp_desc_t d = {.struct_size = sizeof(d), .struct_version = SDPA_CP_DESC_VERSION,
                        .comm = MPI_COMM_WORLD, .backend = be, .context = ctx,
                        .ze_context = dev->context, .ze_device = dev->device,
                        .layout = o->layout, .problem = &p};
    double started = MPI_Wtime();
    sdpa_cp_t *cp = NULL;
    if (sdpa_cp_create(&d, &cp) != SDPA_SUCCESS) {
        fprintf(stderr, "rank %d: sdpa_cp_create: %s\n", rank, sdpa_cp_last_error());
        return -1;
    }
    double create_seconds = MPI_Wtime() - started;
    sdpa_exec_args_t a = {.struct_size = sizeof(a), .struct_version = SDPA_EXEC_ARGS_VERSION,
                          .q = s->q, .k = s->k, .v = s->v, .dst = s->o, .workspace = s->lse,
                          .scale = 0.088388f, .diff_dst = s->d_o, .diff_q = s->dq,
                          .diff_k = s->dk, .diff_v = s->dv};
    double seconds = 0;
    for (int r = 0; r <= o->reps; r++) {
        if (r == 1)
            sdpa_cp_reset_stats(cp); /* the warm-up is not counted */
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (sdpa_cp_execute(cp, &a) != SDPA_SUCCESS) {
            fprintf(stderr, "rank %d: sdpa_cp_execute: %s\n", rank, sdpa_cp_last_error());
            sdpa_cp_destroy(cp);
            return -1;
        }
        if (r > 0)
            seconds += MPI_Wtime() - t0;
    }
    sdpa_cp_stats_t st = {.struct_size = sizeof(st), .struct_version = SDPA_CP_STATS_VERSION};
    size_t cp_bytes = 0;
    char transport[256];
    sdpa_cp_get_stats(cp, &st);
    sdpa_cp_query(cp, SDPA_CP_QUERY_MEMORY_BYTES, &cp_bytes, sizeof(cp_bytes));
    sdpa_cp_query(cp, SDPA_CP_QUERY_TRANSPORT, transport, sizeof(transport));

    /* Per execution: the largest over ranks, and sums for the overlap. */
    double n = (double)o->reps;
    double mine[7] = {seconds / n, (double)st.bytes_sent / n, st.comm_seconds / n,
                      st.exposed_comm_seconds / n, (double)(dev->peak_bytes + cp_bytes),
                      create_seconds, st.host_seconds / n};
    double most[7], sum[2], parts[2] = {st.comm_seconds, st.exposed_comm_seconds};
    MPI_Reduce(mine, most, 7, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(parts, sum, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        const double mib = 1024.0 * 1024.0;
        char overlap[32] = "-";
        if (ranks > 1 && sum[0] > 0)
            snprintf(overlap, sizeof(overlap), "%.0f%%", 100.0 * (1.0 - sum[1] / sum[0]));
        printf("| %d | %lld | %lld | %s | %.0f | %.0f | %.1f | %.1f | %.1f | %s | %.1f | %.1f | "
               "%.1f |\n",
               ranks, (long long)o->seq, (long long)o->local, kind == SDPA_BACKWARD ? "bwd" : "fwd",
               most[0] * 1e3, most[0] * 1e3 / ranks, most[1] / mib, most[2] * 1e3,
               most[3] * 1e3, overlap, most[6] * 1e3, most[4] / mib, most[5]);
        if (kind == SDPA_FORWARD_TRAINING)
            printf("<!-- %s -->\n", transport);
        fflush(stdout);
    }
    if (kind == SDPA_BACKWARD || keep == NULL)
        sdpa_cp_destroy(cp);
    else
        *keep = cp;
    return 0;
}

int main(int argc, char **argv)
{
    zeInit(0); /* before MPI_Init, as tests/cp/test_cp.c (either order works) */
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    options_t o;
    int rc = parse(argc, argv, &o);
    bench_device_t dev;
    sdpa_backend_t *backend = NULL;
    sdpa_context_t *ctx = NULL;
    shards_t s;
    memset(&s, 0, sizeof(s));
    const sdpa_backend_iface_t *be = NULL;
    if (rc == 0)
        rc = bench_device_open(&dev);
    if (rc == 0 && sdpa_backend_open(NULL, &backend) != SDPA_SUCCESS) {
        fprintf(stderr, "rank %d: %s\n", rank, sdpa_loader_last_error());
        rc = -1;
    }
    if (rc == 0) {
        be = sdpa_backend_get_iface(backend);
        sdpa_context_desc_t cd = {.struct_size = sizeof(cd),
                                  .struct_version = SDPA_CONTEXT_DESC_VERSION,
                                  .ze_context = dev.context, .ze_device = dev.device};
        if (be->context_create(&cd, &ctx) != SDPA_SUCCESS) {
            fprintf(stderr, "rank %d: context_create: %s\n", rank, be->last_error());
            rc = -1;
        }
    }
    if (rc == 0)
        rc = shards_alloc(&dev, &o, &s);
    int all = 0;
    MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (all == 0) {
        if (rank == 0)
            printf("<!-- %s, B1 H%lld Hkv%lld D%lld %s %s %s, %d reps -->\n", dev.name,
                   (long long)o.heads, (long long)o.kv_heads, (long long)o.head_size,
                   sdpa_dtype_name(o.dtype), o.causal ? "causal" : "no mask",
                   o.layout == SDPA_CP_LAYOUT_ZIGZAG ? "zigzag" : "contiguous", o.reps);
        sdpa_cp_t *fwd = NULL;
        all = run_pass(&o, be, ctx, &dev, &s, SDPA_FORWARD_TRAINING, &fwd);
        if (all == 0 && o.backward)
            all = run_pass(&o, be, ctx, &dev, &s, SDPA_BACKWARD, NULL);
        sdpa_cp_destroy(fwd);
    }
    shards_free(&dev, &s);
    if (ctx)
        be->context_destroy(ctx);
    sdpa_backend_close(backend);
    bench_device_close(&dev);
    MPI_Finalize();
    return all == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
