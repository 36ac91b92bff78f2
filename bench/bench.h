/*
 * bench.h - the benchmark's pieces: cases, the Level Zero device with
 * allocation accounting, our backend's measurement, the host baselines
 * (naive materialized attention and sgemm throughput, OpenBLAS), and the
 * repetition policy they share.
 *
 * Numbers the benchmark reports, per case:
 *   ours:  median wall time of N executions after one warm-up, each waited
 *          for on an event the execution signals; FLOP/s from the model
 *          flops (bench_case_flops); the minimum bytes moved; peak bytes of
 *          every Level Zero allocation the case made.
 *   naive: f32 materialized attention with OpenBLAS sgemm, one head's S x S
 *          at a time, all heads timed.
 *   sgemm: throughput of a square sgemm with the case's flops.
 */
#ifndef SDPA_BENCH_H
#define SDPA_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include <level_zero/ze_api.h>

#include "sdpa.h"

/* ------------------------------------------------------------------------- */
/* Cases (bench_cases.c)                                                     */
/* ------------------------------------------------------------------------- */

typedef enum bench_pass {
    BENCH_FORWARD = 0,  /* inference forward: O from Q, K, V */
    BENCH_BACKWARD = 1, /* dQ, dK, dV from Q, K, V, O, dO and the log-sum-exp */
} bench_pass_t;

typedef struct bench_case {
    const char *name;  /* what --case selects */
    const char *about; /* one line for the listing */
    bench_pass_t pass;
    int64_t batch, q_heads, kv_heads, q_len, k_len, head_size;
    sdpa_dtype_t dtype;
    sdpa_mask_kind_t mask; /* SDPA_MASK_NONE or SDPA_MASK_CAUSAL_BOTTOM_RIGHT */
    /* K and V: SDPA_DTYPE_UNDEF (dtype, like Q), s8 / s4 with f16 scales
     * per group of BENCH_KV_GROUP head_dim elements and no zero points, or
     * f8_e4m3 / f8_e5m2 with one f32 scale per tensor (vLLM's FP8 cache). */
    sdpa_dtype_t kv_dtype;
    int deterministic;  /* backward: the deterministic mode (no atomics) */
    int max_reps;       /* at most this many timed runs (small cases: many) */
    int in_default_run; /* 0: only when named with --case */
    /* Forward: sdpa_problem_desc_t.num_splits (0: the backend decides). */
    uint32_t num_splits;
    /* > 0: a sliding window (ABI 1.1), query i sees keys j >= pos_i -
     * window_left (pos_i = i + Sk - Sq); with the causal mask, right 0. */
    int64_t window_left;
    /* > 0: a varlen batch (ABI 1.1) of this many packed sequences,
     * varlen_lens[i] queries and keys each; batch is then 1 and q_len =
     * k_len their total (the packed tensors). Naive and torch: n/a. */
    int varlen_count;
    const int64_t *varlen_lens;
    /* > 0: K and V live in a paged cache (ABI 1.1 paged_kv) of blocks of this
     * many keys, [B * Sk / size, Hkv, size, D], each sequence's blocks
     * interleaved with the others' through the block table (k_len a
     * multiple of the size). The same keys as the dense case: naive and
     * torch run on the dense layout. */
    int64_t paged_block_size;
    /* > 0: V's head size Dv apart from Q's and K's (ABI 1.2): V is the
     * first Dv elements of rows D long (its own buffer, or K's with
     * v_view_of_k, MLA's form), O and dO rows of Dv in buffers laid out
     * as Q's. Naive and torch: n/a. */
    int64_t head_size_v;
    int v_view_of_k;
    /* 1: attention sinks (ABI 1.2, gpt-oss), one f32 logit per query head
     * (bench_host_t.sinks) in every row's softmax denominator. The naive
     * baseline adds them; torch: n/a. */
    int sinks;
} bench_case_t;

/* Head-dim elements per scale of a quantized K or V. */
#define BENCH_KV_GROUP 32

/* The dtype K and V are stored in. */
sdpa_dtype_t bench_kv_dtype(const bench_case_t *c);

/* The case table; *count gets its length. */
const bench_case_t *bench_cases(size_t *count);

