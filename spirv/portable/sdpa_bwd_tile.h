/*
 * sdpa_bwd_tile.h - moving data between global memory (any dtype, any
 * strides, 64-bit offsets) and the backward kernels' f32 tiles in local
 * memory, and f32 atomic addition.
 *
 * Copies are cooperative: sub-groups take tile rows in turn and the lanes
 * of a sub-group take consecutive columns. The caller orients a copy so
 * that columns run along the tensor's contiguous axis when it has one; the
 * copy checks the column stride at run time (uniform, free) and calls the
 * row copy with a literal 1, so that consecutive lanes at consecutive
 * addresses become vector loads on the CPU and block loads on a GPU.
 *
 * The column stride is the head-dim stride of every copy of the main and
 * dQ kernels. When the host knows them all to be 1 (BWD_UNIT_D_STRIDES,
 * kernel_abi_bwd.h), the tests fold to the contiguous path and the
 * out-of-line copies for other layouts are not compiled at all: a fifth of
 * the main module's JIT on the CPU device (build time, issue 14).
 */
#ifndef SDPA_SPIRV_BWD_TILE_H
#define SDPA_SPIRV_BWD_TILE_H

#include "sdpa_common.h"
#include "sdpa_uniform.h"

/* One tile row: columns c < cols of dst[c * dst_c], loaded from
 * src + off + c * stride (dtype dt) when c < cols_valid, zero beyond. Whole
 * vectors first, without per-lane tests, then the tail. */
static inline __attribute__((always_inline)) void sdpa_bwd_copy_row(local float *dst, int dst_c,
                                                                    const global void *src,
                                                                    long off, long stride, int cols,
                                                                    int cols_valid, int dt)
{
    const int lane = get_sub_group_local_id();
    int c0 = 0;
    for (; c0 + SUBGROUP_SIZE <= cols_valid; c0 += SUBGROUP_SIZE)
        dst[(c0 + lane) * dst_c] = sdpa_load(src, off + (long)(c0 + lane) * stride, dt);
    for (; c0 < cols; c0 += SUBGROUP_SIZE) {
        const int c = c0 + lane;
        if (c < cols) {
            float value = 0.0f;
            if (c < cols_valid)
                value = sdpa_load(src, off + (long)c * stride, dt);
            dst[c * dst_c] = value;
        }
    }
}

/* sdpa_bwd_copy_row for a strided source (no vector loads to gain), out
 * of line: the copies in uncommon layouts then cost the build one body,
 * not one inlined copy per call site (build time, issue 14). */
static __attribute__((noinline)) void sdpa_bwd_copy_row_strided(local float *dst, int dst_c,
                                                                const global void *src, long off,
                                                                long stride, int cols,
                                                                int cols_valid, int dt)
{
    sdpa_bwd_copy_row(dst, dst_c, src, off, stride, cols, cols_valid, dt);
}

/*
 * Stages a rows x cols tile as f32: tile element (r, c) is loaded from
 * src + off + r * src_r + c * src_c (dtype dt) and stored at
 * dst[r * dst_r + c * dst_c]. Elements with r >= rows_valid or
 * c >= cols_valid are zero and never read. n_sg sub-groups share the work.
 */
static inline __attribute__((always_inline)) void
sdpa_bwd_stage(local float *dst, int dst_r, int dst_c, const global void *src, long off, long src_r,
               long src_c, int rows, int rows_valid, int cols, int cols_valid, int dt, int n_sg)
{
    for (int r = get_sub_group_id(); r < rows; r += n_sg) {
        local float *row = dst + r * dst_r;
        const long row_off = off + (long)r * src_r;
        const int valid = r < rows_valid ? cols_valid : 0;
        if (SC(BWD_UNIT_D_STRIDES) || src_c == 1)
            sdpa_bwd_copy_row(row, dst_c, src, row_off, 1, cols, valid, dt);
        else
            sdpa_bwd_copy_row_strided(row, dst_c, src, row_off, src_c, cols, valid, dt);
    }
}

