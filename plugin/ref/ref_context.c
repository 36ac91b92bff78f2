/* ref_context.c - contexts of the ref backend: a remembered ze_context
 * (for memory checks and events) and a fixed feature list. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "ref.h"

sdpa_status_t ref_context_create(const sdpa_context_desc_t *desc, sdpa_context_t **out)
{
    if (out == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "out is NULL");
    *out = NULL;
    if (desc == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "desc is NULL");
    sdpa_status_t status =
            sdpa_struct_check("desc", desc->struct_size, desc->struct_version,
                              SDPA_CONTEXT_DESC_VERSION, sizeof(*desc), sizeof(*desc));
    if (status != SDPA_SUCCESS)
        return status;
    if (desc->flags != 0)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "desc->flags = %u: reserved, must be 0",
                         desc->flags);
    sdpa_context_t *ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL)
        return sdpa_fail(SDPA_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate a context");
    ctx->ze_context = desc->ze_context;
    ctx->ze_device = desc->ze_device;
    *out = ctx;
    return SDPA_SUCCESS;
}

void ref_context_destroy(sdpa_context_t *ctx)
{
    free(ctx);
}

sdpa_status_t ref_context_get_features(sdpa_context_t *ctx, sdpa_features_t *out)
{
    if (ctx == NULL || out == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "%s is NULL", ctx == NULL ? "ctx" : "out");
    sdpa_status_t status = sdpa_struct_check("out", out->struct_size, out->struct_version,
                                             SDPA_FEATURES_VERSION, sizeof(*out), sizeof(*out));
    if (status != SDPA_SUCCESS)
        return status;
    sdpa_features_t f;
    memset(&f, 0, sizeof(f));
    f.struct_size = out->struct_size;
    f.struct_version = out->struct_version;
    snprintf(f.device_name, sizeof(f.device_name), "host (ref)");
    f.max_head_size = SDPA_MAX_HEAD_SIZE;
    f.subgroup_size = 0;
    f.has_f16 = f.has_bf16 = 1;
    f.has_backward = f.has_deterministic_backward = 1;
    f.has_quantized_kv = f.has_dropout = 1;
    memcpy(out, &f, out->struct_size);
    return SDPA_SUCCESS;
}

sdpa_status_t ref_context_query(sdpa_context_t *ctx, sdpa_query_t what, void *out, size_t out_size)
{
    if (ctx == NULL || out == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "%s is NULL", ctx == NULL ? "ctx" : "out");
    if (what != SDPA_QUERY_MODULES_BUILT)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "what = %d: contexts answer only SDPA_QUERY_MODULES_BUILT (4)", (int)what);
    if (out_size < sizeof(uint64_t))
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "out_size = %zu: SDPA_QUERY_MODULES_BUILT needs %zu bytes", out_size,
                         sizeof(uint64_t));
    const uint64_t modules_built = 0; /* the host builds no modules */
    memcpy(out, &modules_built, sizeof(modules_built));
    return SDPA_SUCCESS;
}
