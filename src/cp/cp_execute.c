/*
 * cp_execute.c - the entry points around the passes: checking an
 * execution's arguments on every rank, running the forward or backward
 * ring, agreeing on the outcome; queries, statistics, messages.
 */
#include <stdio.h>
#include <string.h>

#include "cp_internal.h"
#include "error.h"
#include "problem.h"

sdpa_status_t cp_note_failure(sdpa_cp_t *cp, sdpa_status_t status)
{
    if (status != SDPA_SUCCESS && cp->failure == SDPA_SUCCESS) {
        cp->failure = status;
        snprintf(cp->failure_message, sizeof(cp->failure_message), "%s", sdpa_error_message());
    }
    return status;
}

sdpa_status_t cp_ze_failure(ze_result_t result, const char *call)
{
    sdpa_status_t status = result == ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY
                                   ? SDPA_ERROR_OUT_OF_HOST_MEMORY
                           : result == ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY
                                   ? SDPA_ERROR_OUT_OF_DEVICE_MEMORY
                                   : SDPA_ERROR_DEVICE;
    return sdpa_fail(status, "%s returned 0x%x", call, (unsigned)result);
}

sdpa_status_t cp_backend_failure(const sdpa_cp_t *cp, sdpa_status_t status, const char *what)
{
    return sdpa_fail(status, "backend %s: %s: %s", cp->be->name ? cp->be->name : "?", what,
                     cp->be->last_error());
}

/* What the backend would check, plus what belongs to the ring. */
static sdpa_status_t check_args(const sdpa_cp_t *cp, const sdpa_exec_args_t *args)
{
    sdpa_exec_args_t copy;
    sdpa_status_t status = sdpa_exec_args_check(&cp->problem, args, &copy);
    if (status != SDPA_SUCCESS)
        return status;
    if (args->command_list != NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "args->command_list is not NULL: the ring appends to its own list");
    if (args->scratch != NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "args->scratch is not NULL: the ring's backward executions use the "
                         "backend context's scratch for its list");
    return SDPA_SUCCESS;
}

static sdpa_status_t execute(sdpa_cp_t *cp, const sdpa_exec_args_t *args)
{
    if (cp == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "cp is NULL");
    if (cp->broken)
        return sdpa_fail(SDPA_ERROR_DEVICE,
                         "this object broke in an earlier execution (%s): destroy it",
                         cp->broken_message);
    double start = cp_now();
    cp->sequence++;
    cp->failure = SDPA_SUCCESS;
    cp->failure_message[0] = '\0';
    cp->step = 0;
    sdpa_status_t status = cp_agree_execution(cp, CP_PHASE_START, check_args(cp, args));
    if (cp->broken) /* a peer did not come, or is out of step */
        cp_agree_execution(cp, CP_PHASE_END, status); /* tells the others */
    if (status != SDPA_SUCCESS)
        return status;
    if (args->num_wait_events) {
        ze_result_t result = zeCommandListAppendBarrier(cp->list, NULL, args->num_wait_events,
                                                        args->wait_events);
        if (result != ZE_RESULT_SUCCESS)
            cp_note_failure(cp, cp_ze_failure(result, "zeCommandListAppendBarrier"));
    }
    status = cp->backward ? cp_backward(cp, args) : cp_forward(cp, args);
    status = cp_agree_execution(cp, CP_PHASE_END, status);
    if (cp->failure != SDPA_SUCCESS) /* this rank's own message, whatever came after it */
        sdpa_fail(cp->failure, "%s", cp->failure_message);
    cp->stats.executions++;
    cp->stats.total_seconds += cp_now() - start;
    return status;
}

