/*
 * cp_ring.c - moving blocks around the ring, and waiting for the device
 * while doing it.
 *
 * A transport may progress non-blocking transfers only inside its calls
 * (Open MPI has no progress thread by default; its shared-memory transport
 * copies a large message when the receiver tests it). So while the device
 * computes a step, the host alternates between testing the step's transfers
 * and a short wait on the device's event: the transfer runs beside the
 * compute, and the host wakes as soon as the device is done.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_internal.h"
#include "error.h"

/* How long the host sleeps on the device's event between two tests of the
 * pending transfers. */
#define CP_POLL_NS 50000ull

/* Posts bytes at buffer as pieces of one transfer: sends to the next rank
 * (send 1) or receives from the previous one. */
static sdpa_status_t post(sdpa_cp_t *cp, cp_transfer_t *t, void *buffer, size_t bytes, int tag,
                          int send)
{
    if (cp->broken)
        return SDPA_SUCCESS; /* the failure is recorded; the ring has stopped */
    if (t->done) /* a finished transfer is reused */
        t->count = t->done = 0;
    if (t->count == 0)
        t->posted = cp_now();
    for (size_t offset = 0; offset < bytes; offset += CP_PIECE_BYTES) {
        size_t piece = bytes - offset < CP_PIECE_BYTES ? bytes - offset : CP_PIECE_BYTES;
        if (t->count == CP_TRANSFER_MAX_REQUESTS)
            return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                             "a ring message of %zu bytes needs more than %d pieces of %zu bytes",
                             bytes, CP_TRANSFER_MAX_REQUESTS, CP_PIECE_BYTES);
        const sdpa_cp_transport_t *tr = &cp->transport;
        sdpa_cp_request_t **request = &t->requests[t->count];
        *request = NULL;
        int code =
                send ? tr->isend(tr->user, (char *)buffer + offset, piece, cp->next, tag, request)
                     : tr->irecv(tr->user, (char *)buffer + offset, piece, cp->prev, tag, request);
        if (code != 0)
            return cp_transport_failure(tr, code, send ? "isend" : "irecv");
        t->tag = tag;
        t->sends[t->count] = (signed char)send;
        t->count++;
    }
    if (send)
        cp->stats.bytes_sent += bytes;
    else
        cp->stats.bytes_received += bytes;
    return SDPA_SUCCESS;
}

sdpa_status_t cp_post_send(sdpa_cp_t *cp, cp_transfer_t *t, const void *buffer, size_t bytes,
                           int tag)
{
    return post(cp, t, (void *)buffer, bytes, tag, 1);
}

sdpa_status_t cp_post_recv(sdpa_cp_t *cp, cp_transfer_t *t, void *buffer, size_t bytes, int tag)
{
    return post(cp, t, buffer, bytes, tag, 0);
}

/* Marks t done and counts its time from posting. */
static void finish(sdpa_cp_t *cp, cp_transfer_t *t)
{
    t->done = 1;
    cp->stats.comm_seconds += cp_now() - t->posted;
}

/* Progresses t without blocking. */
static sdpa_status_t test(sdpa_cp_t *cp, cp_transfer_t *t)
{
    if (t == NULL || t->count == 0 || t->done || cp->broken)
        return SDPA_SUCCESS;
    const sdpa_cp_transport_t *tr = &cp->transport;
    int pending = 0;
    for (int i = 0; i < t->count; i++) {
        if (t->requests[i] == NULL)
            continue;
        int done = 0;
        int code = tr->test(tr->user, t->requests[i], &done);
        if (code != 0)
            return cp_transport_failure(tr, code, "test");
        if (done)
            t->requests[i] = NULL;
        pending += !done;
    }
    if (pending == 0)
        finish(cp, t);
    return SDPA_SUCCESS;
}

/* Breaks the object on the peer of t's first pending request. */
static sdpa_status_t give_up(sdpa_cp_t *cp, cp_transfer_t *t, double waited)
{
    int i = 0;
    while (i < t->count - 1 && t->requests[i] == NULL)
        i++;
    int send = t->sends[i], peer = send ? cp->next : cp->prev;
    const char *what = t->tag == CP_TAG_KV ? "K/V block" : "dK/dV accumulator";
    sdpa_status_t status = cp_break(
            cp, SDPA_ERROR_DEVICE, peer,
            "rank %d waited %.3g s for rank %d (%s of a %s at ring step %d of execution %lld); "
            "this object is broken",
            cp->rank, waited, peer, send ? "its receive" : "its send", what, cp->step,
            (long long)cp->sequence);
    cp_abandon(&cp->transport, t->requests, t->count, &cp->ring_in_flight);
    t->count = t->done = 0;
    return status;
}

