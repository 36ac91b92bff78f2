/* backend.c - the ze backend's table and the ABI negotiation. */
#include "backend_api.h"
#include "error.h"
#include "ze.h"

static const char *ze_last_error(void)
{
    return sdpa_error_message();
}

/* The table's entries: the ze_* functions, each through SDPA_ENTRY, so that
 * last_error() describes the calling thread's most recent call (sdpa.h). */
static sdpa_status_t entry_context_create(const sdpa_context_desc_t *desc, sdpa_context_t **out)
{
    return SDPA_ENTRY(ze_context_create(desc, out));
}

static sdpa_status_t entry_context_get_features(sdpa_context_t *ctx, sdpa_features_t *out)
{
    return SDPA_ENTRY(ze_context_get_features(ctx, out));
}

static sdpa_status_t entry_context_query(sdpa_context_t *ctx, sdpa_query_t what, void *out,
                                         size_t out_size)
{
    return SDPA_ENTRY(ze_context_query(ctx, what, out, out_size));
}

static sdpa_status_t entry_primitive_create(sdpa_context_t *ctx, const sdpa_problem_desc_t *desc,
                                            sdpa_primitive_t **out)
{
    return SDPA_ENTRY(ze_primitive_create(ctx, desc, out));
}

static sdpa_status_t entry_primitive_query(sdpa_primitive_t *prim, sdpa_query_t what, void *out,
                                           size_t out_size)
{
    return SDPA_ENTRY(ze_primitive_query(prim, what, out, out_size));
}

static sdpa_status_t entry_primitive_execute(sdpa_primitive_t *prim, const sdpa_exec_args_t *args)
{
    return SDPA_ENTRY(ze_primitive_execute(prim, args));
}

static sdpa_status_t entry_merge_create(sdpa_context_t *ctx, const sdpa_merge_desc_t *desc,
                                        sdpa_primitive_t **out)
{
    return SDPA_ENTRY(ze_merge_create(ctx, desc, out));
}

static sdpa_status_t entry_merge_execute(sdpa_primitive_t *prim, const sdpa_merge_args_t *args)
{
    return SDPA_ENTRY(ze_merge_execute(prim, args));
}

static const sdpa_backend_iface_t ze_iface = {
        .abi_version = SDPA_ABI_VERSION,
        .struct_size = sizeof(sdpa_backend_iface_t),
        .name = "ze",
        .last_error = ze_last_error,
        .context_create = entry_context_create,
        .context_destroy = ze_context_destroy,
        .context_get_features = entry_context_get_features,
        .context_query = entry_context_query,
        .primitive_create = entry_primitive_create,
        .primitive_destroy = ze_primitive_destroy,
        .primitive_query = entry_primitive_query,
        .primitive_execute = entry_primitive_execute,
        .merge_create = entry_merge_create,
        .merge_execute = entry_merge_execute,
};

sdpa_status_t sdpa_backend_negotiate(uint32_t *abi_version, const sdpa_backend_iface_t **iface)
{
    return SDPA_ENTRY(sdpa_backend_negotiate_table(&ze_iface, abi_version, iface));
}
