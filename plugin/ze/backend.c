/* backend.c - the ze backend's table and the ABI negotiation. */
#include "backend_api.h"
#include "error.h"
#include "ze.h"

static const char *ze_last_error(void)
{
    return sdpa_error_message();
}

static const sdpa_backend_iface_t ze_iface = {
        .abi_version = SDPA_ABI_VERSION,
        .struct_size = sizeof(sdpa_backend_iface_t),
        .name = "ze",
        .last_error = ze_last_error,
        .context_create = ze_context_create,
        .context_destroy = ze_context_destroy,
        .context_get_features = ze_context_get_features,
        .context_query = ze_context_query,
        .primitive_create = ze_primitive_create,
        .primitive_destroy = ze_primitive_destroy,
        .primitive_query = ze_primitive_query,
        .primitive_execute = ze_primitive_execute,
        .merge_create = ze_merge_create,
        .merge_execute = ze_merge_execute,
};

sdpa_status_t sdpa_backend_negotiate(uint32_t *abi_version, const sdpa_backend_iface_t **iface)
{
    return sdpa_backend_negotiate_table(&ze_iface, abi_version, iface);
}
