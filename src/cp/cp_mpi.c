/*
 * cp_mpi.c - the MPI transport (include/sdpa_cp.h): sdpa_cp_create over a
 * duplicate of the caller's communicator. The only file of libsdpa_cp that
 * calls MPI; the ring itself talks to the transport table.
 *
 * A request is a heap cell holding the MPI_Request (an int in MPICH, a
 * pointer in Open MPI), so that the table's opaque handle fits both; a ring
 * step posts a few of them.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#include "cp_internal.h"
#include "error.h"
#include "problem.h"
#include "sdpa_cp.h"

/* How long an abandoned receive may take to notice its cancellation. */
#define MPI_CANCEL_SECONDS 0.1

/* The transport's state: the duplicated communicator, and the text of the
 * last error error_string described. */
typedef struct mpi_transport {
    MPI_Comm comm;
    char error[MPI_MAX_ERROR_STRING];
} mpi_transport_t;

struct sdpa_cp_request {
    MPI_Request request;
    int receive;
};

static int post(mpi_transport_t *m, void *buffer, size_t bytes, int peer, int tag, int receive,
                sdpa_cp_request_t **out)
{
    if (bytes > (size_t)0x7fffffff)
        return MPI_ERR_COUNT; /* the ring cuts its messages in pieces of 1 GiB */
    sdpa_cp_request_t *r = malloc(sizeof(*r));
    if (r == NULL)
        return MPI_ERR_NO_MEM;
    r->receive = receive;
    int code = receive ? MPI_Irecv(buffer, (int)bytes, MPI_BYTE, peer, tag, m->comm, &r->request)
                       : MPI_Isend(buffer, (int)bytes, MPI_BYTE, peer, tag, m->comm, &r->request);
    if (code != MPI_SUCCESS) {
        free(r);
        return code;
    }
    *out = r;
    return 0;
}

static int mpi_isend(void *user, const void *buffer, size_t bytes, int peer, int tag,
                     sdpa_cp_request_t **out)
{
    return post(user, (void *)buffer, bytes, peer, tag, 0, out);
}

static int mpi_irecv(void *user, void *buffer, size_t bytes, int peer, int tag,
                     sdpa_cp_request_t **out)
{
    return post(user, buffer, bytes, peer, tag, 1, out);
}

static int mpi_test(void *user, sdpa_cp_request_t *r, int *done)
{
    (void)user;
    int code = MPI_Test(&r->request, done, MPI_STATUS_IGNORE);
    if (code == MPI_SUCCESS && *done)
        free(r);
    return code;
}

static int mpi_wait(void *user, sdpa_cp_request_t *r)
{
    (void)user;
    int code = MPI_Wait(&r->request, MPI_STATUS_IGNORE);
    if (code == MPI_SUCCESS)
        free(r);
    return code;
}

/* A receive from a peer that never came is cancelled (MPI completes a
 * cancelled receive); a send, or a receive that will not cancel, is
 * released with MPI_Request_free, and MPI may still touch its buffer. */
static int mpi_abandon(void *user, sdpa_cp_request_t *r)
{
    (void)user;
    int in_flight = 1;
    if (r->receive && MPI_Cancel(&r->request) == MPI_SUCCESS) {
        double deadline = MPI_Wtime() + MPI_CANCEL_SECONDS;
        int done = 0;
        while (!done && MPI_Wtime() < deadline)
            if (MPI_Test(&r->request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                break;
        in_flight = !done;
    }
    if (in_flight)
        MPI_Request_free(&r->request);
    free(r);
    return in_flight;
}

static const char *mpi_error_string(void *user, int code)
{
    mpi_transport_t *m = user;
    int length = 0;
    if (MPI_Error_string(code, m->error, &length) != MPI_SUCCESS)
        return NULL;
    return m->error;
}

static void mpi_release(void *owner)
{
    mpi_transport_t *m = owner;
    MPI_Comm_free(&m->comm);
    free(m);
}

SDPA_CP_EXPORT sdpa_status_t sdpa_cp_create(const sdpa_cp_desc_t *desc, sdpa_cp_t **out)
{
    if (out == NULL)
        return SDPA_ENTRY(sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "out is NULL"));
    *out = NULL;
    if (desc == NULL)
        return SDPA_ENTRY(sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "desc is NULL"));
    sdpa_status_t status =
            sdpa_struct_check("desc", desc->struct_size, desc->struct_version, SDPA_CP_DESC_VERSION,
                              offsetof(sdpa_cp_desc_t, timeout_seconds), sizeof(*desc));
    if (status != SDPA_SUCCESS)
        return SDPA_ENTRY(status);
    if (desc->comm == MPI_COMM_NULL)
        return SDPA_ENTRY(sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "desc->comm is MPI_COMM_NULL"));

    /* Collective from here: MPI_Comm_dup, then the ring's agreement. */
    mpi_transport_t *m = calloc(1, sizeof(*m));
    if (m == NULL)
        return SDPA_ENTRY(
                sdpa_fail(SDPA_ERROR_OUT_OF_HOST_MEMORY, "no memory for the MPI transport"));
    int code = MPI_Comm_dup(desc->comm, &m->comm);
    if (code != MPI_SUCCESS) {
        free(m);
        return SDPA_ENTRY(sdpa_fail(SDPA_ERROR_DEVICE, "MPI_Comm_dup failed (error %d)", code));
    }
    sdpa_cp_transport_t transport = {.struct_size = sizeof(transport),
                                     .struct_version = SDPA_CP_TRANSPORT_VERSION,
                                     .user = m,
                                     .isend = mpi_isend,
                                     .irecv = mpi_irecv,
                                     .test = mpi_test,
                                     .wait = mpi_wait,
                                     .abandon = mpi_abandon,
                                     .error_string = mpi_error_string};
    MPI_Comm_rank(m->comm, &transport.rank);
    MPI_Comm_size(m->comm, &transport.ranks);

    /* A version 1 desc ends at problem: timeout_seconds is then 0. */
    int has_timeout =
            desc->struct_size >= offsetof(sdpa_cp_desc_t, timeout_seconds) + sizeof(double);
    sdpa_cp_transport_desc_t d = {.struct_size = sizeof(d),
                                  .struct_version = SDPA_CP_TRANSPORT_DESC_VERSION,
                                  .transport = &transport,
                                  .backend = desc->backend,
                                  .context = desc->context,
                                  .ze_context = desc->ze_context,
                                  .ze_device = desc->ze_device,
                                  .layout = desc->layout,
                                  .problem = desc->problem,
                                  .timeout_seconds = has_timeout ? desc->timeout_seconds : 0};
    return SDPA_ENTRY(cp_create(&d, mpi_release, m, out));
}
