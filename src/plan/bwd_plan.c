/* bwd_plan.c - variant, configuration, constants, scratch and geometry of a
 * backward execution. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bwd_plan.h"
#include "xe_bwd_plan.h"
#include "error.h"
#include "fwd_plan.h"
#include "kernel_abi_bwd.h"
#include "kernel_abi_xe.h"

#include "size_math.h"

void sdpa_bwd_config_query_for(const sdpa_problem_desc_t *problem, const sdpa_shape_t *shape,
                               const sdpa_device_info_t *device, sdpa_config_query_t *out)
{
    unsigned props = sdpa_plan_config_props(problem, device, shape->q_len);
    *out = (sdpa_config_query_t){device->device_class, sdpa_shape_widest_head(shape), shape->k_len,
                                 props};
}

/* 1 when every tensor the main and dQ kernels copy (K, Q, V, dO, and
 * where dQ, dK and dV go: the strides buffer, kernel_abi_bwd.h) has
 * head-dim stride 1, the usual layout: BWD_UNIT_D_STRIDES then drops the
 * kernels' copies for other layouts from the build (issue 14). */
static int unit_d_strides(const int64_t *strides)
{
    static const int tensors[] = {SDPA_BWD_STRIDE_K,        SDPA_BWD_STRIDE_Q,  SDPA_BWD_STRIDE_V,
                                  SDPA_BWD_STRIDE_DIFF_DST, SDPA_BWD_STRIDE_DQ, SDPA_BWD_STRIDE_DK,
                                  SDPA_BWD_STRIDE_DV};
    for (size_t i = 0; i < sizeof(tensors) / sizeof(tensors[0]); i++)
        if (strides[tensors[i] + 3] != 1)
            return 0;
    return 1;
}

static void set_constants(sdpa_bwd_plan_t *plan, const sdpa_problem_desc_t *p,
                          const sdpa_shape_t *shape)
{
    sdpa_spec_values_t *v = &plan->constants;
    const sdpa_bwd_config_t *c = &plan->config;

    /* Data types, shape, scale, mask, softmax, dropout: plan_common.h. */
    sdpa_plan_common_constants(v, p, shape, plan->d_max);

    sdpa_spec_values_set_int(v, SDPA_SC_UNROLL_M_BCBR, c->unroll_m_bcbr);
    sdpa_spec_values_set_int(v, SDPA_SC_UNROLL_N_BCBR, c->unroll_n_bcbr);
    sdpa_spec_values_set_int(v, SDPA_SC_UNROLL_M_DBC, c->unroll_m_dbc);
    sdpa_spec_values_set_int(v, SDPA_SC_UNROLL_N_DBC, c->unroll_n_dbc);
    sdpa_spec_values_set_int(v, SDPA_SC_UNROLL_M_DBR, c->unroll_m_dbr);
    sdpa_spec_values_set_int(v, SDPA_SC_UNROLL_N_DBR, c->unroll_n_dbr);
    sdpa_spec_values_set_int(v, SDPA_SC_WG_M_BCBR, c->wg_m_bcbr);
    sdpa_spec_values_set_int(v, SDPA_SC_WG_N_BCBR, c->wg_n_bcbr);
    sdpa_spec_values_set_int(v, SDPA_SC_WG_M_DBC, c->wg_m_dbc);
    sdpa_spec_values_set_int(v, SDPA_SC_WG_N_DBC, c->wg_n_dbc);
    sdpa_spec_values_set_int(v, SDPA_SC_WG_M_DBR, c->wg_m_dbr);
    sdpa_spec_values_set_int(v, SDPA_SC_WG_N_DBR, c->wg_n_dbr);

    int with_ds = p->ds.dtype != SDPA_DTYPE_UNDEF;
    sdpa_spec_values_set_bool(v, SDPA_SC_WITH_DS, with_ds);
    sdpa_spec_values_set_int(v, SDPA_SC_DS_DT, with_ds ? p->ds.dtype : SDPA_DTYPE_UNDEF);
    sdpa_spec_values_set_bool(v, SDPA_SC_DKV_ATOMIC, plan->scratch.dkv_atomic);
    sdpa_spec_values_set_bool(v, SDPA_SC_DETERMINISTIC,
                              plan->scratch.mode == SDPA_BWD_MODE_DETERMINISTIC);
    sdpa_spec_values_set_bool(v, SDPA_SC_VARLEN, p->varlen.enabled != 0);
    sdpa_spec_values_set_bool(v, SDPA_SC_DQ_PARTIALS, plan->scratch.dq_slices > 0);
    sdpa_spec_values_set_bool(v, SDPA_SC_BWD_UNIT_D_STRIDES, unit_d_strides(plan->strides));
}

