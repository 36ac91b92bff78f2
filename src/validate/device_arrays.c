/* device_arrays.c - the contract of the device arrays, checked on the host
 * (device_arrays.h). */
#include "device_arrays.h"

#include "error.h"

void sdpa_device_array_counts(const sdpa_problem_desc_t *p, const sdpa_shape_t *shape,
                              size_t *cu_seqlens, size_t *block_table, size_t *cache_seqlens)
{
    const size_t batch = (size_t)shape->batch;
    *cu_seqlens = p->varlen.enabled ? batch + 1 : 0;
    *block_table = p->paged_kv.enabled ? (batch - 1) * (size_t)p->paged_kv.block_table_stride +
                                                 (size_t)p->paged_kv.max_blocks_per_seq
                                       : 0;
    *cache_seqlens = p->paged_kv.enabled ? batch : 0;
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
        if (cu[b + 1] > total)
            return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                             "args->%s[%lld] = %d: past the %lld packed rows (0..%lld)", name,
                             (long long)b + 1, (int)cu[b + 1], (long long)total, (long long)total);
    }
    return SDPA_SUCCESS;
}

/* Cache lengths within the block table, and the blocks in use inside the
 * cache. */
static sdpa_status_t check_paged(const sdpa_problem_desc_t *p, const sdpa_device_arrays_t *a,
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

sdpa_status_t sdpa_device_arrays_check(const sdpa_problem_desc_t *p, const sdpa_shape_t *shape,
                                       const sdpa_device_arrays_t *arrays)
{
    if (p->varlen.enabled) {
        SDPA_TRY(check_cumulative(arrays->cu_seqlens_q, shape->batch, p->q.dims[2], shape->q_len,
                                  "cu_seqlens_q", "varlen.max_seqlen_q"));
        SDPA_TRY(check_cumulative(arrays->cu_seqlens_k, shape->batch, p->k.dims[2], shape->k_len,
                                  "cu_seqlens_k", "varlen.max_seqlen_k"));
    }
    if (p->paged_kv.enabled)
        SDPA_TRY(check_paged(p, arrays, shape->batch));
    return SDPA_SUCCESS;
}
