/*
 * sdpa_xe_probe.cl - kernels that expose, one call each, the Intel
 * sub-group built-ins the fast-path kernels use, so that
 * tests/sdpa/test_xe_emulation.c can check them against the host:
 *
 *   xe_mad_<src>_<acc>_m<M>: one matrix multiply-accumulate
 *     D = A B + C (M x SUBGROUP_SIZE, K = 16) with src f16 or bf16 and the
 *     accumulator f32 or (sub-group 16) the sources' type. The operands are
 *     built from row-major matrices with plain loads, in the layout the
 *     extension specifies (sdpa_xe_intel.h), independently of block reads.
 *   xe_block_read_<N>: the block reads the kernels use (16-bit elements with
 *     16 lanes, 32-bit with 8), to check the runtime's layout assumptions;
 *   xe_local_block_read_8: the local block read of the kernels
 *     (sdpa_xe_local_block.h), same layout, and its refusal of a
 *     misaligned address;
 *   xe_local_block_rw_8: the block read and write of local memory;
 *   xe_local_block_write_8: the backward's 8-component local block
 *     writes (16-bit with 16 lanes, 32-bit) and their refusal of a
 *     misaligned address;
 *   xe_local_block_4: the backward's 4-component local block read, its
 *     16-bit 4-component and 32-bit 2-component writes, and their refusal
 *     of a misaligned address;
 *   xe_block2d_* (sub-group 16): the emulated 2D block loads;
 *   xe_ftobf: IGC's f32 to bf16 conversions (16 and 8 values a call).
 *
 * Built only as the emulated variant (-DSDPA_XE_EMULATE) for the CPU device,
 * once per sub-group size: sdpa_xe_probe-emu.0.8 and sdpa_xe_probe-emu.0.16.
 * One sub-group per work-group: local size {SUBGROUP_SIZE, 1, 1}; work-group
 * g computes case g, so one launch checks many cases.
 *
 * Arguments of every xe_mad kernel (row-major, unpadded, case g at the g-th
 * matrix of each array):
 *   a: M x 16 ushort (f16 or bf16 bits)
 *   b: 16 x SUBGROUP_SIZE ushort
 *   c: M x SUBGROUP_SIZE accumulator: float, or ushort bits of the
 *      sources' type (in a float-sized slot)
 *   d: M x SUBGROUP_SIZE float: the result, widened to f32
 */
#include "sdpa_xe_intel.h"
#include "sdpa_xe_local_block.h"

/* Row m of A as this lane's operand component: 16 lanes hold A[m][lane],
 * 8 lanes hold A[m][2 lane] | A[m][2 lane + 1] << 16. */
static inline uint probe_a_element(const global ushort *a, int m)
{
    const uint lane = get_sub_group_local_id();
    if (SUBGROUP_SIZE == 16)
        return a[m * 16 + lane];
    return (uint)a[m * 16 + 2 * lane] | (uint)a[m * 16 + 2 * lane + 1] << 16;
}

/* This lane's column n of B: component j = B[2j][n] | B[2j + 1][n] << 16. */
static inline int8 probe_b_column(const global ushort *b)
{
    const uint n = get_sub_group_local_id();
    int w[8];
#pragma unroll
    for (int j = 0; j < 8; j++)
        w[j] = (int)((uint)b[2 * j * SUBGROUP_SIZE + n] | (uint)b[(2 * j + 1) * SUBGROUP_SIZE + n]
                                                                    << 16);
    return (int8)(w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]);
}

#if SUBGROUP_SIZE == 16
#define PROBE_A_ELEM short
#else
#define PROBE_A_ELEM int
#endif

/* Widening of an accumulator element for the output. */
#define PROBE_F32(x) (x)
#define PROBE_HALF(x) ((float)(x))
#define PROBE_BF16(x) sdpa_bf16_to_f32((ushort)(x))
/* Reading one accumulator element from c. */
#define PROBE_LOAD_F32(c, i) (((const global float *)(c))[i])
#define PROBE_LOAD_HALF(c, i) as_half(((const global ushort *)(c))[i])
#define PROBE_LOAD_BF16(c, i) ((short)((const global ushort *)(c))[i])

