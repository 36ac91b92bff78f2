/* llm_case.c - problems with the ABI 1.1 features, their buffers and the
 * oracle (llm_case.h). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm_case.h"
#include "philox.h"
#include "problem.h"

llm_spec_t llm_spec_of(sdpa_prop_kind_t prop, llm_layout_t layout, int64_t batch,
                       const int64_t *len_q, const int64_t *len_k, sdpa_dtype_t dt)
{
    llm_spec_t s;
    memset(&s, 0, sizeof(s));
    s.prop = prop;
    s.layout = layout;
    s.batch = batch;
    s.q_heads = 4;
    s.kv_heads = 2;
    s.head_size = 16;
    for (int64_t b = 0; b < batch; b++) {
        s.len_q[b] = layout == LLM_VARLEN ? len_q[b] : len_q[0];
        s.len_k[b] = layout == LLM_PADDED ? len_k[0] : len_k[b];
    }
    s.block_size = 16;
    s.qdt = s.kvdt = dt;
    return s;
}

llm_spec_t llm_padded_spec(sdpa_prop_kind_t prop, int64_t batch, int64_t sq, int64_t sk,
                           sdpa_dtype_t dt)
{
    return llm_spec_of(prop, LLM_PADDED, batch, &sq, &sk, dt);
}

sdpa_status_t llm_features_query(const sdpa_backend_iface_t *iface, sdpa_context_t *ctx,
                                 uint32_t struct_size, uint32_t struct_version, sdpa_features_t *f)
{
    memset(f, 0xab, sizeof(*f));
    f->struct_size = struct_size;
    f->struct_version = struct_version;
    return iface->context_get_features(ctx, f);
}

const int64_t llm_varlen_q[LLM_VARLEN_BATCH] = {5, 0, 1, 9, 3};
const int64_t llm_varlen_k[LLM_VARLEN_BATCH] = {7, 3, 0, 12, 1};

llm_spec_t llm_varlen_forward_spec(int i)
{
    static const sdpa_dtype_t dtypes[3] = {SDPA_DTYPE_F32, SDPA_DTYPE_F16, SDPA_DTYPE_BF16};
    static const sdpa_mask_kind_t masks[4] = {SDPA_MASK_NONE, SDPA_MASK_CAUSAL_TOP_LEFT,
                                              SDPA_MASK_CAUSAL_BOTTOM_RIGHT, SDPA_MASK_BUFFER};
    llm_spec_t s = llm_spec_of(SDPA_FORWARD_TRAINING, LLM_VARLEN, LLM_VARLEN_BATCH, llm_varlen_q,
                               llm_varlen_k, dtypes[i % 3]);
    s.mask_kind = masks[i % 4];
    s.softmax = i % 2 ? SDPA_SOFTMAX_INF_AS_ZERO : SDPA_SOFTMAX_ACCURATE;
    s.dropout = i >= 6;
    return s;
}

llm_spec_t llm_paged_spec(int i)
{
    const int64_t len_k[4] = {1, 33, 48, i == 8 ? 0 : i == 9 ? 300 : 70};
    const int64_t sq = i < 4 ? 1 : 4; /* decode, then chunks of 4 */
    llm_spec_t s = llm_spec_of(i % 2 ? SDPA_FORWARD_TRAINING : SDPA_FORWARD_INFERENCE, LLM_PAGED, 4,
                               &sq, len_k, SDPA_DTYPE_F16);
    s.q_heads = 8;
    s.block_size = i == 9 ? 64 : i % 4 < 2 ? 16 : 32;
    s.spare_blocks = 3;
    s.kvdt = i % 4 == 2 ? SDPA_DTYPE_S8 : SDPA_DTYPE_F16;
    s.qdt = i == 5 ? SDPA_DTYPE_BF16 : i == 6 ? SDPA_DTYPE_F32 : SDPA_DTYPE_F16;
    s.mask_kind = sq > 1 ? SDPA_MASK_CAUSAL_BOTTOM_RIGHT : SDPA_MASK_NONE;
    if (i == 7) { /* everything a paged decode may take at once */
        s.window = (sdpa_window_desc_t){1, 20, 0};
        s.softcap = 4.0f;
        s.alibi = SDPA_ALIBI_PER_BATCH_HEAD;
    }
    return s;
}

llm_spec_t llm_window_spec(int i)
{
    static const sdpa_window_desc_t windows[6] = {{1, 0, 0},  {1, 2, 1},     {1, 3, -1},
                                                  {1, -1, 2}, {1, 100, 100}, {1, 0, -1}};
    static const sdpa_dtype_t dtypes[3] = {SDPA_DTYPE_F32, SDPA_DTYPE_F16, SDPA_DTYPE_BF16};
    const int64_t sq = 6, sk = 11;
    llm_spec_t s = llm_spec_of(i < 6 ? SDPA_FORWARD_TRAINING : SDPA_BACKWARD, LLM_PADDED, 2, &sq,
                               &sk, dtypes[i % 3]);
    s.window = windows[i % 6];
    s.mask_kind = i % 4 == 1   ? SDPA_MASK_CAUSAL_BOTTOM_RIGHT
                  : i % 4 == 2 ? SDPA_MASK_CAUSAL_TOP_LEFT
                               : SDPA_MASK_NONE;
    s.ds_dtype = i >= 6 ? SDPA_DTYPE_F32 : SDPA_DTYPE_UNDEF;
    return s;
}

