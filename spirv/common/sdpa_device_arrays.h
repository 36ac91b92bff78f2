/*
 * sdpa_device_arrays.h - how every kernel reads the int32 arrays that live
 * in device memory: the varlen cu_seqlens_q/k, the paged block_table and
 * cache_seqlens. The host cannot check them (earlier commands on the list
 * may write them), so each entry is clamped into what the descriptor
 * describes before it addresses anything: bad data gives wrong numbers for
 * the rows it feeds, never an access outside a buffer (sdpa.h, "Device
 * arrays"). The one place the rule is written; the forward, decode and
 * backward kernels all read the arrays through these helpers. The
 * arithmetic is sdpa_uniform.h's, not the OpenCL built-ins: the lengths
 * bound loops, and Intel's CPU vectorizer takes a built-in's result for a
 * varying value, which ran every loop they bound under lane masks (the
 * varlen and paged benches 2 to 4 times slower).
 */
#ifndef SDPA_SPIRV_DEVICE_ARRAYS_H
#define SDPA_SPIRV_DEVICE_ARRAYS_H

#include "sdpa_uniform.h"

/* Sequence b of a packed batch: its first packed row and its length. */
typedef struct sdpa_packed_seq {
    long row0;
    int len;
} sdpa_packed_seq;

/* Sequence b from the cumulative lengths cu[0 .. B] of a batch packed into
 * `total` rows, whose sequences are at most max_len long: [start, end)
 * kept monotone inside [0, total], the length capped at max_len. */
static inline sdpa_packed_seq sdpa_packed_seq_of(const global int *cu, long b, int total,
                                                 int max_len)
{
    const int start = sdpa_iclamp(cu[b], 0, total);
    const int end = sdpa_iclamp(cu[b + 1], start, total);
    const sdpa_packed_seq s = {start, sdpa_imin(end - start, max_len)};
    return s;
}

/* The keys of sequence b of a paged cache, within the max_keys
 * (max_blocks_per_seq * block_size) its row of the block table covers. */
static inline int sdpa_paged_seq_len(const global int *cache_seqlens, long b, int max_keys)
{
    return sdpa_iclamp(cache_seqlens[b], 0, max_keys);
}

/* A block table entry as a block of the cache's num_blocks. */
static inline long sdpa_paged_block(int id, int num_blocks)
{
    return sdpa_iclamp(id, 0, num_blocks - 1);
}

#endif /* SDPA_SPIRV_DEVICE_ARRAYS_H */
