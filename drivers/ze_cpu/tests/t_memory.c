/*
 * t_memory.c - USM allocations, their properties, and the memory commands
 * (fill, copy) on immediate and regular command lists.
 */
#define _POSIX_C_SOURCE 200809L /* sigaction, setenv */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ze_test.h"

static void expect_alloc(const void *ptr, ze_memory_type_t type, bool on_device, uint64_t *id)
{
    const ze_test_env_t *e = ze_test_env();
    ze_memory_allocation_properties_t p = {.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES};
    ze_device_handle_t device = (ze_device_handle_t)&p; /* anything but NULL */
    ZE_OK(zeMemGetAllocProperties(e->context, ptr, &p, &device));
    ck_assert_int_eq(p.type, type);
    ck_assert_ptr_eq(device, on_device ? e->device : NULL);
    if (id != NULL)
        *id = p.id;
}

START_TEST(allocations_and_properties)
{
    const ze_test_env_t *e = ze_test_env();
    uint8_t *dev = ze_test_alloc_device(4096);
    uint8_t *host = ze_test_alloc_host(4096);
    uint8_t *shared = ze_test_alloc_shared(4096);
    ck_assert_uint_eq((uintptr_t)dev % 64, 0);
    ck_assert_uint_eq((uintptr_t)host % 64, 0);

    uint64_t id_dev, id_host, id_shared, id_inner;
    expect_alloc(dev, ZE_MEMORY_TYPE_DEVICE, true, &id_dev);
    expect_alloc(host, ZE_MEMORY_TYPE_HOST, false, &id_host);
    expect_alloc(shared, ZE_MEMORY_TYPE_SHARED, true, &id_shared);
    expect_alloc(dev + 1000, ZE_MEMORY_TYPE_DEVICE, true, &id_inner);
    ck_assert_uint_eq(id_inner, id_dev);
    ck_assert_uint_ne(id_dev, id_host);
    ck_assert_uint_ne(id_dev, id_shared);

    int on_stack = 0;
    expect_alloc(&on_stack, ZE_MEMORY_TYPE_UNKNOWN, false, NULL);

    void *base = NULL;
    size_t size = 0;
    ZE_OK(zeMemGetAddressRange(e->context, dev + 123, &base, &size));
    ck_assert_ptr_eq(base, dev);
    ck_assert_uint_ge(size, 4096);

    /* A large alignment is honoured. */
    ze_device_mem_alloc_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
    void *aligned = NULL;
    ZE_OK(zeMemAllocDevice(e->context, &desc, 100, 4096, e->device, &aligned));
    ck_assert_uint_eq((uintptr_t)aligned % 4096, 0);

    /* A shared allocation without a device. */
    ze_host_mem_alloc_desc_t host_desc = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    void *unbound = NULL;
    ZE_OK(zeMemAllocShared(e->context, &desc, &host_desc, 256, 0, NULL, &unbound));
    expect_alloc(unbound, ZE_MEMORY_TYPE_SHARED, false, NULL);

    ze_test_free(unbound);
    ze_test_free(aligned);
    ze_test_free(shared);
    ze_test_free(host);
    ze_test_free(dev);
}
END_TEST

/* Checks every byte of buf[0, size) against the pattern repeated. */
static void expect_pattern(const uint8_t *buf, size_t size, const uint8_t *pattern,
                           size_t pattern_size)
{
    for (size_t i = 0; i < size; i++)
        ck_assert_msg(buf[i] == pattern[i % pattern_size], "byte %zu = 0x%02x, expected 0x%02x", i,
                      buf[i], pattern[i % pattern_size]);
}

