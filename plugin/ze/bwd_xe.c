/* bwd_xe.c - the backward fast path's kernels take the portable kernels'
 * arguments (sdpa_xe_bwd_args.def lists them in the order of enum
 * sdpa_bwd_arg), so bwd.c launches either; this file holds the proof. */
#include "error.h"
#include "kernel_abi.h"
#include "kernel_abi_bwd.h"
#include "kernel_abi_xe.h"
#include "ze.h"
#include "ze_result.h"

/* Every argument at the portable kernels' index, and no other. */
#define SDPA_XE_ARG(name, type, kind, meaning)                                                     \
    _Static_assert((int)SDPA_XE_BWD_ARG_##name == (int)SDPA_BWD_ARG_##name,                        \
                   #name " is where the portable kernels take it");
#define SDPA_XE_ARG_LAST SDPA_XE_ARG
#include "sdpa_xe_bwd_args.def"
#undef SDPA_XE_ARG
#undef SDPA_XE_ARG_LAST
_Static_assert((int)SDPA_XE_BWD_ARG_COUNT == (int)SDPA_BWD_ARG_COUNT, "as many arguments");

sdpa_status_t ze_bwd_xe_check_kernel(ze_kernel_handle_t kernel, const char *variant,
                                     const char *name)
{
    ze_kernel_properties_t props = {.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES};
    SDPA_ZE_TRY(zeKernelGetProperties(kernel, &props));
    if (props.numKernelArgs != SDPA_XE_BWD_ARG_COUNT)
        return sdpa_fail(SDPA_ERROR_DEVICE,
                         "%s in %s takes %u arguments, sdpa_xe_bwd_args.def lists %d", name,
                         variant, props.numKernelArgs, (int)SDPA_XE_BWD_ARG_COUNT);
    return SDPA_SUCCESS;
}
