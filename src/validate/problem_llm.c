/* problem_llm.c - checking the ABI 1.1 problem members (problem_llm.h). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "error.h"
#include "problem.h"
#include "problem_llm.h"
#include "size_math.h"

/* Block sizes of a paged cache (sdpa.h). */
#define SDPA_PAGED_MIN_BLOCK 16
#define SDPA_PAGED_MAX_BLOCK 256

size_t sdpa_problem_desc_size(uint32_t version)
{
    return version == 1   ? SDPA_PROBLEM_DESC_V1_SIZE
           : version == 2 ? SDPA_PROBLEM_DESC_V2_SIZE
           : version == 3 ? sizeof(sdpa_problem_desc_t)
                          : 0;
}

size_t sdpa_exec_args_size(uint32_t version)
{
    return version == 1   ? SDPA_EXEC_ARGS_V1_SIZE
           : version == 2 ? SDPA_EXEC_ARGS_V2_SIZE
           : version == 3 ? sizeof(sdpa_exec_args_t)
                          : 0;
}

void sdpa_llm_zero_newer(sdpa_problem_desc_t *d, uint32_t version)
{
    if (version < 3)
        d->sinks = 0;
}

void sdpa_llm_zero_newer_args(sdpa_exec_args_t *a, uint32_t version)
{
    if (version < 3) {
        a->sinks = NULL;
        a->diff_sinks = NULL;
    }
}

size_t sdpa_features_size(uint32_t version)
{
    return version == 1   ? SDPA_FEATURES_V1_SIZE
           : version == 2 ? SDPA_FEATURES_V2_SIZE
           : version == 3 ? sizeof(sdpa_features_t)
                          : 0;
}

sdpa_status_t sdpa_llm_check_flags(const sdpa_problem_desc_t *d)
{
    SDPA_TRY(sdpa_check_bool("varlen.enabled", d->varlen.enabled));
    SDPA_TRY(sdpa_check_bool("paged_kv.enabled", d->paged_kv.enabled));
    SDPA_TRY(sdpa_check_bool("window.enabled", d->window.enabled));
    SDPA_TRY(sdpa_check_bool("sinks", d->sinks));
    SDPA_TRY(sdpa_check_enum("alibi", (unsigned)d->alibi, SDPA_ALIBI_PER_BATCH_HEAD,
                        "sdpa_alibi_kind_t"));
    if (d->varlen.enabled && d->paged_kv.enabled)
        return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                         "varlen.enabled = 1 with paged_kv.enabled = 1: a paged cache takes "
                         "[B, Hq, Sq, D] queries, not packed ones");
    return SDPA_SUCCESS;
}

/* A size of the varlen or paged descriptor in 1..INT32_MAX (the kernels
 * take sizes as int). */
static sdpa_status_t check_count(const char *field, int64_t value)
{
    if (value < 1)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "%s = %lld: must be >= 1", field,
                         (long long)value);
    if (value > INT32_MAX)
        return sdpa_fail(SDPA_ERROR_UNSUPPORTED, "%s = %lld: sizes above %d are not supported",
                         field, (long long)value, INT32_MAX);
    return SDPA_SUCCESS;
}

static sdpa_status_t check_varlen(const sdpa_problem_desc_t *d)
{
    const sdpa_varlen_desc_t *v = &d->varlen;
    SDPA_TRY(check_count("varlen.batch", v->batch));
    SDPA_TRY(check_count("varlen.max_seqlen_q", v->max_seqlen_q));
    SDPA_TRY(check_count("varlen.max_seqlen_k", v->max_seqlen_k));
    if (d->q.dims[0] != 1)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "q.dims[0] = %lld with varlen.enabled = 1: the sequences are packed "
                         "along dims[2] ([1, Hq, total_q, D]), dims[0] must be 1",
                         (long long)d->q.dims[0]);
    if (v->max_seqlen_q > d->q.dims[2])
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "varlen.max_seqlen_q = %lld exceeds q.dims[2] = %lld, the packed "
                         "queries of every sequence",
                         (long long)v->max_seqlen_q, (long long)d->q.dims[2]);
    if (v->max_seqlen_k > d->k.dims[2])
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "varlen.max_seqlen_k = %lld exceeds k.dims[2] = %lld, the packed keys "
                         "of every sequence",
                         (long long)v->max_seqlen_k, (long long)d->k.dims[2]);
    return SDPA_SUCCESS;
}