/* The sequence-length sweep (--sweep, the plot): one shape, S = Sq = Sk from
 * 256 to 4096, forward and backward; *count gets its length. */
const bench_case_t *bench_sweep_cases(size_t *count);

/* Model flops: forward 4 * B * Hq * Sq * Sk * D (two products of 2D flops
 * per query-key pair; 2 (D + Dv) with V's own head size), halved under a
 * causal mask when Sq == Sk (the usual convention; for Sq != Sk the
 * visible pairs are counted); backward 2.5 times the forward (five
 * products instead of two). */
double bench_case_flops(const bench_case_t *c);

/* The least bytes a pass must move: forward reads Q, K, V once and writes O;
 * backward reads Q, K, V, O, dO and the f32 log-sum-exp and writes dQ, dK,
 * dV. */
double bench_case_min_bytes(const bench_case_t *c);

/* Elements of Q (= O) and of K (= V). */
int64_t bench_q_elements(const bench_case_t *c);
int64_t bench_kv_elements(const bench_case_t *c);

/* Decode rows: forward with at most BENCH_DECODE_MAX_Q queries per head,
 * bound by reading K and V; they get the streaming-read baseline. */
#define BENCH_DECODE_MAX_Q 8
int bench_case_is_decode(const bench_case_t *c);

/* "fwd" or "bwd". */
const char *bench_pass_name(bench_pass_t pass);

/* ------------------------------------------------------------------------- */
/* Host data                                                                 */
/* ------------------------------------------------------------------------- */

/* A case's inputs and outputs on the host, as f32 (inputs already rounded to
 * the case's dtype, so ours and the baseline see the same numbers). Dense
 * [B, H, S, D]. */
typedef struct bench_host {
    float *q, *k, *v;
    float *diff_dst; /* backward only */
    float scale;     /* 1 / sqrt(D) */
    /* Quantized K/V: every group's scale (f16-exact); k and v hold integers
     * times it, so both sides see the same values. */
    float kv_scale;
    float *sinks; /* sinks: one logit per query head [Hq], else NULL */
} bench_host_t;

/* Allocates and fills h with reproducible values in [-1, 1). Returns 0, or
 * -1 (out of memory, h left empty). */
int bench_host_create(const bench_case_t *c, bench_host_t *h);
void bench_host_destroy(bench_host_t *h);

/* Results one side produced, as f32: O for forward; dQ, dK, dV for backward. */
typedef struct bench_outputs {
    float *dst;
    float *diff_q, *diff_k, *diff_v;
} bench_outputs_t;

int bench_outputs_create(const bench_case_t *c, bench_outputs_t *out);
void bench_outputs_destroy(bench_outputs_t *out);

/* ------------------------------------------------------------------------- */
/* Repetition (bench_repeat.c)                                               */
/* ------------------------------------------------------------------------- */

typedef struct bench_policy {
    int reps;      /* > 0: exactly this many timed runs */
    double budget; /* otherwise: seconds of timed runs to aim for ... */
    int min_reps;  /* ... but at least this many ... */
} bench_policy_t;

/* One timed run: returns its duration in seconds, or a negative value on
 * failure (after printing why). */
typedef double (*bench_run_fn)(void *context);

/* Runs run once as a warm-up, then as many times as policy allows (at most
 * max_reps), and stores the median duration and the count. Returns 0, or -1
 * if a run failed. */
int bench_repeat(const bench_policy_t *policy, int max_reps, bench_run_fn run, void *context,
                 double *median, int *reps);

/* The median of count values (sorting them); NaN if count is 0. */
double bench_median(double *values, int count);

/* Wall-clock seconds (CLOCK_MONOTONIC): progress, totals, module builds. */
double bench_seconds_now(void);

/* The clock the timed runs read: wall-clock seconds, or with BENCH_CLOCK=cpu
 * the CPU seconds of the whole process (every thread: the device runtime's
 * workers, OpenBLAS's), which a loaded shared machine inflates far less than
 * wall-clock time. bench_cpu_clock() says which. */
double bench_run_seconds_now(void);
int bench_cpu_clock(void);

