/* module_cache.c - a small list of the context's modules keyed by their
 * serialized key, in front of the persistent cache of native binaries. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byte_writer.h"
#include "fnv1a.h"
#include "disk_cache.h"
#include "device_object.h"
#include "error.h"
#include "module_cache.h"
#include "module_identity.h"
#include "spec_table.h"
#include "verbose.h"
#include "ze_result.h"

/* Room for the first part of a build log in an error message. */
#define BUILD_LOG_EXCERPT 3000

typedef struct cache_entry {
    struct cache_entry *next;
    uint64_t hash;
    size_t key_size;
    unsigned char *key; /* serialized sdpa_module_key_t */
    ze_module_handle_t module;
} cache_entry_t;

struct sdpa_module_cache {
    sdpa_device_binding_t on; /* first: sdpa_device_object_new */
    pthread_mutex_t lock;
    cache_entry_t *entries;
    sdpa_module_cache_counts_t counts;
    /* The persistent cache, or NULL; identity is valid when it is set. */
    sdpa_disk_cache_t *disk;
    sdpa_device_identity_t identity;
    char why_off[4400]; /* why disk is NULL, for SDPA_VERBOSE */
};

static _Thread_local sdpa_module_cache_counts_t thread_counts;

static void key_put_string(sdpa_byte_writer_t *w, const char *s)
{
    sdpa_byte_put(w, s, strlen(s) + 1);
}

/* Sorting the constants makes the key independent of the order the caller
 * listed them in. */
static int compare_ids(const void *a, const void *b)
{
    uint32_t x = **(const uint32_t *const *)a, y = **(const uint32_t *const *)b;
    return (x > y) - (x < y);
}

/* Appends the build flags and the constants (sorted, each id, size and
 * value) to w: the part of a key both caches share. */
static sdpa_status_t put_build_inputs(const sdpa_module_key_t *key, sdpa_byte_writer_t *w)
{
    const ze_module_constants_t *constants = key->constants;
    uint32_t count = constants ? constants->numConstants : 0;
    const uint32_t **order = calloc(count ? count : 1, sizeof(*order));
    if (!order)
        return sdpa_fail(SDPA_ERROR_OUT_OF_HOST_MEMORY, "out of host memory for a module key");
    for (uint32_t i = 0; i < count; i++)
        order[i] = &constants->pConstantIds[i];
    qsort(order, count, sizeof(*order), compare_ids);

    key_put_string(w, key->build_flags ? key->build_flags : "");
    sdpa_byte_put_u32(w, count);
    for (uint32_t i = 0; i < count; i++) {
        uint32_t id = *order[i];
        const sdpa_spec_constant_info_t *info = sdpa_spec_constant_find(id);
        if (!info) {
            free(order);
            return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                             "specialization constant id %u is not in spec_constants.def", id);
        }
        size_t index = (size_t)(order[i] - constants->pConstantIds);
        sdpa_byte_put_u32(w, id);
        sdpa_byte_put_u32(w, (uint32_t)info->size);
        sdpa_byte_put(w, constants->pConstantValues[index], info->size);
    }
    free(order);
    if (w->failed)
        return sdpa_fail(SDPA_ERROR_OUT_OF_HOST_MEMORY, "out of host memory for a module key");
    return SDPA_SUCCESS;
}

/* The key within a context: the variant is its registry entry. */
static sdpa_status_t memory_key(const sdpa_module_key_t *key, sdpa_byte_writer_t *w)
{
    sdpa_byte_put(w, &key->spirv, sizeof(key->spirv));
    return put_build_inputs(key, w);
}

/* The key across processes: what the native binary's code depends on. */
static sdpa_status_t persistent_key(const sdpa_module_cache_t *cache, const sdpa_module_key_t *key,
                                    sdpa_byte_writer_t *w)
{
    const sdpa_device_identity_t *id = &cache->identity;
    key_put_string(w, "sdpa-ze module");
    sdpa_byte_put_u32(w, SDPA_DISK_CACHE_VERSION);
    sdpa_byte_put_u32(w, id->vendor_id);
    sdpa_byte_put_u32(w, id->device_id);
    sdpa_byte_put(w, id->device_uuid, sizeof(id->device_uuid));
    key_put_string(w, id->device_name);
    sdpa_byte_put(w, id->driver_uuid, sizeof(id->driver_uuid));
    sdpa_byte_put_u32(w, id->driver_version);

    unsigned char digest[SDPA_SHA256_BYTES];
    sdpa_spirv_digest(key->spirv, digest);
    key_put_string(w, key->spirv->source);
    sdpa_byte_put_u32(w, (uint32_t)key->spirv->d_max);
    sdpa_byte_put_u32(w, (uint32_t)key->spirv->subgroup_size);
    sdpa_byte_put(w, digest, sizeof(digest));
    return put_build_inputs(key, w);
}

