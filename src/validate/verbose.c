/* verbose.c - SDPA_VERBOSE: the level, read once, and the line format
 * (verbose.h). */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "error.h"
#include "problem.h"
#include "verbose.h"

/* -1 until the environment has been read. */
static atomic_int verbose_level = -1;
static atomic_int info_printed;

static int read_level(void)
{
    const char *value = getenv("SDPA_VERBOSE");
    if (value != NULL && strcmp(value, "profile") == 0)
        return SDPA_VERBOSE_PROFILE;
    if (value == NULL || *value < '0' || *value > '9')
        return 0;
    char *end = NULL;
    long level = strtol(value, &end, 10);
    if (*end != '\0')
        return 0;
    return level > SDPA_VERBOSE_PROFILE ? SDPA_VERBOSE_PROFILE : (int)level;
}

int sdpa_verbose_level(void)
{
    int level = atomic_load_explicit(&verbose_level, memory_order_relaxed);
    if (level >= 0)
        return level;
    /* Two threads may both read the environment the first time: they find
     * the same value. */
    level = read_level();
    atomic_store_explicit(&verbose_level, level, memory_order_relaxed);
    return level;
}

static void print_line(const char *text)
{
    /* One fputs of the whole line: stdio locks the stream per call. */
    fputs(text, stderr);
}

void sdpa_verbose_print(const char *format, ...)
{
    char line[8192];
    if (!atomic_exchange(&info_printed, 1)) {
        snprintf(line, sizeof(line), "sdpa_verbose,info,%s,SDPA_VERBOSE=%d\n", PACKAGE_STRING,
                 sdpa_verbose_level());
        print_line(line);
    }
    int n = snprintf(line, sizeof(line), "sdpa_verbose,");
    va_list ap;
    va_start(ap, format);
    vsnprintf(line + n, sizeof(line) - (size_t)n - 1, format, ap);
    va_end(ap);
    size_t len = strlen(line);
    line[len] = '\n';
    line[len + 1] = '\0';
    print_line(line);
}

sdpa_status_t sdpa_verbose_refusal(const char *backend, const char *call, sdpa_status_t status)
{
    if (status != SDPA_SUCCESS && sdpa_verbose_level() >= 1)
        sdpa_verbose_print("refused,%s,%s,%s,%s", backend, call, sdpa_status_string(status),
                           sdpa_error_message());
    return status;
}

double sdpa_verbose_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

char *sdpa_verbose_field(const char *text, char *out, size_t size)
{
    size_t i = 0;
    for (; text[i] != '\0' && i + 1 < size; i++)
        out[i] = (text[i] == ',' || (unsigned char)text[i] < ' ') ? ' ' : text[i];
    if (size > 0)
        out[i] = '\0';
    return out;
}

/* A growing string of ':'-joined tokens. */
typedef struct tokens {
    char *out;
    size_t size, len;
} tokens_t;

static void token(tokens_t *t, const char *format, ...) __attribute__((format(printf, 2, 3)));

static void token(tokens_t *t, const char *format, ...)
{
    if (t->len + 1 >= t->size)
        return;
    if (t->len > 0)
        t->out[t->len++] = ':';
    va_list ap;
    va_start(ap, format);
    int n = vsnprintf(t->out + t->len, t->size - t->len, format, ap);
    va_end(ap);
    if (n > 0)
        t->len += (size_t)n < t->size - t->len ? (size_t)n : t->size - t->len - 1;
    t->out[t->len] = '\0';
}

static const char *prop_name(sdpa_prop_kind_t kind)
{
    switch (kind) {
    case SDPA_FORWARD_INFERENCE:
        return "fwd_inf";
    case SDPA_FORWARD_TRAINING:
        return "fwd_train";
    case SDPA_BACKWARD:
        return "bwd";
    }
    return "?";
}

/* "t" (per tensor), "h" (per K/V head) or the group ("g32"). */
static const char *quant_extent(sdpa_quant_kind_t kind, const char *group)
{
    return kind == SDPA_QUANT_PER_GROUP ? group : kind == SDPA_QUANT_PER_HEAD ? "h" : "t";
}

/* "kq=s.g32.f16+zp.t.u8": scales per group of 32 in f16, one u8 zero
 * point for the tensor. */
static void quant_token(tokens_t *t, const char *which, const sdpa_quant_desc_t *q)
{
    char scales[48] = "", zero_points[48] = "", group[24] = "t";
    if (q->scales == SDPA_QUANT_NONE && q->zero_points == SDPA_QUANT_NONE)
        return;
    if (q->scales == SDPA_QUANT_PER_GROUP || q->zero_points == SDPA_QUANT_PER_GROUP)
        snprintf(group, sizeof(group), "g%lld", (long long)q->group_size);
    if (q->scales != SDPA_QUANT_NONE)
        snprintf(scales, sizeof(scales), "s.%s.%s", quant_extent(q->scales, group),
                 sdpa_dtype_name(q->scales_dtype));
    if (q->zero_points != SDPA_QUANT_NONE)
        snprintf(zero_points, sizeof(zero_points), "%szp.%s.%s", scales[0] ? "+" : "",
                 quant_extent(q->zero_points, group), sdpa_dtype_name(q->zero_points_dtype));
    token(t, "%s=%s%s", which, scales, zero_points);
}

