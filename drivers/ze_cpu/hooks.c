/*
 * hooks.c - what runs before every Level Zero call the driver receives:
 * the call is counted, and if a fault is armed for this function and this
 * is the nth call, it returns the armed result without doing anything.
 * Test programs use this (zex_cpu.h, ZE_CPU_FAIL) to check that every
 * Level Zero failure they can meet gives a clean error, without a mock.
 *
 * The hooks are generated from entry_points.def, so no function in the
 * driver's tables escapes them. Calls the driver makes to itself
 * (zeMemFreeExt -> zeMemFree) go to the implementation and are not
 * counted: only what the application (or the loader) calls is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ze_cpu.h"
#include "zex_cpu.h"

static const char *const api_names[CPU_ZE_API_COUNT] = {
#define CPU_ZE_API(name, params, args) #name,
#define CPU_ZE_API_UNSUPPORTED(name, params) #name,
#include "entry_points.def"
#undef CPU_ZE_API
#undef CPU_ZE_API_UNSUPPORTED
};

static atomic_uint_fast64_t api_calls[CPU_ZE_API_COUNT];

/* The armed fault. armed_api is read without the lock on every call (-1:
 * nothing armed); the countdown is decremented under the lock so exactly
 * one call of all threads fails. */
static atomic_int armed_api = -1;
static pthread_mutex_t fault_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t armed_countdown;
static ze_result_t armed_result;

/* The id of the function called name, or -1. */
static int api_id(const char *name)
{
    for (int i = 0; i < CPU_ZE_API_COUNT; i++)
        if (strcmp(api_names[i], name) == 0)
            return i;
    return -1;
}

static void arm(int id, uint32_t nth, ze_result_t result)
{
    pthread_mutex_lock(&fault_lock);
    armed_countdown = nth;
    armed_result = result;
    atomic_store(&armed_api, id);
    pthread_mutex_unlock(&fault_lock);
}

/* Counts a call of function id; true (with *result set) if this call is
 * the one the armed fault makes fail. */
static bool enter(cpu_ze_api_id_t id, ze_result_t *result)
{
    atomic_fetch_add_explicit(&api_calls[id], 1, memory_order_relaxed);
    if (atomic_load_explicit(&armed_api, memory_order_relaxed) != (int)id)
        return false;
    bool fire = false;
    pthread_mutex_lock(&fault_lock);
    if (atomic_load(&armed_api) == (int)id && --armed_countdown == 0) {
        fire = true;
        *result = armed_result;
        atomic_store(&armed_api, -1);
    }
    pthread_mutex_unlock(&fault_lock);
    if (fire)
        cpu_ze_fail(*result, "%s: injected fault", api_names[id]);
    return fire;
}

#define CPU_ZE_API(name, params, args)                                                             \
    ze_result_t ZE_APICALL cpu_hook_##name params                                                  \
    {                                                                                              \
        ze_result_t injected_;                                                                     \
        if (enter(CPU_ZE_API_ID_##name, &injected_))                                               \
            return injected_;                                                                      \
        return cpu_##name args;                                                                    \
    }
#define CPU_ZE_API_UNSUPPORTED(name, params)                                                       \
    ze_result_t ZE_APICALL cpu_hook_##name params                                                  \
    {                                                                                              \
        ze_result_t injected_;                                                                     \
        if (enter(CPU_ZE_API_ID_##name, &injected_))                                               \
            return injected_;                                                                      \
        return cpu_ze_fail(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, #name " is not supported");        \
    }
#include "entry_points.def"
#undef CPU_ZE_API
#undef CPU_ZE_API_UNSUPPORTED

ze_result_t ZE_APICALL cpu_zexCpuFaultInject(const char *api_function, uint32_t nth,
                                             ze_result_t result)
{
    if (api_function == NULL) {
        arm(-1, 0, ZE_RESULT_SUCCESS);
        return ZE_RESULT_SUCCESS;
    }
    int id = api_id(api_function);
    if (id < 0)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                           "zexCpuFaultInject: the driver has no function \"%s\"", api_function);
    if (nth == 0)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zexCpuFaultInject: nth = 0");
    arm(id, nth, result);
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZE_APICALL cpu_zexCpuCallCounts(uint32_t *count, const char **names, uint64_t *calls)
{
    CPU_ZE_CHECK_POINTER(count);
    if (*count == 0 || (names == NULL && calls == NULL)) {
        *count = CPU_ZE_API_COUNT;
        return ZE_RESULT_SUCCESS;
    }
    uint32_t n = *count < CPU_ZE_API_COUNT ? *count : CPU_ZE_API_COUNT;
    for (uint32_t i = 0; i < n; i++) {
        if (names != NULL)
            names[i] = api_names[i];
        if (calls != NULL)
            calls[i] = atomic_load_explicit(&api_calls[i], memory_order_relaxed);
    }
    *count = n;
    return ZE_RESULT_SUCCESS;
}

/* A ze_result_t written in decimal or hex (0x...); false if it is not a
 * number. */
static bool parse_result(const char *text, ze_result_t *result)
{
    char *end = NULL;
    bool hex = text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
    unsigned long value = strtoul(text, &end, hex ? 16 : 10);
    if (*text == '\0' || *end != '\0' || value > UINT32_MAX)
        return false;
    *result = (ze_result_t)value;
    return true;
}

/* ZE_CPU_FAIL=function:nth[:result] arms a fault when the driver is loaded,
 * for programs that cannot call zexCpuFaultInject. A malformed value is
 * reported on stderr and arms nothing. */
__attribute__((constructor)) static void arm_from_environment(void)
{
    const char *spec = getenv("ZE_CPU_FAIL");
    if (spec == NULL || *spec == '\0')
        return;
    char name[128];
    size_t name_len = strcspn(spec, ":");
    const char *rest = spec + name_len;
    ze_result_t result = ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
    char *end = NULL;
    unsigned long nth = 0;
    bool ok = name_len > 0 && name_len < sizeof name && *rest == ':';
    if (ok) {
        memcpy(name, spec, name_len);
        name[name_len] = '\0';
        nth = strtoul(rest + 1, &end, 10);
        ok = end != rest + 1 && nth > 0 && nth <= UINT32_MAX &&
             (*end == '\0' || (*end == ':' && parse_result(end + 1, &result)));
    }
    int id = ok ? api_id(name) : -1;
    if (id < 0) {
        fprintf(stderr,
                "ze_cpu: ZE_CPU_FAIL=\"%s\" ignored: expected function:nth[:result] with a Level "
                "Zero function of this driver, nth >= 1\n",
                spec);
        return;
    }
    arm(id, (uint32_t)nth, result);
    if (cpu_ze_debug_enabled())
        fprintf(stderr, "ze_cpu: call %lu of %s will return 0x%x (ZE_CPU_FAIL)\n", nth, name,
                (unsigned)result);
}