/* FNV-1a: the key is short and hashed once per primitive. */
static uint64_t hash_bytes(const unsigned char *bytes, size_t size)
{
    return sdpa_fnv1a64(SDPA_FNV1A64_OFFSET, bytes, size);
}

/* Opens the persistent cache unless the environment turns it off or the
 * device cannot be identified. */
static void open_persistent(sdpa_module_cache_t *cache)
{
    sdpa_disk_cache_settings_t settings;
    sdpa_disk_cache_settings_from_env(&settings);
    if (!settings.enabled) {
        snprintf(cache->why_off, sizeof(cache->why_off), "SDPA_CACHE=%s", getenv("SDPA_CACHE"));
        return;
    }
    char why[256] = "";
    if (sdpa_device_identity_read(cache->on.device, &cache->identity, why, sizeof(why)) != 0) {
        snprintf(cache->why_off, sizeof(cache->why_off), "the device cannot be identified: %s",
                 why);
        return;
    }
    cache->disk = sdpa_disk_cache_open(&settings);
    if (!cache->disk)
        snprintf(cache->why_off, sizeof(cache->why_off), "no usable directory (%s)",
                 settings.dir[0] ? settings.dir : "none set");
}

sdpa_status_t sdpa_module_cache_create(ze_context_handle_t context, ze_device_handle_t device,
                                       sdpa_module_cache_t **out)
{
    sdpa_module_cache_t *cache =
            sdpa_device_object_new(sizeof(*cache), context, device, "a module cache");
    if (!cache)
        return SDPA_ERROR_OUT_OF_HOST_MEMORY;
    pthread_mutex_init(&cache->lock, NULL);
    open_persistent(cache);
    *out = cache;
    return SDPA_SUCCESS;
}

void sdpa_module_cache_destroy(sdpa_module_cache_t *cache)
{
    if (!cache)
        return;
    cache_entry_t *entry = cache->entries;
    while (entry) {
        cache_entry_t *next = entry->next;
        zeModuleDestroy(entry->module);
        free(entry->key);
        free(entry);
        entry = next;
    }
    sdpa_disk_cache_close(cache->disk);
    pthread_mutex_destroy(&cache->lock);
    free(cache);
}

/* "sdpa_fwd.128.16", for messages. */
static void variant_name(const sdpa_module_key_t *key, char *out, size_t size)
{
    snprintf(out, size, "%s.%d.%d", key->spirv->source, key->spirv->d_max,
             key->spirv->subgroup_size);
}

/* Builds the module from SPIR-V; on failure the message carries the build
 * log. */
static sdpa_status_t build_module(sdpa_module_cache_t *cache, const sdpa_module_key_t *key,
                                  ze_module_handle_t *out)
{
    ze_module_desc_t desc = {
            .stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
            .format = ZE_MODULE_FORMAT_IL_SPIRV,
            .inputSize = key->spirv->size,
            .pInputModule = key->spirv->code,
            .pBuildFlags = key->build_flags ? key->build_flags : "",
            .pConstants = key->constants,
    };
    ze_module_build_log_handle_t log = NULL;
    double start = sdpa_verbose_level() >= 2 ? sdpa_verbose_now_ms() : 0.0;
    ze_result_t result = zeModuleCreate(cache->on.context, cache->on.device, &desc, out, &log);
    if (result == ZE_RESULT_SUCCESS) {
        if (log)
            zeModuleBuildLogDestroy(log);
        if (sdpa_verbose_level() >= 2) {
            char name[96];
            variant_name(key, name, sizeof(name));
            sdpa_verbose_print("module,build,%s,%.1f,%u constants flags=\"%s\"", name,
                               sdpa_verbose_now_ms() - start,
                               key->constants ? key->constants->numConstants : 0,
                               key->build_flags ? key->build_flags : "");
        }
        return SDPA_SUCCESS;
    }

    char excerpt[BUILD_LOG_EXCERPT + 1] = "";
    size_t log_size = 0;
    if (log && zeModuleBuildLogGetString(log, &log_size, NULL) == ZE_RESULT_SUCCESS &&
        log_size > 0) {
        char *text = malloc(log_size);
        if (text && zeModuleBuildLogGetString(log, &log_size, text) == ZE_RESULT_SUCCESS)
            snprintf(excerpt, sizeof(excerpt), "%s", text);
        free(text);
    }
    if (log)
        zeModuleBuildLogDestroy(log);
    sdpa_status_t status = sdpa_ze_fail("zeModuleCreate", result);
    if (status == SDPA_ERROR_BUILD_FAILED)
        return sdpa_fail(status, "zeModuleCreate failed to build %s.%d.%d: %s; build log: %s",
                         key->spirv->source, key->spirv->d_max, key->spirv->subgroup_size,
                         ze_result_name(result), excerpt[0] ? excerpt : "(empty)");
    return status;
}

