/* kernel_set.c - the SDPA_ZE_KERNELS choice between the kernel sets. */
#include "device.h"
#include "name_table.h"

static const char *const set_names[] = {
        [SDPA_KERNELS_AUTO] = "auto",
        [SDPA_KERNELS_PORTABLE] = "portable",
        [SDPA_KERNELS_XE] = "xe",
        [SDPA_KERNELS_XE_HPG] = "xe_hpg",
};

int sdpa_kernel_set_parse(const char *text, sdpa_kernel_set_t *out)
{
    const int i = sdpa_name_index(text, set_names, sizeof(set_names) / sizeof(set_names[0]));
    if (i < 0)
        return -1;
    *out = (sdpa_kernel_set_t)i;
    return 0;
}

const char *sdpa_kernel_set_name(sdpa_kernel_set_t set)
{
    if ((size_t)set < sizeof(set_names) / sizeof(set_names[0]))
        return set_names[set];
    return "invalid";
}
