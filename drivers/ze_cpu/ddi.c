/*
 * ddi.c - the only exported symbols: the *GetProcAddrTable getters the
 * Level Zero loader requires (17 ze, 12 zet, 17 zes; the *Exp ze tables are
 * optional and not exported).
 *
 * The loader calls every getter with API version 1.4 (newer loaders with a
 * newer version): only fields that exist in the 1.4 tables are written, so a
 * newer, larger table keeps its zeroed tail. Older versions are refused:
 * their tables are smaller than what we would write. Every entry is a
 * hook (hooks.c) in front of the implementation, so calls are counted and
 * faults can be injected; entries the driver does not implement answer
 * ZE_RESULT_ERROR_UNSUPPORTED_FEATURE (entry_points.def lists both kinds).
 * The tools (zet) and sysman (zes) tables are all zero.
 */
#include <string.h>

#include <level_zero/ze_ddi.h>
#include <level_zero/zes_ddi.h>
#include <level_zero/zet_ddi.h>

#include "ze_cpu.h"

#define EXPORT ZE_APIEXPORT ze_result_t ZE_APICALL

/* --- Getters ------------------------------------------------------------------------ */

/* 1.4 or a newer 1.x (whose tables start with the 1.4 fields). */
static ze_result_t check_version(ze_api_version_t version, const void *table)
{
    if (table == NULL)
        return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (ZE_MAJOR_VERSION(version) != 1 || ZE_MINOR_VERSION(version) < 4)
        return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
    return ZE_RESULT_SUCCESS;
}

#define GETTER(name, table_type)                                                                   \
    EXPORT name(ze_api_version_t version, table_type *t);                                          \
    EXPORT name(ze_api_version_t version, table_type *t)

#define BEGIN_TABLE()                                                                              \
    do {                                                                                           \
        ze_result_t r_ = check_version(version, t);                                                \
        if (r_ != ZE_RESULT_SUCCESS)                                                               \
            return r_;                                                                             \
    } while (0)

GETTER(zeGetGlobalProcAddrTable, ze_global_dditable_t)
{
    BEGIN_TABLE();
    t->pfnInit = cpu_hook_zeInit;
    return ZE_RESULT_SUCCESS;
}

GETTER(zeGetDriverProcAddrTable, ze_driver_dditable_t)
{
    BEGIN_TABLE();
    t->pfnGet = cpu_hook_zeDriverGet;
    t->pfnGetApiVersion = cpu_hook_zeDriverGetApiVersion;
    t->pfnGetProperties = cpu_hook_zeDriverGetProperties;
    t->pfnGetIpcProperties = cpu_hook_zeDriverGetIpcProperties;
    t->pfnGetExtensionProperties = cpu_hook_zeDriverGetExtensionProperties;
    t->pfnGetExtensionFunctionAddress = cpu_hook_zeDriverGetExtensionFunctionAddress;
    return ZE_RESULT_SUCCESS;
}

GETTER(zeGetDeviceProcAddrTable, ze_device_dditable_t)
{
    BEGIN_TABLE();
    t->pfnGet = cpu_hook_zeDeviceGet;
    t->pfnGetSubDevices = cpu_hook_zeDeviceGetSubDevices;
    t->pfnGetProperties = cpu_hook_zeDeviceGetProperties;
    t->pfnGetComputeProperties = cpu_hook_zeDeviceGetComputeProperties;
    t->pfnGetModuleProperties = cpu_hook_zeDeviceGetModuleProperties;
    t->pfnGetCommandQueueGroupProperties = cpu_hook_zeDeviceGetCommandQueueGroupProperties;
    t->pfnGetMemoryProperties = cpu_hook_zeDeviceGetMemoryProperties;
    t->pfnGetMemoryAccessProperties = cpu_hook_zeDeviceGetMemoryAccessProperties;
    t->pfnGetCacheProperties = cpu_hook_zeDeviceGetCacheProperties;
    t->pfnGetImageProperties = cpu_hook_zeDeviceGetImageProperties;
    t->pfnGetExternalMemoryProperties = cpu_hook_zeDeviceGetExternalMemoryProperties;
    t->pfnGetP2PProperties = cpu_hook_zeDeviceGetP2PProperties;
    t->pfnCanAccessPeer = cpu_hook_zeDeviceCanAccessPeer;
    t->pfnGetStatus = cpu_hook_zeDeviceGetStatus;
    t->pfnGetGlobalTimestamps = cpu_hook_zeDeviceGetGlobalTimestamps;
    t->pfnReserveCacheExt = cpu_hook_zeDeviceReserveCacheExt;
    t->pfnSetCacheAdviceExt = cpu_hook_zeDeviceSetCacheAdviceExt;
    t->pfnPciGetPropertiesExt = cpu_hook_zeDevicePciGetPropertiesExt;
    return ZE_RESULT_SUCCESS;
}

