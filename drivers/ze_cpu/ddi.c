/*
 * ddi.c - the only exported symbols: the *GetProcAddrTable getters the
 * Level Zero loader requires (17 ze, 12 zet, 17 zes; the *Exp ze tables are
 * optional and not exported).
 *
 * The loader calls every getter with API version 1.4 (newer loaders with a
 * newer version): only fields that exist in the 1.4 tables are written, so a
 * newer, larger table keeps its zeroed tail. Older versions are refused:
 * their tables are smaller than what we would write. Entries the driver
 * does not implement point to functions that return
 * ZE_RESULT_ERROR_UNSUPPORTED_FEATURE; the tools (zet) and sysman (zes)
 * tables are all zero.
 */
#include <string.h>

#include <level_zero/ze_ddi.h>
#include <level_zero/zes_ddi.h>
#include <level_zero/zet_ddi.h>

#include "ze_cpu.h"

#define EXPORT ZE_APIEXPORT ze_result_t ZE_APICALL

/* --- Entry points the driver does not implement ------------------------------------ */

#define UNSUPPORTED(name, ...)                                                                     \
    static ze_result_t ZE_APICALL cpu_##name(__VA_ARGS__)                                          \
    {                                                                                              \
        return cpu_ze_fail(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, #name " is not supported");        \
    }

/* Devices: no cache reservation, no PCI. */
UNSUPPORTED(zeDeviceReserveCacheExt, ze_device_handle_t hDevice, size_t cacheLevel,
            size_t cacheReservationSize)
UNSUPPORTED(zeDeviceSetCacheAdviceExt, ze_device_handle_t hDevice, void *ptr, size_t regionSize,
            ze_cache_ext_region_t cacheRegion)
UNSUPPORTED(zeDevicePciGetPropertiesExt, ze_device_handle_t hDevice,
            ze_pci_ext_properties_t *pPciProperties)
/* Images and samplers. */
UNSUPPORTED(zeContextMakeImageResident, ze_context_handle_t hContext, ze_device_handle_t hDevice,
            ze_image_handle_t hImage)
UNSUPPORTED(zeContextEvictImage, ze_context_handle_t hContext, ze_device_handle_t hDevice,
            ze_image_handle_t hImage)
UNSUPPORTED(zeImageGetProperties, ze_device_handle_t hDevice, const ze_image_desc_t *desc,
            ze_image_properties_t *pImageProperties)
UNSUPPORTED(zeImageCreate, ze_context_handle_t hContext, ze_device_handle_t hDevice,
            const ze_image_desc_t *desc, ze_image_handle_t *phImage)
UNSUPPORTED(zeImageDestroy, ze_image_handle_t hImage)
UNSUPPORTED(zeImageGetAllocPropertiesExt, ze_context_handle_t hContext, ze_image_handle_t hImage,
            ze_image_allocation_ext_properties_t *pImageAllocProperties)
UNSUPPORTED(zeSamplerCreate, ze_context_handle_t hContext, ze_device_handle_t hDevice,
            const ze_sampler_desc_t *desc, ze_sampler_handle_t *phSampler)
UNSUPPORTED(zeSamplerDestroy, ze_sampler_handle_t hSampler)
UNSUPPORTED(zeCommandListAppendImageCopy, ze_command_list_handle_t hCommandList,
            ze_image_handle_t hDstImage, ze_image_handle_t hSrcImage,
            ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t *phWaitEvents)
UNSUPPORTED(zeCommandListAppendImageCopyRegion, ze_command_list_handle_t hCommandList,
            ze_image_handle_t hDstImage, ze_image_handle_t hSrcImage,
            const ze_image_region_t *pDstRegion, const ze_image_region_t *pSrcRegion,
            ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t *phWaitEvents)
UNSUPPORTED(zeCommandListAppendImageCopyToMemory, ze_command_list_handle_t hCommandList,
            void *dstptr, ze_image_handle_t hSrcImage, const ze_image_region_t *pSrcRegion,
            ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t *phWaitEvents)
UNSUPPORTED(zeCommandListAppendImageCopyFromMemory, ze_command_list_handle_t hCommandList,
            ze_image_handle_t hDstImage, const void *srcptr, const ze_image_region_t *pDstRegion,
            ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t *phWaitEvents)
UNSUPPORTED(zeCommandListAppendImageCopyToMemoryExt, ze_command_list_handle_t hCommandList,
            void *dstptr, ze_image_handle_t hSrcImage, const ze_image_region_t *pSrcRegion,
            uint32_t destRowPitch, uint32_t destSlicePitch, ze_event_handle_t hSignalEvent,
            uint32_t numWaitEvents, ze_event_handle_t *phWaitEvents)
UNSUPPORTED(zeCommandListAppendImageCopyFromMemoryExt, ze_command_list_handle_t hCommandList,
            ze_image_handle_t hDstImage, const void *srcptr, const ze_image_region_t *pDstRegion,
            uint32_t srcRowPitch, uint32_t srcSlicePitch, ze_event_handle_t hSignalEvent,
            uint32_t numWaitEvents, ze_event_handle_t *phWaitEvents)
/* Command list features beyond the plugin's needs. */
UNSUPPORTED(zeCommandListAppendMemoryCopyRegion, ze_command_list_handle_t hCommandList,
            void *dstptr, const ze_copy_region_t *dstRegion, uint32_t dstPitch,
            uint32_t dstSlicePitch, const void *srcptr, const ze_copy_region_t *srcRegion,
            uint32_t srcPitch, uint32_t srcSlicePitch, ze_event_handle_t hSignalEvent,
            uint32_t numWaitEvents, ze_event_handle_t *phWaitEvents)
UNSUPPORTED(zeCommandListAppendMemoryCopyFromContext, ze_command_list_handle_t hCommandList,
            void *dstptr, ze_context_handle_t hContextSrc, const void *srcptr, size_t size,
            ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t *phWaitEvents)
UNSUPPORTED(zeCommandListAppendQueryKernelTimestamps, ze_command_list_handle_t hCommandList,
            uint32_t numEvents, ze_event_handle_t *phEvents, void *dstptr, const size_t *pOffsets,
            ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t *phWaitEvents)
UNSUPPORTED(zeCommandListAppendLaunchCooperativeKernel, ze_command_list_handle_t hCommandList,
            ze_kernel_handle_t hKernel, const ze_group_count_t *pLaunchFuncArgs,
            ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t *phWaitEvents)
UNSUPPORTED(zeCommandListAppendLaunchKernelIndirect, ze_command_list_handle_t hCommandList,
            ze_kernel_handle_t hKernel, const ze_group_count_t *pLaunchArgumentsBuffer,
            ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t *phWaitEvents)
UNSUPPORTED(zeCommandListAppendLaunchMultipleKernelsIndirect, ze_command_list_handle_t hCommandList,
            uint32_t numKernels, ze_kernel_handle_t *phKernels, const uint32_t *pCountBuffer,
            const ze_group_count_t *pLaunchArgumentsBuffer, ze_event_handle_t hSignalEvent,
            uint32_t numWaitEvents, ze_event_handle_t *phWaitEvents)
UNSUPPORTED(zeKernelSuggestMaxCooperativeGroupCount, ze_kernel_handle_t hKernel,
            uint32_t *totalGroupCount)
UNSUPPORTED(zeKernelGetSourceAttributes, ze_kernel_handle_t hKernel, uint32_t *pSize,
            char **pString)
/* Linking: modules are built whole from one SPIR-V. */
UNSUPPORTED(zeModuleDynamicLink, uint32_t numModules, ze_module_handle_t *phModules,
            ze_module_build_log_handle_t *phLinkLog)
UNSUPPORTED(zeModuleGetGlobalPointer, ze_module_handle_t hModule, const char *pGlobalName,
            size_t *pSize, void **pptr)
UNSUPPORTED(zeModuleGetFunctionPointer, ze_module_handle_t hModule, const char *pFunctionName,
            void **pfnFunction)
UNSUPPORTED(zeModuleInspectLinkageExt, ze_linkage_inspection_ext_desc_t *pInspectDesc,
            uint32_t numModules, ze_module_handle_t *phModules, ze_module_build_log_handle_t *phLog)
/* Inter-process sharing. */
UNSUPPORTED(zeEventPoolGetIpcHandle, ze_event_pool_handle_t hEventPool,
            ze_ipc_event_pool_handle_t *phIpc)
UNSUPPORTED(zeEventPoolOpenIpcHandle, ze_context_handle_t hContext, ze_ipc_event_pool_handle_t hIpc,
            ze_event_pool_handle_t *phEventPool)
UNSUPPORTED(zeEventPoolCloseIpcHandle, ze_event_pool_handle_t hEventPool)
UNSUPPORTED(zeMemGetIpcHandle, ze_context_handle_t hContext, const void *ptr,
            ze_ipc_mem_handle_t *pIpcHandle)
UNSUPPORTED(zeMemOpenIpcHandle, ze_context_handle_t hContext, ze_device_handle_t hDevice,
            ze_ipc_mem_handle_t handle, ze_ipc_memory_flags_t flags, void **pptr)
UNSUPPORTED(zeMemCloseIpcHandle, ze_context_handle_t hContext, const void *ptr)
/* Virtual and physical memory management. */
UNSUPPORTED(zePhysicalMemCreate, ze_context_handle_t hContext, ze_device_handle_t hDevice,
            ze_physical_mem_desc_t *desc, ze_physical_mem_handle_t *phPhysicalMemory)
UNSUPPORTED(zePhysicalMemDestroy, ze_context_handle_t hContext,
            ze_physical_mem_handle_t hPhysicalMemory)
UNSUPPORTED(zeVirtualMemReserve, ze_context_handle_t hContext, const void *pStart, size_t size,
            void **pptr)
UNSUPPORTED(zeVirtualMemFree, ze_context_handle_t hContext, const void *ptr, size_t size)
UNSUPPORTED(zeVirtualMemQueryPageSize, ze_context_handle_t hContext, ze_device_handle_t hDevice,
            size_t size, size_t *pagesize)
UNSUPPORTED(zeVirtualMemMap, ze_context_handle_t hContext, const void *ptr, size_t size,
            ze_physical_mem_handle_t hPhysicalMemory, size_t offset,
            ze_memory_access_attribute_t access)
UNSUPPORTED(zeVirtualMemUnmap, ze_context_handle_t hContext, const void *ptr, size_t size)
UNSUPPORTED(zeVirtualMemSetAccessAttribute, ze_context_handle_t hContext, const void *ptr,
            size_t size, ze_memory_access_attribute_t access)
UNSUPPORTED(zeVirtualMemGetAccessAttribute, ze_context_handle_t hContext, const void *ptr,
            size_t size, ze_memory_access_attribute_t *access, size_t *outSize)

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
    t->pfnInit = cpu_zeInit;
    return ZE_RESULT_SUCCESS;
}