static void copy4(int64_t *out, const int64_t in[4])
{
    memcpy(out, in, 4 * sizeof(int64_t));
}

/* Strides of a dense [B, H, S, D] f32 buffer (a scratch region, whose size
 * sdpa_bwd_scratch_plan has bounded, so nothing saturates). */
static void dense4(int64_t *out, int64_t heads, int64_t seq, int64_t d)
{
    const int64_t dims[3] = {heads, seq, d};
    out[0] = sdpa_size_to_int64(sdpa_size_product(dims, 3));
    out[1] = sdpa_size_to_int64(sdpa_size_product(dims + 1, 2));
    out[2] = d;
    out[3] = 1;
}

/* The strides buffer: the inputs' strides, then where dQ, dK and dV go. */
static void set_strides(sdpa_bwd_plan_t *plan, const sdpa_problem_desc_t *p,
                        const sdpa_shape_t *grid_shape)
{
    const sdpa_shape_t packed = sdpa_bwd_storage_shape(p, grid_shape);
    const sdpa_shape_t *shape = &packed;
    int64_t *s = plan->strides;
    int64_t d = shape->head_size, dv = shape->head_size_v;
    copy4(s + SDPA_BWD_STRIDE_K, p->k.strides);
    copy4(s + SDPA_BWD_STRIDE_Q, p->q.strides);
    copy4(s + SDPA_BWD_STRIDE_V, p->v.strides);
    copy4(s + SDPA_BWD_STRIDE_DST, p->dst.strides);
    copy4(s + SDPA_BWD_STRIDE_DIFF_DST, p->diff_dst.strides);

    /* Partial dQ slices [B, Hq, slices, Sq, D]: slice kb of head h is "head"
     * h * slices + kb (kernel_abi_bwd.h). */
    if (plan->scratch.dq_slices > 0)
        dense4(s + SDPA_BWD_STRIDE_DQ, shape->q_heads * plan->scratch.dq_slices, shape->q_len, d);
    else if (plan->dq_target == SDPA_BWD_TARGET_SCRATCH)
        dense4(s + SDPA_BWD_STRIDE_DQ, shape->q_heads, shape->q_len, d);
    else
        copy4(s + SDPA_BWD_STRIDE_DQ, p->diff_q.strides);

    if (plan->scratch.dkv_partials) {
        dense4(s + SDPA_BWD_STRIDE_DK, shape->q_heads, shape->k_len, d);
        dense4(s + SDPA_BWD_STRIDE_DV, shape->q_heads, shape->k_len, dv);
    } else if (plan->dkv_target == SDPA_BWD_TARGET_SCRATCH) {
        dense4(s + SDPA_BWD_STRIDE_DK, shape->kv_heads, shape->k_len, d);
        dense4(s + SDPA_BWD_STRIDE_DV, shape->kv_heads, shape->k_len, dv);
    } else {
        copy4(s + SDPA_BWD_STRIDE_DK, p->diff_k.strides);
        copy4(s + SDPA_BWD_STRIDE_DV, p->diff_v.strides);
    }

    for (int axis = 0; axis < 4; axis++) {
        plan->mask_strides[axis] = p->mask_kind == SDPA_MASK_BUFFER && p->mask.dims[axis] > 1
                                           ? p->mask.strides[axis]
                                           : 0;
        plan->ds_strides[axis] = p->ds.dtype != SDPA_DTYPE_UNDEF ? p->ds.strides[axis] : 0;
    }
}

