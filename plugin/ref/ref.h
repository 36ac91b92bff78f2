/*
 * ref.h - the host reference backend ("ref"): the sdpa.h ABI computed on the
 * host in double precision, the oracle the tests compare every other backend
 * against.
 *
 * It executes synchronously on the calling thread (and worker threads it
 * joins before returning): primitive_execute waits for args->wait_events on
 * the host, computes, signals args->signal_event and returns. It appends
 * nothing to any command list, so ordering with device work goes through
 * those events. All pointers must be host-accessible: plain host memory when
 * the context has no ze_context, or host/shared USM (device USM is refused).
 *
 * Numerics: inputs are decoded exactly (f16/bf16, dequantized integers),
 * every sum accumulates in double whatever kq_acc_dtype / vs_acc_dtype ask
 * (an F16 request is accepted and computed in double), and each output is
 * rounded once, to nearest even. Results are deterministic: work is split
 * so that every output element has one owner summing in a fixed order.
 * Backward recomputes P in double from Q, K, the scale and the mask; it does
 * not read the workspace or O (both must still be passed, as the ABI says).
 */
#ifndef SDPA_REF_H
#define SDPA_REF_H

#include <stdint.h>

#include "element.h"
#include "live_list.h"
#include "problem.h"
#include "sdpa.h"

struct sdpa_context {
    ze_context_handle_t ze_context; /* NULL: plain host memory, no events */
    ze_device_handle_t ze_device;
    /* Live primitives: context_destroy orphans them (sdpa.h, "Lifetime");
     * they hold no Level Zero object, so orphaning only unbinds them. */
    sdpa_live_list_t primitives;
};

struct sdpa_primitive {
    sdpa_live_link_t link;
    sdpa_context_t *ctx;         /* NULL once the context is destroyed (orphaned) */
    sdpa_problem_desc_t problem; /* checked and normalized (attention) */
    sdpa_shape_t shape;
    int is_merge;            /* made by merge_create: merge, not problem */
    sdpa_merge_desc_t merge; /* checked and normalized (merge) */
};

/* ref_context.c */
sdpa_status_t ref_context_create(const sdpa_context_desc_t *desc, sdpa_context_t **out);
void ref_context_destroy(sdpa_context_t *ctx);
sdpa_status_t ref_context_get_features(sdpa_context_t *ctx, sdpa_features_t *out);
sdpa_status_t ref_context_query(sdpa_context_t *ctx, sdpa_query_t what, void *out, size_t out_size);

/* ref_primitive.c */
/* A copy of made (a checked problem or merge) bound to ctx and on its list
 * of live primitives, in *out; creation's last step. */
sdpa_status_t ref_primitive_add(sdpa_context_t *ctx, const sdpa_primitive_t *made,
                                sdpa_primitive_t **out);
sdpa_status_t ref_primitive_create(sdpa_context_t *ctx, const sdpa_problem_desc_t *desc,
                                   sdpa_primitive_t **out);
void ref_primitive_destroy(sdpa_primitive_t *prim);
sdpa_status_t ref_primitive_query(sdpa_primitive_t *prim, sdpa_query_t what, void *out,
                                  size_t out_size);
sdpa_status_t ref_primitive_execute(sdpa_primitive_t *prim, const sdpa_exec_args_t *args);
/* ABI 1.2: what ref_primitive_create would do with desc (sdpa.h). */
sdpa_status_t ref_primitive_supports(sdpa_context_t *ctx, const sdpa_problem_desc_t *desc,
                                     sdpa_support_t *out);

/* ref_memory.c */

/* A pointer an execution uses, and its member name for messages. */
typedef struct ref_pointer {
    const char *member;
    const void *pointer;
} ref_pointer_t;

/* The events of an execution (sdpa_exec_args_t or sdpa_merge_args_t). */
typedef struct ref_events {
    ze_event_handle_t signal_event;
    uint32_t num_wait_events;
    ze_event_handle_t *wait_events;
} ref_events_t;

ref_events_t ref_exec_events(const sdpa_exec_args_t *args);

/* With a ze_context, refuses device USM among the count pointers of list
 * (SDPA_ERROR_UNSUPPORTED naming the member); without one, refuses events
 * (SDPA_ERROR_INVALID_ARGUMENT). */
sdpa_status_t ref_check_pointers(const sdpa_context_t *ctx, const ref_pointer_t *list, int count,
                                 const ref_events_t *events);
/* ref_check_pointers on every pointer the problem uses. */
sdpa_status_t ref_check_memory(const sdpa_context_t *ctx, const sdpa_problem_desc_t *problem,
                               const sdpa_exec_args_t *args);
