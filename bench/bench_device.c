/* bench_device.c - the Level Zero side of the benchmark: one device, an
 * in-order immediate list, an event, and allocations counted to the byte. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "element.h"
#include "problem.h"

static void ze_failed(const char *call, ze_result_t result)
{
    fprintf(stderr, "sdpa_bench: %s failed: Level Zero result 0x%x\n", call, (unsigned)result);
}

#define ZE_CHECK(call)                                                                             \
    do {                                                                                           \
        ze_result_t result_ = (call);                                                              \
        if (result_ != ZE_RESULT_SUCCESS) {                                                        \
            ze_failed(#call, result_);                                                             \
            return -1;                                                                             \
        }                                                                                          \
    } while (0)

int bench_device_open(bench_device_t *d)
{
    *d = (bench_device_t){0};
    ze_result_t result = zeInit(0);
    uint32_t count = 1;
    if (result == ZE_RESULT_SUCCESS)
        result = zeDriverGet(&count, &d->driver);
    if (result != ZE_RESULT_SUCCESS || count == 0) {
        fprintf(stderr, "sdpa_bench: no Level Zero driver found. Run `make bench`, which uses the "
                        "CPU driver built in this tree, or set "
                        "ZE_ENABLE_ALT_DRIVERS=" SDPA_BENCH_CPU_DRIVER ".\n");
        return -1;
    }
    count = 1;
    ZE_CHECK(zeDeviceGet(d->driver, &count, &d->device));
    if (count == 0) {
        fprintf(stderr, "sdpa_bench: the Level Zero driver has no device\n");
        return -1;
    }
    ze_device_properties_t props = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
    ZE_CHECK(zeDeviceGetProperties(d->device, &props));
    snprintf(d->name, sizeof(d->name), "%s", props.name);
    d->type = props.type;

    ze_context_desc_t context_desc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    ZE_CHECK(zeContextCreate(d->driver, &context_desc, &d->context));
    ze_command_queue_desc_t queue_desc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                          .ordinal = 0,
                                          .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                          .priority = ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ZE_CHECK(zeCommandListCreateImmediate(d->context, d->device, &queue_desc, &d->list));
    ze_event_pool_desc_t pool_desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
                                      .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
                                      .count = 1};
    ZE_CHECK(zeEventPoolCreate(d->context, &pool_desc, 1, &d->device, &d->event_pool));
    ze_event_desc_t event_desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC,
                                  .signal = ZE_EVENT_SCOPE_FLAG_HOST,
                                  .wait = ZE_EVENT_SCOPE_FLAG_HOST};
    ZE_CHECK(zeEventCreate(d->event_pool, &event_desc, &d->done));
    return 0;
}

void bench_device_close(bench_device_t *d)
{
    if (d->done)
        zeEventDestroy(d->done);
    if (d->event_pool)
        zeEventPoolDestroy(d->event_pool);
    if (d->list)
        zeCommandListDestroy(d->list);
    if (d->context)
        zeContextDestroy(d->context);
    *d = (bench_device_t){0};
}

void *bench_alloc(bench_device_t *d, size_t bytes)
{
    ze_device_mem_alloc_desc_t device_desc = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
    ze_host_mem_alloc_desc_t host_desc = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    void *pointer = NULL;
    ze_result_t result = d->shared_memory ? zeMemAllocShared(d->context, &device_desc, &host_desc,
                                                             bytes, 256, d->device, &pointer)
                                          : zeMemAllocDevice(d->context, &device_desc, bytes, 256,
                                                             d->device, &pointer);
    if (result != ZE_RESULT_SUCCESS) {
        fprintf(stderr, "sdpa_bench: zeMemAlloc%s(%zu bytes) failed: 0x%x\n",
                d->shared_memory ? "Shared" : "Device", bytes, (unsigned)result);
        return NULL;
    }
    d->live_bytes += bytes;
    if (d->live_bytes > d->peak_bytes)
        d->peak_bytes = d->live_bytes;
    return pointer;
}

void bench_free(bench_device_t *d, void *pointer, size_t bytes)
{
    if (pointer == NULL)
        return;
    zeMemFree(d->context, pointer);
    d->live_bytes -= bytes;
}

void bench_peak_reset(bench_device_t *d)
{
    d->peak_bytes = d->live_bytes;
}

int bench_wait_done(bench_device_t *d)
{
    ZE_CHECK(zeEventHostSynchronize(d->done, UINT64_MAX));
    ZE_CHECK(zeEventHostReset(d->done));
    return 0;
}

int bench_copy(bench_device_t *d, void *dst, const void *src, size_t bytes)
{
    ZE_CHECK(zeCommandListAppendMemoryCopy(d->list, dst, src, bytes, d->done, 0, NULL));
    return bench_wait_done(d);
}

int bench_upload(bench_device_t *d, void *dst, const float *src, int64_t count, sdpa_dtype_t dtype)
{
    size_t bytes = (size_t)count * ((size_t)sdpa_dtype_bits(dtype) / 8);
    void *staging = malloc(bytes);
    if (staging == NULL) {
        fprintf(stderr, "sdpa_bench: out of host memory (%zu bytes)\n", bytes);
        return -1;
    }
    for (int64_t i = 0; i < count; i++)
        sdpa_element_store(staging, (int64_t)i, dtype, src[i]);
    int rc = bench_copy(d, dst, staging, bytes);
    free(staging);
    return rc;
}

/* The FP8 code of value (exact in dtype, finite): codes 0..0x7f grow with
 * their magnitude, so a binary search over them finds it. */
static uint8_t fp8_code_of(double value, sdpa_dtype_t dtype)
{
    const double magnitude = fabs(value);
    int lo = 0, hi = 0x7f;
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        const uint8_t code = (uint8_t)mid;
        if (sdpa_element_load(&code, 0, dtype) < magnitude)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (uint8_t)(lo | (value < 0 ? 0x80 : 0));
}

int bench_upload_int(bench_device_t *d, void *dst, const float *src, int64_t count,
                     sdpa_dtype_t dtype, float scale)
{
    size_t bytes = (size_t)(count * sdpa_dtype_bits(dtype) + 7) / 8;
    uint8_t *staging = calloc(bytes, 1);
    if (staging == NULL) {
        fprintf(stderr, "sdpa_bench: out of host memory (%zu bytes)\n", bytes);
        return -1;
    }
    for (int64_t i = 0; i < count; i++) {
        if (dtype == SDPA_DTYPE_F8_E4M3 || dtype == SDPA_DTYPE_F8_E5M2) {
            staging[i] = fp8_code_of((double)src[i] / scale, dtype);
            continue;
        }
        long q = lrintf(src[i] / scale);
        if (dtype == SDPA_DTYPE_S8)
            staging[i] = (uint8_t)(int8_t)q;
        else
            staging[i / 2] |= (uint8_t)(((unsigned long)q & 0xfu) << (4 * (i & 1)));
    }
    int rc = bench_copy(d, dst, staging, bytes);
    free(staging);
    return rc;
}

int bench_download(bench_device_t *d, float *dst, const void *src, int64_t count,
                   sdpa_dtype_t dtype)
{
    size_t bytes = (size_t)count * ((size_t)sdpa_dtype_bits(dtype) / 8);
    void *staging = malloc(bytes);
    if (staging == NULL) {
        fprintf(stderr, "sdpa_bench: out of host memory (%zu bytes)\n", bytes);
        return -1;
    }
    int rc = bench_copy(d, staging, src, bytes);
    for (int64_t i = 0; rc == 0 && i < count; i++)
        dst[i] = sdpa_element_load(staging, (int64_t)i, dtype);
    free(staging);
    return rc;
}
