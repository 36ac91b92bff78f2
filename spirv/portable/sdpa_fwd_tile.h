/*
 * sdpa_fwd_tile.h - moving tiles between global memory (any dtype, any
 * strides) and the forward kernel's f32 tiles in local memory.
 *
 * Every copy is cooperative: the work-group's sub-groups take rows in turn
 * and the lanes of a sub-group take consecutive columns. When a row is
 * contiguous in global memory (innermost stride 1, tested at run time: the
 * test is uniform and costs nothing) the lanes read consecutive elements
 * from a sub-group-uniform row pointer, which the GPU coalesces and the CPU
 * device turns into one vector load; otherwise each lane computes its own
 * 64-bit offset (a gather). Full chunks of SUBGROUP_SIZE columns and the
 * tail are separate loops, so that the full chunks carry no lane mask.
 */
#ifndef SDPA_SPIRV_FWD_TILE_H
#define SDPA_SPIRV_FWD_TILE_H

#include "sdpa_device_arrays.h"
#include "sdpa_fwd_quant.h"
#include "sdpa_uniform.h"

static inline bool sdpa_fwd_is_nibble(int dt)
{
    return dt == SDPA_DT_S4 || dt == SDPA_DT_U4;
}

/* log2 of the nibbles (4 bits) one element of dtype dt takes: 0 for s4
 * and u4, 1 for the byte types, 2 for f16 and bf16, 3 for f32 and s32, as
 * 2-bit fields of one constant indexed by dt (a chain of comparisons
 * becomes a switch that llvm-spirv translates into an invalid OpPhi). */
static inline int sdpa_fwd_log2_nibbles(int dt)
{
    const uint fields = (3u << 2 * SDPA_DT_F32) | (2u << 2 * SDPA_DT_F16) |
                        (2u << 2 * SDPA_DT_BF16) | (1u << 2 * SDPA_DT_S8) |
                        (1u << 2 * SDPA_DT_U8) | (0u << 2 * SDPA_DT_S4) | (0u << 2 * SDPA_DT_U4) |
                        (3u << 2 * SDPA_DT_S32) | (1u << 2 * SDPA_DT_F8_E4M3) |
                        (1u << 2 * SDPA_DT_F8_E5M2);
    return (int)((fields >> (2 * dt)) & 3u);
}

/* 1 for the one-byte types: s8, u8 and the 8-bit floats. Range tests, not
 * a chain of ==, which LLVM makes a switch (see below). */
static inline bool sdpa_fwd_is_byte(int dt)
{
    return (uint)(dt - SDPA_DT_S8) <= (uint)(SDPA_DT_U8 - SDPA_DT_S8) ||
           (uint)(dt - SDPA_DT_F8_E4M3) <= (uint)(SDPA_DT_F8_E5M2 - SDPA_DT_F8_E4M3);
}

/* p advanced by n elements of dtype dt (not a 4-bit type). Selects, not a
 * switch: llvm-spirv turns a switch whose cases share a block into an
 * OpPhi the SPIR-V validator refuses. */
static inline const global void *sdpa_fwd_advance(const global void *p, long n, int dt)
{
    if (dt == SDPA_DT_F16 || dt == SDPA_DT_BF16)
        return (const global ushort *)p + n;
    if (sdpa_fwd_is_byte(dt))
        return (const global uchar *)p + n;
    return (const global float *)p + n;
}

/* Where this lane's element c = c0 + lane of a row lives: a uniform base and
 * a small lane index on the contiguous path, else the full 64-bit offset. */
#define SDPA_FWD_ELEMENT(src, off, stride, c0, dt, base, idx)                                      \
    do {                                                                                           \
        if ((stride) == 1 && !sdpa_fwd_is_nibble(dt)) {                                            \
            (base) = sdpa_fwd_advance((src), (off) + (c0), (dt));                                  \
            (idx) = get_sub_group_local_id();                                                      \
        } else {                                                                                   \
            (base) = (src);                                                                        \
            (idx) = (off) + (long)((c0) + (int)get_sub_group_local_id()) * (stride);               \
        }                                                                                          \
    } while (0)