/* sdpa_bwd_stage out of line, for the layouts that are not the usual
 * one (the reason of sdpa_bwd_copy_row_strided). */
static __attribute__((noinline)) void sdpa_bwd_stage_other(local float *dst, int dst_r, int dst_c,
                                                           const global void *src, long off,
                                                           long src_r, long src_c, int rows,
                                                           int rows_valid, int cols,
                                                           int cols_valid, int dt, int n_sg)
{
    sdpa_bwd_stage(dst, dst_r, dst_c, src, off, src_r, src_c, rows, rows_valid, cols, cols_valid,
                   dt, n_sg);
}

/*
 * Stages keys [k0, k0 + keys) of a K or V head (offset `head`, strides
 * s_key and s_d) transposed: element (key, d) goes to dst[d * bc + key],
 * for d < d_rows; keys from `keys` to bc are zero. A tensor whose keys are
 * contiguous (transposed K) is read along keys, any other along the head
 * dimension.
 */
static inline __attribute__((always_inline)) void
sdpa_bwd_stage_transposed(local float *dst, int bc, const global void *src, long head, long s_key,
                          long s_d, int k0, int keys, int d_rows, int dt, int n_sg)
{
    const long off = head + (long)k0 * s_key;
    if (!SC(BWD_UNIT_D_STRIDES) && s_key == 1 && s_d != 1) /* transposed K: uncommon */
        sdpa_bwd_stage_other(dst, bc, 1, src, off, s_d, s_key, d_rows, d_rows, bc, keys, dt, n_sg);
    else
        sdpa_bwd_stage(dst, 1, bc, src, off, s_key, s_d, bc, keys, d_rows, d_rows, dt, n_sg);
}

/* How a tile of results reaches global memory: converted to the
 * gradient's dtype, stored as f32 (partial sums), or added atomically into
 * f32 sums. Two flags rather than an enum: LLVM narrows a three-valued
 * selector to an i2, which llvm-spirv-15 cannot translate. */
typedef struct sdpa_bwd_out {
    bool f32;    /* the destination holds f32 */
    bool atomic; /* add atomically (implies f32) */
} sdpa_bwd_out;

/* How sdpa_bwd_atomic_add is called: see its comment. */
#ifdef SDPA_BWD_FLOAT_ATOMICS
#define SDPA_BWD_ATOMIC_ADD_CALL inline __attribute__((always_inline))
#else
#define SDPA_BWD_ATOMIC_ADD_CALL __attribute__((noinline))
#endif
static SDPA_BWD_ATOMIC_ADD_CALL void sdpa_bwd_atomic_add(global float *p, float value);

/* One element of sdpa_bwd_unstage. */
static inline __attribute__((always_inline)) void
sdpa_bwd_unstage_one(global void *dst, long at, float value, sdpa_bwd_out out, int dt)
{
    if (out.atomic) {
        if (value != 0.0f)
            sdpa_bwd_atomic_add((global float *)dst + at, value);
    } else if (out.f32) {
        ((global float *)dst)[at] = value;
    } else {
        sdpa_store(dst, at, dt, value);
    }
}

/* One row of sdpa_bwd_unstage: columns c < cols, whole vectors first. */
static inline __attribute__((always_inline)) void
sdpa_bwd_unstage_row(global void *dst, long off, long stride, local const float *src, int src_c,
                     int cols, float factor, sdpa_bwd_out out, int dt)
{
    const int lane = get_sub_group_local_id();
    int c0 = 0;
    for (; c0 + SUBGROUP_SIZE <= cols; c0 += SUBGROUP_SIZE)
        sdpa_bwd_unstage_one(dst, off + (long)(c0 + lane) * stride,
                             src[(c0 + lane) * src_c] * factor, out, dt);
    if (c0 + lane < cols)
        sdpa_bwd_unstage_one(dst, off + (long)(c0 + lane) * stride,
                             src[(c0 + lane) * src_c] * factor, out, dt);
}

