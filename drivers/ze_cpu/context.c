/*
 * context.c - a Level Zero context is an OpenCL context on the one device:
 * USM allocations, programs and queues of one context never mix with
 * another's, as in Level Zero.
 *
 * Programs destroy a context before its event pools, modules or command
 * lists (the loader's zello_world, many conformance tests), and Intel's
 * driver accepts it: the handle dies at once, and the OpenCL context lives
 * until the last object created in it is destroyed, so those objects keep
 * working and can still be destroyed.
 */
#include <stdlib.h>

#include "ze_cpu.h"

static ze_result_t create_context(ze_driver_handle_t hDriver, const ze_context_desc_t *desc,
                                  ze_context_handle_t *phContext)
{
    CPU_ZE_CHECK_DRIVER(hDriver);
    CPU_ZE_CHECK_CREATE_DESC(desc, ZE_STRUCTURE_TYPE_CONTEXT_DESC, phContext);
    if (desc->flags & ~(ze_context_flags_t)ZE_CONTEXT_FLAG_TBD)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ENUMERATION, "zeContextCreate: flags = 0x%x",
                           desc->flags);

    struct cpu_ze_context *context = calloc(1, sizeof *context);
    if (context == NULL)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    cl_int err;
    /* No CL_CONTEXT_PLATFORM: the ICD loader would look the platform up in
     * its own list, which need not hold the engine's (engine.c). */
    context->cl = clCreateContext(NULL, 1, &cpu_ze.engine.device, NULL, NULL, &err);
    if (context->cl == NULL) {
        free(context);
        return cpu_ze_fail(cpu_ze_result_from_cl(err), "clCreateContext: %s",
                           cpu_ze_cl_error_name(err));
    }
    atomic_init(&context->refs, 1);
    ze_result_t result = cpu_ze_handle_publish(context, CPU_ZE_KIND_CONTEXT);
    if (result != ZE_RESULT_SUCCESS) {
        cpu_ze_context_release(context);
        return result;
    }
    *phContext = (ze_context_handle_t)context;
    return ZE_RESULT_SUCCESS;
}

void cpu_ze_context_retain(struct cpu_ze_context *context)
{
    atomic_fetch_add_explicit(&context->refs, 1, memory_order_relaxed);
}

void cpu_ze_context_release(struct cpu_ze_context *context)
{
    if (atomic_fetch_sub_explicit(&context->refs, 1, memory_order_acq_rel) != 1)
        return;
    clReleaseContext(context->cl);
    free(context);
}

CPU_ZE_ENTRY(zeContextCreate, ze_driver_handle_t hDriver, const ze_context_desc_t *desc,
             ze_context_handle_t *phContext)
{
    return create_context(hDriver, desc, phContext);
}

/* The device list may name only our device (or be empty: all devices). */
CPU_ZE_ENTRY(zeContextCreateEx, ze_driver_handle_t hDriver, const ze_context_desc_t *desc,
             uint32_t numDevices, ze_device_handle_t *phDevices, ze_context_handle_t *phContext)
{
    if (numDevices > 0 && phDevices == NULL)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_NULL_POINTER,
                           "zeContextCreateEx: numDevices = %u and phDevices = NULL", numDevices);
    for (uint32_t i = 0; i < numDevices; i++)
        CPU_ZE_CHECK_DEVICE(phDevices[i]);
    return create_context(hDriver, desc, phContext);
}

/* Always succeeds on a live handle; what is still alive in the context
 * keeps the OpenCL context (and the memory allocated in it) until it is
 * destroyed too. */
CPU_ZE_ENTRY(zeContextDestroy, ze_context_handle_t hContext)
{
    CPU_ZE_CHECK_HANDLE(hContext, CPU_ZE_KIND_CONTEXT);
    CPU_ZE_RETIRE_HANDLE(hContext, CPU_ZE_KIND_CONTEXT);
    struct cpu_ze_context *context = (struct cpu_ze_context *)hContext;
    int others = atomic_load(&context->refs) - 1;
    if (others > 0)
        cpu_ze_note("zeContextDestroy: %d objects created in the context are alive; the "
                    "context lives until they are destroyed",
                    others);
    cpu_ze_context_release(context);
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeContextGetStatus, ze_context_handle_t hContext)
{
    CPU_ZE_CHECK_HANDLE(hContext, CPU_ZE_KIND_CONTEXT);
    return ZE_RESULT_SUCCESS;
}

/* Host memory is always coherent with the CPU device: nothing to flush. */
CPU_ZE_ENTRY(zeContextSystemBarrier, ze_context_handle_t hContext, ze_device_handle_t hDevice)
{
    CPU_ZE_CHECK_HANDLE(hContext, CPU_ZE_KIND_CONTEXT);
    CPU_ZE_CHECK_DEVICE(hDevice);
    return ZE_RESULT_SUCCESS;
}

/* All memory is resident: residency calls only validate their arguments. */
static ze_result_t check_residency_call(const char *caller, ze_context_handle_t hContext,
                                        ze_device_handle_t hDevice, void *ptr)
{
    if (!cpu_ze_handle_is(hContext, CPU_ZE_KIND_CONTEXT))
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, "%s: hContext is not a live handle",
                           caller);
    CPU_ZE_CHECK_DEVICE(hDevice);
    if (ptr == NULL)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_NULL_POINTER, "%s: ptr is NULL", caller);
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeContextMakeMemoryResident, ze_context_handle_t hContext, ze_device_handle_t hDevice,
             void *ptr, size_t size)
{
    return check_residency_call(__func__, hContext, hDevice, ptr);
}

CPU_ZE_ENTRY(zeContextEvictMemory, ze_context_handle_t hContext, ze_device_handle_t hDevice,
             void *ptr, size_t size)
{
    return check_residency_call(__func__, hContext, hDevice, ptr);
}
