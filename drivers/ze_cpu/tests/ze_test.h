/*
 * ze_test.h - what the CPU driver's Check tests share: one lazily created
 * Level Zero environment (driver, device, context, a synchronous immediate
 * list, probe modules cached by specialization), assertion macros that name
 * the failing call and its result, and small allocation helpers.
 *
 * Everything goes through the real loader (libze_loader); the tests never
 * call the driver directly. In Check's fork mode every test builds its own
 * environment in its own process; with CK_FORK=no (valgrind) the tests
 * share one, torn down by ze_test_teardown() so a leak check sees nothing
 * of ours left.
 */
#ifndef SDPA_TESTS_ZE_TEST_H
#define SDPA_TESTS_ZE_TEST_H

#include <check.h>
#include <level_zero/ze_api.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "check_main.h"     /* tests/common */
#include "ze_result_name.h" /* src/zeutil */

/* Fails the test unless call returns ZE_RESULT_SUCCESS. */
#define ZE_OK(call)                                                                                \
    do {                                                                                           \
        ze_result_t r_ = (call);                                                                   \
        ck_assert_msg(r_ == ZE_RESULT_SUCCESS, "%s returned %s", #call, ze_result_name(r_));       \
    } while (0)

/* Fails the test unless call returns expected. */
#define ZE_EXPECT(expected, call)                                                                  \
    do {                                                                                           \
        ze_result_t r_ = (call);                                                                   \
        ck_assert_msg(r_ == (expected), "%s returned %s, expected %s", #call, ze_result_name(r_),  \
                      ze_result_name(expected));                                                   \
    } while (0)

typedef struct ze_test_env {
    ze_driver_handle_t driver;
    ze_device_handle_t device;
    ze_context_handle_t context;
    ze_command_list_handle_t sync_list; /* synchronous immediate list */
    ze_device_properties_t properties;
} ze_test_env_t;

/* The environment, created on first use (zeInit, first driver, first
 * device, a context); aborts the test if there is none. */
const ze_test_env_t *ze_test_env(void);

/* Destroys everything ze_test_env and ze_test_probe_module created. */
void ze_test_teardown(void);

/* Values of the five probe constants (spec_constants.def, ids 1-5). */
typedef struct probe_constants {
    int32_t i;
    uint32_t u;
    int64_t l;
    float f;
    bool b;
} probe_constants_t;

/* spec_probe compiled for subgroup_size (8 or 16), specialized with c (NULL:
 * no ze_module_constants_t, the defaults apply). Built once per
 * (subgroup_size, constants) and owned by the environment. */
ze_module_handle_t ze_test_probe_module(int subgroup_size, const probe_constants_t *c);

/* Runs module's spec_probe kernel (which writes its five constants through
 * a pointer) and asserts it read c; what names the module in the output.
 * (t_module.c) */
void ze_test_expect_constants(const char *what, ze_module_handle_t module,
                              const probe_constants_t *c);

/* The SPIR-V of spec_probe for subgroup_size, from libsdpa_spirv. */
const uint8_t *ze_test_probe_spirv(int subgroup_size, size_t *size);

/* A module description of that SPIR-V (no build flags, no constants). */
ze_module_desc_t ze_test_probe_module_desc(int subgroup_size);

/* A kernel of module; the caller destroys it. */
ze_kernel_handle_t ze_test_kernel(ze_module_handle_t module, const char *name);

/* USM allocations in the environment's context; ze_test_free releases. */
void *ze_test_alloc_device(size_t size);
void *ze_test_alloc_host(size_t size);
void *ze_test_alloc_shared(size_t size);
void ze_test_free(void *ptr);

/* Host-visible event pool of count events (plus extra flags). */
ze_event_pool_handle_t ze_test_event_pool(uint32_t count, ze_event_pool_flags_t flags);
ze_event_handle_t ze_test_event(ze_event_pool_handle_t pool, uint32_t index);

/* A regular command list, and queues/immediate lists of a given mode. */
ze_command_list_handle_t ze_test_list(void);
ze_command_queue_handle_t ze_test_queue(ze_command_queue_mode_t mode);
ze_command_list_handle_t ze_test_immediate_list(ze_command_queue_mode_t mode);

/* Runs the synchronous immediate list's launch of kernel over groups. */
void ze_test_launch_sync(ze_kernel_handle_t kernel, uint32_t gx, uint32_t gy, uint32_t gz);

/* Sleeps ms milliseconds (to give a wrongly ordered execution time to show). */
void ze_test_sleep_ms(unsigned ms);

/* The suites, one per file. */
Suite *driver_device_suite(void);
Suite *driver_memory_suite(void);
Suite *driver_module_suite(void);
Suite *driver_native_suite(void);
Suite *driver_kernel_suite(void);
Suite *driver_ordering_suite(void);
Suite *driver_errors_suite(void);
Suite *driver_hooks_suite(void);
Suite *driver_lifetime_suite(void);

#endif /* SDPA_TESTS_ZE_TEST_H */
