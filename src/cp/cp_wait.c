/*
 * cp_wait.c - waiting for peers with a deadline, giving up on them, and the
 * agreement at the start and end of an execution.
 *
 * A blocking wait (MPI_Waitall, MPI_Allreduce) waits forever for a peer
 * that never comes, and a blocking collective cannot be abandoned. So an
 * execution's messages are non-blocking requests of the transport tested
 * in a loop until they complete or the deadline passes, and the agreement
 * is a message from every rank to every other (2 (N - 1) small requests
 * per rank): a rank that does not report in time is known by name. Without
 * a timeout the requests are simply waited for (the transport's wait).
 */
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_internal.h"
#include "error.h"

/* How long a request given up on may take to complete before it is
 * abandoned. */
#define CP_CANCEL_SECONDS 0.1

sdpa_status_t cp_timeout_of(double given, double *timeout)
{
    if (isnan(given) || given < 0)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "desc->timeout_seconds = %g: give seconds > 0, 0 for the environment's "
                         "SDPA_CP_TIMEOUT or INFINITY for no limit",
                         given);
    *timeout = given > 0 ? given : INFINITY;
    const char *text = getenv("SDPA_CP_TIMEOUT");
    if (given > 0 || text == NULL || text[0] == '\0')
        return SDPA_SUCCESS;
    char *end = NULL;
    double env = strtod(text, &end);
    if (end == text || *end != '\0' || isnan(env) || env < 0)
        return sdpa_fail(SDPA_ERROR_INVALID_CONFIG,
                         "SDPA_CP_TIMEOUT=%s: give seconds (0 for no limit)", text);
    *timeout = env > 0 ? env : INFINITY;
    return SDPA_SUCCESS;
}

double cp_deadline(const sdpa_cp_t *cp)
{
    return isinf(cp->timeout) ? INFINITY : cp_now() + cp->timeout;
}

/* Waits for one request with the transport's wait (or tests it in a loop). */
static int wait_one(const sdpa_cp_transport_t *t, sdpa_cp_request_t **request, const char **call)
{
    if (t->wait != NULL) {
        *call = "wait";
        int code = t->wait(t->user, *request);
        if (code == 0)
            *request = NULL;
        return code;
    }
    *call = "test";
    for (;;) {
        int done = 0;
        int code = t->test(t->user, *request, &done);
        if (code != 0)
            return code;
        if (done) {
            *request = NULL;
            return 0;
        }
        sched_yield();
    }
}

int cp_wait_until(const sdpa_cp_transport_t *t, sdpa_cp_request_t **requests, int count,
                  double deadline, int *all, const char **call)
{
    *all = 0;
    if (isinf(deadline)) {
        for (int i = 0; i < count; i++)
            if (requests[i] != NULL) {
                int code = wait_one(t, &requests[i], call);
                if (code != 0)
                    return code;
            }
        *all = 1;
        return 0;
    }
    *call = "test";
    for (;;) {
        int pending = 0;
        for (int i = 0; i < count; i++) {
            if (requests[i] == NULL)
                continue;
            int done = 0;
            int code = t->test(t->user, requests[i], &done);
            if (code != 0)
                return code;
            if (done)
                requests[i] = NULL;
            pending += !done;
        }
        if (pending == 0) {
            *all = 1;
            return 0;
        }
        if (cp_now() >= deadline)
            return 0;
        sched_yield(); /* ranks may outnumber cores */
    }
}

void cp_abandon(const sdpa_cp_transport_t *t, sdpa_cp_request_t **requests, int count,
                int *in_flight)
{
    /* Those about to complete (a small send an eager protocol delivers)
     * complete; the others are given up. */
    int all = 0;
    const char *call = NULL;
    cp_wait_until(t, requests, count, cp_now() + CP_CANCEL_SECONDS, &all, &call);
    for (int i = 0; i < count; i++)
        if (requests[i] != NULL) {
            if (t->abandon == NULL || t->abandon(t->user, requests[i]) != 0)
                *in_flight = 1; /* the transport may still touch the buffer */
            requests[i] = NULL;
        }
}

sdpa_status_t cp_break(sdpa_cp_t *cp, sdpa_status_t status, int peer, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    vsnprintf(cp->broken_message, sizeof(cp->broken_message), format, ap);
    va_end(ap);
    if (!cp->broken) {
        cp->broken = 1;
        cp->broken_first = cp->failure == SDPA_SUCCESS;
        cp->failed_peer = peer;
    }
    return cp_note_failure(cp, sdpa_fail(status, "%s", cp->broken_message));
}

int cp_device_failed(const sdpa_cp_t *cp)
{
    return cp->failure != SDPA_SUCCESS && !cp->broken_first;
}

sdpa_status_t cp_agree_alloc(sdpa_cp_t *cp)
{
    cp->agree_in = calloc((size_t)cp->ranks, sizeof(*cp->agree_in));
    cp->agree_requests = calloc(2 * (size_t)cp->ranks, sizeof(*cp->agree_requests));
    if (cp->agree_in == NULL || cp->agree_requests == NULL)
        return sdpa_fail(SDPA_ERROR_OUT_OF_HOST_MEMORY, "no memory for %d ranks' messages",
                         cp->ranks);
    return SDPA_SUCCESS;
}

void cp_agree_free(sdpa_cp_t *cp)
{
    if (cp->agree_in_flight)
        return; /* a released request may still write or read them */
    free(cp->agree_in);
    free(cp->agree_requests);
}

/* Breaks the object on a failure of the transport's call. */
static sdpa_status_t break_on_transport(sdpa_cp_t *cp, int code, const char *call)
{
    char why[512];
    cp_transport_failure(&cp->transport, code, call);
    snprintf(why, sizeof(why), "%s", sdpa_error_message());
    return cp_break(cp, SDPA_ERROR_DEVICE, -1, "%s", why);
}

