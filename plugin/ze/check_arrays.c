/*
 * check_arrays.c - the checking mode of the device arrays
 * (SDPA_ZE_CHECK_DEVICE_ARRAYS, doc/reliability.md): before an execution's
 * launch, read its varlen and paged arrays back and refuse it, naming the
 * first bad entry, as the ref backend does.
 *
 * A synchronous read-back, not a validation kernel: it can only be honest
 * where the execution runs on the context's own list, which is synchronous
 * (everything earlier on it has run, and the copy waits for the caller's
 * events), and there it refuses the execution before anything is written,
 * through the execution's own status and last_error, with the very check
 * (src/validate/device_arrays.c) and message the ref backend gives. A kernel on a
 * caller's list could only report after the fact, at a synchronisation
 * point this library never sees. The cost, a copy and a wait per
 * execution, is paid only in this debugging mode.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device_arrays.h"
#include "env_flag.h"
#include "error.h"
#include "ze.h"
#include "ze_result.h"

static pthread_once_t mode_once = PTHREAD_ONCE_INIT;
static pthread_once_t note_once = PTHREAD_ONCE_INIT;
static int mode_on;

static void read_mode(void)
{
    mode_on = sdpa_env_flag("SDPA_ZE_CHECK_DEVICE_ARRAYS", 0);
}

int sdpa_ze_check_arrays_enabled(void)
{
    pthread_once(&mode_once, read_mode);
    return mode_on;
}

static void note_unchecked(void)
{
    fprintf(stderr, "sdpa ze: SDPA_ZE_CHECK_DEVICE_ARRAYS: executions on a caller's command "
                    "list are not checked (only those on the context's own list)\n");
}

/* The execution's wait events, until a copy has waited for them. */
typedef struct pending_waits {
    uint32_t count;
    ze_event_handle_t *events;
} pending_waits_t;

/* Appends a copy of n int32 entries from src to dst; the first copy
 * appended waits for the pending events, which are then cleared. */
static sdpa_status_t copy_back(ze_command_list_handle_t list, int32_t *dst, const void *src,
                               size_t n, pending_waits_t *waits)
{
    if (n == 0)
        return SDPA_SUCCESS;
    ze_result_t r = zeCommandListAppendMemoryCopy(list, dst, src, n * sizeof(int32_t), NULL,
                                                  waits->count, waits->events);
    if (r != ZE_RESULT_SUCCESS)
        return sdpa_ze_fail("zeCommandListAppendMemoryCopy (SDPA_ZE_CHECK_DEVICE_ARRAYS)", r);
    waits->count = 0;
    waits->events = NULL;
    return SDPA_SUCCESS;
}

sdpa_status_t sdpa_ze_check_arrays(sdpa_primitive_t *prim, const sdpa_exec_args_t *a,
                                   ze_command_list_handle_t list)
{
    const sdpa_problem_desc_t *p = &prim->problem;
    if (!sdpa_ze_check_arrays_enabled() || (!p->varlen.enabled && !p->paged_kv.enabled))
        return SDPA_SUCCESS;
    sdpa_context_t *ctx = prim->ctx;
    if (list != ctx->command_list || !ctx->owns_command_list) {
        pthread_once(&note_once, note_unchecked);
        return SDPA_SUCCESS;
    }
    size_t n_cu, n_table, n_lens;
    sdpa_device_array_counts(p, &prim->shape, &n_cu, &n_table, &n_lens);
    const size_t total = 2 * n_cu + n_table + n_lens;
    ze_host_mem_alloc_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    void *host = NULL;
    ze_result_t r =
            zeMemAllocHost(ctx->ze_context, &desc, total * sizeof(int32_t), sizeof(int32_t), &host);
    if (r != ZE_RESULT_SUCCESS)
        return sdpa_ze_fail("zeMemAllocHost (SDPA_ZE_CHECK_DEVICE_ARRAYS)", r);
    int32_t *cu_q = host, *cu_k = cu_q + n_cu, *table = cu_k + n_cu, *lens = table + n_table;
    /* The list is synchronous: each copy has run when its append returns,
     * the first after the caller's events. */
    pending_waits_t waits = {a->num_wait_events, a->wait_events};
    sdpa_status_t status = copy_back(list, cu_q, a->cu_seqlens_q, n_cu, &waits);
    if (status == SDPA_SUCCESS)
        status = copy_back(list, cu_k, a->cu_seqlens_k, n_cu, &waits);
    if (status == SDPA_SUCCESS)
        status = copy_back(list, table, a->block_table, n_table, &waits);
    if (status == SDPA_SUCCESS)
        status = copy_back(list, lens, a->cache_seqlens, n_lens, &waits);
    if (status == SDPA_SUCCESS) {
        const sdpa_device_arrays_t arrays = {n_cu ? cu_q : NULL, n_cu ? cu_k : NULL,
                                             n_table ? table : NULL, n_lens ? lens : NULL};
        status = sdpa_device_arrays_check(p, &prim->shape, &arrays);
        if (status != SDPA_SUCCESS) {
            char why[512];
            snprintf(why, sizeof(why), "%s", sdpa_error_message());
            fprintf(stderr, "sdpa ze: SDPA_ZE_CHECK_DEVICE_ARRAYS: %s\n", why);
            status = sdpa_fail(status, "SDPA_ZE_CHECK_DEVICE_ARRAYS: %s", why);
        }
    }
    zeMemFree(ctx->ze_context, host);
    return status;
}
