/* negotiate.c - asking a loaded backend for its table and checking it. */
#include <dlfcn.h>
#include <string.h>

#include "error.h"
#include "loader.h"

/* Refusal when the backend speaks another major version. */
static sdpa_status_t wrong_major(const char *path, uint32_t theirs)
{
    uint32_t ours = SDPA_ABI_VERSION;
    return sdpa_fail(SDPA_ERROR_ABI_VERSION,
                     "backend %s speaks ABI %u.%u, %s than this loader's ABI %u.%u", path,
                     SDPA_VERSION_MAJOR(theirs), SDPA_VERSION_MINOR(theirs),
                     SDPA_VERSION_MAJOR(theirs) < SDPA_VERSION_MAJOR(ours) ? "older" : "newer",
                     SDPA_VERSION_MAJOR(ours), SDPA_VERSION_MINOR(ours));
}

/* Every member the table's minor version defines (up to ours) must be set. */
static sdpa_status_t check_members(const char *path, const sdpa_backend_iface_t *t)
{
    const int v1_1 = SDPA_VERSION_MINOR(t->abi_version) >= 1;
    const int v1_2 = SDPA_VERSION_MINOR(t->abi_version) >= 2;
    const struct {
        const char *name;
        int present;
        const char *version;
    } members[] = {
            {"name", t->name != NULL, "1.0"},
            {"last_error", t->last_error != NULL, "1.0"},
            {"context_create", t->context_create != NULL, "1.0"},
            {"context_destroy", t->context_destroy != NULL, "1.0"},
            {"context_get_features", t->context_get_features != NULL, "1.0"},
            {"context_query", t->context_query != NULL, "1.0"},
            {"primitive_create", t->primitive_create != NULL, "1.0"},
            {"primitive_destroy", t->primitive_destroy != NULL, "1.0"},
            {"primitive_query", t->primitive_query != NULL, "1.0"},
            {"primitive_execute", t->primitive_execute != NULL, "1.0"},
            {"merge_create", !v1_1 || t->merge_create != NULL, "1.1"},
            {"merge_execute", !v1_1 || t->merge_execute != NULL, "1.1"},
            {"primitive_supports", !v1_2 || t->primitive_supports != NULL, "1.2"},
    };
    for (size_t i = 0; i < sizeof(members) / sizeof(members[0]); i++) {
        if (!members[i].present)
            return sdpa_fail(SDPA_ERROR_ABI_VERSION,
                             "backend %s: table member %s is NULL, but ABI %s requires it", path,
                             members[i].name, members[i].version);
    }
    return SDPA_SUCCESS;
}

sdpa_status_t sdpa_loader_negotiate(void *library, const char *path,
                                    const sdpa_backend_iface_t **iface)
{
    *iface = NULL;
    dlerror(); /* clear */
    void *symbol = dlsym(library, SDPA_BACKEND_ENTRY_POINT);
    if (symbol == NULL) {
        const char *why = dlerror();
        return sdpa_fail(SDPA_ERROR_SYMBOL_NOT_FOUND, "%s does not export %s: %s", path,
                         SDPA_BACKEND_ENTRY_POINT, why ? why : "symbol is NULL");
    }
    sdpa_backend_negotiate_fn negotiate;
    memcpy(&negotiate, &symbol, sizeof(negotiate)); /* object to function pointer */

    uint32_t version = SDPA_ABI_VERSION;
    const sdpa_backend_iface_t *table = NULL;
    sdpa_status_t status = negotiate(&version, &table);
    if (status == SDPA_ERROR_ABI_VERSION)
        return wrong_major(path, version);
    if (status != SDPA_SUCCESS)
        return sdpa_fail(status, "backend %s: %s failed with %s", path, SDPA_BACKEND_ENTRY_POINT,
                         sdpa_status_string(status));
    if (SDPA_VERSION_MAJOR(version) != SDPA_VERSION_MAJOR(SDPA_ABI_VERSION))
        return wrong_major(path, version);
    if (table == NULL)
        return sdpa_fail(SDPA_ERROR_ABI_VERSION, "backend %s: %s succeeded but returned no table",
                         path, SDPA_BACKEND_ENTRY_POINT);
    if (table->abi_version != version)
        return sdpa_fail(SDPA_ERROR_ABI_VERSION,
                         "backend %s: table abi_version = %u.%u differs from the negotiated "
                         "version %u.%u",
                         path, SDPA_VERSION_MAJOR(table->abi_version),
                         SDPA_VERSION_MINOR(table->abi_version), SDPA_VERSION_MAJOR(version),
                         SDPA_VERSION_MINOR(version));
    const uint32_t minor = SDPA_VERSION_MINOR(version);
    const size_t promised = minor >= 2   ? SDPA_IFACE_V1_2_SIZE
                            : minor == 1 ? SDPA_IFACE_V1_1_SIZE
                                         : SDPA_IFACE_V1_SIZE;
    if (table->struct_size < promised)
        return sdpa_fail(SDPA_ERROR_ABI_VERSION,
                         "backend %s: table struct_size = %u is smaller than the %zu bytes ABI "
                         "%u.%u promises",
                         path, table->struct_size, promised, SDPA_VERSION_MAJOR(version),
                         SDPA_VERSION_MINOR(version));
    sdpa_status_t members = check_members(path, table);
    if (members != SDPA_SUCCESS)
        return members;
    *iface = table;
    return SDPA_SUCCESS;
}