/*
 * Element c0 + lane of a contiguous row of 4-bit integers starting at an
 * even element (sdpa.h: every stride but the innermost is even), as f32:
 * the sub-group's SUBGROUP_SIZE / 2 bytes are read as uniform loads into one
 * word, and each lane shifts out its nibble. A per-lane byte load would be
 * a gather on the CPU device.
 */
static inline __attribute__((always_inline)) float
sdpa_fwd_nibble_row_element(const global uchar *bytes, bool is_signed)
{
    ulong word = 0;
    for (int b = 0; b < SUBGROUP_SIZE / 2; b++)
        word |= (ulong)bytes[b] << (8 * b);
    uint n = (uint)(word >> (4 * get_sub_group_local_id())) & 0xfu;
    return is_signed ? (float)((int)(n << 28) >> 28) : (float)n;
}

/* Element c0 + lane of a row of K or V along the head dimension (token
 * `token`), as f32. `full`: the whole chunk c0..c0+SUBGROUP_SIZE-1 lies in
 * the row (the 4-bit word read may not run past its end otherwise). */
static inline __attribute__((always_inline)) float
sdpa_fwd_kv_row_element(const global void *src, long off, long stride, int c0,
                        const private sdpa_fwd_kv_format *f, long token, bool full)
{
    /* When the scale groups are whole multiples of the chunk, all lanes share
     * one group: index it with c0, which the compiler sees as uniform, so
     * that the scale and zero point are one broadcast load, not a gather. */
    const int d = f->group_size % SUBGROUP_SIZE == 0 ? c0 : c0 + (int)get_sub_group_local_id();
#if SUBGROUP_SIZE <= 16 /* the sub-group's nibbles fit one ulong */
    if (sdpa_fwd_is_nibble(f->dt) && stride == 1 && full) {
        float q = sdpa_fwd_nibble_row_element((const global uchar *)src + ((off + c0) >> 1),
                                              f->dt == SDPA_DT_S4);
        return sdpa_fwd_dequantize(q, f, token, d);
    }
#endif
    const global void *base;
    long idx;
    SDPA_FWD_ELEMENT(src, off, stride, c0, f->dt, base, idx);
    return sdpa_fwd_kv_load(base, idx, f, token, d);
}

/* The head-dim row of token `token` of K or V: n elements at
 * src + off + c * stride (c = 0..n-1), written as f32 to dst[c], or zeros
 * when the row is not `valid` (read anyway, see sdpa_fwd_stage_kv). Called
 * with stride == 1 as a literal on the contiguous path. */
static inline __attribute__((always_inline)) void
sdpa_fwd_copy_kv_row(local float *dst, const global void *src, long off, long stride, int n,
                     const private sdpa_fwd_kv_format *f, long token, bool valid)
{
    const int lane = get_sub_group_local_id();
    int c0 = 0;
    for (; c0 + SUBGROUP_SIZE <= n; c0 += SUBGROUP_SIZE) {
        float x = sdpa_fwd_kv_row_element(src, off, stride, c0, f, token, true);
        dst[c0 + lane] = valid ? x : 0.0f;
    }
    if (c0 < n && c0 + lane < n) {
        float x = sdpa_fwd_kv_row_element(src, off, stride, c0, f, token, false);
        dst[c0 + lane] = valid ? x : 0.0f;
    }
}

/* Zeroes n floats at dst[c * dst_stride]. */
static inline void sdpa_fwd_zero_row(local float *dst, int dst_stride, int n)
{
    const int lane = get_sub_group_local_id();
    for (int c0 = 0; c0 < n; c0 += SUBGROUP_SIZE)
        if (c0 + lane < n)
            dst[(c0 + lane) * dst_stride] = 0.0f;
}

/* A paged KV cache (PAGED, sdpa.h): the sequence's row of the block
 * table, log2 of the block size, the tokens of one block in per-group
 * scales (Hkv * block_size: the scales are dense [num_blocks, Hkv,
 * block_size, D / group]) and the blocks of the cache, which every table
 * entry is clamped into (sdpa_device_arrays.h). */