/* ------------------------------------------------------------------------- */
/* Level Zero (bench_device.c)                                               */
/* ------------------------------------------------------------------------- */

typedef struct bench_device {
    ze_driver_handle_t driver;
    ze_device_handle_t device;
    ze_context_handle_t context;
    ze_command_list_handle_t list; /* in-order immediate list the backend appends to */
    ze_event_pool_handle_t event_pool;
    ze_event_handle_t done; /* host-visible; executions signal it */
    char name[256];
    ze_device_type_t type;
    int shared_memory; /* 1: tensors in shared USM (the ref backend needs it) */
    size_t live_bytes; /* bytes of Level Zero allocations alive now */
    size_t peak_bytes; /* the most live_bytes has been since bench_peak_reset */
} bench_device_t;

/* Opens the first driver's first device. Returns 0, or -1 after printing
 * why (bench_device_close releases what was created). */
int bench_device_open(bench_device_t *d);
void bench_device_close(bench_device_t *d);

/* Device (or, with shared_memory, shared) USM of bytes bytes, counted in
 * live_bytes/peak_bytes. NULL after printing why. */
void *bench_alloc(bench_device_t *d, size_t bytes);
/* Frees what bench_alloc returned (NULL ignored). */
void bench_free(bench_device_t *d, void *pointer, size_t bytes);
/* Starts a new peak: peak_bytes = live_bytes. */
void bench_peak_reset(bench_device_t *d);

/* Copies bytes between host and USM on the device's list and waits. */
int bench_copy(bench_device_t *d, void *dst, const void *src, size_t bytes);

/* Waits on the host for d->done and resets it. Returns 0 or -1. */
int bench_wait_done(bench_device_t *d);

/* Uploads count values of an s8, s4 or FP8 tensor, given as integers (FP8
 * values) times scale (exact), packed two per byte for s4 (low nibble
 * first). */
int bench_upload_int(bench_device_t *d, void *dst, const float *src, int64_t count,
                     sdpa_dtype_t dtype, float scale);

/* Uploads count f32 values as dtype to USM, and downloads back to f32. */
int bench_upload(bench_device_t *d, void *dst, const float *src, int64_t count, sdpa_dtype_t dtype);
int bench_download(bench_device_t *d, float *dst, const void *src, int64_t count,
                   sdpa_dtype_t dtype);

/* ------------------------------------------------------------------------- */
/* Our backend (bench_ours.c)                                                */
/* ------------------------------------------------------------------------- */

typedef struct bench_backend {
    sdpa_backend_t *backend;
    const sdpa_backend_iface_t *iface;
    sdpa_context_t *ctx;
    sdpa_features_t features;
} bench_backend_t;

typedef struct bench_ours {
    double seconds; /* median */
    int reps;
    double create_ms;  /* primitive creation (kernel build included) */
    size_t peak_bytes; /* every Level Zero allocation of the case */
    size_t scratch_bytes, workspace_bytes;
    char config[128];
} bench_ours_t;

/* The problem of case c for kind (inference, training or backward), dense. */
sdpa_problem_desc_t bench_make_problem(const bench_case_t *c, sdpa_prop_kind_t kind);

/* Opens backend name through the front loader and creates a context on d.
 * Returns 0, or -1 after printing why. */
int bench_backend_open(const char *name, bench_device_t *d, bench_backend_t *b);
void bench_backend_close(bench_backend_t *b);

/* Measures our backend on case c with inputs h and stores the results of the
 * last run in out. Returns 0, or -1 after printing why. */
int bench_run_ours(bench_device_t *d, const bench_backend_t *b, const bench_case_t *c,
                   const bench_host_t *h, const bench_policy_t *policy, bench_outputs_t *out,
                   bench_ours_t *result);

/* ------------------------------------------------------------------------- */
/* Host baselines (bench_naive.c; only with OpenBLAS)                        */
/* ------------------------------------------------------------------------- */

typedef struct bench_naive {
    double seconds; /* median */
    int reps;
    size_t bytes;           /* host memory it allocated: f32 tensors + one head's S x S */
    size_t all_heads_bytes; /* the same with every head's S x S at once (a math path) */
} bench_naive_t;

