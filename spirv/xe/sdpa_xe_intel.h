/*
 * sdpa_xe_intel.h - the Intel sub-group built-ins the fast-path (xe)
 * kernels call, declared for clang-15 (which declares none of them), and
 * the switch between the native matrix engine and its emulation.
 *
 * Two extensions, as the OpenCL extension registry defines them:
 *
 *   cl_intel_subgroups (+ _short, _char): block reads. Component j of lane l
 *     of intel_sub_group_block_read*N(p) is p[j * SUBGROUP_SIZE + l]: N
 *     consecutive runs of SUBGROUP_SIZE elements, one element of each run
 *     per lane. p must be 4-byte aligned. llvm-spirv turns these calls into
 *     OpSubgroupBlockReadINTEL (SPV_INTEL_subgroups, which the build
 *     enables). Intel's CPU OpenCL runtime implements them (it reports
 *     cl_intel_subgroups, cl_intel_subgroups_short and
 *     cl_intel_subgroups_char), so they are never emulated.
 *
 *   cl_intel_subgroup_matrix_multiply_accumulate: the matrix engine (DPAS).
 *     D = A B + C with A M x K, B K x N, C and D M x N, N = SUBGROUP_SIZE,
 *     K = 16 for f16 and bf16. Lane n holds column n of B, C and D
 *     (component m of C and D is row m); A is spread over the lanes along K:
 *     with 16 lanes lane k holds A[m][k] in component m (a short), with 8
 *     lanes lane i holds A[m][2i] (low 16 bits) and A[m][2i + 1] (high) in
 *     component m (an int). B is an int8 whatever the sub-group size:
 *     component j of lane n holds B[2j][n] (low) and B[2j + 1][n] (high).
 *     clang-15 does not know these either: we declare them as overloadable
 *     prototypes, llvm-spirv-15 keeps them as calls to external functions,
 *     and Intel's GPU compiler (IGC) lowers the calls to dpas (checked with
 *     ocloc for pvc and acm-g10). The CPU runtime lacks the extension:
 *     with -DSDPA_XE_EMULATE, sdpa_xe_emulation.h defines the same
 *     functions in OpenCL C instead, so that one kernel source runs on both.
 */
#ifndef SDPA_SPIRV_XE_INTEL_H
#define SDPA_SPIRV_XE_INTEL_H

#pragma OPENCL EXTENSION cl_khr_fp16 : enable

#define SDPA_XE_OVERLOAD __attribute__((overloadable))

/* --- cl_intel_subgroups: 32-bit block reads (sub-group 8 operands) -------- */
uint SDPA_XE_OVERLOAD intel_sub_group_block_read(const global uint *p);
uint2 SDPA_XE_OVERLOAD intel_sub_group_block_read2(const global uint *p);
uint4 SDPA_XE_OVERLOAD intel_sub_group_block_read4(const global uint *p);
uint8 SDPA_XE_OVERLOAD intel_sub_group_block_read8(const global uint *p);

/* --- cl_intel_subgroups_short: 16-bit block reads (sub-group 16) ---------- */
ushort SDPA_XE_OVERLOAD intel_sub_group_block_read_us(const global ushort *p);
ushort2 SDPA_XE_OVERLOAD intel_sub_group_block_read_us2(const global ushort *p);
ushort4 SDPA_XE_OVERLOAD intel_sub_group_block_read_us4(const global ushort *p);
ushort8 SDPA_XE_OVERLOAD intel_sub_group_block_read_us8(const global ushort *p);

/* --- cl_intel_subgroups: shuffles ----------------------------------------- */
uint SDPA_XE_OVERLOAD intel_sub_group_shuffle(uint value, uint lane);
float SDPA_XE_OVERLOAD intel_sub_group_shuffle(float value, uint lane);

/* Block reads and writes of local memory: sdpa_xe_local_block.h. */

/*
 * 2D block loads (Xe-HPC, Xe2, Xe3; sub-groups of 16): IGC's own built-ins,
 * the names oneDNN's kernels use. The surface is `height` rows of `width`
 * bytes, `pitch` bytes apart, from `base` (each passed minus one); coord =
 * (x in elements, y in rows) of the block's first element. Elements outside
 * the surface read as zero.
 *   u16_m8k16v1: 8 rows of 16 16-bit elements; component r of lane l is
 *     element (y + r, x + l): the A operand layout of the matrix built-ins.
 *   transform_u16_k16: 16 rows of 16 16-bit elements with the VNNI
 *     transform; component j of lane l holds elements (y + 2j, x + l) (low
 *     half) and (y + 2j + 1, x + l) (high): the B operand layout.
 * Only these two: Debian 12's IGC (1.0.12504) lowers u16_m16k16v1 to
 * nothing at all (its result is whatever the registers held) and u16_m8k16v1
 * to a load of two such blocks side by side (the first is the result: the
 * same data, twice the traffic); the current IGC lowers both exactly.
 * The hardware rejects (its result is undefined): a base not on 64 bytes, a
 * width under 64 bytes or not a multiple of 4, a pitch under the width or
 * not a multiple of 16, width, height or pitch past 2^24, and an x whose byte
 * offset is not a multiple of 4 (sdpa_xe_surface2d_of in sdpa_xe_tile.h
 * checks them before any call; the emulation poisons a call that breaks
 * them). Not overloadable: the names must reach the SPIR-V unmangled.
 */