/* One kernel: builtin with M rows, operand vector types a_t and acc_t. */
#define PROBE_MAD(kname, builtin, M, a_t, acc_t, acc_elem_t, load, widen)                         \
    __attribute__((intel_reqd_sub_group_size(SUBGROUP_SIZE))) kernel void kname(                  \
            const global ushort *a, const global ushort *b, const global void *c, global float *d) \
    {                                                                                              \
        const uint n = get_sub_group_local_id();                                                   \
        const size_t g = get_group_id(0);                                                          \
        a += g * (M) * 16;                                                                         \
        b += g * 16 * SUBGROUP_SIZE;                                                               \
        c = (const global float *)c + g * (M) * SUBGROUP_SIZE;                                     \
        d += g * (M) * SUBGROUP_SIZE;                                                              \
        a_t av;                                                                                    \
        acc_t cv;                                                                                  \
        private PROBE_A_ELEM *ap = (private PROBE_A_ELEM *)&av;                                    \
        private acc_elem_t *cp = (private acc_elem_t *)&cv;                                        \
        _Pragma("unroll") for (int m = 0; m < (M); m++) {                                          \
            ap[m] = (PROBE_A_ELEM)probe_a_element(a, m);                                           \
            cp[m] = load(c, m * SUBGROUP_SIZE + n);                                                \
        }                                                                                          \
        acc_t r = builtin(av, probe_b_column(b), cv);                                              \
        const private acc_elem_t *rp = (const private acc_elem_t *)&r;                             \
        _Pragma("unroll") for (int m = 0; m < (M); m++)                                            \
            d[m * SUBGROUP_SIZE + n] = widen(rp[m]);                                               \
    }

#if SUBGROUP_SIZE == 16
#define PROBE_A_T(M) short##M
#define PROBE_A1 short
#else
#define PROBE_A_T(M) int##M
#define PROBE_A1 int
#endif

/* f32 accumulators: every sub-group size. */
#define PROBE_F32_ACC(M, a_t, acc_t)                                                               \
    PROBE_MAD(xe_mad_f16_f32_m##M, intel_sub_group_f16_f16_matrix_mad_k16, M, a_t, acc_t, float,   \
              PROBE_LOAD_F32, PROBE_F32)                                                           \
    PROBE_MAD(xe_mad_bf16_f32_m##M, intel_sub_group_bf16_bf16_matrix_mad_k16, M, a_t, acc_t,       \
              float, PROBE_LOAD_F32, PROBE_F32)
PROBE_F32_ACC(1, PROBE_A1, float)
PROBE_F32_ACC(2, PROBE_A_T(2), float2)
PROBE_F32_ACC(4, PROBE_A_T(4), float4)
PROBE_F32_ACC(8, PROBE_A_T(8), float8)

#if SUBGROUP_SIZE == 16
/* Accumulators in the sources' type: sub-group 16 only. */
#define PROBE_LOW_ACC(M, a_t, half_t, short_t)                                                     \
    PROBE_MAD(xe_mad_f16_f16_m##M, intel_sub_group_f16_f16_matrix_mad_k16, M, a_t, half_t, half,   \
              PROBE_LOAD_HALF, PROBE_HALF)                                                         \
    PROBE_MAD(xe_mad_bf16_bf16_m##M, intel_sub_group_bf16_bf16_matrix_mad_k16, M, a_t, short_t,    \
              short, PROBE_LOAD_BF16, PROBE_BF16)
PROBE_LOW_ACC(1, short, half, short)
PROBE_LOW_ACC(2, short2, half2, short2)
PROBE_LOW_ACC(4, short4, half4, short4)
PROBE_LOW_ACC(8, short8, half8, short8)
#endif

/*
 * Block reads: dst[j * SUBGROUP_SIZE + lane] = component j of lane `lane`
 * of the N-component block read of src + offset elements (offset keeps the
 * 4-byte alignment the extension requires: even for 16-bit elements). The
 * host checks it equals src[offset + j * SUBGROUP_SIZE + lane].
 */
#if SUBGROUP_SIZE == 16
#define PROBE_BLOCK_T ushort
#define PROBE_BLOCK_READ(N) intel_sub_group_block_read_us##N
#define PROBE_BLOCK_READ1 intel_sub_group_block_read_us
#else
#define PROBE_BLOCK_T uint
#define PROBE_BLOCK_READ(N) intel_sub_group_block_read##N
#define PROBE_BLOCK_READ1 intel_sub_group_block_read
#endif

