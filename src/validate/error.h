/*
 * error.h - the failure message every sdpa_status_t comes with.
 *
 * Each library that links the core (libsdpa, libsdpa_cp, each backend) has
 * its own copy of this state, one message per thread. Its public entry points
 * run through SDPA_ENTRY, so that the message describes the most recent such
 * call on that thread: "" if it succeeded (whatever a candidate it rejected
 * on the way said), one sentence that names the offending field and value if
 * it failed.
 */
#ifndef SDPA_CORE_ERROR_H
#define SDPA_CORE_ERROR_H

#include "sdpa.h"

/* Formats the message, stores it for the calling thread and returns status,
 * so that failures read `return sdpa_fail(SDPA_ERROR_..., "q.dims[3] = %lld ...", ...);`. */
sdpa_status_t sdpa_fail(sdpa_status_t status, const char *format, ...)
        __attribute__((format(printf, 2, 3)));

/* Evaluates expr, an sdpa_status_t; returns it from the enclosing function
 * if it is not SDPA_SUCCESS. */
#define SDPA_TRY(expr)                                                                             \
    do {                                                                                           \
        sdpa_status_t sdpa_try_status_ = (expr);                                                   \
        if (sdpa_try_status_ != SDPA_SUCCESS)                                                      \
            return sdpa_try_status_;                                                               \
    } while (0)

/* The calling thread's most recent message, or "" (never NULL). */
const char *sdpa_error_message(void);

/* Forgets the calling thread's message (a successful call may do this). */
void sdpa_error_clear(void);

/* The status a public entry point returns, its body's, with the calling
 * thread's message made to match it (sdpa.h, "Conventions"): "" after a
 * success; after a failure the message the body left, or the status's name
 * if it left none. Use as `return SDPA_ENTRY(body(...));`: the message is
 * cleared first, so a failure never shows an earlier call's message. */
#define SDPA_ENTRY(body) (sdpa_error_clear(), sdpa_entry_result(body))
sdpa_status_t sdpa_entry_result(sdpa_status_t status);

/* "SDPA_ERROR_INVALID_ARGUMENT", ... */
const char *sdpa_status_string(sdpa_status_t status);

#endif /* SDPA_CORE_ERROR_H */