static uint32_t div_up(int64_t a, int64_t b)
{
    return (uint32_t)((a + b - 1) / b);
}

/* A postprocess from an f32 scratch region into a gradient. */
static void add_post(sdpa_bwd_plan_t *plan, sdpa_bwd_buffer_t dst, sdpa_scratch_region_t src,
                     const sdpa_tensor_desc_t *gradient, int64_t src_heads, int32_t slices)
{
    sdpa_bwd_post_t *post = &plan->posts[plan->num_posts++];
    int64_t heads = gradient->dims[1], seq = gradient->dims[2], d = gradient->dims[3];
    post->dst = dst;
    post->src = src;
    sdpa_bwd_post_args_t *v = &post->args;
    v->D = (int32_t)d;
    v->S = (int32_t)seq;
    v->SLICES = slices;
    /* Partials [B, H * slices, S, D], a gradient head's slices in a row: K/V
     * head h sums query heads h*G .. h*G + G-1 (dK/dV), query head h its
     * key blocks' dQ (partial dQ); so the head stride spans `slices`
     * slices and the slices are one source head apart. */
    int64_t src_strides[4];
    dense4(src_strides, src_heads, seq, d);
    const int64_t slice_dims[3] = {slices, seq, d};
    src_strides[1] = sdpa_size_to_int64(sdpa_size_product(slice_dims, 3));
    v->SLICE_STRIDE = sdpa_size_to_int64(sdpa_size_product(slice_dims + 1, 2));
    v->SRC_S0 = src_strides[0];
    v->SRC_S1 = src_strides[1];
    v->SRC_S2 = src_strides[2];
    v->SRC_S3 = src_strides[3];
    v->DST_S0 = gradient->strides[0];
    v->DST_S1 = gradient->strides[1];
    v->DST_S2 = gradient->strides[2];
    v->DST_S3 = gradient->strides[3];
    post->group_count[0] = div_up(seq, SDPA_BWD_POST_ROWS);
    post->group_count[1] = (uint32_t)heads;
    post->group_count[2] = (uint32_t)gradient->dims[0];
}

/* With varlen, a postprocess runs one group row per sequence over its
 * longest length (the kernel reads the rows from CU_SEQLENS, bwd.c). */
static void set_post_varlen(sdpa_bwd_post_t *post, int64_t batch, int64_t max_len)
{
    post->group_count[0] = div_up(max_len, SDPA_BWD_POST_ROWS);
    post->group_count[2] = (uint32_t)batch;
}

static void set_posts(sdpa_bwd_plan_t *plan, const sdpa_problem_desc_t *p,
                      const sdpa_shape_t *shape)
{
    const sdpa_bwd_scratch_t *s = &plan->scratch;
    if (s->dq_slices > 0)
        add_post(plan, SDPA_BWD_BUFFER_DIFF_Q, s->dq, &p->diff_q, shape->q_heads * s->dq_slices,
                 (int32_t)s->dq_slices);
    else if (s->dq_f32_scratch)
        add_post(plan, SDPA_BWD_BUFFER_DIFF_Q, s->dq, &p->diff_q, shape->q_heads, 1);
    if (s->dkv_partials) {
        int32_t g = (int32_t)shape->kv_group_size;
        add_post(plan, SDPA_BWD_BUFFER_DIFF_K, s->dk, &p->diff_k, shape->q_heads, g);
        add_post(plan, SDPA_BWD_BUFFER_DIFF_V, s->dv, &p->diff_v, shape->q_heads, g);
    } else if (s->dkv_f32_scratch) {
        add_post(plan, SDPA_BWD_BUFFER_DIFF_K, s->dk, &p->diff_k, shape->kv_heads, 1);
        add_post(plan, SDPA_BWD_BUFFER_DIFF_V, s->dv, &p->diff_v, shape->kv_heads, 1);
    }
    if (p->varlen.enabled)
        for (uint32_t i = 0; i < plan->num_posts; i++)
            set_post_varlen(&plan->posts[i], shape->batch,
                            plan->posts[i].dst == SDPA_BWD_BUFFER_DIFF_Q ? shape->q_len
                                                                         : shape->k_len);
}