llm_spec_t llm_wide_window_spec(int i)
{
    static const sdpa_window_desc_t windows[8] = {
            {1, INT64_MAX, INT64_MAX}, {1, INT64_MAX - 1, INT64_MAX - 1},
            {1, INT64_MAX, 0},         {1, 0, INT64_MAX},
            {1, INT64_MAX - 1, -1},    {1, -1, INT64_MAX - 1},
            {1, 2, INT64_MAX},         {1, INT64_MAX, 1}};
    static const sdpa_dtype_t dtypes[3] = {SDPA_DTYPE_F32, SDPA_DTYPE_F16, SDPA_DTYPE_BF16};
    const int64_t sq = i < 8 ? 6 : 11, sk = i < 8 ? 11 : 6;
    llm_spec_t s = llm_spec_of(i % 2 ? SDPA_BACKWARD : SDPA_FORWARD_TRAINING, LLM_PADDED, 2, &sq,
                               &sk, dtypes[i % 3]);
    s.window = windows[i % 8];
    s.mask_kind = i % 3 == 1   ? SDPA_MASK_CAUSAL_BOTTOM_RIGHT
                  : i % 3 == 2 ? SDPA_MASK_CAUSAL_TOP_LEFT
                               : SDPA_MASK_NONE;
    s.ds_dtype = i % 2 ? SDPA_DTYPE_F32 : SDPA_DTYPE_UNDEF;
    return s;
}

llm_spec_t llm_extreme_softcap_spec(int i)
{
    static const float caps[5] = {3e38f, FLT_MAX, 2.4e38f, 1e-45f, 1e-40f};
    const int backward = i >= 5;
    const int64_t sq = backward ? 24 : 64, sk = backward ? 40 : 64;
    llm_spec_t s = llm_spec_of(backward ? SDPA_BACKWARD : SDPA_FORWARD_TRAINING, LLM_PADDED, 1, &sq,
                               &sk, i < 5 || i >= 8 ? SDPA_DTYPE_F16 : SDPA_DTYPE_F32);
    s.head_size = backward ? 32 : 64;
    s.softcap = caps[i % 5];
    s.zero_rows = 1;
    s.ds_dtype = backward ? SDPA_DTYPE_F32 : SDPA_DTYPE_UNDEF;
    s.mask_kind = i == 6 ? SDPA_MASK_CAUSAL_BOTTOM_RIGHT : SDPA_MASK_NONE;
    return s;
}

float llm_sink(int64_t h, int64_t q_heads)
{
    if (h == 1)
        return 40.0f;
    if (h == 2 && q_heads > 2)
        return -INFINITY;
    return 0.375f * (float)h - 0.5f;
}

llm_spec_t llm_sinks_spec(int i)
{
    static const int64_t paged_k[4] = {1, 33, 48, 70};
    static const sdpa_dtype_t dtypes[3] = {SDPA_DTYPE_F32, SDPA_DTYPE_F16, SDPA_DTYPE_BF16};
    const int backward = i >= 7 && i <= 9;
    const sdpa_prop_kind_t prop = backward ? SDPA_BACKWARD : SDPA_FORWARD_TRAINING;
    int64_t sq = 9, sk = 13;
    llm_spec_t s;
    switch (i) {
    case 4:
    case 8:
        s = llm_spec_of(prop, LLM_VARLEN, LLM_VARLEN_BATCH, llm_varlen_q, llm_varlen_k,
                        dtypes[i % 3]);
        s.mask_kind = SDPA_MASK_CAUSAL_BOTTOM_RIGHT;
        s.deterministic = 1;
        break;
    case 5:
    case 6:
        sq = 1;
        s = llm_spec_of(i == 5 ? SDPA_FORWARD_INFERENCE : prop, LLM_PAGED, 4, &sq, paged_k,
                        i == 5 ? SDPA_DTYPE_F16 : SDPA_DTYPE_F32);
        s.q_heads = 8;
        s.num_splits = i == 6 ? 3 : 1;
        break;
    case 11:
        sq = 1;
        sk = 203;
        s = llm_spec_of(prop, LLM_PADDED, 2, &sq, &sk, SDPA_DTYPE_F16);
        s.q_heads = 8;
        s.num_splits = 4;
        break;
    default:
        if (i == 1 || i == 2 || i == 7) {
            sq = 11;
            sk = 6;
        }
        s = llm_spec_of(prop, LLM_PADDED, 2, &sq, &sk, dtypes[i % 3]);
        if (i == 1 || i == 2 || i == 7)
            s.mask_kind = SDPA_MASK_CAUSAL_BOTTOM_RIGHT;
        break;
    }
    s.sinks = 1;
    s.softmax = i == 2 ? SDPA_SOFTMAX_INF_AS_ZERO : SDPA_SOFTMAX_ACCURATE;
    if (i == 3 || i == 9) {
        s.window = (sdpa_window_desc_t){1, 3, 0};
        s.mask_kind = i == 3 ? SDPA_MASK_CAUSAL_TOP_LEFT : SDPA_MASK_NONE;
    }
    if (i == 9 || i == 10)
        s.dropout = 1;
    if (i == 10) {
        s.softcap = 5.0f;
        s.alibi = SDPA_ALIBI_PER_HEAD;
    }
    if (i == 7)
        s.ds_dtype = SDPA_DTYPE_F32;
    return s;
}

int64_t llm_max(const int64_t *len, int64_t n)
{
    int64_t m = 0;
    for (int64_t b = 0; b < n; b++)
        if (len[b] > m)
            m = len[b];
    return m;
}

static int64_t sum(const int64_t *len, int64_t n)
{
    int64_t s = 0;
    for (int64_t b = 0; b < n; b++)
        s += len[b];
    return s;
}

