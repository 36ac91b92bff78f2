/* fwd_plan.c - variant, configuration, constants and geometry of a forward launch. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "config_check.h"
#include "decode_plan.h"
#include "error.h"
#include "problem.h"
#include "fwd_plan.h"
#include "xe_fwd_plan.h"
#include "kernel_abi_decode.h"
#include "kernel_abi_xe.h"
#include "merge_check.h"
#include "size_math.h"
#include "tensor_layout.h"

/* The kernels receive sdpa.h's enum values as their codes. */
_Static_assert(SDPA_DT_UNDEF == SDPA_DTYPE_UNDEF && SDPA_DT_F32 == SDPA_DTYPE_F32 &&
                       SDPA_DT_F16 == SDPA_DTYPE_F16 && SDPA_DT_BF16 == SDPA_DTYPE_BF16 &&
                       SDPA_DT_S8 == SDPA_DTYPE_S8 && SDPA_DT_U8 == SDPA_DTYPE_U8 &&
                       SDPA_DT_S4 == SDPA_DTYPE_S4 && SDPA_DT_U4 == SDPA_DTYPE_U4 &&
                       SDPA_DT_S32 == SDPA_DTYPE_S32 && SDPA_DT_F8_E4M3 == SDPA_DTYPE_F8_E4M3 &&
                       SDPA_DT_F8_E5M2 == SDPA_DTYPE_F8_E5M2,
               "kernel_abi.h dtype codes differ from sdpa_dtype_t");
_Static_assert(SDPA_MASK_KIND_NONE == SDPA_MASK_NONE && SDPA_MASK_KIND_BUFFER == SDPA_MASK_BUFFER &&
                       SDPA_MASK_KIND_TOP_LEFT == SDPA_MASK_CAUSAL_TOP_LEFT &&
                       SDPA_MASK_KIND_BOTTOM_RIGHT == SDPA_MASK_CAUSAL_BOTTOM_RIGHT,
               "kernel_abi.h mask codes differ from sdpa_mask_kind_t");
_Static_assert(SDPA_QUANT_KIND_NONE == SDPA_QUANT_NONE &&
                       SDPA_QUANT_KIND_PER_TENSOR == SDPA_QUANT_PER_TENSOR &&
                       SDPA_QUANT_KIND_PER_GROUP == SDPA_QUANT_PER_GROUP &&
                       SDPA_QUANT_KIND_PER_HEAD == SDPA_QUANT_PER_HEAD,
               "kernel_abi.h quantization codes differ from sdpa_quant_kind_t");

/* K or V is converted on the fly: dequantized, or FP8 (with or without
 * scales). */
static int is_quantized(const sdpa_problem_desc_t *p)
{
    return p->k_quant.scales != SDPA_QUANT_NONE || p->k_quant.zero_points != SDPA_QUANT_NONE ||
           p->v_quant.scales != SDPA_QUANT_NONE || p->v_quant.zero_points != SDPA_QUANT_NONE ||
           sdpa_dtype_is_fp8(p->k.dtype) || sdpa_dtype_is_fp8(p->v.dtype);
}

static int uses_f16_accumulation(const sdpa_problem_desc_t *p)
{
    return p->kq_acc_dtype == SDPA_DTYPE_F16 || p->vs_acc_dtype == SDPA_DTYPE_F16;
}

/* Sq == 1 with several query heads per K/V head: one work-group serves
 * every query head of a K/V head (decode). */
static int q1_gqa_batch(const sdpa_shape_t *shape)
{
    return shape->q_len == 1 && shape->kv_group_size > 1;
}

void sdpa_fwd_config_query_for(const sdpa_problem_desc_t *problem, const sdpa_shape_t *shape,
                               const sdpa_device_info_t *device, sdpa_config_query_t *out)
{
    int64_t queries = shape->q_len == 1 ? shape->kv_group_size : shape->q_len;
    unsigned props = sdpa_plan_config_props(problem, device, queries);
    if (is_quantized(problem))
        props |= SDPA_CONFIG_QUANTIZED;
    if (uses_f16_accumulation(problem))
        props |= SDPA_CONFIG_F16_ACC;
    *out = (sdpa_config_query_t){device->device_class, sdpa_shape_widest_head(shape), shape->k_len,
                                 props};
}