static sdpa_status_t set_geometry(sdpa_bwd_plan_t *plan, const sdpa_shape_t *shape,
                                  const sdpa_device_info_t *device)
{
    const sdpa_bwd_config_t *c = &plan->config;
    int64_t bc = (int64_t)c->unroll_m_bcbr * c->wg_m_bcbr;
    int64_t br = (int64_t)c->unroll_n_bcbr * c->wg_n_bcbr;
    uint32_t sg = plan->subgroup_size;

    plan->pre_local[0] = sg;
    plan->pre_local[1] = SDPA_BWD_PRE_SUBGROUPS;
    plan->pre_local[2] = 1;
    plan->pre_groups[0] = div_up(shape->q_len, SDPA_BWD_PRE_ROWS);
    plan->pre_groups[1] = (uint32_t)shape->q_heads;
    plan->pre_groups[2] = (uint32_t)shape->batch;

    plan->local_size[0] = sg;
    plan->local_size[1] = (uint32_t)(c->wg_m_bcbr * c->wg_n_bcbr);
    plan->local_size[2] = 1;
    plan->main_groups[0] = div_up(shape->k_len, bc);
    plan->main_groups[1] = (uint32_t)shape->q_heads;
    plan->main_groups[2] = (uint32_t)shape->batch;
    plan->dq_groups[0] = div_up(shape->q_len, SDPA_BWD_DQ_QUERIES(bc, br));
    plan->dq_groups[1] = (uint32_t)shape->q_heads;
    plan->dq_groups[2] = (uint32_t)shape->batch;
    /* The tiles' rows hold the larger head size (kernel_abi_bwd.h). */
    const int64_t widest = sdpa_shape_widest_head(shape);
    plan->slm_bytes = (uint32_t)SDPA_BWD_SLM_BYTES(widest, bc, br);
    plan->dq_slm_bytes = (uint32_t)SDPA_BWD_DQ_SLM_BYTES(widest, bc, br);
    if (plan->kind == SDPA_BWD_KIND_XE) {
        /* kernel_abi_xe.h: DSPLIT x KGROUPS sub-groups; the dQ pass owns 16
         * queries per key group. */
        const int64_t bq = (int64_t)SDPA_XE_BWD_QUERIES * c->wg_m_bcbr;
        plan->local_size[1] = (uint32_t)(c->wg_m_dbc * c->wg_n_dbc);
        plan->dq_groups[0] = div_up(shape->q_len, bq);
        /* K^T for dQ^T unless dQ has its own pass. */
        plan->slm_bytes =
                (uint32_t)SDPA_XE_BWD_SLM_BYTES(shape->head_size, bc, !plan->dq_pass);
        plan->dq_slm_bytes =
                (uint32_t)SDPA_XE_BWD_DQ_SLM_BYTES(shape->head_size, (int64_t)c->unroll_m_bcbr, bq);
    }

    plan->post_local[0] = sg;
    plan->post_local[1] = SDPA_BWD_POST_SUBGROUPS;
    plan->post_local[2] = 1;

    const uint32_t *groups[3] = {plan->pre_groups, plan->main_groups, plan->dq_groups};
    for (int g = 0; g < 3; g++) {
        const int64_t counts[3] = {groups[g][0], groups[g][1], groups[g][2]};
        sdpa_status_t status = sdpa_plan_check_group_count(counts, device, "backward");
        if (status != SDPA_SUCCESS)
            return status;
    }
    return SDPA_SUCCESS;
}