/* Blocks sequence b's cache occupies. */
static int64_t blocks_of(const llm_spec_t *s, int64_t b)
{
    return (s->len_k[b] + s->block_size - 1) / s->block_size;
}

/* [dims] in memory order [d0, d2, d1, d3] (sequence-major, as PyTorch's
 * [total, H, D]). */
static sdpa_tensor_desc_t seq_major(sdpa_dtype_t dtype, int64_t d0, int64_t d1, int64_t d2,
                                    int64_t d3)
{
    sdpa_tensor_desc_t t = {dtype, {d0, d1, d2, d3}, {d2 * d1 * d3, d3, d1 * d3, 1}};
    return t;
}

void llm_desc_init(llm_case_t *c, const llm_spec_t *spec)
{
    memset(c, 0, sizeof(*c));
    c->spec = *spec;
    const llm_spec_t *s = &c->spec;
    sdpa_problem_desc_t *d = &c->c.desc;
    const int64_t B = s->batch, Hq = s->q_heads, Hkv = s->kv_heads, D = s->head_size;
    const int64_t max_q = llm_max(s->len_q, B), max_k = llm_max(s->len_k, B);
    int64_t mask_sk = max_k;
    switch (s->layout) {
    case LLM_PADDED:
        problem_init(d, s->prop, B, Hq, Hkv, max_q, max_k, D, s->qdt, s->kvdt);
        break;
    case LLM_VARLEN: {
        /* Three rows past the last sequence that nobody owns. */
        const int64_t total_q = sum(s->len_q, B) + 3, total_k = sum(s->len_k, B) + 3;
        problem_init(d, s->prop, 1, Hq, Hkv, total_q, total_k, D, s->qdt, s->kvdt);
        d->q = d->dst = seq_major(s->qdt, 1, Hq, total_q, D);
        d->k = d->v = seq_major(s->kvdt, 1, Hkv, total_k, D);
        if (s->prop == SDPA_BACKWARD) {
            d->diff_dst = d->diff_q = d->q;
            d->diff_k = d->diff_v = seq_major(s->qdt, 1, Hkv, total_k, D);
        }
        d->varlen = (sdpa_varlen_desc_t){1, B, max_q, max_k};
        break;
    }
    case LLM_PAGED: {
        int64_t blocks = s->spare_blocks;
        c->max_blocks = 1;
        for (int64_t b = 0; b < B; b++) {
            blocks += blocks_of(s, b);
            if (blocks_of(s, b) > c->max_blocks)
                c->max_blocks = blocks_of(s, b);
        }
        problem_init(d, s->prop, B, Hq, Hkv, s->len_q[0], s->block_size, D, s->qdt, s->kvdt);
        /* The cache in FlashAttention's order [num_blocks, block_size, Hkv, D]. */
        d->k = d->v = seq_major(s->kvdt, blocks, Hkv, s->block_size, D);
        /* Rows one entry longer than the longest sequence needs: the entry
         * past a sequence's last block is poison. */
        d->paged_kv = (sdpa_paged_kv_desc_t){1, c->max_blocks, c->max_blocks + 1};
        mask_sk = c->max_blocks * s->block_size;
        break;
    }
    }
    /* V's own head size: v, O, dO and dV take Dv (sdpa.h), in the layout
     * the case gave them; a view of K keeps K's strides. */
    const int64_t Dv = s->head_size_v > 0 ? s->head_size_v : D;
    if (Dv != D) {
        sdpa_tensor_desc_t *with_dv[4] = {&d->v, &d->dst, &d->diff_dst, &d->diff_v};
        for (int t = 0; t < 4; t++) {
            sdpa_tensor_desc_t *x = with_dv[t];
            if (x->dtype == SDPA_DTYPE_UNDEF)
                continue;
            if (s->layout == LLM_PADDED)
                *x = dense_tensor(x->dtype, x->dims[0], x->dims[1], x->dims[2], Dv);
            else
                *x = seq_major(x->dtype, x->dims[0], x->dims[1], x->dims[2], Dv);
        }
    }
    if (s->v_view_of_k) {
        d->v = d->k;
        d->v.dims[3] = Dv;
    }
    if ((sdpa_dtype_is_quantized(s->kvdt) || sdpa_dtype_is_fp8(s->kvdt)) &&
        s->quant_group != LLM_QUANT_NONE)
        d->k_quant = d->v_quant = (sdpa_quant_desc_t){
                .scales = s->quant_group > 0                     ? SDPA_QUANT_PER_GROUP
                          : s->quant_group == LLM_QUANT_PER_HEAD ? SDPA_QUANT_PER_HEAD
                                                                 : SDPA_QUANT_PER_TENSOR,
                .scales_dtype = SDPA_DTYPE_F32,
                .group_size = s->quant_group > 0 ? s->quant_group : 0};
    d->mask_kind = s->mask_kind;
    if (s->mask_kind == SDPA_MASK_BUFFER)
        d->mask = dense_tensor(SDPA_DTYPE_F32, B, 1, max_q, mask_sk);
    d->softmax_kind = s->softmax;
    d->window = s->window;
    d->softcap = s->softcap;
    d->alibi = s->alibi;
    d->num_splits = s->num_splits;
    d->sinks = (uint32_t)s->sinks;
    if (s->dropout)
        d->dropout = (sdpa_dropout_desc_t){.enabled = 1,
                                           .host_scalars = 1,
                                           .with_offset = 1,
                                           .with_mask_output = s->prop == SDPA_FORWARD_TRAINING};
    if (s->prop == SDPA_BACKWARD) {
        d->deterministic = (uint32_t)s->deterministic;
        if (s->ds_dtype != SDPA_DTYPE_UNDEF)
            d->ds = dense_tensor(s->ds_dtype, B, Hq, max_q, mask_sk);
    }
}

