/* bwd.c - the backward pipeline on one command list: strides copy, zero
 * fills, preprocess (D_i), main kernel, deterministic dQ pass (unless the
 * main kernel writes partial dQ slices), postprocess
 * conversions, with barriers between dependent steps (kernel_abi_bwd.h). */
#include <string.h>

#include "error.h"
#include "exec_scalars.h"
#include "kernel_abi.h"
#include "kernel_abi_bwd.h"
#include "ze.h"
#include "ze_result.h"

/* The preprocess or postprocess kernel from the portable pre/post module
 * (kernel_abi_bwd.h): the module cache passes each module only the constants
 * it declares, so that module is shared by every configuration of a dtype,
 * on the fast path too. */
static sdpa_status_t kernel(sdpa_primitive_t *prim, const char *name, const sdpa_arg_table_t *args,
                            ze_kernel_handle_t *out)
{
    const sdpa_bwd_plan_t *plan = &prim->bwd;
    return sdpa_ze_kernel_from_cache(prim->ctx, SDPA_BWD_PREPOST_SOURCE, SDPA_BWD_VARIANT_D_MAX,
                                     plan->subgroup_size, &plan->constants, plan->build_flags, name,
                                     args, out);
}

/* The main or deterministic-dQ kernel `name` from `variant`: the portable
 * main or dQ module, or the fast path's one module for both, which take the
 * same arguments (sdpa_bwd_args.def) and differ in their build flags. */
static sdpa_status_t main_kernel(sdpa_primitive_t *prim, const char *variant, const char *name,
                                 ze_kernel_handle_t *out)
{
    const sdpa_bwd_plan_t *plan = &prim->bwd;
    return sdpa_ze_kernel_from_cache(prim->ctx, variant, SDPA_BWD_VARIANT_D_MAX,
                                     plan->subgroup_size, &plan->constants, plan->main_build_flags,
                                     name, &sdpa_bwd_args_table, out);
}

static sdpa_status_t set_group_size(ze_kernel_handle_t k, const uint32_t size[3])
{
    SDPA_ZE_TRY(zeKernelSetGroupSize(k, size[0], size[1], size[2]));
    return SDPA_SUCCESS;
}

sdpa_status_t sdpa_ze_bwd_prepare(sdpa_primitive_t *prim)
{
    sdpa_bwd_plan_t *plan = &prim->bwd;
    sdpa_status_t status =
            sdpa_bwd_plan_make(&prim->problem, &prim->shape, &prim->ctx->device, plan);
    if (status != SDPA_SUCCESS)
        return status;
    if ((status = kernel(prim, SDPA_BWD_PREPROCESS_KERNEL, &sdpa_bwd_pre_args_table,
                         &prim->bwd_pre)) ||
        (status = main_kernel(prim, plan->main_variant, plan->main_kernel, &prim->bwd_main)) ||
        (plan->dq_pass &&
         (status = main_kernel(prim, plan->dq_variant, plan->dq_kernel, &prim->bwd_dq))) ||
        (plan->num_posts && (status = kernel(prim, SDPA_BWD_POSTPROCESS_KERNEL,
                                             &sdpa_bwd_post_args_table, &prim->bwd_post))) ||
        (prim->problem.sinks && (status = kernel(prim, SDPA_BWD_SINKS_KERNEL,
                                                 &sdpa_bwd_pre_args_table, &prim->bwd_sinks))))
        return status;
    const uint32_t sinks_local[3] = {plan->subgroup_size, 1, 1};
    if (prim->bwd_sinks && (status = set_group_size(prim->bwd_sinks, sinks_local)))
        return status;

    if ((status = set_group_size(prim->bwd_pre, plan->pre_local)) ||
        (status = set_group_size(prim->bwd_main, plan->local_size)) ||
        (prim->bwd_dq && (status = set_group_size(prim->bwd_dq, plan->local_size))) ||
        (prim->bwd_post && (status = set_group_size(prim->bwd_post, plan->post_local))))
        return status;

    /* The strides buffer's source: host USM, so any device can copy from it. */
    ze_host_mem_alloc_desc_t host = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    void *strides = NULL;
    ze_result_t result =
            zeMemAllocHost(prim->ctx->ze_context, &host, sizeof(plan->strides), 64, &strides);
    if (result != ZE_RESULT_SUCCESS)
        return sdpa_ze_failf(result, "zeMemAllocHost(backward strides, %zu bytes)",
                             sizeof(plan->strides));
    memcpy(strides, plan->strides, sizeof(plan->strides));
    prim->bwd_strides_host = strides;
    return SDPA_SUCCESS;
}

