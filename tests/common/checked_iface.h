/*
 * checked_iface.h - a backend's table that checks last_error() after every
 * call: "" after a success, a sentence after a failure (sdpa.h,
 * "Conventions"). The harnesses hand it to the suites in place of the table
 * the front loader gives, so every call a suite makes asserts it.
 */
#ifndef SDPA_TESTS_CHECKED_IFACE_H
#define SDPA_TESTS_CHECKED_IFACE_H

#include "sdpa.h"

/* The checked table in front of iface (the same one for each backend name).
 * Its members call iface's and fail the running test (Check) when
 * last_error() does not match the status; name, versions, last_error and
 * the destroy functions are iface's own. Call it while setting up, from one
 * thread, for at most four backend names per process (it aborts past that);
 * a later call for the same name (the backend opened again) replaces the
 * table it checks. */
const sdpa_backend_iface_t *test_checked_iface(const sdpa_backend_iface_t *iface);

/* 1 if message is what a call that returned status must leave in its
 * library's last_error (sdpa.h, "Conventions"): "" after a success, a
 * sentence after a failure; 0 otherwise (and if message is NULL). For the
 * libraries called without a table: the front loader, libsdpa_cp. */
int test_last_error_matches(sdpa_status_t status, const char *message);

#endif /* SDPA_TESTS_CHECKED_IFACE_H */
