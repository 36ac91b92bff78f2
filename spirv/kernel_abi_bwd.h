/*
 * kernel_abi_bwd.h - the backward contract between the host and sdpa_bwd.cl:
 * kernel names, argument order, the strides buffer, work-group geometry,
 * local-memory size and the limits a configuration must respect. Included
 * by OpenCL C and by host C (through kernel_abi.h), like kernel_abi.h.
 *
 * Pipeline of one backward execution (all on one command list):
 *
 *   1. zero fills (src/core/bwd_scratch.h) of the buffers added into;
 *   2. sdpa_bwd_preprocess: D_i = rowsum(dO * O), f32 [B, Hq, Sq];
 *   3. sdpa_bwd: a work-group owns Bc keys of one (batch, query head) and
 *      walks the query blocks of Br: recomputes S and P = exp(S - LSE),
 *      accumulates dV += P^T dO and dK += dS^T Q in registers, and adds
 *      dQ += dS K with f32 atomics (ATOMIC mode only); writes dS (WITH_DS);
 *   4. DETERMINISTIC mode only: sdpa_bwd_dq: a work-group owns Br queries
 *      and walks the key blocks, recomputing S, P, dP and dS, and writes dQ
 *      directly (no atomics anywhere in this mode);
 *   5. sdpa_bwd_postprocess, once per f32 buffer to convert: f32 [B, H, S, D]
 *      (with strides) to the gradient's dtype and strides, summing
 *      `slices` partial buffers in a fixed order (deterministic GQA dK/dV).
 *
 * Variants are sdpa_bwd.<d_max>.<sg>; every variant has all four kernels.
 */
#ifndef SDPA_SPIRV_KERNEL_ABI_BWD_H
#define SDPA_SPIRV_KERNEL_ABI_BWD_H

#define SDPA_BWD_SOURCE "sdpa_bwd"
#define SDPA_BWD_PREPROCESS_KERNEL "sdpa_bwd_preprocess"
#define SDPA_BWD_KERNEL "sdpa_bwd"
#define SDPA_BWD_DQ_KERNEL "sdpa_bwd_dq"
#define SDPA_BWD_POSTPROCESS_KERNEL "sdpa_bwd_postprocess"

/* SpecId of the dS dtype (proposed row of spec_constants.def:
 * SDPA_SPEC_CONSTANT(DS_DT, 175, int, 0, "dtype of dS (0: not written)")).
 * The kernels read it through this id until the row exists. */
#define SDPA_BWD_DS_DT_SPEC_ID 175

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
 *       sdpa_bwd_dq (DETERMINISTIC): diff_q, written in Q's dtype.
 *   DK, DV  where sdpa_bwd puts dK and dV of its keys:
 *       - KV_GROUP_SIZE == 1: diff_k / diff_v, in Q's dtype;
 *       - DKV_ATOMIC: the f32 buffer added into, indexed by K/V head (diff_k
 *         itself if f32 and dense, else dense scratch [B, Hkv, Sk, D]);
 *       - DETERMINISTIC with KV_GROUP_SIZE > 1: the f32 partial slices
 *         [B, Hq, Sk, D], indexed by query head (dense: Hq*Sk*D, Sk*D, D, 1).
 *
 * The mask's and dS's strides are kernel arguments (both are optional).
 */