/* sdpa_bwd_unstage_row to a strided destination, out of line (the reason
 * of sdpa_bwd_copy_row_strided). `out` by its fields: llvm-spirv-15 emits
 * a structure passed by value as invalid SPIR-V. */
static __attribute__((noinline)) void
sdpa_bwd_unstage_row_strided(global void *dst, long off, long stride, local const float *src,
                             int src_c, int cols, float factor, bool f32, bool atomic, int dt)
{
    sdpa_bwd_out out;
    out.f32 = f32;
    out.atomic = atomic;
    sdpa_bwd_unstage_row(dst, off, stride, src, src_c, cols, factor, out, dt);
}

/*
 * Writes a rows x cols f32 tile of local memory, element (r, c) at
 * src[r * src_r + c * src_c], times factor, to element
 * dst + off + r * dst_r + c * dst_c, as `out` says (dtype dt unless f32). n_sg sub-groups share the
 * work; lanes run along c, which the caller picks as the destination's contiguous axis.
 */
static inline __attribute__((always_inline)) void
sdpa_bwd_unstage(global void *dst, long off, long dst_r, long dst_c, local const float *src,
                 int src_r, int src_c, int rows, int cols, float factor, sdpa_bwd_out out, int dt,
                 int n_sg)
{
    for (int r = get_sub_group_id(); r < rows; r += n_sg) {
        const long row_off = off + (long)r * dst_r;
        if (SC(BWD_UNIT_D_STRIDES) || dst_c == 1)
            sdpa_bwd_unstage_row(dst, row_off, 1, src + r * src_r, src_c, cols, factor, out, dt);
        else
            sdpa_bwd_unstage_row_strided(dst, row_off, dst_c, src + r * src_r, src_c, cols,
                                         factor, out.f32, out.atomic, dt);
    }
}

/* sdpa_bwd_unstage out of line, for the layouts that are not the usual one
 * (the reasons of sdpa_bwd_copy_row_strided and sdpa_bwd_unstage_row_strided). */
static __attribute__((noinline)) void
sdpa_bwd_unstage_other(global void *dst, long off, long dst_r, long dst_c, local const float *src,
                       int src_r, int src_c, int rows, int cols, float factor, bool f32,
                       bool atomic, int dt, int n_sg)
{
    sdpa_bwd_out out;
    out.f32 = f32;
    out.atomic = atomic;
    sdpa_bwd_unstage(dst, off, dst_r, dst_c, src, src_r, src_c, rows, cols, factor, out, dt, n_sg);
}

/* *p += value, atomically. With SDPA_BWD_FLOAT_ATOMICS (the -fadd variants,
 * spirv/Makefile.am: the SPIR-V extension SPV_EXT_shader_atomic_float_add,
 * for devices that report f32 global atomic add) one OpAtomicFAddEXT, inlined:
 * on Xe-HPG and Xe-HPC one message to memory, where a call would cost a
 * call, a return and the registers around them (IGC honours noinline).
 * Else a compare-and-swap loop on the bits, which every OpenCL 2.0 device
 * runs, never inlined: the dQ epilogue calls it once per element of every
 * unrolled block, and Intel's CPU compiler scalarizes an inlined loop per
 * lane, so inlining it made the main backward module's build about twice
 * as long (build time, issue 14); the call costs little beside the
 * compare-and-swap itself. */
static SDPA_BWD_ATOMIC_ADD_CALL void sdpa_bwd_atomic_add(global float *p, float value)
{
#ifdef SDPA_BWD_FLOAT_ATOMICS
    atomic_fetch_add_explicit((volatile global atomic_float *)p, value, memory_order_relaxed,
                              memory_scope_device);
#else
    volatile global uint *bits = (volatile global uint *)p;
    uint expected = *bits;
    for (;;) {
        const uint seen = atomic_cmpxchg(bits, expected, as_uint(as_float(expected) + value));
        if (seen == expected)
            break;
        expected = seen;
    }
#endif
}

#endif /* SDPA_SPIRV_BWD_TILE_H */