/* A buffer outside the attention case's own list. */
static void *extra_buffer(llm_case_t *c, size_t bytes)
{
    if (c->c.buffer_count >= ATTN_CASE_MAX_BUFFERS)
        return NULL;
    void *p = c->c.allocator.alloc(bytes ? bytes : 1, c->c.allocator.user);
    if (p == NULL)
        return NULL;
    memset(p, 0xff, bytes);
    c->c.buffers[c->c.buffer_count] = p;
    c->c.buffer_bytes[c->c.buffer_count] = bytes;
    c->c.buffer_count++;
    return p;
}

/* Bytes of one element (1 for the 4-bit types, which this file never uses). */
static size_t elem_size(sdpa_dtype_t dtype)
{
    return dtype == SDPA_DTYPE_F32 || dtype == SDPA_DTYPE_S32    ? 4
           : dtype == SDPA_DTYPE_F16 || dtype == SDPA_DTYPE_BF16 ? 2
                                                                 : 1;
}

/* Sets every element of row i of sequence 0 of t (all its heads) to 0. */
static void zero_row(const sdpa_tensor_desc_t *t, const void *data, int64_t i)
{
    const size_t size = elem_size(t->dtype);
    for (int64_t h = 0; h < t->dims[1]; h++)
        for (int64_t e = 0; e < t->dims[3]; e++)
            memset((char *)data +
                           (size_t)(h * t->strides[1] + i * t->strides[2] + e * t->strides[3]) *
                                   size,
                   0, size);
}

/* Sets rows first .. last - 1 of a packed tensor to 0xff bytes (NaN). */
static void poison_rows(const sdpa_tensor_desc_t *t, const void *data, int64_t first, int64_t last)
{
    if (!sdpa_dtype_is_float(t->dtype))
        return;
    const size_t size = elem_size(t->dtype);
    for (int64_t h = 0; h < t->dims[1]; h++)
        for (int64_t i = first; i < last; i++)
            for (int64_t e = 0; e < t->dims[3]; e++)
                memset((char *)data +
                               (size_t)(h * t->strides[1] + i * t->strides[2] + e * t->strides[3]) *
                                       size,
                       0xff, size);
}

int llm_case_alloc(llm_case_t *c, uint64_t seed, const test_allocator_t *allocator)
{
    const llm_spec_t *s = &c->spec;
    sdpa_problem_desc_t *d = &c->c.desc;
    sdpa_exec_args_t *a = &c->c.args;
    /* case_alloc sizes the keep mask from q's and k's dims; with varlen the
     * mask is the padded problem's, allocated below. */
    const uint32_t mask_output = d->dropout.with_mask_output;
    if (s->layout == LLM_VARLEN)
        d->dropout.with_mask_output = 0;
    const int status = case_alloc(&c->c, seed, allocator);
    d->dropout.with_mask_output = mask_output;
    if (status != 0)
        return -1;
    if (s->v_view_of_k) /* MLA: V is the first Dv elements of K's rows */
        a->v = a->k;
    test_rng_t rng = {seed ^ 0x9e3779b97f4a7c15ull};
    const int64_t B = s->batch, Hq = s->q_heads;
    if (s->layout == LLM_VARLEN) {
        int32_t *cu_q = extra_buffer(c, sizeof(int32_t) * (size_t)(B + 1));
        int32_t *cu_k = extra_buffer(c, sizeof(int32_t) * (size_t)(B + 1));
        if (cu_q == NULL || cu_k == NULL)
            return -1;
        cu_q[0] = cu_k[0] = 0;
        for (int64_t b = 0; b < B; b++) {
            c->q_start[b] = cu_q[b];
            c->k_start[b] = cu_k[b];
            cu_q[b + 1] = (int32_t)(cu_q[b] + s->len_q[b]);
            cu_k[b + 1] = (int32_t)(cu_k[b] + s->len_k[b]);
        }
        a->cu_seqlens_q = cu_q;
        a->cu_seqlens_k = cu_k;
        poison_rows(&d->q, a->q, cu_q[B], d->q.dims[2]);
        poison_rows(&d->k, a->k, cu_k[B], d->k.dims[2]);
        poison_rows(&d->v, a->v, cu_k[B], d->v.dims[2]);
        if (mask_output) {
            const int64_t n = B * Hq * d->varlen.max_seqlen_q * d->varlen.max_seqlen_k;
            if ((a->dropout_mask = extra_buffer(c, (size_t)n)) == NULL)
                return -1;
        }
    }
    if (s->layout == LLM_PAGED) {
        const int64_t blocks = d->k.dims[0], stride = d->paged_kv.block_table_stride;
        int32_t *table = extra_buffer(c, sizeof(int32_t) * (size_t)(B * stride));
        int32_t *lens = extra_buffer(c, sizeof(int32_t) * (size_t)B);
        int32_t *order = malloc(sizeof(int32_t) * (size_t)blocks);
        if (table == NULL || lens == NULL || order == NULL) {
            free(order);
            return -1;
        }
        /* The blocks in a shuffled order, handed out sequence by sequence. */
        for (int64_t n = 0; n < blocks; n++)
            order[n] = (int32_t)n;
        for (int64_t n = blocks - 1; n > 0; n--) {
            int64_t m = rng_int(&rng, 0, n);
            int32_t t = order[n];
            order[n] = order[m];
            order[m] = t;
        }
        int64_t next = 0;
        for (int64_t b = 0; b < B; b++) {
            lens[b] = (int32_t)s->len_k[b];
            for (int64_t e = 0; e < stride; e++)
                table[b * stride + e] = e < blocks_of(s, b) ? order[next++] : -1;
        }
        free(order);
        c->block_table = table;
        a->block_table = table;
        a->cache_seqlens = lens;
    }
    if (s->zero_rows && s->layout == LLM_PADDED) {
        zero_row(&d->q, a->q, 0);
        zero_row(&d->k, a->k, 1);
    }
    if (s->alibi != SDPA_ALIBI_NONE) {
        const int64_t n = s->alibi == SDPA_ALIBI_PER_HEAD ? Hq : B * Hq;
        float *slopes = extra_buffer(c, sizeof(float) * (size_t)n);
        if (slopes == NULL)
            return -1;
        /* The ALiBi geometric sequence 2^(-8 (h + 1) / Hq), varied by
         * sequence, and one slope of 0. */
        for (int64_t e = 0; e < n; e++)
            slopes[e] = e == n - 1 ? 0.0f
                                   : ldexpf(1.0f + (float)(e / Hq) / 8.0f,
                                            -(int)(8 * (e % Hq + 1) / Hq));
        a->alibi_slopes = slopes;
    }
    if (s->sinks) {
        float *sinks = extra_buffer(c, sizeof(float) * (size_t)Hq);
        if (sinks == NULL)
            return -1;
        for (int64_t h = 0; h < Hq; h++)
            sinks[h] = llm_sink(h, Hq);
        a->sinks = sinks;
        if (s->prop == SDPA_BACKWARD &&
            (a->diff_sinks = extra_buffer(c, sizeof(float) * (size_t)Hq)) == NULL)
            return -1;
    }
    return 0;
}

