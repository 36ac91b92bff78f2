/*
 * memory.c - zeMemAlloc* map 1:1 to Intel USM (cl_intel_unified_shared_memory):
 * device, host and shared allocations are OpenCL USM allocations of the
 * context, so kernels take them as pointers and the runtime knows them.
 */
#include <unistd.h>

#include "ze_cpu.h"

/* A size the device accepts, unless ze_relaxed_allocation_limits_exp_desc_t
 * with MAX_SIZE is chained to the device descriptor. */
static ze_result_t check_size(size_t size, size_t alignment, const ze_device_mem_alloc_desc_t *dd,
                              const char *caller)
{
    if (size == 0)
        return cpu_ze_fail(ZE_RESULT_ERROR_UNSUPPORTED_SIZE, "%s: size = 0", caller);
    if ((alignment & (alignment - 1)) != 0 || alignment > UINT32_MAX)
        return cpu_ze_fail(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT,
                           "%s: alignment = %zu is not a power of two", caller, alignment);
    bool relaxed = false;
    for (const ze_base_desc_t *ext = dd ? dd->pNext : NULL; ext != NULL; ext = ext->pNext) {
        if (ext->stype == ZE_STRUCTURE_TYPE_RELAXED_ALLOCATION_LIMITS_EXP_DESC) {
            const ze_relaxed_allocation_limits_exp_desc_t *limits =
                    (const ze_relaxed_allocation_limits_exp_desc_t *)ext;
            relaxed = (limits->flags & ZE_RELAXED_ALLOCATION_LIMITS_EXP_FLAG_MAX_SIZE) != 0;
        }
    }
    if (!relaxed && size > cpu_ze.engine.max_mem_alloc_size)
        return cpu_ze_fail(ZE_RESULT_ERROR_UNSUPPORTED_SIZE,
                           "%s: size = %zu exceeds maxMemAllocSize = %llu", caller, size,
                           (unsigned long long)cpu_ze.engine.max_mem_alloc_size);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t check_device_desc(const ze_device_mem_alloc_desc_t *dd, const char *caller)
{
    CPU_ZE_CHECK_POINTER(dd);
    CPU_ZE_CHECK_STYPE(dd, ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC);
    if (dd->flags & ~(ze_device_mem_alloc_flags_t)0x7)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ENUMERATION, "%s: device_desc->flags = 0x%x",
                           caller, dd->flags);
    if (dd->ordinal != 0)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                           "%s: device_desc->ordinal = %u, the device has one memory", caller,
                           dd->ordinal);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t check_host_desc(const ze_host_mem_alloc_desc_t *hd, const char *caller)
{
    CPU_ZE_CHECK_POINTER(hd);
    CPU_ZE_CHECK_STYPE(hd, ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC);
    if (hd->flags & ~(ze_host_mem_alloc_flags_t)0xf)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ENUMERATION, "%s: host_desc->flags = 0x%x",
                           caller, hd->flags);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t finish_alloc(void *ptr, cl_int err, void **pptr, size_t size, const char *caller)
{
    if (ptr == NULL) {
        ze_result_t r = cpu_ze_result_from_cl(err);
        if (r == ZE_RESULT_SUCCESS || r == ZE_RESULT_ERROR_UNKNOWN ||
            r == ZE_RESULT_ERROR_INVALID_ARGUMENT)
            r = ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
        return cpu_ze_fail(r, "%s: %zu bytes: %s", caller, size, cpu_ze_cl_error_name(err));
    }
    *pptr = ptr;
    return ZE_RESULT_SUCCESS;
}

/* A guarded allocation (memory_guard.c), failing as the engine would. */
static void *guarded(cpu_ze_guard_t mode, size_t size, size_t alignment, cl_uint type,
                     cl_int *err)
{
    void *ptr = cpu_ze_guard_alloc(mode, size, alignment, type);
    *err = ptr ? CL_SUCCESS : CL_OUT_OF_RESOURCES;
    return ptr;
}

#define CHECK(call)                                                                                \
    do {                                                                                           \
        ze_result_t r_ = (call);                                                                   \
        if (r_ != ZE_RESULT_SUCCESS)                                                               \
            return r_;                                                                             \
    } while (0)

CPU_ZE_ENTRY(zeMemAllocDevice, ze_context_handle_t hContext,
             const ze_device_mem_alloc_desc_t *device_desc, size_t size, size_t alignment,
             ze_device_handle_t hDevice, void **pptr)
{
    CPU_ZE_CHECK_HANDLE(hContext, CPU_ZE_KIND_CONTEXT);
    CPU_ZE_CHECK_DEVICE(hDevice);
    CPU_ZE_CHECK_POINTER(pptr);
    CHECK(check_device_desc(device_desc, __func__));
    CHECK(check_size(size, alignment, device_desc, __func__));
    struct cpu_ze_context *context = (struct cpu_ze_context *)hContext;
    cl_int err = CL_SUCCESS;
    const cpu_ze_guard_t guard = cpu_ze_guard_mode();
    void *ptr = guard ? guarded(guard, size, alignment, CL_MEM_TYPE_DEVICE_INTEL, &err)
                      : cpu_ze.engine.device_mem_alloc(context->cl, cpu_ze.engine.device, NULL,
                                                       size, (cl_uint)alignment, &err);
    return finish_alloc(ptr, err, pptr, size, __func__);
}

