/* bench_ours.c - our backend on one case: tensors in USM, primitives, timed
 * executions, results copied back for the accuracy check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "element.h"
#include "problem.h"

static void sdpa_failed(const sdpa_backend_iface_t *iface, const char *call, sdpa_status_t status)
{
    fprintf(stderr, "sdpa_bench: %s (%s) failed: %s: %s\n", call, iface->name,
            sdpa_status_name(status), iface->last_error());
}

int bench_backend_open(const char *name, bench_device_t *d, bench_backend_t *b)
{
    *b = (bench_backend_t){0};
    sdpa_status_t status = sdpa_backend_open(name, &b->backend);
    if (status != SDPA_SUCCESS) {
        fprintf(stderr, "sdpa_bench: sdpa_backend_open(\"%s\") failed: %s: %s\n", name,
                sdpa_status_name(status), sdpa_loader_last_error());
        return -1;
    }
    b->iface = sdpa_backend_get_iface(b->backend);
    sdpa_context_desc_t desc = {.struct_size = sizeof(desc),
                                .struct_version = SDPA_CONTEXT_DESC_VERSION,
                                .ze_context = d->context,
                                .ze_device = d->device,
                                .command_list = d->list};
    if ((status = b->iface->context_create(&desc, &b->ctx)) != SDPA_SUCCESS) {
        sdpa_failed(b->iface, "context_create", status);
        return -1;
    }
    b->features.struct_size = sizeof(b->features);
    b->features.struct_version = SDPA_FEATURES_VERSION;
    if ((status = b->iface->context_get_features(b->ctx, &b->features)) != SDPA_SUCCESS) {
        sdpa_failed(b->iface, "context_get_features", status);
        return -1;
    }
    return 0;
}

void bench_backend_close(bench_backend_t *b)
{
    if (b->iface)
        b->iface->context_destroy(b->ctx);
    sdpa_backend_close(b->backend);
    *b = (bench_backend_t){0};
}

/* ------------------------------------------------------------------------- */

sdpa_problem_desc_t bench_make_problem(const bench_case_t *c, sdpa_prop_kind_t kind)
{
    sdpa_tensor_desc_t q =
            sdpa_tensor_dense(c->dtype, c->batch, c->q_heads, c->q_len, c->head_size);
    sdpa_tensor_desc_t kv =
            sdpa_tensor_dense(bench_kv_dtype(c), c->batch, c->kv_heads, c->k_len, c->head_size);
    /* Dv != D: V, O and dO are views of Dv elements of rows laid out as
     * K's and Q's (bench.h). */
    sdpa_tensor_desc_t o = q;
    if (c->head_size_v > 0)
        o.dims[3] = c->head_size_v;
    sdpa_problem_desc_t p = {.struct_size = sizeof(p),
                             .struct_version = SDPA_PROBLEM_DESC_VERSION,
                             .prop_kind = kind,
                             .q = q,
                             .k = kv,
                             .v = kv,
                             .dst = o,
                             .mask_kind = c->mask,
                             .scale_kind = SDPA_SCALE_HOST,
                             .softmax_kind = SDPA_SOFTMAX_ACCURATE};
    if (sdpa_dtype_is_fp8(c->kv_dtype)) {
        const sdpa_quant_desc_t quant = {.scales = SDPA_QUANT_PER_TENSOR,
                                         .scales_dtype = SDPA_DTYPE_F32};
        p.k_quant = p.v_quant = quant;
    } else if (c->kv_dtype != SDPA_DTYPE_UNDEF) {
        const sdpa_quant_desc_t quant = {.scales = SDPA_QUANT_PER_GROUP,
                                         .scales_dtype = SDPA_DTYPE_F16,
                                         .group_size = BENCH_KV_GROUP};
        p.k_quant = p.v_quant = quant;
    }
    if (kind != SDPA_BACKWARD)
        p.num_splits = c->num_splits;
    if (c->sinks)
        p.sinks = 1;
    if (c->window_left > 0)
        p.window = (sdpa_window_desc_t){1, c->window_left, 0};
    if (c->varlen_count > 0) {
        int64_t longest = 0;
        for (int i = 0; i < c->varlen_count; i++)
            longest = c->varlen_lens[i] > longest ? c->varlen_lens[i] : longest;
        p.varlen = (sdpa_varlen_desc_t){1, c->varlen_count, longest, longest};
    }
    if (c->paged_block_size > 0) {
        const int64_t blocks = c->batch * (c->k_len / c->paged_block_size);
        p.k = p.v = sdpa_tensor_dense(bench_kv_dtype(c), blocks, c->kv_heads, c->paged_block_size,
                                      c->head_size);
        p.paged_kv = (sdpa_paged_kv_desc_t){1, c->k_len / c->paged_block_size, 0};
    }
    if (c->head_size_v > 0)
        p.v.dims[3] = c->head_size_v;
    if (kind == SDPA_BACKWARD) {
        p.deterministic = (uint32_t)c->deterministic;
        p.diff_dst = o;
        p.diff_q = q;
        p.diff_k = kv;
        p.diff_v = p.v;
    }
    return p;
}

