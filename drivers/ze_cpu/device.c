/*
 * device.c - the one device: the OpenCL platform's CPU, described with the
 * facts engine.c read (nothing here is invented; what a CPU has no
 * counterpart for is 0 and documented in doc/cpu-driver.md).
 */
#include <stdio.h>
#include <string.h>

#include "ze_cpu.h"

ze_result_t cpu_ze_check_device(ze_device_handle_t device)
{
    if (!cpu_ze_ready())
        return ZE_RESULT_ERROR_UNINITIALIZED;
    if ((struct cpu_ze_device *)device != &cpu_ze.device)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, "hDevice is not this device");
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeDeviceGet, ze_driver_handle_t hDriver, uint32_t *pCount,
             ze_device_handle_t *phDevices)
{
    if (!cpu_ze_ready())
        return ZE_RESULT_ERROR_UNINITIALIZED;
    if ((struct cpu_ze_driver *)hDriver != &cpu_ze.driver)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, "zeDeviceGet: bad hDriver");
    CPU_ZE_CHECK_POINTER(pCount);
    if (*pCount == 0 || phDevices == NULL) {
        *pCount = 1;
        return ZE_RESULT_SUCCESS;
    }
    phDevices[0] = (ze_device_handle_t)&cpu_ze.device;
    *pCount = 1;
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeDeviceGetSubDevices, ze_device_handle_t hDevice, uint32_t *pCount,
             ze_device_handle_t *phSubdevices)
{
    CPU_ZE_CHECK_DEVICE(hDevice);
    CPU_ZE_CHECK_POINTER(pCount);
    *pCount = 0;
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeDeviceGetProperties, ze_device_handle_t hDevice,
             ze_device_properties_t *pDeviceProperties)
{
    CPU_ZE_CHECK_DEVICE(hDevice);
    CPU_ZE_CHECK_POINTER(pDeviceProperties);
    ze_device_properties_t *p = pDeviceProperties;
    if (p->stype != ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES &&
        p->stype != ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2 &&
        !cpu_ze_stype_unset(p->stype, "pDeviceProperties", __func__))
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ARGUMENT, "zeDeviceGetProperties: stype = 0x%x",
                           (unsigned)p->stype);
    const cpu_ze_engine_t *e = &cpu_ze.engine;
    p->type = ZE_DEVICE_TYPE_CPU;
    p->vendorId = e->vendor_id;
    p->deviceId = 0; /* a CPU has no PCI device id */
    p->flags = ZE_DEVICE_PROPERTY_FLAG_INTEGRATED;
    p->subdeviceId = 0;
    p->coreClockRate = e->clock_mhz;
    p->maxMemAllocSize = e->max_mem_alloc_size;
    p->maxHardwareContexts = 1;
    p->maxCommandQueuePriority = 0; /* priorities are accepted and ignored */
    p->numThreadsPerEU = 1;
    p->physicalEUSimdWidth = e->native_vector_width_float;
    p->numEUsPerSubslice = 1;
    p->numSubslicesPerSlice = e->compute_units;
    p->numSlices = 1;
    /* Nanoseconds; the 1.2 struct asks for a frequency instead. */
    p->timerResolution = p->stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2 ? 1000000000u : 1u;
    /* The clock is 64-bit ns, but programs mask with (1ull << bits) - 1,
     * undefined at 64 (ze_peak's latencies came out 0): 63 bits of ns wrap
     * after 292 years. */
    p->timestampValidBits = 63;
    p->kernelTimestampValidBits = 63;
    memcpy(p->uuid.id, e->device_uuid, ZE_MAX_DEVICE_UUID_SIZE);
    snprintf(p->name, sizeof p->name, "%s", e->device_name);
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeDeviceGetComputeProperties, ze_device_handle_t hDevice,
             ze_device_compute_properties_t *pComputeProperties)
{
    CPU_ZE_CHECK_DEVICE(hDevice);
    CPU_ZE_CHECK_POINTER(pComputeProperties);
    CPU_ZE_CHECK_STYPE(pComputeProperties, ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES);
    const cpu_ze_engine_t *e = &cpu_ze.engine;
    ze_device_compute_properties_t *p = pComputeProperties;
    p->maxTotalGroupSize = (uint32_t)e->max_work_group_size;
    p->maxGroupSizeX = (uint32_t)e->max_work_item_sizes[0];
    p->maxGroupSizeY = (uint32_t)e->max_work_item_sizes[1];
    p->maxGroupSizeZ = (uint32_t)e->max_work_item_sizes[2];
    /* OpenCL's global size is a size_t: any 32-bit group count fits. */
    p->maxGroupCountX = p->maxGroupCountY = p->maxGroupCountZ = UINT32_MAX;
    p->maxSharedLocalMemory = (uint32_t)e->local_mem_size;
    p->numSubGroupSizes = e->num_sub_group_sizes;
    memset(p->subGroupSizes, 0, sizeof p->subGroupSizes);
    for (uint32_t i = 0; i < e->num_sub_group_sizes && i < ZE_SUBGROUPSIZE_COUNT; i++)
        p->subGroupSizes[i] = e->sub_group_sizes[i];
    return ZE_RESULT_SUCCESS;
}