#ifdef SDPA_XE_EMULATE
#include "sdpa_xe_emulation.h"
#else

ushort8 __builtin_IB_subgroup_block_read_flat_u16_m8k16v1(long base_address,
                                                          int width_minus_one_bytes,
                                                          int height_minus_one,
                                                          int pitch_minus_one_bytes, int2 coord);
uint8 __builtin_IB_subgroup_block_read_flat_transform_u16_k16(long base_address,
                                                              int width_minus_one_bytes,
                                                              int height_minus_one,
                                                              int pitch_minus_one_bytes,
                                                              int2 coord);

/* f32 to bf16 bits rounded to nearest even: IGC's own built-ins (oneDNN's
 * kernels use them), one mov each on the GPU, where sdpa_f32_to_bf16's
 * integer rounding costs five instructions an element. For whole
 * registers of P and dS only: a call (convergent, to clang) keeps the
 * staging loops of run-time trip count from being unrolled. The public
 * intel_convert_bfloat16_as_ushort needs SPV_INTEL_bfloat16_conversion,
 * which Debian 12's SPIR-V tools reject. */
short8 __builtin_IB_ftobf_8(float8 a) __attribute__((const));
short16 __builtin_IB_ftobf_16(float16 a) __attribute__((const));

/* --- cl_intel_subgroup_matrix_multiply_accumulate ------------------------- */
/* The forms the kernels use, for both sub-group sizes: M = 1, 2, 4, 8 rows,
 * f16 or bf16 sources, f32 accumulator; with 16 lanes also an accumulator in
 * the sources' type (half for f16, bf16 bits in a short). */
#define SDPA_XE_DECLARE_MAD(acc_t, a_t)                                                            \
    acc_t SDPA_XE_OVERLOAD intel_sub_group_f16_f16_matrix_mad_k16(a_t a, int8 b, acc_t acc);      \
    acc_t SDPA_XE_OVERLOAD intel_sub_group_bf16_bf16_matrix_mad_k16(a_t a, int8 b, acc_t acc);
#if SUBGROUP_SIZE == 8
SDPA_XE_DECLARE_MAD(float, int)
SDPA_XE_DECLARE_MAD(float2, int2)
SDPA_XE_DECLARE_MAD(float4, int4)
SDPA_XE_DECLARE_MAD(float8, int8)
#else
SDPA_XE_DECLARE_MAD(float, short)
SDPA_XE_DECLARE_MAD(float2, short2)
SDPA_XE_DECLARE_MAD(float4, short4)
SDPA_XE_DECLARE_MAD(float8, short8)
half SDPA_XE_OVERLOAD intel_sub_group_f16_f16_matrix_mad_k16(short a, int8 b, half acc);
half2 SDPA_XE_OVERLOAD intel_sub_group_f16_f16_matrix_mad_k16(short2 a, int8 b, half2 acc);
half4 SDPA_XE_OVERLOAD intel_sub_group_f16_f16_matrix_mad_k16(short4 a, int8 b, half4 acc);
half8 SDPA_XE_OVERLOAD intel_sub_group_f16_f16_matrix_mad_k16(short8 a, int8 b, half8 acc);
short SDPA_XE_OVERLOAD intel_sub_group_bf16_bf16_matrix_mad_k16(short a, int8 b, short acc);
short2 SDPA_XE_OVERLOAD intel_sub_group_bf16_bf16_matrix_mad_k16(short2 a, int8 b, short2 acc);
short4 SDPA_XE_OVERLOAD intel_sub_group_bf16_bf16_matrix_mad_k16(short4 a, int8 b, short4 acc);
short8 SDPA_XE_OVERLOAD intel_sub_group_bf16_bf16_matrix_mad_k16(short8 a, int8 b, short8 acc);
#endif
#undef SDPA_XE_DECLARE_MAD

#endif /* SDPA_XE_EMULATE */

#endif /* SDPA_SPIRV_XE_INTEL_H */