/* The group size of a quantized K or V (1 unless per-group). */
static int32_t quant_group_size(const sdpa_quant_desc_t *q)
{
    if (q->scales == SDPA_QUANT_PER_GROUP || q->zero_points == SDPA_QUANT_PER_GROUP)
        return (int32_t)q->group_size;
    return 1;
}

static sdpa_dtype_t scales_dtype(const sdpa_quant_desc_t *q)
{
    return q->scales != SDPA_QUANT_NONE ? q->scales_dtype : SDPA_DTYPE_UNDEF;
}

static sdpa_dtype_t zero_points_dtype(const sdpa_quant_desc_t *q)
{
    return q->zero_points != SDPA_QUANT_NONE ? q->zero_points_dtype : SDPA_DTYPE_UNDEF;
}

/* Every forward constant of spec_constants.def, in its order. */
static void set_constants(sdpa_fwd_plan_t *plan, const sdpa_problem_desc_t *p,
                          const sdpa_shape_t *shape)
{
    sdpa_spec_values_t *v = &plan->constants;
    const sdpa_fwd_config_t *c = &plan->config;
    int64_t bq = (int64_t)c->unroll_n_kq * c->wg_n_kq;
    int64_t rows = q1_gqa_batch(shape) ? shape->kv_group_size : shape->q_len;

    /* Data types, shape, scale, mask, softmax, dropout: plan_common.h. */
    sdpa_plan_common_constants(v, p, shape, plan->d_max);
    sdpa_spec_values_set_int(v, SDPA_SC_KEY_SCALES_DT, scales_dtype(&p->k_quant));
    sdpa_spec_values_set_int(v, SDPA_SC_VAL_SCALES_DT, scales_dtype(&p->v_quant));
    sdpa_spec_values_set_int(v, SDPA_SC_KEY_ZP_DT, zero_points_dtype(&p->k_quant));
    sdpa_spec_values_set_int(v, SDPA_SC_VAL_ZP_DT, zero_points_dtype(&p->v_quant));

    /* Decode batching, accumulation, training. */
    sdpa_spec_values_set_bool(v, SDPA_SC_Q1_GQA_BATCH, q1_gqa_batch(shape));
    sdpa_spec_values_set_bool(v, SDPA_SC_V_FROM_GLOBAL, plan->portable.v_from_global);
    sdpa_spec_values_set_bool(v, SDPA_SC_K_FROM_GLOBAL, plan->portable.k_from_global);
    sdpa_spec_values_set_bool(v, SDPA_SC_XE_KV_SURF_PER_BLOCK, plan->xe_kv_surf_per_block);
    sdpa_spec_values_set_bool(v, SDPA_SC_KQ_F16_ACC, p->kq_acc_dtype == SDPA_DTYPE_F16);
    sdpa_spec_values_set_bool(v, SDPA_SC_VS_F16_ACC, p->vs_acc_dtype == SDPA_DTYPE_F16);
    sdpa_spec_values_set_bool(v, SDPA_SC_IS_TRAINING, p->prop_kind == SDPA_FORWARD_TRAINING);

    /* Remainders. oneDNN sets its REMAINDER_Q only when D is full (the only
     * case it block-loads Q); the kernel needs the plain fact that the last
     * query tile is partial, so that is what we pass. */
    sdpa_spec_values_set_bool(v, SDPA_SC_REMAINDER_Q, rows % bq != 0 || p->varlen.enabled);
    /* Varlen: the sequences' own lengths, read by the kernel (its last
     * query tile is partial in general). */
    sdpa_spec_values_set_bool(v, SDPA_SC_VARLEN, p->varlen.enabled != 0);
    sdpa_spec_values_set_bool(v, SDPA_SC_PAGED, p->paged_kv.enabled != 0);

    /* Tiling. */
    sdpa_spec_values_set_int(v, SDPA_SC_UNROLL_M_KQ, c->unroll_m_kq);
    sdpa_spec_values_set_int(v, SDPA_SC_UNROLL_N_KQ, c->unroll_n_kq);
    sdpa_spec_values_set_int(v, SDPA_SC_UNROLL_M_VS, c->unroll_m_vs);
    sdpa_spec_values_set_int(v, SDPA_SC_UNROLL_N_VS, c->unroll_n_vs);
    sdpa_spec_values_set_int(v, SDPA_SC_WG_M_KQ, c->wg_m_kq);
    sdpa_spec_values_set_int(v, SDPA_SC_WG_N_KQ, c->wg_n_kq);
    sdpa_spec_values_set_int(v, SDPA_SC_WG_M_VS, c->wg_m_vs);

    /* Quantized K/V. */
    sdpa_spec_values_set_int(v, SDPA_SC_KEY_SCALES, p->k_quant.scales);
    sdpa_spec_values_set_int(v, SDPA_SC_VAL_SCALES, p->v_quant.scales);
    sdpa_spec_values_set_int(v, SDPA_SC_KEY_ZERO_POINTS, p->k_quant.zero_points);
    sdpa_spec_values_set_int(v, SDPA_SC_VAL_ZERO_POINTS, p->v_quant.zero_points);
    sdpa_spec_values_set_int(v, SDPA_SC_KEY_GROUP_SIZE, quant_group_size(&p->k_quant));
    sdpa_spec_values_set_int(v, SDPA_SC_VAL_GROUP_SIZE, quant_group_size(&p->v_quant));

    /* The dropout keep mask. */
    sdpa_spec_values_set_bool(v, SDPA_SC_DROPOUT_OUTPUT_MASK,
                              p->dropout.enabled && p->dropout.with_mask_output);

    /* Split-KV decode: the launch writes f32 partial states. */
    const int split = plan->kind == SDPA_FWD_KIND_DECODE && plan->num_splits > 1;
    sdpa_spec_values_set_bool(v, SDPA_SC_DECODE_SPLIT, split);
    /* Row blocks of the decode kernel; 0: one block of every row. */
    const int blocked = plan->kind == SDPA_FWD_KIND_DECODE && plan->decode_row_blocks > 1;
    sdpa_spec_values_set_int(v, SDPA_SC_DECODE_ROWS, blocked ? (int)plan->decode_rows : 0);
    if (split)
        sdpa_spec_values_set_int(v, SDPA_SC_DST_DT, SDPA_DTYPE_F32);
}