int64_t sdpa_bwd_dq_slices_for(const sdpa_problem_desc_t *problem, const sdpa_shape_t *shape,
                               const sdpa_device_info_t *device, int64_t bc)
{
    if (problem->varlen.enabled || bc <= 0)
        return 0;
    if (sdpa_bwd_mode_of(problem) == SDPA_BWD_MODE_ATOMIC &&
        device->device_class != SDPA_DEVICE_CLASS_CPU)
        return 0;
    const int64_t slices = (shape->k_len + bc - 1) / bc;
    const int64_t dims[5] = {shape->batch, shape->q_heads, slices, shape->q_len,
                             shape->head_size};
    if (slices > SDPA_BWD_DQ_PARTIALS_MAX_SLICES ||
        sdpa_size_bytes(sdpa_size_product(dims, 5), 32) > SDPA_BWD_DQ_PARTIALS_MAX_BYTES)
        return 0;
    return slices;
}

sdpa_status_t sdpa_bwd_plan_make(const sdpa_problem_desc_t *problem, const sdpa_shape_t *shape,
                                 const sdpa_device_info_t *device, sdpa_bwd_plan_t *out)
{
    if (problem->prop_kind != SDPA_BACKWARD)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "prop_kind = %d: the backward plan serves BACKWARD only",
                         (int)problem->prop_kind);
    sdpa_bwd_plan_t plan;
    memset(&plan, 0, sizeof(plan));
    sdpa_status_t status = sdpa_plan_variant(shape, device, SDPA_BWD_MAX_HEAD_SIZE, "backward",
                                             &plan.subgroup_size, &plan.d_max);
    if (status != SDPA_SUCCESS)
        return status;

    plan.native_f32_add = sdpa_device_native_f32_add(device);

    /* The fast path first; the portable kernels serve what it does not. */
    sdpa_xe_target_t xe = {SDPA_DEVICE_CLASS_UNKNOWN_GPU, 0, 0, 0, 0};
    int fast = 0;
    if (sdpa_bwd_xe_serves(problem, shape, device, &xe, NULL)) {
        status = sdpa_xe_config_choose(&sdpa_bwd_xe_direction, problem, shape, device, &xe,
                                       &plan.config, &plan.source, &fast);
        if (status != SDPA_SUCCESS)
            return status;
    }
    plan.kind = fast ? SDPA_BWD_KIND_XE : SDPA_BWD_KIND_PORTABLE;
    if (plan.kind == SDPA_BWD_KIND_XE) {
        plan.subgroup_size = xe.subgroup_size;
        const char *variant = sdpa_bwd_xe_variant(&plan.config, &xe, device);
        if (!variant) /* sdpa_bwd_xe_config_check has found it */
            return sdpa_fail(SDPA_ERROR_INVALID_CONFIG, "%s: no SPIR-V variant", plan.source.text);
        snprintf(plan.main_variant, sizeof(plan.main_variant), "%s", variant);
        snprintf(plan.dq_variant, sizeof(plan.dq_variant), "%s", plan.main_variant);
        plan.main_kernel = SDPA_XE_BWD_KERNEL;
        plan.dq_kernel = SDPA_XE_BWD_DQ_KERNEL;
    } else {
        snprintf(plan.main_variant, sizeof(plan.main_variant), "%s%s", SDPA_BWD_MAIN_SOURCE,
                 plan.native_f32_add ? SDPA_BWD_FADD_FIELD : "");
        snprintf(plan.dq_variant, sizeof(plan.dq_variant), "%s", SDPA_BWD_DQ_SOURCE);
        plan.main_kernel = SDPA_BWD_KERNEL;
        plan.dq_kernel = SDPA_BWD_DQ_KERNEL;
        sdpa_config_query_t query;
        sdpa_bwd_config_query_for(problem, shape, device, &query);
        sdpa_kernel_target_t target = {device, plan.subgroup_size, plan.d_max,
                                       sdpa_shape_widest_head(shape)};
        status = sdpa_bwd_config_choose(&query, &target, &plan.config, &plan.source);
        if (status != SDPA_SUCCESS)
            return status;
    }

    /* Partial dQ slices on the portable kernels when they fit (bwd_plan.h),
     * and the device can allocate them; else today's paths. */
    const int64_t bc = (int64_t)plan.config.unroll_m_bcbr * plan.config.wg_m_bcbr;
    const int64_t dq_slices =
            plan.kind == SDPA_BWD_KIND_XE ? 0 : sdpa_bwd_dq_slices_for(problem, shape, device, bc);
    const sdpa_bwd_mode_t mode = sdpa_bwd_mode_of(problem);
    status = sdpa_bwd_scratch_plan(problem, shape, mode, dq_slices, &plan.scratch);
    if (status == SDPA_SUCCESS && dq_slices > 0 && device->max_alloc_bytes &&
        plan.scratch.total_bytes > device->max_alloc_bytes)
        status = sdpa_bwd_scratch_plan(problem, shape, mode, 0, &plan.scratch);
    if (status != SDPA_SUCCESS)
        return status;
    const sdpa_bwd_scratch_t *s = &plan.scratch;
    /* The scratch is one allocation (the context's, or the caller's): refuse
     * here rather than fail every execution. */
    if (device->max_alloc_bytes && s->total_bytes > device->max_alloc_bytes)
        return sdpa_fail(
                SDPA_ERROR_UNSUPPORTED,
                "backward scratch of %zu bytes (SDPA_QUERY_SCRATCH_BYTES, %s mode, B = "
                "%" PRId64 ", Hq = %" PRId64 ", Hkv = %" PRId64 ", Sq = %" PRId64 ", Sk = %" PRId64
                ", D = %" PRId64 ") exceeds the device's largest allocation, %" PRIu64
                " bytes (maxMemAllocSize)",
                s->total_bytes, s->mode == SDPA_BWD_MODE_DETERMINISTIC ? "deterministic" : "atomic",
                shape->batch, shape->q_heads, shape->kv_heads, shape->q_len, shape->k_len,
                shape->head_size, device->max_alloc_bytes);
    if (s->dq_slices > 0 || s->mode == SDPA_BWD_MODE_ATOMIC)
        plan.dq_target = s->dq_f32_scratch ? SDPA_BWD_TARGET_SCRATCH : SDPA_BWD_TARGET_OUTPUT;
    plan.dq_pass = s->mode == SDPA_BWD_MODE_DETERMINISTIC && s->dq_slices == 0;
    plan.dkv_target = (s->dkv_f32_scratch || s->dkv_partials) ? SDPA_BWD_TARGET_SCRATCH
                                                              : SDPA_BWD_TARGET_OUTPUT;

    status = set_geometry(&plan, shape, device);
    if (status != SDPA_SUCCESS)
        return status;
    plan.head_size = (int32_t)shape->head_size;
    plan.head_size_v = (int32_t)shape->head_size_v;
    plan.k_len = (int32_t)shape->k_len;
    plan.q_len = (int32_t)shape->q_len;
    set_strides(&plan, problem, shape);
    set_posts(&plan, problem, shape);
    set_constants(&plan, problem, shape);
    plan.build_flags = "";
    plan.main_build_flags =
            plan.kind == SDPA_BWD_KIND_XE && xe.large_grf ? SDPA_ZE_FLAG_LARGE_GRF : "";

    char cfg[128];
    const char *mode_name = s->mode == SDPA_BWD_MODE_DETERMINISTIC ? "deterministic" : "atomic";
    const char *dq_name = s->dq_slices > 0 ? " dq-slices" : "";
    sdpa_bwd_config_format(&plan.config, cfg, sizeof(cfg));
    if (plan.kind == SDPA_BWD_KIND_XE)
        snprintf(plan.config_string, sizeof(plan.config_string),
                 "bwd xe %s sg%" PRIu32 " %s%s cfg=%s (%s)", plan.main_variant,
                 plan.subgroup_size, mode_name, dq_name, cfg, plan.source.text);
    else
        snprintf(plan.config_string, sizeof(plan.config_string),
                 "bwd d%d sg%" PRIu32 " %s%s%s cfg=%s (%s)", plan.d_max, plan.subgroup_size,
                 mode_name, dq_name, plan.native_f32_add ? " fadd" : "", cfg, plan.source.text);
    *out = plan;
    return SDPA_SUCCESS;
}
