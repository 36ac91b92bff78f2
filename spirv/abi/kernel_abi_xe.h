/*
 * kernel_abi_xe.h - what the host and the fast-path (xe) kernels agree on:
 * variant names, work-group geometry, local memory, and how a
 * configuration's integers map onto the kernels' tiles. The argument lists
 * are the portable kernels' (sdpa_xe_fwd takes sdpa_fwd_args.def, sdpa_xe_bwd
 * and sdpa_xe_bwd_dq take sdpa_bwd_args.def): the fast path is another
 * implementation of the same kernels, so the host sets the same arguments
 * from the same tables and only the module and kernel name differ.
 * Included by OpenCL C and by host C. The conventions of kernel_abi.h
 * (untyped tensor pointers, int64 strides in elements, dtype codes, zero
 * strides for broadcast mask dimensions) hold here too.
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
 * first. The built ones are the rows of variants.def.
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
/* The variants' source (variants.def, sdpa_spirv_variant_name). */
#define SDPA_XE_FWD_SOURCE "sdpa_xe_fwd"

/* Head-dim elements per step of S = K Q^T (the products' K): the head size
 * is padded with zeros to a multiple of this. */
#define SDPA_XE_D_STEP 16
#define SDPA_XE_D_PAD(d) (((d) + SDPA_XE_D_STEP - 1) / SDPA_XE_D_STEP * SDPA_XE_D_STEP)

/* Whether P goes through local memory between the two products: when
 * DSPLIT > 1 sub-groups share it, always with sub-groups of 8 (their
 * register file is too small to keep P's packing next to the second
 * product), and with sub-groups of 16 unless convert (those compute O = P V
 * and read P transposed from there; see sdpa_xe_fwd.cl). */
#define SDPA_XE_FWD_P_IN_SLM(dsplit, sg, convert) ((dsplit) > 1 || (sg) == 8 || !(convert))

/* Elements per row of the converted K and V tiles (variants with cvt): the
 * padded head size plus 8, so that the rows of consecutive keys, which the
 * lanes read side by side, start in different banks. */
#define SDPA_XE_KV_LD(d) (SDPA_XE_D_PAD(d) + 8)

/* Local memory, in bytes, for head size d, BQ queries, BK keys per key tile,
 * DSPLIT, sub-group size sg and convert (a cvt variant): Q^T as the
 * products' B operand (2 bytes per element of the padded head size), P of
 * the key tile in the same layout (SDPA_XE_FWD_P_IN_SLM), DSPLIT floats per
 * query for the tile maxima and the final sums, with convert the K and V
 * tiles in Q's type, and with sub-groups of 8 (Xe-HPG) otherwise the K
 * and V^T operands of a key tile (BK keys by the padded head size each). */
#define SDPA_XE_FWD_SLM_BYTES(d, bq, bk, dsplit, sg, convert)                                      \
    (2 * (bq) * SDPA_XE_D_PAD(d) +                                                                 \
     (SDPA_XE_FWD_P_IN_SLM(dsplit, sg, convert) ? 2 * (bq) * (bk) : 0) + 4 * (dsplit) * (bq) +     \
     ((convert) ? 2 * 2 * (bk) * SDPA_XE_KV_LD(d) : 0) +                                           \
     ((sg) == 8 && !(convert) ? 2 * 2 * (bk) * SDPA_XE_D_PAD(d) : 0))