/* Query rows the CPU device runs in narrow tiles, with key tiles of at
 * most SDPA_FWD_CPU_NARROW_KEYS: in sub-group 8 (SDPA_FWD_CPU_NARROW_SG)
 * when K is staged, in the table's sub-group when it is read from global
 * memory. */
#define SDPA_FWD_CPU_NARROW_ROWS 4
#define SDPA_FWD_CPU_K_GLOBAL_ROWS 8
#define SDPA_FWD_CPU_NARROW_SG 8u
#define SDPA_FWD_CPU_NARROW_KEYS 16

/*
 * The portable forward's configuration. The sub-group of S = K^T Q runs
 * along query rows, and the CPU device runs a sub-group as one vector: a
 * decode step with GQA (Sq = 1, Hq / Hkv rows, 4 for Llama-3) in sub-group
 * 16 computes 16 lanes of S for 4 rows. With at most 4 rows the CPU device
 * narrows the table row to 16-key tiles (the K and V tiles stay in the L1
 * cache, where 128 keys took 64 KiB each) and:
 *   - when D is full, K's rows contiguous and S accumulates in f32, reads K
 *     where it lies with lanes along the head dimension (K_FROM_GLOBAL:
 *     every lane busy, no f32 staging of K), in the table's sub-group 16,
 *     which halves the instructions of O += V P against sub-group 8; this
 *     serves up to 8 rows (Hq8 Hkv1 decode too);
 *   - otherwise, for at most 4 rows, takes the sub-group-8 variant and
 *     query tiles of 8: half the wasted lanes of S, in 256-bit vectors (5-8
 *     rows were slower that way).
 * An environment override is left alone. Not for 4-bit K or V (measured
 * with staged K: slower; not measured with K from global memory);
 * doc/decode.md.
 */
static int is_nibble(sdpa_dtype_t dt)
{
    return dt == SDPA_DTYPE_S4 || dt == SDPA_DTYPE_U4;
}