sdpa_status_t cp_transfer_wait(sdpa_cp_t *cp, cp_transfer_t *t)
{
    if (t->count == 0 || t->done || cp->broken) {
        if (!cp->broken)
            t->count = 0;
        return SDPA_SUCCESS;
    }
    double start = cp_now();
    int all = 0;
    const char *call = NULL;
    int code = cp_wait_until(&cp->transport, t->requests, t->count, cp_deadline(cp), &all, &call);
    double waited = cp_now() - start;
    cp->stats.exposed_comm_seconds += waited;
    if (code != 0)
        return cp_transport_failure(&cp->transport, code, call);
    if (!all)
        return give_up(cp, t, waited);
    finish(cp, t);
    t->count = 0;
    return SDPA_SUCCESS;
}

void cp_transfers_abandon(sdpa_cp_t *cp, cp_transfer_t *const *transfers, int count)
{
    for (int i = 0; i < count; i++)
        if (transfers[i]->count > 0 && !transfers[i]->done) {
            cp_abandon(&cp->transport, transfers[i]->requests, transfers[i]->count,
                       &cp->ring_in_flight);
            transfers[i]->count = 0;
        }
}

sdpa_status_t cp_transfer_wait_busy(sdpa_cp_t *cp, cp_transfer_t *t, ze_event_handle_t event)
{
    while (cp->failure == SDPA_SUCCESS) {
        sdpa_status_t status = test(cp, t);
        if (status != SDPA_SUCCESS)
            return status;
        if (t->count == 0 || t->done)
            break;
        ze_result_t result = zeEventHostSynchronize(event, CP_POLL_NS);
        if (result == ZE_RESULT_SUCCESS)
            break; /* the device is idle: what is left is exposed */
        if (result != ZE_RESULT_NOT_READY)
            return cp_ze_failure(result, "zeEventHostSynchronize");
    }
    return cp_transfer_wait(cp, t);
}

sdpa_status_t cp_wait_device(sdpa_cp_t *cp, ze_event_handle_t event, double started,
                             cp_transfer_t *const *transfers, int count)
{
    sdpa_status_t status = SDPA_SUCCESS;
    for (;;) {
        int pending = 0;
        for (int i = 0; i < count && status == SDPA_SUCCESS; i++) {
            status = test(cp, transfers[i]);
            pending |= transfers[i] && transfers[i]->count && !transfers[i]->done;
        }
        /* After a device failure the event may never be signalled; after a
         * break the device still runs what was appended, which is waited
         * for (so the caller may reuse its buffers), if anything was. */
        if (status != SDPA_SUCCESS || cp_device_failed(cp) ||
            (event == cp->step_done && !cp->step_done_armed))
            break;
        ze_result_t result = zeEventHostSynchronize(event, pending ? CP_POLL_NS : UINT64_MAX);
        if (result == ZE_RESULT_SUCCESS)
            break;
        if (result != ZE_RESULT_NOT_READY) {
            status = cp_ze_failure(result, "zeEventHostSynchronize");
            break;
        }
    }
    cp->stats.compute_seconds += cp_now() - started;
    if (status == SDPA_SUCCESS && !cp_device_failed(cp) &&
        (event != cp->step_done || cp->step_done_armed)) {
        ze_result_t result = zeEventHostReset(event);
        if (result != ZE_RESULT_SUCCESS)
            status = cp_ze_failure(result, "zeEventHostReset");
        if (event == cp->step_done)
            cp->step_done_armed = 0;
    }
    return status;
}

sdpa_status_t cp_signal_after(sdpa_cp_t *cp, ze_event_handle_t event)
{
    ze_result_t result = zeCommandListAppendBarrier(cp->list, event, 0, NULL);
    if (result != ZE_RESULT_SUCCESS)
        return cp_ze_failure(result, "zeCommandListAppendBarrier");
    if (event == cp->step_done)
        cp->step_done_armed = 1;
    return SDPA_SUCCESS;
}

sdpa_status_t cp_agree(const sdpa_cp_transport_t *t, sdpa_status_t local)
{
    /* The largest status wins, and with it the lowest rank that has it. */
    int64_t *all = calloc((size_t)t->ranks, sizeof(*all));
    if (all == NULL)
        return local != SDPA_SUCCESS ? local
                                     : sdpa_fail(SDPA_ERROR_OUT_OF_HOST_MEMORY,
                                                 "no memory for %d statuses", t->ranks);
    int64_t mine = (int64_t)local;
    const char *call = NULL;
    int code = cp_exchange_all(t, &mine, 1, all, &call);
    int worst_rank = 0;
    for (int r = 1; r < t->ranks; r++)
        if (all[r] > all[worst_rank])
            worst_rank = r;
    sdpa_status_t worst = (sdpa_status_t)all[worst_rank];
    free(all);
    if (code != 0)
        return local != SDPA_SUCCESS ? local : cp_transport_failure(t, code, call);
    if (local != SDPA_SUCCESS || worst == SDPA_SUCCESS)
        return local; /* this rank's own message stands */
    return sdpa_fail(worst, "rank %d failed (%s); see its message", worst_rank,
                     sdpa_status_string(worst));
}
