/* bwd.c - the backward pipeline on one command list: strides copy, zero
 * fills, preprocess (D_i), main kernel, deterministic dQ pass, postprocess
 * conversions, with barriers between dependent steps (kernel_abi_bwd.h). */
#include <string.h>

#include "error.h"
#include "kernel_abi.h"
#include "kernel_abi_bwd.h"
#include "ze.h"
#include "ze_result.h"

/* A kernel of the portable variant (preprocess, postprocess). */
static sdpa_status_t kernel(sdpa_primitive_t *prim, const char *name, ze_kernel_handle_t *out)
{
    const sdpa_bwd_plan_t *plan = &prim->bwd;
    return ze_kernel_from_cache(prim->ctx, SDPA_BWD_SOURCE, SDPA_BWD_VARIANT_D_MAX,
                                plan->subgroup_size, &plan->constants, plan->build_flags, name,
                                out);
}

/* The main or deterministic-dQ kernel: the portable variant's or the fast
 * path's (bwd_xe.c checks the latter's argument count). */
static sdpa_status_t main_kernel(sdpa_primitive_t *prim, const char *name,
                                 ze_kernel_handle_t *out)
{
    const sdpa_bwd_plan_t *plan = &prim->bwd;
    if (!plan->xe)
        return kernel(prim, name, out);
    sdpa_status_t status =
            ze_kernel_from_cache(prim->ctx, plan->main_variant, 0, plan->subgroup_size,
                                 &plan->constants, plan->main_build_flags, name, out);
    return status == SDPA_SUCCESS ? ze_bwd_xe_check_kernel(*out, plan->main_variant, name) : status;
}

static sdpa_status_t set_int(ze_kernel_handle_t k, uint32_t index, int32_t value)
{
    return ze_set_arg(k, index, sizeof(value), &value);
}

static sdpa_status_t set_long(ze_kernel_handle_t k, uint32_t index, int64_t value)
{
    return ze_set_arg(k, index, sizeof(value), &value);
}

static sdpa_status_t set_group_size(ze_kernel_handle_t k, const uint32_t size[3])
{
    SDPA_ZE_TRY(zeKernelSetGroupSize(k, size[0], size[1], size[2]));
    return SDPA_SUCCESS;
}

/* The arguments of sdpa_bwd and sdpa_bwd_dq that never change. */
static sdpa_status_t set_fixed_main_args(ze_kernel_handle_t k, const sdpa_bwd_plan_t *plan,
                                         uint32_t slm_bytes)
{
    sdpa_status_t status;
    if ((status = set_group_size(k, plan->local_size)) ||
        (status = set_int(k, SDPA_BWD_ARG_D, plan->head_size)) ||
        (status = set_int(k, SDPA_BWD_ARG_SK, plan->k_len)) ||
        (status = set_int(k, SDPA_BWD_ARG_SQ, plan->q_len)) ||
        (status = ze_set_arg(k, SDPA_BWD_ARG_SLM, slm_bytes, NULL)))
        return status;
    for (uint32_t i = 0; i < 4; i++)
        if ((status = set_long(k, SDPA_BWD_ARG_MSK_S0 + i, plan->mask_strides[i])) ||
            (status = set_long(k, SDPA_BWD_ARG_DS_S0 + i, plan->ds_strides[i])))
            return status;
    return SDPA_SUCCESS;
}

