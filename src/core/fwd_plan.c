/* fwd_plan.c - variant, configuration, constants and geometry of a forward launch. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "fwd_plan.h"
#include "fwd_xe_plan.h"
#include "kernel_abi_xe.h"
#include "tensor_layout.h"

/* The kernels receive sdpa.h's enum values as their codes. */
_Static_assert(SDPA_DT_UNDEF == SDPA_DTYPE_UNDEF && SDPA_DT_F32 == SDPA_DTYPE_F32 &&
                       SDPA_DT_F16 == SDPA_DTYPE_F16 && SDPA_DT_BF16 == SDPA_DTYPE_BF16 &&
                       SDPA_DT_S8 == SDPA_DTYPE_S8 && SDPA_DT_U8 == SDPA_DTYPE_U8 &&
                       SDPA_DT_S4 == SDPA_DTYPE_S4 && SDPA_DT_U4 == SDPA_DTYPE_U4 &&
                       SDPA_DT_S32 == SDPA_DTYPE_S32,
               "kernel_abi.h dtype codes differ from sdpa_dtype_t");
_Static_assert(SDPA_MASK_KIND_NONE == SDPA_MASK_NONE && SDPA_MASK_KIND_BUFFER == SDPA_MASK_BUFFER &&
                       SDPA_MASK_KIND_TOP_LEFT == SDPA_MASK_CAUSAL_TOP_LEFT &&
                       SDPA_MASK_KIND_BOTTOM_RIGHT == SDPA_MASK_CAUSAL_BOTTOM_RIGHT,
               "kernel_abi.h mask codes differ from sdpa_mask_kind_t");
_Static_assert(SDPA_QUANT_KIND_NONE == SDPA_QUANT_NONE &&
                       SDPA_QUANT_KIND_PER_TENSOR == SDPA_QUANT_PER_TENSOR &&
                       SDPA_QUANT_KIND_PER_GROUP == SDPA_QUANT_PER_GROUP,
               "kernel_abi.h quantization codes differ from sdpa_quant_kind_t");

/* Thin Q: oneDNN's threshold for its second-token (decode) tables. */
#define THIN_Q_MAX_QUERIES 16