static ze_device_fp_flags_t fp_flags(cl_device_fp_config config)
{
    ze_device_fp_flags_t flags = 0;
    if (config & CL_FP_DENORM)
        flags |= ZE_DEVICE_FP_FLAG_DENORM;
    if (config & CL_FP_INF_NAN)
        flags |= ZE_DEVICE_FP_FLAG_INF_NAN;
    if (config & CL_FP_ROUND_TO_NEAREST)
        flags |= ZE_DEVICE_FP_FLAG_ROUND_TO_NEAREST;
    if (config & CL_FP_ROUND_TO_ZERO)
        flags |= ZE_DEVICE_FP_FLAG_ROUND_TO_ZERO;
    if (config & CL_FP_ROUND_TO_INF)
        flags |= ZE_DEVICE_FP_FLAG_ROUND_TO_INF;
    if (config & CL_FP_FMA)
        flags |= ZE_DEVICE_FP_FLAG_FMA;
    if (config & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT)
        flags |= ZE_DEVICE_FP_FLAG_ROUNDED_DIVIDE_SQRT;
    if (config & CL_FP_SOFT_FLOAT)
        flags |= ZE_DEVICE_FP_FLAG_SOFT_FLOAT;
    return flags;
}

/* cl_ext_float_atomics capabilities use the same bits as Level Zero's. */
static ze_device_fp_atomic_ext_flags_t fp_atomic_flags(cl_bitfield caps)
{
    return (ze_device_fp_atomic_ext_flags_t)(caps & 0x00070007u);
}

