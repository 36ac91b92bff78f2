/*
 * kernel_abi_xe.h - what the host and the fast-path (xe) kernels agree on:
 * variant names, argument lists (from the .def tables), work-group
 * geometry, local memory, and how a configuration's 8 integers map onto the
 * kernels' tiles. Included by OpenCL C and by host C. The conventions of
 * kernel_abi.h (untyped tensor pointers, int64 strides in elements, dtype
 * codes, zero strides for broadcast mask dimensions) hold here too.
 *
 * The fast path exists for Intel GPUs with matrix engines (Xe-HPG with
 * sub-groups of 8, Xe-HPC and Xe2 with 16): both products run on
 * cl_intel_subgroup_matrix_multiply_accumulate from register tiles, and the
 * CPU device runs the same source with the products emulated (variants
 * whose name ends in -emu; sdpa_xe_intel.h).
 */
#ifndef SDPA_SPIRV_KERNEL_ABI_XE_H
#define SDPA_SPIRV_KERNEL_ABI_XE_H

/* ------------------------------------------------------------------------- */
/* Forward: sdpa_xe_fwd.cl, kernel "sdpa_xe_fwd"                              */
/* ------------------------------------------------------------------------- */
/*
 * Variants: sdpa_xe_fwd-k<KEYS>-d<DSUB>[-cvt][-emu].0.<sg>, where KEYS (16
 * or 32) and DSUB (a multiple of 8) size the register tiles of one
 * sub-group; the head-size field of the name is 0 (no array depends on the
 * head size). cvt variants take K and V in another dtype than Q (quantized
 * included): they convert each key tile into local memory in Q's type
 * first. SDPA_XE_FWD_VARIANT formats the name's first field.
 *
 * Layout. Sub-group tiles live in registers in the matrix engine's layout,
 * with the queries along the lanes:
 *   S^T = K Q^T: 8-key blocks (the rows, one per vector component) by
 *          SUBGROUP_SIZE queries (one per lane), KEYS / 8 blocks;
 *   O^T = V^T P: 8 head-dim rows by SUBGROUP_SIZE queries, DSUB / 8 blocks.
 * The first product's result layout is the second's B operand layout (K in
 * pairs along the components, N along the lanes), so P never leaves the
 * registers when one sub-group owns a query block; the softmax of a query is
 * the arithmetic of one lane. K rows are block reads; V^T's operand (keys
 * along the lanes) is per-lane loads of V rows; Q^T's operand (B, the
 * queries along the lanes) is staged once in local memory.
 *
 * Work-group, from the configuration (kernel_config.h) with sg the
 * sub-group size:
 *   unroll_n_kq == unroll_n_vs == sg        queries per sub-group
 *   unroll_m_kq == KEYS                     keys per sub-group and key tile
 *   unroll_m_vs == DSUB                     head-dim rows of O per sub-group
 *   wg_m_kq == wg_m_vs == DSPLIT            sub-groups sharing a query block:
 *                                           they split the key tile for S and
 *                                           the head dimension for O
 *   wg_n_kq == wg_n_vs == QBLOCKS           query blocks per work-group
 *   DSUB * DSPLIT >= head size
 * so BQ = sg * QBLOCKS queries per work-group and BK = KEYS * DSPLIT keys
 * per iteration of the key loop. With DSPLIT > 1 the sub-groups of a query
 * block exchange their tile maxima and P through local memory (two barriers
 * per key tile); with DSPLIT == 1 the key loop has no work-group barrier.
 *
 * Geometry (as the portable forward, kernel_abi.h):
 *   local size  = { sg, DSPLIT * QBLOCKS, 1 }
 *   group count = { ceil(rows / BQ), heads, B }
 * with rows, heads as there (Q1_GQA_BATCH: the query heads of a K/V head).
 *
 * What the host must guarantee (else it runs the portable kernel):
 *   Q in f16 or bf16 (the products run in Q's type); K and V in Q's dtype,
 *   or, with a cvt variant, in any dtype (quantized included); O any float
 *   type; head size <= DSUB * DSPLIT; the innermost stride of Q and O is 1,
 *   and without cvt that of V too, and K has stride 1 either along the head
 *   dimension or along the keys (TRANSPOSE_K). Base pointers need only their
 *   element's alignment: K rows are read with block reads and V rows with
 *   16-byte loads only where the kernel finds them 4-byte aligned.
 *
 * Specialization constants read: the dtype, scale, mask, softmax, training,
 * quantization and dropout constants of the portable forward, KV_GROUP_SIZE,
 * Q1_GQA_BATCH, TRANSPOSE_K, REMAINDER_Q, KQ_F16_ACC, VS_F16_ACC, WG_M_KQ
 * (DSPLIT) and WG_N_KQ (QBLOCKS). The log-sum-exp workspace and the dropout
 * rules are those of kernel_abi.h.
 */