static sdpa_status_t portable_config(sdpa_fwd_plan_t *plan, const sdpa_problem_desc_t *p,
                                     const sdpa_shape_t *shape, const sdpa_device_info_t *device)
{
    sdpa_config_query_t query;
    sdpa_fwd_config_query_for(p, shape, device, &query);
    sdpa_kernel_target_t target = {device, plan->subgroup_size, plan->d_max,
                                   sdpa_shape_widest_head(shape)};
    sdpa_status_t status =
            sdpa_fwd_config_choose(&query, is_quantized(p), &target, &plan->config, &plan->source);
    const int64_t rows = q1_gqa_batch(shape) ? shape->kv_group_size : shape->q_len;
    if (status != SDPA_SUCCESS || plan->source.from_env ||
        device->device_class != SDPA_DEVICE_CLASS_CPU || rows > SDPA_FWD_CPU_K_GLOBAL_ROWS ||
        is_nibble(p->k.dtype) || is_nibble(p->v.dtype))
        return status;
    /* The kernel needs whole head-dim chunks of contiguous rows to read K
     * or V from global memory; for K also f32 accumulation (the emulated f16
     * one is not there) and Q by rows in the place of Q^T (bq <= D_MAX). */
    const int d_full = shape->head_size == plan->d_max && shape->head_size_v == plan->d_max;
    const int k_global = d_full && p->k.strides[3] == 1 && p->kq_acc_dtype != SDPA_DTYPE_F16 &&
                         (int64_t)plan->subgroup_size <= plan->d_max;
    const uint32_t sg = k_global ? plan->subgroup_size : SDPA_FWD_CPU_NARROW_SG;
    if (!k_global &&
        (rows > SDPA_FWD_CPU_NARROW_ROWS || plan->subgroup_size <= SDPA_FWD_CPU_NARROW_SG ||
         !sdpa_device_supports_subgroup(device, SDPA_FWD_CPU_NARROW_SG)))
        return status;
    sdpa_fwd_config_t narrow = plan->config;
    narrow.unroll_n_kq = narrow.unroll_n_vs = (int)sg;
    if (narrow.unroll_m_kq > SDPA_FWD_CPU_NARROW_KEYS)
        narrow.unroll_m_kq = SDPA_FWD_CPU_NARROW_KEYS;
    target.subgroup_size = sg;
    if (plan->config.wg_n_kq != 1 || plan->config.unroll_n_kq != plan->config.unroll_n_vs ||
        (k_global && narrow.unroll_m_kq % SDPA_FWD_KQ_GLOBAL_KEYS != 0) ||
        sdpa_fwd_config_check(&narrow, &target, plan->source.text) != SDPA_SUCCESS) {
        sdpa_error_clear(); /* the row as chosen stays */
        return SDPA_SUCCESS;
    }
    plan->config = narrow;
    plan->subgroup_size = sg;
    sdpa_fwd_portable_options_t *o = &plan->portable;
    o->k_from_global = k_global;
    /* O += V P reads V where it lies: its f32 staging cost as much as the
     * product (doc/decode.md). */
    o->v_from_global = d_full && p->v.strides[3] == 1;
    if (o->k_from_global || o->v_from_global) /* the variant with their code */
        snprintf(plan->variant, sizeof(plan->variant), "%s%s", SDPA_FWD_SOURCE,
                 SDPA_FWD_GLOBAL_KV_FIELD);
    size_t used = strlen(plan->source.text);
    snprintf(plan->source.text + used, sizeof(plan->source.text) - used, ", rows<=%d sg%u%s%s",
             k_global ? SDPA_FWD_CPU_K_GLOBAL_ROWS : SDPA_FWD_CPU_NARROW_ROWS, sg,
             o->k_from_global ? " K global" : "", o->v_from_global ? " V global" : "");
    return SDPA_SUCCESS;
}

/* The config string's note on where the split count came from. */
static const char *num_splits_note(const sdpa_problem_desc_t *p)
{
    return p->num_splits ? " (num_splits)" : "";
}

/* K, Q, V, O and mask strides in argument order. */
static void set_strides(sdpa_fwd_plan_t *plan, const sdpa_problem_desc_t *p)
{
    const sdpa_tensor_desc_t *tensors[4] = {&p->k, &p->q, &p->v, &p->dst};
    int64_t *s = plan->strides;
    for (int t = 0; t < 4; t++)
        for (int axis = 0; axis < 4; axis++)
            *s++ = tensors[t]->strides[axis];
    for (int axis = 0; axis < 4; axis++)
        *s++ = p->mask_kind == SDPA_MASK_BUFFER && p->mask.dims[axis] > 1 ? p->mask.strides[axis]
                                                                          : 0;
}

