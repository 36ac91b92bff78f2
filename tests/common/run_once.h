/*
 * run_once.h - a problem run once on a backend: create, execute, destroy.
 */
#ifndef SDPA_TESTS_RUN_ONCE_H
#define SDPA_TESTS_RUN_ONCE_H

#include "sdpa.h"

/* Creates problem d on backend iface in ctx, executes it once with args a
 * and destroys it; returns the status of create, else of execute. */
sdpa_status_t test_run_once(const sdpa_backend_iface_t *iface, sdpa_context_t *ctx,
                            const sdpa_problem_desc_t *d, const sdpa_exec_args_t *a);

#endif /* SDPA_TESTS_RUN_ONCE_H */
