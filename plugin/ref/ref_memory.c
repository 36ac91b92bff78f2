/* ref_memory.c - what the host may touch, and host-side event handling. */
#include <stdint.h>

#include "error.h"
#include "ref.h"

/* Collects the pointers problem reads or writes (all non-NULL after
 * sdpa_exec_args_check). Returns how many; list holds at least 24. */
static int used_pointers(const sdpa_problem_desc_t *p, const sdpa_exec_args_t *a,
                         ref_pointer_t *list)
{
    int n = 0;
#define USE(member_)                                                                               \
    do {                                                                                           \
        list[n].member = #member_;                                                                 \
        list[n].pointer = a->member_;                                                              \
        n++;                                                                                       \
    } while (0)
    USE(q);
    USE(k);
    USE(v);
    USE(dst);
    if (p->mask_kind == SDPA_MASK_BUFFER)
        USE(mask);
    if (p->prop_kind != SDPA_FORWARD_INFERENCE)
        USE(workspace);
    if (p->scale_kind == SDPA_SCALE_DEVICE)
        USE(scale_ptr);
    if (p->k_quant.scales != SDPA_QUANT_NONE)
        USE(k_scales);
    if (p->k_quant.zero_points != SDPA_QUANT_NONE)
        USE(k_zero_points);
    if (p->v_quant.scales != SDPA_QUANT_NONE)
        USE(v_scales);
    if (p->v_quant.zero_points != SDPA_QUANT_NONE)
        USE(v_zero_points);
    if (p->dropout.enabled && !p->dropout.host_scalars) {
        USE(dropout_p_ptr);
        USE(dropout_seed_ptr);
        if (p->dropout.with_offset)
            USE(dropout_offset_ptr);
    }
    if (p->dropout.enabled && p->dropout.with_mask_output)
        USE(dropout_mask);
    if (p->varlen.enabled) {
        USE(cu_seqlens_q);
        USE(cu_seqlens_k);
    }
    if (p->paged_kv.enabled) {
        USE(block_table);
        USE(cache_seqlens);
    }
    if (p->alibi != SDPA_ALIBI_NONE)
        USE(alibi_slopes);
    if (p->sinks) {
        USE(sinks);
        if (p->prop_kind == SDPA_BACKWARD)
            USE(diff_sinks);
    }
    if (p->prop_kind == SDPA_BACKWARD) {
        USE(diff_dst);
        USE(diff_q);
        USE(diff_k);
        USE(diff_v);
        if (p->ds.dtype != SDPA_DTYPE_UNDEF)
            USE(ds);
    }
#undef USE
    return n;
}

sdpa_status_t ref_check_pointers(const sdpa_context_t *ctx, const ref_pointer_t *list, int count,
                                 const ref_events_t *events)
{
    if (ctx->ze_context == NULL) {
        if (events->signal_event != NULL || events->num_wait_events > 0)
            return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                             "args->%s is set but the context has no ze_context: the ref backend "
                             "handles events only through a Level Zero context",
                             events->signal_event != NULL ? "signal_event" : "num_wait_events");
        return SDPA_SUCCESS; /* plain host memory */
    }
    for (int i = 0; i < count; i++) {
        ze_memory_allocation_properties_t props = {
                .stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES,
                .pNext = NULL,
        };
        ze_result_t result =
                zeMemGetAllocProperties(ctx->ze_context, list[i].pointer, &props, NULL);
        if (result != ZE_RESULT_SUCCESS)
            return sdpa_fail(SDPA_ERROR_DEVICE, "zeMemGetAllocProperties(args->%s) failed: 0x%x",
                             list[i].member, (unsigned)result);
        /* UNKNOWN is memory Level Zero did not allocate: ordinary host memory. */
        if (props.type == ZE_MEMORY_TYPE_DEVICE)
            return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                             "args->%s is device memory: the ref backend computes on the host and "
                             "needs host or shared USM (or plain host memory)",
                             list[i].member);
    }
    return SDPA_SUCCESS;
}

sdpa_status_t ref_check_memory(const sdpa_context_t *ctx, const sdpa_problem_desc_t *problem,
                               const sdpa_exec_args_t *args)
{
    ref_pointer_t list[32];
    const int count = used_pointers(problem, args, list);
    const ref_events_t events = ref_exec_events(args);
    return ref_check_pointers(ctx, list, count, &events);
}

ref_events_t ref_exec_events(const sdpa_exec_args_t *args)
{
    const ref_events_t events = {args->signal_event, args->num_wait_events, args->wait_events};
    return events;
}

sdpa_status_t ref_wait_events(const sdpa_context_t *ctx, const ref_events_t *events)
{
    if (ctx->ze_context == NULL)
        return SDPA_SUCCESS; /* ref_check_pointers refused events */
    for (uint32_t i = 0; i < events->num_wait_events; i++) {
        if (events->wait_events[i] == NULL)
            return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "args->wait_events[%u] is NULL", i);
        ze_result_t result = zeEventHostSynchronize(events->wait_events[i], UINT64_MAX);
        if (result != ZE_RESULT_SUCCESS)
            return sdpa_fail(SDPA_ERROR_DEVICE,
                             "zeEventHostSynchronize(args->wait_events[%u]) failed: 0x%x", i,
                             (unsigned)result);
    }
    return SDPA_SUCCESS;
}

sdpa_status_t ref_signal_event(const sdpa_context_t *ctx, const ref_events_t *events)
{
    if (ctx->ze_context == NULL || events->signal_event == NULL)
        return SDPA_SUCCESS;
    ze_result_t result = zeEventHostSignal(events->signal_event);
    if (result != ZE_RESULT_SUCCESS)
        return sdpa_fail(SDPA_ERROR_DEVICE, "zeEventHostSignal(args->signal_event) failed: 0x%x",
                         (unsigned)result);
    return SDPA_SUCCESS;
}
