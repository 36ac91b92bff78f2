/*
 * sdpa_xe_bwd_stage.h - staging the backward's row tiles (Q and dO per
 * query block, K and V per key block of sdpa_xe_bwd_dq) into local memory
 * with sub-group block reads: a row whose elements are contiguous (head-dim
 * stride 1) and start on 4 bytes is read 16 elements at a time by one
 * block read of the sub-group (cl_intel_subgroups, sdpa_xe_intel.h), so its
 * address is computed once per row instead of once per element and lane.
 * Other layouts, the tail of a head size that is not a multiple of 16 and
 * the rows past the sequence go element by element.
 *
 * The tiles are row-major operand bits with `ld` elements per row (the A
 * and B operands of the scores, sdpa_xe_tile.h), and optionally a copy in
 * the blocked pair layout below (the B operands of dV and dK), read with one
 * sub-group block read from local memory per operand.
 */
#ifndef SDPA_SPIRV_XE_BWD_STAGE_H
#define SDPA_SPIRV_XE_BWD_STAGE_H

#include "sdpa_common.h"
#include "sdpa_xe_intel.h"
#include "sdpa_xe_local_block.h"
#include "sdpa_xe_tile.h"

/*
 * The pair layout of the Q and dO copies that are the B operands of dV and
 * dK (sdpa_xe_b_rows' layout, blocked by SUBGROUP_SIZE columns): element
 * (r, c) of a tile of `rows` rows (even) is half r % 2 of 32-bit word
 * ((c / SUBGROUP_SIZE) * (rows / 2) + r / 2) * SUBGROUP_SIZE + c %
 * SUBGROUP_SIZE, so that the operand of rows 0 .. 15 and columns c0 ..
 * (c0 a multiple of SUBGROUP_SIZE) is 8 * SUBGROUP_SIZE consecutive words:
 * one block read (sdpa_xe_bwd_b_pairs).
 */
static inline int sdpa_xe_bwd_pair_index(int rows, int r, int c)
{
    /* Unsigned: clang-15 turns a signed remainder into a freeze, which
     * llvm-spirv-15 cannot translate. */
    const uint uc = (uint)c, sg = SUBGROUP_SIZE;
    const uint word = ((uc / sg) * (uint)(rows / 2) + (uint)(r >> 1)) * sg + uc % sg;
    return (int)(word * 2 + (uint)(r & 1));
}

/*
 * Where the tiles put element (r, c): tile[(c / 16) * cpitch + r * ld + c %
 * 16]. Row-major with `ld` elements per row is cpitch = 16; the blocked
 * layout of K and V is ld = 16, cpitch = rows * 16: the 16 columns c0 ..
 * c0 + 15 (c0 a multiple of 16) of consecutive rows are consecutive runs of
 * 16, so the A operand of 4 rows is one block read of local memory
 * (sdpa_xe_bwd.cl).
 */
static inline int sdpa_xe_bwd_tile_index(int ld, int cpitch, int r, int c)
{
    return (int)(((uint)c >> 4) * (uint)cpitch + (uint)(r * ld) + ((uint)c & 15u));
}

/* The B operand of rows 0 .. 15 and columns c0 + lane of a tile in that
 * layout. */
static inline __attribute__((always_inline)) int8 sdpa_xe_bwd_b_pairs(const local ushort *pairs,
                                                                      int rows, int c0)
{
    return as_int8(sdpa_xe_local_read8((const local uint *)pairs +
                                       (c0 / SUBGROUP_SIZE) * (rows / 2) * SUBGROUP_SIZE));
}

/* Writes element (r, c) of a tile of `rows` rows (and of its pair copy, if
 * pairs is set). */
static inline __attribute__((always_inline)) void
sdpa_xe_bwd_put(local ushort *tile, local ushort *pairs, int ld, int cpitch, int rows, int r, int c,
                ushort bits)
{
    tile[sdpa_xe_bwd_tile_index(ld, cpitch, r, c)] = bits;
    if (pairs)
        pairs[sdpa_xe_bwd_pair_index(rows, r, c)] = bits;
}

/* Writes this lane's part of the 16 elements at column c0 (a multiple of
 * 16) of tile row r (16 lanes: element c0 + lane in w; 8 lanes: elements
 * c0 + 2 lane, low half, and c0 + 2 lane + 1). */