/* 1 if some buffer the kernel addresses spans 4 GiB or more. */
static int needs_large_buffers(const sdpa_problem_desc_t *p, const sdpa_shape_t *shape)
{
    const uint64_t limit = (uint64_t)1 << 32;
    const sdpa_tensor_desc_t *tensors[5] = {&p->q, &p->k, &p->v, &p->dst, &p->mask};
    for (int i = 0; i < 5; i++)
        if (sdpa_tensor_span_bytes(tensors[i]) >= limit)
            return 1;
    const int64_t scores[4] = {shape->batch, shape->q_heads, shape->q_len, shape->k_len};
    if (sdpa_size_bytes(sdpa_size_product(scores, 3), 32) >= limit) /* log-sum-exp workspace */
        return 1;
    if (p->dropout.enabled && sdpa_size_product(scores, 4) >= limit) /* keep mask */
        return 1;
    /* Scales and zero points: [B, Hkv, Sk, D / group] at most 4 bytes each. */
    const int64_t kv[4] = {shape->batch, shape->kv_heads, shape->k_len,
                           sdpa_shape_widest_head(shape)};
    return is_quantized(p) && sdpa_size_bytes(sdpa_size_product(kv, 4), 32) >= limit;
}

/*
 * The forward's kernels as a list of implementations, in the order they are
 * offered the problem (oneDNN's way): the fast path, else the decode kernel,
 * else the portable one, which serves every problem that reaches it. Each
 * candidate:
 *   choose    accepts (*accepted = 1: kernel name, variant, sub-group,
 *             configuration, source text) or declines it, or fails (a bad
 *             override, a configuration the device cannot launch);
 *   geometry  sets local_size, group_count and slm_bytes (and the decode
 *             kernel's split scratch and merge plan);
 *   describe  writes the config string.
 */
typedef struct fwd_context {
    const sdpa_problem_desc_t *problem;
    const sdpa_shape_t *shape;
    const sdpa_device_info_t *device;
    int decode_chosen;   /* sdpa_decode_chosen */
    int decode_fallback; /* sdpa_decode_chosen: where the portable kernel refuses */
    sdpa_xe_target_t xe; /* the fast path's, where it serves */
} fwd_context_t;

typedef struct fwd_candidate {
    sdpa_fwd_kind_t kind;
    sdpa_status_t (*choose)(fwd_context_t *ctx, sdpa_fwd_plan_t *plan, int *accepted);
    sdpa_status_t (*geometry)(const fwd_context_t *ctx, sdpa_fwd_plan_t *plan);
    void (*describe)(const fwd_context_t *ctx, sdpa_fwd_plan_t *plan);
} fwd_candidate_t;

/* The work-group grid of the tiled kernels (kernel_abi.h): query tiles,
 * heads, batch; and the tile's queries and keys, BQ and BK. */
static sdpa_status_t tile_grid(const fwd_context_t *ctx, sdpa_fwd_plan_t *plan, int64_t *bq_out,
                               int64_t *bk_out)
{
    const sdpa_shape_t *shape = ctx->shape;
    const sdpa_fwd_config_t *c = &plan->config;
    const int64_t bq = (int64_t)c->unroll_n_kq * c->wg_n_kq;
    *bq_out = bq;
    *bk_out = (int64_t)c->unroll_m_kq * c->wg_m_kq;
    const int q1 = q1_gqa_batch(shape);
    const int64_t rows = q1 ? shape->kv_group_size : shape->q_len;
    int64_t counts[3] = {(rows + bq - 1) / bq, q1 ? shape->kv_heads : shape->q_heads, shape->batch};
    plan->local_size[0] = plan->subgroup_size;
    plan->local_size[1] = (uint32_t)(c->wg_m_kq * c->wg_n_kq);
    plan->local_size[2] = 1;
    sdpa_status_t status = sdpa_plan_check_group_count(counts, ctx->device, "forward");
    if (status != SDPA_SUCCESS)
        return status;
    for (int i = 0; i < 3; i++)
        plan->group_count[i] = (uint32_t)counts[i];
    return SDPA_SUCCESS;
}

