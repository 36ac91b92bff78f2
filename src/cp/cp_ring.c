/*
 * cp_ring.c - moving blocks around the ring, and waiting for the device
 * while doing it.
 *
 * MPI progresses non-blocking transfers only inside MPI calls (Open MPI has
 * no progress thread by default; its shared-memory transport copies a large
 * message when the receiver tests it). So while the device computes a step,
 * the host alternates between testing the step's transfers and a short
 * wait on the device's event: the transfer runs beside the compute, and the
 * host wakes as soon as the device is done.
 */
#include <stdio.h>
#include <string.h>

#include "cp_internal.h"
#include "error.h"

/* How long the host sleeps on the device's event between two tests of the
 * pending transfers. */
#define CP_POLL_NS 50000ull

static sdpa_status_t mpi_failure(int code, const char *call)
{
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
        snprintf(text, sizeof(text), "error %d", code);
    return sdpa_fail(SDPA_ERROR_DEVICE, "%s failed: %s", call, text);
}

/* Posts bytes at buffer as pieces of one transfer: sends to the next rank
 * (send 1) or receives from the previous one. */
static sdpa_status_t post(sdpa_cp_t *cp, cp_transfer_t *t, void *buffer, size_t bytes, int tag,
                          int send)
{
    if (t->done) /* a finished transfer is reused */
        t->count = t->done = 0;
    if (t->count == 0)
        t->posted = MPI_Wtime();
    for (size_t offset = 0; offset < bytes; offset += CP_PIECE_BYTES) {
        size_t piece = bytes - offset < CP_PIECE_BYTES ? bytes - offset : CP_PIECE_BYTES;
        if (t->count == CP_TRANSFER_MAX_REQUESTS)
            return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                             "a ring message of %zu bytes needs more than %d pieces of %zu bytes",
                             bytes, CP_TRANSFER_MAX_REQUESTS, CP_PIECE_BYTES);
        MPI_Request *request = &t->requests[t->count];
        int code = send ? MPI_Isend((char *)buffer + offset, (int)piece, MPI_BYTE, cp->next, tag,
                                    cp->comm, request)
                        : MPI_Irecv((char *)buffer + offset, (int)piece, MPI_BYTE, cp->prev, tag,
                                    cp->comm, request);
        if (code != MPI_SUCCESS)
            return mpi_failure(code, send ? "MPI_Isend" : "MPI_Irecv");
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
    cp->stats.comm_seconds += MPI_Wtime() - t->posted;
}

/* Progresses t without blocking. */
static sdpa_status_t test(sdpa_cp_t *cp, cp_transfer_t *t)
{
    if (t == NULL || t->count == 0 || t->done)
        return SDPA_SUCCESS;
    int flag = 0;
    int code = MPI_Testall(t->count, t->requests, &flag, MPI_STATUSES_IGNORE);
    if (code != MPI_SUCCESS)
        return mpi_failure(code, "MPI_Testall");
    if (flag)
        finish(cp, t);
    return SDPA_SUCCESS;
}

sdpa_status_t cp_transfer_wait(sdpa_cp_t *cp, cp_transfer_t *t)
{
    if (t->count == 0 || t->done) {
        t->count = 0;
        return SDPA_SUCCESS;
    }
    double start = MPI_Wtime();
    int code = MPI_Waitall(t->count, t->requests, MPI_STATUSES_IGNORE);
    cp->stats.exposed_comm_seconds += MPI_Wtime() - start;
    if (code != MPI_SUCCESS)
        return mpi_failure(code, "MPI_Waitall");
    finish(cp, t);
    t->count = 0;
    return SDPA_SUCCESS;
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
        if (status != SDPA_SUCCESS || cp->failure != SDPA_SUCCESS)
            break; /* the event may never be signalled */
        ze_result_t result = zeEventHostSynchronize(event, pending ? CP_POLL_NS : UINT64_MAX);
        if (result == ZE_RESULT_SUCCESS)
            break;
        if (result != ZE_RESULT_NOT_READY) {
            status = cp_ze_failure(result, "zeEventHostSynchronize");
            break;
        }
    }
    cp->stats.compute_seconds += MPI_Wtime() - started;
    if (status == SDPA_SUCCESS && cp->failure == SDPA_SUCCESS) {
        ze_result_t result = zeEventHostReset(event);
        if (result != ZE_RESULT_SUCCESS)
            status = cp_ze_failure(result, "zeEventHostReset");
    }
    return status;
}

sdpa_status_t cp_signal_after(sdpa_cp_t *cp, ze_event_handle_t event)
{
    ze_result_t result = zeCommandListAppendBarrier(cp->list, event, 0, NULL);
    return result == ZE_RESULT_SUCCESS ? SDPA_SUCCESS
                                       : cp_ze_failure(result, "zeCommandListAppendBarrier");
}

sdpa_status_t cp_agree(MPI_Comm comm, int rank, sdpa_status_t local)
{
    /* The largest status wins, and with it the lowest rank that has it. */
    struct {
        int status, rank;
    } mine = {(int)local, rank}, worst = {0, 0};
    int code = MPI_Allreduce(&mine, &worst, 1, MPI_2INT, MPI_MAXLOC, comm);
    if (code != MPI_SUCCESS)
        return local != SDPA_SUCCESS ? local : mpi_failure(code, "MPI_Allreduce");
    if (local != SDPA_SUCCESS || worst.status == SDPA_SUCCESS)
        return local; /* this rank's own message stands */
    return sdpa_fail((sdpa_status_t)worst.status, "rank %d failed (%s); see its message",
                     worst.rank, sdpa_status_string((sdpa_status_t)worst.status));
}