char *sdpa_verbose_problem(const sdpa_problem_desc_t *p, char *out, size_t size)
{
    tokens_t t = {out, size, 0};
    if (size > 0)
        out[0] = '\0';
    token(&t, "%s", prop_name(p->prop_kind));
    /* The logical problem [B, Hq, Sq, Sk] (problem.h's sdpa_shape_t): with
     * varlen, B sequences of at most max_seqlen_q / max_seqlen_k; with a
     * paged cache, Sk = max_blocks_per_seq * block_size keys. */
    long long batch = p->q.dims[0], q_len = p->q.dims[2], k_len = p->k.dims[2];
    if (p->varlen.enabled) {
        batch = p->varlen.batch;
        q_len = p->varlen.max_seqlen_q;
        k_len = p->varlen.max_seqlen_k;
    }
    if (p->paged_kv.enabled)
        k_len = p->paged_kv.max_blocks_per_seq * p->k.dims[2];
    token(&t, "b%lld", batch);
    token(&t, "hq%lld", (long long)p->q.dims[1]);
    token(&t, "hkv%lld", (long long)p->k.dims[1]);
    token(&t, "sq%lld", q_len);
    token(&t, "sk%lld", k_len);
    token(&t, "d%lld", (long long)p->q.dims[3]);
    /* The packed rows (cu_seqlens_q/k are device arrays, not read here). */
    if (p->varlen.enabled)
        token(&t, "varlen=tq%lld.tk%lld", (long long)p->q.dims[2], (long long)p->k.dims[2]);
    if (p->paged_kv.enabled) {
        token(&t, "paged=bs%lld.nb%lld.mb%lld", (long long)p->k.dims[2], (long long)p->k.dims[0],
              (long long)p->paged_kv.max_blocks_per_seq);
        if (p->paged_kv.block_table_stride != 0 &&
            p->paged_kv.block_table_stride != p->paged_kv.max_blocks_per_seq)
            token(&t, "bt_stride=%lld", (long long)p->paged_kv.block_table_stride);
    }
    token(&t, "qkvo=%s.%s.%s.%s", sdpa_dtype_name(p->q.dtype), sdpa_dtype_name(p->k.dtype),
          sdpa_dtype_name(p->v.dtype), sdpa_dtype_name(p->dst.dtype));
    if (p->k.strides[2] == 1 && p->k.dims[3] > 1)
        token(&t, "kT");
    switch (p->mask_kind) {
    case SDPA_MASK_NONE:
        token(&t, "mask=none");
        break;
    case SDPA_MASK_BUFFER:
        token(&t, "mask=%s.%lldx%lldx%lldx%lld", sdpa_dtype_name(p->mask.dtype),
              (long long)p->mask.dims[0], (long long)p->mask.dims[1], (long long)p->mask.dims[2],
              (long long)p->mask.dims[3]);
        break;
    case SDPA_MASK_CAUSAL_TOP_LEFT:
        token(&t, "mask=causal_tl");
        break;
    case SDPA_MASK_CAUSAL_BOTTOM_RIGHT:
        token(&t, "mask=causal_br");
        break;
    }
    const char *divide = p->invert_scale ? "_div" : "";
    if (p->scale_kind == SDPA_SCALE_HOST)
        token(&t, "scale=host%s", divide);
    else if (p->scale_kind == SDPA_SCALE_DEVICE)
        token(&t, "scale=dev.%s%s", sdpa_dtype_name(p->scale_dtype), divide);
    else
        token(&t, "scale=none");
    if (p->window.enabled)
        token(&t, "window=l%lld.r%lld", (long long)p->window.left, (long long)p->window.right);
    if (p->softcap != 0.0f)
        token(&t, "softcap=%.9g", (double)p->softcap);
    if (p->alibi != SDPA_ALIBI_NONE)
        token(&t, "alibi=%s", p->alibi == SDPA_ALIBI_PER_BATCH_HEAD ? "bh" : "h");
    if (p->softmax_kind == SDPA_SOFTMAX_INF_AS_ZERO)
        token(&t, "softmax=inf_as_zero");
    if (p->kq_acc_dtype == SDPA_DTYPE_F16 || p->vs_acc_dtype == SDPA_DTYPE_F16)
        token(&t, "acc=%s.%s", sdpa_dtype_name(p->kq_acc_dtype), sdpa_dtype_name(p->vs_acc_dtype));
    quant_token(&t, "kq", &p->k_quant);
    quant_token(&t, "vq", &p->v_quant);
    if (p->dropout.enabled)
        token(&t, "dropout=%s%s%s", p->dropout.host_scalars ? "host" : "dev",
              p->dropout.with_offset ? "+offset" : "", p->dropout.with_mask_output ? "+mask" : "");
    if (p->num_splits != 0)
        token(&t, "splits=%u", p->num_splits);
    if (p->prop_kind == SDPA_BACKWARD) {
        if (p->ds.dtype != SDPA_DTYPE_UNDEF)
            token(&t, "ds=%s", sdpa_dtype_name(p->ds.dtype));
        if (p->deterministic)
            token(&t, "deterministic");
    }
    return out;
}
