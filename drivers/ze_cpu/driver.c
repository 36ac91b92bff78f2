/* driver.c - zeInit and the driver object (one per process). */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "ze_cpu.h"
#include "zex_cpu.h"

cpu_ze_global_t cpu_ze;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init_engine(void)
{
    cpu_ze.init_result = cpu_ze_engine_open(&cpu_ze.engine);
    atomic_store_explicit(&cpu_ze.ready, cpu_ze.init_result == ZE_RESULT_SUCCESS,
                          memory_order_release);
}

/* The loader calls this at least twice per process: the engine is opened
 * once and every call returns the same answer. ZE_INIT_FLAG_GPU_ONLY is
 * accepted because this driver stands in for a GPU driver in tests. */
CPU_ZE_ENTRY(zeInit, ze_init_flags_t flags)
{
    if (flags & ~(ze_init_flags_t)(ZE_INIT_FLAG_GPU_ONLY | ZE_INIT_FLAG_VPU_ONLY))
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ENUMERATION, "zeInit: flags = 0x%x", flags);
    if (flags == ZE_INIT_FLAG_VPU_ONLY)
        return cpu_ze_fail(ZE_RESULT_ERROR_UNINITIALIZED, "zeInit: VPU_ONLY, and this is a CPU");
    pthread_once(&init_once, init_engine);
    return cpu_ze.init_result;
}

/* A driver handle is valid only after a successful zeInit. */
ze_result_t cpu_ze_check_driver(ze_driver_handle_t driver)
{
    if (!cpu_ze_ready())
        return ZE_RESULT_ERROR_UNINITIALIZED;
    if ((struct cpu_ze_driver *)driver != &cpu_ze.driver)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, "hDriver is not this driver");
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeDriverGet, uint32_t *pCount, ze_driver_handle_t *phDrivers)
{
    CPU_ZE_CHECK_POINTER(pCount);
    if (!cpu_ze_ready()) {
        *pCount = 0;
        return ZE_RESULT_SUCCESS;
    }
    if (*pCount == 0 || phDrivers == NULL) {
        *pCount = 1;
        return ZE_RESULT_SUCCESS;
    }
    phDrivers[0] = (ze_driver_handle_t)&cpu_ze.driver;
    *pCount = 1;
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeDriverGetApiVersion, ze_driver_handle_t hDriver, ze_api_version_t *version)
{
    CPU_ZE_CHECK_DRIVER(hDriver);
    CPU_ZE_CHECK_POINTER(version);
    *version = ZE_API_VERSION_1_4;
    return ZE_RESULT_SUCCESS;
}

/* driverVersion: the package version as major << 24 | minor << 16 | patch. */
static uint32_t package_version(void)
{
    unsigned major = 0, minor = 0, patch = 0;
    sscanf(PACKAGE_VERSION, "%u.%u.%u", &major, &minor, &patch);
    return (major & 0xffu) << 24 | (minor & 0xffu) << 16 | (patch & 0xffffu);
}

CPU_ZE_ENTRY(zeDriverGetProperties, ze_driver_handle_t hDriver,
             ze_driver_properties_t *pDriverProperties)
{
    CPU_ZE_CHECK_DRIVER(hDriver);
    CPU_ZE_CHECK_POINTER(pDriverProperties);
    CPU_ZE_CHECK_STYPE(pDriverProperties, ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES);
    memcpy(pDriverProperties->uuid.id, cpu_ze.engine.driver_uuid, ZE_MAX_DRIVER_UUID_SIZE);
    pDriverProperties->driverVersion = package_version();
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeDriverGetIpcProperties, ze_driver_handle_t hDriver,
             ze_driver_ipc_properties_t *pIpcProperties)
{
    CPU_ZE_CHECK_DRIVER(hDriver);
    CPU_ZE_CHECK_POINTER(pIpcProperties);
    CPU_ZE_CHECK_STYPE(pIpcProperties, ZE_STRUCTURE_TYPE_DRIVER_IPC_PROPERTIES);
    pIpcProperties->flags = 0; /* no IPC */
    return ZE_RESULT_SUCCESS;
}

/* The one extension: ze_float_atomic_ext_properties_t in module properties,
 * when the engine has cl_ext_float_atomics. */
CPU_ZE_ENTRY(zeDriverGetExtensionProperties, ze_driver_handle_t hDriver, uint32_t *pCount,
             ze_driver_extension_properties_t *pExtensionProperties)
{
    CPU_ZE_CHECK_DRIVER(hDriver);
    CPU_ZE_CHECK_POINTER(pCount);
    uint32_t available = cpu_ze.engine.has_float_atomics ? 1 : 0;
    if (*pCount == 0 || pExtensionProperties == NULL) {
        *pCount = available;
        return ZE_RESULT_SUCCESS;
    }
    if (*pCount > available)
        *pCount = available;
    if (*pCount > 0) {
        memset(&pExtensionProperties[0], 0, sizeof pExtensionProperties[0]);
        snprintf(pExtensionProperties[0].name, sizeof pExtensionProperties[0].name, "%s",
                 ZE_FLOAT_ATOMICS_EXT_NAME);
        pExtensionProperties[0].version = ZE_FLOAT_ATOMICS_EXT_VERSION_CURRENT;
    }
    return ZE_RESULT_SUCCESS;
}

/* The driver's own extension functions (zex_cpu.h): fault injection and
 * call counts for test programs. Typed variables check their signatures
 * against the header. */
CPU_ZE_ENTRY(zeDriverGetExtensionFunctionAddress, ze_driver_handle_t hDriver, const char *name,
             void **ppFunctionAddress)
{
    CPU_ZE_CHECK_DRIVER(hDriver);
    CPU_ZE_CHECK_POINTER(name);
    CPU_ZE_CHECK_POINTER(ppFunctionAddress);
    zex_cpu_fault_inject_fn fault_inject = cpu_zexCpuFaultInject;
    zex_cpu_call_counts_fn call_counts = cpu_zexCpuCallCounts;
    if (strcmp(name, ZEX_CPU_FAULT_INJECT_NAME) == 0) {
        *ppFunctionAddress = (void *)fault_inject;
        return ZE_RESULT_SUCCESS;
    }
    if (strcmp(name, ZEX_CPU_CALL_COUNTS_NAME) == 0) {
        *ppFunctionAddress = (void *)call_counts;
        return ZE_RESULT_SUCCESS;
    }
    *ppFunctionAddress = NULL;
    return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                       "zeDriverGetExtensionFunctionAddress: no extension function \"%s\"", name);
}