sdpa_status_t ze_bwd_prepare(sdpa_primitive_t *prim)
{
    sdpa_bwd_plan_t *plan = &prim->bwd;
    sdpa_status_t status =
            sdpa_bwd_plan_make(&prim->problem, &prim->shape, &prim->ctx->device, plan);
    if (status != SDPA_SUCCESS)
        return status;
    int deterministic = plan->scratch.mode == SDPA_BWD_MODE_DETERMINISTIC;
    if ((status = kernel(prim, SDPA_BWD_PREPROCESS_KERNEL, &prim->bwd_pre)) ||
        (status = main_kernel(prim, plan->main_kernel, &prim->bwd_main)) ||
        (deterministic && (status = main_kernel(prim, plan->dq_kernel, &prim->bwd_dq))) ||
        (plan->num_posts && (status = kernel(prim, SDPA_BWD_POSTPROCESS_KERNEL, &prim->bwd_post))))
        return status;

    if ((status = set_group_size(prim->bwd_pre, plan->pre_local)) ||
        (status = set_int(prim->bwd_pre, SDPA_BWD_PRE_ARG_D, plan->head_size)) ||
        (status = set_int(prim->bwd_pre, SDPA_BWD_PRE_ARG_SQ, plan->q_len)) ||
        (status = set_fixed_main_args(prim->bwd_main, plan, plan->slm_bytes)) ||
        (prim->bwd_dq && (status = set_fixed_main_args(prim->bwd_dq, plan, plan->dq_slm_bytes))) ||
        (prim->bwd_post && (status = set_group_size(prim->bwd_post, plan->post_local))))
        return status;

    /* The strides buffer's source: host USM, so any device can copy from it. */
    ze_host_mem_alloc_desc_t host = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    void *strides = NULL;
    ze_result_t result =
            zeMemAllocHost(prim->ctx->ze_context, &host, sizeof(plan->strides), 64, &strides);
    if (result != ZE_RESULT_SUCCESS)
        return sdpa_ze_fail("zeMemAllocHost (backward strides)", result);
    memcpy(strides, plan->strides, sizeof(plan->strides));
    prim->bwd_strides_host = strides;
    return SDPA_SUCCESS;
}

void ze_bwd_release(sdpa_primitive_t *prim)
{
    ze_kernel_handle_t kernels[4] = {prim->bwd_post, prim->bwd_dq, prim->bwd_main, prim->bwd_pre};
    for (int i = 0; i < 4; i++)
        if (kernels[i])
            zeKernelDestroy(kernels[i]);
    if (prim->bwd_strides_host)
        zeMemFree(prim->ctx->ze_context, prim->bwd_strides_host);
}

/* Pointers to the buffers one execution uses. */
typedef struct bwd_buffers {
    char *scratch;
    void *d_i, *strides, *dq_sum, *dk_sum, *dv_sum;
} bwd_buffers_t;

static void *region(char *scratch, sdpa_scratch_region_t r)
{
    return r.bytes ? scratch + r.offset : NULL;
}

static void *gradient(const sdpa_exec_args_t *a, sdpa_bwd_buffer_t which)
{
    switch (which) {
    case SDPA_BWD_BUFFER_DIFF_Q:
        return a->diff_q;
    case SDPA_BWD_BUFFER_DIFF_K:
        return a->diff_k;
    case SDPA_BWD_BUFFER_DIFF_V:
        return a->diff_v;
    default:
        return NULL;
    }
}

static sdpa_status_t set_pointers(ze_kernel_handle_t k, const sdpa_primitive_t *prim,
                                  const sdpa_exec_args_t *a, const bwd_buffers_t *b, void *dq)
{
    const sdpa_problem_desc_t *p = &prim->problem;
    float scale = 1.0f, inv_scale = 1.0f;
    if (p->scale_kind == SDPA_SCALE_HOST) {
        scale = a->scale;
        inv_scale = 1.0f / a->scale;
    }
    /* Dropout: host scalars, or device pointers to one int64 seed, int64
     * offset and f32 p (kernel_abi_bwd.h); the offset is 0 without
     * with_offset, and the arguments a mode does not read are 0 / NULL. */
    const sdpa_dropout_desc_t *dr = &p->dropout;
    const int host_drop = dr->enabled && dr->host_scalars,
              dev_drop = dr->enabled && !dr->host_scalars;
    const int64_t seed = host_drop ? a->dropout_seed : 0;
    const int64_t offset = host_drop && dr->with_offset ? a->dropout_offset : 0;
    const float drop_p = host_drop ? a->dropout_p : 0.0f;
    sdpa_status_t status;
    if ((status = ze_set_ptr(k, SDPA_BWD_ARG_K, a->k)) ||
        (status = ze_set_ptr(k, SDPA_BWD_ARG_Q, a->q)) ||
        (status = ze_set_ptr(k, SDPA_BWD_ARG_V, a->v)) ||
        (status = ze_set_ptr(k, SDPA_BWD_ARG_WS, a->workspace)) ||
        (status = ze_set_ptr(k, SDPA_BWD_ARG_D_I, b->d_i)) ||
        (status = ze_set_ptr(k, SDPA_BWD_ARG_DA, a->diff_dst)) ||
        (status = ze_set_ptr(k, SDPA_BWD_ARG_DS, p->ds.dtype != SDPA_DTYPE_UNDEF ? a->ds : NULL)) ||
        (status = ze_set_ptr(k, SDPA_BWD_ARG_DK, b->dk_sum ? b->dk_sum : a->diff_k)) ||
        (status = ze_set_ptr(k, SDPA_BWD_ARG_DQ, dq)) ||
        (status = ze_set_ptr(k, SDPA_BWD_ARG_DV, b->dv_sum ? b->dv_sum : a->diff_v)) ||
        (status = ze_set_ptr(k, SDPA_BWD_ARG_SCALE_PTR,
                             p->scale_kind == SDPA_SCALE_DEVICE ? a->scale_ptr : NULL)) ||
        (status = ze_set_arg(k, SDPA_BWD_ARG_SCALE, sizeof(float), &scale)) ||
        (status = ze_set_arg(k, SDPA_BWD_ARG_INV_SCALE, sizeof(float), &inv_scale)) ||
        (status = ze_set_ptr(k, SDPA_BWD_ARG_MSK,
                             p->mask_kind == SDPA_MASK_BUFFER ? a->mask : NULL)) ||
        (status = ze_set_ptr(k, SDPA_BWD_ARG_STRIDES, b->strides)))
        return status;
    if ((status = set_long(k, SDPA_BWD_ARG_DROPOUT_SEED, seed)) ||
        (status = set_long(k, SDPA_BWD_ARG_DROPOUT_OFFSET, offset)) ||
        (status = ze_set_arg(k, SDPA_BWD_ARG_DROPOUT_P, sizeof(float), &drop_p)) ||
        (status = ze_set_ptr(k, SDPA_BWD_ARG_DROPOUT_SEED_PTR,
                             dev_drop ? a->dropout_seed_ptr : NULL)) ||
        (status = ze_set_ptr(k, SDPA_BWD_ARG_DROPOUT_OFFSET_PTR,
                             dev_drop && dr->with_offset ? a->dropout_offset_ptr : NULL)) ||
        (status = ze_set_ptr(k, SDPA_BWD_ARG_DROPOUT_P_PTR, dev_drop ? a->dropout_p_ptr : NULL)))
        return status;
    return SDPA_SUCCESS;
}

