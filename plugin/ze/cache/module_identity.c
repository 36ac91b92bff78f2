/* module_identity.c - the device, driver and SPIR-V identity of native
 * module binaries (module_identity.h). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "module_identity.h"

/* The driver whose devices include device. */
static int find_driver(ze_device_handle_t device, ze_driver_handle_t *out, char *why,
                       size_t why_size)
{
    uint32_t count = 0;
    ze_result_t result = zeDriverGet(&count, NULL);
    if (result != ZE_RESULT_SUCCESS || count == 0) {
        snprintf(why, why_size, "zeDriverGet: 0x%x, %u drivers", (unsigned)result, count);
        return -1;
    }
    ze_driver_handle_t *drivers = calloc(count, sizeof(*drivers));
    if (!drivers) {
        snprintf(why, why_size, "out of host memory");
        return -1;
    }
    int found = -1;
    if ((result = zeDriverGet(&count, drivers)) != ZE_RESULT_SUCCESS)
        snprintf(why, why_size, "zeDriverGet: 0x%x", (unsigned)result);
    for (uint32_t d = 0; result == ZE_RESULT_SUCCESS && d < count && found < 0; d++) {
        uint32_t devices = 0;
        if (zeDeviceGet(drivers[d], &devices, NULL) != ZE_RESULT_SUCCESS || devices == 0)
            continue;
        ze_device_handle_t *handles = calloc(devices, sizeof(*handles));
        if (handles && zeDeviceGet(drivers[d], &devices, handles) == ZE_RESULT_SUCCESS)
            for (uint32_t i = 0; i < devices; i++)
                if (handles[i] == device) {
                    *out = drivers[d];
                    found = 0;
                }
        free(handles);
    }
    if (result == ZE_RESULT_SUCCESS && found < 0)
        snprintf(why, why_size, "no driver of zeDriverGet lists the device");
    free(drivers);
    return found;
}

int sdpa_device_identity_read(ze_device_handle_t device, sdpa_device_identity_t *out, char *why,
                              size_t why_size)
{
    memset(out, 0, sizeof(*out));
    ze_device_properties_t device_props = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
    ze_result_t result = zeDeviceGetProperties(device, &device_props);
    if (result != ZE_RESULT_SUCCESS) {
        snprintf(why, why_size, "zeDeviceGetProperties: 0x%x", (unsigned)result);
        return -1;
    }
    ze_driver_handle_t driver = NULL;
    if (find_driver(device, &driver, why, why_size) != 0)
        return -1;
    ze_driver_properties_t driver_props = {.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES};
    if ((result = zeDriverGetProperties(driver, &driver_props)) != ZE_RESULT_SUCCESS) {
        snprintf(why, why_size, "zeDriverGetProperties: 0x%x", (unsigned)result);
        return -1;
    }
    out->vendor_id = device_props.vendorId;
    out->device_id = device_props.deviceId;
    memcpy(out->device_uuid, device_props.uuid.id, sizeof(out->device_uuid));
    /* out was zeroed: the name stays NUL-terminated. */
    memcpy(out->device_name, device_props.name,
           strnlen(device_props.name, sizeof(out->device_name) - 1));
    memcpy(out->driver_uuid, driver_props.uuid.id, sizeof(out->driver_uuid));
    out->driver_version = driver_props.driverVersion;
    return 0;
}

/* Digests of sdpa_spirv_modules[i], computed on first use. Static storage,
 * not the heap: the plugin may be unloaded and loaded again. */
#define MEMO_VARIANTS 128
static unsigned char memo_digest[MEMO_VARIANTS][SDPA_SHA256_BYTES];
static int memo_done[MEMO_VARIANTS];
static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;

void sdpa_spirv_digest(const sdpa_spirv_module_t *spirv, unsigned char out[SDPA_SHA256_BYTES])
{
    uintptr_t at = (uintptr_t)spirv, first = (uintptr_t)sdpa_spirv_modules;
    size_t index = at >= first ? (at - first) / sizeof(*spirv) : SIZE_MAX;
    int memoized = index < sdpa_spirv_module_count && index < MEMO_VARIANTS &&
                   &sdpa_spirv_modules[index] == spirv;
    if (!memoized) {
        sdpa_sha256(spirv->code, spirv->size, out);
        return;
    }
    pthread_mutex_lock(&memo_lock);
    if (!memo_done[index]) {
        sdpa_sha256(spirv->code, spirv->size, memo_digest[index]);
        memo_done[index] = 1;
    }
    memcpy(out, memo_digest[index], SDPA_SHA256_BYTES);
    pthread_mutex_unlock(&memo_lock);
}