CPU_ZE_ENTRY(zeMemAllocHost, ze_context_handle_t hContext,
             const ze_host_mem_alloc_desc_t *host_desc, size_t size, size_t alignment, void **pptr)
{
    CPU_ZE_CHECK_HANDLE(hContext, CPU_ZE_KIND_CONTEXT);
    CPU_ZE_CHECK_POINTER(pptr);
    CHECK(check_host_desc(host_desc, __func__));
    CHECK(check_size(size, alignment, NULL, __func__));
    struct cpu_ze_context *context = (struct cpu_ze_context *)hContext;
    cl_int err = CL_SUCCESS;
    const cpu_ze_guard_t guard = cpu_ze_guard_mode();
    void *ptr = guard ? guarded(guard, size, alignment, CL_MEM_TYPE_HOST_INTEL, &err)
                      : cpu_ze.engine.host_mem_alloc(context->cl, NULL, size, (cl_uint)alignment,
                                                     &err);
    return finish_alloc(ptr, err, pptr, size, __func__);
}

/* hDevice may be NULL: a shared allocation not tied to a device. */
CPU_ZE_ENTRY(zeMemAllocShared, ze_context_handle_t hContext,
             const ze_device_mem_alloc_desc_t *device_desc,
             const ze_host_mem_alloc_desc_t *host_desc, size_t size, size_t alignment,
             ze_device_handle_t hDevice, void **pptr)
{
    CPU_ZE_CHECK_HANDLE(hContext, CPU_ZE_KIND_CONTEXT);
    if (hDevice != NULL)
        CPU_ZE_CHECK_DEVICE(hDevice);
    CPU_ZE_CHECK_POINTER(pptr);
    CHECK(check_device_desc(device_desc, __func__));
    CHECK(check_host_desc(host_desc, __func__));
    CHECK(check_size(size, alignment, device_desc, __func__));
    struct cpu_ze_context *context = (struct cpu_ze_context *)hContext;
    cl_int err = CL_SUCCESS;
    const cpu_ze_guard_t guard = cpu_ze_guard_mode();
    void *ptr = guard ? guarded(guard, size, alignment, CL_MEM_TYPE_SHARED_INTEL, &err)
                      : cpu_ze.engine.shared_mem_alloc(context->cl,
                                                       hDevice ? cpu_ze.engine.device : NULL, NULL,
                                                       size, (cl_uint)alignment, &err);
    return finish_alloc(ptr, err, pptr, size, __func__);
}

/* The USM type of ptr in context, CL_MEM_TYPE_UNKNOWN_INTEL if none. */
static cl_uint alloc_type(struct cpu_ze_context *context, const void *ptr)
{
    cl_uint type = CL_MEM_TYPE_UNKNOWN_INTEL;
    void *base;
    size_t size;
    if (cpu_ze_guard_describe(ptr, &type, &base, &size))
        return type;
    if (cpu_ze.engine.get_mem_alloc_info(context->cl, ptr, CL_MEM_ALLOC_TYPE_INTEL, sizeof type,
                                         &type, NULL) != CL_SUCCESS)
        type = CL_MEM_TYPE_UNKNOWN_INTEL;
    return type;
}

static void *alloc_base(struct cpu_ze_context *context, const void *ptr)
{
    void *base = NULL;
    cl_uint type;
    size_t size;
    if (cpu_ze_guard_describe(ptr, &type, &base, &size))
        return base;
    cpu_ze.engine.get_mem_alloc_info(context->cl, ptr, CL_MEM_ALLOC_BASE_PTR_INTEL, sizeof base,
                                     &base, NULL);
    return base;
}

/* Waits for commands still using the memory (clMemBlockingFreeINTEL), so a
 * free right after a fence or event wait is always safe. */
CPU_ZE_ENTRY(zeMemFree, ze_context_handle_t hContext, void *ptr)
{
    CPU_ZE_CHECK_HANDLE(hContext, CPU_ZE_KIND_CONTEXT);
    CPU_ZE_CHECK_POINTER(ptr);
    struct cpu_ze_context *context = (struct cpu_ze_context *)hContext;
    if (alloc_type(context, ptr) == CL_MEM_TYPE_UNKNOWN_INTEL || alloc_base(context, ptr) != ptr)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                           "zeMemFree: %p is not an allocation of this context", ptr);
    if (cpu_ze_guard_free(ptr))
        return ZE_RESULT_SUCCESS;
    cl_int err = cpu_ze.engine.mem_blocking_free(context->cl, ptr);
    if (err != CL_SUCCESS)
        return cpu_ze_fail(ZE_RESULT_ERROR_UNKNOWN, "clMemBlockingFreeINTEL: %s",
                           cpu_ze_cl_error_name(err));
    return ZE_RESULT_SUCCESS;
}

