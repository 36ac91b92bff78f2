/*
 * scratch.h - a command list's device scratch (list_table.h): one grow-only
 * allocation that backward carves into its f32 accumulators, D_i and the
 * strides buffer.
 *
 * After the first execution of the largest problem no execution allocates.
 * A buffer that is outgrown is not freed at once (launches already appended
 * may still use it) but kept until the context is destroyed.
 */
#ifndef SDPA_ZE_SCRATCH_H
#define SDPA_ZE_SCRATCH_H

#include <stddef.h>
#include <stdint.h>

#include <level_zero/ze_api.h>

#include "sdpa.h"

typedef struct sdpa_scratch sdpa_scratch_t;

sdpa_status_t sdpa_scratch_create(ze_context_handle_t context, ze_device_handle_t device,
                                  sdpa_scratch_t **out);

/* Frees the current and every outgrown buffer. NULL is ignored. */
void sdpa_scratch_destroy(sdpa_scratch_t *scratch);

/* Stores in *out a device buffer of at least bytes bytes (aligned to 256),
 * allocating a larger one only when the current one is too small. The buffer
 * belongs to the scratch and stays valid until it is outgrown *and* the
 * context is destroyed. */
sdpa_status_t sdpa_scratch_reserve(sdpa_scratch_t *scratch, size_t bytes, void **out);

/* The scratch of one execution that needs `need` bytes: the caller's
 * (a->scratch, if set: SDPA_ERROR_INSUFFICIENT_SCRATCH if smaller than
 * need, SDPA_ERROR_INVALID_ARGUMENT if not aligned to
 * SDPA_SCRATCH_ALIGNMENT; messages name `what`, e.g. "this backward"),
 * else list_scratch's buffer, grown to need. */
sdpa_status_t sdpa_scratch_for_execution(sdpa_scratch_t *list_scratch, const sdpa_exec_args_t *a,
                                         size_t need, const char *what, char **out);

/* How many device allocations the scratch has made so far. */
uint64_t sdpa_scratch_allocations(sdpa_scratch_t *scratch);

#endif /* SDPA_ZE_SCRATCH_H */
