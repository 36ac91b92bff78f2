/* ze_result.c - names for ze_result_t and their sdpa_status_t. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "ze_result.h"

const char *ze_result_name(ze_result_t result)
{
    switch (result) {
#define NAME(r)                                                                                    \
    case r:                                                                                        \
        return #r;
        NAME(ZE_RESULT_SUCCESS)
        NAME(ZE_RESULT_NOT_READY)
        NAME(ZE_RESULT_ERROR_DEVICE_LOST)
        NAME(ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY)
        NAME(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)
        NAME(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE)
        NAME(ZE_RESULT_ERROR_MODULE_LINK_FAILURE)
        NAME(ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET)
        NAME(ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE)
        NAME(ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS)
        NAME(ZE_RESULT_ERROR_NOT_AVAILABLE)
        NAME(ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE)
        NAME(ZE_RESULT_ERROR_UNINITIALIZED)
        NAME(ZE_RESULT_ERROR_UNSUPPORTED_VERSION)
        NAME(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE)
        NAME(ZE_RESULT_ERROR_INVALID_ARGUMENT)
        NAME(ZE_RESULT_ERROR_INVALID_NULL_HANDLE)
        NAME(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE)
        NAME(ZE_RESULT_ERROR_INVALID_NULL_POINTER)
        NAME(ZE_RESULT_ERROR_INVALID_SIZE)
        NAME(ZE_RESULT_ERROR_UNSUPPORTED_SIZE)
        NAME(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT)
        NAME(ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT)
        NAME(ZE_RESULT_ERROR_INVALID_ENUMERATION)
        NAME(ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION)
        NAME(ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT)
        NAME(ZE_RESULT_ERROR_INVALID_NATIVE_BINARY)
        NAME(ZE_RESULT_ERROR_INVALID_GLOBAL_NAME)
        NAME(ZE_RESULT_ERROR_INVALID_KERNEL_NAME)
        NAME(ZE_RESULT_ERROR_INVALID_FUNCTION_NAME)
        NAME(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION)
        NAME(ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION)
        NAME(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX)
        NAME(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE)
        NAME(ZE_RESULT_ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE)
        NAME(ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED)
        NAME(ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE)
        NAME(ZE_RESULT_ERROR_OVERLAPPING_REGIONS)
        NAME(ZE_RESULT_ERROR_UNKNOWN)
#undef NAME
    default:
        return "ZE_RESULT_(unknown)";
    }
}

sdpa_status_t sdpa_ze_status(ze_result_t result)
{
    switch (result) {
    case ZE_RESULT_SUCCESS:
        return SDPA_SUCCESS;
    case ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY:
        return SDPA_ERROR_OUT_OF_HOST_MEMORY;
    case ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY:
        return SDPA_ERROR_OUT_OF_DEVICE_MEMORY;
    case ZE_RESULT_ERROR_MODULE_BUILD_FAILURE:
    case ZE_RESULT_ERROR_MODULE_LINK_FAILURE:
        return SDPA_ERROR_BUILD_FAILED;
    case ZE_RESULT_ERROR_UNSUPPORTED_SIZE:
    case ZE_RESULT_ERROR_UNSUPPORTED_FEATURE:
    case ZE_RESULT_ERROR_UNSUPPORTED_VERSION:
    case ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT:
        return SDPA_ERROR_UNSUPPORTED;
    default:
        return SDPA_ERROR_DEVICE;
    }
}

sdpa_status_t sdpa_ze_failf(ze_result_t result, const char *format, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, format);
    vsnprintf(what, sizeof(what), format, ap);
    va_end(ap);
    return sdpa_fail(sdpa_ze_status(result), "%s failed: %s (0x%x)", what, ze_result_name(result),
                     (unsigned)result);
}

sdpa_status_t sdpa_ze_fail(const char *call, ze_result_t result)
{
    /* Keep the message to the call's name: its arguments are noise. */
    return sdpa_ze_failf(result, "%.*s", (int)strcspn(call, "("), call);
}