/* A module from the native binary the persistent cache holds for pkey:
 * 0 and *out on a hit; -1 on a miss (absent, rejected, or refused by the
 * driver: then the caller builds, and the store replaces the entry). */
static int load_native(sdpa_module_cache_t *cache, const sdpa_module_key_t *key,
                       const sdpa_byte_writer_t *pkey, ze_module_handle_t *out)
{
    const int verbose = sdpa_verbose_level() >= 2;
    double start = verbose ? sdpa_verbose_now_ms() : 0.0;
    char why[256] = "";
    void *binary = NULL;
    size_t size = 0;
    sdpa_disk_cache_lookup_t found = sdpa_disk_cache_get(cache->disk, pkey->bytes, pkey->size,
                                                         &binary, &size, why, sizeof(why));
    ze_result_t result = ZE_RESULT_SUCCESS;
    if (found == SDPA_DISK_CACHE_HIT) {
        ze_module_desc_t desc = {
                .stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
                .format = ZE_MODULE_FORMAT_NATIVE,
                .inputSize = size,
                .pInputModule = binary,
        };
        result = zeModuleCreate(cache->on.context, cache->on.device, &desc, out, NULL);
        free(binary);
    }
    int hit = found == SDPA_DISK_CACHE_HIT && result == ZE_RESULT_SUCCESS;
    if (verbose) {
        char name[96];
        variant_name(key, name, sizeof(name));
        if (hit)
            sdpa_verbose_print("module,cache_hit,%s,%.1f,%zu bytes from %s", name,
                               sdpa_verbose_now_ms() - start, size,
                               sdpa_disk_cache_dir(cache->disk));
        else if (found == SDPA_DISK_CACHE_HIT)
            sdpa_verbose_print("module,cache_miss,%s,%.1f,the driver refused the native binary "
                               "(%s): building from SPIR-V",
                               name, sdpa_verbose_now_ms() - start, ze_result_name(result));
        else
            sdpa_verbose_print("module,cache_miss,%s,%.1f,%s", name, sdpa_verbose_now_ms() - start,
                               found == SDPA_DISK_CACHE_ABSENT ? "absent" : why);
    }
    if (!hit)
        *out = NULL;
    return hit ? 0 : -1;
}

/* Stores module's native binary under pkey (best effort: a driver without
 * native binaries, or a store that cannot write, just caches nothing). */
static void store_native(sdpa_module_cache_t *cache, const sdpa_module_key_t *key,
                         const sdpa_byte_writer_t *pkey, ze_module_handle_t module)
{
    const int verbose = sdpa_verbose_level() >= 2;
    double start = verbose ? sdpa_verbose_now_ms() : 0.0;
    size_t size = 0;
    uint8_t *binary = NULL;
    const char *failure = NULL;
    ze_result_t result = zeModuleGetNativeBinary(module, &size, NULL);
    if (result == ZE_RESULT_SUCCESS && size > 0 && (binary = malloc(size)) != NULL)
        result = zeModuleGetNativeBinary(module, &size, binary);
    if (result != ZE_RESULT_SUCCESS)
        failure = "zeModuleGetNativeBinary failed";
    else if (!binary)
        failure = "out of host memory";
    else if (sdpa_disk_cache_put(cache->disk, pkey->bytes, pkey->size, binary, size) != 0)
        failure = "not stored (read-only, over the size cap, or a write failed)";
    if (verbose) {
        char name[96];
        variant_name(key, name, sizeof(name));
        if (failure)
            sdpa_verbose_print("module,cache_store,%s,%.1f,%s: %s", name,
                               sdpa_verbose_now_ms() - start, failure, ze_result_name(result));
        else
            sdpa_verbose_print("module,cache_store,%s,%.1f,%zu bytes in %s", name,
                               sdpa_verbose_now_ms() - start, size,
                               sdpa_disk_cache_dir(cache->disk));
    }
    free(binary);
}