/* Any pointer is accepted: memory this context did not allocate is
 * ZE_MEMORY_TYPE_UNKNOWN. The id is the allocation's base address, unique
 * among live allocations. */
CPU_ZE_ENTRY(zeMemGetAllocProperties, ze_context_handle_t hContext, const void *ptr,
             ze_memory_allocation_properties_t *pMemAllocProperties, ze_device_handle_t *phDevice)
{
    CPU_ZE_CHECK_HANDLE(hContext, CPU_ZE_KIND_CONTEXT);
    CPU_ZE_CHECK_POINTER(ptr);
    CPU_ZE_CHECK_POINTER(pMemAllocProperties);
    CPU_ZE_CHECK_STYPE(pMemAllocProperties, ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES);
    struct cpu_ze_context *context = (struct cpu_ze_context *)hContext;
    ze_memory_allocation_properties_t *p = pMemAllocProperties;
    cl_uint type = alloc_type(context, ptr);
    cl_device_id device = NULL;
    switch (type) {
    case CL_MEM_TYPE_HOST_INTEL:
        p->type = ZE_MEMORY_TYPE_HOST;
        break;
    case CL_MEM_TYPE_DEVICE_INTEL:
        p->type = ZE_MEMORY_TYPE_DEVICE;
        break;
    case CL_MEM_TYPE_SHARED_INTEL:
        p->type = ZE_MEMORY_TYPE_SHARED;
        break;
    default:
        p->type = ZE_MEMORY_TYPE_UNKNOWN;
        break;
    }
    if (p->type == ZE_MEMORY_TYPE_UNKNOWN) {
        p->id = 0;
        p->pageSize = 0;
    } else {
        p->id = (uint64_t)(uintptr_t)alloc_base(context, ptr);
        p->pageSize = (uint64_t)sysconf(_SC_PAGESIZE);
        void *base;
        size_t size;
        if (cpu_ze_guard_describe(ptr, &type, &base, &size))
            device = type == CL_MEM_TYPE_HOST_INTEL ? NULL : cpu_ze.engine.device;
        else
            cpu_ze.engine.get_mem_alloc_info(context->cl, ptr, CL_MEM_ALLOC_DEVICE_INTEL,
                                             sizeof device, &device, NULL);
    }
    if (phDevice != NULL)
        *phDevice = device != NULL ? (ze_device_handle_t)&cpu_ze.device : NULL;
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeMemGetAddressRange, ze_context_handle_t hContext, const void *ptr, void **pBase,
             size_t *pSize)
{
    CPU_ZE_CHECK_HANDLE(hContext, CPU_ZE_KIND_CONTEXT);
    CPU_ZE_CHECK_POINTER(ptr);
    struct cpu_ze_context *context = (struct cpu_ze_context *)hContext;
    if (alloc_type(context, ptr) == CL_MEM_TYPE_UNKNOWN_INTEL)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                           "zeMemGetAddressRange: %p is not in an allocation of this context", ptr);
    if (pBase != NULL)
        *pBase = alloc_base(context, ptr);
    if (pSize != NULL) {
        size_t size = 0;
        cl_uint type;
        void *base;
        if (!cpu_ze_guard_describe(ptr, &type, &base, &size))
            cpu_ze.engine.get_mem_alloc_info(context->cl, ptr, CL_MEM_ALLOC_SIZE_INTEL,
                                             sizeof size, &size, NULL);
        *pSize = size;
    }
    return ZE_RESULT_SUCCESS;
}

/* Every free is blocking (see zeMemFree), which satisfies both policies. */
CPU_ZE_ENTRY(zeMemFreeExt, ze_context_handle_t hContext,
             const ze_memory_free_ext_desc_t *pMemFreeDesc, void *ptr)
{
    CPU_ZE_CHECK_HANDLE(hContext, CPU_ZE_KIND_CONTEXT);
    CPU_ZE_CHECK_POINTER(pMemFreeDesc);
    CPU_ZE_CHECK_STYPE(pMemFreeDesc, ZE_STRUCTURE_TYPE_MEMORY_FREE_EXT_DESC);
    if (pMemFreeDesc->freePolicy & ~(ze_driver_memory_free_policy_ext_flags_t)0x3)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ENUMERATION, "zeMemFreeExt: freePolicy = 0x%x",
                           pMemFreeDesc->freePolicy);
    return cpu_zeMemFree(hContext, ptr);
}
