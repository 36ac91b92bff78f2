/*
 * sdpa_xe_emulation.h - cl_intel_subgroup_matrix_multiply_accumulate in
 * OpenCL C, for devices without a matrix engine (Intel's CPU OpenCL runtime):
 * the same functions, with the same operand layout across the sub-group's
 * lanes, as the extension specifies (see sdpa_xe_intel.h for the layout).
 * Included by sdpa_xe_intel.h when SDPA_XE_EMULATE is defined; the xe kernels
 * then run unchanged on the CPU device, so the tests check the real kernels'
 * data movement, and tests/sdpa/test_xe_emulation.c checks these functions
 * against a host matrix product.
 *
 * Numerics: each product of two f16 (or two bf16) values is exact in f32
 * (11 + 11 significant bits), and the K = 16 products are added to the
 * accumulator in order k = 0, 1, ..., 15 with one rounding each (fma). The
 * hardware's order and internal precision are not specified; both give a
 * result within 16 f32 roundings of the exact sum. The forms whose
 * accumulator has the sources' type (sub-group 16 only) compute in f32 and
 * round the result once to half (or bf16), to nearest even.
 *
 * Cost: row m needs A[m][k] from lane k, a broadcast per k: 16 broadcasts
 * and 16 fmas per row and lane. The CPU device vectorizes across lanes, so
 * a broadcast is a cheap splat.
 */
#ifndef SDPA_SPIRV_XE_EMULATION_H
#define SDPA_SPIRV_XE_EMULATION_H

#include "sdpa_common.h"

#define SDPA_XE_EMU static inline __attribute__((overloadable, always_inline))

/* A 16-bit source element as f32: f16 bits or bf16 bits. */
static inline float sdpa_xe_emu_f16(uint bits)
{
    return (float)as_half((ushort)bits);
}

static inline float sdpa_xe_emu_bf16(uint bits)
{
    return sdpa_bf16_to_f32((ushort)bits);
}

/* IGC's f32 to bf16 built-ins (sdpa_xe_intel.h), element by element with
 * sdpa_f32_to_bf16: round to nearest even, as the GPU's conversion does. */
static inline short4 sdpa_xe_emu_ftobf_4(float4 a)
{
    return as_short4((ushort4)(sdpa_f32_to_bf16(a.x), sdpa_f32_to_bf16(a.y),
                               sdpa_f32_to_bf16(a.z), sdpa_f32_to_bf16(a.w)));
}

static inline short8 __builtin_IB_ftobf_8(float8 a)
{
    return (short8)(sdpa_xe_emu_ftobf_4(a.lo), sdpa_xe_emu_ftobf_4(a.hi));
}

static inline short16 __builtin_IB_ftobf_16(float16 a)
{
    return (short16)(__builtin_IB_ftobf_8(a.lo), __builtin_IB_ftobf_8(a.hi));
}

/*
 * Defines name(a_t a, int8 b, acc_t acc) with M rows: a and acc are viewed
 * as arrays of M components (a vector parameter is private memory); the
 * sums are kept in f32 and stored back through store_acc into the
 * accumulator's element type. b_lo[j] and b_hi[j] are B[2j][n] and
 * B[2j + 1][n] of this lane's column n, as f32.
 *
 *   16 lanes: lane k holds A[m][k] (16 bits) in component m; step k
 *             broadcasts it from lane k and multiplies it by B[k][n].
 *    8 lanes: lane i holds A[m][2i] (low half) and A[m][2i + 1] (high half);
 *             step i broadcasts the pair from lane i and multiplies it by
 *             B[2i][n] and B[2i + 1][n].
 *
 * The loop over k (or i) stays a loop and the rows are unrolled: fully
 * unrolled, every call costs 128 broadcasts of straight-line code, and a
 * kernel with a few dozen calls takes the CPU compiler minutes; a loop over
 * the rows nested in a loop over k would hit llvm-spirv-15's block-order
 * bug (a latch laid out before the blocks that define its values).
 */