void llm_case_free(llm_case_t *c)
{
    case_free(&c->c);
}

sdpa_problem_desc_t llm_training_forward(const llm_case_t *c)
{
    sdpa_problem_desc_t f = c->c.desc;
    const sdpa_tensor_desc_t none = {0};
    f.prop_kind = SDPA_FORWARD_TRAINING;
    f.diff_dst = f.diff_q = f.diff_k = f.diff_v = f.ds = none;
    f.deterministic = 0;
    f.dropout.with_mask_output = 0;
    return f;
}

/* ------------------------------------------------------------------------- */
/* The oracle                                                                */
/* ------------------------------------------------------------------------- */

/* The tensor indices (i0, i2) of query i and key j of sequence b. */
static void query_at(const llm_case_t *c, int64_t b, int64_t i, int64_t *i0, int64_t *i2)
{
    *i0 = c->spec.layout == LLM_VARLEN ? 0 : b;
    *i2 = c->spec.layout == LLM_VARLEN ? c->q_start[b] + i : i;
}

static void key_at(const llm_case_t *c, int64_t b, int64_t j, int64_t *i0, int64_t *i2)
{
    const llm_spec_t *s = &c->spec;
    if (s->layout == LLM_VARLEN) {
        *i0 = 0;
        *i2 = c->k_start[b] + j;
    } else if (s->layout == LLM_PAGED) {
        *i0 = c->block_table[b * c->c.desc.paged_kv.block_table_stride + j / s->block_size];
        *i2 = j % s->block_size;
    } else {
        *i0 = b;
        *i2 = j;
    }
}

/* Element d of key j (which 'k' or 'v') of sequence b, K/V head h, dequantized. */
static double kv_elem(const llm_case_t *c, int which, int64_t b, int64_t h, int64_t j, int64_t d)
{
    const sdpa_problem_desc_t *p = &c->c.desc;
    const sdpa_tensor_desc_t *t = which == 'k' ? &p->k : &p->v;
    int64_t i0, i2;
    key_at(c, b, j, &i0, &i2);
    double value = tensor_get(t, which == 'k' ? c->c.args.k : c->c.args.v, i0, h, i2, d);
    const sdpa_quant_desc_t *q = which == 'k' ? &p->k_quant : &p->v_quant;
    if (q->scales == SDPA_QUANT_NONE) /* float K/V, or FP8 without scales */
        return value;
    /* PER_GROUP scales are dense over K's logical dims (sdpa.h): varlen's
     * [1, Hkv, total_k], the cache's [blocks, Hkv, block_size]; PER_HEAD
     * ones [Hkv]. */
    int64_t entry = 0;
    if (q->scales == SDPA_QUANT_PER_GROUP)
        entry = ((i0 * t->dims[1] + h) * t->dims[2] + i2) * (t->dims[3] / q->group_size) +
                d / q->group_size;
    else if (q->scales == SDPA_QUANT_PER_HEAD)
        entry = h;
    return value * elem_get(which == 'k' ? c->c.args.k_scales : c->c.args.v_scales, entry,
                            q->scales_dtype);
}

/* The logical [B, Hq, Sq, Sk] the auxiliary tensors follow. */
static void scores_dims(const llm_case_t *c, int64_t *sq, int64_t *sk)
{
    const llm_spec_t *s = &c->spec;
    *sq = llm_max(s->len_q, s->batch);
    *sk = s->layout == LLM_PAGED ? c->max_blocks * s->block_size : llm_max(s->len_k, s->batch);
}

/* One row of logits of query i of sequence b, query head h: s[j] for
 * j < len_k (-inf where not visible), and cap'(.) in g[j] (1 without a
 * softcap). */