CPU_ZE_ENTRY(zeDeviceGetModuleProperties, ze_device_handle_t hDevice,
             ze_device_module_properties_t *pModuleProperties)
{
    CPU_ZE_CHECK_DEVICE(hDevice);
    CPU_ZE_CHECK_POINTER(pModuleProperties);
    CPU_ZE_CHECK_STYPE(pModuleProperties, ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES);
    const cpu_ze_engine_t *e = &cpu_ze.engine;
    ze_device_module_properties_t *p = pModuleProperties;
    p->spirvVersionSupported = e->spirv_version;
    p->flags = 0;
    if (e->half_fp_config)
        p->flags |= ZE_DEVICE_MODULE_FLAG_FP16;
    if (e->double_fp_config)
        p->flags |= ZE_DEVICE_MODULE_FLAG_FP64;
    if (e->has_int64_atomics)
        p->flags |= ZE_DEVICE_MODULE_FLAG_INT64_ATOMICS;
    if (e->has_dp4a)
        p->flags |= ZE_DEVICE_MODULE_FLAG_DP4A;
    p->fp16flags = fp_flags(e->half_fp_config);
    p->fp32flags = fp_flags(e->single_fp_config);
    p->fp64flags = fp_flags(e->double_fp_config);
    p->maxArgumentsSize = (uint32_t)e->max_parameter_size;
    p->printfBufferSize = (uint32_t)e->printf_buffer_size;
    memset(&p->nativeKernelSupported, 0, sizeof p->nativeKernelSupported);

    /* Extension structs we know are filled; others are left alone. */
    for (ze_base_properties_t *ext = p->pNext; ext != NULL; ext = ext->pNext) {
        if (ext->stype == ZE_STRUCTURE_TYPE_FLOAT_ATOMIC_EXT_PROPERTIES) {
            ze_float_atomic_ext_properties_t *fa = (ze_float_atomic_ext_properties_t *)ext;
            fa->fp16Flags = fp_atomic_flags(e->half_fp_atomics);
            fa->fp32Flags = fp_atomic_flags(e->single_fp_atomics);
            fa->fp64Flags = fp_atomic_flags(e->double_fp_atomics);
        }
    }
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeDeviceGetCommandQueueGroupProperties, ze_device_handle_t hDevice, uint32_t *pCount,
             ze_command_queue_group_properties_t *pCommandQueueGroupProperties)
{
    CPU_ZE_CHECK_DEVICE(hDevice);
    CPU_ZE_CHECK_POINTER(pCount);
    if (*pCount == 0 || pCommandQueueGroupProperties == NULL) {
        *pCount = 1;
        return ZE_RESULT_SUCCESS;
    }
    ze_command_queue_group_properties_t *p = pCommandQueueGroupProperties;
    CPU_ZE_CHECK_STYPE(p, ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES);
    *pCount = 1;
    /* One in-order engine does everything. */
    p->flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE |
               ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
    p->maxMemoryFillPatternSize = 128; /* OpenCL's largest fill pattern */
    p->numQueues = 1;
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeDeviceGetMemoryProperties, ze_device_handle_t hDevice, uint32_t *pCount,
             ze_device_memory_properties_t *pMemProperties)
{
    CPU_ZE_CHECK_DEVICE(hDevice);
    CPU_ZE_CHECK_POINTER(pCount);
    if (*pCount == 0 || pMemProperties == NULL) {
        *pCount = 1;
        return ZE_RESULT_SUCCESS;
    }
    ze_device_memory_properties_t *p = pMemProperties;
    CPU_ZE_CHECK_STYPE(p, ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES);
    *pCount = 1;
    p->flags = 0;
    p->maxClockRate = 0; /* not known to OpenCL */
    p->maxBusWidth = 0;
    p->totalSize = cpu_ze.engine.global_mem_size;
    snprintf(p->name, sizeof p->name, "%s", "host memory");
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeDeviceGetMemoryAccessProperties, ze_device_handle_t hDevice,
             ze_device_memory_access_properties_t *pMemAccessProperties)
{
    CPU_ZE_CHECK_DEVICE(hDevice);
    CPU_ZE_CHECK_POINTER(pMemAccessProperties);
    CPU_ZE_CHECK_STYPE(pMemAccessProperties, ZE_STRUCTURE_TYPE_DEVICE_MEMORY_ACCESS_PROPERTIES);
    /* CL_UNIFIED_SHARED_MEMORY_*_INTEL bits equal ZE_MEMORY_ACCESS_CAP_FLAG_*. */
    const cpu_ze_engine_t *e = &cpu_ze.engine;
    ze_device_memory_access_properties_t *p = pMemAccessProperties;
    p->hostAllocCapabilities = (ze_memory_access_cap_flags_t)(e->usm_host_caps & 0xf);
    p->deviceAllocCapabilities = (ze_memory_access_cap_flags_t)(e->usm_device_caps & 0xf);
    p->sharedSingleDeviceAllocCapabilities =
            (ze_memory_access_cap_flags_t)(e->usm_shared_caps & 0xf);
    p->sharedCrossDeviceAllocCapabilities = (ze_memory_access_cap_flags_t)(e->usm_cross_caps & 0xf);
    p->sharedSystemAllocCapabilities = (ze_memory_access_cap_flags_t)(e->usm_system_caps & 0xf);
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeDeviceGetCacheProperties, ze_device_handle_t hDevice, uint32_t *pCount,
             ze_device_cache_properties_t *pCacheProperties)
{
    CPU_ZE_CHECK_DEVICE(hDevice);
    CPU_ZE_CHECK_POINTER(pCount);
    if (*pCount == 0 || pCacheProperties == NULL) {
        *pCount = 1;
        return ZE_RESULT_SUCCESS;
    }
    CPU_ZE_CHECK_STYPE(pCacheProperties, ZE_STRUCTURE_TYPE_DEVICE_CACHE_PROPERTIES);
    *pCount = 1;
    pCacheProperties->flags = 0;
    pCacheProperties->cacheSize = (size_t)cpu_ze.engine.global_mem_cache_size;
    return ZE_RESULT_SUCCESS;
}