GETTER(zeGetDriverProcAddrTable, ze_driver_dditable_t)
{
    BEGIN_TABLE();
    t->pfnGet = cpu_zeDriverGet;
    t->pfnGetApiVersion = cpu_zeDriverGetApiVersion;
    t->pfnGetProperties = cpu_zeDriverGetProperties;
    t->pfnGetIpcProperties = cpu_zeDriverGetIpcProperties;
    t->pfnGetExtensionProperties = cpu_zeDriverGetExtensionProperties;
    t->pfnGetExtensionFunctionAddress = cpu_zeDriverGetExtensionFunctionAddress;
    return ZE_RESULT_SUCCESS;
}

GETTER(zeGetDeviceProcAddrTable, ze_device_dditable_t)
{
    BEGIN_TABLE();
    t->pfnGet = cpu_zeDeviceGet;
    t->pfnGetSubDevices = cpu_zeDeviceGetSubDevices;
    t->pfnGetProperties = cpu_zeDeviceGetProperties;
    t->pfnGetComputeProperties = cpu_zeDeviceGetComputeProperties;
    t->pfnGetModuleProperties = cpu_zeDeviceGetModuleProperties;
    t->pfnGetCommandQueueGroupProperties = cpu_zeDeviceGetCommandQueueGroupProperties;
    t->pfnGetMemoryProperties = cpu_zeDeviceGetMemoryProperties;
    t->pfnGetMemoryAccessProperties = cpu_zeDeviceGetMemoryAccessProperties;
    t->pfnGetCacheProperties = cpu_zeDeviceGetCacheProperties;
    t->pfnGetImageProperties = cpu_zeDeviceGetImageProperties;
    t->pfnGetExternalMemoryProperties = cpu_zeDeviceGetExternalMemoryProperties;
    t->pfnGetP2PProperties = cpu_zeDeviceGetP2PProperties;
    t->pfnCanAccessPeer = cpu_zeDeviceCanAccessPeer;
    t->pfnGetStatus = cpu_zeDeviceGetStatus;
    t->pfnGetGlobalTimestamps = cpu_zeDeviceGetGlobalTimestamps;
    t->pfnReserveCacheExt = cpu_zeDeviceReserveCacheExt;
    t->pfnSetCacheAdviceExt = cpu_zeDeviceSetCacheAdviceExt;
    t->pfnPciGetPropertiesExt = cpu_zeDevicePciGetPropertiesExt;
    return ZE_RESULT_SUCCESS;
}