START_TEST(fill_and_copy_immediate)
{
    const ze_test_env_t *e = ze_test_env();
    ze_command_list_handle_t list = e->sync_list;
    const size_t n = 4096 + 37;
    uint8_t *dev = ze_test_alloc_device(n + 64);
    uint8_t *readback = ze_test_alloc_host(n + 64);

    /* 4-byte pattern over the whole buffer. */
    const uint8_t p4[4] = {0xde, 0xad, 0xbe, 0xef};
    ZE_OK(zeCommandListAppendMemoryFill(list, dev, p4, 4, n, NULL, 0, NULL));
    ZE_OK(zeCommandListAppendMemoryCopy(list, readback, dev, n, NULL, 0, NULL));
    expect_pattern(readback, n, p4, 4); /* n is not a multiple of 4: a partial pattern ends it */

    /* 16-byte pattern at an address not aligned to it, odd size. */
    uint8_t p16[16];
    for (int i = 0; i < 16; i++)
        p16[i] = (uint8_t)(0x10 + i);
    ZE_OK(zeCommandListAppendMemoryFill(list, dev + 3, p16, 16, 16 * 20 + 5, NULL, 0, NULL));
    ZE_OK(zeCommandListAppendMemoryCopy(list, readback, dev, n, NULL, 0, NULL));
    expect_pattern(readback, 3, p4, 4);
    expect_pattern(readback + 3, 16 * 20 + 5, p16, 16);
    ck_assert_uint_eq(readback[3 + 16 * 20 + 5], p4[(3 + 16 * 20 + 5) % 4]);

    /* One byte; then 128 bytes, the largest pattern. */
    const uint8_t p1 = 0x5a;
    ZE_OK(zeCommandListAppendMemoryFill(list, dev, &p1, 1, n, NULL, 0, NULL));
    uint8_t p128[128];
    for (int i = 0; i < 128; i++)
        p128[i] = (uint8_t)(255 - i);
    ZE_OK(zeCommandListAppendMemoryFill(list, dev + 128, p128, 128, 1024, NULL, 0, NULL));
    ZE_OK(zeCommandListAppendMemoryCopy(list, readback, dev, n, NULL, 0, NULL));
    expect_pattern(readback, 128, &p1, 1);
    expect_pattern(readback + 128, 1024, p128, 128);
    expect_pattern(readback + 1152, n - 1152, &p1, 1);

    /* Plain malloc'd host memory -> device -> shared. */
    uint8_t *src = malloc(n);
    uint8_t *shared = ze_test_alloc_shared(n);
    for (size_t i = 0; i < n; i++)
        src[i] = (uint8_t)(i * 7 + 1);
    ZE_OK(zeCommandListAppendMemoryCopy(list, dev, src, n, NULL, 0, NULL));
    ZE_OK(zeCommandListAppendMemoryCopy(list, shared, dev, n, NULL, 0, NULL));
    ck_assert_int_eq(memcmp(shared, src, n), 0);
    free(src);

    ze_test_free(shared);
    ze_test_free(readback);
    ze_test_free(dev);
}
END_TEST

static double fill_seconds(void *buf, const void *pattern, size_t pattern_size, size_t size)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ZE_OK(zeCommandListAppendMemoryFill(ze_test_env()->sync_list, buf, pattern, pattern_size, size,
                                        NULL, 0, NULL));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
}

/* The fills the plugin does on its scratch: a large buffer, zeroed or set
 * to a float, on the list. */
START_TEST(large_fill)
{
    const size_t n = 64u << 20;
    float *buf = ze_test_alloc_device(n);
    float *check = ze_test_alloc_host(n);
    const float zero = 0.0f, one = 1.0f;
    double first = fill_seconds(buf, &zero, sizeof zero, n); /* includes first touch */
    double zeroing = fill_seconds(buf, &zero, sizeof zero, n);
    double ones = fill_seconds(buf, &one, sizeof one, n);
    printf("fill 64 MiB: first %.1f ms, zero %.1f ms (%.1f GB/s), 1.0f %.1f ms (%.1f GB/s)\n",
           first * 1e3, zeroing * 1e3, (double)n / zeroing / 1e9, ones * 1e3,
           (double)n / ones / 1e9);
    fflush(stdout);
    ZE_OK(zeCommandListAppendMemoryCopy(ze_test_env()->sync_list, check, buf, n, NULL, 0, NULL));
    for (size_t i = 0; i < n / sizeof(float); i++)
        if (check[i] != 1.0f)
            ck_abort_msg("buf[%zu] = %g after the fill", i, (double)check[i]);
    ze_test_free(check);
    ze_test_free(buf);
}
END_TEST