#define SDPA_XE_FWD_KERNEL "sdpa_xe_fwd"
/* printf format of a variant's source name: keys, dsub, "-cvt" or "",
 * "-emu" or "". */
#define SDPA_XE_FWD_VARIANT "sdpa_xe_fwd-k%d-d%d%s%s"

/* The host's enum of argument indices, SDPA_XE_FWD_ARG_<NAME>, and the
 * kernel's parameter list, both from sdpa_xe_fwd_args.def. */
#ifdef __OPENCL_C_VERSION__
#define SDPA_XE_ARG(name, type, kind, meaning) type name,
#define SDPA_XE_ARG_LAST(name, type, kind, meaning) type name
#define SDPA_XE_FWD_PARAMS_BEGIN
#else
enum sdpa_xe_fwd_arg {
#define SDPA_XE_ARG(name, type, kind, meaning) SDPA_XE_FWD_ARG_##name,
#define SDPA_XE_ARG_LAST(name, type, kind, meaning) SDPA_XE_FWD_ARG_##name, SDPA_XE_FWD_ARG_COUNT
#include "sdpa_xe_fwd_args.def"
#undef SDPA_XE_ARG
#undef SDPA_XE_ARG_LAST
};
#endif

/* Head-dim elements per step of S = K Q^T (the products' K): the head size
 * is padded with zeros to a multiple of this. */
#define SDPA_XE_D_STEP 16
#define SDPA_XE_D_PAD(d) (((d) + SDPA_XE_D_STEP - 1) / SDPA_XE_D_STEP * SDPA_XE_D_STEP)

/* Whether P goes through local memory between the two products: when
 * DSPLIT > 1 sub-groups share it, and always with sub-groups of 8 (their
 * register file is too small to keep P's packing next to the second
 * product; see sdpa_xe_fwd.cl). */
#define SDPA_XE_FWD_P_IN_SLM(dsplit, sg) ((dsplit) > 1 || (sg) == 8)

/* Elements per row of the converted K and V tiles (variants with cvt): the
 * padded head size plus 8, so that the rows of consecutive keys, which the
 * lanes read side by side, start in different banks. */
#define SDPA_XE_KV_LD(d) (SDPA_XE_D_PAD(d) + 8)

/* Local memory, in bytes, for head size d, BQ queries, BK keys per key tile,
 * DSPLIT, sub-group size sg and convert (a cvt variant): Q^T as the
 * products' B operand (2 bytes per element of the padded head size), P of
 * the key tile in the same layout (SDPA_XE_FWD_P_IN_SLM), DSPLIT floats per
 * query for the tile maxima and the final sums, and with convert the K and
 * V tiles in Q's type. */
#define SDPA_XE_FWD_SLM_BYTES(d, bq, bk, dsplit, sg, convert)                                      \
    (2 * (bq) * SDPA_XE_D_PAD(d) + (SDPA_XE_FWD_P_IN_SLM(dsplit, sg) ? 2 * (bq) * (bk) : 0) +      \
     4 * (dsplit) * (bq) + ((convert) ? 2 * 2 * (bk) * SDPA_XE_KV_LD(d) : 0))

#endif /* SDPA_SPIRV_KERNEL_ABI_XE_H */