typedef struct sdpa_fwd_paged {
    const global int *table;
    int block_log2;
    long block_tokens;
    int num_blocks;
} sdpa_fwd_paged;

/* The paged cache of batch b from the kernel arguments (BLOCK_TABLE, its
 * row stride, BLOCK_LOG2, NUM_BLOCKS), n_kv the K/V heads. */
static inline __attribute__((always_inline)) sdpa_fwd_paged
sdpa_fwd_paged_of(const global int *table, long b, int table_stride, int block_log2, int n_kv,
                  int num_blocks)
{
    sdpa_fwd_paged pg;
    pg.table = SC(PAGED) ? table + b * table_stride : table;
    pg.block_log2 = block_log2;
    pg.block_tokens = (long)n_kv << block_log2;
    pg.num_blocks = num_blocks;
    return pg;
}

/* With PAGED, turns the offset and token of key `key` of a head (off =
 * head + key * key_stride, token = token0 + key) into those of its row in
 * its cache block; without, leaves them. */
static inline __attribute__((always_inline)) void
sdpa_fwd_paged_key(const private sdpa_fwd_paged *pg, int key, long block_stride, long key_stride,
                   private long *off, private long *token)
{
    if (!SC(PAGED))
        return;
    const long block = sdpa_paged_block(pg->table[key >> pg->block_log2], pg->num_blocks);
    const int row = key & ((1 << pg->block_log2) - 1);
    *off += block * block_stride + (long)(row - key) * key_stride;
    *token += block * pg->block_tokens + (row - key);
}

/* Where a key tile's K or V lives: what sdpa_fwd_stage_kv reads, and O += V
 * P with V_FROM_GLOBAL. With PAGED, key j is row j % block_size of cache
 * block pg->table[j / block_size] (sdpa_fwd_paged): head and token0 are
 * then the head's offset and token index inside a block. */
typedef struct sdpa_fwd_kv_source {
    const global void *src;
    long head;         /* offset of the head (with PAGED: inside a block) */
    long key_stride;   /* K_S2 or V_S2 */
    long block_stride; /* K_S0 or V_S0 (PAGED) */
    long token0;       /* dense token index of key 0 of the head (per-group scales) */
    int k0;            /* first key of the tile, plus the sub-group's first head-dim element: */
    int d0;
    int sk; /* keys at or past sk are zero */
    const private sdpa_fwd_kv_format *f;
    const private sdpa_fwd_paged *pg;
} sdpa_fwd_kv_source;

/* The offset and dense token index of key `key` of the source's head (a
 * key at or past sk reads the last one: its value is never used), through
 * the block table with PAGED. */
static inline __attribute__((always_inline)) void
sdpa_fwd_source_key(const private sdpa_fwd_kv_source *s, int key, private long *off,
                    private long *token)
{
    const int key_read = key < s->sk ? key : s->sk - 1;
    *off = s->head + (long)key_read * s->key_stride;
    *token = s->token0 + key_read;
    sdpa_fwd_paged_key(s->pg, key_read, s->block_stride, s->key_stride, off, token);
}

/*
 * Stages keys [s->k0, s->k0 + bk) of a K or V head as f32 in local memory:
 * element (key, d) goes to dst[key * dst_key_stride + d * dst_d_stride].
 * Keys at or past s->sk are zero. Only d < `d` is written; d_stride is the
 * tensor's head-dim stride.
 * keys_on_lanes makes the lanes run along keys (the layout of a transposed
 * K), otherwise along the head dimension (then dst_d_stride must be 1).
 *
 * The copy has the same control flow for every tile: a key past the end
 * reads the last key instead and is then replaced by zero. Intel's CPU
 * vectorizer treats a branch on the key-loop counter as divergent (the
 * counter lives across barriers) and would run the whole copy under lane
 * masks otherwise.
 */