#define PROBE_BLOCK(kname, N, vec_t, read)                                                         \
    __attribute__((intel_reqd_sub_group_size(SUBGROUP_SIZE))) kernel void kname(                  \
            const global PROBE_BLOCK_T *src, int offset, global PROBE_BLOCK_T *dst)                \
    {                                                                                              \
        vec_t v = read(src + offset);                                                              \
        const private PROBE_BLOCK_T *vp = (const private PROBE_BLOCK_T *)&v;                       \
        _Pragma("unroll") for (int j = 0; j < (N); j++)                                            \
            dst[j * SUBGROUP_SIZE + get_sub_group_local_id()] = vp[j];                             \
    }

#if SUBGROUP_SIZE == 16
PROBE_BLOCK(xe_block_read_1, 1, ushort, PROBE_BLOCK_READ1)
PROBE_BLOCK(xe_block_read_2, 2, ushort2, PROBE_BLOCK_READ(2))
PROBE_BLOCK(xe_block_read_4, 4, ushort4, PROBE_BLOCK_READ(4))
PROBE_BLOCK(xe_block_read_8, 8, ushort8, PROBE_BLOCK_READ(8))
#else
PROBE_BLOCK(xe_block_read_1, 1, uint, PROBE_BLOCK_READ1)
PROBE_BLOCK(xe_block_read_2, 2, uint2, PROBE_BLOCK_READ(2))
PROBE_BLOCK(xe_block_read_4, 4, uint4, PROBE_BLOCK_READ(4))
PROBE_BLOCK(xe_block_read_8, 8, uint8, PROBE_BLOCK_READ(8))
#endif

/* The same from local memory: src[0 .. 8 * SUBGROUP_SIZE + 63] is copied to
 * a local tile first, then read at tile + offset (any offset: a misaligned
 * one must give the refusal pattern). */
#define PROBE_LOCAL_ELEMENTS (8 * SUBGROUP_SIZE + 64)

/* src[0 .. n) into the local tile, lane (this one's sub-group local id)
 * copying every SUBGROUP_SIZE-th element from itself, then a barrier; and
 * back out of the tile to dst[at ..]. */
#define PROBE_TILE_IN(tile, src, n, lane)                                                          \
    do {                                                                                           \
        for (int i = (lane); i < (n); i += SUBGROUP_SIZE)                                          \
            (tile)[i] = (src)[i];                                                                  \
        barrier(CLK_LOCAL_MEM_FENCE);                                                              \
    } while (0)
#define PROBE_TILE_OUT(dst, at, tile, n, lane)                                                     \
    do {                                                                                           \
        for (int i = (lane); i < (n); i += SUBGROUP_SIZE)                                          \
            (dst)[(at) + i] = (tile)[i];                                                           \
    } while (0)

__attribute__((intel_reqd_sub_group_size(SUBGROUP_SIZE))) kernel void
xe_local_block_read_8(const global PROBE_BLOCK_T *src, int offset, global PROBE_BLOCK_T *dst)
{
    local PROBE_BLOCK_T tile[PROBE_LOCAL_ELEMENTS] __attribute__((aligned(16)));
    PROBE_TILE_IN(tile, src, PROBE_LOCAL_ELEMENTS, get_sub_group_local_id());
#if SUBGROUP_SIZE == 16
    const ushort8 v = sdpa_xe_local_read_us8(tile + offset);
#else
    const uint8 v = sdpa_xe_local_read8(tile + offset);
#endif
    const private PROBE_BLOCK_T *vp = (const private PROBE_BLOCK_T *)&v;
#pragma unroll
    for (int j = 0; j < 8; j++)
        dst[j * SUBGROUP_SIZE + get_sub_group_local_id()] = vp[j];
}

/*
 * The backward's 4-component block accesses of local memory
 * (sdpa_xe_local_block.h): src[0 .. PROBE_LOCAL_ELEMENTS) is copied to a
 * local tile; dst[j * SUBGROUP_SIZE + lane] (j < 4) receives component j of
 * the read at tile + offset (16-bit with 16 lanes, 32-bit with 8). Then the
 * tile after the 16-bit write of those components plus 1 at tile + offset
 * (16 lanes only) fills dst[4 * SUBGROUP_SIZE ..], and, from a fresh copy,
 * the tile after the 32-bit write of the pair (0xa000 + lane, 0xb000 +
 * lane) at the word at tile + offset fills dst[4 * SUBGROUP_SIZE +
 * PROBE_LOCAL_ELEMENTS ..].
 */