GETTER(zeGetContextProcAddrTable, ze_context_dditable_t)
{
    BEGIN_TABLE();
    t->pfnCreate = cpu_hook_zeContextCreate;
    t->pfnDestroy = cpu_hook_zeContextDestroy;
    t->pfnGetStatus = cpu_hook_zeContextGetStatus;
    t->pfnSystemBarrier = cpu_hook_zeContextSystemBarrier;
    t->pfnMakeMemoryResident = cpu_hook_zeContextMakeMemoryResident;
    t->pfnEvictMemory = cpu_hook_zeContextEvictMemory;
    t->pfnMakeImageResident = cpu_hook_zeContextMakeImageResident;
    t->pfnEvictImage = cpu_hook_zeContextEvictImage;
    t->pfnCreateEx = cpu_hook_zeContextCreateEx;
    return ZE_RESULT_SUCCESS;
}

GETTER(zeGetCommandQueueProcAddrTable, ze_command_queue_dditable_t)
{
    BEGIN_TABLE();
    t->pfnCreate = cpu_hook_zeCommandQueueCreate;
    t->pfnDestroy = cpu_hook_zeCommandQueueDestroy;
    t->pfnExecuteCommandLists = cpu_hook_zeCommandQueueExecuteCommandLists;
    t->pfnSynchronize = cpu_hook_zeCommandQueueSynchronize;
    return ZE_RESULT_SUCCESS;
}

GETTER(zeGetCommandListProcAddrTable, ze_command_list_dditable_t)
{
    BEGIN_TABLE();
    t->pfnCreate = cpu_hook_zeCommandListCreate;
    t->pfnCreateImmediate = cpu_hook_zeCommandListCreateImmediate;
    t->pfnDestroy = cpu_hook_zeCommandListDestroy;
    t->pfnClose = cpu_hook_zeCommandListClose;
    t->pfnReset = cpu_hook_zeCommandListReset;
    t->pfnAppendWriteGlobalTimestamp = cpu_hook_zeCommandListAppendWriteGlobalTimestamp;
    t->pfnAppendBarrier = cpu_hook_zeCommandListAppendBarrier;
    t->pfnAppendMemoryRangesBarrier = cpu_hook_zeCommandListAppendMemoryRangesBarrier;
    t->pfnAppendMemoryCopy = cpu_hook_zeCommandListAppendMemoryCopy;
    t->pfnAppendMemoryFill = cpu_hook_zeCommandListAppendMemoryFill;
    t->pfnAppendMemoryCopyRegion = cpu_hook_zeCommandListAppendMemoryCopyRegion;
    t->pfnAppendMemoryCopyFromContext = cpu_hook_zeCommandListAppendMemoryCopyFromContext;
    t->pfnAppendImageCopy = cpu_hook_zeCommandListAppendImageCopy;
    t->pfnAppendImageCopyRegion = cpu_hook_zeCommandListAppendImageCopyRegion;
    t->pfnAppendImageCopyToMemory = cpu_hook_zeCommandListAppendImageCopyToMemory;
    t->pfnAppendImageCopyFromMemory = cpu_hook_zeCommandListAppendImageCopyFromMemory;
    t->pfnAppendMemoryPrefetch = cpu_hook_zeCommandListAppendMemoryPrefetch;
    t->pfnAppendMemAdvise = cpu_hook_zeCommandListAppendMemAdvise;
    t->pfnAppendSignalEvent = cpu_hook_zeCommandListAppendSignalEvent;
    t->pfnAppendWaitOnEvents = cpu_hook_zeCommandListAppendWaitOnEvents;
    t->pfnAppendEventReset = cpu_hook_zeCommandListAppendEventReset;
    t->pfnAppendQueryKernelTimestamps = cpu_hook_zeCommandListAppendQueryKernelTimestamps;
    t->pfnAppendLaunchKernel = cpu_hook_zeCommandListAppendLaunchKernel;
    t->pfnAppendLaunchCooperativeKernel = cpu_hook_zeCommandListAppendLaunchCooperativeKernel;
    t->pfnAppendLaunchKernelIndirect = cpu_hook_zeCommandListAppendLaunchKernelIndirect;
    t->pfnAppendLaunchMultipleKernelsIndirect =
            cpu_hook_zeCommandListAppendLaunchMultipleKernelsIndirect;
    t->pfnAppendImageCopyToMemoryExt = cpu_hook_zeCommandListAppendImageCopyToMemoryExt;
    t->pfnAppendImageCopyFromMemoryExt = cpu_hook_zeCommandListAppendImageCopyFromMemoryExt;
    return ZE_RESULT_SUCCESS;
}