static inline __attribute__((always_inline)) void
sdpa_xe_bwd_put_chunk(local ushort *tile, local ushort *pairs, int ld, int cpitch, int rows, int r,
                      int c0, uint w)
{
    local ushort *run = tile + sdpa_xe_bwd_tile_index(ld, cpitch, r, c0);
    const int lane = get_sub_group_local_id();
    /* The pair word of (r, c0 + lane) in sdpa_xe_bwd_pair_index's layout,
     * c0 / SUBGROUP_SIZE being uniform. */
    const int word0 = ((c0 / SUBGROUP_SIZE) * (rows / 2) + (r >> 1)) * SUBGROUP_SIZE;
    if (SUBGROUP_SIZE == 16) {
        run[lane] = (ushort)w;
        if (pairs)
            pairs[(word0 + lane) * 2 + (r & 1)] = (ushort)w;
        return;
    }
    ((local uint *)run)[lane] = w;
    if (pairs) {
        /* Columns c0 + 2 lane and + 1: lanes 0-3 in the first 8-column
         * block, 4-7 in the second. */
        const uint c = 2 * get_sub_group_local_id();
        const int word = word0 + (int)((c >> 3) * (uint)(rows / 2) * 8 + (c & 7));
        pairs[word * 2 + (r & 1)] = (ushort)w;
        pairs[(word + 1) * 2 + (r & 1)] = (ushort)(w >> 16);
    }
}

/* This lane's part of 16 contiguous elements at p (4-byte aligned): one
 * sub-group block read. */
static inline __attribute__((always_inline)) uint sdpa_xe_bwd_read_chunk(const global ushort *p)
{
    if (SUBGROUP_SIZE == 16)
        return intel_sub_group_block_read_us(p);
    return intel_sub_group_block_read((const global uint *)p);
}

/* The same for 4 chunks p[0 .. 63]: component j is chunk j. */
static inline __attribute__((always_inline)) uint4 sdpa_xe_bwd_read_chunks4(const global ushort *p)
{
    if (SUBGROUP_SIZE == 16)
        return convert_uint4(intel_sub_group_block_read_us4(p));
    return intel_sub_group_block_read4((const global uint *)p);
}

/*
 * sdpa_xe_stage_tile for tensors in the operands' dtype (no conversion):
 * the [rows][cols] block at src + off (element strides r_stride, c_stride)
 * into tile (and pairs, if not NULL); rows past rows_valid and columns past
 * cols_valid (up to cols) become zero. The n_sg sub-groups of the
 * work-group (this one is sg_id) share the rows. Block reads when
 * c_stride is 1 and every row starts on 4 bytes; the tail past the last
 * whole chunk of 16 goes element by element. The tile's layout is ld and
 * cpitch's (sdpa_xe_bwd_tile_index).
 */
static inline __attribute__((always_inline)) void
sdpa_xe_bwd_stage_rows(local ushort *tile, local ushort *pairs, int ld, int cpitch,
                       const global void *src, long off, long r_stride, long c_stride, int rows,
                       int rows_valid, int cols, int cols_valid, int sg_id, int n_sg)
{
    const bool block = c_stride == 1 && ((off | r_stride) & 1) == 0 && ((ulong)src & 3) == 0;
    const int lane = get_sub_group_local_id();
    const int whole = cols_valid / 16 * 16; /* columns read by block reads */
    for (int r = sg_id; r < rows; r += n_sg) {
        const bool valid_row = r < rows_valid;
        const global ushort *row =
                (const global ushort *)src + off + (long)(valid_row ? r : 0) * r_stride;
        int c0 = 0;
        if (valid_row && block) {
            for (; c0 + 64 <= whole; c0 += 64) {
                const uint4 w = sdpa_xe_bwd_read_chunks4(row + c0);
                sdpa_xe_bwd_put_chunk(tile, pairs, ld, cpitch, rows, r, c0, w.s0);
                sdpa_xe_bwd_put_chunk(tile, pairs, ld, cpitch, rows, r, c0 + 16, w.s1);
                sdpa_xe_bwd_put_chunk(tile, pairs, ld, cpitch, rows, r, c0 + 32, w.s2);
                sdpa_xe_bwd_put_chunk(tile, pairs, ld, cpitch, rows, r, c0 + 48, w.s3);
            }
            for (; c0 < whole; c0 += 16)
                sdpa_xe_bwd_put_chunk(tile, pairs, ld, cpitch, rows, r, c0,
                                      sdpa_xe_bwd_read_chunk(row + c0));
        }
        /* The tail, invalid rows, other layouts: element by element, zeros
         * past the valid part. */
        for (int c = c0 + lane; c < cols; c += SUBGROUP_SIZE)
            sdpa_xe_bwd_put(tile, pairs, ld, cpitch, rows, r, c,
                            valid_row && c < cols_valid ? row[c * c_stride] : 0);
    }
}