static inline __attribute__((always_inline)) void
sdpa_fwd_stage_kv(local float *dst, int dst_key_stride, int dst_d_stride,
                  const private sdpa_fwd_kv_source *s, long d_stride, int bk, int d,
                  bool keys_on_lanes)
{
    const int sg_id = get_local_id(1);
    const int n_sg = SC(WG_M_KQ) * SC(WG_N_KQ);
    const int lane = get_sub_group_local_id();

    if (keys_on_lanes) {
        /* Rows are head-dim elements, lanes run along keys (bk columns). */
        for (int r = sg_id; r < d; r += n_sg) {
            local float *row = dst + r * dst_d_stride;
            for (int c0 = 0; c0 < bk; c0 += SUBGROUP_SIZE) {
                const int key = s->k0 + c0 + lane;
                long off, token;
                sdpa_fwd_source_key(s, key, &off, &token);
                float x = sdpa_fwd_kv_load(s->src, off + r * d_stride, s->f, token, r);
                if (c0 + SUBGROUP_SIZE <= bk || c0 + lane < bk)
                    row[(c0 + lane) * dst_key_stride] = key < s->sk ? x : 0.0f;
            }
        }
    } else {
        /* Rows are keys, lanes run along the head dimension. */
        for (int r = sg_id; r < bk; r += n_sg) {
            local float *row = dst + r * dst_key_stride;
            const int key = s->k0 + r;
            long off, token;
            sdpa_fwd_source_key(s, key, &off, &token);
            if (d_stride == 1)
                sdpa_fwd_copy_kv_row(row, s->src, off, 1, d, s->f, token, key < s->sk);
            else
                sdpa_fwd_copy_kv_row(row, s->src, off, d_stride, d, s->f, token, key < s->sk);
        }
    }
}

/*
 * V read straight from global memory by O += V P (V_FROM_GLOBAL), instead of
 * staged as f32 in local memory: on the CPU device the staging's converting
 * loads and stores cost as much as the product (doc/decode.md). Only with
 * D_FULL, so that every head-dim chunk of SUBGROUP_SIZE lies in the row,
 * and for V's rows contiguous (V_S3 == 1: the plan checks it).
 */
static inline bool sdpa_fwd_v_from_global(void)
{
#ifdef SDPA_FWD_GLOBAL_KV /* the -kvg variant (SDPA_FWD_GLOBAL_KV_FIELD) */
    return SC(V_FROM_GLOBAL) && SC(D_FULL);
#else
    return false;
#endif
}

/* This lane's element of V for key k0 + key and head-dim chunk d0 + c0 (as
 * the staging writes it: zero past the last key). */
static inline __attribute__((always_inline)) float
sdpa_fwd_v_global(const private sdpa_fwd_kv_source *v, int key, int c0)
{
    const int k = v->k0 + key;
    long off, token;
    sdpa_fwd_source_key(v, k, &off, &token);
    /* Contiguous rows only (a stride tested here would leave the gather in
     * the loop, if-converted by the CPU vectorizer). */
    const float x = sdpa_fwd_kv_row_element(v->src, off, 1, v->d0 + c0, v->f, token, true);
    return k < v->sk ? x : 0.0f;
}

/* Asks the cache for the V rows of keys k0 .. k0 + bk - 1 (d elements each),
 * one row per lane, ahead of sdpa_fwd_v_global: its reads walk down a column
 * of the tile, which the hardware prefetchers do not follow the way they
 * follow the staging's sequential reads. */
static inline __attribute__((always_inline)) void
sdpa_fwd_v_prefetch(const private sdpa_fwd_kv_source *v, int k0, int bk, int d)
{
    const int log2_nibbles = sdpa_fwd_log2_nibbles(v->f->dt);
    const size_t row_bytes = ((size_t)d << log2_nibbles) >> 1;
    for (int r = get_sub_group_local_id(); r < bk; r += SUBGROUP_SIZE) {
        long off, token;
        sdpa_fwd_source_key(v, k0 + r, &off, &token);
        prefetch((const global uchar *)v->src + ((off << log2_nibbles) >> 1), row_bytes);
    }
}