/* Fill, barrier, copy on a regular list executed twice on a queue. */
START_TEST(regular_list_fill_copy)
{
    const size_t n = 1 << 16;
    uint32_t *dev = ze_test_alloc_device(n * sizeof *dev);
    uint32_t *out = ze_test_alloc_host(n * sizeof *out);
    uint32_t pattern = 0x01020304;
    ze_command_list_handle_t list = ze_test_list();
    ze_command_queue_handle_t queue = ze_test_queue(ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
    ZE_OK(zeCommandListAppendMemoryFill(list, dev, &pattern, sizeof pattern, n * sizeof *dev, NULL,
                                        0, NULL));
    pattern = 0; /* captured at append: changing it now must not matter */
    ZE_OK(zeCommandListAppendBarrier(list, NULL, 0, NULL));
    ZE_OK(zeCommandListAppendMemoryCopy(list, out, dev, n * sizeof *dev, NULL, 0, NULL));
    ZE_OK(zeCommandListClose(list));
    for (int round = 0; round < 2; round++) {
        memset(out, 0, n * sizeof *out);
        ZE_OK(zeCommandQueueExecuteCommandLists(queue, 1, &list, NULL));
        ZE_OK(zeCommandQueueSynchronize(queue, UINT64_MAX));
        for (size_t i = 0; i < n; i++)
            ck_assert_uint_eq(out[i], 0x01020304);
    }
    ZE_OK(zeCommandListDestroy(list));
    ZE_OK(zeCommandQueueDestroy(queue));
    ze_test_free(out);
    ze_test_free(dev);
}
END_TEST

/* ZE_CPU_GUARD_PAGES: a guarded allocation of 100 bytes placed at `side`,
 * described like any other; a fill and a copy reach every byte of it. */
static uint8_t *guarded_shared(const char *side)
{
    const ze_test_env_t *e = ze_test_env();
    setenv("ZE_CPU_GUARD_PAGES", side, 1);
    ze_device_mem_alloc_desc_t dd = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
    ze_host_mem_alloc_desc_t hd = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    void *p = NULL;
    ZE_OK(zeMemAllocShared(e->context, &dd, &hd, 100, 4, e->device, &p));
    unsetenv("ZE_CPU_GUARD_PAGES");
    return p;
}

START_TEST(guard_pages)
{
    const ze_test_env_t *e = ze_test_env();
    for (int i = 0; i < 2; i++) {
        uint8_t *p = guarded_shared(i ? "start" : "end");
        ck_assert_uint_eq((uintptr_t)p % 4, 0);
        expect_alloc(p + 99, ZE_MEMORY_TYPE_SHARED, true, NULL);
        void *base = NULL;
        size_t size = 0;
        ZE_OK(zeMemGetAddressRange(e->context, p + 50, &base, &size));
        ck_assert_ptr_eq(base, p);
        ck_assert_uint_eq(size, 100);
        const uint8_t pattern = 0xa5;
        uint8_t *readback = ze_test_alloc_host(100);
        ZE_OK(zeCommandListAppendMemoryFill(e->sync_list, p, &pattern, 1, 100, NULL, 0, NULL));
        ZE_OK(zeCommandListAppendMemoryCopy(e->sync_list, readback, p, 100, NULL, 0, NULL));
        expect_pattern(readback, 100, &pattern, 1);
        ze_test_free(readback);
        ze_test_free(p);
    }
}
END_TEST

/* ZE_CPU_GUARD_PAGES reads like every switch (doc/environment.md): "off",
 * "no", "false" in any case, like "0", leave allocations unguarded. A
 * guarded allocation of 100 bytes starts or ends on a page boundary; of four
 * unguarded ones the engine's allocator places some elsewhere. */
START_TEST(guard_pages_off)
{
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    static const char *const off[] = {"0", "off", "No", "FALSE"};
    for (int i = 0; i < 4; i++) {
        uint8_t *p[4];
        int page_placed = 0;
        for (int n = 0; n < 4; n++) {
            p[n] = guarded_shared(off[i]);
            if ((uintptr_t)p[n] % page == 0 || (uintptr_t)(p[n] + 100) % page == 0)
                page_placed++;
        }
        for (int n = 0; n < 4; n++)
            ze_test_free(p[n]);
        ck_assert_msg(page_placed < 4, "ZE_CPU_GUARD_PAGES=%s guarded the allocations", off[i]);
    }
}
END_TEST

/* The byte past the end of an allocation placed at the end faults, and so
 * does the byte before one placed at the start: the fault exits the test's
 * process with GUARD_FAULT_EXIT through a handler of its own (the
 * sanitizers' and the engine's handlers would report it otherwise). */
#define GUARD_FAULT_EXIT 77

static void exit_on_fault(int signal)
{
    (void)signal;
    _exit(GUARD_FAULT_EXIT);
}

static void catch_faults(void)
{
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_handler = exit_on_fault;
    sigaction(SIGSEGV, &action, NULL);
    sigaction(SIGBUS, &action, NULL);
}

START_TEST(guard_page_after_end)
{
    volatile uint8_t *p = guarded_shared("end");
    catch_faults();
    p[100] = 1;
}
END_TEST

START_TEST(guard_page_before_start)
{
    volatile uint8_t *p = guarded_shared("start");
    catch_faults();
    p[-1] = 1;
}
END_TEST

Suite *driver_memory_suite(void)
{
    const test_entry_t tests[] = {
            TEST_ONCE(allocations_and_properties),
            TEST_ONCE(fill_and_copy_immediate),
            TEST_ONCE(large_fill),
            TEST_ONCE(regular_list_fill_copy),
            TEST_ONCE(guard_pages),
            TEST_ONCE(guard_pages_off),
    };
    Suite *s = suite_create("memory");
    TCase *tc = test_add_case(s, "usm", 0, tests, TEST_COUNT(tests));
    /* A fault fails a test only in its own process (not with CK_FORK=no,
     * as under valgrind). */
    const char *fork_mode = getenv("CK_FORK");
    if (fork_mode == NULL || strcmp(fork_mode, "no") != 0) {
        tcase_add_exit_test(tc, guard_page_after_end, GUARD_FAULT_EXIT);
        tcase_add_exit_test(tc, guard_page_before_start, GUARD_FAULT_EXIT);
    }
    return s;
}
