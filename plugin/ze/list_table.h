/*
 * list_table.h - what a context keeps per Level Zero command list: the lock
 * that serializes the backend's appends to that list, and the grow-only
 * scratch of the backward executions recorded on it.
 *
 * Level Zero forbids appending to one command list from two threads at once,
 * and two executions that may run at the same time cannot share scratch.
 * Executions on one list are ordered (each backward starts with a barrier),
 * so one scratch per list is safe, and lists used from different threads get
 * different scratch, with no device allocation per execution: a list's
 * scratch only grows when a larger backward needs it.
 *
 * An entry is made (one small host allocation) the first time a list is seen
 * and lives until the context is destroyed, with its scratch: the table
 * cannot know when the caller destroys a list. A list created later at the
 * same address reuses the entry.
 */
#ifndef SDPA_ZE_LIST_TABLE_H
#define SDPA_ZE_LIST_TABLE_H

#include <stdint.h>

#include <level_zero/ze_api.h>

#include "scratch.h"
#include "sdpa.h"

typedef struct sdpa_list_table sdpa_list_table_t;
typedef struct sdpa_list_entry sdpa_list_entry_t;

/* An empty table for the lists of one Level Zero context and device. */
sdpa_status_t sdpa_list_table_create(ze_context_handle_t context, ze_device_handle_t device,
                                     sdpa_list_table_t **out);

/* Frees every entry and its scratch. No list may be locked. NULL is ignored. */
void sdpa_list_table_destroy(sdpa_list_table_t *table);

/* Finds (or adds) the entry of list and locks it; the caller appends, then
 * calls sdpa_list_unlock. Locks taken while a list is locked (a primitive's)
 * must always come after it. Fails only for lack of host memory. */
sdpa_status_t sdpa_list_lock(sdpa_list_table_t *table, ze_command_list_handle_t list,
                             sdpa_list_entry_t **out);
void sdpa_list_unlock(sdpa_list_entry_t *entry);

/* The scratch of a locked entry's list (see scratch.h); use it only while
 * the entry is locked. */
sdpa_scratch_t *sdpa_list_scratch(sdpa_list_entry_t *entry);

/* Device allocations made so far by the scratch of every list. */
uint64_t sdpa_list_table_scratch_allocations(sdpa_list_table_t *table);

#endif /* SDPA_ZE_LIST_TABLE_H */