static sdpa_status_t launch(ze_command_list_handle_t list, ze_kernel_handle_t k,
                            const uint32_t groups[3], const char *name)
{
    ze_group_count_t count = {groups[0], groups[1], groups[2]};
    ze_result_t result = zeCommandListAppendLaunchKernel(list, k, &count, NULL, 0, NULL);
    if (result != ZE_RESULT_SUCCESS)
        return sdpa_fail(SDPA_ERROR_DEVICE, "zeCommandListAppendLaunchKernel (%s) failed: %s", name,
                         ze_result_name(result));
    return SDPA_SUCCESS;
}

static sdpa_status_t barrier(ze_command_list_handle_t list)
{
    SDPA_ZE_TRY(zeCommandListAppendBarrier(list, NULL, 0, NULL));
    return SDPA_SUCCESS;
}

/* The scratch: the caller's if given (and large enough), else the context's. */
static sdpa_status_t find_scratch(sdpa_primitive_t *prim, const sdpa_exec_args_t *a, char **out)
{
    size_t need = prim->bwd.scratch.total_bytes;
    if (a->scratch) {
        if (a->scratch_size < need)
            return sdpa_fail(SDPA_ERROR_INSUFFICIENT_SCRATCH,
                             "args->scratch_size = %zu: this backward needs %zu bytes "
                             "(SDPA_QUERY_SCRATCH_BYTES)",
                             a->scratch_size, need);
        if ((uintptr_t)a->scratch % SDPA_BWD_SCRATCH_ALIGNMENT != 0)
            return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                             "args->scratch = %p is not aligned to %d bytes", a->scratch,
                             SDPA_BWD_SCRATCH_ALIGNMENT);
        *out = a->scratch;
        return SDPA_SUCCESS;
    }
    void *scratch = NULL;
    sdpa_status_t status = sdpa_scratch_reserve(prim->ctx->scratch, need, &scratch);
    *out = scratch;
    return status;
}

