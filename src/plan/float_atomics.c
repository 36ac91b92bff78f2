/* float_atomics.c - how the backward kernels add f32 into global memory on a
 * device: its native atomic add, or compare-and-swap loops (SDPA_ZE_FLOAT_ATOMICS). */
#include "device.h"
#include "name_table.h"

int sdpa_device_native_f32_add(const sdpa_device_info_t *device)
{
    if (!device->has_f32_atomic_add)
        return 0; /* a module with the capability would not build */
    switch (device->float_atomics) {
    case SDPA_FLOAT_ATOMICS_CAS:
        return 0;
    case SDPA_FLOAT_ATOMICS_NATIVE:
        return 1;
    case SDPA_FLOAT_ATOMICS_AUTO:
        break;
    }
    /* No add in the hardware: the CPU device (x86) and Xe-LP, whose
     * compilers expand the native add into a compare-and-swap loop of their
     * own (on Xe-LP an atomic OR to read, then the loop: one more atomic per
     * add than ours). */
    return device->device_class != SDPA_DEVICE_CLASS_CPU &&
           device->device_class != SDPA_DEVICE_CLASS_XE_LP;
}

static const char *const names[] = {
        [SDPA_FLOAT_ATOMICS_AUTO] = "auto",
        [SDPA_FLOAT_ATOMICS_CAS] = "cas",
        [SDPA_FLOAT_ATOMICS_NATIVE] = "native",
};

int sdpa_float_atomics_parse(const char *text, sdpa_float_atomics_t *out)
{
    const int i = sdpa_name_index(text, names, sizeof(names) / sizeof(names[0]));
    if (i < 0)
        return -1;
    *out = (sdpa_float_atomics_t)i;
    return 0;
}