static int is_quantized(const sdpa_problem_desc_t *p)
{
    return p->k_quant.scales != SDPA_QUANT_NONE || p->k_quant.zero_points != SDPA_QUANT_NONE ||
           p->v_quant.scales != SDPA_QUANT_NONE || p->v_quant.zero_points != SDPA_QUANT_NONE;
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
    unsigned props = 0;
    if (queries <= THIN_Q_MAX_QUERIES)
        props |= SDPA_CONFIG_THIN_Q;
    if (is_quantized(problem))
        props |= SDPA_CONFIG_QUANTIZED;
    if (device->integrated)
        props |= SDPA_CONFIG_INTEGRATED;
    if (SDPA_KERNELS_USE_FMA)
        props |= SDPA_CONFIG_FMA;
    if (problem->q.dtype == SDPA_DTYPE_F32)
        props |= SDPA_CONFIG_F32;
    if (uses_f16_accumulation(problem))
        props |= SDPA_CONFIG_F16_ACC;
    *out = (sdpa_config_query_t){device->device_class, shape->head_size, shape->k_len, props};
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
    int mask_buffer = p->mask_kind == SDPA_MASK_BUFFER;
    int64_t bq = (int64_t)c->unroll_n_kq * c->wg_n_kq;
    int64_t bd = (int64_t)c->unroll_m_vs * c->wg_m_vs;
    int64_t rows = q1_gqa_batch(shape) ? shape->kv_group_size : shape->q_len;
    int d_full = shape->head_size == plan->d_max;

    sdpa_spec_values_init(v);

    /* Data types. */
    sdpa_spec_values_set_int(v, SDPA_SC_QRY_DT, p->q.dtype);
    sdpa_spec_values_set_int(v, SDPA_SC_KEY_DT, p->k.dtype);
    sdpa_spec_values_set_int(v, SDPA_SC_VAL_DT, p->v.dtype);
    sdpa_spec_values_set_int(v, SDPA_SC_DST_DT, p->dst.dtype);
    sdpa_spec_values_set_int(v, SDPA_SC_MSK_DT, mask_buffer ? p->mask.dtype : SDPA_DTYPE_UNDEF);
    sdpa_spec_values_set_int(v, SDPA_SC_SCALE_DT,
                             p->scale_kind == SDPA_SCALE_DEVICE ? p->scale_dtype : SDPA_DTYPE_F32);
    sdpa_spec_values_set_int(v, SDPA_SC_KEY_SCALES_DT, scales_dtype(&p->k_quant));
    sdpa_spec_values_set_int(v, SDPA_SC_VAL_SCALES_DT, scales_dtype(&p->v_quant));
    sdpa_spec_values_set_int(v, SDPA_SC_KEY_ZP_DT, zero_points_dtype(&p->k_quant));
    sdpa_spec_values_set_int(v, SDPA_SC_VAL_ZP_DT, zero_points_dtype(&p->v_quant));

    /* Shape facts. */
    sdpa_spec_values_set_int(v, SDPA_SC_KV_GROUP_SIZE, (int32_t)shape->kv_group_size);
    sdpa_spec_values_set_bool(v, SDPA_SC_TRANSPOSE_K, p->k.strides[2] == 1 && p->k.strides[3] != 1);
    sdpa_spec_values_set_bool(v, SDPA_SC_D_FULL, d_full);
    sdpa_spec_values_set_int(v, SDPA_SC_Q_ALIGN, (int32_t)plan->q_align);
    sdpa_spec_values_set_int(v, SDPA_SC_K_ALIGN, (int32_t)plan->k_align);
    sdpa_spec_values_set_int(v, SDPA_SC_V_ALIGN, (int32_t)plan->v_align);
    sdpa_spec_values_set_int(v, SDPA_SC_A_ALIGN, (int32_t)plan->dst_align);
    sdpa_spec_values_set_bool(v, SDPA_SC_Q1_GQA_BATCH, q1_gqa_batch(shape));

    /* Scale, mask, softmax, accumulation, training. */
    sdpa_spec_values_set_bool(v, SDPA_SC_WITH_ATTN_SCALE, p->scale_kind != SDPA_SCALE_NONE);
    sdpa_spec_values_set_bool(v, SDPA_SC_WITH_HOST_SCALE, p->scale_kind == SDPA_SCALE_HOST);
    sdpa_spec_values_set_bool(v, SDPA_SC_INVERT_SCALE,
                              p->scale_kind != SDPA_SCALE_NONE && p->invert_scale);
    sdpa_spec_values_set_int(v, SDPA_SC_MASK_KIND, p->mask_kind);
    sdpa_spec_values_set_bool(v, SDPA_SC_BROADCAST_MASK_Q, mask_buffer && p->mask.dims[2] == 1);
    sdpa_spec_values_set_bool(v, SDPA_SC_SOFTMAX_INF_AS_ZERO,
                              p->softmax_kind == SDPA_SOFTMAX_INF_AS_ZERO);
    sdpa_spec_values_set_bool(v, SDPA_SC_KQ_F16_ACC, p->kq_acc_dtype == SDPA_DTYPE_F16);
    sdpa_spec_values_set_bool(v, SDPA_SC_VS_F16_ACC, p->vs_acc_dtype == SDPA_DTYPE_F16);
    sdpa_spec_values_set_bool(v, SDPA_SC_IS_TRAINING, p->prop_kind == SDPA_FORWARD_TRAINING);

    /* Remainders and block I/O. oneDNN sets its REMAINDER_Q only when D is
     * full (the only case it block-loads Q); the kernel needs the plain fact
     * that the last query tile is partial, so that is what we pass. Block
     * loads need whole rows: D equal to the bucket, contiguous rows aligned
     * to 4 bytes, and for O a tile exactly D tall. */
    sdpa_spec_values_set_bool(v, SDPA_SC_REMAINDER_Q, rows % bq != 0);
    sdpa_spec_values_set_bool(v, SDPA_SC_BLOCK_Q,
                              d_full && p->q.strides[3] == 1 && plan->q_align >= 4);
    sdpa_spec_values_set_bool(v, SDPA_SC_BLOCK_A,
                              d_full && p->dst.strides[3] == 1 && plan->dst_align >= 4 &&
                                      bd == shape->head_size);

    /* Tiling. */
    sdpa_spec_values_set_int(v, SDPA_SC_UNROLL_M_KQ, c->unroll_m_kq);
    sdpa_spec_values_set_int(v, SDPA_SC_UNROLL_N_KQ, c->unroll_n_kq);
    sdpa_spec_values_set_int(v, SDPA_SC_UNROLL_M_VS, c->unroll_m_vs);
    sdpa_spec_values_set_int(v, SDPA_SC_UNROLL_N_VS, c->unroll_n_vs);
    sdpa_spec_values_set_int(v, SDPA_SC_WG_M_KQ, c->wg_m_kq);
    sdpa_spec_values_set_int(v, SDPA_SC_WG_N_KQ, c->wg_n_kq);
    sdpa_spec_values_set_int(v, SDPA_SC_WG_M_VS, c->wg_m_vs);
    sdpa_spec_values_set_int(v, SDPA_SC_WG_N_VS, c->wg_n_vs);

    /* Quantized K/V. */
    sdpa_spec_values_set_int(v, SDPA_SC_KEY_SCALES, p->k_quant.scales);
    sdpa_spec_values_set_int(v, SDPA_SC_VAL_SCALES, p->v_quant.scales);
    sdpa_spec_values_set_int(v, SDPA_SC_KEY_ZERO_POINTS, p->k_quant.zero_points);
    sdpa_spec_values_set_int(v, SDPA_SC_VAL_ZERO_POINTS, p->v_quant.zero_points);
    sdpa_spec_values_set_int(v, SDPA_SC_KEY_GROUP_SIZE, quant_group_size(&p->k_quant));
    sdpa_spec_values_set_int(v, SDPA_SC_VAL_GROUP_SIZE, quant_group_size(&p->v_quant));

    /* Dropout. */
    int dropout = p->dropout.enabled != 0;
    sdpa_spec_values_set_bool(v, SDPA_SC_WITH_DROPOUT, dropout);
    sdpa_spec_values_set_bool(v, SDPA_SC_DROPOUT_HOST_SCALARS, dropout && p->dropout.host_scalars);
    sdpa_spec_values_set_bool(v, SDPA_SC_DROPOUT_OFFSET, dropout && p->dropout.with_offset);
    sdpa_spec_values_set_bool(v, SDPA_SC_DROPOUT_OUTPUT_MASK,
                              dropout && p->dropout.with_mask_output);
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

/* Saturating product of non-negative values. */
static uint64_t product(uint64_t a, uint64_t b)
{
    uint64_t r;
    return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

/* 1 if some buffer the kernel addresses spans 4 GiB or more. */
static int needs_large_buffers(const sdpa_problem_desc_t *p, const sdpa_shape_t *shape)
{
    const uint64_t limit = (uint64_t)1 << 32;
    const sdpa_tensor_desc_t *tensors[5] = {&p->q, &p->k, &p->v, &p->dst, &p->mask};
    for (int i = 0; i < 5; i++)
        if (sdpa_tensor_span_bytes(tensors[i]) >= limit)
            return 1;
    uint64_t bhs = product(product((uint64_t)shape->batch, (uint64_t)shape->q_heads),
                           (uint64_t)shape->q_len);
    if (product(bhs, 4) >= limit) /* log-sum-exp workspace */
        return 1;
    if (p->dropout.enabled && product(bhs, (uint64_t)shape->k_len) >= limit) /* keep mask */
        return 1;
    /* Scales and zero points: [B, Hkv, Sk, D / group] at most 4 bytes each. */
    uint64_t per_token = product(product((uint64_t)shape->batch, (uint64_t)shape->kv_heads),
                                 (uint64_t)shape->k_len);
    return is_quantized(p) && product(product(per_token, (uint64_t)shape->head_size), 4) >= limit;
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

    plan.subgroup_size = sdpa_device_subgroup_size(device);
    if (plan.subgroup_size == 0)
        return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                         "device \"%s\" supports none of the sub-group sizes 16, 8 and 32 the "
                         "kernels are built for",
                         device->name);
    plan.d_max = sdpa_head_size_bucket(shape->head_size);
    if (plan.d_max == 0)
        return sdpa_fail(SDPA_ERROR_UNSUPPORTED, "head size %" PRId64 ": the kernels serve 1..512",
                         shape->head_size);
    if (uses_f16_accumulation(problem) && !device->has_fp16)
        return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                         "kq_acc_dtype/vs_acc_dtype = f16 but device \"%s\" has no fp16 "
                         "arithmetic",
                         device->name);

    /* The fast path first; the portable kernel serves what it does not. */
    sdpa_xe_target_t xe = {SDPA_DEVICE_CLASS_UNKNOWN_GPU, 0, 0, 0, 0};
    sdpa_status_t status;
    if (sdpa_fwd_xe_serves(problem, shape, device, &xe, NULL)) {
        status = sdpa_fwd_xe_config_choose(problem, shape, device, &xe, &plan.config,
                                           &plan.source, &plan.xe);
        if (status != SDPA_SUCCESS)
            return status;
    }
    if (plan.xe) {
        plan.kernel_name = SDPA_XE_FWD_KERNEL;
        plan.subgroup_size = xe.subgroup_size;
        plan.d_max = 0;
        sdpa_fwd_xe_variant(&plan.config, &xe, plan.variant, sizeof(plan.variant));
    } else {
        plan.kernel_name = SDPA_FWD_KERNEL;
        snprintf(plan.variant, sizeof(plan.variant), "%s", SDPA_FWD_SOURCE);
        sdpa_config_query_t query;
        sdpa_fwd_config_query_for(problem, shape, device, &query);
        sdpa_kernel_target_t target = {device, plan.subgroup_size, plan.d_max, shape->head_size};
        status = sdpa_fwd_config_choose(&query, is_quantized(problem), &target, &plan.config,
                                        &plan.source);
        if (status != SDPA_SUCCESS)
            return status;
    }
    const sdpa_fwd_config_t *c = &plan.config;
    int64_t bq = (int64_t)c->unroll_n_kq * c->wg_n_kq;
    int64_t bk = (int64_t)c->unroll_m_kq * c->wg_m_kq;

    /* Geometry (kernel_abi.h). */
    int q1 = q1_gqa_batch(shape);
    int64_t rows = q1 ? shape->kv_group_size : shape->q_len;
    int64_t counts[3] = {(rows + bq - 1) / bq, q1 ? shape->kv_heads : shape->q_heads, shape->batch};
    plan.local_size[0] = plan.subgroup_size;
    plan.local_size[1] = (uint32_t)(c->wg_m_kq * c->wg_n_kq);
    plan.local_size[2] = 1;
    for (int i = 0; i < 3; i++) {
        uint32_t max = device->max_group_count_xyz[i] ? device->max_group_count_xyz[i] : UINT32_MAX;
        if (counts[i] > (int64_t)max)
            return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                             "group count %c = %" PRId64 " exceeds the device's %" PRIu32, "xyz"[i],
                             counts[i], max);
        plan.group_count[i] = (uint32_t)counts[i];
    }
    plan.slm_bytes =
            plan.xe ? (uint32_t)SDPA_XE_FWD_SLM_BYTES(shape->head_size, bq, bk, (int64_t)c->wg_m_kq,
                                                      (int64_t)plan.subgroup_size, xe.convert_kv)
                    : (uint32_t)SDPA_FWD_SLM_BYTES((int64_t)plan.d_max, bq, bk, (int64_t)c->wg_m_kq);

    /* Scalar arguments (dims are below 2^31: sdpa_problem_check). */
    plan.head_size = (int32_t)shape->head_size;
    plan.k_len = (int32_t)shape->k_len;
    plan.q_len = (int32_t)shape->q_len;
    plan.remainder_k = shape->k_len % bk != 0;
    set_strides(&plan, problem);

    plan.q_align = (uint32_t)sdpa_tensor_row_alignment(&problem->q);
    plan.k_align = (uint32_t)sdpa_tensor_row_alignment(&problem->k);
    plan.v_align = (uint32_t)sdpa_tensor_row_alignment(&problem->v);
    plan.dst_align = (uint32_t)sdpa_tensor_row_alignment(&problem->dst);
    set_constants(&plan, problem, shape);
    static const char *const flags[2][2] = {
            {"", SDPA_ZE_FLAG_LARGE_GRF},
            {SDPA_ZE_FLAG_LARGE_BUFFERS, SDPA_ZE_FLAG_LARGE_BUFFERS " " SDPA_ZE_FLAG_LARGE_GRF}};
    plan.build_flags = flags[needs_large_buffers(problem, shape)][plan.xe && xe.large_grf];

    char cfg[96];
    if (plan.xe)
        snprintf(plan.config_string, sizeof(plan.config_string),
                 "fwd xe %s sg%" PRIu32 " cfg=%s (%s)", plan.variant, plan.subgroup_size,
                 sdpa_fwd_config_format(c, cfg, sizeof(cfg)), plan.source.text);
    else
        snprintf(plan.config_string, sizeof(plan.config_string),
                 "fwd d%d sg%" PRIu32 " cfg=%s (%s)", plan.d_max, plan.subgroup_size,
                 sdpa_fwd_config_format(c, cfg, sizeof(cfg)), plan.source.text);
    *out = plan;
    return SDPA_SUCCESS;
}
