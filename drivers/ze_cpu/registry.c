/*
 * registry.c - the set of live handles: every handle the driver gave out
 * and has not destroyed, with its kind.
 *
 * Entry points look a handle up here before touching the object behind it,
 * so a garbage pointer, a handle of another kind or a destroyed handle is
 * refused without ever being dereferenced. An open-addressing hash table
 * keyed by address (linear probing, tombstones), behind a reader-writer
 * lock: lookups, the common case, run in parallel; creations and
 * destructions take the lock exclusively.
 */
#include <stdlib.h>

#include "ze_cpu.h"

typedef struct slot {
    uintptr_t address; /* 0: never used; TOMBSTONE: freed */
    cpu_ze_kind_t kind;
} slot_t;

#define TOMBSTONE ((uintptr_t)1)

static pthread_rwlock_t registry_lock = PTHREAD_RWLOCK_INITIALIZER;
static slot_t *slots;
static size_t capacity; /* a power of two, or 0 */
static size_t used;     /* live entries plus tombstones */
static size_t live;

/* Fibonacci hashing of the address (objects are 16-byte aligned). */
static size_t home_of(uintptr_t address)
{
    return (size_t)(((uint64_t)address >> 4) * 0x9e3779b97f4a7c15ull >> 20) & (capacity - 1);
}

/* The slot holding address, or NULL. Call with the lock held. */
static slot_t *find(uintptr_t address)
{
    if (capacity == 0 || address <= TOMBSTONE)
        return NULL;
    for (size_t i = home_of(address), n = 0; n < capacity; i = (i + 1) & (capacity - 1), n++) {
        if (slots[i].address == address)
            return &slots[i];
        if (slots[i].address == 0)
            return NULL;
    }
    return NULL;
}

static void insert(uintptr_t address, cpu_ze_kind_t kind)
{
    size_t i = home_of(address);
    while (slots[i].address > TOMBSTONE)
        i = (i + 1) & (capacity - 1);
    if (slots[i].address == 0)
        used++;
    slots[i].address = address;
    slots[i].kind = kind;
    live++;
}

/* Rebuilds the table with room for twice the live entries (at least 64
 * slots), dropping tombstones. false if out of memory. */
static bool rebuild(void)
{
    size_t new_capacity = 64;
    while (new_capacity < 4 * (live + 1))
        new_capacity *= 2;
    slot_t *new_slots = calloc(new_capacity, sizeof *new_slots);
    if (new_slots == NULL)
        return false;
    slot_t *old_slots = slots;
    size_t old_capacity = capacity;
    slots = new_slots;
    capacity = new_capacity;
    used = live = 0;
    for (size_t i = 0; i < old_capacity; i++)
        if (old_slots[i].address > TOMBSTONE)
            insert(old_slots[i].address, old_slots[i].kind);
    free(old_slots);
    return true;
}

ze_result_t cpu_ze_handle_publish(const void *object, cpu_ze_kind_t kind)
{
    ze_result_t result = ZE_RESULT_SUCCESS;
    pthread_rwlock_wrlock(&registry_lock);
    if (find((uintptr_t)object) != NULL)
        result = ZE_RESULT_ERROR_INVALID_ARGUMENT;
    else if (2 * (used + 1) > capacity && !rebuild())
        result = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    else
        insert((uintptr_t)object, kind);
    pthread_rwlock_unlock(&registry_lock);
    return result;
}

bool cpu_ze_handle_is(const void *handle, cpu_ze_kind_t kind)
{
    pthread_rwlock_rdlock(&registry_lock);
    const slot_t *slot = find((uintptr_t)handle);
    bool is = slot != NULL && slot->kind == kind;
    pthread_rwlock_unlock(&registry_lock);
    return is;
}

bool cpu_ze_handle_retire(const void *handle, cpu_ze_kind_t kind)
{
    pthread_rwlock_wrlock(&registry_lock);
    slot_t *slot = find((uintptr_t)handle);
    bool retired = slot != NULL && slot->kind == kind;
    if (retired) {
        slot->address = TOMBSTONE;
        if (--live == 0) { /* nothing left: give the memory back */
            free(slots);
            slots = NULL;
            capacity = used = 0;
        }
    }
    pthread_rwlock_unlock(&registry_lock);
    return retired;
}
