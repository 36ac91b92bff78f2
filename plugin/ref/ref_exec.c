/* ref_exec.c - the scalars one execution reads (scale, dropout), fetched on
 * the host whether the caller passed values or pointers. */
#include <string.h>

#include "error.h"

#include "ref.h"

/* The multiplier of q.k: 1 without a scale, 1 / scale when inverted. */
static double score_scale(const sdpa_problem_desc_t *p, const sdpa_exec_args_t *a)
{
    double scale;
    switch (p->scale_kind) {
    case SDPA_SCALE_HOST:
        scale = a->scale;
        break;
    case SDPA_SCALE_DEVICE:
        scale = sdpa_element_load(a->scale_ptr, 0, p->scale_dtype);
        break;
    default:
        return 1.0;
    }
    return p->invert_scale ? 1.0 / scale : scale;
}

/* Cumulative lengths cu[0..B] of a varlen problem: from 0, non-decreasing,
 * at most total, each length at most max. name is "cu_seqlens_q" or
 * "cu_seqlens_k". */
static sdpa_status_t check_cumulative(const int32_t *cu, int64_t batch, int64_t total, int64_t max,
                                      const char *name, const char *max_name)
{
    if (cu[0] != 0)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "args->%s[0] = %d: must be 0", name,
                         (int)cu[0]);
    for (int64_t b = 0; b < batch; b++) {
        const int64_t len = (int64_t)cu[b + 1] - cu[b];
        if (len < 0 || len > max)
            return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                             "args->%s[%lld] = %d after %d: sequence %lld has %lld rows, outside "
                             "0..%s = %lld",
                             name, (long long)b + 1, (int)cu[b + 1], (int)cu[b], (long long)b,
                             (long long)len, max_name, (long long)max);
    }
    if (cu[batch] > total)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "args->%s[%lld] = %d: past the %lld packed rows", name, (long long)batch,
                         (int)cu[batch], (long long)total);
    return SDPA_SUCCESS;
}

/* Cache lengths within the block table, and the blocks in use inside the
 * cache. */
static sdpa_status_t check_paged(const sdpa_problem_desc_t *p, const sdpa_exec_args_t *a,
                                 int64_t batch)
{
    const int32_t *lens = a->cache_seqlens, *table = a->block_table;
    const int64_t block = p->k.dims[2], blocks = p->k.dims[0];
    const int64_t max = p->paged_kv.max_blocks_per_seq * block;
    for (int64_t b = 0; b < batch; b++) {
        if (lens[b] < 0 || lens[b] > max)
            return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                             "args->cache_seqlens[%lld] = %d: outside 0..%lld "
                             "(max_blocks_per_seq x block_size)",
                             (long long)b, (int)lens[b], (long long)max);
        const int32_t *row = table + b * p->paged_kv.block_table_stride;
        for (int64_t e = 0; e * block < lens[b]; e++)
            if (row[e] < 0 || row[e] >= blocks)
                return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                                 "args->block_table[%lld][%lld] = %d: not a block of the cache "
                                 "(0..%lld)",
                                 (long long)b, (long long)e, (int)row[e], (long long)blocks - 1);
    }
    return SDPA_SUCCESS;
}

sdpa_status_t ref_exec_init(ref_exec_t *x, const sdpa_problem_desc_t *problem,
                            const sdpa_shape_t *shape, const sdpa_exec_args_t *args)
{
    memset(x, 0, sizeof(*x));
    x->problem = problem;
    x->shape = shape;
    x->args = args;
    x->score_scale = score_scale(problem, args);
    x->softcap = problem->softcap;
    if (problem->varlen.enabled) {
        sdpa_status_t status =
                check_cumulative(args->cu_seqlens_q, shape->batch, problem->q.dims[2], shape->q_len,
                                 "cu_seqlens_q", "varlen.max_seqlen_q");
        if (status == SDPA_SUCCESS)
            status = check_cumulative(args->cu_seqlens_k, shape->batch, problem->k.dims[2],
                                      shape->k_len, "cu_seqlens_k", "varlen.max_seqlen_k");
        if (status != SDPA_SUCCESS)
            return status;
    }
    if (problem->paged_kv.enabled) {
        sdpa_status_t status = check_paged(problem, args, shape->batch);
        if (status != SDPA_SUCCESS)
            return status;
    }
    const sdpa_dropout_desc_t *dr = &problem->dropout;
    if (!dr->enabled)
        return SDPA_SUCCESS;
    x->dropout = 1;
    if (dr->host_scalars) {
        x->dropout_p = args->dropout_p;
        x->dropout_seed = (uint64_t)args->dropout_seed;
        x->dropout_offset = dr->with_offset ? (uint64_t)args->dropout_offset : 0;
    } else {
        int64_t seed = 0, offset = 0;
        memcpy(&x->dropout_p, args->dropout_p_ptr, sizeof(float));
        memcpy(&seed, args->dropout_seed_ptr, sizeof(seed));
        if (dr->with_offset)
            memcpy(&offset, args->dropout_offset_ptr, sizeof(offset));
        x->dropout_seed = (uint64_t)seed;
        x->dropout_offset = (uint64_t)offset;
    }
    return SDPA_SUCCESS;
}

void ref_seq_of(const ref_exec_t *x, int64_t b, ref_seq_t *out)
{
    const sdpa_problem_desc_t *p = x->problem;
    const sdpa_exec_args_t *a = x->args;
    memset(out, 0, sizeof(*out));
    out->b = b;
    out->qb = out->kb = b;
    out->len_q = x->shape->q_len;
    out->len_k = x->shape->k_len;
    if (p->varlen.enabled) {
        const int32_t *cu_q = a->cu_seqlens_q, *cu_k = a->cu_seqlens_k;
        out->qb = out->kb = 0;
        out->q0 = cu_q[b];
        out->len_q = cu_q[b + 1] - cu_q[b];
        out->k0 = cu_k[b];
        out->len_k = cu_k[b + 1] - cu_k[b];
    } else if (p->paged_kv.enabled) {
        out->blocks = (const int32_t *)a->block_table + b * p->paged_kv.block_table_stride;
        out->block_size = p->k.dims[2];
        out->len_k = ((const int32_t *)a->cache_seqlens)[b];
    }
}
