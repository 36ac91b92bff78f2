/*
 * kernel_abi_bwd.h - the backward contract between the host and sdpa_bwd.cl:
 * kernel names, argument order, the strides buffer, work-group geometry,
 * local-memory size and the limits a configuration must respect. Included
 * by OpenCL C and by host C (through kernel_abi.h), like kernel_abi.h.
 *
 * Pipeline of one backward execution (all on one command list):
 *
 *   1. zero fills (src/plan/bwd_scratch.h) of the buffers added into;
 *   2. sdpa_bwd_preprocess: D_i = rowsum(dO * O), f32 [B, Hq, Sq];
 *   3. sdpa_bwd: a work-group owns Bc keys of one (batch, query head) and
 *      walks the query blocks of Br: recomputes S and P = exp(S - LSE),
 *      accumulates dV += P^T dO and dK += dS^T Q in local memory, and adds
 *      dQ += dS K with f32 atomics (ATOMIC mode), or with DQ_PARTIALS (either
 *      mode, bwd_plan.h's bound) stores its key block's dQ = dS K into its
 *      own f32 slice, every row written (zeros for queries that cannot see
 *      its keys); writes dS (WITH_DS);
 *   4. DETERMINISTIC mode without DQ_PARTIALS only: sdpa_bwd_dq: a
 *      work-group owns about Bc queries and walks the key blocks,
 *      recomputing S, P, dP and dS, and writes dQ directly (no atomics
 *      anywhere in this mode);
 *   5. sdpa_bwd_postprocess, once per f32 buffer to convert: f32 [B, H, S, D]
 *      (with strides) to the gradient's dtype and strides, summing
 *      `slices` partial buffers in a fixed order (deterministic GQA dK/dV,
 *      DQ_PARTIALS' dQ slices).
 *
 * Variants are <source>.0.<sg>: no array is sized by the head size (local
 * memory is laid out at run time, SDPA_BWD_LD), so one build per sub-group
 * size serves every head size. The backend builds three modules, so that
 * a problem builds only what it needs: the pre- and postprocessing kernels
 * read only the dtype of Q and O (QRY_DT, DST_DT), so their small module
 * serves every configuration of that dtype; the main kernel; and the
 * deterministic dQ pass, only for deterministic problems without partial
 * dQ slices (bwd_plan.h). sdpa_bwd.0.<sg>
 * holds all four (the ISA gate, tools/gpu-isa, compiles the kernels from it:
 * the same code under the same constants).
 */
#ifndef SDPA_SPIRV_KERNEL_ABI_BWD_H
#define SDPA_SPIRV_KERNEL_ABI_BWD_H

#define SDPA_BWD_SOURCE "sdpa_bwd"                 /* all four kernels */
#define SDPA_BWD_PREPOST_SOURCE "sdpa_bwd_prepost" /* sdpa_bwd_{pre,post}process */
#define SDPA_BWD_MAIN_SOURCE "sdpa_bwd_main"       /* sdpa_bwd */
#define SDPA_BWD_DQ_SOURCE "sdpa_bwd_dq"           /* sdpa_bwd_dq */
/* The parts sdpa_bwd.cl compiles (SDPA_BWD_PARTS, set by each source). */
#define SDPA_BWD_PART_PRE 1
#define SDPA_BWD_PART_MAIN 2
#define SDPA_BWD_PART_DQ 4
#define SDPA_BWD_PART_POST 8
#define SDPA_BWD_PART_ALL 15
/* The field of the variants' names that add f32 with the device's native
 * atomic add (<source>-fadd.0.<sg>, sdpa_xe_bwd-...-fadd.0.<sg>; the others
 * with compare-and-swap loops): built for SDPA_BWD_SOURCE,
 * SDPA_BWD_MAIN_SOURCE and the fast path's variants (variants.def),
 * chosen by sdpa_device_native_f32_add (src/plan/device.h). */
#define SDPA_BWD_FADD_FIELD "-fadd"
/* The head-size field of the variants' names (<source>.0.<sg>). */
#define SDPA_BWD_VARIANT_D_MAX 0
#define SDPA_BWD_PREPROCESS_KERNEL "sdpa_bwd_preprocess"
/* Attention sinks' gradient (ABI 1.2), in the pre/post module: one
 * sub-group per query head, launched beside the main kernel. */