#define SDPA_XE_EMU_DEFINE(name, to_f32, M, a_t, a_elem_t, acc_t, acc_elem_t, load_acc, store_acc)  \
    SDPA_XE_EMU acc_t name(a_t a, int8 b, acc_t acc)                                               \
    {                                                                                              \
        float b_lo[8], b_hi[8], sum[M];                                                            \
        const private uint *bw = (const private uint *)&b;                                         \
        _Pragma("unroll") for (int j = 0; j < 8; j++) {                                            \
            b_lo[j] = to_f32(bw[j] & 0xffffu);                                                     \
            b_hi[j] = to_f32(bw[j] >> 16);                                                         \
        }                                                                                          \
        const private a_elem_t *av = (const private a_elem_t *)&a;                                 \
        private acc_elem_t *cv = (private acc_elem_t *)&acc;                                       \
        _Pragma("unroll") for (int m = 0; m < (M); m++) sum[m] = load_acc(cv[m]);                  \
        if (SUBGROUP_SIZE == 16) {                                                                 \
            for (uint k = 0; k < 16; k++) {                                                        \
                const float b_k = (k & 1) ? b_hi[k / 2] : b_lo[k / 2];                             \
                _Pragma("unroll") for (int m = 0; m < (M); m++) {                                  \
                    const uint a_mk = (uint)sub_group_broadcast((int)av[m], k) & 0xffffu;          \
                    sum[m] = fma(to_f32(a_mk), b_k, sum[m]);                                       \
                }                                                                                  \
            }                                                                                      \
        } else {                                                                                   \
            for (uint i = 0; i < 8; i++) {                                                         \
                const float b_even = b_lo[i], b_odd = b_hi[i];                                     \
                _Pragma("unroll") for (int m = 0; m < (M); m++) {                                  \
                    const uint pair = (uint)sub_group_broadcast((int)av[m], i);                    \
                    sum[m] = fma(to_f32(pair & 0xffffu), b_even, sum[m]);                          \
                    sum[m] = fma(to_f32(pair >> 16), b_odd, sum[m]);                               \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        _Pragma("unroll") for (int m = 0; m < (M); m++) cv[m] = store_acc(sum[m]);                 \
        return acc;                                                                                \
    }

/* Accumulator element conversions: f32 as is, half, bf16 bits in a short. */
#define SDPA_XE_EMU_F32_LOAD(x) (x)
#define SDPA_XE_EMU_F32_STORE(x) (x)
#define SDPA_XE_EMU_HALF_LOAD(x) ((float)(x))
#define SDPA_XE_EMU_HALF_STORE(x) ((half)(x))
#define SDPA_XE_EMU_BF16_LOAD(x) sdpa_bf16_to_f32((ushort)(x))
#define SDPA_XE_EMU_BF16_STORE(x) ((short)sdpa_f32_to_bf16(x))

/* f32 accumulator, both source types, M = 1, 2, 4, 8. */
#define SDPA_XE_EMU_F32_ACC(M, a_t, a_elem_t, acc_t)                                               \
    SDPA_XE_EMU_DEFINE(intel_sub_group_f16_f16_matrix_mad_k16, sdpa_xe_emu_f16, M, a_t, a_elem_t,  \
                       acc_t, float, SDPA_XE_EMU_F32_LOAD, SDPA_XE_EMU_F32_STORE)                  \
    SDPA_XE_EMU_DEFINE(intel_sub_group_bf16_bf16_matrix_mad_k16, sdpa_xe_emu_bf16, M, a_t,         \
                       a_elem_t, acc_t, float, SDPA_XE_EMU_F32_LOAD, SDPA_XE_EMU_F32_STORE)

#if SUBGROUP_SIZE == 8
SDPA_XE_EMU_F32_ACC(1, int, int, float)
SDPA_XE_EMU_F32_ACC(2, int2, int, float2)
SDPA_XE_EMU_F32_ACC(4, int4, int, float4)
SDPA_XE_EMU_F32_ACC(8, int8, int, float8)
#elif SUBGROUP_SIZE == 16
SDPA_XE_EMU_F32_ACC(1, short, short, float)
SDPA_XE_EMU_F32_ACC(2, short2, short, float2)
SDPA_XE_EMU_F32_ACC(4, short4, short, float4)
SDPA_XE_EMU_F32_ACC(8, short8, short, float8)

/* Accumulators in the sources' type (sub-group 16 only). */
#define SDPA_XE_EMU_LOW_ACC(M, a_t, half_t, short_t)                                               \
    SDPA_XE_EMU_DEFINE(intel_sub_group_f16_f16_matrix_mad_k16, sdpa_xe_emu_f16, M, a_t, short,     \
                       half_t, half, SDPA_XE_EMU_HALF_LOAD, SDPA_XE_EMU_HALF_STORE)                \
    SDPA_XE_EMU_DEFINE(intel_sub_group_bf16_bf16_matrix_mad_k16, sdpa_xe_emu_bf16, M, a_t, short,  \
                       short_t, short, SDPA_XE_EMU_BF16_LOAD, SDPA_XE_EMU_BF16_STORE)
SDPA_XE_EMU_LOW_ACC(1, short, half, short)
SDPA_XE_EMU_LOW_ACC(2, short2, half2, short2)
SDPA_XE_EMU_LOW_ACC(4, short4, half4, short4)
SDPA_XE_EMU_LOW_ACC(8, short8, half8, short8)
#undef SDPA_XE_EMU_LOW_ACC
#else
#error "the matrix built-ins exist for sub-groups of 8 and 16 only"
#endif

#undef SDPA_XE_EMU_F32_ACC

/*
 * The 2D block loads (sdpa_xe_intel.h), 16-bit elements, 16 lanes: lane l
 * reads column x + l of rows y .. y + R - 1 (R = 8, or 16 packed in pairs
 * of rows by the transform), zero outside the surface, and
 * every constraint the hardware documents is checked; a call that breaks
 * one returns all ones in every lane and row (a NaN in f16 and in bf16), so
 * a kernel that would issue it on the GPU computes NaNs here and its test
 * fails instead of passing on a call the GPU would reject.
 */
#define SDPA_XE_EMU_2D_LIMIT (1 << 24)

static inline bool sdpa_xe_emu_block2d_valid(long base, int width_m1, int height_m1, int pitch_m1,
                                             int x)
{
    const long width = (long)width_m1 + 1, height = (long)height_m1 + 1, pitch = (long)pitch_m1 + 1;
    return (base & 63) == 0 && width >= 64 && width % 4 == 0 && width <= SDPA_XE_EMU_2D_LIMIT &&
           height >= 1 && height <= SDPA_XE_EMU_2D_LIMIT && pitch >= width && pitch % 16 == 0 &&
           pitch <= SDPA_XE_EMU_2D_LIMIT && (x * 2) % 4 == 0;
}

/* Row r of this lane's column of the block at coord: element (y + r, x + l). */
static inline ushort sdpa_xe_emu_block2d_u16(long base, int width_m1, int height_m1, int pitch_m1,
                                             int2 coord, int r)
{
    const int col = coord.x + (int)get_sub_group_local_id(), row = coord.y + r;
    if (col < 0 || row < 0 || row > height_m1 || 2L * col + 1 > width_m1)
        return 0;
    const global ushort *p = (const global ushort *)(base + (long)row * (pitch_m1 + 1));
    return p[col];
}

static inline ushort8 __builtin_IB_subgroup_block_read_flat_u16_m8k16v1(long base, int width_m1,
                                                                        int height_m1, int pitch_m1,
                                                                        int2 coord)
{
    ushort8 v = (ushort8)(0xffff);
    if (!sdpa_xe_emu_block2d_valid(base, width_m1, height_m1, pitch_m1, coord.x))
        return v;
    private ushort *vp = (private ushort *)&v;
    for (int r = 0; r < 8; r++)
        vp[r] = sdpa_xe_emu_block2d_u16(base, width_m1, height_m1, pitch_m1, coord, r);
    return v;
}

static inline uint8 __builtin_IB_subgroup_block_read_flat_transform_u16_k16(long base, int width_m1,
                                                                           int height_m1,
                                                                           int pitch_m1,
                                                                           int2 coord)
{
    uint8 v = (uint8)(0xffffffffu);
    if (!sdpa_xe_emu_block2d_valid(base, width_m1, height_m1, pitch_m1, coord.x))
        return v;
    private uint *vp = (private uint *)&v;
    for (int j = 0; j < 8; j++)
        vp[j] = (uint)sdpa_xe_emu_block2d_u16(base, width_m1, height_m1, pitch_m1, coord, 2 * j) |
                (uint)sdpa_xe_emu_block2d_u16(base, width_m1, height_m1, pitch_m1, coord, 2 * j + 1)
                        << 16;
    return v;
}

#endif /* SDPA_SPIRV_XE_EMULATION_H */
