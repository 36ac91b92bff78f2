/* kernel.c - kernels from cached modules, and argument setters whose
 * failures name the argument. */
#include "error.h"
#include "spirv_registry.h"
#include "ze.h"
#include "ze_result.h"

sdpa_status_t ze_kernel_from_cache(sdpa_context_t *ctx, const char *source, int d_max,
                                   uint32_t subgroup_size, const sdpa_spec_values_t *constants,
                                   const char *build_flags, const char *kernel_name,
                                   ze_kernel_handle_t *out)
{
    const sdpa_spirv_module_t *spirv = sdpa_spirv_find(source, d_max, (int)subgroup_size);
    if (!spirv)
        return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                         "no SPIR-V variant %s.%d.%u is built in (head-size bucket %d, sub-group "
                         "size %u)",
                         source, d_max, subgroup_size, d_max, subgroup_size);
    /* Only the constants the variant declares: the compiler dropped the rest,
     * a driver may refuse ids the module lacks, and leaving them out lets
     * problems that differ only in unused settings share one module. */
    sdpa_spec_values_t used;
    sdpa_spec_values_init(&used);
    for (uint32_t i = 0; i < constants->count; i++)
        if (sdpa_spirv_has_spec_id(spirv, constants->ids[i])) {
            used.ids[used.count] = constants->ids[i];
            used.slots[used.count] = constants->slots[i];
            used.count++;
        }
    ze_module_constants_t ze_constants = sdpa_spec_values_ze(&used);
    sdpa_module_key_t key = {
            .spirv = spirv, .constants = &ze_constants, .build_flags = build_flags};
    ze_module_handle_t module = NULL;
    sdpa_status_t status = sdpa_module_cache_get(ctx->modules, &key, &module);
    if (status != SDPA_SUCCESS)
        return status;
    ze_kernel_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = kernel_name};
    ze_result_t result = zeKernelCreate(module, &desc, out);
    if (result != ZE_RESULT_SUCCESS)
        return sdpa_ze_failf(result, "zeKernelCreate(\"%s\")", kernel_name);
    return SDPA_SUCCESS;
}

sdpa_status_t ze_check_arg_count(ze_kernel_handle_t kernel, const char *name, uint32_t expected)
{
    ze_kernel_properties_t props = {.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES};
    ze_result_t result = zeKernelGetProperties(kernel, &props);
    if (result != ZE_RESULT_SUCCESS)
        return sdpa_ze_failf(result, "zeKernelGetProperties(\"%s\")", name);
    if (props.numKernelArgs != expected)
        return sdpa_fail(SDPA_ERROR_DEVICE,
                         "kernel \"%s\" takes %u arguments but its argument table has %u: the "
                         "module and the host disagree",
                         name, props.numKernelArgs, expected);
    return SDPA_SUCCESS;
}

sdpa_status_t ze_set_arg(ze_kernel_handle_t kernel, uint32_t index, size_t size, const void *value)
{
    ze_result_t result = zeKernelSetArgumentValue(kernel, index, size, value);
    if (result != ZE_RESULT_SUCCESS)
        return sdpa_ze_failf(result, "zeKernelSetArgumentValue(argument %u, %zu bytes)", index,
                             size);
    return SDPA_SUCCESS;
}

sdpa_status_t ze_set_ptr(ze_kernel_handle_t kernel, uint32_t index, const void *pointer)
{
    return ze_set_arg(kernel, index, sizeof(pointer), &pointer);
}
