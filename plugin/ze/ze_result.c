/* ze_result.c - names for ze_result_t and their sdpa_status_t. */
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

sdpa_status_t sdpa_ze_fail(const char *call, ze_result_t result)
{
    sdpa_status_t status = SDPA_ERROR_DEVICE;
    if (result == ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY)
        status = SDPA_ERROR_OUT_OF_HOST_MEMORY;
    else if (result == ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)
        status = SDPA_ERROR_OUT_OF_DEVICE_MEMORY;
    else if (result == ZE_RESULT_ERROR_MODULE_BUILD_FAILURE)
        status = SDPA_ERROR_BUILD_FAILED;
    /* Keep the message to the call's name: its arguments are noise. */
    size_t name_length = strcspn(call, "(");
    return sdpa_fail(status, "%.*s failed: %s (0x%x)", (int)name_length, call,
                     ze_result_name(result), (unsigned)result);
}
