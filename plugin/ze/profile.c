/* profile.c - SDPA_VERBOSE=profile (level 3): the device time of each
 * execution's kernels, from two global timestamps the command list writes
 * around them (zeCommandListAppendWriteGlobalTimestamp), read back once the
 * list has run: after the execution's own line when it already has (a
 * synchronous list), else at the primitive's next execution or at its
 * destruction (sdpa.h: the caller has finished the list by then). The
 * time of the append, which is all the host sees of a caller's list, stays
 * in the "exec" line. */
#include <stdio.h>
#include <stdlib.h>

#include "error.h"
#include "verbose.h"
#include "ze.h"
#include "ze_result.h"

/* Executions in flight a primitive times at once; more are not timed (a
 * "kernel" line says how many were left out). */
#define ZE_PROFILE_SLOTS 32

struct sdpa_ze_profile {
    ze_context_handle_t context; /* of the allocations below */
    ze_event_pool_handle_t pool;
    ze_event_handle_t events[ZE_PROFILE_SLOTS]; /* signalled by the end stamp */
    uint64_t *stamps;                           /* host USM: start, end per slot */
    int pending[ZE_PROFILE_SLOTS];              /* appended, not yet read */
    int failed[ZE_PROFILE_SLOTS];               /* the kernels were not appended */
    int caller_list[ZE_PROFILE_SLOTS];          /* for the <list> field */
    double ns_per_tick;
    uint64_t tick_mask; /* the timestamp's valid bits */
    uint64_t untimed;   /* executions left out since the last line */
};

/* The device's timer: with ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES (not _1_2)
 * timerResolution is nanoseconds per tick. */
static sdpa_status_t read_timer(sdpa_context_t *ctx, sdpa_ze_profile_t *p)
{
    ze_device_properties_t props = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
    SDPA_ZE_TRY(zeDeviceGetProperties(ctx->ze_device, &props));
    if (props.timerResolution == 0 || props.timestampValidBits == 0)
        return sdpa_fail(SDPA_ERROR_UNSUPPORTED, "the device reports no global timer");
    p->ns_per_tick = (double)props.timerResolution;
    p->tick_mask = props.timestampValidBits >= 64 ? UINT64_MAX
                                                  : (UINT64_C(1) << props.timestampValidBits) - 1;
    return SDPA_SUCCESS;
}

static sdpa_status_t profile_open(sdpa_context_t *ctx, sdpa_ze_profile_t *p)
{
    p->context = ctx->ze_context;
    sdpa_status_t status = read_timer(ctx, p);
    if (status != SDPA_SUCCESS)
        return status;
    ze_host_mem_alloc_desc_t host = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    SDPA_ZE_TRY(zeMemAllocHost(ctx->ze_context, &host, 2 * ZE_PROFILE_SLOTS * sizeof(uint64_t),
                               sizeof(uint64_t), (void **)&p->stamps));
    ze_event_pool_desc_t pool = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
                                 .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
                                 .count = ZE_PROFILE_SLOTS};
    SDPA_ZE_TRY(zeEventPoolCreate(ctx->ze_context, &pool, 1, &ctx->ze_device, &p->pool));
    for (uint32_t i = 0; i < ZE_PROFILE_SLOTS; i++) {
        ze_event_desc_t event = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC,
                                 .index = i,
                                 .signal = ZE_EVENT_SCOPE_FLAG_HOST,
                                 .wait = ZE_EVENT_SCOPE_FLAG_HOST};
        SDPA_ZE_TRY(zeEventCreate(p->pool, &event, &p->events[i]));
    }
    return SDPA_SUCCESS;
}

static void profile_close(sdpa_ze_profile_t *p)
{
    for (int i = 0; i < ZE_PROFILE_SLOTS; i++)
        if (p->events[i])
            zeEventDestroy(p->events[i]);
    if (p->pool)
        zeEventPoolDestroy(p->pool);
    if (p->stamps)
        zeMemFree(p->context, p->stamps);
    free(p);
}

/* Prints a "kernel" line for each slot whose end stamp is written, and
 * frees the slot. */
