/*
 * ze_result_name.h - Level Zero helpers shared by the ze plugin and the CPU
 * driver's tests (libsdpa_zeutil, no other dependency than ze_api.h).
 */
#ifndef SDPA_ZEUTIL_ZE_RESULT_NAME_H
#define SDPA_ZEUTIL_ZE_RESULT_NAME_H

#include <level_zero/ze_api.h>

/* "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", ...; "ZE_RESULT_(unknown)" for a
 * value ze_api.h does not name. Static storage. */
const char *ze_result_name(ze_result_t result);

#endif /* SDPA_ZEUTIL_ZE_RESULT_NAME_H */