static void logits(const llm_case_t *c, int64_t b, int64_t h, int64_t i, const double *q,
                   double scale, double *s, double *g)
{
    const llm_spec_t *sp = &c->spec;
    const sdpa_problem_desc_t *p = &c->c.desc;
    const int64_t lq = sp->len_q[b], lk = sp->len_k[b], D = sp->head_size;
    const int64_t kv_h = h / (sp->q_heads / sp->kv_heads), pos = i + lk - lq;
    double slope = 0;
    if (sp->alibi != SDPA_ALIBI_NONE)
        slope = ((const float *)c->c.args
                         .alibi_slopes)[sp->alibi == SDPA_ALIBI_PER_HEAD ? h : b * sp->q_heads + h];
    for (int64_t j = 0; j < lk; j++) {
        int visible = 1;
        if (sp->mask_kind == SDPA_MASK_CAUSAL_TOP_LEFT)
            visible &= j <= i;
        if (sp->mask_kind == SDPA_MASK_CAUSAL_BOTTOM_RIGHT)
            visible &= j <= pos;
        if (sp->window.enabled) {
            /* pos - j and j - pos: the bounds go up to INT64_MAX */
            visible &= sp->window.left < 0 || pos - j <= sp->window.left;
            visible &= sp->window.right < 0 || j - pos <= sp->window.right;
        }
        g[j] = 1.0;
        if (!visible) {
            s[j] = -INFINITY;
            continue;
        }
        double dot = 0;
        for (int64_t d = 0; d < D; d++)
            dot += q[d] * kv_elem(c, 'k', b, kv_h, j, d);
        double x = scale * dot;
        if (sp->softcap > 0) {
            const double t = tanh(x / sp->softcap);
            x = sp->softcap * t;
            g[j] = 1.0 - t * t;
        }
        x -= slope * fabs((double)(pos - j));
        if (sp->mask_kind == SDPA_MASK_BUFFER)
            x += tensor_get(&p->mask, c->c.args.mask, b, 0, i, j);
        s[j] = x;
    }
}

/* The keep factor of element (b, h, i, j) of the logical scores. */
static double keep_factor(const llm_case_t *c, int64_t b, int64_t h, int64_t i, int64_t j)
{
    const sdpa_exec_args_t *a = &c->c.args;
    if (!c->spec.dropout)
        return 1.0;
    int64_t sq, sk;
    scores_dims(c, &sq, &sk);
    const uint64_t n = (uint64_t)(((b * c->spec.q_heads + h) * sq + i) * sk + j);
    const uint64_t ctr = (uint64_t)a->dropout_offset + n / 4;
    const uint32_t counter[4] = {(uint32_t)ctr, (uint32_t)(ctr >> 32), 0, 0};
    const uint32_t key[2] = {(uint32_t)a->dropout_seed,
                             (uint32_t)((uint64_t)a->dropout_seed >> 32)};
    uint32_t words[4];
    sdpa_philox4x32_10(counter, key, words);
    const int keep = (double)(words[n % 4] >> 8) * ldexp(1.0, -24) >= a->dropout_p;
    return keep ? 1.0 / (1.0 - a->dropout_p) : 0.0;
}

/* Index of element (i0, i1, i2, i3) of a tensor of these dims, dense. */
static int64_t dense_index(const int64_t *dims, int64_t i0, int64_t i1, int64_t i2, int64_t i3)
{
    return ((i0 * dims[1] + i1) * dims[2] + i2) * dims[3] + i3;
}

static int64_t count(const int64_t *dims)
{
    return dims[0] * dims[1] * dims[2] * dims[3];
}

static double *zeros(int64_t n)
{
    double *p = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
    if (p == NULL)
        abort();
    return p;
}

static uint8_t *flags(int64_t n)
{
    uint8_t *p = calloc((size_t)(n > 0 ? n : 1), 1);
    if (p == NULL)
        abort();
    return p;
}