GETTER(zeGetContextProcAddrTable, ze_context_dditable_t)
{
    BEGIN_TABLE();
    t->pfnCreate = cpu_zeContextCreate;
    t->pfnDestroy = cpu_zeContextDestroy;
    t->pfnGetStatus = cpu_zeContextGetStatus;
    t->pfnSystemBarrier = cpu_zeContextSystemBarrier;
    t->pfnMakeMemoryResident = cpu_zeContextMakeMemoryResident;
    t->pfnEvictMemory = cpu_zeContextEvictMemory;
    t->pfnMakeImageResident = cpu_zeContextMakeImageResident;
    t->pfnEvictImage = cpu_zeContextEvictImage;
    t->pfnCreateEx = cpu_zeContextCreateEx;
    return ZE_RESULT_SUCCESS;
}

GETTER(zeGetCommandQueueProcAddrTable, ze_command_queue_dditable_t)
{
    BEGIN_TABLE();
    t->pfnCreate = cpu_zeCommandQueueCreate;
    t->pfnDestroy = cpu_zeCommandQueueDestroy;
    t->pfnExecuteCommandLists = cpu_zeCommandQueueExecuteCommandLists;
    t->pfnSynchronize = cpu_zeCommandQueueSynchronize;
    return ZE_RESULT_SUCCESS;
}

