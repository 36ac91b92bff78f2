/*
 * ze_result.h - turning a failed Level Zero call into an sdpa_status_t with a
 * message that names the call and its result.
 */
#ifndef SDPA_ZE_RESULT_H
#define SDPA_ZE_RESULT_H

#include <level_zero/ze_api.h>

#include "sdpa.h"

#include "ze_result_name.h"

/* The one mapping from Level Zero results to sdpa_status_t, used for every
 * Level Zero call the backend makes:
 *   ZE_RESULT_SUCCESS                          SDPA_SUCCESS
 *   ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY         SDPA_ERROR_OUT_OF_HOST_MEMORY
 *   ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY       SDPA_ERROR_OUT_OF_DEVICE_MEMORY
 *   ZE_RESULT_ERROR_MODULE_BUILD_FAILURE,
 *   ZE_RESULT_ERROR_MODULE_LINK_FAILURE        SDPA_ERROR_BUILD_FAILED
 *   ZE_RESULT_ERROR_UNSUPPORTED_SIZE, _FEATURE,
 *   _VERSION, _ALIGNMENT                       SDPA_ERROR_UNSUPPORTED (the device
 *                                              cannot serve this request; retrying
 *                                              will not help)
 *   anything else                              SDPA_ERROR_DEVICE */
sdpa_status_t sdpa_ze_status(ze_result_t result);

/* Sets the message "<what> failed: <result name> (0x<result>)", what being
 * formatted from format (for example "zeKernelCreate(\"sdpa_fwd\")"), and
 * returns sdpa_ze_status(result). */
sdpa_status_t sdpa_ze_failf(ze_result_t result, const char *format, ...)
        __attribute__((format(printf, 2, 3)));

/* The same with what = call up to its first '(' (so that #call of a whole
 * call expression names only the function). */
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
