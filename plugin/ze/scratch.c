/* scratch.c - grow-only device scratch. */
#include <pthread.h>
#include <stdlib.h>

#include "device_object.h"
#include "error.h"
#include "verbose.h"
#include "scratch.h"
#include "ze_result.h"

#define SCRATCH_ALIGNMENT 256
/* Grow by at least this much so that a slowly growing sequence length (a
 * decode loop) does not reallocate at every step. */
#define SCRATCH_MIN_GROWTH (1u << 20)

typedef struct retired_buffer {
    struct retired_buffer *next;
    void *buffer;
} retired_buffer_t;

struct sdpa_scratch {
    sdpa_device_binding_t on; /* first: sdpa_device_object_new */
    pthread_mutex_t lock;
    void *buffer;
    size_t size;
    retired_buffer_t *retired;
    uint64_t allocations;
};

sdpa_status_t sdpa_scratch_create(ze_context_handle_t context, ze_device_handle_t device,
                                  sdpa_scratch_t **out)
{
    sdpa_scratch_t *scratch = sdpa_device_object_new(sizeof(*scratch), context, device, "scratch");
    if (!scratch)
        return SDPA_ERROR_OUT_OF_HOST_MEMORY;
    pthread_mutex_init(&scratch->lock, NULL);
    *out = scratch;
    return SDPA_SUCCESS;
}

void sdpa_scratch_destroy(sdpa_scratch_t *scratch)
{
    if (!scratch)
        return;
    if (scratch->buffer)
        zeMemFree(scratch->on.context, scratch->buffer);
    retired_buffer_t *r = scratch->retired;
    while (r) {
        retired_buffer_t *next = r->next;
        zeMemFree(scratch->on.context, r->buffer);
        free(r);
        r = next;
    }
    pthread_mutex_destroy(&scratch->lock);
    free(scratch);
}

sdpa_status_t sdpa_scratch_reserve(sdpa_scratch_t *scratch, size_t bytes, void **out)
{
    sdpa_status_t status = SDPA_SUCCESS;
    pthread_mutex_lock(&scratch->lock);
    if (bytes > scratch->size) {
        size_t size = bytes;
        if (size - scratch->size < SCRATCH_MIN_GROWTH && scratch->size > 0)
            size = scratch->size + SCRATCH_MIN_GROWTH;
        retired_buffer_t *retired = NULL;
        if (scratch->buffer && !(retired = malloc(sizeof(*retired)))) {
            status = sdpa_fail(SDPA_ERROR_OUT_OF_HOST_MEMORY, "out of host memory for scratch");
            goto unlock;
        }
        ze_device_mem_alloc_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
        void *buffer = NULL;
        const double start = sdpa_verbose_level() >= 2 ? sdpa_verbose_now_ms() : 0.0;
        ze_result_t result = zeMemAllocDevice(scratch->on.context, &desc, size, SCRATCH_ALIGNMENT,
                                              scratch->on.device, &buffer);
        if (result == ZE_RESULT_SUCCESS && sdpa_verbose_level() >= 2)
            sdpa_verbose_print("scratch,alloc,%zu,%.3f,for %zu bytes (had %zu)", size,
                               sdpa_verbose_now_ms() - start, bytes, scratch->size);
        if (result != ZE_RESULT_SUCCESS) {
            free(retired);
            status = sdpa_ze_failf(result, "zeMemAllocDevice(scratch, %zu bytes)", size);
            goto unlock;
        }
        if (retired) {
            retired->buffer = scratch->buffer;
            retired->next = scratch->retired;
            scratch->retired = retired;
        }
        scratch->buffer = buffer;
        scratch->size = size;
        scratch->allocations++;
    }
    *out = scratch->buffer;
unlock:
    pthread_mutex_unlock(&scratch->lock);
    return status;
}

uint64_t sdpa_scratch_allocations(sdpa_scratch_t *scratch)
{
    pthread_mutex_lock(&scratch->lock);
    uint64_t n = scratch->allocations;
    pthread_mutex_unlock(&scratch->lock);
    return n;
}

sdpa_status_t sdpa_scratch_for_execution(sdpa_scratch_t *list_scratch, const sdpa_exec_args_t *a,
                                         size_t need, const char *what, char **out)
{
    if (a->scratch) {
        if (a->scratch_size < need)
            return sdpa_fail(SDPA_ERROR_INSUFFICIENT_SCRATCH,
                             "args->scratch_size = %zu: %s needs %zu bytes "
                             "(SDPA_QUERY_SCRATCH_BYTES)",
                             a->scratch_size, what, need);
        if ((uintptr_t)a->scratch % SDPA_SCRATCH_ALIGNMENT != 0)
            return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                             "args->scratch = %p is not aligned to %d bytes", a->scratch,
                             SDPA_SCRATCH_ALIGNMENT);
        *out = a->scratch;
        return SDPA_SUCCESS;
    }
    void *scratch = NULL;
    sdpa_status_t status = sdpa_scratch_reserve(list_scratch, need, &scratch);
    *out = scratch;
    return status;
}
