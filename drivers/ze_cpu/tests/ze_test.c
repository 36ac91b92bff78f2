/* ze_test.c - the shared Level Zero environment of the driver tests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "spec_table.h"
#include "spirv_registry.h"
#include "ze_test.h"

static ze_test_env_t env;
static bool env_ready;

typedef struct cached_module {
    int subgroup_size;
    bool specialized;
    probe_constants_t constants;
    ze_module_handle_t module;
} cached_module_t;

static cached_module_t modules[8];
static size_t num_modules;

const ze_test_env_t *ze_test_env(void)
{
    if (env_ready)
        return &env;
    ZE_OK(zeInit(0));
    uint32_t count = 1;
    ZE_OK(zeDriverGet(&count, &env.driver));
    ck_assert_uint_ge(count, 1);
    count = 1;
    ZE_OK(zeDeviceGet(env.driver, &count, &env.device));
    ck_assert_uint_ge(count, 1);
    env.properties.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
    ZE_OK(zeDeviceGetProperties(env.device, &env.properties));
    ze_context_desc_t context_desc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    ZE_OK(zeContextCreate(env.driver, &context_desc, &env.context));
    env_ready = true;
    env.sync_list = ze_test_immediate_list(ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
    return &env;
}

/* Runs outside any test (after the runner): reports instead of asserting. */
static void teardown_call(const char *what, ze_result_t r)
{
    if (r != ZE_RESULT_SUCCESS)
        fprintf(stderr, "teardown: %s returned %s\n", what, ze_result_name(r));
}

void ze_test_teardown(void)
{
    if (!env_ready)
        return;
    for (size_t i = 0; i < num_modules; i++)
        teardown_call("zeModuleDestroy", zeModuleDestroy(modules[i].module));
    num_modules = 0;
    teardown_call("zeCommandListDestroy", zeCommandListDestroy(env.sync_list));
    teardown_call("zeContextDestroy", zeContextDestroy(env.context));
    env_ready = false;
}

const uint8_t *ze_test_probe_spirv(int subgroup_size, size_t *size)
{
    const sdpa_spirv_module_t *m = sdpa_spirv_find("spec_probe", 0, subgroup_size);
    ck_assert_msg(m != NULL, "no spec_probe variant for sub-group size %d", subgroup_size);
    *size = m->size;
    return m->code;
}

ze_module_desc_t ze_test_probe_module_desc(int subgroup_size)
{
    size_t size;
    const uint8_t *code = ze_test_probe_spirv(subgroup_size, &size);
    return (ze_module_desc_t){.stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
                              .format = ZE_MODULE_FORMAT_IL_SPIRV,
                              .inputSize = size,
                              .pInputModule = code};
}

static bool same_constants(const probe_constants_t *a, const probe_constants_t *b)
{
    return a->i == b->i && a->u == b->u && a->l == b->l && a->f == b->f && a->b == b->b;
}

