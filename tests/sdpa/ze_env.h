/*
 * ze_env.h - the ze test harness's environment: a Level Zero context on the
 * first device of the first driver (our CPU driver when ZE_ENABLE_ALT_DRIVERS
 * points at it, a GPU otherwise), the ze backend under test and the ref
 * backend (the oracle), both bound to that context, and shared-USM buffers
 * both can read.
 */
#ifndef SDPA_TEST_ZE_ENV_H
#define SDPA_TEST_ZE_ENV_H

#include <stddef.h>

#include <check.h>
#include <level_zero/ze_api.h>

#include "check_main.h"
#include "run_once.h"
#include "sdpa.h"

typedef struct test_env {
    ze_driver_handle_t driver;
    ze_device_handle_t device;
    ze_context_handle_t context;
    ze_device_properties_t device_props;

    sdpa_backend_t *ze_backend, *ref_backend;
    const sdpa_backend_iface_t *ze, *ref;
    sdpa_context_t *ze_ctx, *ref_ctx;
} test_env_t;

/* The descriptor of a context on env's Level Zero context and device,
 * with the backend's own command lists (set command_list to change it). */
sdpa_context_desc_t test_env_context_desc(const test_env_t *env);

/* Opens everything; on failure prints why and returns -1 (leaving nothing
 * open). Sets SDPA_CACHE=0 first unless SDPA_CACHE is set: the persistent
 * module cache is off unless a test asks for it. */
int test_env_open(test_env_t *env);
void test_env_close(test_env_t *env);

/* The environment of a test program's suite. Every sdpa suite runs in one
 * process (CK_NOFORK), so the environment and the ze context's module cache
 * serve all its tests: test_env_fixture (a Check unchecked fixture) opens it
 * once, test_env_run_suite closes it. */
extern test_env_t suite_env;

/* Opens suite_env unless open; fails the running test if it cannot. */
void test_env_fixture(void);

/* The same outside a test (no Check assertion): returns 0 or -1. */
int test_env_open_suite(void);

/* Runs s in one process, closes suite_env, and returns the program's exit
 * status. */
int test_env_run_suite(Suite *s);

/* A new synchronous immediate command list on suite_env's device; fails
 * the running test if it cannot be created. */
ze_command_list_handle_t test_env_sync_list(void);

/* The same, asynchronous: appended work runs after the call returns. */
ze_command_list_handle_t test_env_async_list(void);

/* What an application that records lists and submits them uses: an
 * asynchronous command queue and a regular (not immediate) command list
 * on suite_env's device. Fails the running test if either cannot be
 * created; the caller destroys both. */
void test_env_queue_and_list(ze_command_queue_handle_t *queue, ze_command_list_handle_t *list);

/* The main of most sdpa suite programs: one test case, named like the
 * suite, of the table's tests, each with suite_env open (test_env_fixture),
 * run by test_env_run_suite. */
int test_env_run_table(const char *name, double timeout, const test_entry_t *table, size_t count);

/* Shared USM of bytes bytes (at least 1), 256-byte aligned, zeroed; aborts
 * the test on failure. */
void *test_alloc(test_env_t *env, size_t bytes);
void test_free(test_env_t *env, void *pointer);

/* Shared USM the test does not touch: pages the kernel never reads cost no
 * memory, so a tensor may span more than 2^31 elements cheaply. */
void *test_alloc_untouched(test_env_t *env, size_t bytes);

/* test_alloc and test_free on suite_env, shaped as an allocator of
 * tests/abi/abi_util.h (user is ignored). */
void *suite_shared_alloc(size_t bytes, void *user);
void suite_shared_release(void *pointer, void *user);

/* Modules the ze context has built so far (SDPA_QUERY_MODULES_BUILT). */
uint64_t test_modules_built(test_env_t *env);

/* Creates the ze primitive of p in env (asserting success), copies its
 * SDPA_QUERY_CONFIG_STRING into out (size bytes) and destroys it: which
 * kernel and settings ze chose, for tests that must reach one path. */
void test_config_string(test_env_t *env, const sdpa_problem_desc_t *p, char *out, size_t size);

/* test_config_string, printed as "<what> case <index>: <configuration>";
 * a problem of num_splits > 1 must take the decode kernel and split. */
void test_config_print(test_env_t *env, const sdpa_problem_desc_t *p, const char *what, int index,
                       uint32_t num_splits, char *out, size_t size);

#endif /* SDPA_TEST_ZE_ENV_H */
