/*
 * module_cache.h - Level Zero modules built from the embedded SPIR-V, one per
 * (variant, specialization-constant values, build flags), shared by every
 * primitive of a context.
 *
 * Building a module is the expensive part of creating a primitive (a JIT of
 * the whole attention kernel); a second primitive that needs the same module
 * builds nothing.
 */
#ifndef SDPA_ZE_MODULE_CACHE_H
#define SDPA_ZE_MODULE_CACHE_H

#include <stdint.h>

#include <level_zero/ze_api.h>

#include "sdpa.h"
#include "spirv_registry.h"

typedef struct sdpa_module_cache sdpa_module_cache_t;

/* What identifies a module. constants may list the SpecIds in any order;
 * each id must be in spirv/spec_constants.def. build_flags may be NULL. */
typedef struct sdpa_module_key {
    const sdpa_spirv_module_t *spirv;
    const ze_module_constants_t *constants;
    const char *build_flags;
} sdpa_module_key_t;

/* A cache for one Level Zero context and device. */
sdpa_status_t sdpa_module_cache_create(ze_context_handle_t context, ze_device_handle_t device,
                                       sdpa_module_cache_t **out);

/* Destroys every module the cache built. NULL is ignored. */
void sdpa_module_cache_destroy(sdpa_module_cache_t *cache);

/* Stores in *out the module for key, building it on first use (under the
 * cache's lock, so concurrent callers never build the same module twice).
 * The cache owns the module. A build failure returns SDPA_ERROR_BUILD_FAILED
 * with the build log in the message. */
sdpa_status_t sdpa_module_cache_get(sdpa_module_cache_t *cache, const sdpa_module_key_t *key,
                                    ze_module_handle_t *out);

/* How many modules this cache has built (zeModuleCreate calls that
 * succeeded). */
uint64_t sdpa_module_cache_builds(sdpa_module_cache_t *cache);

#endif /* SDPA_ZE_MODULE_CACHE_H */