/* ------------------------------------------------------------------------- */
/* Backward: sdpa_xe_bwd.cl, kernels "sdpa_xe_bwd" and "sdpa_xe_bwd_dq"        */
/* ------------------------------------------------------------------------- */
/*
 * The portable backward's pipeline, strides buffer, scratch and arguments
 * (kernel_abi_bwd.h) with these two kernels in place of sdpa_bwd and
 * sdpa_bwd_dq; the preprocess (D_i) and postprocess kernels stay the
 * portable ones. Variants: sdpa_xe_bwd-k<KEYS>-d<DSUB>[-emu][-fadd].0.<sg>,
 * the rows of variants.def.
 *
 * Every tile goes through local memory in Q's type (K and V of the
 * work-group's keys once, Q and dO per block of 16 queries, converted from
 * any layout), and every product runs on the matrix engine from there, in
 * the layout of the forward (kernel_abi_xe.h): keys on the components,
 * queries on the lanes:
 *   S^T  = K Q^T, dP^T = V dO^T         keys x 16 queries, registers;
 *   P^T, dS^T                           elementwise, one query per lane;
 *   dV  += (P Z)^T dO, dK += dS^T Q     keys x head dim, registers for the
 *                                       whole query loop (the A operand is
 *                                       the C layout of P^T and dS^T);
 *   dQ^T = K^T dS^T                     head dim x queries, added atomically
 *                                       (sdpa_xe_bwd) or accumulated in
 *                                       registers (sdpa_xe_bwd_dq).
 *
 * Configuration (BWD_SDPA_CONFIG's 12 integers) in fast-path terms, with sg
 * the sub-group size, KEYS keys and DSUB head-dim columns per sub-group:
 *   unroll_m_BcBr = unroll_n_DBc = KEYS, unroll_n_BcBr = unroll_n_DBr = 16,
 *   unroll_m_DBc = unroll_m_DBr = DSUB,
 *   wg_m_BcBr = wg_n_DBc = KGROUPS      groups of KEYS keys per work-group,
 *   wg_m_DBc = wg_m_DBr = DSPLIT        sub-groups sharing those keys (they
 *                                       split dK, dV and dQ by head-dim
 *                                       columns; the first computes the
 *                                       scores for all of them),
 *   wg_n_BcBr = wg_n_DBr = 1,           DSUB * DSPLIT >= head size;
 * so Bc = KEYS * KGROUPS keys per work-group of sdpa_xe_bwd, and
 * sdpa_xe_bwd_dq's work-group owns 16 * KGROUPS queries (16 per group of
 * sub-groups) and walks the keys KEYS at a time.
 *
 * Geometry: local size { sg, DSPLIT * KGROUPS, 1 };
 *   sdpa_xe_bwd:    group count { ceil(Sk / Bc), Hq, B };
 *   sdpa_xe_bwd_dq: group count { ceil(Sq / (16 * KGROUPS)), Hq, B }.
 * What the host must guarantee: Q, K, V, O and dO all f16 or all bf16,
 * head size <= DSUB * DSPLIT (and <= 256).
 */
#define SDPA_XE_BWD_KERNEL "sdpa_xe_bwd"
#define SDPA_XE_BWD_DQ_KERNEL "sdpa_xe_bwd_dq"
/* The variants' source (variants.def, sdpa_spirv_variant_name). */
#define SDPA_XE_BWD_SOURCE "sdpa_xe_bwd"
/* Queries per block of the query loop (two lane blocks with 8 lanes). */
#define SDPA_XE_BWD_QUERIES 16

/* Local memory, in bytes, for head size d, `keys` staged keys and
 * `queries` staged queries: K and V tiles, Q and dO tiles twice (row and
 * pair layouts; rows of SDPA_XE_KV_LD(d) 16-bit elements), the scores P^T Z
 * and dS^T ([keys][queries] 16-bit, dS^T also in pairs with 8 rows of
 * padding), and the log-sum-exp and D_i of the queries. sdpa_xe_bwd stages
 * Bc keys and 16 queries, sdpa_xe_bwd_dq SDPA_XE_KEYS keys and its
 * 16 * KGROUPS queries. */
#define SDPA_XE_BWD_TILES_BYTES(d, keys, queries)                                                  \
    (4 * (keys) * SDPA_XE_KV_LD(d) + 8 * (queries) * SDPA_XE_KV_LD(d) +                          \
     2 * (3 * (keys) + 8) * (queries) + 8 * (queries))
/* K^T of sdpa_xe_bwd's Bc keys as dQ^T's A operands, staged once in ATOMIC
 * mode: [D / 8][Bc / 16][8][16] 16-bit (Bc rounded up to 16 with zero
 * keys), one block read per operand. */
#define SDPA_XE_BWD_KT_BYTES(d, bc) (2 * (((bc) + 15) / 16 * 16) * SDPA_XE_D_PAD(d))
#define SDPA_XE_BWD_SLM_BYTES(d, bc, atomic)                                                       \
    (SDPA_XE_BWD_TILES_BYTES(d, bc, SDPA_XE_BWD_QUERIES) +                                         \
     ((atomic) ? SDPA_XE_BWD_KT_BYTES(d, bc) : 0))
#define SDPA_XE_BWD_DQ_SLM_BYTES(d, keys, bq) SDPA_XE_BWD_TILES_BYTES(d, keys, bq)

#endif /* SDPA_SPIRV_KERNEL_ABI_XE_H */
