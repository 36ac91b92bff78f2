/* device_object.h - what the backend's per-device objects (the module
 * cache, the list table, a scratch) begin with, and their allocation. */
#ifndef SDPA_ZE_DEVICE_OBJECT_H
#define SDPA_ZE_DEVICE_OBJECT_H

#include <stdlib.h>

#include <level_zero/ze_api.h>

#include "error.h"

/* The context and device an object allocates on and builds for. */
typedef struct sdpa_device_binding {
    ze_context_handle_t context;
    ze_device_handle_t device;
} sdpa_device_binding_t;

/* A zeroed object of size bytes whose first member is an
 * sdpa_device_binding_t, bound to context and device; NULL, with the error
 * set, when the host is out of memory ("out of host memory for <what>"). */
static inline void *sdpa_device_object_new(size_t size, ze_context_handle_t context,
                                           ze_device_handle_t device, const char *what)
{
    sdpa_device_binding_t *binding = calloc(1, size);
    if (!binding) {
        sdpa_fail(SDPA_ERROR_OUT_OF_HOST_MEMORY, "out of host memory for %s", what);
        return NULL;
    }
    binding->context = context;
    binding->device = device;
    return binding;
}

#endif
