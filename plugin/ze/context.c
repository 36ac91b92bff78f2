/* context.c - a ze context: the caller's Level Zero context and device, the
 * device's description, a module cache, the state of each command list it
 * appends to (lock, scratch) and a default command list. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_api.h"
#include "error.h"
#include "verbose.h"
#include "ze.h"
#include "ze_result.h"

static sdpa_status_t describe_device(ze_device_handle_t device, sdpa_device_info_t *out)
{
    ze_device_properties_t props = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
    ze_device_compute_properties_t compute = {.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES};
    ze_float_atomic_ext_properties_t atomics = {
            .stype = ZE_STRUCTURE_TYPE_FLOAT_ATOMIC_EXT_PROPERTIES};
    ze_device_module_properties_t module = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES,
                                            .pNext = &atomics};
    SDPA_ZE_TRY(zeDeviceGetProperties(device, &props));
    SDPA_ZE_TRY(zeDeviceGetComputeProperties(device, &compute));
    if (zeDeviceGetModuleProperties(device, &module) != ZE_RESULT_SUCCESS) {
        /* A driver that does not know the float-atomics extension: ask again
         * without it (the kernels then add with compare-and-swap). */
        module.pNext = NULL;
        SDPA_ZE_TRY(zeDeviceGetModuleProperties(device, &module));
    }
    sdpa_device_info_from_ze(&props, &compute, &module, out);
    return SDPA_SUCCESS;
}