__attribute__((intel_reqd_sub_group_size(SUBGROUP_SIZE))) kernel void
xe_local_block_4(const global PROBE_BLOCK_T *src, int offset, global PROBE_BLOCK_T *dst)
{
    local PROBE_BLOCK_T tile[PROBE_LOCAL_ELEMENTS] __attribute__((aligned(16)));
    const uint lane = get_sub_group_local_id();
    PROBE_TILE_IN(tile, src, PROBE_LOCAL_ELEMENTS, (int)lane);
#if SUBGROUP_SIZE == 16
    const ushort4 v = sdpa_xe_local_read_us4(tile + offset);
#else
    const uint4 v = sdpa_xe_local_read4(tile + offset);
#endif
    const private PROBE_BLOCK_T *vp = (const private PROBE_BLOCK_T *)&v;
    for (int j = 0; j < 4; j++)
        dst[j * SUBGROUP_SIZE + lane] = vp[j];
    barrier(CLK_LOCAL_MEM_FENCE);
#if SUBGROUP_SIZE == 16
    sdpa_xe_local_write_us4(tile + offset, v + (ushort)1);
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
    PROBE_TILE_OUT(dst, 4 * SUBGROUP_SIZE, tile, PROBE_LOCAL_ELEMENTS, (int)lane);
    barrier(CLK_LOCAL_MEM_FENCE);
    PROBE_TILE_IN(tile, src, PROBE_LOCAL_ELEMENTS, (int)lane);
    sdpa_xe_local_write2((local uint *)(tile + offset), (uint2)(0xa000u + lane, 0xb000u + lane));
    barrier(CLK_LOCAL_MEM_FENCE);
    PROBE_TILE_OUT(dst, 4 * SUBGROUP_SIZE + PROBE_LOCAL_ELEMENTS, tile, PROBE_LOCAL_ELEMENTS,
                   (int)lane);
}

/*
 * The backward's 8-component block writes of local memory
 * (sdpa_xe_local_block.h): src[0 .. PROBE_WRITE_ELEMENTS) is copied to a
 * local tile, component j of lane l (0x7000 + 16 j + l) is written at tile +
 * offset with the 16-bit write (16 lanes; 8 lanes: none) and the tile fills
 * dst[0 ..]; then, from a fresh copy, component j of lane l (0xc0000 + 16 j
 * + l) with the 32-bit write at the word at tile + offset, and the tile
 * fills dst[PROBE_WRITE_ELEMENTS ..].
 */
#define PROBE_WRITE_ELEMENTS (2 * PROBE_LOCAL_ELEMENTS)
__attribute__((intel_reqd_sub_group_size(SUBGROUP_SIZE))) kernel void
xe_local_block_write_8(const global PROBE_BLOCK_T *src, int offset, global PROBE_BLOCK_T *dst)
{
    local PROBE_BLOCK_T tile[PROBE_WRITE_ELEMENTS] __attribute__((aligned(16)));
    const uint lane = get_sub_group_local_id();
    const uint8 comp = (uint8)(0, 16, 32, 48, 64, 80, 96, 112) + lane;
    PROBE_TILE_IN(tile, src, PROBE_WRITE_ELEMENTS, (int)lane);
#if SUBGROUP_SIZE == 16
    sdpa_xe_local_write_us8(tile + offset, convert_ushort8(comp + 0x7000u));
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
    PROBE_TILE_OUT(dst, 0, tile, PROBE_WRITE_ELEMENTS, (int)lane);
    barrier(CLK_LOCAL_MEM_FENCE);
    PROBE_TILE_IN(tile, src, PROBE_WRITE_ELEMENTS, (int)lane);
    sdpa_xe_local_write8((local uint *)(tile + offset), comp + 0xc0000u);
    barrier(CLK_LOCAL_MEM_FENCE);
    PROBE_TILE_OUT(dst, PROBE_WRITE_ELEMENTS, tile, PROBE_WRITE_ELEMENTS, (int)lane);
}

