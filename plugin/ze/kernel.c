/* kernel.c - kernels from cached modules, checked against their argument
 * tables, and the table-driven argument setter. */
#include <stdio.h>

#include "error.h"
#include "spirv_registry.h"
#include "ze.h"
#include "ze_result.h"

sdpa_status_t sdpa_ze_kernel_from_cache(sdpa_context_t *ctx, const char *source, int d_max,
                                        uint32_t subgroup_size, const sdpa_spec_values_t *constants,
                                        const char *build_flags, const char *kernel_name,
                                        const sdpa_arg_table_t *args, ze_kernel_handle_t *out)
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
    /* The kernel's parameter list and args come from one table; only a
     * module of another build can disagree. The kernel is the caller's to
     * destroy either way. */
    ze_kernel_properties_t props = {.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES};
    result = zeKernelGetProperties(*out, &props);
    if (result != ZE_RESULT_SUCCESS)
        return sdpa_ze_failf(result, "zeKernelGetProperties(\"%s\")", kernel_name);
    char variant[64];
    snprintf(variant, sizeof(variant), "%s.%d.%u", source, d_max, subgroup_size);
    return sdpa_kernel_args_check(args, kernel_name, variant, props.numKernelArgs);
}

sdpa_status_t sdpa_ze_set_args(ze_kernel_handle_t kernel, const char *kernel_name,
                               const sdpa_arg_table_t *args, const void *values)
{
    for (uint32_t i = 0; i < args->count; i++) {
        const sdpa_arg_row_t *row = &args->rows[i];
        const void *value = (const char *)values + row->offset;
        size_t size = row->size;
        if (row->kind == SDPA_ARG_KIND_LOCAL) { /* the size; the value is NULL */
            size = *(const uint32_t *)value;
            value = NULL;
        }
        ze_result_t result = zeKernelSetArgumentValue(kernel, i, size, value);
        if (result != ZE_RESULT_SUCCESS)
            return sdpa_ze_failf(result, "zeKernelSetArgumentValue(%s argument %u %s, %zu bytes)",
                                 kernel_name, i, row->name, size);
    }
    return SDPA_SUCCESS;
}
