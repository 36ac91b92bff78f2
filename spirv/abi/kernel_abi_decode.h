/*
 * kernel_abi_decode.h - what the host and the thin-Q decode kernel
 * (sdpa_decode.cl) agree on: name, variant, geometry, local memory and the
 * layout of the split-KV partial results. The arguments are the forward's
 * (sdpa_fwd_args.def); the kernel reads the constants the portable forward
 * reads, with WG_M_KQ = WG_N_KQ = 1, plus DECODE_SPLIT.
 *
 * Variant sdpa_decode.0.<sg>: no array is sized by the head size (every
 * tile lives in local memory, sized by the SLM argument), so there is no
 * head-size bucket.
 *
 * Geometry: one sub-group per work-group, lanes along keys; the
 * KV_GROUP_SIZE * Sq rows of a K/V head (row r is query r % Sq of query
 * head g * KV_GROUP_SIZE + r / Sq of K/V head g) in n_blocks =
 * SDPA_DECODE_ROW_BLOCKS(rows, R) blocks of R = DECODE_ROWS rows (0: one
 * block of every row), the last possibly shorter.
 *   local size  = { sg, 1, 1 }
 *   group count = { splits, Hkv * n_blocks, B }
 * Work-group (s, g * n_blocks + j, b) serves rows j * R .. min((j + 1) * R,
 * rows) - 1 of K/V head g of batch b. It reads the keys of split s: with
 * T = ceil(Sk_b / SDPA_DECODE_KEYS(sg)) key tiles (Sk_b the batch's keys:
 * CACHE_SEQLENS[b] with a paged cache) and n = splits, tiles
 * s * ceil(T / n) .. (s + 1) * ceil(T / n) - 1.
 *
 * Output. Without DECODE_SPLIT (splits = 1) the kernel writes O (DST, its
 * strides, DST_DT) and, IS_TRAINING, the log-sum-exp workspace as the
 * forward does. With DECODE_SPLIT, DST and WS point at scratch holding one
 * state per split, dense f32: the O row of (s, b, h, i) at
 * SDPA_DECODE_PART_ROW(s, b, h, i) * D_VAL and its log-sum-exp (natural log,
 * -inf if the split saw no key of the row) at SDPA_DECODE_PART_ROW(...);
 * the merge kernel (kernel_abi_merge.h) combines the states.
 */
#ifndef SDPA_SPIRV_KERNEL_ABI_DECODE_H
#define SDPA_SPIRV_KERNEL_ABI_DECODE_H

#define SDPA_DECODE_SOURCE "sdpa_decode"
#define SDPA_DECODE_KERNEL "sdpa_decode"

/* Keys per tile: one per lane. */
#define SDPA_DECODE_KEYS(sg) (sg)

/* The most rows one work-group serves: a K/V head with more rows
 * (KV_GROUP_SIZE * Sq) is served in blocks of at most this many. */
#define SDPA_DECODE_MAX_ROWS 16

/* Work-groups serving the rows of one K/V head, blocks of block_rows. */
#define SDPA_DECODE_ROW_BLOCKS(rows, block_rows) (((rows) + (block_rows)-1) / (block_rows))

/* The most splits: the merge takes at most SDPA_MERGE_MAX_STATES states. */
#define SDPA_DECODE_MAX_SPLITS 16

/* Row index of a partial state in the split scratch, for B batches, HQ query
 * heads and SQ queries. */
#define SDPA_DECODE_PART_ROW(s, b, h, i, B, HQ, SQ) (((((s) * (B) + (b)) * (HQ) + (h)) * (SQ)) + (i))

/* Local memory in floats for a block of rows rows, head sizes d (Q, K) and
 * dv (V, O) and sub-group sg: Q [rows][d], K [keys][d], V [keys][dv], P [rows][keys],
 * O [rows][dv], and per lane the running max, sum and rescaling factor
 * [rows][sg] each. */
#define SDPA_DECODE_SLM_FLOATS(rows, d, dv, sg)                                                    \
    ((rows) * ((d) + (dv)) + ((d) + (dv)) * SDPA_DECODE_KEYS(sg) + (rows) * SDPA_DECODE_KEYS(sg) + \
     3 * (rows) * (sg))
#define SDPA_DECODE_SLM_BYTES(rows, d, dv, sg) (4 * SDPA_DECODE_SLM_FLOATS(rows, d, dv, sg))

#endif /* SDPA_SPIRV_KERNEL_ABI_DECODE_H */