#if SUBGROUP_SIZE == 8
/*
 * Xe-HPG (sub-groups of 8): a query tile of `count` rows (even) into both
 * layouts at once, in units of two rows (a pair) by 64 head-dim columns,
 * lane i holding columns 8 i .. 8 i + 7 of both rows (a 16-byte load per
 * lane and row). Those are 8 whole words of the pair layout (column block
 * 8 h + i of the pair: one 32-byte store) and 4 words of each row in the
 * blocked layout (a 16-byte store each): 5 messages per unit, where the
 * row-by-row staging took a block read and 12 stores (the pair words as
 * 16-bit halves) per row and 64 columns, each with its address.
 * Usable where the rows are 4-byte aligned with head-dim stride 1 and D %
 * 64 == 0 (sdpa_xe_bwd_stage_hpg_ok). Rows past rows_valid repeat the last
 * valid one: the scores of those queries are 0 (their LSE is -inf, their
 * last key -1), so that they add nothing. The units run to dmax (a
 * constant once specialized, so that the loop unrolls), those past d
 * skipped.
 */
static inline bool sdpa_xe_bwd_stage_hpg_ok(const global void *src, long off, long r_stride,
                                            long c_stride, int d)
{
    return c_stride == 1 && ((off | r_stride) & 1) == 0 && ((ulong)src & 3) == 0 && d % 64 == 0;
}

static inline __attribute__((always_inline)) void
sdpa_xe_bwd_stage_hpg(local ushort *tile, local ushort *pairs, int count, const global void *src,
                      long off, long r_stride, int rows_valid, int d, int dmax, int sg_id,
                      int n_sg)
{
    const int lane = get_sub_group_local_id();
    const int halves = dmax / 64, units = count / 2 * halves;
    const global ushort *base = (const global ushort *)src + off + 8 * lane;
    for (int i = 0; i < (units + n_sg - 1) / n_sg; i++) {
        const int u = sg_id + i * n_sg;
        /* Unsigned: a signed division by a power of two costs a fix-up. */
        const int j = (int)((uint)u / (uint)halves), h = u - j * halves;
        if ((units % n_sg == 0 || u < units) && 64 * h < d) {
            /* The odd row one stride after the even one, or the same
             * (the last valid row) past rows_valid: one 64-bit multiply. */
            const global ushort *even =
                    base + 64 * h + (long)sdpa_imin(2 * j, rows_valid - 1) * r_stride;
            const global ushort *odd = even + (2 * j + 1 < rows_valid ? r_stride : 0);
            const ushort8 e = as_ushort8(vload4(0, (const global uint *)even));
            const ushort8 o = as_ushort8(vload4(0, (const global uint *)odd));
            const ushort16 w = (ushort16)(e.s0, o.s0, e.s1, o.s1, e.s2, o.s2, e.s3, o.s3, e.s4,
                                          o.s4, e.s5, o.s5, e.s6, o.s6, e.s7, o.s7);
            vstore8(as_uint8(w), 0,
                    (local uint *)pairs + ((8 * h + lane) * (count / 2) + j) * 8);
            local ushort *run =
                    tile + sdpa_xe_bwd_tile_index(16, 16 * count, 2 * j, 64 * h + 8 * lane);
            vstore4(as_uint4(e), 0, (local uint *)run);
            vstore4(as_uint4(o), 0, (local uint *)(run + 16));
        }
    }
}
#endif

#endif /* SDPA_SPIRV_XE_BWD_STAGE_H */