/* The tiled kernels' "cfg=..., (source)" config strings. */
static void describe_tiled(sdpa_fwd_plan_t *plan, const char *kernel)
{
    char cfg[96];
    snprintf(plan->config_string, sizeof(plan->config_string), "fwd %s sg%" PRIu32 " cfg=%s (%s)",
             kernel, plan->subgroup_size, sdpa_fwd_config_format(&plan->config, cfg, sizeof(cfg)),
             plan->source.text);
}

/* The fast path: where sdpa_fwd_xe_serves the problem and
 * sdpa_xe_config_choose finds it a configuration. */
static sdpa_status_t xe_choose(fwd_context_t *ctx, sdpa_fwd_plan_t *plan, int *accepted)
{
    if (!sdpa_fwd_xe_serves(ctx->problem, ctx->shape, ctx->device, &ctx->xe, NULL))
        return SDPA_SUCCESS;
    sdpa_status_t status =
            sdpa_xe_config_choose(&sdpa_fwd_xe_direction, ctx->problem, ctx->shape, ctx->device,
                                  &ctx->xe, &plan->config, &plan->source, accepted);
    if (status != SDPA_SUCCESS || !*accepted)
        return status;
    plan->kernel_name = SDPA_XE_FWD_KERNEL;
    plan->subgroup_size = ctx->xe.subgroup_size;
    plan->d_max = 0;
    const char *variant = sdpa_fwd_xe_variant(&plan->config, &ctx->xe);
    if (!variant) /* sdpa_fwd_xe_config_check has found it */
        return sdpa_fail(SDPA_ERROR_INVALID_CONFIG, "%s: no SPIR-V variant", plan->source.text);
    snprintf(plan->variant, sizeof(plan->variant), "%s", variant);
    plan->xe_kv_surf_per_block = sdpa_fwd_xe_kv_surf_per_block(ctx->problem, ctx->shape, &ctx->xe);
    return SDPA_SUCCESS;
}

static sdpa_status_t xe_geometry(const fwd_context_t *ctx, sdpa_fwd_plan_t *plan)
{
    int64_t bq, bk;
    sdpa_status_t status = tile_grid(ctx, plan, &bq, &bk);
    if (status == SDPA_SUCCESS)
        plan->slm_bytes = (uint32_t)SDPA_XE_FWD_SLM_BYTES(
                ctx->shape->head_size, bq, bk, (int64_t)plan->config.wg_m_kq,
                (int64_t)plan->subgroup_size, ctx->xe.convert_kv);
    return status;
}

static void xe_describe(const fwd_context_t *ctx, sdpa_fwd_plan_t *plan)
{
    (void)ctx;
    char kernel[80];
    snprintf(kernel, sizeof(kernel), "xe %s", plan->variant);
    describe_tiled(plan, kernel);
}

/* The decode kernel: where sdpa_decode_chosen. Its tile (keys per tile,
 * one sub-group) is what the constants the shared tile copies read
 * (WG_M_KQ, WG_N_KQ) must say. */
static sdpa_status_t decode_choose(fwd_context_t *ctx, sdpa_fwd_plan_t *plan, int *accepted)
{
    if (!ctx->decode_chosen)
        return SDPA_SUCCESS;
    const uint32_t sg = plan->subgroup_size;
    plan->kernel_name = SDPA_DECODE_KERNEL;
    plan->d_max = 0;
    snprintf(plan->variant, sizeof(plan->variant), "%s", SDPA_DECODE_SOURCE);
    plan->config = (sdpa_fwd_config_t){SDPA_DECODE_KEYS((int)sg), 1, 1, 1, 1, 1, 1, 1};
    plan->num_splits = sdpa_decode_num_splits(ctx->problem, ctx->shape, ctx->device, sg);
    sdpa_decode_row_block(ctx->shape, ctx->device, sg, &plan->decode_rows,
                          &plan->decode_row_blocks);
    snprintf(plan->source.text, sizeof(plan->source.text), "decode");
    *accepted = 1;
    return SDPA_SUCCESS;
}