static sdpa_status_t query(const sdpa_cp_t *cp, sdpa_cp_query_t what, void *out, size_t out_size)
{
    if (cp == NULL || out == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "%s is NULL", cp ? "out" : "cp");
    size_t value = 0;
    switch (what) {
    case SDPA_CP_QUERY_WORKSPACE_BYTES:
        value = cp->training ? (size_t)(cp->batch * cp->q_heads * cp->local_len) * sizeof(float)
                             : 0;
        break;
    case SDPA_CP_QUERY_MEMORY_BYTES:
        value = cp->allocated_bytes + cp->scratch_bytes;
        break;
    case SDPA_CP_QUERY_STEPS:
    case SDPA_CP_QUERY_FAILED_PEER:
        if (out_size < sizeof(int))
            return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "out_size = %zu: %s answers an int",
                             out_size,
                             what == SDPA_CP_QUERY_STEPS ? "SDPA_CP_QUERY_STEPS"
                                                         : "SDPA_CP_QUERY_FAILED_PEER");
        *(int *)out = what == SDPA_CP_QUERY_STEPS ? cp->ranks : cp->failed_peer;
        return SDPA_SUCCESS;
    case SDPA_CP_QUERY_TRANSPORT:
        if (out_size == 0)
            return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "out_size = 0: no room for a string");
        snprintf(out, out_size,
                 "host-staged: %d rank(s), K/V blocks%s in host USM ring buffers, copied to and "
                 "from the device; the transport is given host pointers only",
                 cp->ranks, cp->backward ? " and f32 dK/dV accumulators" : "");
        return SDPA_SUCCESS;
    default:
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "what = %d: not a valid sdpa_cp_query_t",
                         (int)what);
    }
    if (out_size < sizeof(size_t))
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "out_size = %zu: this query answers a size_t",
                         out_size);
    memcpy(out, &value, sizeof(value));
    return SDPA_SUCCESS;
}

static sdpa_status_t get_stats(const sdpa_cp_t *cp, sdpa_cp_stats_t *out)
{
    if (cp == NULL || out == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "%s is NULL", cp ? "out" : "cp");
    sdpa_status_t status = sdpa_struct_check("out", out->struct_size, out->struct_version,
                                             SDPA_CP_STATS_VERSION, sizeof(*out), sizeof(*out));
    if (status != SDPA_SUCCESS)
        return status;
    *out = cp->stats;
    return SDPA_SUCCESS;
}

/* The entry points, through SDPA_ENTRY: sdpa_cp_last_error() describes the
 * calling thread's most recent call, "" if it succeeded (sdpa_cp.h). */
SDPA_CP_EXPORT sdpa_status_t sdpa_cp_execute(sdpa_cp_t *cp, const sdpa_exec_args_t *args)
{
    return SDPA_ENTRY(execute(cp, args));
}

SDPA_CP_EXPORT sdpa_status_t sdpa_cp_query(const sdpa_cp_t *cp, sdpa_cp_query_t what, void *out,
                                           size_t out_size)
{
    return SDPA_ENTRY(query(cp, what, out, out_size));
}

SDPA_CP_EXPORT sdpa_status_t sdpa_cp_get_stats(const sdpa_cp_t *cp, sdpa_cp_stats_t *out)
{
    return SDPA_ENTRY(get_stats(cp, out));
}

SDPA_CP_EXPORT void sdpa_cp_reset_stats(sdpa_cp_t *cp)
{
    if (cp == NULL)
        return;
    memset(&cp->stats, 0, sizeof(cp->stats));
    cp->stats.struct_size = sizeof(cp->stats);
    cp->stats.struct_version = SDPA_CP_STATS_VERSION;
}

SDPA_CP_EXPORT int64_t sdpa_cp_global_token(sdpa_cp_layout_t layout, int ranks, int rank,
                                             int64_t local_len, int64_t i)
{
    int chunks = cp_chunks_per_rank(layout);
    if (chunks == 0 || local_len < 1 || local_len % chunks != 0 || i < 0 || i >= local_len)
        return -1;
    int64_t chunk_len = local_len / chunks;
    int64_t global_chunk = cp_global_chunk(layout, ranks, rank, (int)(i / chunk_len));
    return global_chunk < 0 ? -1 : global_chunk * chunk_len + i % chunk_len;
}

SDPA_CP_EXPORT const char *sdpa_cp_last_error(void)
{
    return sdpa_error_message();
}