/* Waits on the host for the wait events. */
sdpa_status_t ref_wait_events(const sdpa_context_t *ctx, const ref_events_t *events);
/* Signals the signal event from the host, if any. */
sdpa_status_t ref_signal_event(const sdpa_context_t *ctx, const ref_events_t *events);

/* ref_merge.c: merge primitives (sdpa.h, ABI 1.1). */
sdpa_status_t ref_merge_create(sdpa_context_t *ctx, const sdpa_merge_desc_t *desc,
                               sdpa_primitive_t **out);
sdpa_status_t ref_merge_execute(sdpa_primitive_t *prim, const sdpa_merge_args_t *args);

/* ------------------------------------------------------------------------- */
/* One execution                                                             */
/* ------------------------------------------------------------------------- */

/* Everything a forward or backward pass reads, with the scalars behind
 * device pointers already fetched. */
typedef struct ref_exec {
    const sdpa_problem_desc_t *problem;
    const sdpa_shape_t *shape; /* the logical problem (problem.h) */
    const sdpa_exec_args_t *args;
    double score_scale; /* s_ij = cap(score_scale * q_i.k_j) + bias_ij + mask_ij */
    double softcap;     /* 0: off */
    int dropout;        /* dropout enabled */
    float dropout_p;
    uint64_t dropout_seed, dropout_offset;
} ref_exec_t;

/* Fills x from a checked problem and arguments, reading the device scale and
 * dropout scalars on the host, and checks what only the host can: the
 * values of the varlen and paged arrays (sdpa.h: cumulative lengths from 0,
 * non-decreasing, within the packed tensors and the maxima; cache lengths
 * within the block table; the blocks a sequence uses inside the cache).
 * SDPA_ERROR_INVALID_ARGUMENT names the entry that breaks a rule. */
sdpa_status_t ref_exec_init(ref_exec_t *x, const sdpa_problem_desc_t *problem,
                            const sdpa_shape_t *shape, const sdpa_exec_args_t *args);

/* One sequence b of the problem (sdpa.h, varlen and paged KV): where its
 * queries and keys live and how many there are. */
typedef struct ref_seq {
    int64_t b;            /* index in the logical batch */
    int64_t qb, q0;       /* dims[0] and first dims[2] index of its queries in q, dst */
    int64_t len_q, len_k; /* its queries and keys */
    int64_t kb, k0;       /* dims[0] and first dims[2] index of its keys (not paged) */
    const int32_t *blocks; /* paged: its row of the block table, else NULL */
    int64_t block_size;
} ref_seq_t;

void ref_seq_of(const ref_exec_t *x, int64_t b, ref_seq_t *out);

/* The dims[0] and dims[2] index in k and v of key j of seq. */
static inline void ref_key_row(const ref_seq_t *seq, int64_t j, int64_t *i0, int64_t *i2)
{
    if (seq->blocks != NULL) {
        *i0 = seq->blocks[j / seq->block_size];
        *i2 = j % seq->block_size;
    } else {
        *i0 = seq->kb;
        *i2 = seq->k0 + j;
    }
}

/* The sink logit of query head h (sdpa.h, sinks), -inf without sinks: a
 * sink of -inf joins no denominator. */
double ref_sink(const ref_exec_t *x, int64_t h);

/* ref_forward.c / ref_backward.c: compute everything the problem asks for.
 * Fail only with SDPA_ERROR_OUT_OF_HOST_MEMORY. */
sdpa_status_t ref_forward(const ref_exec_t *x);
sdpa_status_t ref_backward(const ref_exec_t *x);

/* Offset in elements of (i0, i1, i2, i3) in tensor t. */
static inline int64_t ref_offset(const sdpa_tensor_desc_t *t, int64_t i0, int64_t i1, int64_t i2,
                                 int64_t i3)
{
    return i0 * t->strides[0] + i1 * t->strides[1] + i2 * t->strides[2] + i3 * t->strides[3];
}

/* ------------------------------------------------------------------------- */
/* K and V of one head (ref_dequant.c)                                       */
/* ------------------------------------------------------------------------- */

/* A head's K or V as dense doubles in the two panel layouts the blocked
 * products stream through (groups of REF_PANEL consecutive keys or dims
 * stored together, zero-padded at the end):
 *   key panels [ceil(Sk/4)][D][4]: (j, d) at ((j / 4) * D + d) * 4 + j % 4
 *   dim panels [ceil(D/4)][Sk][4]: (j, d) at ((d / 4) * Sk + j) * 4 + d % 4 */
#define REF_PANEL 4