void sdpa_ze_bwd_release(sdpa_primitive_t *prim)
{
    ze_kernel_handle_t kernels[5] = {prim->bwd_sinks, prim->bwd_post, prim->bwd_dq, prim->bwd_main,
                                     prim->bwd_pre};
    for (int i = 0; i < 5; i++)
        if (kernels[i])
            zeKernelDestroy(kernels[i]);
    if (prim->bwd_strides_host)
        zeMemFree(prim->ctx->ze_context, prim->bwd_strides_host);
    prim->bwd_sinks = prim->bwd_post = prim->bwd_dq = prim->bwd_main = prim->bwd_pre = NULL;
    prim->bwd_strides_host = NULL;
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

/* The arguments of sdpa_bwd (dq: where it adds dQ, slm_bytes: its local
 * memory) or sdpa_bwd_dq (dq: diff_q) for one execution; what the problem
 * does not use is NULL or 0. */
static void main_args(const sdpa_primitive_t *prim, const sdpa_exec_args_t *a,
                      const bwd_buffers_t *b, void *dq, uint32_t slm_bytes, sdpa_bwd_args_t *v)
{
    const sdpa_problem_desc_t *p = &prim->problem;
    const sdpa_bwd_plan_t *plan = &prim->bwd;
    *v = (sdpa_bwd_args_t){
            .K = a->k,
            .Q = a->q,
            .V = a->v,
            .WS = a->workspace,
            .D_I = b->d_i,
            .DIFF_DST = a->diff_dst,
            .DS = p->ds.dtype != SDPA_DTYPE_UNDEF ? a->ds : NULL,
            .DK = b->dk_sum ? b->dk_sum : a->diff_k,
            .DQ = dq,
            .DV = b->dv_sum ? b->dv_sum : a->diff_v,
            .D = plan->head_size,
            .SK = plan->k_len,
            .SQ = plan->q_len,
            .MSK = p->mask_kind == SDPA_MASK_BUFFER ? a->mask : NULL,
            .STRIDES = b->strides,
            .MSK_S0 = plan->mask_strides[0],
            .MSK_S1 = plan->mask_strides[1],
            .MSK_S2 = plan->mask_strides[2],
            .MSK_S3 = plan->mask_strides[3],
            .DS_S0 = plan->ds_strides[0],
            .DS_S1 = plan->ds_strides[1],
            .DS_S2 = plan->ds_strides[2],
            .DS_S3 = plan->ds_strides[3],
            .CU_SEQLENS_Q = p->varlen.enabled ? a->cu_seqlens_q : NULL,
            .CU_SEQLENS_K = p->varlen.enabled ? a->cu_seqlens_k : NULL,
            .TOTAL_Q = (int32_t)p->q.dims[2],
            .TOTAL_K = (int32_t)p->k.dims[2],
            .SLM = slm_bytes,
    };
    sdpa_ze_exec_scalars_t s;
    sdpa_ze_exec_scalars(p, a, &s);
    SDPA_ZE_SET_EXEC_SCALARS(v, &s);
    SDPA_ZE_SET_SCORE_MODS(v, &s);
}

/* Sets every argument of k (kernel `name`, table args) from values and
 * appends its launch. */
static sdpa_status_t run(ze_command_list_handle_t list, ze_kernel_handle_t k, const char *name,
                         const sdpa_arg_table_t *args, const void *values, const uint32_t groups[3])
{
    sdpa_status_t status = sdpa_ze_set_args(k, name, args, values);
    if (status != SDPA_SUCCESS)
        return status;
    ze_group_count_t count = {groups[0], groups[1], groups[2]};
    ze_result_t result = zeCommandListAppendLaunchKernel(list, k, &count, NULL, 0, NULL);
    if (result != ZE_RESULT_SUCCESS)
        return sdpa_ze_failf(result, "zeCommandListAppendLaunchKernel(%s)", name);
    return SDPA_SUCCESS;
}

static sdpa_status_t barrier(ze_command_list_handle_t list)
{
    SDPA_ZE_TRY(zeCommandListAppendBarrier(list, NULL, 0, NULL));
    return SDPA_SUCCESS;
}

/* The scratch: the caller's if given (and large enough), else the list's. */
static sdpa_status_t find_scratch(sdpa_primitive_t *prim, const sdpa_exec_args_t *a,
                                  sdpa_scratch_t *list_scratch, char **out)
{
    _Static_assert(SDPA_BWD_SCRATCH_ALIGNMENT == SDPA_SCRATCH_ALIGNMENT,
                   "the backward's regions are aligned as caller scratch is");
    return sdpa_scratch_for_execution(list_scratch, a, prim->bwd.scratch.total_bytes,
                                      "this backward", out);
}

sdpa_status_t sdpa_ze_bwd_execute(sdpa_primitive_t *prim, const sdpa_exec_args_t *a,
                                  ze_command_list_handle_t list, sdpa_scratch_t *list_scratch)
{
    const sdpa_bwd_plan_t *plan = &prim->bwd;
    const sdpa_bwd_scratch_t *s = &plan->scratch;
    const int varlen = prim->problem.varlen.enabled != 0;
    bwd_buffers_t b;
    memset(&b, 0, sizeof(b));
    sdpa_status_t status = find_scratch(prim, a, list_scratch, &b.scratch);
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

    /* Everything waits for the caller's events, and, when the scratch is the
     * list's, for what the list ran before: an earlier backward on this list
     * may still be reading it. */
    if (a->num_wait_events || !a->scratch)
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

    const sdpa_bwd_pre_args_t pre = {.D_I = b.d_i,
                                     .DST = a->dst,
                                     .DIFF_DST = a->diff_dst,
                                     .D = plan->head_size,
                                     .SQ = plan->q_len,
                                     .STRIDES = b.strides,
                                     .CU_SEQLENS_Q = varlen ? a->cu_seqlens_q : NULL,
                                     .WS = a->workspace,
                                     .SINKS = prim->problem.sinks ? a->sinks : NULL,
                                     .DIFF_SINKS = prim->problem.sinks ? a->diff_sinks : NULL,
                                     .BATCH = (int32_t)prim->shape.batch,
                                     .TOTAL_Q = (int32_t)prim->problem.q.dims[2]};
    if ((status = run(list, prim->bwd_pre, SDPA_BWD_PREPROCESS_KERNEL, &sdpa_bwd_pre_args_table,
                      &pre, plan->pre_groups)) ||
        (status = barrier(list)))
        return status;
    /* The sinks' gradient reads D_i and the workspace, writes only
     * diff_sinks: beside the main kernel. */
    const uint32_t sinks_groups[3] = {1, (uint32_t)prim->shape.q_heads, 1};
    if (prim->bwd_sinks && (status = run(list, prim->bwd_sinks, SDPA_BWD_SINKS_KERNEL,
                                         &sdpa_bwd_pre_args_table, &pre, sinks_groups)))
        return status;

    sdpa_bwd_args_t v;
    void *dq_main = plan->dq_target == SDPA_BWD_TARGET_SCRATCH ? b.dq_sum : a->diff_q;
    main_args(prim, a, &b, dq_main, plan->slm_bytes, &v);
    if ((status = run(list, prim->bwd_main, plan->main_kernel, &sdpa_bwd_args_table, &v,
                      plan->main_groups)))
        return status;

    if (prim->bwd_dq) {
        /* Reads only inputs and D_i: it may run beside the main kernel. */
        main_args(prim, a, &b, a->diff_q, plan->dq_slm_bytes, &v);
        if ((status = run(list, prim->bwd_dq, plan->dq_kernel, &sdpa_bwd_args_table, &v,
                          plan->dq_groups)))
            return status;
    }

    if (plan->num_posts && (status = barrier(list)))
        return status;
    for (uint32_t i = 0; i < plan->num_posts; i++) {
        const sdpa_bwd_post_t *post = &plan->posts[i];
        sdpa_bwd_post_args_t post_args = post->args;
        post_args.DST = gradient(a, post->dst);
        post_args.SRC = region(b.scratch, post->src);
        if (varlen)
            post_args.CU_SEQLENS =
                    post->dst == SDPA_BWD_BUFFER_DIFF_Q ? a->cu_seqlens_q : a->cu_seqlens_k;
        if ((status = run(list, prim->bwd_post, SDPA_BWD_POSTPROCESS_KERNEL,
                          &sdpa_bwd_post_args_table, &post_args, post->group_count)))
            return status;
    }

    /* The caller's event: after everything above. */
    if (a->signal_event)
        SDPA_ZE_TRY(zeCommandListAppendBarrier(list, a->signal_event, 0, NULL));
    return SDPA_SUCCESS;
}
