/* float_atomics.c - how the backward kernels add f32 into global memory on a
 * device: its native atomic add, or compare-and-swap loops (SDPA_ZE_FLOAT_ATOMICS). */
#include <string.h>

#include "device.h"

int sdpa_device_native_f32_add(const sdpa_device_info_t *device)
{
    return device->has_f32_atomic_add && !device->cas_atomics;
}

int sdpa_float_atomics_parse(const char *text, int *cas_atomics)
{
    if (text == NULL || text[0] == '\0' || strcmp(text, "auto") == 0) {
        *cas_atomics = 0;
        return 0;
    }
    if (strcmp(text, "cas") == 0) {
        *cas_atomics = 1;
        return 0;
    }
    return -1;
}
