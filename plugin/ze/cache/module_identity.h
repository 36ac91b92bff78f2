/*
 * module_identity.h - what, besides its own key, a native module binary
 * depends on, so that the persistent module cache never hands one device's
 * or driver's binary to another: the device and its driver, and the digest
 * of the SPIR-V it was built from.
 */
#ifndef SDPA_ZE_MODULE_IDENTITY_H
#define SDPA_ZE_MODULE_IDENTITY_H

#include <stddef.h>
#include <stdint.h>

#include <level_zero/ze_api.h>

#include "sha256.h"
#include "spirv_registry.h"

/* The device and the driver that serves it. (Intel's device UUID encodes
 * the device id and revision; the Level Zero headers we build against
 * predate the IP-version extension.) */
typedef struct sdpa_device_identity {
    uint32_t vendor_id, device_id;
    uint8_t device_uuid[ZE_MAX_DEVICE_UUID_SIZE];
    char device_name[ZE_MAX_DEVICE_NAME];
    uint8_t driver_uuid[ZE_MAX_DRIVER_UUID_SIZE];
    uint32_t driver_version;
} sdpa_device_identity_t;

/* Fills *out for device (its driver is the one of zeDriverGet's drivers
 * that lists it). Returns 0, or -1 with the failing call in why[why_size]:
 * then the device's binaries cannot be told apart, and nothing should be
 * cached for it. */
int sdpa_device_identity_read(ze_device_handle_t device, sdpa_device_identity_t *out, char *why,
                              size_t why_size);

/* The SHA-256 of the variant's SPIR-V, computed once per process for the
 * variants of sdpa_spirv_modules. */
void sdpa_spirv_digest(const sdpa_spirv_module_t *spirv, unsigned char out[SDPA_SHA256_BYTES]);

#endif /* SDPA_ZE_MODULE_IDENTITY_H */