GETTER(zeGetImageProcAddrTable, ze_image_dditable_t)
{
    BEGIN_TABLE();
    t->pfnGetProperties = cpu_hook_zeImageGetProperties;
    t->pfnCreate = cpu_hook_zeImageCreate;
    t->pfnDestroy = cpu_hook_zeImageDestroy;
    t->pfnGetAllocPropertiesExt = cpu_hook_zeImageGetAllocPropertiesExt;
    return ZE_RESULT_SUCCESS;
}

GETTER(zeGetFenceProcAddrTable, ze_fence_dditable_t)
{
    BEGIN_TABLE();
    t->pfnCreate = cpu_hook_zeFenceCreate;
    t->pfnDestroy = cpu_hook_zeFenceDestroy;
    t->pfnHostSynchronize = cpu_hook_zeFenceHostSynchronize;
    t->pfnQueryStatus = cpu_hook_zeFenceQueryStatus;
    t->pfnReset = cpu_hook_zeFenceReset;
    return ZE_RESULT_SUCCESS;
}

GETTER(zeGetEventPoolProcAddrTable, ze_event_pool_dditable_t)
{
    BEGIN_TABLE();
    t->pfnCreate = cpu_hook_zeEventPoolCreate;
    t->pfnDestroy = cpu_hook_zeEventPoolDestroy;
    t->pfnGetIpcHandle = cpu_hook_zeEventPoolGetIpcHandle;
    t->pfnOpenIpcHandle = cpu_hook_zeEventPoolOpenIpcHandle;
    t->pfnCloseIpcHandle = cpu_hook_zeEventPoolCloseIpcHandle;
    return ZE_RESULT_SUCCESS;
}

GETTER(zeGetEventProcAddrTable, ze_event_dditable_t)
{
    BEGIN_TABLE();
    t->pfnCreate = cpu_hook_zeEventCreate;
    t->pfnDestroy = cpu_hook_zeEventDestroy;
    t->pfnHostSignal = cpu_hook_zeEventHostSignal;
    t->pfnHostSynchronize = cpu_hook_zeEventHostSynchronize;
    t->pfnQueryStatus = cpu_hook_zeEventQueryStatus;
    t->pfnHostReset = cpu_hook_zeEventHostReset;
    t->pfnQueryKernelTimestamp = cpu_hook_zeEventQueryKernelTimestamp;
    return ZE_RESULT_SUCCESS;
}

