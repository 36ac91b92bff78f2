/*
 * loader.h - internals of the front loader libsdpa: finding a backend
 * library and negotiating its table.
 */
#ifndef SDPA_LOADER_H
#define SDPA_LOADER_H

#include "sdpa.h"

/* libsdpa exports only the front-loader functions of sdpa.h. */
#define SDPA_EXPORT __attribute__((visibility("default")))

/* The part of sdpa_backend_iface_t that ABI 1.0 defines: a backend of any
 * 1.x minor version hands out at least this much. */
#define SDPA_IFACE_V1_SIZE                                                                         \
    (offsetof(sdpa_backend_iface_t, primitive_execute) + sizeof(void (*)(void)))

/* The part ABI 1.1 defines (1.0 and merge_create, merge_execute). */
#define SDPA_IFACE_V1_1_SIZE                                                                       \
    (offsetof(sdpa_backend_iface_t, merge_execute) + sizeof(void (*)(void)))

/* The part ABI 1.2 defines (1.1 and primitive_supports). */
#define SDPA_IFACE_V1_2_SIZE                                                                       \
    (offsetof(sdpa_backend_iface_t, primitive_supports) + sizeof(void (*)(void)))

struct sdpa_backend {
    void *library;                     /* dlopen handle */
    const sdpa_backend_iface_t *iface; /* static table inside library */
    char *path;                        /* where library came from (owned) */
};

/* Resolves name ("ze", "ref", or a path containing '/') and dlopens the
 * library with RTLD_NOW | RTLD_LOCAL: a path is opened as given; a short name
 * becomes libsdpa_<name>.so, tried in $SDPA_PLUGIN_DIR, then in
 * SDPA_DEFAULT_PLUGIN_DIR, then on the dynamic linker's path. On success
 * *library is the handle (the caller dlcloses it). On failure returns
 * SDPA_ERROR_INVALID_ARGUMENT (a short name with characters outside
 * [A-Za-z0-9_-]) or SDPA_ERROR_BACKEND_NOT_FOUND with every path tried and
 * its dlerror() text. */
sdpa_status_t sdpa_loader_dlopen(const char *name, void **library);

/* Looks up SDPA_BACKEND_ENTRY_POINT in library (loaded from path, for
 * messages), negotiates SDPA_ABI_VERSION and checks the table it returns:
 * same major version, abi_version as negotiated, struct_size at least
 * SDPA_IFACE_V1_SIZE (SDPA_IFACE_V1_1_SIZE for minor 1, SDPA_IFACE_V1_2_SIZE
 * for minor 2 and later), name and
 * every function of its minor version (up to ours) present. On success stores
 * the table in *iface. Fails with SDPA_ERROR_SYMBOL_NOT_FOUND or
 * SDPA_ERROR_ABI_VERSION (or the status the entry point returned). Does not
 * close library. */
sdpa_status_t sdpa_loader_negotiate(void *library, const char *path,
                                    const sdpa_backend_iface_t **iface);

#endif /* SDPA_LOADER_H */