enum sdpa_bwd_stride {
    SDPA_BWD_STRIDE_K = 0,
    SDPA_BWD_STRIDE_Q = 4,
    SDPA_BWD_STRIDE_V = 8,
    SDPA_BWD_STRIDE_A = 12,  /* O */
    SDPA_BWD_STRIDE_DA = 16, /* dO */
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

enum sdpa_bwd_pre_arg {
    SDPA_BWD_PRE_ARG_D_I = 0, /* global float *: D_i [B, Hq, Sq], dense */
    SDPA_BWD_PRE_ARG_A,       /* const global void *: O */
    SDPA_BWD_PRE_ARG_DA,      /* const global void *: dO */
    SDPA_BWD_PRE_ARG_D,       /* int: head size */
    SDPA_BWD_PRE_ARG_SQ,      /* int: queries */
    SDPA_BWD_PRE_ARG_STRIDES, /* const global long *: the strides buffer (O, dO) */
    SDPA_BWD_PRE_ARG_COUNT
};

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
 *   dQ:           UNROLL_M_DBR head-dim rows x UNROLL_N_DBR queries (lanes along queries).
 * sdpa_bwd_dq uses the same S and dQ tiles (a work-group owns Br queries and
 * walks the keys in blocks of Bc): no configuration of its own.
 *
 * Geometry (sg = SUBGROUP_SIZE of the variant):
 *   local size  = { sg, WG_M_BCBR * WG_N_BCBR, 1 }   (the largest grid)
 *   sdpa_bwd:     group count = { ceil(Sk / Bc), Hq, B }
 *   sdpa_bwd_dq:  group count = { ceil(Sq / Br), Hq, B }
 * Both take the same arguments (sdpa_bwd_dq ignores DS, DK and DV, and
 * writes diff_q through DQ in Q's dtype).
 *
 * Specialization constants read: QRY_DT, KEY_DT, VAL_DT, DST_DT (dO), MSK_DT,
 * SCALE_DT, KV_GROUP_SIZE, TRANSPOSE_K, D_FULL, WITH_ATTN_SCALE,
 * WITH_HOST_SCALE, INVERT_SCALE, MASK_KIND, the 12 tiling constants,
 * WITH_DS, DS_DT (SpecId 175), DKV_ATOMIC, DETERMINISTIC, WITH_DROPOUT,
 * DROPOUT_HOST_SCALARS, DROPOUT_OFFSET. Not read (the host's choice of
 * pointers and strides covers them): DQ_F32_SCRATCH, DKV_F32_SCRATCH,
 * BLOCK_K, BLOCK_DK, BLOCK_DV, the *_ALIGN constants, BROADCAST_MASK_Q,
 * SOFTMAX_INF_AS_ZERO (a -inf log-sum-exp always gives P = 0).
 */
enum sdpa_bwd_arg {
    SDPA_BWD_ARG_K = 0,              /* const global void *: K [B, Hkv, Sk, D] */
    SDPA_BWD_ARG_Q,                  /* const global void *: Q [B, Hq, Sq, D] */
    SDPA_BWD_ARG_V,                  /* const global void *: V [B, Hkv, Sk, D] */
    SDPA_BWD_ARG_WS,                 /* const global float *: log-sum-exp [B, Hq, Sq] */
    SDPA_BWD_ARG_D_I,                /* const global float *: D_i [B, Hq, Sq] */
    SDPA_BWD_ARG_DA,                 /* const global void *: dO [B, Hq, Sq, D] */
    SDPA_BWD_ARG_DS,                 /* global void *: dS [B, Hq, Sq, Sk] (WITH_DS), DS_DT */
    SDPA_BWD_ARG_DK,                 /* global void *: see the strides buffer's DK */
    SDPA_BWD_ARG_DQ,                 /* global void *: see the strides buffer's DQ */
    SDPA_BWD_ARG_DV,                 /* global void *: see the strides buffer's DV */
    SDPA_BWD_ARG_SCALE_PTR,          /* const global void *: one SCALE_DT element */
    SDPA_BWD_ARG_SCALE,              /* float: host scale (WITH_HOST_SCALE) */
    SDPA_BWD_ARG_INV_SCALE,          /* float: 1 / host scale */
    SDPA_BWD_ARG_D,                  /* int: head size */
    SDPA_BWD_ARG_SK,                 /* int: keys */
    SDPA_BWD_ARG_SQ,                 /* int: queries */
    SDPA_BWD_ARG_MSK,                /* const global void *: mask (MASK_KIND == BUFFER) */
    SDPA_BWD_ARG_STRIDES,            /* const global long *: the strides buffer */
    SDPA_BWD_ARG_MSK_S0,             /* long x4: mask strides, 0 on broadcast dims */
    SDPA_BWD_ARG_MSK_S1,
    SDPA_BWD_ARG_MSK_S2,
    SDPA_BWD_ARG_MSK_S3,
    SDPA_BWD_ARG_DS_S0,              /* long x4: dS strides (WITH_DS) */
    SDPA_BWD_ARG_DS_S1,
    SDPA_BWD_ARG_DS_S2,
    SDPA_BWD_ARG_DS_S3,
    SDPA_BWD_ARG_DROPOUT_SEED,       /* long (DROPOUT_HOST_SCALARS) */
    SDPA_BWD_ARG_DROPOUT_OFFSET,     /* long (DROPOUT_HOST_SCALARS && DROPOUT_OFFSET) */
    SDPA_BWD_ARG_DROPOUT_P,          /* float (DROPOUT_HOST_SCALARS) */
    SDPA_BWD_ARG_DROPOUT_SEED_PTR,   /* const global long * (device scalars) */
    SDPA_BWD_ARG_DROPOUT_OFFSET_PTR, /* const global long * (DROPOUT_OFFSET) */
    SDPA_BWD_ARG_DROPOUT_P_PTR,      /* const global float * */
    SDPA_BWD_ARG_SLM,                /* local float *: SDPA_BWD_SLM_BYTES */
    SDPA_BWD_ARG_COUNT
};

/* Local memory of sdpa_bwd and sdpa_bwd_dq (one formula for both), f32:
 * K^T and V^T (d_max x bc each), Q and dO (br x d_max each), P and dS
 * (br x bc each), dS^T (bc x br), and the log-sum-exp and D_i of the block's
 * queries (br each). */
#define SDPA_BWD_SLM_FLOATS(d_max, bc, br)                                                         \
    (2 * (d_max) * (bc) + 2 * (br) * (d_max) + 3 * (bc) * (br) + 2 * (br))
#define SDPA_BWD_SLM_BYTES(d_max, bc, br) (4 * SDPA_BWD_SLM_FLOATS(d_max, bc, br))

/* Private-array capacity per lane (sg = sub-group size); the host rejects a
 * configuration that exceeds it:
 *   S tile:  UNROLL_M_BCBR * UNROLL_N_BCBR / sg <= SDPA_BWD_MAX_S_PER_LANE
 *   dK, dV:  UNROLL_M_DBC * UNROLL_N_DBC / sg   <= SDPA_BWD_MAX_DKV_PER_LANE
 *   dQ:      UNROLL_M_DBR * UNROLL_N_DBR / sg   <= SDPA_BWD_MAX_DQ_PER_LANE
 * and the axes that run along lanes are whole sub-groups:
 *   UNROLL_M_BCBR % sg == 0, UNROLL_N_DBC % sg == 0, UNROLL_N_DBR % sg == 0. */
#define SDPA_BWD_MAX_S_PER_LANE(d_max) 64
#define SDPA_BWD_MAX_DKV_PER_LANE(d_max) 128
#define SDPA_BWD_MAX_DQ_PER_LANE(d_max) 128

/* ------------------------------------------------------------------------- */
/* sdpa_bwd_postprocess                                                       */
/* ------------------------------------------------------------------------- */
/*
 * dst[b, h, s, d] = sum_{g < slices} src[g * slice_stride + b * ss0 + h * ss1
 *                   + s * ss2 + d * ss3], converted to QRY_DT (the dtype of
 * every gradient) and stored with dst's strides. slices is 1 except for
 * deterministic GQA dK/dV, where the partials [B, Hq, Sk, D] are summed with
 * ss1 = KV_GROUP_SIZE * Sk * D and slice_stride = Sk * D, in order g = 0, 1, ...
 *   local size  = { sg, SDPA_BWD_POST_SUBGROUPS, 1 }
 *   group count = { ceil(S / SDPA_BWD_POST_ROWS), H, B }
 * Reads QRY_DT only.
 */
#define SDPA_BWD_POST_SUBGROUPS 8
#define SDPA_BWD_POST_ROWS 32

enum sdpa_bwd_post_arg {
    SDPA_BWD_POST_ARG_DST = 0,      /* global void *: the gradient (QRY_DT) */
    SDPA_BWD_POST_ARG_SRC,          /* const global float *: the f32 sums */
    SDPA_BWD_POST_ARG_D,            /* int: head size */
    SDPA_BWD_POST_ARG_S,            /* int: sequence length (Sq for dQ, Sk for dK/dV) */
    SDPA_BWD_POST_ARG_SLICES,       /* int: partial buffers to sum (>= 1) */
    SDPA_BWD_POST_ARG_SLICE_STRIDE, /* long: elements between two slices */
    SDPA_BWD_POST_ARG_SRC_S0,       /* long x4: src strides */
    SDPA_BWD_POST_ARG_SRC_S1,
    SDPA_BWD_POST_ARG_SRC_S2,
    SDPA_BWD_POST_ARG_SRC_S3,
    SDPA_BWD_POST_ARG_DST_S0, /* long x4: dst strides */
    SDPA_BWD_POST_ARG_DST_S1,
    SDPA_BWD_POST_ARG_DST_S2,
    SDPA_BWD_POST_ARG_DST_S3,
    SDPA_BWD_POST_ARG_COUNT
};

#endif /* SDPA_SPIRV_KERNEL_ABI_BWD_H */