GETTER(zeGetCommandListProcAddrTable, ze_command_list_dditable_t)
{
    BEGIN_TABLE();
    t->pfnCreate = cpu_zeCommandListCreate;
    t->pfnCreateImmediate = cpu_zeCommandListCreateImmediate;
    t->pfnDestroy = cpu_zeCommandListDestroy;
    t->pfnClose = cpu_zeCommandListClose;
    t->pfnReset = cpu_zeCommandListReset;
    t->pfnAppendWriteGlobalTimestamp = cpu_zeCommandListAppendWriteGlobalTimestamp;
    t->pfnAppendBarrier = cpu_zeCommandListAppendBarrier;
    t->pfnAppendMemoryRangesBarrier = cpu_zeCommandListAppendMemoryRangesBarrier;
    t->pfnAppendMemoryCopy = cpu_zeCommandListAppendMemoryCopy;
    t->pfnAppendMemoryFill = cpu_zeCommandListAppendMemoryFill;
    t->pfnAppendMemoryCopyRegion = cpu_zeCommandListAppendMemoryCopyRegion;
    t->pfnAppendMemoryCopyFromContext = cpu_zeCommandListAppendMemoryCopyFromContext;
    t->pfnAppendImageCopy = cpu_zeCommandListAppendImageCopy;
    t->pfnAppendImageCopyRegion = cpu_zeCommandListAppendImageCopyRegion;
    t->pfnAppendImageCopyToMemory = cpu_zeCommandListAppendImageCopyToMemory;
    t->pfnAppendImageCopyFromMemory = cpu_zeCommandListAppendImageCopyFromMemory;
    t->pfnAppendMemoryPrefetch = cpu_zeCommandListAppendMemoryPrefetch;
    t->pfnAppendMemAdvise = cpu_zeCommandListAppendMemAdvise;
    t->pfnAppendSignalEvent = cpu_zeCommandListAppendSignalEvent;
    t->pfnAppendWaitOnEvents = cpu_zeCommandListAppendWaitOnEvents;
    t->pfnAppendEventReset = cpu_zeCommandListAppendEventReset;
    t->pfnAppendQueryKernelTimestamps = cpu_zeCommandListAppendQueryKernelTimestamps;
    t->pfnAppendLaunchKernel = cpu_zeCommandListAppendLaunchKernel;
    t->pfnAppendLaunchCooperativeKernel = cpu_zeCommandListAppendLaunchCooperativeKernel;
    t->pfnAppendLaunchKernelIndirect = cpu_zeCommandListAppendLaunchKernelIndirect;
    t->pfnAppendLaunchMultipleKernelsIndirect =
            cpu_zeCommandListAppendLaunchMultipleKernelsIndirect;
    t->pfnAppendImageCopyToMemoryExt = cpu_zeCommandListAppendImageCopyToMemoryExt;
    t->pfnAppendImageCopyFromMemoryExt = cpu_zeCommandListAppendImageCopyFromMemoryExt;
    return ZE_RESULT_SUCCESS;
}