/* Images are not supported: every limit is 0. */
CPU_ZE_ENTRY(zeDeviceGetImageProperties, ze_device_handle_t hDevice,
             ze_device_image_properties_t *pImageProperties)
{
    CPU_ZE_CHECK_DEVICE(hDevice);
    CPU_ZE_CHECK_POINTER(pImageProperties);
    CPU_ZE_CHECK_STYPE(pImageProperties, ZE_STRUCTURE_TYPE_DEVICE_IMAGE_PROPERTIES);
    ze_structure_type_t stype = pImageProperties->stype;
    void *next = pImageProperties->pNext;
    memset(pImageProperties, 0, sizeof *pImageProperties);
    pImageProperties->stype = stype;
    pImageProperties->pNext = next;
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeDeviceGetExternalMemoryProperties, ze_device_handle_t hDevice,
             ze_device_external_memory_properties_t *pExternalMemoryProperties)
{
    CPU_ZE_CHECK_DEVICE(hDevice);
    CPU_ZE_CHECK_POINTER(pExternalMemoryProperties);
    CPU_ZE_CHECK_STYPE(pExternalMemoryProperties,
                       ZE_STRUCTURE_TYPE_DEVICE_EXTERNAL_MEMORY_PROPERTIES);
    ze_device_external_memory_properties_t *p = pExternalMemoryProperties;
    p->memoryAllocationImportTypes = 0;
    p->memoryAllocationExportTypes = 0;
    p->imageImportTypes = 0;
    p->imageExportTypes = 0;
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeDeviceGetP2PProperties, ze_device_handle_t hDevice, ze_device_handle_t hPeerDevice,
             ze_device_p2p_properties_t *pP2PProperties)
{
    CPU_ZE_CHECK_DEVICE(hDevice);
    CPU_ZE_CHECK_DEVICE(hPeerDevice);
    CPU_ZE_CHECK_POINTER(pP2PProperties);
    CPU_ZE_CHECK_STYPE(pP2PProperties, ZE_STRUCTURE_TYPE_DEVICE_P2P_PROPERTIES);
    pP2PProperties->flags = 0;
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeDeviceCanAccessPeer, ze_device_handle_t hDevice, ze_device_handle_t hPeerDevice,
             ze_bool_t *value)
{
    CPU_ZE_CHECK_DEVICE(hDevice);
    CPU_ZE_CHECK_DEVICE(hPeerDevice);
    CPU_ZE_CHECK_POINTER(value);
    *value = 1; /* the only peer is the device itself */
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeDeviceGetStatus, ze_device_handle_t hDevice)
{
    CPU_ZE_CHECK_DEVICE(hDevice);
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeDeviceGetGlobalTimestamps, ze_device_handle_t hDevice, uint64_t *hostTimestamp,
             uint64_t *deviceTimestamp)
{
    CPU_ZE_CHECK_DEVICE(hDevice);
    CPU_ZE_CHECK_POINTER(hostTimestamp);
    CPU_ZE_CHECK_POINTER(deviceTimestamp);
    *hostTimestamp = *deviceTimestamp = cpu_ze_now_ns();
    return ZE_RESULT_SUCCESS;
}
