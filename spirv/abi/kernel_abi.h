/*
 * kernel_abi.h - what the host and the attention kernels agree on besides the
 * specialization constants: kernel names, argument order, work-group
 * geometry and local-memory size. Included by OpenCL C and by host C, so both
 * sides use the same enum and the same formulas.
 *
 * Conventions shared by every kernel:
 *   - Tensor pointers are untyped (global void *); the element type is a
 *     specialization constant (sdpa_dtype_t codes).
 *   - Strides are int64 kernel arguments counted in elements, four per tensor
 *     in [batch, head, sequence, head_dim] order. For 4-bit types they count
 *     nibbles: element e lives in byte e / 2, low nibble when e is even.
 *   - A broadcast dimension of the mask has stride 0 (the host zeroes it), so
 *     the kernel never needs the mask's dims.
 *   - Pointers a problem does not use are NULL; the kernel must not read them.
 */
#ifndef SDPA_SPIRV_KERNEL_ABI_H
#define SDPA_SPIRV_KERNEL_ABI_H

#include "kernel_args.h"

/* Codes the dtype, mask and quantization specialization constants hold: the
 * values of sdpa_dtype_t, sdpa_mask_kind_t and sdpa_quant_kind_t in sdpa.h
 * (kernels cannot include sdpa.h; the host static-asserts they agree). */
#define SDPA_DT_UNDEF 0
#define SDPA_DT_F32 1
#define SDPA_DT_F16 2
#define SDPA_DT_BF16 3
#define SDPA_DT_S8 4
#define SDPA_DT_U8 5
#define SDPA_DT_S4 6
#define SDPA_DT_U4 7
#define SDPA_DT_S32 8
#define SDPA_DT_F8_E4M3 9
#define SDPA_DT_F8_E5M2 10

#define SDPA_MASK_KIND_NONE 0
#define SDPA_MASK_KIND_BUFFER 1
#define SDPA_MASK_KIND_TOP_LEFT 2
#define SDPA_MASK_KIND_BOTTOM_RIGHT 3

/* sdpa_alibi_kind_t (ALIBI_KIND). */
#define SDPA_ALIBI_KIND_NONE 0
#define SDPA_ALIBI_KIND_PER_HEAD 1
#define SDPA_ALIBI_KIND_PER_BATCH_HEAD 2

#define SDPA_QUANT_KIND_NONE 0
#define SDPA_QUANT_KIND_PER_TENSOR 1
#define SDPA_QUANT_KIND_PER_GROUP 2
#define SDPA_QUANT_KIND_PER_HEAD 3

/* Dropout: the element index, Philox counter and key, and the keep rule are
 * part of the ABI, documented at sdpa_dropout_desc_t in include/sdpa.h (the
 * host reference and the kernels agree with it bit for bit). These are
 * Philox4x32-10's own constants, which sdpa.h names too. */
#define SDPA_PHILOX_M0 0xD2511F53u
#define SDPA_PHILOX_M1 0xCD9E8D57u
#define SDPA_PHILOX_W0 0x9E3779B9u
#define SDPA_PHILOX_W1 0xBB67AE85u
#define SDPA_PHILOX_ROUNDS 10

/* ------------------------------------------------------------------------- */
/* Forward: sdpa_fwd.cl, kernel "sdpa_fwd", variants sdpa_fwd.<d_max>.<sg>  */
/* ------------------------------------------------------------------------- */
/*
 * Tiles (all from the 8-integer forward configuration):
 *   BK = UNROLL_M_KQ * WG_M_KQ  keys per iteration of the key loop
 *   BQ = UNROLL_N_KQ * WG_N_KQ  queries per work-group (== UNROLL_N_VS * WG_N_VS)
 *   BD = UNROLL_M_VS * WG_M_VS  head-dim rows of O per work-group (>= D)
 *
 * Work-group geometry (sg = SUBGROUP_SIZE of the variant):
 *   local size  = { sg, WG_M_KQ * WG_N_KQ, 1 }
 *   group count = { ceil(rows / BQ), heads, B }
 * where normally rows = Sq and heads = Hq; with Q1_GQA_BATCH (Sq == 1 and
 * KV_GROUP_SIZE > 1) one work-group serves all the query heads that share a
 * K/V head: rows = KV_GROUP_SIZE and heads = Hkv, and row r of K/V head g is
 * query head g * KV_GROUP_SIZE + r.
 *
 * The log-sum-exp workspace (IS_TRAINING) is f32 [B, Hq, Sq], dense:
 * ws[(b * Hq + h) * Sq + i] = max_j(s_ij) + log(sum_j exp(s_ij - max)), where
 * s_ij are the scaled and masked scores, in natural-log units.
 */