GETTER(zeGetImageProcAddrTable, ze_image_dditable_t)
{
    BEGIN_TABLE();
    t->pfnGetProperties = cpu_zeImageGetProperties;
    t->pfnCreate = cpu_zeImageCreate;
    t->pfnDestroy = cpu_zeImageDestroy;
    t->pfnGetAllocPropertiesExt = cpu_zeImageGetAllocPropertiesExt;
    return ZE_RESULT_SUCCESS;
}

GETTER(zeGetFenceProcAddrTable, ze_fence_dditable_t)
{
    BEGIN_TABLE();
    t->pfnCreate = cpu_zeFenceCreate;
    t->pfnDestroy = cpu_zeFenceDestroy;
    t->pfnHostSynchronize = cpu_zeFenceHostSynchronize;
    t->pfnQueryStatus = cpu_zeFenceQueryStatus;
    t->pfnReset = cpu_zeFenceReset;
    return ZE_RESULT_SUCCESS;
}

GETTER(zeGetEventPoolProcAddrTable, ze_event_pool_dditable_t)
{
    BEGIN_TABLE();
    t->pfnCreate = cpu_zeEventPoolCreate;
    t->pfnDestroy = cpu_zeEventPoolDestroy;
    t->pfnGetIpcHandle = cpu_zeEventPoolGetIpcHandle;
    t->pfnOpenIpcHandle = cpu_zeEventPoolOpenIpcHandle;
    t->pfnCloseIpcHandle = cpu_zeEventPoolCloseIpcHandle;
    return ZE_RESULT_SUCCESS;
}

GETTER(zeGetEventProcAddrTable, ze_event_dditable_t)
{
    BEGIN_TABLE();
    t->pfnCreate = cpu_zeEventCreate;
    t->pfnDestroy = cpu_zeEventDestroy;
    t->pfnHostSignal = cpu_zeEventHostSignal;
    t->pfnHostSynchronize = cpu_zeEventHostSynchronize;
    t->pfnQueryStatus = cpu_zeEventQueryStatus;
    t->pfnHostReset = cpu_zeEventHostReset;
    t->pfnQueryKernelTimestamp = cpu_zeEventQueryKernelTimestamp;
    return ZE_RESULT_SUCCESS;
}

GETTER(zeGetModuleProcAddrTable, ze_module_dditable_t)
{
    BEGIN_TABLE();
    t->pfnCreate = cpu_zeModuleCreate;
    t->pfnDestroy = cpu_zeModuleDestroy;
    t->pfnDynamicLink = cpu_zeModuleDynamicLink;
    t->pfnGetNativeBinary = cpu_zeModuleGetNativeBinary;
    t->pfnGetGlobalPointer = cpu_zeModuleGetGlobalPointer;
    t->pfnGetKernelNames = cpu_zeModuleGetKernelNames;
    t->pfnGetProperties = cpu_zeModuleGetProperties;
    t->pfnGetFunctionPointer = cpu_zeModuleGetFunctionPointer;
    t->pfnInspectLinkageExt = cpu_zeModuleInspectLinkageExt;
    return ZE_RESULT_SUCCESS;
}