#define SDPA_BWD_SINKS_KERNEL "sdpa_bwd_sinks"
#define SDPA_BWD_KERNEL "sdpa_bwd"
#define SDPA_BWD_DQ_KERNEL "sdpa_bwd_dq"
#define SDPA_BWD_POSTPROCESS_KERNEL "sdpa_bwd_postprocess"

/* ------------------------------------------------------------------------- */
/* The strides buffer                                                         */
/* ------------------------------------------------------------------------- */
/*
 * 32 int64 values (SDPA_BWD_STRIDES_COUNT in bwd_scratch.h) in the scratch,
 * filled by an appended copy before the kernels run; read by sdpa_bwd,
 * sdpa_bwd_dq and sdpa_bwd_preprocess. Four strides per tensor, in elements,
 * [batch, head, sequence, head_dim] order:
 *
 *   K, Q, V, O, dO   the inputs' strides.
 *   DQ  sdpa_bwd (ATOMIC): the f32 buffer dQ is added into (diff_q itself
 *       if it is f32 and dense, else the scratch: dense [B, Hq, Sq, D]);
 *       sdpa_bwd (DQ_PARTIALS): the f32 slices [B, Hq, n_key_blocks, Sq, D]
 *       as a dense [B, Hq * n_key_blocks, Sq, D] tensor (Hq * nkb * Sq * D,
 *       Sq * D, D, 1): key block kb of query head h stores "head"
 *       h * n_key_blocks + kb, n_key_blocks = ceil(Sk / Bc) its group count;
 *       sdpa_bwd_dq (DETERMINISTIC): diff_q, written in Q's dtype.
 *   DK, DV  where sdpa_bwd puts dK and dV of its keys:
 *       - KV_GROUP_SIZE == 1: diff_k / diff_v, in Q's dtype;
 *       - DKV_ATOMIC: the f32 buffer added into, indexed by K/V head (diff_k
 *         itself if f32 and dense, else dense scratch [B, Hkv, Sk, D]);
 *       - DETERMINISTIC with KV_GROUP_SIZE > 1: the f32 partial slices
 *         [B, Hq, Sk, D], indexed by query head (dense: Hq*Sk*D, Sk*D, D, 1).
 *
 * The mask's and dS's strides are kernel arguments (both are optional).
 *
 * BWD_UNIT_D_STRIDES (a specialization constant): the host sets it when the
 * head-dim stride (the fourth) of K, Q, V, dO, DQ, DK and DV above is 1,
 * and sdpa_bwd and sdpa_bwd_dq then assume it is (only the contiguous
 * copies are compiled); when it is false they test the strides at run time.
 */
enum sdpa_bwd_stride {
    SDPA_BWD_STRIDE_K = 0,
    SDPA_BWD_STRIDE_Q = 4,
    SDPA_BWD_STRIDE_V = 8,
    SDPA_BWD_STRIDE_DST = 12,  /* O */
    SDPA_BWD_STRIDE_DIFF_DST = 16, /* dO */
    SDPA_BWD_STRIDE_DQ = 20,
    SDPA_BWD_STRIDE_DK = 24,
    SDPA_BWD_STRIDE_DV = 28,
    SDPA_BWD_STRIDE_COUNT = 32
};

/* ------------------------------------------------------------------------- */
/* sdpa_bwd_preprocess                                                        */
/* ------------------------------------------------------------------------- */
/*
 * D_i[(b * Hq + h) * Sq + i] = sum_d dO[b, h, i, d] * O[b, h, i, d] in f32.
 * Reads DST_DT (the dtype of O and dO).
 *   local size  = { sg, SDPA_BWD_PRE_SUBGROUPS, 1 }
 *   group count = { ceil(Sq / SDPA_BWD_PRE_ROWS), Hq, B }
 */
#define SDPA_BWD_PRE_SUBGROUPS 8
#define SDPA_BWD_PRE_ROWS 32

/* The arguments: sdpa_bwd_pre_args.def (SDPA_BWD_PRE_ARG_COUNT, sdpa_bwd_pre_args_t on the host). */
#ifndef __OPENCL_C_VERSION__
#define SDPA_ARGS_FILE "sdpa_bwd_pre_args.def"
#define SDPA_ARGS_PREFIX SDPA_BWD_PRE_ARG_
#define SDPA_ARGS_NAME sdpa_bwd_pre_args
#include "kernel_args_host.h"
#endif

