/*
 * cp_transport.c - what the library asks of a transport (sdpa_cp_transport.h)
 * beyond single messages: the check of the table, its failures as statuses,
 * the clock, and the all-to-all exchange of a few words that creation uses
 * where MPI would use an all-reduce.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>

#include "cp_internal.h"
#include "error.h"
#include "problem.h"

double cp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

sdpa_status_t cp_transport_failure(const sdpa_cp_transport_t *t, int code, const char *call)
{
    const char *text = t->error_string ? t->error_string(t->user, code) : NULL;
    if (text != NULL)
        return sdpa_fail(SDPA_ERROR_DEVICE, "the transport's %s failed: %s", call, text);
    return sdpa_fail(SDPA_ERROR_DEVICE, "the transport's %s failed (error %d)", call, code);
}

sdpa_status_t cp_transport_check(const sdpa_cp_transport_t *t)
{
    if (t == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "desc->transport is NULL");
    sdpa_status_t status = sdpa_struct_check("desc->transport", t->struct_size, t->struct_version,
                                             SDPA_CP_TRANSPORT_VERSION, sizeof(*t), sizeof(*t));
    if (status != SDPA_SUCCESS)
        return status;
    if (t->isend == NULL || t->irecv == NULL || t->test == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "desc->transport->%s is NULL: isend, irecv and test are required",
                         t->isend == NULL   ? "isend"
                         : t->irecv == NULL ? "irecv"
                                            : "test");
    if (t->ranks < 1 || t->rank < 0 || t->rank >= t->ranks)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "desc->transport: rank %d of %d ranks: give 0 <= rank < ranks", t->rank,
                         t->ranks);
    return SDPA_SUCCESS;
}

int cp_exchange_all(const sdpa_cp_transport_t *t, const int64_t *mine, int words, int64_t *all,
                    const char **call)
{
    size_t bytes = sizeof(int64_t) * (size_t)words;
    for (int i = 0; i < words; i++)
        all[(size_t)t->rank * (size_t)words + (size_t)i] = mine[i];
    if (t->ranks == 1)
        return 0;
    sdpa_cp_request_t **requests = calloc(2 * (size_t)t->ranks, sizeof(*requests));
    if (requests == NULL) {
        *call = "exchange (no host memory)";
        return -1;
    }
    int code = 0, n = 0;
    for (int peer = 0; peer < t->ranks && code == 0; peer++) {
        if (peer == t->rank)
            continue;
        *call = "irecv";
        code = t->irecv(t->user, all + (size_t)peer * (size_t)words, bytes, peer, CP_TAG_CREATE,
                        &requests[n]);
        n += code == 0;
        if (code == 0) {
            *call = "isend";
            code = t->isend(t->user, mine, bytes, peer, CP_TAG_CREATE, &requests[n]);
            n += code == 0;
        }
    }
    int done = 0;
    if (code == 0)
        code = cp_wait_until(t, requests, n, INFINITY, &done, call);
    else {
        int in_flight = 0; /* the transport failed: the exchange is over */
        cp_abandon(t, requests, n, &in_flight);
    }
    free(requests);
    return code;
}
