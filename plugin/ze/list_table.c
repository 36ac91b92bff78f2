/* list_table.c - per command list locks and scratch, in a small hash table.
 *
 * Each bucket's lock only guards finding or adding an entry; each entry has
 * its own lock for the appends. (A lock per bucket for the appends would
 * serialize two lists that happen to share a bucket, and on a synchronous
 * immediate list an append runs the kernels.) */
#include <pthread.h>
#include <stdlib.h>

#include "device_object.h"
#include "error.h"
#include "list_table.h"

#define BUCKETS 64

struct sdpa_list_entry {
    sdpa_list_entry_t *next;
    ze_command_list_handle_t list;
    pthread_mutex_t lock;
    sdpa_scratch_t *scratch;
};

typedef struct bucket {
    pthread_mutex_t lock;
    sdpa_list_entry_t *entries;
} bucket_t;

struct sdpa_list_table {
    sdpa_device_binding_t on; /* first: sdpa_device_object_new */
    bucket_t buckets[BUCKETS];
};

sdpa_status_t sdpa_list_table_create(ze_context_handle_t context, ze_device_handle_t device,
                                     sdpa_list_table_t **out)
{
    sdpa_list_table_t *table =
            sdpa_device_object_new(sizeof(*table), context, device, "a list table");
    if (!table)
        return SDPA_ERROR_OUT_OF_HOST_MEMORY;
    for (int i = 0; i < BUCKETS; i++)
        pthread_mutex_init(&table->buckets[i].lock, NULL);
    *out = table;
    return SDPA_SUCCESS;
}

void sdpa_list_table_destroy(sdpa_list_table_t *table)
{
    if (!table)
        return;
    for (int i = 0; i < BUCKETS; i++) {
        sdpa_list_entry_t *e = table->buckets[i].entries;
        while (e) {
            sdpa_list_entry_t *next = e->next;
            sdpa_scratch_destroy(e->scratch);
            pthread_mutex_destroy(&e->lock);
            free(e);
            e = next;
        }
        pthread_mutex_destroy(&table->buckets[i].lock);
    }
    free(table);
}

/* Handles are pointers: drop the alignment bits, mix the rest. */
static bucket_t *bucket_of(sdpa_list_table_t *table, ze_command_list_handle_t list)
{
    uint64_t h = (uint64_t)(uintptr_t)list >> 4;
    h ^= h >> 17;
    h *= 0x9e3779b97f4a7c15ull;
    return &table->buckets[(h >> 32) % BUCKETS];
}

sdpa_status_t sdpa_list_lock(sdpa_list_table_t *table, ze_command_list_handle_t list,
                             sdpa_list_entry_t **out)
{
    bucket_t *b = bucket_of(table, list);
    sdpa_status_t status = SDPA_SUCCESS;
    pthread_mutex_lock(&b->lock);
    sdpa_list_entry_t *e = b->entries;
    while (e && e->list != list)
        e = e->next;
    if (!e) {
        e = calloc(1, sizeof(*e));
        if (!e) {
            status = sdpa_fail(SDPA_ERROR_OUT_OF_HOST_MEMORY,
                               "out of host memory for the state of a command list");
        } else if ((status = sdpa_scratch_create(table->on.context, table->on.device,
                                                 &e->scratch)) != SDPA_SUCCESS) {
            free(e);
            e = NULL;
        } else {
            e->list = list;
            pthread_mutex_init(&e->lock, NULL);
            e->next = b->entries;
            b->entries = e;
        }
    }
    pthread_mutex_unlock(&b->lock);
    if (!e)
        return status;
    pthread_mutex_lock(&e->lock);
    *out = e;
    return SDPA_SUCCESS;
}

void sdpa_list_unlock(sdpa_list_entry_t *entry)
{
    pthread_mutex_unlock(&entry->lock);
}

sdpa_scratch_t *sdpa_list_scratch(sdpa_list_entry_t *entry)
{
    return entry->scratch;
}

uint64_t sdpa_list_table_scratch_allocations(sdpa_list_table_t *table)
{
    uint64_t total = 0;
    for (int i = 0; i < BUCKETS; i++) {
        bucket_t *b = &table->buckets[i];
        pthread_mutex_lock(&b->lock);
        for (sdpa_list_entry_t *e = b->entries; e; e = e->next)
            total += sdpa_scratch_allocations(e->scratch);
        pthread_mutex_unlock(&b->lock);
    }
    return total;
}