/* ------------------------------------------------------------------------- */
/* sdpa_bwd and sdpa_bwd_dq                                                   */
/* ------------------------------------------------------------------------- */
/*
 * Tiles, from the 12 integers of BWD_SDPA_CONFIG:
 *   Bc = UNROLL_M_BCBR * WG_M_BCBR   keys per work-group of sdpa_bwd
 *                                    (== UNROLL_N_DBC * WG_N_DBC)
 *   Br = UNROLL_N_BCBR * WG_N_BCBR   queries per block (== UNROLL_N_DBR * WG_N_DBR)
 * Sub-group (m, n) = (id % WG_M_x, id / WG_M_x) of each grid owns:
 *   S, P, dP, dS: UNROLL_N_BCBR queries x UNROLL_M_BCBR keys (lanes along keys);
 *   dK, dV:       UNROLL_M_DBC head-dim rows x UNROLL_N_DBC keys (lanes along keys);
 *   dQ:           UNROLL_N_DBR queries x UNROLL_M_DBR head-dim columns (lanes along
 *                 the head dim).
 * Sub-groups past a grid's size sit that phase out.
 * sdpa_bwd_dq uses the same S and dQ tiles: a work-group owns
 * Bq = SDPA_BWD_DQ_QUERIES(Bc, Br) queries (Bq / Br sub-blocks of Br) and
 * walks the keys in blocks of Bc; no configuration of its own.
 *
 * Geometry (sg = SUBGROUP_SIZE of the variant):
 *   local size  = { sg, WG_M_BCBR * WG_N_BCBR, 1 }   (the largest grid)
 *   sdpa_bwd:     group count = { ceil(Sk / Bc), Hq, B }
 *   sdpa_bwd_dq:  group count = { ceil(Sq / SDPA_BWD_DQ_QUERIES(Bc, Br)), Hq, B }
 * Both take the same arguments (sdpa_bwd_dq ignores DS, DK and DV, and
 * writes diff_q through DQ in Q's dtype).
 *
 * Specialization constants read: QRY_DT (Q and every gradient), KEY_DT,
 * VAL_DT, DST_DT (O and dO), MSK_DT, SCALE_DT, KV_GROUP_SIZE,
 * WITH_ATTN_SCALE, WITH_HOST_SCALE, INVERT_SCALE, MASK_KIND, the 12 tiling
 * constants, WITH_DS, DS_DT, DKV_ATOMIC, DETERMINISTIC, DQ_PARTIALS (sdpa_bwd),
 * WITH_DROPOUT, DROPOUT_HOST_SCALARS, DROPOUT_OFFSET.
 * Not read, so best left at their defaults (setting them only multiplies
 * modules): TRANSPOSE_K (contiguity is tested on the strides at run time),
 * D_FULL,
 * BROADCAST_MASK_Q (zero strides broadcast), SOFTMAX_INF_AS_ZERO
 * (a -inf log-sum-exp always gives P = 0).
 * In DETERMINISTIC mode without DQ_PARTIALS sdpa_bwd leaves DQ alone (pass
 * diff_q or NULL).
 */
/* The arguments: sdpa_bwd_args.def (SDPA_BWD_ARG_COUNT, sdpa_bwd_args_t on the host). */
#ifndef __OPENCL_C_VERSION__
#define SDPA_ARGS_FILE "sdpa_bwd_args.def"
#define SDPA_ARGS_PREFIX SDPA_BWD_ARG_
#define SDPA_ARGS_NAME sdpa_bwd_args
#include "kernel_args_host.h"
#endif

/* Queries a work-group of sdpa_bwd_dq owns: Bc rounded down to whole
 * blocks of Br (at least one), so that each staged block of keys serves as
 * many queries as sdpa_bwd's work-groups have keys. */
#define SDPA_BWD_DQ_QUERIES(bc, br) ((bc) >= (br) ? (bc) / (br) * (br) : (br))

/* Floats per head-dim row of a local-memory tile: the head size rounded up
 * to a multiple of 32 (a whole number of vectors for every sub-group size).
 * Set at run time from the head size; no array is sized by it, so the
 * variants do not depend on a head-size bucket. */