ze_module_handle_t ze_test_probe_module(int subgroup_size, const probe_constants_t *c)
{
    const ze_test_env_t *e = ze_test_env();
    for (size_t i = 0; i < num_modules; i++)
        if (modules[i].subgroup_size == subgroup_size && modules[i].specialized == (c != NULL) &&
            (c == NULL || same_constants(&modules[i].constants, c)))
            return modules[i].module;
    ck_assert_uint_lt(num_modules, sizeof modules / sizeof modules[0]);

    /* Values are passed with the size the SPIR-V gives each constant; the
     * bool travels as one byte. */
    uint8_t b = c && c->b ? 1 : 0;
    uint32_t ids[5] = {SDPA_SC_PROBE_INT, SDPA_SC_PROBE_UINT, SDPA_SC_PROBE_LONG,
                       SDPA_SC_PROBE_FLOAT, SDPA_SC_PROBE_BOOL};
    const void *values[5] = {c ? &c->i : NULL, c ? &c->u : NULL, c ? &c->l : NULL, c ? &c->f : NULL,
                             &b};
    ck_assert_uint_eq(sdpa_spec_constant_find(SDPA_SC_PROBE_BOOL)->size, 1);
    ze_module_constants_t constants = {5, ids, values};
    ze_module_desc_t desc = ze_test_probe_module_desc(subgroup_size);
    desc.pBuildFlags = "";
    desc.pConstants = c ? &constants : NULL;
    ze_module_handle_t module = NULL;
    ze_module_build_log_handle_t log = NULL;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ze_result_t r = zeModuleCreate(e->context, e->device, &desc, &module, &log);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (r != ZE_RESULT_SUCCESS) {
        size_t log_size = 0;
        zeModuleBuildLogGetString(log, &log_size, NULL);
        char *text = calloc(1, log_size + 1);
        zeModuleBuildLogGetString(log, &log_size, text);
        fprintf(stderr, "spec_probe build log:\n%s\n", text);
        free(text);
    }
    zeModuleBuildLogDestroy(log);
    ck_assert_msg(r == ZE_RESULT_SUCCESS, "zeModuleCreate(spec_probe.0.%d) returned %s",
                  subgroup_size, ze_result_name(r));
    printf("built spec_probe.0.%d (%s) in %.3f s\n", subgroup_size,
           c ? "specialized" : "default constants",
           (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
    fflush(stdout);
    cached_module_t *slot = &modules[num_modules++];
    slot->subgroup_size = subgroup_size;
    slot->specialized = c != NULL;
    if (c != NULL)
        slot->constants = *c;
    slot->module = module;
    return module;
}

ze_kernel_handle_t ze_test_kernel(ze_module_handle_t module, const char *name)
{
    ze_kernel_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = name};
    ze_kernel_handle_t kernel = NULL;
    ZE_OK(zeKernelCreate(module, &desc, &kernel));
    return kernel;
}

void *ze_test_alloc_device(size_t size)
{
    const ze_test_env_t *e = ze_test_env();
    ze_device_mem_alloc_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
    void *ptr = NULL;
    ZE_OK(zeMemAllocDevice(e->context, &desc, size, 64, e->device, &ptr));
    return ptr;
}

void *ze_test_alloc_host(size_t size)
{
    const ze_test_env_t *e = ze_test_env();
    ze_host_mem_alloc_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    void *ptr = NULL;
    ZE_OK(zeMemAllocHost(e->context, &desc, size, 64, &ptr));
    return ptr;
}

void *ze_test_alloc_shared(size_t size)
{
    const ze_test_env_t *e = ze_test_env();
    ze_device_mem_alloc_desc_t device_desc = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
    ze_host_mem_alloc_desc_t host_desc = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    void *ptr = NULL;
    ZE_OK(zeMemAllocShared(e->context, &device_desc, &host_desc, size, 64, e->device, &ptr));
    return ptr;
}

void ze_test_free(void *ptr)
{
    ZE_OK(zeMemFree(ze_test_env()->context, ptr));
}

ze_event_pool_handle_t ze_test_event_pool(uint32_t count, ze_event_pool_flags_t flags)
{
    const ze_test_env_t *e = ze_test_env();
    ze_event_pool_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
                                 .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE | flags,
                                 .count = count};
    ze_event_pool_handle_t pool = NULL;
    ZE_OK(zeEventPoolCreate(e->context, &desc, 1, (ze_device_handle_t *)&e->device, &pool));
    return pool;
}

ze_event_handle_t ze_test_event(ze_event_pool_handle_t pool, uint32_t index)
{
    ze_event_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC,
                            .index = index,
                            .signal = ZE_EVENT_SCOPE_FLAG_HOST,
                            .wait = ZE_EVENT_SCOPE_FLAG_HOST};
    ze_event_handle_t event = NULL;
    ZE_OK(zeEventCreate(pool, &desc, &event));
    return event;
}

ze_command_list_handle_t ze_test_list(void)
{
    const ze_test_env_t *e = ze_test_env();
    ze_command_list_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC};
    ze_command_list_handle_t list = NULL;
    ZE_OK(zeCommandListCreate(e->context, e->device, &desc, &list));
    return list;
}

ze_command_queue_handle_t ze_test_queue(ze_command_queue_mode_t mode)
{
    const ze_test_env_t *e = ze_test_env();
    ze_command_queue_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, .mode = mode};
    ze_command_queue_handle_t queue = NULL;
    ZE_OK(zeCommandQueueCreate(e->context, e->device, &desc, &queue));
    return queue;
}

ze_command_list_handle_t ze_test_immediate_list(ze_command_queue_mode_t mode)
{
    const ze_test_env_t *e = ze_test_env();
    ze_command_queue_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, .mode = mode};
    ze_command_list_handle_t list = NULL;
    ZE_OK(zeCommandListCreateImmediate(e->context, e->device, &desc, &list));
    return list;
}

void ze_test_launch_sync(ze_kernel_handle_t kernel, uint32_t gx, uint32_t gy, uint32_t gz)
{
    ze_group_count_t groups = {gx, gy, gz};
    ZE_OK(zeCommandListAppendLaunchKernel(ze_test_env()->sync_list, kernel, &groups, NULL, 0,
                                          NULL));
}

void ze_test_sleep_ms(unsigned ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}
