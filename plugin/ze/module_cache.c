/* module_cache.c - a small list of built modules keyed by their serialized key. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "module_cache.h"
#include "spec_table.h"
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
    ze_context_handle_t context;
    ze_device_handle_t device;
    pthread_mutex_t lock;
    cache_entry_t *entries;
    uint64_t builds;
};

/* A growable byte buffer for the serialized key. */
typedef struct key_writer {
    unsigned char *bytes;
    size_t size, capacity;
    int failed;
} key_writer_t;

static void key_put(key_writer_t *w, const void *data, size_t size)
{
    if (w->failed)
        return;
    if (w->size + size > w->capacity) {
        size_t capacity = w->capacity ? 2 * w->capacity : 256;
        while (capacity < w->size + size)
            capacity *= 2;
        unsigned char *grown = realloc(w->bytes, capacity);
        if (!grown) {
            w->failed = 1;
            return;
        }
        w->bytes = grown;
        w->capacity = capacity;
    }
    memcpy(w->bytes + w->size, data, size);
    w->size += size;
}

/* Sorting the constants makes the key independent of the order the caller
 * listed them in. */
static int compare_ids(const void *a, const void *b)
{
    uint32_t x = **(const uint32_t *const *)a, y = **(const uint32_t *const *)b;
    return (x > y) - (x < y);
}

static sdpa_status_t serialize_key(const sdpa_module_key_t *key, key_writer_t *w)
{
    const ze_module_constants_t *constants = key->constants;
    uint32_t count = constants ? constants->numConstants : 0;
    const uint32_t **order = calloc(count ? count : 1, sizeof(*order));
    if (!order)
        return sdpa_fail(SDPA_ERROR_OUT_OF_HOST_MEMORY, "out of host memory for a module key");
    for (uint32_t i = 0; i < count; i++)
        order[i] = &constants->pConstantIds[i];
    qsort(order, count, sizeof(*order), compare_ids);

    key_put(w, &key->spirv, sizeof(key->spirv));
    const char *flags = key->build_flags ? key->build_flags : "";
    key_put(w, flags, strlen(flags) + 1);
    for (uint32_t i = 0; i < count; i++) {
        uint32_t id = *order[i];
        const sdpa_spec_constant_info_t *info = sdpa_spec_constant_find(id);
        if (!info) {
            free(order);
            return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                             "specialization constant id %u is not in spec_constants.def", id);
        }
        size_t index = (size_t)(order[i] - constants->pConstantIds);
        key_put(w, &id, sizeof(id));
        key_put(w, constants->pConstantValues[index], info->size);
    }
    free(order);
    if (w->failed)
        return sdpa_fail(SDPA_ERROR_OUT_OF_HOST_MEMORY, "out of host memory for a module key");
    return SDPA_SUCCESS;
}

/* FNV-1a: the key is short and hashed once per primitive. */
static uint64_t hash_bytes(const unsigned char *bytes, size_t size)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < size; i++)
        h = (h ^ bytes[i]) * 1099511628211ull;
    return h;
}

sdpa_status_t sdpa_module_cache_create(ze_context_handle_t context, ze_device_handle_t device,
                                       sdpa_module_cache_t **out)
{
    sdpa_module_cache_t *cache = calloc(1, sizeof(*cache));
    if (!cache)
        return sdpa_fail(SDPA_ERROR_OUT_OF_HOST_MEMORY, "out of host memory for a module cache");
    cache->context = context;
    cache->device = device;
    pthread_mutex_init(&cache->lock, NULL);
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
    pthread_mutex_destroy(&cache->lock);
    free(cache);
}

/* Builds the module; on failure the message carries the build log. */
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
    ze_result_t result = zeModuleCreate(cache->context, cache->device, &desc, out, &log);
    if (result == ZE_RESULT_SUCCESS) {
        if (log)
            zeModuleBuildLogDestroy(log);
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

sdpa_status_t sdpa_module_cache_get(sdpa_module_cache_t *cache, const sdpa_module_key_t *key,
                                    ze_module_handle_t *out)
{
    key_writer_t w = {0};
    sdpa_status_t status = serialize_key(key, &w);
    if (status != SDPA_SUCCESS) {
        free(w.bytes);
        return status;
    }
    uint64_t hash = hash_bytes(w.bytes, w.size);

    pthread_mutex_lock(&cache->lock);
    for (cache_entry_t *e = cache->entries; e; e = e->next) {
        if (e->hash == hash && e->key_size == w.size && memcmp(e->key, w.bytes, w.size) == 0) {
            *out = e->module;
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
    status = build_module(cache, key, &entry->module);
    if (status != SDPA_SUCCESS) {
        free(entry);
        goto unlock;
    }
    entry->hash = hash;
    entry->key = w.bytes;
    entry->key_size = w.size;
    w.bytes = NULL;
    entry->next = cache->entries;
    cache->entries = entry;
    cache->builds++;
    *out = entry->module;

unlock:
    pthread_mutex_unlock(&cache->lock);
    free(w.bytes);
    return status;
}

uint64_t sdpa_module_cache_builds(sdpa_module_cache_t *cache)
{
    pthread_mutex_lock(&cache->lock);
    uint64_t builds = cache->builds;
    pthread_mutex_unlock(&cache->lock);
    return builds;
}