/*
 * K read straight from global memory by S = K^T Q (K_FROM_GLOBAL), instead
 * of staged as f32 in local memory: the lanes run along the head dimension
 * and each key's q.k is summed across them (sdpa_fwd_kq_global_tile), so
 * every lane of S is busy however few query rows a decode step has
 * (doc/decode.md). Only with D_FULL (whole head-dim chunks) and K's rows
 * contiguous (K_S3 == 1: the plan checks it).
 */
static inline bool sdpa_fwd_k_from_global(void)
{
#ifdef SDPA_FWD_GLOBAL_KV /* as sdpa_fwd_v_from_global */
    return SC(K_FROM_GLOBAL) && SC(D_FULL);
#else
    return false;
#endif
}

/* Element c0 + lane of a Q row as f32. */
static inline __attribute__((always_inline)) float
sdpa_fwd_q_row_element(const global void *src, long off, long stride, int c0)
{
    const global void *base;
    long idx;
    SDPA_FWD_ELEMENT(src, off, stride, c0, SC(QRY_DT), base, idx);
    return sdpa_load(base, idx, SC(QRY_DT));
}

/* One row of Q: n elements at src + off + c * stride into dst[c * dst_stride]. */
static inline __attribute__((always_inline)) void sdpa_fwd_copy_q_row(local float *dst,
                                                                      int dst_stride,
                                                                      const global void *src,
                                                                      long off, long stride, int n)
{
    const int lane = get_sub_group_local_id();
    int c0 = 0;
    for (; c0 + SUBGROUP_SIZE <= n; c0 += SUBGROUP_SIZE)
        dst[(c0 + lane) * dst_stride] = sdpa_fwd_q_row_element(src, off, stride, c0);
    if (c0 < n && c0 + lane < n)
        dst[(c0 + lane) * dst_stride] = sdpa_fwd_q_row_element(src, off, stride, c0);
}

/*
 * Stages the work-group's queries as f32: element d of row r (0 <= r < bq)
 * of the tile goes to dst[r * row_ld + d * ld]. Transposed (row_ld 1) for
 * the S = K^T Q micro-kernel, which reads consecutive queries with
 * consecutive lanes; by rows (ld 1) when K is read from global memory
 * (sdpa_fwd_kq_global_tile). Row r lives at src + off + r * row_stride;
 * rows at or past `rows` are zero.
 */
static inline __attribute__((always_inline)) void
sdpa_fwd_stage_q(local float *dst, int row_ld, int ld, const global void *src, long off,
                 long row_stride, long d_stride, int bq, int rows, int d)
{
    const int sg_id = get_local_id(1);
    const int n_sg = SC(WG_M_KQ) * SC(WG_N_KQ);

    for (int r = sg_id; r < bq; r += n_sg) {
        if (SC(REMAINDER_Q) && r >= rows) {
            sdpa_fwd_zero_row(dst + r * row_ld, ld, d);
            continue;
        }
        long row_off = off + (long)r * row_stride;
        if (d_stride == 1)
            sdpa_fwd_copy_q_row(dst + r * row_ld, ld, src, row_off, 1, d);
        else
            sdpa_fwd_copy_q_row(dst + r * row_ld, ld, src, row_off, d_stride, d);
    }
}

/* Stores src[c] * factor (local f32, c = 0..n-1) to element
 * off + c * stride of dst, in the output dtype. Called with stride == 1 as
 * a literal on the contiguous path. */
static inline __attribute__((always_inline)) void sdpa_fwd_store_row(global void *dst, long off,
                                                                     long stride,
                                                                     local const float *src, int n,
                                                                     float factor)
{
    const int lane = get_sub_group_local_id();
    const int dt = SC(DST_DT);
    for (int c0 = 0; c0 < n; c0 += SUBGROUP_SIZE) {
        if (c0 + SUBGROUP_SIZE <= n || c0 + lane < n) {
            float x = src[c0 + lane] * factor;
            if (stride == 1)
                sdpa_store((global void *)sdpa_fwd_advance(dst, off + c0, dt), lane, dt, x);
            else
                sdpa_store(dst, off + (long)(c0 + lane) * stride, dt, x);
        }
    }
}

#endif /* SDPA_SPIRV_FWD_TILE_H */