GETTER(zeGetModuleBuildLogProcAddrTable, ze_module_build_log_dditable_t)
{
    BEGIN_TABLE();
    t->pfnDestroy = cpu_zeModuleBuildLogDestroy;
    t->pfnGetString = cpu_zeModuleBuildLogGetString;
    return ZE_RESULT_SUCCESS;
}

GETTER(zeGetKernelProcAddrTable, ze_kernel_dditable_t)
{
    BEGIN_TABLE();
    t->pfnCreate = cpu_zeKernelCreate;
    t->pfnDestroy = cpu_zeKernelDestroy;
    t->pfnSetCacheConfig = cpu_zeKernelSetCacheConfig;
    t->pfnSetGroupSize = cpu_zeKernelSetGroupSize;
    t->pfnSuggestGroupSize = cpu_zeKernelSuggestGroupSize;
    t->pfnSuggestMaxCooperativeGroupCount = cpu_zeKernelSuggestMaxCooperativeGroupCount;
    t->pfnSetArgumentValue = cpu_zeKernelSetArgumentValue;
    t->pfnSetIndirectAccess = cpu_zeKernelSetIndirectAccess;
    t->pfnGetIndirectAccess = cpu_zeKernelGetIndirectAccess;
    t->pfnGetSourceAttributes = cpu_zeKernelGetSourceAttributes;
    t->pfnGetProperties = cpu_zeKernelGetProperties;
    t->pfnGetName = cpu_zeKernelGetName;
    return ZE_RESULT_SUCCESS;
}

GETTER(zeGetSamplerProcAddrTable, ze_sampler_dditable_t)
{
    BEGIN_TABLE();
    t->pfnCreate = cpu_zeSamplerCreate;
    t->pfnDestroy = cpu_zeSamplerDestroy;
    return ZE_RESULT_SUCCESS;
}

GETTER(zeGetPhysicalMemProcAddrTable, ze_physical_mem_dditable_t)
{
    BEGIN_TABLE();
    t->pfnCreate = cpu_zePhysicalMemCreate;
    t->pfnDestroy = cpu_zePhysicalMemDestroy;
    return ZE_RESULT_SUCCESS;
}

GETTER(zeGetMemProcAddrTable, ze_mem_dditable_t)
{
    BEGIN_TABLE();
    t->pfnAllocShared = cpu_zeMemAllocShared;
    t->pfnAllocDevice = cpu_zeMemAllocDevice;
    t->pfnAllocHost = cpu_zeMemAllocHost;
    t->pfnFree = cpu_zeMemFree;
    t->pfnGetAllocProperties = cpu_zeMemGetAllocProperties;
    t->pfnGetAddressRange = cpu_zeMemGetAddressRange;
    t->pfnGetIpcHandle = cpu_zeMemGetIpcHandle;
    t->pfnOpenIpcHandle = cpu_zeMemOpenIpcHandle;
    t->pfnCloseIpcHandle = cpu_zeMemCloseIpcHandle;
    t->pfnFreeExt = cpu_zeMemFreeExt;
    return ZE_RESULT_SUCCESS;
}

GETTER(zeGetVirtualMemProcAddrTable, ze_virtual_mem_dditable_t)
{
    BEGIN_TABLE();
    t->pfnReserve = cpu_zeVirtualMemReserve;
    t->pfnFree = cpu_zeVirtualMemFree;
    t->pfnQueryPageSize = cpu_zeVirtualMemQueryPageSize;
    t->pfnMap = cpu_zeVirtualMemMap;
    t->pfnUnmap = cpu_zeVirtualMemUnmap;
    t->pfnSetAccessAttribute = cpu_zeVirtualMemSetAccessAttribute;
    t->pfnGetAccessAttribute = cpu_zeVirtualMemGetAccessAttribute;
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