GETTER(zeGetModuleProcAddrTable, ze_module_dditable_t)
{
    BEGIN_TABLE();
    t->pfnCreate = cpu_hook_zeModuleCreate;
    t->pfnDestroy = cpu_hook_zeModuleDestroy;
    t->pfnDynamicLink = cpu_hook_zeModuleDynamicLink;
    t->pfnGetNativeBinary = cpu_hook_zeModuleGetNativeBinary;
    t->pfnGetGlobalPointer = cpu_hook_zeModuleGetGlobalPointer;
    t->pfnGetKernelNames = cpu_hook_zeModuleGetKernelNames;
    t->pfnGetProperties = cpu_hook_zeModuleGetProperties;
    t->pfnGetFunctionPointer = cpu_hook_zeModuleGetFunctionPointer;
    t->pfnInspectLinkageExt = cpu_hook_zeModuleInspectLinkageExt;
    return ZE_RESULT_SUCCESS;
}

GETTER(zeGetModuleBuildLogProcAddrTable, ze_module_build_log_dditable_t)
{
    BEGIN_TABLE();
    t->pfnDestroy = cpu_hook_zeModuleBuildLogDestroy;
    t->pfnGetString = cpu_hook_zeModuleBuildLogGetString;
    return ZE_RESULT_SUCCESS;
}

GETTER(zeGetKernelProcAddrTable, ze_kernel_dditable_t)
{
    BEGIN_TABLE();
    t->pfnCreate = cpu_hook_zeKernelCreate;
    t->pfnDestroy = cpu_hook_zeKernelDestroy;
    t->pfnSetCacheConfig = cpu_hook_zeKernelSetCacheConfig;
    t->pfnSetGroupSize = cpu_hook_zeKernelSetGroupSize;
    t->pfnSuggestGroupSize = cpu_hook_zeKernelSuggestGroupSize;
    t->pfnSuggestMaxCooperativeGroupCount = cpu_hook_zeKernelSuggestMaxCooperativeGroupCount;
    t->pfnSetArgumentValue = cpu_hook_zeKernelSetArgumentValue;
    t->pfnSetIndirectAccess = cpu_hook_zeKernelSetIndirectAccess;
    t->pfnGetIndirectAccess = cpu_hook_zeKernelGetIndirectAccess;
    t->pfnGetSourceAttributes = cpu_hook_zeKernelGetSourceAttributes;
    t->pfnGetProperties = cpu_hook_zeKernelGetProperties;
    t->pfnGetName = cpu_hook_zeKernelGetName;
    return ZE_RESULT_SUCCESS;
}

GETTER(zeGetSamplerProcAddrTable, ze_sampler_dditable_t)
{
    BEGIN_TABLE();
    t->pfnCreate = cpu_hook_zeSamplerCreate;
    t->pfnDestroy = cpu_hook_zeSamplerDestroy;
    return ZE_RESULT_SUCCESS;
}

GETTER(zeGetPhysicalMemProcAddrTable, ze_physical_mem_dditable_t)
{
    BEGIN_TABLE();
    t->pfnCreate = cpu_hook_zePhysicalMemCreate;
    t->pfnDestroy = cpu_hook_zePhysicalMemDestroy;
    return ZE_RESULT_SUCCESS;
}

GETTER(zeGetMemProcAddrTable, ze_mem_dditable_t)
{
    BEGIN_TABLE();
    t->pfnAllocShared = cpu_hook_zeMemAllocShared;
    t->pfnAllocDevice = cpu_hook_zeMemAllocDevice;
    t->pfnAllocHost = cpu_hook_zeMemAllocHost;
    t->pfnFree = cpu_hook_zeMemFree;
    t->pfnGetAllocProperties = cpu_hook_zeMemGetAllocProperties;
    t->pfnGetAddressRange = cpu_hook_zeMemGetAddressRange;
    t->pfnGetIpcHandle = cpu_hook_zeMemGetIpcHandle;
    t->pfnOpenIpcHandle = cpu_hook_zeMemOpenIpcHandle;
    t->pfnCloseIpcHandle = cpu_hook_zeMemCloseIpcHandle;
    t->pfnFreeExt = cpu_hook_zeMemFreeExt;
    return ZE_RESULT_SUCCESS;
}

