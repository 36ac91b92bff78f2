/* ze_result.c - ze_result_t to sdpa_status_t, with a message. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "ze_result.h"

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
