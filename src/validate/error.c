/* error.c - one failure message per thread. */
#include <stdarg.h>
#include <stdio.h>

#include "error.h"

/* Long enough for a message that quotes a build log's first lines. */
#define SDPA_ERROR_MESSAGE_MAX 4096

static _Thread_local char thread_message[SDPA_ERROR_MESSAGE_MAX];

sdpa_status_t sdpa_fail(sdpa_status_t status, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    vsnprintf(thread_message, sizeof(thread_message), format, ap);
    va_end(ap);
    return status;
}

const char *sdpa_error_message(void)
{
    return thread_message;
}

void sdpa_error_clear(void)
{
    thread_message[0] = '\0';
}

sdpa_status_t sdpa_entry_result(sdpa_status_t status)
{
    if (status == SDPA_SUCCESS)
        sdpa_error_clear();
    else if (thread_message[0] == '\0')
        sdpa_fail(status, "%s (no further detail)", sdpa_status_string(status));
    return status;
}

const char *sdpa_status_string(sdpa_status_t status)
{
    switch (status) {
    case SDPA_SUCCESS: return "SDPA_SUCCESS";
    case SDPA_ERROR_INVALID_ARGUMENT: return "SDPA_ERROR_INVALID_ARGUMENT";
    case SDPA_ERROR_INVALID_STRUCT: return "SDPA_ERROR_INVALID_STRUCT";
    case SDPA_ERROR_UNSUPPORTED: return "SDPA_ERROR_UNSUPPORTED";
    case SDPA_ERROR_INVALID_CONFIG: return "SDPA_ERROR_INVALID_CONFIG";
    case SDPA_ERROR_OUT_OF_HOST_MEMORY: return "SDPA_ERROR_OUT_OF_HOST_MEMORY";
    case SDPA_ERROR_OUT_OF_DEVICE_MEMORY: return "SDPA_ERROR_OUT_OF_DEVICE_MEMORY";
    case SDPA_ERROR_BUILD_FAILED: return "SDPA_ERROR_BUILD_FAILED";
    case SDPA_ERROR_DEVICE: return "SDPA_ERROR_DEVICE";
    case SDPA_ERROR_BACKEND_NOT_FOUND: return "SDPA_ERROR_BACKEND_NOT_FOUND";
    case SDPA_ERROR_SYMBOL_NOT_FOUND: return "SDPA_ERROR_SYMBOL_NOT_FOUND";
    case SDPA_ERROR_ABI_VERSION: return "SDPA_ERROR_ABI_VERSION";
    case SDPA_ERROR_INSUFFICIENT_SCRATCH: return "SDPA_ERROR_INSUFFICIENT_SCRATCH";
    }
    return "SDPA_ERROR_(unknown)";
}