/* Every USM buffer of a case, with its size for the accounting. */
enum { CASE_BUFFERS = 16 };
typedef struct case_memory {
    void *q, *k, *v, *dst, *workspace, *fwd_scratch;
    void *kv_scales; /* quantized K/V: f16 per group (FP8: one f32), shared by K and V */
    void *sinks;     /* attention sinks: f32 [Hq] */
    void *diff_dst, *diff_q, *diff_k, *diff_v, *bwd_scratch;
    void *cu_seqlens; /* varlen: int32 [count + 1], for queries and keys */
    size_t cu_count;
    void *block_table, *cache_seqlens; /* paged KV: int32 [B, blocks per sequence], [B] */
    size_t table_count, seq_count;
    size_t q_bytes, kv_bytes, kv_scales_bytes, sinks_bytes, workspace_bytes, fwd_scratch_bytes,
            bwd_scratch_bytes;
    /* What case_alloc allocated, in order: freed with the same sizes. */
    struct {
        void *pointer;
        size_t bytes;
    } allocated[CASE_BUFFERS];
    int allocated_count;
} case_memory_t;

static void case_memory_free(bench_device_t *d, case_memory_t *m)
{
    while (m->allocated_count > 0) {
        m->allocated_count--;
        bench_free(d, m->allocated[m->allocated_count].pointer,
                   m->allocated[m->allocated_count].bytes);
    }
}

/* Allocates *pointer (size bytes) unless size is 0, for m to free. */
static int case_alloc(bench_device_t *d, case_memory_t *m, void **pointer, size_t size)
{
    if (size == 0)
        return 0;
    if (m->allocated_count == CASE_BUFFERS)
        return -1;
    *pointer = bench_alloc(d, size);
    if (*pointer == NULL)
        return -1;
    m->allocated[m->allocated_count].pointer = *pointer;
    m->allocated[m->allocated_count].bytes = size;
    m->allocated_count++;
    return 0;
}

/* One timed execution: append, then wait for the event it signals. */
typedef struct timed_execution {
    bench_device_t *device;
    const sdpa_backend_iface_t *iface;
    sdpa_primitive_t *prim;
    sdpa_exec_args_t args;
} timed_execution_t;

static double execute_once(void *context)
{
    timed_execution_t *t = context;
    double start = bench_run_seconds_now();
    sdpa_status_t status = t->iface->primitive_execute(t->prim, &t->args);
    if (status != SDPA_SUCCESS) {
        sdpa_failed(t->iface, "primitive_execute", status);
        return -1.0;
    }
    if (bench_wait_done(t->device) != 0)
        return -1.0;
    return bench_run_seconds_now() - start;
}

/* Creates a primitive for problem, timing it, and allocates into m the scratch it
 * asks for (passed in args, so the accounting sees it). */