/*
 * Sub-group block reads and writes of local memory: src[0 .. 2 * 8 *
 * SUBGROUP_SIZE) is copied into a local tile with plain stores;
 * dst[j * SUBGROUP_SIZE + lane] receives component j of the 32-bit block
 * read at tile + offset, dst[16 * SUBGROUP_SIZE + ...] likewise that of the
 * 16-bit read at the same address (zero-extended); then the block write of
 * the 32-bit components, plus 1, at tile + offset, read back with plain
 * loads, fills dst[8 * SUBGROUP_SIZE + ...].
 */
__attribute__((intel_reqd_sub_group_size(SUBGROUP_SIZE))) kernel void
xe_local_block_rw_8(const global uint *src, int offset, global uint *dst)
{
    local uint tile[2 * 8 * SUBGROUP_SIZE];
    const uint lane = get_sub_group_local_id();
    for (int i = (int)lane; i < 2 * 8 * SUBGROUP_SIZE; i += SUBGROUP_SIZE)
        tile[i] = src[i];
    sub_group_barrier(CLK_LOCAL_MEM_FENCE);
    const uint8 v = sdpa_xe_local_read8(tile + offset);
    const ushort8 h = sdpa_xe_local_read_us8((const local ushort *)(tile + offset));
    const private uint *vp = (const private uint *)&v;
    const private ushort *hp = (const private ushort *)&h;
    for (int j = 0; j < 8; j++) {
        dst[j * SUBGROUP_SIZE + lane] = vp[j];
        dst[(16 + j) * SUBGROUP_SIZE + lane] = hp[j];
    }
    sub_group_barrier(CLK_LOCAL_MEM_FENCE);
    sdpa_xe_local_write8(tile + offset, v + 1);
    sub_group_barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = 0; i < 8 * SUBGROUP_SIZE; i++)
        if (i % SUBGROUP_SIZE == (int)lane)
            dst[8 * SUBGROUP_SIZE + i] = tile[offset + i];
}

#if SUBGROUP_SIZE == 16
/*
 * 2D block loads of 16-bit elements: the surface starts `base_offset` bytes
 * into `mem` (its parameters passed as the built-ins take them, minus one);
 * dst[r * 16 + lane] receives row r of lane `lane`'s column of the block at
 * (x, y): xe_block2d_u16_m8 component r (8 rows), xe_block2d_transform_u16_k16
 * the low (r even) or high (r odd) half of component r / 2 (16 rows).
 */
__attribute__((intel_reqd_sub_group_size(16))) kernel void
xe_block2d_u16_m8(const global uchar *mem, long base_offset, int width_m1, int height_m1,
                  int pitch_m1, int x, int y, global ushort *dst)
{
    const ushort8 v = __builtin_IB_subgroup_block_read_flat_u16_m8k16v1(
            (long)(mem + base_offset), width_m1, height_m1, pitch_m1, (int2)(x, y));
    const private ushort *vp = (const private ushort *)&v;
    for (int r = 0; r < 8; r++)
        dst[r * 16 + get_sub_group_local_id()] = vp[r];
}

__attribute__((intel_reqd_sub_group_size(16))) kernel void
xe_block2d_transform_u16_k16(const global uchar *mem, long base_offset, int width_m1,
                             int height_m1, int pitch_m1, int x, int y, global ushort *dst)
{
    const uint8 v = __builtin_IB_subgroup_block_read_flat_transform_u16_k16(
            (long)(mem + base_offset), width_m1, height_m1, pitch_m1, (int2)(x, y));
    const private uint *vp = (const private uint *)&v;
    for (int r = 0; r < 16; r++)
        dst[r * 16 + get_sub_group_local_id()] = (ushort)(vp[r / 2] >> (16 * (r % 2)));
}
#endif

/*
 * IGC's f32 to bf16 conversions (sdpa_xe_intel.h): work-item i converts
 * x[16 i .. 16 i + 15] with __builtin_IB_ftobf_16 into y[16 i ..], and the
 * first 8 of them again with __builtin_IB_ftobf_8 into y8[8 i ..].
 */
__attribute__((intel_reqd_sub_group_size(SUBGROUP_SIZE))) kernel void
xe_ftobf(const global float *x, global ushort *y, global ushort *y8)
{
    const size_t i = get_global_id(0);
    const float16 v = vload16(i, x);
    vstore16(as_ushort16(__builtin_IB_ftobf_16(v)), i, y);
    vstore8(as_ushort8(__builtin_IB_ftobf_8(v.lo)), i, y8);
}