sdpa_status_t ze_bwd_execute(sdpa_primitive_t *prim, const sdpa_exec_args_t *a,
                             ze_command_list_handle_t list)
{
    const sdpa_bwd_plan_t *plan = &prim->bwd;
    const sdpa_bwd_scratch_t *s = &plan->scratch;
    bwd_buffers_t b;
    memset(&b, 0, sizeof(b));
    sdpa_status_t status = find_scratch(prim, a, &b.scratch);
    if (status != SDPA_SUCCESS)
        return status;
    b.d_i = region(b.scratch, s->d_i);
    b.strides = region(b.scratch, s->strides);
    if (plan->dq_target == SDPA_BWD_TARGET_SCRATCH)
        b.dq_sum = region(b.scratch, s->dq);
    if (plan->dkv_target == SDPA_BWD_TARGET_SCRATCH) {
        b.dk_sum = region(b.scratch, s->dk);
        b.dv_sum = region(b.scratch, s->dv);
    }

    /* Everything waits for the caller's events. */
    if (a->num_wait_events)
        SDPA_ZE_TRY(zeCommandListAppendBarrier(list, NULL, a->num_wait_events, a->wait_events));

    /* Strides and zero fills: independent of each other. */
    SDPA_ZE_TRY(zeCommandListAppendMemoryCopy(list, b.strides, prim->bwd_strides_host,
                                              sizeof(plan->strides), NULL, 0, NULL));
    const uint8_t zero = 0;
    for (uint32_t i = 0; i < s->num_fills; i++) {
        const sdpa_zero_fill_t *f = &s->fills[i];
        char *base = f->buffer == SDPA_BWD_BUFFER_SCRATCH ? b.scratch : gradient(a, f->buffer);
        SDPA_ZE_TRY(zeCommandListAppendMemoryFill(list, base + f->offset, &zero, sizeof(zero),
                                                  f->bytes, NULL, 0, NULL));
    }
    if ((status = barrier(list)))
        return status;

    ze_kernel_handle_t pre = prim->bwd_pre;
    if ((status = ze_set_ptr(pre, SDPA_BWD_PRE_ARG_D_I, b.d_i)) ||
        (status = ze_set_ptr(pre, SDPA_BWD_PRE_ARG_A, a->dst)) ||
        (status = ze_set_ptr(pre, SDPA_BWD_PRE_ARG_DA, a->diff_dst)) ||
        (status = ze_set_ptr(pre, SDPA_BWD_PRE_ARG_STRIDES, b.strides)) ||
        (status = launch(list, pre, plan->pre_groups, "sdpa_bwd_preprocess")) ||
        (status = barrier(list)))
        return status;

    void *dq_main = plan->dq_target == SDPA_BWD_TARGET_SCRATCH ? b.dq_sum : a->diff_q;
    if ((status = set_pointers(prim->bwd_main, prim, a, &b, dq_main)) ||
        (status = launch(list, prim->bwd_main, plan->main_groups, "sdpa_bwd")))
        return status;

    if (prim->bwd_dq) {
        /* Reads only inputs and D_i: it may run beside the main kernel. */
        if ((status = set_pointers(prim->bwd_dq, prim, a, &b, a->diff_q)) ||
            (status = launch(list, prim->bwd_dq, plan->dq_groups, "sdpa_bwd_dq")))
            return status;
    }

    if (plan->num_posts && (status = barrier(list)))
        return status;
    for (uint32_t i = 0; i < plan->num_posts; i++) {
        const sdpa_bwd_post_t *post = &plan->posts[i];
        ze_kernel_handle_t k = prim->bwd_post;
        if ((status = ze_set_ptr(k, SDPA_BWD_POST_ARG_DST, gradient(a, post->dst))) ||
            (status = ze_set_ptr(k, SDPA_BWD_POST_ARG_SRC, region(b.scratch, post->src))) ||
            (status = set_int(k, SDPA_BWD_POST_ARG_D, post->head_size)) ||
            (status = set_int(k, SDPA_BWD_POST_ARG_S, post->seq_len)) ||
            (status = set_int(k, SDPA_BWD_POST_ARG_SLICES, post->slices)) ||
            (status = set_long(k, SDPA_BWD_POST_ARG_SLICE_STRIDE, post->slice_stride)))
            return status;
        for (uint32_t j = 0; j < 4; j++)
            if ((status = set_long(k, SDPA_BWD_POST_ARG_SRC_S0 + j, post->src_strides[j])) ||
                (status = set_long(k, SDPA_BWD_POST_ARG_DST_S0 + j, post->dst_strides[j])))
                return status;
        if ((status = launch(list, k, post->group_count, "sdpa_bwd_postprocess")))
            return status;
    }

    /* The caller's event: after everything above. */
    if (a->signal_event)
        SDPA_ZE_TRY(zeCommandListAppendBarrier(list, a->signal_event, 0, NULL));
    return SDPA_SUCCESS;
}