/* The ordinal of a queue group that runs compute kernels. */
static sdpa_status_t compute_ordinal(ze_device_handle_t device, uint32_t *out)
{
    uint32_t count = 0;
    SDPA_ZE_TRY(zeDeviceGetCommandQueueGroupProperties(device, &count, NULL));
    ze_command_queue_group_properties_t *groups = calloc(count ? count : 1, sizeof(*groups));
    if (!groups)
        return sdpa_fail(SDPA_ERROR_OUT_OF_HOST_MEMORY, "out of host memory for queue groups");
    for (uint32_t i = 0; i < count; i++)
        groups[i].stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
    ze_result_t result = zeDeviceGetCommandQueueGroupProperties(device, &count, groups);
    sdpa_status_t status = SDPA_SUCCESS;
    if (result != ZE_RESULT_SUCCESS) {
        status = sdpa_ze_fail("zeDeviceGetCommandQueueGroupProperties", result);
    } else {
        uint32_t i = 0;
        while (i < count && !(groups[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE))
            i++;
        if (i == count)
            status = sdpa_fail(SDPA_ERROR_UNSUPPORTED, "the device has no compute queue group");
        *out = i;
    }
    free(groups);
    return status;
}

static sdpa_status_t create_default_list(sdpa_context_t *ctx)
{
    uint32_t ordinal = 0;
    sdpa_status_t status = compute_ordinal(ctx->ze_device, &ordinal);
    if (status != SDPA_SUCCESS)
        return status;
    /* Synchronous: an execution's results are ready when it returns, which is
     * what a caller who gave no command list can rely on. */
    ze_command_queue_desc_t desc = {
            .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
            .ordinal = ordinal,
            .mode = ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS,
            .priority = ZE_COMMAND_QUEUE_PRIORITY_NORMAL,
    };
    SDPA_ZE_TRY(zeCommandListCreateImmediate(ctx->ze_context, ctx->ze_device, &desc,
                                             &ctx->command_list));
    ctx->owns_command_list = 1;
    return SDPA_SUCCESS;
}

sdpa_status_t sdpa_ze_context_create(const sdpa_context_desc_t *desc, sdpa_context_t **out)
{
    sdpa_status_t status = sdpa_context_desc_check(desc, out);
    if (status != SDPA_SUCCESS)
        return status;
    if (desc->ze_context == NULL || desc->ze_device == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "desc->%s is NULL: the ze backend needs the Level Zero context and "
                         "device to run on",
                         desc->ze_context == NULL ? "ze_context" : "ze_device");

    sdpa_context_t *ctx = calloc(1, sizeof(*ctx));
    if (!ctx)
        return sdpa_fail(SDPA_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate a context");
    sdpa_live_list_init(&ctx->primitives);
    ctx->ze_context = desc->ze_context;
    ctx->ze_device = desc->ze_device;
    ctx->command_list = desc->command_list;

    status = describe_device(ctx->ze_device, &ctx->device);
    const char *kernels = getenv("SDPA_ZE_KERNELS");
    if (status == SDPA_SUCCESS && sdpa_kernel_set_parse(kernels, &ctx->device.kernels) != 0)
        status = sdpa_fail(SDPA_ERROR_INVALID_CONFIG,
                           "SDPA_ZE_KERNELS = \"%s\": expected auto, portable, xe or xe_hpg",
                           kernels);
    const char *atomics = getenv("SDPA_ZE_FLOAT_ATOMICS");
    if (status == SDPA_SUCCESS &&
        sdpa_float_atomics_parse(atomics, &ctx->device.float_atomics) != 0)
        status = sdpa_fail(SDPA_ERROR_INVALID_CONFIG,
                           "SDPA_ZE_FLOAT_ATOMICS = \"%s\": expected auto, cas or native", atomics);
    if (status == SDPA_SUCCESS)
        status = sdpa_module_cache_create(ctx->ze_context, ctx->ze_device, &ctx->modules);
    if (status == SDPA_SUCCESS)
        status = sdpa_list_table_create(ctx->ze_context, ctx->ze_device, &ctx->lists);
    if (status == SDPA_SUCCESS && ctx->command_list == NULL)
        status = create_default_list(ctx);
    if (status != SDPA_SUCCESS) {
        sdpa_ze_context_destroy(ctx);
        return status;
    }
    if (sdpa_verbose_level() >= 2) {
        char device[sizeof(ctx->device.name)], cache[4500];
        sdpa_module_cache_describe(ctx->modules, cache, sizeof(cache));
        sdpa_verbose_print("context,ze,%s,%s",
                           sdpa_verbose_field(ctx->device.name, device, sizeof(device)), cache);
    }
    *out = ctx;
    return SDPA_SUCCESS;
}

static void orphan_primitive(sdpa_live_link_t *link, void *user)
{
    (void)user;
    sdpa_ze_primitive_orphan(SDPA_LIVE_OWNER(link, sdpa_primitive_t, link));
}

void sdpa_ze_context_destroy(sdpa_context_t *ctx)
{
    if (!ctx)
        return;
    /* Kernels first: a module is destroyed only once its kernels are. */
    sdpa_live_list_drain(&ctx->primitives, orphan_primitive, NULL);
    if (ctx->owns_command_list)
        zeCommandListDestroy(ctx->command_list);
    sdpa_list_table_destroy(ctx->lists);
    sdpa_module_cache_destroy(ctx->modules);
    free(ctx);
}

sdpa_status_t sdpa_ze_context_get_features(sdpa_context_t *ctx, sdpa_features_t *out)
{
    sdpa_features_t f;
    sdpa_status_t status = sdpa_features_begin(ctx, out, &f);
    if (status != SDPA_SUCCESS)
        return status;
    snprintf(f.device_name, sizeof(f.device_name), "%s", ctx->device.name);
    f.max_head_size = SDPA_MAX_HEAD_SIZE;
    f.subgroup_size = sdpa_device_subgroup_size(&ctx->device);
    f.has_f16 = (uint32_t)ctx->device.has_fp16;
    f.has_bf16 = (uint32_t)ctx->device.has_bf16;
    f.has_backward = 1;
    f.has_deterministic_backward = 1;
    f.has_quantized_kv = 1;
    f.has_dropout = 1;
    f.has_merge = 1;
    f.has_supports_query = 1; /* answered from the plan, nothing built */
    f.has_sinks = 1;          /* portable forward, decode, backward; never the fast path */
    f.has_split_kv = 1;       /* the decode kernel's problems; num_splits is ignored elsewhere */
    /* ABI 1.1: what the kernels run (sdpa_ze_llm_supported refuses the rest). */
    f.has_window = 1;
    f.has_softcap = 1;
    f.has_alibi = 1;
    f.has_paged_kv = 1;
    f.has_varlen = 1;
    sdpa_features_store(&f, out);
    return SDPA_SUCCESS;
}

sdpa_status_t sdpa_ze_context_query(sdpa_context_t *ctx, sdpa_query_t what, void *out,
                                    size_t out_size)
{
    sdpa_context_counters_t counters = {0};
    if (ctx) {
        sdpa_module_cache_counts_t modules = sdpa_module_cache_counts(ctx->modules);
        counters.modules_built = modules.built;
        counters.module_cache_hits = modules.hits;
        counters.module_cache_misses = modules.misses;
        counters.scratch_allocations = sdpa_list_table_scratch_allocations(ctx->lists);
    }
    return sdpa_context_query_answer(ctx, what, out, out_size, &counters);
}