typedef struct bench_sgemm {
    int64_t n;     /* M = N = K */
    double gflops; /* median throughput */
    int reps;
} bench_sgemm_t;

/* 1 if the baselines are built in (configure found OpenBLAS). */
int bench_have_baselines(void);

/* Prints the OpenBLAS core type and thread count the baselines use. */
void bench_describe_baselines(void);

/* Naive materialized attention (forward or backward as c->pass says) in f32
 * on the host into out. Returns 0, or -1 after printing why. */
int bench_run_naive(const bench_case_t *c, const bench_host_t *h, const bench_policy_t *policy,
                    bench_outputs_t *out, bench_naive_t *result);

/* Throughput of a square sgemm doing about flops floating-point operations. */
int bench_run_sgemm(double flops, const bench_policy_t *policy, bench_sgemm_t *result);

/* ------------------------------------------------------------------------- */
/* The streaming-read baseline of the decode rows (bench_stream.c)           */
/* ------------------------------------------------------------------------- */

typedef struct bench_stream {
    double seconds; /* median time to read bytes once */
    double bytes;   /* bench_case_min_bytes of the case */
    int threads;    /* one per online core */
    int reps;
} bench_stream_t;

/* Times reading the case's least bytes (bench_case_min_bytes) from host
 * memory with one thread per online core, each summing its share; the
 * same buffer every run, as the backend reads the same K/V every run.
 * Returns 0, or -1 (out of memory or threads). */
int bench_run_stream(const bench_case_t *c, const bench_policy_t *policy, bench_stream_t *result);

/* ------------------------------------------------------------------------- */
/* The PyTorch peer (bench_torch.c, torch_peer.py)                           */
/* ------------------------------------------------------------------------- */

typedef struct bench_torch {
    double seconds; /* median */
    int reps;
    char backend[16]; /* the kernel PyTorch was held to: "flash" (or "math") */
    char why[160];    /* why there is no time, when bench_torch_run fails */
} bench_torch_t;

/* 1 if $BENCH_PYTHON names a Python with torch >= 2.5; about gets its
 * version and thread count, or (0) why the column is skipped. */
int bench_torch_probe(char *about, size_t size);

/* PyTorch's CPU scaled_dot_product_attention on case c (fresh inputs of the
 * same shapes and dtype; forward in inference mode, backward through
 * autograd over one recorded forward), timed with the same policy. Returns
 * 0, or -1 with result->why saying why (quantized K/V: not applicable). */
int bench_torch_run(const bench_case_t *c, const bench_policy_t *policy, bench_torch_t *result);

/* ------------------------------------------------------------------------- */
/* Progress on stderr (bench_progress.c)                                     */
/* ------------------------------------------------------------------------- */

/* Starts a progress line for one measurement ("[2/9] bert-base fwd: ours"). */
void bench_progress_begin(const char *label);
/* After a timed run (done of total; done 0: after the warm-up). */
void bench_progress_update(int done, int total);
/* The measurement is over: clears the line on a terminal. */
void bench_progress_end(void);

/* ------------------------------------------------------------------------- */
/* Cold and warm creation, each in a process of its own (bench_create.c)     */
/* ------------------------------------------------------------------------- */

/* The benchmark's private persistent-cache directories: root, one
 * subdirectory per case, and main for the measuring process. */
typedef struct bench_cache_dirs {
    char root[4096];
    char main[4200];
    int keep; /* root was given (--cache-dir): not removed */
} bench_cache_dirs_t;

/* Makes root (a new directory in $TMPDIR, or given) and main, and points the
 * measuring process's persistent cache at main (SDPA_CACHE=1,
 * SDPA_CACHE_DIR: set before its context is created). Returns 0, or -1
 * after printing why. */
int bench_cache_dirs_open(const char *given, bench_cache_dirs_t *dirs);

/* Removes root and everything in it, unless it was given. */
void bench_cache_dirs_close(bench_cache_dirs_t *dirs);

typedef struct bench_create {
    int have;                /* both processes ran */
    double cold_ms, warm_ms; /* primitive_create of the case's primitive */
    unsigned long long cold_built, cold_hits, warm_built, warm_hits; /* modules */
    char why[160];                                                   /* when !have */
} bench_create_t;