/* One sub-group per (split, K/V head and row block, batch) and, with
 * splits, the merge's launch. */
static sdpa_status_t decode_geometry(const fwd_context_t *ctx, sdpa_fwd_plan_t *plan)
{
    const sdpa_problem_desc_t *p = ctx->problem;
    const sdpa_shape_t *shape = ctx->shape;
    const uint32_t sg = plan->subgroup_size;
    const int64_t rows = plan->decode_rows;
    int64_t counts[3] = {plan->num_splits, shape->kv_heads * plan->decode_row_blocks, shape->batch};
    sdpa_status_t status = sdpa_plan_check_group_count(counts, ctx->device, "decode");
    if (status != SDPA_SUCCESS)
        return status;
    for (int i = 0; i < 3; i++)
        plan->group_count[i] = (uint32_t)counts[i];
    plan->local_size[0] = sg;
    plan->local_size[1] = plan->local_size[2] = 1;
    plan->slm_bytes = (uint32_t)SDPA_DECODE_SLM_BYTES(rows, shape->head_size, shape->head_size_v,
                                                      (int64_t)sg);
    status = sdpa_decode_scratch_plan(shape, plan->num_splits, &plan->split_scratch_bytes,
                                      &plan->split_lse_offset);
    if (status != SDPA_SUCCESS || plan->num_splits <= 1)
        return status;
    sdpa_merge_desc_t desc, merge;
    sdpa_decode_merge_desc(p, shape, plan->num_splits, &desc);
    if ((status = sdpa_merge_check(&desc, &merge)) != SDPA_SUCCESS)
        return status;
    status = sdpa_merge_plan_make(&merge, ctx->device, &plan->merge);
    /* The splits leave the sink out; the merge counts it once, as one
     * more state (O = 0, LSE = sink). */
    if (status == SDPA_SUCCESS)
        sdpa_spec_values_set_bool(&plan->merge.constants, SDPA_SC_WITH_SINKS, p->sinks != 0);
    return status;
}

static void decode_describe(const fwd_context_t *ctx, sdpa_fwd_plan_t *plan)
{
    char blocks[48] = "";
    if (plan->decode_row_blocks > 1)
        snprintf(blocks, sizeof(blocks), " rows=%" PRIu32 "x%" PRIu32, plan->decode_row_blocks,
                 plan->decode_rows);
    snprintf(plan->config_string, sizeof(plan->config_string),
             "fwd decode sg%" PRIu32 " keys=%d splits=%" PRIu32 "%s%s", plan->subgroup_size,
             plan->config.unroll_m_kq, plan->num_splits, num_splits_note(ctx->problem), blocks);
}

/* The portable kernel: every problem that reaches it. */
static sdpa_status_t portable_choose(fwd_context_t *ctx, sdpa_fwd_plan_t *plan, int *accepted)
{
    plan->kernel_name = SDPA_FWD_KERNEL;
    snprintf(plan->variant, sizeof(plan->variant), "%s", SDPA_FWD_SOURCE);
    sdpa_status_t status = portable_config(plan, ctx->problem, ctx->shape, ctx->device);
    *accepted = status == SDPA_SUCCESS;
    return status;
}

static sdpa_status_t portable_geometry(const fwd_context_t *ctx, sdpa_fwd_plan_t *plan)
{
    int64_t bq, bk;
    sdpa_status_t status = tile_grid(ctx, plan, &bq, &bk);
    if (status == SDPA_SUCCESS)
        plan->slm_bytes = (uint32_t)SDPA_FWD_SLM_BYTES((int64_t)plan->d_max, bq, bk,
                                                       (int64_t)plan->config.wg_m_kq);
    return status;
}

static void portable_describe(const fwd_context_t *ctx, sdpa_fwd_plan_t *plan)
{
    (void)ctx;
    char kernel[16];
    snprintf(kernel, sizeof(kernel), "d%d", plan->d_max);
    describe_tiled(plan, kernel);
}

static const fwd_candidate_t fwd_candidates[] = {
        {SDPA_FWD_KIND_XE, xe_choose, xe_geometry, xe_describe},
        {SDPA_FWD_KIND_DECODE, decode_choose, decode_geometry, decode_describe},
        {SDPA_FWD_KIND_PORTABLE, portable_choose, portable_geometry, portable_describe},
};
#define FWD_CANDIDATE_COUNT (sizeof(fwd_candidates) / sizeof(fwd_candidates[0]))