static const char *phase_name(int64_t phase)
{
    return phase == CP_PHASE_START ? "start" : phase == CP_PHASE_END ? "end" : "?";
}

/* Posts this rank's message to every other rank (and, unless send_only,
 * the receives of theirs). Returns the number of requests posted. */
static int post_agreement(sdpa_cp_t *cp, int send_only, int *code, const char **call)
{
    const sdpa_cp_transport_t *t = &cp->transport;
    int n = 0;
    *code = 0;
    for (int peer = 0; peer < cp->ranks && *code == 0; peer++) {
        if (peer == cp->rank)
            continue;
        /* A request that failed to post leaves its slot NULL. */
        if (!send_only) {
            *call = "irecv";
            cp->agree_requests[n] = NULL;
            *code = t->irecv(t->user, cp->agree_in[peer], sizeof(cp->agree_in[peer]), peer,
                             CP_TAG_AGREE, &cp->agree_requests[n++]);
        }
        if (*code == 0) {
            *call = "isend";
            cp->agree_requests[n] = NULL;
            *code = t->isend(t->user, cp->agree_out, sizeof(cp->agree_out), peer, CP_TAG_AGREE,
                             &cp->agree_requests[n++]);
        }
    }
    return n;
}

/* The outcome once every peer's message is in. */
static sdpa_status_t read_agreement(sdpa_cp_t *cp, int phase, sdpa_status_t local)
{
    int worst_rank = -1;
    int64_t worst = SDPA_SUCCESS;
    for (int peer = 0; peer < cp->ranks; peer++) {
        if (peer == cp->rank)
            continue;
        const int64_t *m = cp->agree_in[peer];
        if (m[CP_AGREE_SEQUENCE] != cp->sequence || m[CP_AGREE_PHASE] != phase)
            return cp_break(cp, SDPA_ERROR_INVALID_ARGUMENT, peer,
                            "rank %d is at the %s of its execution %lld of this object, rank %d "
                            "at the %s of its execution %lld: the ranks' calls are out of step",
                            peer, phase_name(m[CP_AGREE_PHASE]),
                            (long long)m[CP_AGREE_SEQUENCE], cp->rank, phase_name(phase),
                            (long long)cp->sequence);
        if (m[CP_AGREE_BROKEN])
            return cp_break(cp, SDPA_ERROR_DEVICE, peer,
                            "rank %d gave up on rank %lld in execution %lld; this object is "
                            "broken on every rank",
                            peer, (long long)m[CP_AGREE_PEER], (long long)cp->sequence);
        if (m[CP_AGREE_STATUS] > worst) {
            worst = m[CP_AGREE_STATUS];
            worst_rank = peer;
        }
    }
    if (local != SDPA_SUCCESS || worst == SDPA_SUCCESS)
        return local; /* this rank's own message stands */
    return sdpa_fail((sdpa_status_t)worst, "rank %d failed (%s); see its message", worst_rank,
                     sdpa_status_string((sdpa_status_t)worst));
}

sdpa_status_t cp_agree_execution(sdpa_cp_t *cp, int phase, sdpa_status_t local)
{
    if (cp->ranks == 1)
        return local;
    int send_only = cp->broken;
    cp->agree_out[CP_AGREE_SEQUENCE] = cp->sequence;
    cp->agree_out[CP_AGREE_PHASE] = phase;
    cp->agree_out[CP_AGREE_STATUS] = local;
    cp->agree_out[CP_AGREE_BROKEN] = cp->broken;
    cp->agree_out[CP_AGREE_PEER] = cp->failed_peer;
    int code = 0;
    const char *call = NULL;
    int n = post_agreement(cp, send_only, &code, &call);
    if (code != 0 || send_only) {
        /* A broken rank tells the others and goes: small sends complete
         * without the peer (an eager protocol), or are abandoned. */
        cp_abandon(&cp->transport, cp->agree_requests, n, &cp->agree_in_flight);
        if (code != 0)
            return break_on_transport(cp, code, call);
        return local;
    }
    double start = cp_now();
    int all = 0;
    code = cp_wait_until(&cp->transport, cp->agree_requests, n, cp_deadline(cp), &all, &call);
    if (code == 0 && all)
        return read_agreement(cp, phase, local);

    /* The peers whose message has not come (the receive from the i-th
     * peer other than this rank is request 2 i), or else whose receive of
     * this rank's has not completed (request 2 i + 1). */
    int missing = -1, count = 0;
    char list[96] = "";
    for (int pass = 0; pass < 2 && missing < 0; pass++)
        for (int i = pass; i < n; i += 2)
            if (cp->agree_requests[i] != NULL) {
                int peer = i / 2 < cp->rank ? i / 2 : i / 2 + 1;
                size_t used = strlen(list);
                if (used + 16 < sizeof(list))
                    snprintf(list + used, sizeof(list) - used, "%s%d", count ? ", " : "", peer);
                else if (list[used - 1] != '.')
                    snprintf(list + used, sizeof(list) - used, ", ...");
                missing = missing < 0 ? peer : missing;
                count++;
            }
    cp_abandon(&cp->transport, cp->agree_requests, n, &cp->agree_in_flight);
    if (code != 0)
        return break_on_transport(cp, code, call);
    return cp_break(cp, SDPA_ERROR_DEVICE, missing,
                    "rank %d waited %.3g s for rank%s %s (%s arrival at the %s of execution "
                    "%lld); this object is broken",
                    cp->rank, cp_now() - start, count > 1 ? "s" : "", list,
                    count > 1 ? "their" : "its", phase_name(phase), (long long)cp->sequence);
}