/* Creates case c's primitive (inference forward, or backward) in a new
 * process with an empty cache directory (cold: it builds and stores), then in
 * another with the same directory (warm: it should load), and copies the
 * entries to dirs->main. index names the case's directory. Returns 0, or -1
 * with out->why. */
int bench_measure_create(const bench_case_t *c, int index, const bench_cache_dirs_t *dirs,
                         bench_create_t *out);

/* Runs the program at path with argv (NULL-terminated; argv[0] names it)
 * as a child process, its stdout captured, after setting in the child the
 * environment pairs env (NAME, VALUE, ..., NULL; env may be NULL). Stores
 * in line[line_size] the line of its output that starts at the first
 * occurrence of tag. Returns 0 if the child exited with status 0 and printed
 * tag; else -1 with why. */
int bench_run_child(const char *path, const char *const *argv, const char *const *env,
                    const char *tag, char *line, size_t line_size, char *why, size_t why_size);

/* The child's side (--create-only NAME): creates the primitive of case
 * name on the first device with the ze backend and prints
 * "CREATE ms=... built=... hits=... misses=...". Returns the exit status. */
int bench_create_only(const char *name);

/* ------------------------------------------------------------------------- */
/* Rows and output (bench_report.c)                                          */
/* ------------------------------------------------------------------------- */

/* One line of the table: a case and what each side measured. */
typedef struct bench_row {
    const bench_case_t *c;
    bench_create_t create; /* cold and warm creation */
    const char *skipped;   /* why it did not run, or NULL */
    int failed;            /* an error stopped it */
    bench_ours_t ours;
    int have_naive, have_sgemm, have_torch, have_stream;
    bench_naive_t naive;
    bench_sgemm_t sgemm;
    bench_stream_t stream; /* decode rows */
    bench_torch_t torch; /* torch.why says why when !have_torch */
    /* Accuracy against the naive baseline: largest |ours - naive|, largest
     * |naive|, and (forward) the tolerance of the dtype. */
    int checked;
    double max_err, max_ref, tol;
} bench_row_t;

/* 1 if the row's forward result is outside its tolerance. */
int bench_row_mismatch(const bench_row_t *row);

/* The table, with a column for the PyTorch peer when torch is 1. */
void bench_print_table(const bench_row_t *rows, int count, int torch);

/* One machine-readable line: "BENCH name=... key=value ...". */
void bench_print_line(const bench_row_t *row, const char *backend);

/* The medians of cold and warm creation over the rows that have them, per
 * pass, against the goals of doc/module-cache.md; the ratio of the cold
 * medians, backward to forward; and the modules the warm processes built
 * (the goal is none). */
void bench_print_create_summary(const bench_row_t *rows, int count);

/* --only-create: the creation columns alone, as a table, and one
 * machine-readable line per row ("BENCH name=... cold_create_ms=..."). */
void bench_print_create_table(const bench_row_t *rows, int count);
void bench_print_create_line(const bench_row_t *row);

/* Writes the rows as a tab-separated table for plots: GFLOP/s of ours, the
 * naive baseline, sgemm and torch against Sq and Sk ("NaN" where a side did
 * not run), after "# key: value" lines (title: device, CPU and date; note).
 * Returns 0, or -1 after printing why. */
int bench_write_data(const char *path, const bench_row_t *rows, int count, const char *device,
                     const char *note);

/* ------------------------------------------------------------------------- */
/* OpenBLAS environment (blas_env.c)                                         */
/* ------------------------------------------------------------------------- */

/* OpenBLAS reads OPENBLAS_CORETYPE when it is loaded, before main. If it (or
 * OPENBLAS_NUM_THREADS) is unset, sets it from the CPU's flags (avx512f:
 * SkylakeX, avx2: Haswell) and re-executes the program once so the library
 * sees it. Returns only when no re-execution is needed (or it failed). */
void blas_env_prepare(char **argv);

/* The core type chosen by blas_env_prepare, and why ("from CPU flag avx2",
 * "from the environment", ...). */
const char *blas_env_origin(void);

#endif /* SDPA_BENCH_H */
