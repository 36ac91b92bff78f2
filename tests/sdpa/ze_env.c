/* ze_env.c - Level Zero set-up and shared memory for the ze tests. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked_iface.h"
#include "ze_env.h"

sdpa_context_desc_t test_env_context_desc(const test_env_t *env)
{
    return (sdpa_context_desc_t){.struct_size = sizeof(sdpa_context_desc_t),
                                 .struct_version = SDPA_CONTEXT_DESC_VERSION,
                                 .ze_context = env->context,
                                 .ze_device = env->device};
}

static int open_backend(const char *name, test_env_t *env, sdpa_backend_t **backend,
                        const sdpa_backend_iface_t **iface, sdpa_context_t **ctx)
{
    if (sdpa_backend_open(name, backend) != SDPA_SUCCESS) {
        fprintf(stderr, "cannot open backend %s: %s\n", name, sdpa_loader_last_error());
        return -1;
    }
    *iface = test_checked_iface(sdpa_backend_get_iface(*backend));
    const sdpa_context_desc_t desc = test_env_context_desc(env);
    if ((*iface)->context_create(&desc, ctx) != SDPA_SUCCESS) {
        fprintf(stderr, "backend %s: context_create: %s\n", name, (*iface)->last_error());
        return -1;
    }
    return 0;
}

int test_env_open(test_env_t *env)
{
    memset(env, 0, sizeof(*env));
    /* The persistent module cache stays off unless the caller turned it on
     * (tests/cache does): run by hand, a test must not fill the user's
     * cache, and its "modules built" counts must count builds. */
    setenv("SDPA_CACHE", "0", 0);
    if (zeInit(0) != ZE_RESULT_SUCCESS) {
        fprintf(stderr, "zeInit failed: is ZE_ENABLE_ALT_DRIVERS set to the CPU driver?\n");
        return -1;
    }
    uint32_t count = 1;
    if (zeDriverGet(&count, &env->driver) != ZE_RESULT_SUCCESS || count == 0) {
        fprintf(stderr, "no Level Zero driver\n");
        return -1;
    }
    count = 1;
    if (zeDeviceGet(env->driver, &count, &env->device) != ZE_RESULT_SUCCESS || count == 0) {
        fprintf(stderr, "no Level Zero device\n");
        return -1;
    }
    env->device_props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
    zeDeviceGetProperties(env->device, &env->device_props);
    ze_context_desc_t cdesc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    if (zeContextCreate(env->driver, &cdesc, &env->context) != ZE_RESULT_SUCCESS) {
        fprintf(stderr, "zeContextCreate failed\n");
        return -1;
    }
    if (open_backend("ze", env, &env->ze_backend, &env->ze, &env->ze_ctx) != 0 ||
        open_backend("ref", env, &env->ref_backend, &env->ref, &env->ref_ctx) != 0) {
        test_env_close(env);
        return -1;
    }
    printf("device: %s (%s)\n", env->device_props.name,
           env->device_props.type == ZE_DEVICE_TYPE_CPU ? "CPU" : "GPU or other");
    return 0;
}

void test_env_close(test_env_t *env)
{
    if (env->ze_ctx)
        env->ze->context_destroy(env->ze_ctx);
    if (env->ref_ctx)
        env->ref->context_destroy(env->ref_ctx);
    sdpa_backend_close(env->ze_backend);
    sdpa_backend_close(env->ref_backend);
    if (env->context)
        zeContextDestroy(env->context);
    memset(env, 0, sizeof(*env));
}

void *test_alloc_untouched(test_env_t *env, size_t bytes)
{
    ze_device_mem_alloc_desc_t ddesc = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
    ze_host_mem_alloc_desc_t hdesc = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    void *pointer = NULL;
    ze_result_t result = zeMemAllocShared(env->context, &ddesc, &hdesc, bytes ? bytes : 1, 256,
                                          env->device, &pointer);
    ck_assert_msg(result == ZE_RESULT_SUCCESS, "zeMemAllocShared(%zu) failed: 0x%x", bytes,
                  (unsigned)result);
    return pointer;
}

