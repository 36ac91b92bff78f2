/* ref_backend.c - the ref backend's table and the ABI negotiation. */
#include "backend_api.h"
#include "error.h"
#include "ref.h"

static const char *ref_last_error(void)
{
    return sdpa_error_message();
}

static const sdpa_backend_iface_t ref_iface = {
        .abi_version = SDPA_ABI_VERSION,
        .struct_size = sizeof(sdpa_backend_iface_t),
        .name = "ref",
        .last_error = ref_last_error,
        .context_create = ref_context_create,
        .context_destroy = ref_context_destroy,
        .context_get_features = ref_context_get_features,
        .context_query = ref_context_query,
        .primitive_create = ref_primitive_create,
        .primitive_destroy = ref_primitive_destroy,
        .primitive_query = ref_primitive_query,
        .primitive_execute = ref_primitive_execute,
        .merge_create = ref_merge_create,
        .merge_execute = ref_merge_execute,
};

sdpa_status_t sdpa_backend_negotiate(uint32_t *abi_version, const sdpa_backend_iface_t **iface)
{
    return sdpa_backend_negotiate_table(&ref_iface, abi_version, iface);
}