int llm_expect(const llm_case_t *c, llm_expected_t *e)
{
    const llm_spec_t *sp = &c->spec;
    const sdpa_problem_desc_t *p = &c->c.desc;
    const sdpa_exec_args_t *a = &c->c.args;
    const int backward = sp->prop == SDPA_BACKWARD;
    const int64_t B = sp->batch, Hq = sp->q_heads, D = sp->head_size;
    const int64_t Dv = sp->head_size_v > 0 ? sp->head_size_v : D;
    const int64_t group = Hq / sp->kv_heads;
    const double scale = a->scale;
    int64_t sq_l, sk_l;
    scores_dims(c, &sq_l, &sk_l);
    const int64_t lse_dims[4] = {p->q.dims[0], Hq, p->q.dims[2], 1};
    const int64_t ds_dims[4] = {B, Hq, sq_l, sk_l};
    memset(e, 0, sizeof(*e));
    e->o = zeros(count(p->dst.dims));
    e->o_written = flags(count(p->dst.dims));
    e->lse = zeros(count(lse_dims));
    e->lse_written = flags(count(lse_dims));
    if (backward) {
        e->dq = zeros(count(p->q.dims));
        e->dq_written = flags(count(p->q.dims));
        e->dk = zeros(count(p->k.dims));
        e->dv = zeros(count(p->diff_v.dims));
        e->dkv_written = flags(count(p->k.dims));
        e->dv_written = flags(count(p->diff_v.dims));
        e->ds = zeros(count(ds_dims));
        e->ds_written = flags(count(ds_dims));
        e->dsink = zeros(Hq);
    }
    const int64_t max_k = sk_l > 0 ? sk_l : 1;
    double *q = zeros(D), *dout = zeros(Dv), *s = zeros(max_k), *g = zeros(max_k);
    double *pz = zeros(max_k), *dp = zeros(max_k);
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < Hq; h++)
            for (int64_t i = 0; i < sp->len_q[b]; i++) {
                const int64_t lk = sp->len_k[b], kv_h = h / group;
                int64_t i0, i2;
                query_at(c, b, i, &i0, &i2);
                for (int64_t d = 0; d < D; d++)
                    q[d] = tensor_get(&p->q, a->q, i0, h, i2, d);
                for (int64_t d = 0; backward && d < Dv; d++)
                    dout[d] = tensor_get(&p->diff_dst, a->diff_dst, i0, h, i2, d);
                logits(c, b, h, i, q, scale, s, g);
                /* A sink joins the denominator as a key without a value. */
                const double sink = sp->sinks ? llm_sink(h, Hq) : -INFINITY;
                double max = sink, total = 0;
                for (int64_t j = 0; j < lk; j++)
                    max = fmax(max, s[j]);
                if (max > -INFINITY)
                    total = exp(sink - max);
                for (int64_t j = 0; j < lk && max > -INFINITY; j++)
                    total += exp(s[j] - max);
                const int dead = max == -INFINITY; /* sees no key, no sink */
                const int64_t row = (i0 * Hq + h) * p->q.dims[2] + i2;
                e->lse[row] = dead ? -INFINITY : max + log(total);
                e->lse_written[row] = 1;
                /* P (0 for a dead row, as backward reads it) and P o Z */
                for (int64_t j = 0; j < lk; j++) {
                    const double prob = dead ? 0.0 : exp(s[j] - max) / total;
                    s[j] = prob;
                    pz[j] = prob * keep_factor(c, b, h, i, j);
                }
                for (int64_t d = 0; d < Dv; d++) {
                    double acc = 0;
                    for (int64_t j = 0; j < lk; j++)
                        if (pz[j] != 0)
                            acc += pz[j] * kv_elem(c, 'v', b, kv_h, j, d);
                    const int64_t o = dense_index(p->dst.dims, i0, h, i2, d);
                    e->o[o] = !dead ? acc : sp->softmax == SDPA_SOFTMAX_INF_AS_ZERO ? 0.0 : NAN;
                    e->o_written[o] = 1;
                }
                if (!backward)
                    continue;
                /* dP = Z (dO . V), D_i = sum P dP, dS = P (dP - D_i) */
                double row_dot = 0;
                for (int64_t j = 0; j < lk; j++) {
                    double dot = 0;
                    for (int64_t d = 0; d < Dv; d++)
                        dot += dout[d] * kv_elem(c, 'v', b, kv_h, j, d);
                    dp[j] = keep_factor(c, b, h, i, j) * dot;
                    row_dot += s[j] * dp[j];
                }
                /* d lse_i / d sink = P_sink; dO . dO_i/d sink = -P_sink D_i */
                if (sp->sinks && !dead)
                    e->dsink[h] -= exp(sink - e->lse[row]) * row_dot;
                for (int64_t j = 0; j < lk; j++) {
                    const double ds = s[j] * (dp[j] - row_dot);
                    const int64_t ds_e = dense_index(ds_dims, b, h, i, j);
                    e->ds[ds_e] = ds;
                    e->ds_written[ds_e] = 1;
                    dp[j] = ds * g[j] * scale; /* the gradient of q.k_j */
                }
                for (int64_t d = 0; d < D; d++) {
                    double acc = 0;
                    for (int64_t j = 0; j < lk; j++)
                        acc += dp[j] * kv_elem(c, 'k', b, kv_h, j, d);
                    const int64_t qe = dense_index(p->q.dims, i0, h, i2, d);
                    e->dq[qe] = acc;
                    e->dq_written[qe] = 1;
                }
                for (int64_t j = 0; j < lk; j++) {
                    int64_t k0, k2;
                    key_at(c, b, j, &k0, &k2);
                    for (int64_t d = 0; d < D; d++)
                        e->dk[dense_index(p->k.dims, k0, kv_h, k2, d)] += dp[j] * q[d];
                    for (int64_t d = 0; d < Dv; d++)
                        e->dv[dense_index(p->diff_v.dims, k0, kv_h, k2, d)] += pz[j] * dout[d];
                }
            }
    /* Every key of a sequence gets dK and dV, seen or not. */
    for (int64_t b = 0; backward && b < B; b++)
        for (int64_t h = 0; h < sp->kv_heads; h++)
            for (int64_t j = 0; j < sp->len_k[b]; j++) {
                int64_t k0, k2;
                key_at(c, b, j, &k0, &k2);
                for (int64_t d = 0; d < D; d++)
                    e->dkv_written[dense_index(p->k.dims, k0, h, k2, d)] = 1;
                for (int64_t d = 0; d < Dv; d++)
                    e->dv_written[dense_index(p->diff_v.dims, k0, h, k2, d)] = 1;
            }
    free(q);
    free(dout);
    free(s);
    free(g);
    free(pz);
    free(dp);
    return 0;
}

void llm_expected_free(llm_expected_t *e)
{
    free(e->o);
    free(e->lse);
    free(e->dq);
    free(e->dk);
    free(e->dv);
    free(e->ds);
    free(e->dsink);
    free(e->o_written);
    free(e->lse_written);
    free(e->dq_written);
    free(e->dkv_written);
    free(e->dv_written);
    free(e->ds_written);
    memset(e, 0, sizeof(*e));
}