static const fwd_candidate_t *candidate_of(sdpa_fwd_kind_t kind)
{
    for (size_t i = 0; i < FWD_CANDIDATE_COUNT; i++)
        if (fwd_candidates[i].kind == kind)
            return &fwd_candidates[i];
    return NULL;
}

sdpa_status_t sdpa_fwd_plan_make(const sdpa_problem_desc_t *problem, const sdpa_shape_t *shape,
                                 const sdpa_device_info_t *device, sdpa_fwd_plan_t *out)
{
    if (problem->prop_kind != SDPA_FORWARD_INFERENCE && problem->prop_kind != SDPA_FORWARD_TRAINING)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "prop_kind = %d: the forward plan serves FORWARD_INFERENCE and "
                         "FORWARD_TRAINING only",
                         (int)problem->prop_kind);

    sdpa_fwd_plan_t plan;
    memset(&plan, 0, sizeof(plan));

    sdpa_status_t status = sdpa_plan_variant(shape, device, sdpa_head_size_max(), "forward",
                                             &plan.subgroup_size, &plan.d_max);
    if (status != SDPA_SUCCESS)
        return status;
    if (uses_f16_accumulation(problem) && !device->has_fp16)
        return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                         "kq_acc_dtype/vs_acc_dtype = f16 but device \"%s\" has no fp16 "
                         "arithmetic",
                         device->name);

    fwd_context_t ctx = {problem, shape, device, 0, 0, {SDPA_DEVICE_CLASS_UNKNOWN_GPU, 0, 0, 0, 0}};
    /* SDPA_ZE_DECODE is checked for every forward problem, as
     * SDPA_ZE_KERNELS is for every context. */
    status = sdpa_decode_chosen(problem, shape, device, plan.subgroup_size, &ctx.decode_chosen,
                                &ctx.decode_fallback);
    if (status != SDPA_SUCCESS)
        return status;

    /* The first candidate that accepts the problem plans it (the portable
     * one does, or refuses it: then the decode kernel takes what it
     * serves, MLA decode on a GPU). */
    const fwd_candidate_t *impl = NULL;
    const sdpa_fwd_plan_t before = plan;
    for (size_t i = 0; i < FWD_CANDIDATE_COUNT && !impl; i++) {
        int accepted = 0;
        status = fwd_candidates[i].choose(&ctx, &plan, &accepted);
        if (status == SDPA_ERROR_UNSUPPORTED && fwd_candidates[i].kind == SDPA_FWD_KIND_PORTABLE &&
            ctx.decode_fallback) {
            sdpa_error_clear();
            plan = before;
            ctx.decode_chosen = 1;
            status = decode_choose(&ctx, &plan, &accepted);
            impl = candidate_of(SDPA_FWD_KIND_DECODE);
            break;
        }
        if (status != SDPA_SUCCESS)
            return status;
        if (accepted)
            impl = &fwd_candidates[i];
    }
    plan.kind = impl->kind;
    if ((status = impl->geometry(&ctx, &plan)) != SDPA_SUCCESS)
        return status;

    /* Scalar arguments (dims are below 2^31: sdpa_problem_check). */
    plan.head_size = (int32_t)shape->head_size;
    plan.head_size_v = (int32_t)shape->head_size_v;
    plan.k_len = (int32_t)shape->k_len;
    plan.q_len = (int32_t)shape->q_len;
    set_strides(&plan, problem);

    set_constants(&plan, problem, shape);
    static const char *const flags[2][2] = {
            {"", SDPA_ZE_FLAG_LARGE_GRF},
            {SDPA_ZE_FLAG_LARGE_BUFFERS, SDPA_ZE_FLAG_LARGE_BUFFERS " " SDPA_ZE_FLAG_LARGE_GRF}};
    const int large_grf = plan.kind == SDPA_FWD_KIND_XE && ctx.xe.large_grf;
    plan.build_flags = flags[needs_large_buffers(problem, shape)][large_grf];

    impl->describe(&ctx, &plan);
    *out = plan;
    return SDPA_SUCCESS;
}