/* The module for key, from the persistent cache or built; the caller holds
 * the lock and counts. */
static sdpa_status_t make_module(sdpa_module_cache_t *cache, const sdpa_module_key_t *key,
                                 ze_module_handle_t *out, int *built)
{
    sdpa_byte_writer_t pkey = {0};
    *built = 0;
    if (cache->disk) {
        sdpa_status_t status = persistent_key(cache, key, &pkey);
        if (status != SDPA_SUCCESS) {
            free(pkey.bytes);
            return status;
        }
        if (load_native(cache, key, &pkey, out) == 0) {
            free(pkey.bytes);
            return SDPA_SUCCESS;
        }
        cache->counts.misses++;
        thread_counts.misses++;
    }
    sdpa_status_t status = build_module(cache, key, out);
    if (status == SDPA_SUCCESS) {
        *built = 1;
        if (cache->disk)
            store_native(cache, key, &pkey, *out);
    }
    free(pkey.bytes);
    return status;
}

sdpa_status_t sdpa_module_cache_get(sdpa_module_cache_t *cache, const sdpa_module_key_t *key,
                                    ze_module_handle_t *out)
{
    sdpa_byte_writer_t w = {0};
    sdpa_status_t status = memory_key(key, &w);
    if (status != SDPA_SUCCESS) {
        free(w.bytes);
        return status;
    }
    uint64_t hash = hash_bytes(w.bytes, w.size);

    pthread_mutex_lock(&cache->lock);
    for (cache_entry_t *e = cache->entries; e; e = e->next) {
        if (e->hash == hash && e->key_size == w.size && memcmp(e->key, w.bytes, w.size) == 0) {
            *out = e->module;
            cache->counts.reused++;
            thread_counts.reused++;
            pthread_mutex_unlock(&cache->lock);
            free(w.bytes);
            return SDPA_SUCCESS;
        }
    }

    cache_entry_t *entry = calloc(1, sizeof(*entry));
    if (!entry) {
        status = sdpa_fail(SDPA_ERROR_OUT_OF_HOST_MEMORY, "out of host memory for a module");
        goto unlock;
    }
    int built = 0;
    status = make_module(cache, key, &entry->module, &built);
    if (status != SDPA_SUCCESS) {
        free(entry);
        goto unlock;
    }
    if (built) {
        cache->counts.built++;
        thread_counts.built++;
    } else {
        cache->counts.hits++;
        thread_counts.hits++;
    }
    entry->hash = hash;
    entry->key = w.bytes;
    entry->key_size = w.size;
    w.bytes = NULL;
    entry->next = cache->entries;
    cache->entries = entry;
    *out = entry->module;

unlock:
    pthread_mutex_unlock(&cache->lock);
    free(w.bytes);
    return status;
}

sdpa_module_cache_counts_t sdpa_module_cache_counts(sdpa_module_cache_t *cache)
{
    pthread_mutex_lock(&cache->lock);
    sdpa_module_cache_counts_t counts = cache->counts;
    pthread_mutex_unlock(&cache->lock);
    return counts;
}

void sdpa_module_cache_describe(const sdpa_module_cache_t *cache, char *out, size_t size)
{
    if (cache->disk)
        snprintf(out, size, "module cache in %s", sdpa_disk_cache_dir(cache->disk));
    else
        snprintf(out, size, "module cache off: %s", cache->why_off);
}

void sdpa_module_cache_thread_reset(void)
{
    memset(&thread_counts, 0, sizeof(thread_counts));
}

sdpa_module_cache_counts_t sdpa_module_cache_thread_counts(void)
{
    return thread_counts;
}