/* The paged layout's sizes; its combinations are check_paged_use's. */
static sdpa_status_t check_paged_layout(const sdpa_problem_desc_t *d)
{
    const sdpa_paged_kv_desc_t *pk = &d->paged_kv;
    const int64_t block = d->k.dims[2], blocks = d->k.dims[0];
    if (block < SDPA_PAGED_MIN_BLOCK || block > SDPA_PAGED_MAX_BLOCK || (block & (block - 1)))
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "k.dims[2] = %lld (block_size) with paged_kv.enabled = 1: must be a "
                         "power of two in %d..%d",
                         (long long)block, SDPA_PAGED_MIN_BLOCK, SDPA_PAGED_MAX_BLOCK);
    SDPA_TRY(check_count("paged_kv.max_blocks_per_seq", pk->max_blocks_per_seq));
    if (pk->max_blocks_per_seq > blocks)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "paged_kv.max_blocks_per_seq = %lld: a block table larger than the cache "
                         "(k.dims[0] = %lld blocks)",
                         (long long)pk->max_blocks_per_seq, (long long)blocks);
    if (pk->block_table_stride != 0 && pk->block_table_stride < pk->max_blocks_per_seq)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "paged_kv.block_table_stride = %lld: rows of %lld entries need a stride "
                         "of at least that (or 0)",
                         (long long)pk->block_table_stride, (long long)pk->max_blocks_per_seq);
    if (pk->block_table_stride > INT32_MAX)
        return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                         "paged_kv.block_table_stride = %lld: sizes above %d are not supported",
                         (long long)pk->block_table_stride, INT32_MAX);
    if (pk->max_blocks_per_seq * block > INT32_MAX)
        return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                         "paged_kv.max_blocks_per_seq = %lld x block_size %lld: contexts above "
                         "%d keys are not supported",
                         (long long)pk->max_blocks_per_seq, (long long)block, INT32_MAX);
    return SDPA_SUCCESS;
}

/* What a paged cache cannot be combined with. */
static sdpa_status_t check_paged_use(const sdpa_problem_desc_t *d)
{
    if (d->prop_kind == SDPA_BACKWARD)
        return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                         "paged_kv.enabled = 1 with prop_kind = BACKWARD: a paged KV cache is "
                         "read by forward passes only");
    if (d->mask_kind == SDPA_MASK_BUFFER)
        return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                         "mask_kind = BUFFER with paged_kv.enabled = 1: a paged cache takes the "
                         "causal masks, the window and ALiBi, not a mask buffer");
    if (d->dropout.enabled)
        return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                         "dropout.enabled = 1 with paged_kv.enabled = 1: a paged cache serves "
                         "inference, without dropout");
    return SDPA_SUCCESS;
}

sdpa_status_t sdpa_llm_check_layout(const sdpa_problem_desc_t *d)
{
    if (d->varlen.enabled)
        SDPA_TRY(check_varlen(d));
    if (d->paged_kv.enabled)
        SDPA_TRY(check_paged_layout(d));
    return SDPA_SUCCESS;
}

sdpa_status_t sdpa_llm_check(const sdpa_problem_desc_t *d)
{
    if (d->paged_kv.enabled)
        SDPA_TRY(check_paged_use(d));
    if (d->window.enabled) {
        if (d->window.left < -1 || d->window.right < -1)
            return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                             "window.%s = %lld: a bound is >= 0, or -1 for unbounded",
                             d->window.left < -1 ? "left" : "right",
                             (long long)(d->window.left < -1 ? d->window.left : d->window.right));
    }
    if (!(d->softcap >= 0.0f) || isinf(d->softcap))
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "softcap = %g: must be 0 (off) or a finite value > 0", (double)d->softcap);
    return SDPA_SUCCESS;
}