static void harvest(sdpa_primitive_t *prim)
{
    sdpa_ze_profile_t *p = prim->profile;
    for (int i = 0; i < ZE_PROFILE_SLOTS; i++) {
        if (!p->pending[i] || zeEventQueryStatus(p->events[i]) != ZE_RESULT_SUCCESS)
            continue;
        uint64_t ticks = (p->stamps[2 * i + 1] - p->stamps[2 * i]) & p->tick_mask;
        if (!p->failed[i])
            sdpa_ze_primitive_trace(prim, "kernel", p->caller_list[i] ? "caller_list" : "sync_list",
                                    (double)ticks * p->ns_per_tick * 1e-6);
        zeEventHostReset(p->events[i]);
        p->pending[i] = 0;
    }
    if (p->untimed > 0) {
        char note[64];
        snprintf(note, sizeof(note), "untimed=%llu", (unsigned long long)p->untimed);
        sdpa_ze_primitive_trace(prim, "kernel", note, 0.0);
        p->untimed = 0;
    }
}

int sdpa_ze_profile_begin(sdpa_primitive_t *prim, ze_command_list_handle_t list, int caller_list,
                          uint32_t num_wait_events, ze_event_handle_t *wait_events)
{
    if (sdpa_verbose_level() < SDPA_VERBOSE_PROFILE)
        return -1;
    if (prim->profile == NULL) {
        sdpa_ze_profile_t *p = calloc(1, sizeof(*p));
        if (p == NULL)
            return -1;
        sdpa_status_t status = profile_open(prim->ctx, p);
        if (status != SDPA_SUCCESS) {
            /* Said at each execution it fails for; the execution goes on, and
             * its caller's last_error() must not hold this message. */
            sdpa_verbose_refusal("ze", "profile", status);
            sdpa_error_clear();
            profile_close(p);
            return -1;
        }
        prim->profile = p;
    }
    sdpa_ze_profile_t *p = prim->profile;
    harvest(prim);
    int slot = 0;
    while (slot < ZE_PROFILE_SLOTS && p->pending[slot])
        slot++;
    if (slot == ZE_PROFILE_SLOTS) {
        p->untimed++;
        return -1;
    }
    /* Written once the commands before and the wait events are done; the
     * barriers keep it between those and the kernels on lists that do not
     * run in order. */
    if (zeCommandListAppendBarrier(list, NULL, num_wait_events, wait_events) != ZE_RESULT_SUCCESS ||
        zeCommandListAppendWriteGlobalTimestamp(list, &p->stamps[2 * slot], NULL, 0, NULL) !=
                ZE_RESULT_SUCCESS ||
        zeCommandListAppendBarrier(list, NULL, 0, NULL) != ZE_RESULT_SUCCESS) {
        p->untimed++;
        return -1;
    }
    p->caller_list[slot] = caller_list;
    return slot;
}

void sdpa_ze_profile_end(sdpa_primitive_t *prim, ze_command_list_handle_t list, int slot,
                         int appended)
{
    if (slot < 0)
        return;
    sdpa_ze_profile_t *p = prim->profile;
    /* Without the kernels (a failed append) the end stamp goes in all the
     * same, so that the slot is free only once the list is past the start
     * stamp; no line is printed for it. */
    p->failed[slot] = !appended;
    if (zeCommandListAppendBarrier(list, NULL, 0, NULL) != ZE_RESULT_SUCCESS ||
        zeCommandListAppendWriteGlobalTimestamp(list, &p->stamps[2 * slot + 1], p->events[slot], 0,
                                                NULL) != ZE_RESULT_SUCCESS) {
        /* The slot is retired: its start stamp, in the list, may still be
         * written, and its event will never be signalled. */
        p->failed[slot] = 1;
        p->pending[slot] = 1;
        p->untimed++;
        return;
    }
    p->pending[slot] = 1;
}

void sdpa_ze_profile_harvest(sdpa_primitive_t *prim)
{
    if (prim->profile != NULL)
        harvest(prim);
}

void sdpa_ze_profile_release(sdpa_primitive_t *prim)
{
    if (prim->profile == NULL)
        return;
    harvest(prim);
    profile_close(prim->profile);
    prim->profile = NULL;
}
