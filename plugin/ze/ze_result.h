/*
 * ze_result.h - turning a failed Level Zero call into an sdpa_status_t with a
 * message that names the call and its result.
 */
#ifndef SDPA_ZE_RESULT_H
#define SDPA_ZE_RESULT_H

#include <level_zero/ze_api.h>

#include "sdpa.h"

/* "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", ... */
const char *ze_result_name(ze_result_t result);

/* The sdpa_status_t a failed Level Zero call maps to (out-of-memory results
 * keep their meaning, a build failure is SDPA_ERROR_BUILD_FAILED, anything else
 * is SDPA_ERROR_DEVICE), with the message "<call> failed: <result name>". */
sdpa_status_t sdpa_ze_fail(const char *call, ze_result_t result);

/* Evaluates a Level Zero call; on failure returns sdpa_ze_fail() from the
 * enclosing function. Use only where nothing needs cleaning up. */
#define SDPA_ZE_TRY(call)                                                                          \
    do {                                                                                           \
        ze_result_t sdpa_ze_result_ = (call);                                                      \
        if (sdpa_ze_result_ != ZE_RESULT_SUCCESS)                                                  \
            return sdpa_ze_fail(#call, sdpa_ze_result_);                                           \
    } while (0)

#endif /* SDPA_ZE_RESULT_H */
