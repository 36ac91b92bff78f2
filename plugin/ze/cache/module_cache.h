/*
 * module_cache.h - Level Zero modules built from the embedded SPIR-V, one per
 * (variant, specialization-constant values, build flags), shared by every
 * primitive of a context, and kept across processes in the persistent
 * cache (disk_cache.h).
 *
 * Building a module is the expensive part of creating a primitive (a JIT of
 * the whole attention kernel): a second primitive that needs the same module
 * builds nothing, and a module some earlier process built is loaded from its
 * native binary (zeModuleGetNativeBinary, then zeModuleCreate with
 * ZE_MODULE_FORMAT_NATIVE) instead of being built. A native binary's key
 * holds everything its code depends on: the SPIR-V's SHA-256, the constant
 * values, the build flags, the driver (UUID, version) and the device (UUID,
 * vendor and device ids, name, IP version where the driver reports it), and
 * the cache's format version. A binary the driver refuses is built again
 * from SPIR-V and replaced.
 */
#ifndef SDPA_ZE_MODULE_CACHE_H
#define SDPA_ZE_MODULE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include <level_zero/ze_api.h>

#include "sdpa.h"
#include "spirv_registry.h"

typedef struct sdpa_module_cache sdpa_module_cache_t;

/* What identifies a module. constants may list the SpecIds in any order;
 * each id must be in spirv/abi/spec_constants.def. build_flags may be NULL. */
typedef struct sdpa_module_key {
    const sdpa_spirv_module_t *spirv;
    const ze_module_constants_t *constants;
    const char *build_flags;
} sdpa_module_key_t;

/* A cache for one Level Zero context and device. Reads SDPA_CACHE,
 * SDPA_CACHE_DIR and SDPA_CACHE_MAX_BYTES (disk_cache.h); the persistent
 * cache is optional: when it cannot be used (disabled, no directory, the
 * device cannot be identified) modules are only built. */
sdpa_status_t sdpa_module_cache_create(ze_context_handle_t context, ze_device_handle_t device,
                                       sdpa_module_cache_t **out);

/* Destroys every module the cache holds. NULL is ignored. */
void sdpa_module_cache_destroy(sdpa_module_cache_t *cache);

/* Stores in *out the module for key: the one this cache already holds, else
 * one loaded from the persistent cache, else one built from SPIR-V (then
 * stored in the persistent cache). All under the cache's lock, so
 * concurrent callers never make the same module twice. The cache owns the
 * module. A build failure returns SDPA_ERROR_BUILD_FAILED with the build
 * log in the message. */
sdpa_status_t sdpa_module_cache_get(sdpa_module_cache_t *cache, const sdpa_module_key_t *key,
                                    ze_module_handle_t *out);

/* What a cache (or a thread's calls, below) did. */
typedef struct sdpa_module_cache_counts {
    uint64_t built;  /* built from SPIR-V (zeModuleCreate calls that succeeded) */
    uint64_t hits;   /* loaded from the persistent cache */
    uint64_t misses; /* looked up in the persistent cache and not found usable */
    uint64_t reused; /* already held by this cache */
} sdpa_module_cache_counts_t;

/* The cache's counts so far. */
sdpa_module_cache_counts_t sdpa_module_cache_counts(sdpa_module_cache_t *cache);

/* "module cache in <dir>", or "module cache off: <why>", in out[size]. */
void sdpa_module_cache_describe(const sdpa_module_cache_t *cache, char *out, size_t size);

/* Counts of the calling thread's sdpa_module_cache_get calls since its last
 * reset, over every cache: what one primitive creation did (SDPA_VERBOSE). */
void sdpa_module_cache_thread_reset(void);
sdpa_module_cache_counts_t sdpa_module_cache_thread_counts(void);

#endif /* SDPA_ZE_MODULE_CACHE_H */