static int create_primitive(bench_device_t *d, const bench_backend_t *b,
                            const sdpa_problem_desc_t *problem, sdpa_primitive_t **prim,
                            case_memory_t *m, void **scratch, size_t *scratch_bytes,
                            double *create_ms)
{
    double start = bench_seconds_now();
    sdpa_status_t status = b->iface->primitive_create(b->ctx, problem, prim);
    if (status != SDPA_SUCCESS) {
        sdpa_failed(b->iface, "primitive_create", status);
        return -1;
    }
    *create_ms = (bench_seconds_now() - start) * 1e3;
    status = b->iface->primitive_query(*prim, SDPA_QUERY_SCRATCH_BYTES, scratch_bytes,
                                       sizeof(*scratch_bytes));
    if (status != SDPA_SUCCESS) {
        sdpa_failed(b->iface, "primitive_query(SCRATCH_BYTES)", status);
        return -1;
    }
    return case_alloc(d, m, scratch, *scratch_bytes);
}

/* Paged KV: the block of sequence b's t-th keys. The sequences' blocks
 * interleave (block t of every sequence, then t + 1), as a cache filled a
 * token at a time by all of them would have it. */
static int64_t paged_block_of(const bench_case_t *c, int64_t b, int64_t t)
{
    return t * c->batch + b;
}

/* The dense host K or V [B, Hkv, Sk, D] laid out as the paged cache
 * [blocks, Hkv, block size, D]; NULL when out of memory. */
static float *paged_copy(const bench_case_t *c, const float *dense_kv)
{
    const int64_t bs = c->paged_block_size, d = c->head_size, per_seq = c->k_len / bs;
    float *paged = malloc((size_t)bench_kv_elements(c) * sizeof(float));
    if (paged == NULL)
        return NULL;
    for (int64_t b = 0; b < c->batch; b++)
        for (int64_t h = 0; h < c->kv_heads; h++)
            for (int64_t t = 0; t < per_seq; t++) {
                const float *from = dense_kv + ((b * c->kv_heads + h) * c->k_len + t * bs) * d;
                float *to = paged + ((paged_block_of(c, b, t) * c->kv_heads + h) * bs) * d;
                memcpy(to, from, (size_t)(bs * d) * sizeof(float));
            }
    return paged;
}

/* The block table and cache lengths of a paged case, on the device. */
static int upload_paged_tables(bench_device_t *d, const bench_case_t *c, case_memory_t *m)
{
    const int64_t per_seq = c->k_len / c->paged_block_size;
    m->table_count = (size_t)(c->batch * per_seq);
    m->seq_count = (size_t)c->batch;
    int32_t *table = malloc(m->table_count * sizeof(int32_t));
    int32_t *lens = malloc(m->seq_count * sizeof(int32_t));
    int failed = table == NULL || lens == NULL;
    for (int64_t b = 0; !failed && b < c->batch; b++) {
        lens[b] = (int32_t)c->k_len;
        for (int64_t t = 0; t < per_seq; t++)
            table[b * per_seq + t] = (int32_t)paged_block_of(c, b, t);
    }
    failed = failed || case_alloc(d, m, &m->block_table, m->table_count * sizeof(int32_t)) ||
             case_alloc(d, m, &m->cache_seqlens, m->seq_count * sizeof(int32_t)) ||
             bench_copy(d, m->block_table, table, m->table_count * sizeof(int32_t)) ||
             bench_copy(d, m->cache_seqlens, lens, m->seq_count * sizeof(int32_t));
    free(lens);
    free(table);
    return failed ? -1 : 0;
}