void *test_alloc(test_env_t *env, size_t bytes)
{
    void *pointer = test_alloc_untouched(env, bytes);
    memset(pointer, 0, bytes);
    return pointer;
}

void test_free(test_env_t *env, void *pointer)
{
    if (pointer)
        zeMemFree(env->context, pointer);
}

void *suite_shared_alloc(size_t bytes, void *user)
{
    (void)user;
    return test_alloc(&suite_env, bytes);
}

void suite_shared_release(void *pointer, void *user)
{
    (void)user;
    test_free(&suite_env, pointer);
}

uint64_t test_modules_built(test_env_t *env)
{
    uint64_t built = 0;
    ck_assert_int_eq(
            env->ze->context_query(env->ze_ctx, SDPA_QUERY_MODULES_BUILT, &built, sizeof(built)),
            SDPA_SUCCESS);
    return built;
}

void test_config_string(test_env_t *env, const sdpa_problem_desc_t *p, char *out, size_t size)
{
    sdpa_primitive_t *prim = NULL;
    sdpa_status_t status = env->ze->primitive_create(env->ze_ctx, p, &prim);
    ck_assert_msg(status == SDPA_SUCCESS, "%s: %s", sdpa_status_name(status),
                  env->ze->last_error());
    status = env->ze->primitive_query(prim, SDPA_QUERY_CONFIG_STRING, out, size);
    env->ze->primitive_destroy(prim);
    ck_assert_int_eq(status, SDPA_SUCCESS);
}

void test_config_print(test_env_t *env, const sdpa_problem_desc_t *p, const char *what, int index,
                       uint32_t num_splits, char *out, size_t size)
{
    test_config_string(env, p, out, size);
    printf("%s case %d: %s\n", what, index, out);
    if (num_splits > 1)
        ck_assert_msg(strstr(out, "fwd decode") != NULL && strstr(out, "splits=1") == NULL,
                      "not split: %s", out);
}

test_env_t suite_env;
static int suite_env_open;

int test_env_open_suite(void)
{
    if (!suite_env_open && test_env_open(&suite_env) == 0)
        suite_env_open = 1;
    return suite_env_open ? 0 : -1;
}

void test_env_fixture(void)
{
    ck_assert_int_eq(test_env_open_suite(), 0);
}

int test_env_run_suite(Suite *s)
{
    SRunner *runner = srunner_create(s);
    srunner_set_fork_status(runner, CK_NOFORK);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    if (suite_env_open)
        test_env_close(&suite_env);
    suite_env_open = 0;
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

static ze_command_list_handle_t immediate_list(ze_command_queue_mode_t mode)
{
    ze_command_queue_desc_t q = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, .mode = mode};
    ze_command_list_handle_t list = NULL;
    ck_assert_int_eq(zeCommandListCreateImmediate(suite_env.context, suite_env.device, &q, &list),
                     ZE_RESULT_SUCCESS);
    return list;
}

ze_command_list_handle_t test_env_sync_list(void)
{
    return immediate_list(ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
}

ze_command_list_handle_t test_env_async_list(void)
{
    return immediate_list(ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
}

void test_env_queue_and_list(ze_command_queue_handle_t *queue, ze_command_list_handle_t *list)
{
    ze_command_queue_desc_t qdesc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                     .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS};
    ck_assert_int_eq(zeCommandQueueCreate(suite_env.context, suite_env.device, &qdesc, queue),
                     ZE_RESULT_SUCCESS);
    ze_command_list_desc_t ldesc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC};
    ck_assert_int_eq(zeCommandListCreate(suite_env.context, suite_env.device, &ldesc, list),
                     ZE_RESULT_SUCCESS);
}

int test_env_run_table(const char *name, double timeout, const test_entry_t *table, size_t count)
{
    Suite *s = suite_create(name);
    TCase *t = test_add_case(s, name, timeout, table, count);
    tcase_add_unchecked_fixture(t, test_env_fixture, NULL);
    return test_env_run_suite(s);
}