typedef struct ref_head {
    double *key_panels; /* or NULL if not needed */
    double *dim_panels; /* or NULL if not needed */
} ref_head_t;

/* Doubles in each layout. */
static inline size_t ref_key_panels_size(int64_t sk, int64_t dims)
{
    return (size_t)((sk + REF_PANEL - 1) / REF_PANEL) * REF_PANEL * (size_t)dims;
}
static inline size_t ref_dim_panels_size(int64_t sk, int64_t dims)
{
    return (size_t)((dims + REF_PANEL - 1) / REF_PANEL) * REF_PANEL * (size_t)sk;
}

/* Reads the keys of seq (K for which = 'k', V for 'v') of K/V head h into
 * the non-NULL layouts of out (sized for shape->k_len keys; the rest zero),
 * dequantized as (q - zero_point) * scale for integer types. */
void ref_load_head(const ref_exec_t *x, char which, const ref_seq_t *seq, int64_t h,
                   ref_head_t *out);

/* ------------------------------------------------------------------------- */
/* Blocked products (ref_blocked.c)                                          */
/* ------------------------------------------------------------------------- */

/* Queries processed together: row blocks are REF_ROWS rows (unused rows
 * zero), so every K or V element loaded feeds REF_ROWS multiply-adds. */
#define REF_ROWS 4

/* out[r][j] = sum_d x[r][d] * m[j][d] for r < REF_ROWS, j < n, with m in key
 * panels (sk keys); x is REF_ROWS x dims, out REF_ROWS x sk. */
void ref_rows_times_keys(const double *x, int64_t dims, const double *key_panels, int64_t sk,
                         int64_t n, double *out);

/* out[r][d] = sum_{j<n} w[r][j] * m[j][d], with m in dim panels (sk keys);
 * w is REF_ROWS x sk, out REF_ROWS x dims. */
void ref_weights_times_dims(const double *w, int64_t sk, int64_t n, const double *dim_panels,
                            int64_t dims, double *out);

/* acc[j][d] += sum_r w[r][j] * x[r][d] for j < n; w is REF_ROWS x sk, x
 * REF_ROWS x dims, acc sk x dims (row-major). */
void ref_accumulate_outer(const double *w, int64_t sk, int64_t n, const double *x, int64_t dims,
                          double *acc);

/* ------------------------------------------------------------------------- */
/* Scores and probabilities of a block of queries (ref_attention.c)          */
/* ------------------------------------------------------------------------- */

/* The probabilities of queries i0 .. i0 + rows - 1 (rows <= REF_ROWS) of
 * query head h of seq: p[r][j] = softmax_j(s_ij) with s_ij =
 * cap(score_scale * q_i.k_j) + ALiBi bias + mask, -inf outside the causal
 * band and the window (sdpa.h), from K in key panels and the query rows q
 * (REF_ROWS x D, rows beyond rows zero). p is REF_ROWS x shape->k_len; rows
 * beyond rows are zeroed. lse[r] gets the log-sum-exp (natural log, scale
 * included, the head's sink in the sum): -inf for a fully masked row
 * without a sink, whose p is NaN in an ACCURATE forward and 0 otherwise
 * (sdpa.h); with a sink such a row's p is 0 and its lse the sink.
 * cap_grad (NULL: not wanted) gets the softcap's derivative 1 - tanh^2 (1
 * without a softcap), laid out like p.
 * Returns n: every p[r][j] with j >= n is 0 (keys no row sees). */
int64_t ref_probabilities(const ref_exec_t *x, const ref_seq_t *seq, const double *k_panels,
                          int64_t h, int64_t i0, int rows, const double *q, double *p,
                          double *lse, double *cap_grad);

/* Dropout of query i of head (b, h): keep[j] = 1 for kept elements, and the
 * factor kept values are multiplied by (1 / (1 - p)); without dropout every
 * keep[j] is 1 and the factor 1. */
double ref_dropout_row(const ref_exec_t *x, int64_t b, int64_t h, int64_t i, uint8_t *keep);

/* ------------------------------------------------------------------------- */
/* Threads (ref_parallel.c)                                                  */
/* ------------------------------------------------------------------------- */

/* How many workers ref_parallel_run will use for items work items (at least
 * 1): the online CPUs, at most items. */
int ref_worker_count(int64_t items);

/* Calls task(context, item, worker) for every item in 0..items-1 on workers
 * 0..workers-1 (worker 0 is the calling thread) and returns when all are
 * done. If a thread cannot be started its share runs on the others. */
void ref_parallel_run(int workers, int64_t items,
                      void (*task)(void *context, int64_t item, int worker), void *context);

#endif /* SDPA_REF_H */