#define SDPA_FWD_SOURCE "sdpa_fwd"
/* The variant field of the forward built with the code that reads K and V
 * straight from global memory (K_FROM_GLOBAL, V_FROM_GLOBAL: the CPU
 * device's decode tiles), "sdpa_fwd-kvg.<d_max>.<sg>". That code is four
 * times the rest of the kernel in SPIR-V, and a module's size is paid at
 * every build and every load from the persistent cache, where the constants
 * are off: the plain variant compiles it out (spirv/Makefile.am). */
#define SDPA_FWD_GLOBAL_KV_FIELD "-kvg"
#define SDPA_FWD_KERNEL "sdpa_fwd"

/* The arguments: sdpa_fwd_args.def. The host gets SDPA_FWD_ARG_<NAME>,
 * SDPA_FWD_ARG_COUNT and sdpa_fwd_args_t (kernel_args_host.h). */
#ifndef __OPENCL_C_VERSION__
#define SDPA_ARGS_FILE "sdpa_fwd_args.def"
#define SDPA_ARGS_PREFIX SDPA_FWD_ARG_
#define SDPA_ARGS_NAME sdpa_fwd_args
#include "kernel_args_host.h"
#endif

/* Local memory the forward kernel needs, in floats: Q^T (d_max rows of
 * bq + pad), the K tile (room for bk + pad rows of d_max + pad: K or its
 * transpose), the V tile (bk rows of d_max + pad), S / P (bk rows of
 * bq + pad), the O accumulator (bq x d_max), the running max and sum and the
 * tile maxima of each of the wg_m_kq sub-groups that split a key tile
 * (3 x wg_m_kq x bq), and per-query alpha and 1 / sum (2 x bq). Rows are
 * padded by SDPA_FWD_SLM_PAD floats so that power-of-two row lengths do not
 * map a column walk onto a few cache sets / banks. */
#define SDPA_FWD_SLM_PAD 16
#define SDPA_FWD_SLM_FLOATS(d_max, bq, bk, wg_m_kq)                                                \
    ((d_max) * ((bq) + SDPA_FWD_SLM_PAD) +                                                         \
     ((bk) + SDPA_FWD_SLM_PAD) * ((d_max) + SDPA_FWD_SLM_PAD) +                                    \
     (bk) * ((d_max) + SDPA_FWD_SLM_PAD) + (bk) * ((bq) + SDPA_FWD_SLM_PAD) + (bq) * (d_max) +     \
     3 * (wg_m_kq) * (bq) + 2 * (bq))
#define SDPA_FWD_SLM_BYTES(d_max, bq, bk, wg_m_kq) (4 * SDPA_FWD_SLM_FLOATS(d_max, bq, bk, wg_m_kq))

/* With K_FROM_GLOBAL, S = K^T Q takes this many keys per step
 * (sdpa_fwd_kq_global_tile): the key tile must be a multiple of it. Q is
 * then staged by rows, [bq][d_max + pad] in the place of Q^T, which needs
 * bq <= d_max. */
#define SDPA_FWD_KQ_GLOBAL_KEYS 4

/* Per-lane caps on a sub-group's share of the tiles, for the host's config
 * check. The kernel keeps S, P and O in local memory (SDPA_FWD_SLM_BYTES is
 * the binding limit), so these are not array sizes: they only keep configs
 * inside the range the kernel was tested with (the tuned CPU configs use up
 * to 256 S and 4 * d_max O elements per lane):
 *   S tile:  UNROLL_M_KQ * (UNROLL_N_KQ / sg) <= SDPA_FWD_MAX_S_PER_LANE
 *   O tile:  UNROLL_N_VS * (UNROLL_M_VS / sg) <= SDPA_FWD_MAX_O_PER_LANE
 *   queries: UNROLL_N_KQ / sg                 <= SDPA_FWD_MAX_Q_PER_LANE */
#define SDPA_FWD_MAX_S_PER_LANE(d_max) 512
#define SDPA_FWD_MAX_O_PER_LANE(d_max) (4 * (d_max))
#define SDPA_FWD_MAX_Q_PER_LANE(d_max) 8

#endif /* SDPA_SPIRV_KERNEL_ABI_H */