#define SDPA_BWD_LD(d) (((d) + 31) / 32 * 32)

/* Local memory, f32 tiles, with ld = SDPA_BWD_LD(d): K^T and V^T (ld x bc
 * each), K (bc x ld), Q and dO (nq x ld each), P and dS (br x bc each), the
 * log-sum-exp and D_i of the staged queries (nq each), then the
 * accumulators: dK^T and dV^T (ld x bc each) in sdpa_bwd (nq = br), dQ
 * (nq x ld) in sdpa_bwd_dq (nq = SDPA_BWD_DQ_QUERIES). */
#define SDPA_BWD_SLM_COMMON_FLOATS(ld, bc, br, nq)                                                 \
    (3 * (ld) * (bc) + 2 * (nq) * (ld) + 2 * (bc) * (br) + 2 * (nq))
#define SDPA_BWD_SLM_FLOATS(d, bc, br)                                                             \
    (SDPA_BWD_SLM_COMMON_FLOATS(SDPA_BWD_LD(d), bc, br, br) + 2 * SDPA_BWD_LD(d) * (bc))
#define SDPA_BWD_DQ_SLM_FLOATS(d, bc, br)                                                          \
    (SDPA_BWD_SLM_COMMON_FLOATS(SDPA_BWD_LD(d), bc, br, SDPA_BWD_DQ_QUERIES(bc, br)) +             \
     SDPA_BWD_DQ_QUERIES(bc, br) * SDPA_BWD_LD(d))
#define SDPA_BWD_SLM_BYTES(d, bc, br) (4 * SDPA_BWD_SLM_FLOATS(d, bc, br))
#define SDPA_BWD_DQ_SLM_BYTES(d, bc, br) (4 * SDPA_BWD_DQ_SLM_FLOATS(d, bc, br))

/* Constraints beyond oneDNN's (config_check.c), sg the sub-group size:
 *   the axes that run along lanes are whole sub-groups:
 *     UNROLL_M_BCBR % sg == 0, UNROLL_N_DBC % sg == 0, UNROLL_M_DBR % sg == 0;
 *   local memory: SDPA_BWD_SLM_BYTES (sdpa_bwd) and, in DETERMINISTIC mode,
 *     SDPA_BWD_DQ_SLM_BYTES (sdpa_bwd_dq) fit the device's local memory;
 *   work-group: sg * WG_M_BCBR * WG_N_BCBR items (the largest grid).
 * The kernels keep no tile in private memory (every tile and accumulator
 * is in local memory), so there is no per-lane limit on the unrolls. */

/* ------------------------------------------------------------------------- */
/* sdpa_bwd_postprocess                                                       */
/* ------------------------------------------------------------------------- */
/*
 * dst[b, h, s, d] = sum_{g < slices} src[g * slice_stride + b * ss0 + h * ss1
 *                   + s * ss2 + d * ss3], converted to QRY_DT (the dtype of
 * every gradient) and stored with dst's strides. slices is 1 except for
 * deterministic GQA dK/dV, where the partials [B, Hq, Sk, D] are summed with
 * ss1 = KV_GROUP_SIZE * Sk * D and slice_stride = Sk * D, in order g = 0, 1, ...,
 * and for DQ_PARTIALS' dQ slices [B, Hq, n_key_blocks, Sq, D] (slices =
 * n_key_blocks, ss1 = n_key_blocks * Sq * D, slice_stride = Sq * D).
 *   local size  = { sg, SDPA_BWD_POST_SUBGROUPS, 1 }
 *   group count = { ceil(S / SDPA_BWD_POST_ROWS), H, B }
 * Reads QRY_DT only.
 */
#define SDPA_BWD_POST_SUBGROUPS 8
#define SDPA_BWD_POST_ROWS 32

/* The arguments: sdpa_bwd_post_args.def (SDPA_BWD_POST_ARG_COUNT, sdpa_bwd_post_args_t on the host). */
#ifndef __OPENCL_C_VERSION__
#define SDPA_ARGS_FILE "sdpa_bwd_post_args.def"
#define SDPA_ARGS_PREFIX SDPA_BWD_POST_ARG_
#define SDPA_ARGS_NAME sdpa_bwd_post_args
#include "kernel_args_host.h"
#endif

#endif /* SDPA_SPIRV_KERNEL_ABI_BWD_H */