int bench_run_ours(bench_device_t *d, const bench_backend_t *b, const bench_case_t *c,
                   const bench_host_t *h, const bench_policy_t *policy, bench_outputs_t *out,
                   bench_ours_t *result)
{
    const sdpa_backend_iface_t *iface = b->iface;
    case_memory_t m = {0};
    sdpa_primitive_t *fwd = NULL, *bwd = NULL;
    int rc = -1;
    *result = (bench_ours_t){0};
    bench_peak_reset(d);

    size_t elem = ((size_t)sdpa_dtype_bits(c->dtype) / 8);
    int64_t q_count = bench_q_elements(c), kv_count = bench_kv_elements(c);
    int quantized = c->kv_dtype != SDPA_DTYPE_UNDEF;
    m.q_bytes = (size_t)q_count * elem;
    m.kv_bytes = (size_t)(kv_count * sdpa_dtype_bits(bench_kv_dtype(c)) + 7) / 8;
    /* Paged: the same keys, in the cache's layout. */
    float *paged_k = NULL, *paged_v = NULL;
    const float *host_k = h->k, *host_v = h->v;
    if (c->paged_block_size > 0) {
        paged_k = paged_copy(c, h->k);
        paged_v = paged_copy(c, h->v);
        if (paged_k == NULL || paged_v == NULL || upload_paged_tables(d, c, &m) != 0)
            goto cleanup;
        host_k = paged_k;
        host_v = paged_v;
    }
    if (case_alloc(d, &m, &m.q, m.q_bytes) || case_alloc(d, &m, &m.k, m.kv_bytes) ||
        case_alloc(d, &m, &m.v, m.kv_bytes) || case_alloc(d, &m, &m.dst, m.q_bytes) ||
        bench_upload(d, m.q, h->q, q_count, c->dtype))
        goto cleanup;
    if (quantized) {
        /* FP8: one f32 scale per tensor; integers: f16 scales per group. */
        const int fp8 = sdpa_dtype_is_fp8(c->kv_dtype);
        const int64_t groups = fp8 ? 1 : kv_count / BENCH_KV_GROUP;
        const sdpa_dtype_t scales_dtype = fp8 ? SDPA_DTYPE_F32 : SDPA_DTYPE_F16;
        float *scales = malloc((size_t)groups * sizeof(float));
        if (scales == NULL)
            goto cleanup;
        for (int64_t i = 0; i < groups; i++)
            scales[i] = h->kv_scale;
        m.kv_scales_bytes = (size_t)groups * (size_t)(sdpa_dtype_bits(scales_dtype) / 8);
        int failed = case_alloc(d, &m, &m.kv_scales, m.kv_scales_bytes) ||
                     bench_upload(d, m.kv_scales, scales, groups, scales_dtype) ||
                     bench_upload_int(d, m.k, host_k, kv_count, c->kv_dtype, h->kv_scale) ||
                     bench_upload_int(d, m.v, host_v, kv_count, c->kv_dtype, h->kv_scale);
        free(scales);
        if (failed)
            goto cleanup;
    } else if (bench_upload(d, m.k, host_k, kv_count, c->dtype) ||
               bench_upload(d, m.v, host_v, kv_count, c->dtype)) {
        goto cleanup;
    }
    if (c->sinks) {
        m.sinks_bytes = (size_t)c->q_heads * sizeof(float);
        if (case_alloc(d, &m, &m.sinks, m.sinks_bytes) ||
            bench_copy(d, m.sinks, h->sinks, m.sinks_bytes))
            goto cleanup;
    }
    if (c->varlen_count > 0) {
        m.cu_count = (size_t)c->varlen_count + 1;
        int32_t *cu = malloc(m.cu_count * sizeof(int32_t));
        if (cu == NULL)
            goto cleanup;
        cu[0] = 0;
        for (int i = 0; i < c->varlen_count; i++)
            cu[i + 1] = cu[i] + (int32_t)c->varlen_lens[i];
        int failed = case_alloc(d, &m, &m.cu_seqlens, m.cu_count * sizeof(int32_t)) ||
                     bench_copy(d, m.cu_seqlens, cu, m.cu_count * sizeof(int32_t));
        free(cu);
        if (failed)
            goto cleanup;
    }

    /* Forward: inference, or training (it writes the log-sum-exp backward reads). */
    sdpa_problem_desc_t fwd_problem = bench_make_problem(
            c, c->pass == BENCH_FORWARD ? SDPA_FORWARD_INFERENCE : SDPA_FORWARD_TRAINING);
    double fwd_create_ms = 0.0;
    if (create_primitive(d, b, &fwd_problem, &fwd, &m, &m.fwd_scratch, &m.fwd_scratch_bytes,
                         &fwd_create_ms) != 0)
        goto cleanup;
    sdpa_status_t status = iface->primitive_query(fwd, SDPA_QUERY_WORKSPACE_BYTES,
                                                  &m.workspace_bytes, sizeof(m.workspace_bytes));
    if (status != SDPA_SUCCESS) {
        sdpa_failed(iface, "primitive_query(WORKSPACE_BYTES)", status);
        goto cleanup;
    }
    if (case_alloc(d, &m, &m.workspace, m.workspace_bytes) != 0)
        goto cleanup;

    timed_execution_t exec = {.device = d, .iface = iface, .prim = fwd};
    exec.args = (sdpa_exec_args_t){.struct_size = sizeof(sdpa_exec_args_t),
                                   .struct_version = SDPA_EXEC_ARGS_VERSION,
                                   .q = m.q,
                                   .k = m.k,
                                   .v = c->v_view_of_k ? m.k : m.v,
                                   .dst = m.dst,
                                   .workspace = m.workspace,
                                   .scale = h->scale,
                                   .k_scales = m.kv_scales,
                                   .v_scales = m.kv_scales,
                                   .sinks = m.sinks,
                                   .cu_seqlens_q = m.cu_seqlens,
                                   .cu_seqlens_k = m.cu_seqlens,
                                   .block_table = m.block_table,
                                   .cache_seqlens = m.cache_seqlens,
                                   .scratch = m.fwd_scratch,
                                   .scratch_size = m.fwd_scratch_bytes,
                                   .signal_event = d->done};
    sdpa_primitive_t *timed = fwd;
    if (c->pass == BENCH_FORWARD) {
        result->create_ms = fwd_create_ms;
        if (bench_repeat(policy, c->max_reps, execute_once, &exec, &result->seconds,
                         &result->reps) != 0 ||
            bench_download(d, out->dst, m.dst, q_count, c->dtype) != 0)
            goto cleanup;
    } else {
        /* O and the log-sum-exp, once, untimed. */
        if (execute_once(&exec) < 0)
            goto cleanup;
        if (case_alloc(d, &m, &m.diff_dst, m.q_bytes) || case_alloc(d, &m, &m.diff_q, m.q_bytes) ||
            case_alloc(d, &m, &m.diff_k, m.kv_bytes) || case_alloc(d, &m, &m.diff_v, m.kv_bytes) ||
            bench_upload(d, m.diff_dst, h->diff_dst, q_count, c->dtype))
            goto cleanup;
        sdpa_problem_desc_t bwd_problem = bench_make_problem(c, SDPA_BACKWARD);
        if (create_primitive(d, b, &bwd_problem, &bwd, &m, &m.bwd_scratch, &m.bwd_scratch_bytes,
                             &result->create_ms) != 0)
            goto cleanup;
        exec.prim = timed = bwd;
        exec.args.diff_dst = m.diff_dst;
        exec.args.diff_q = m.diff_q;
        exec.args.diff_k = m.diff_k;
        exec.args.diff_v = m.diff_v;
        exec.args.scratch = m.bwd_scratch;
        exec.args.scratch_size = m.bwd_scratch_bytes;
        if (bench_repeat(policy, c->max_reps, execute_once, &exec, &result->seconds,
                         &result->reps) != 0 ||
            bench_download(d, out->diff_q, m.diff_q, q_count, c->dtype) != 0 ||
            bench_download(d, out->diff_k, m.diff_k, kv_count, c->dtype) != 0 ||
            bench_download(d, out->diff_v, m.diff_v, kv_count, c->dtype) != 0)
            goto cleanup;
    }
    iface->primitive_query(timed, SDPA_QUERY_CONFIG_STRING, result->config, sizeof(result->config));
    result->peak_bytes = d->peak_bytes;
    result->workspace_bytes = m.workspace_bytes;
    result->scratch_bytes = m.fwd_scratch_bytes + m.bwd_scratch_bytes;
    rc = 0;

cleanup:
    free(paged_v);
    free(paged_k);
    iface->primitive_destroy(bwd);
    iface->primitive_destroy(fwd);
    case_memory_free(d, &m);
    return rc;
}