GETTER(zeGetVirtualMemProcAddrTable, ze_virtual_mem_dditable_t)
{
    BEGIN_TABLE();
    t->pfnReserve = cpu_hook_zeVirtualMemReserve;
    t->pfnFree = cpu_hook_zeVirtualMemFree;
    t->pfnQueryPageSize = cpu_hook_zeVirtualMemQueryPageSize;
    t->pfnMap = cpu_hook_zeVirtualMemMap;
    t->pfnUnmap = cpu_hook_zeVirtualMemUnmap;
    t->pfnSetAccessAttribute = cpu_hook_zeVirtualMemSetAccessAttribute;
    t->pfnGetAccessAttribute = cpu_hook_zeVirtualMemGetAccessAttribute;
    return ZE_RESULT_SUCCESS;
}

/* --- Tools and sysman: present because the loader requires them, all zero ----------- */

#define ZERO_GETTER(name, table_type)                                                              \
    GETTER(name, table_type)                                                                       \
    {                                                                                              \
        BEGIN_TABLE();                                                                             \
        memset(t, 0, sizeof *t);                                                                   \
        return ZE_RESULT_SUCCESS;                                                                  \
    }

ZERO_GETTER(zetGetDeviceProcAddrTable, zet_device_dditable_t)
ZERO_GETTER(zetGetContextProcAddrTable, zet_context_dditable_t)
ZERO_GETTER(zetGetCommandListProcAddrTable, zet_command_list_dditable_t)
ZERO_GETTER(zetGetModuleProcAddrTable, zet_module_dditable_t)
ZERO_GETTER(zetGetKernelProcAddrTable, zet_kernel_dditable_t)
ZERO_GETTER(zetGetMetricGroupProcAddrTable, zet_metric_group_dditable_t)
ZERO_GETTER(zetGetMetricProcAddrTable, zet_metric_dditable_t)
ZERO_GETTER(zetGetMetricStreamerProcAddrTable, zet_metric_streamer_dditable_t)
ZERO_GETTER(zetGetMetricQueryPoolProcAddrTable, zet_metric_query_pool_dditable_t)
ZERO_GETTER(zetGetMetricQueryProcAddrTable, zet_metric_query_dditable_t)
ZERO_GETTER(zetGetTracerExpProcAddrTable, zet_tracer_exp_dditable_t)
ZERO_GETTER(zetGetDebugProcAddrTable, zet_debug_dditable_t)

ZERO_GETTER(zesGetDriverProcAddrTable, zes_driver_dditable_t)
ZERO_GETTER(zesGetDeviceProcAddrTable, zes_device_dditable_t)
ZERO_GETTER(zesGetSchedulerProcAddrTable, zes_scheduler_dditable_t)
ZERO_GETTER(zesGetPerformanceFactorProcAddrTable, zes_performance_factor_dditable_t)
ZERO_GETTER(zesGetPowerProcAddrTable, zes_power_dditable_t)
ZERO_GETTER(zesGetFrequencyProcAddrTable, zes_frequency_dditable_t)
ZERO_GETTER(zesGetEngineProcAddrTable, zes_engine_dditable_t)
ZERO_GETTER(zesGetStandbyProcAddrTable, zes_standby_dditable_t)
ZERO_GETTER(zesGetFirmwareProcAddrTable, zes_firmware_dditable_t)
ZERO_GETTER(zesGetMemoryProcAddrTable, zes_memory_dditable_t)
ZERO_GETTER(zesGetFabricPortProcAddrTable, zes_fabric_port_dditable_t)
ZERO_GETTER(zesGetTemperatureProcAddrTable, zes_temperature_dditable_t)
ZERO_GETTER(zesGetPsuProcAddrTable, zes_psu_dditable_t)
ZERO_GETTER(zesGetFanProcAddrTable, zes_fan_dditable_t)
ZERO_GETTER(zesGetLedProcAddrTable, zes_led_dditable_t)
ZERO_GETTER(zesGetRasProcAddrTable, zes_ras_dditable_t)
ZERO_GETTER(zesGetDiagnosticsProcAddrTable, zes_diagnostics_dditable_t)