void sdpa_llm_scores_dims(const sdpa_problem_desc_t *d, int64_t out[4])
{
    out[0] = d->q.dims[0];
    out[1] = d->q.dims[1];
    out[2] = d->q.dims[2];
    out[3] = d->k.dims[2];
    if (d->varlen.enabled) {
        out[0] = d->varlen.batch;
        out[2] = d->varlen.max_seqlen_q;
        out[3] = d->varlen.max_seqlen_k;
    } else if (d->paged_kv.enabled) {
        out[3] = sdpa_size_to_int64(sdpa_size_mul(sdpa_size_of(d->paged_kv.max_blocks_per_seq),
                                                  sdpa_size_of(d->k.dims[2])));
    }
}

void sdpa_llm_normalize(sdpa_problem_desc_t *d)
{
    if (!d->varlen.enabled)
        memset(&d->varlen, 0, sizeof(d->varlen));
    if (!d->paged_kv.enabled)
        memset(&d->paged_kv, 0, sizeof(d->paged_kv));
    else if (d->paged_kv.block_table_stride == 0)
        d->paged_kv.block_table_stride = d->paged_kv.max_blocks_per_seq;
    if (!d->window.enabled)
        memset(&d->window, 0, sizeof(d->window));
    if (d->softcap == 0.0f)
        d->softcap = 0.0f; /* -0 is off too */
    if (d->prop_kind == SDPA_BACKWARD)
        d->num_splits = 0; /* forward only */
}

void sdpa_llm_copy(sdpa_problem_desc_t *out, const sdpa_problem_desc_t *d)
{
    memset(&out->varlen, 0, sizeof(out->varlen));
    out->varlen.enabled = d->varlen.enabled;
    out->varlen.batch = d->varlen.batch;
    out->varlen.max_seqlen_q = d->varlen.max_seqlen_q;
    out->varlen.max_seqlen_k = d->varlen.max_seqlen_k;
    memset(&out->paged_kv, 0, sizeof(out->paged_kv));
    out->paged_kv.enabled = d->paged_kv.enabled;
    out->paged_kv.max_blocks_per_seq = d->paged_kv.max_blocks_per_seq;
    out->paged_kv.block_table_stride = d->paged_kv.block_table_stride;
    memset(&out->window, 0, sizeof(out->window));
    out->window.enabled = d->window.enabled;
    out->window.left = d->window.left;
    out->window.right = d->window.right;
    out->softcap = d->softcap;
    out->alibi = d->alibi;
    out->num_splits = d->num_splits;
    out->sinks = d->sinks;
}

/* A device array of 4-byte elements the problem needs. */
static sdpa_status_t need_array(const void *pointer, const char *member, const char *reason)
{
    if (pointer == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "args->%s is NULL but %s", member, reason);
    if ((uintptr_t)pointer % 4 != 0)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "args->%s = %p is not aligned to its elements (4 bytes)", member, pointer);
    return SDPA_SUCCESS;
}

sdpa_status_t sdpa_llm_args_check(const sdpa_problem_desc_t *p, const sdpa_exec_args_t *a)
{
    if (p->varlen.enabled) {
        SDPA_TRY(need_array(a->cu_seqlens_q, "cu_seqlens_q", "varlen.enabled = 1"));
        SDPA_TRY(need_array(a->cu_seqlens_k, "cu_seqlens_k", "varlen.enabled = 1"));
    }
    if (p->paged_kv.enabled) {
        SDPA_TRY(need_array(a->block_table, "block_table", "paged_kv.enabled = 1"));
        SDPA_TRY(need_array(a->cache_seqlens, "cache_seqlens", "paged_kv.enabled = 1"));
    }
    if (p->alibi != SDPA_ALIBI_NONE)
        SDPA_TRY(need_array(a->alibi_slopes, "alibi_slopes",
                       p->alibi == SDPA_ALIBI_PER_HEAD ? "alibi = PER_HEAD"
                                                       : "alibi = PER_BATCH_HEAD"));
    if (p->sinks) {
        SDPA_TRY(need_array(a->sinks, "sinks", "sinks = 1"));
        if (p->prop_kind == SDPA_BACKWARD)
            SDPA_TRY(need_array(a->diff_sinks, "diff_sinks", "sinks = 1 in backward"));
    }
    return SDPA_SUCCESS;
}
