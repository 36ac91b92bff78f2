/* backend.c - the front loader's public functions (sdpa.h). */
#define _GNU_SOURCE /* dlinfo */
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "loader.h"

/* The file library was loaded from, as the dynamic linker names it (a
 * library found on the linker's path gets its full path). */
static char *loaded_path(void *library, const char *fallback)
{
    struct link_map *map = NULL;
    if (dlinfo(library, RTLD_DI_LINKMAP, &map) == 0 && map != NULL && map->l_name != NULL &&
        map->l_name[0] != '\0')
        return strdup(map->l_name);
    return strdup(fallback);
}

static sdpa_status_t open_backend(const char *name, sdpa_backend_t **out)
{
    if (out == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "out is NULL");
    *out = NULL;
    if (name == NULL) {
        name = getenv("SDPA_BACKEND");
        if (name == NULL || name[0] == '\0')
            name = "ze";
    }

    sdpa_status_t status;
    sdpa_backend_t *backend = NULL;
    void *library = NULL;
    char *path = NULL;
    const sdpa_backend_iface_t *iface = NULL;

    status = sdpa_loader_dlopen(name, &library);
    if (status != SDPA_SUCCESS)
        goto fail;
    path = loaded_path(library, name);
    if (path == NULL) {
        status = sdpa_fail(SDPA_ERROR_OUT_OF_HOST_MEMORY, "cannot copy the backend's path");
        goto fail;
    }
    status = sdpa_loader_negotiate(library, path, &iface);
    if (status != SDPA_SUCCESS)
        goto fail;
    backend = calloc(1, sizeof(*backend));
    if (backend == NULL) {
        status = sdpa_fail(SDPA_ERROR_OUT_OF_HOST_MEMORY, "cannot allocate the backend handle");
        goto fail;
    }
    backend->library = library;
    backend->iface = iface;
    backend->path = path;
    *out = backend;
    return SDPA_SUCCESS;

fail:
    free(path);
    if (library != NULL)
        dlclose(library);
    return status;
}

SDPA_EXPORT sdpa_status_t sdpa_backend_open(const char *name, sdpa_backend_t **out)
{
    return SDPA_ENTRY(open_backend(name, out));
}

SDPA_EXPORT const sdpa_backend_iface_t *sdpa_backend_get_iface(const sdpa_backend_t *backend)
{
    return backend != NULL ? backend->iface : NULL;
}

SDPA_EXPORT const char *sdpa_backend_path(const sdpa_backend_t *backend)
{
    return backend != NULL ? backend->path : NULL;
}

SDPA_EXPORT void sdpa_backend_close(sdpa_backend_t *backend)
{
    if (backend == NULL)
        return;
    dlclose(backend->library);
    free(backend->path);
    free(backend);
}

SDPA_EXPORT const char *sdpa_loader_last_error(void)
{
    return sdpa_error_message();
}

SDPA_EXPORT const char *sdpa_status_name(sdpa_status_t status)
{
    return sdpa_status_string(status);
}
