/*
 * ref_fixture.h - the ref backend and one context on it, opened once per
 * Check test case by the ABI suites that run on ref (test_ref, test_merge,
 * test_llm).
 */
#ifndef SDPA_TESTS_REF_FIXTURE_H
#define SDPA_TESTS_REF_FIXTURE_H

#include "sdpa.h"

/* Opens the ref backend through the front loader and creates a default
 * context on it; on failure prints the reason and exits the test program
 * (nothing in the suite can run without them). */
void ref_fixture_open(sdpa_backend_t **backend, const sdpa_backend_iface_t **iface,
                      sdpa_context_t **ctx);

/* Destroys ctx and closes backend (what ref_fixture_open gave). */
void ref_fixture_close(sdpa_backend_t *backend, const sdpa_backend_iface_t *iface,
                       sdpa_context_t *ctx);

/* The same as the fixture of a whole test case: ref_env_open (a Check
 * unchecked fixture) fills ref_env, ref_env_close closes it. */
typedef struct ref_env {
    sdpa_backend_t *backend;
    const sdpa_backend_iface_t *iface;
    sdpa_context_t *ctx;
} ref_env_t;

extern ref_env_t ref_env;
void ref_env_open(void);
void ref_env_close(void);

#endif /* SDPA_TESTS_REF_FIXTURE_H */