/* 1 if element (i0..i3) of t at data still holds the 0xff bytes it was
 * allocated with. */
static int untouched(const sdpa_tensor_desc_t *t, const void *data, int64_t i0, int64_t i1,
                     int64_t i2, int64_t i3)
{
    const size_t size = elem_size(t->dtype);
    const unsigned char *p =
            (const unsigned char *)data + (size_t)(i0 * t->strides[0] + i1 * t->strides[1] +
                                                   i2 * t->strides[2] + i3 * t->strides[3]) *
                                                  size;
    for (size_t n = 0; n < size; n++)
        if (p[n] != 0xff)
            return 0;
    return 1;
}

/* Compares tensor t at data with want (dense over t's dims). */
static int compare(const char *what, const sdpa_tensor_desc_t *t, const void *data,
                   const double *want, const uint8_t *written, double tolerance_scale)
{
    double magnitude = 0;
    for (int64_t n = 0; n < count(t->dims); n++)
        if (written[n] && isfinite(want[n]))
            magnitude = fmax(magnitude, fabs(want[n]));
    for (int64_t i0 = 0; i0 < t->dims[0]; i0++)
        for (int64_t i1 = 0; i1 < t->dims[1]; i1++)
            for (int64_t i2 = 0; i2 < t->dims[2]; i2++)
                for (int64_t i3 = 0; i3 < t->dims[3]; i3++) {
                    const int64_t n = dense_index(t->dims, i0, i1, i2, i3);
                    if (!written[n]) {
                        if (untouched(t, data, i0, i1, i2, i3))
                            continue;
                        fprintf(stderr,
                                "%s[%lld,%lld,%lld,%lld] is outside every sequence but "
                                "was written\n",
                                what, (long long)i0, (long long)i1, (long long)i2, (long long)i3);
                        return 0;
                    }
                    const double got = tensor_get(t, data, i0, i1, i2, i3);
                    double tol = isfinite(want[n]) ? half_ulp(want[n], t->dtype) + 1e-12 : 0;
                    if (isfinite(want[n]))
                        tol += tolerance_scale * ldexp(1.0, -24) * magnitude;
                    if (!close_enough(got, want[n], 0, tol)) {
                        fprintf(stderr,
                                "%s[%lld,%lld,%lld,%lld]: got %.9g, expected %.12g (+- %g)\n", what,
                                (long long)i0, (long long)i1, (long long)i2, (long long)i3, got,
                                want[n], tol);
                        return 0;
                    }
                }
    return 1;
}

/* The keep mask of a training forward: kept (1) or dropped (0) inside each
 * sequence, untouched (0xff) in the padding of the padded layout. */
static int compare_keep_mask(const llm_case_t *c)
{
    const llm_spec_t *sp = &c->spec;
    const uint8_t *mask = c->c.args.dropout_mask;
    int64_t sq, sk;
    scores_dims(c, &sq, &sk);
    for (int64_t b = 0; b < sp->batch; b++)
        for (int64_t h = 0; h < sp->q_heads; h++)
            for (int64_t i = 0; i < sq; i++)
                for (int64_t j = 0; j < sk; j++) {
                    const uint8_t got = mask[((b * sp->q_heads + h) * sq + i) * sk + j];
                    const int inside = i < sp->len_q[b] && j < sp->len_k[b];
                    const uint8_t want = !inside ? 0xff : keep_factor(c, b, h, i, j) != 0;
                    if (got != want) {
                        fprintf(stderr, "keep mask [%lld,%lld,%lld,%lld]: got %u, expected %u\n",
                                (long long)b, (long long)h, (long long)i, (long long)j, got, want);
                        return 0;
                    }
                }
    return 1;
}

int llm_compare(const llm_case_t *c, const llm_expected_t *e, double tolerance_scale)
{
    const sdpa_problem_desc_t *p = &c->c.desc;
    const sdpa_exec_args_t *a = &c->c.args;
    int ok = 1;
    if (p->prop_kind != SDPA_BACKWARD) {
        ok &= compare("O", &p->dst, a->dst, e->o, e->o_written, tolerance_scale);
        if (p->prop_kind == SDPA_FORWARD_TRAINING) {
            const sdpa_tensor_desc_t ws =
                    dense_tensor(SDPA_DTYPE_F32, p->q.dims[0], p->q.dims[1], p->q.dims[2], 1);
            ok &= compare("LSE", &ws, a->workspace, e->lse, e->lse_written, tolerance_scale);
            if (p->dropout.enabled && p->dropout.with_mask_output)
                ok &= compare_keep_mask(c);
        }
        return ok;
    }
    ok &= compare("dQ", &p->diff_q, a->diff_q, e->dq, e->dq_written, tolerance_scale);
    ok &= compare("dK", &p->diff_k, a->diff_k, e->dk, e->dkv_written, tolerance_scale);
    ok &= compare("dV", &p->diff_v, a->diff_v, e->dv, e->dv_written, tolerance_scale);
    if (p->ds.dtype != SDPA_DTYPE_UNDEF)
        ok &= compare("dS", &p->ds, a->ds, e->ds, e->ds_written, tolerance_scale);
    if (p->sinks) {
        const sdpa_tensor_desc_t hq = dense_tensor(SDPA_DTYPE_F32, 1, p->q.dims[1], 1, 1);
        uint8_t *all = flags(p->q.dims[1]);
        memset(all, 1, (size_t)p->q.dims[1]);
        ok &= compare("dsink", &hq, a->diff_sinks, e->dsink, all, tolerance_scale);
        free(all);
    }
    return ok;
}
