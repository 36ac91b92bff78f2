/*
 * memory_guard.c - guarded allocations (ZE_CPU_GUARD_PAGES, a debugging
 * aid): each zeMemAlloc* gets its own mapping with an inaccessible region
 * (GUARD_BYTES) at both ends, the allocation placed against one of them, so
 * that a kernel (or the host) reading or writing past that end faults at
 * the first byte instead of landing in a neighbour, and so does an access
 * up to GUARD_BYTES off on either side (a wrong row offset). The engine takes any host pointer as a
 * USM kernel argument or copy operand on the CPU device; what it cannot do
 * is describe these pointers (clGetMemAllocInfoINTEL), so the driver keeps
 * their list and answers for them (memory.c).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "env_flag.h"
#include "ze_cpu.h"

typedef struct guarded {
    struct guarded *next;
    char *ptr;    /* what the caller got */
    size_t size;  /* what the caller asked for */
    char *map;    /* the mapping, guard pages included */
    size_t map_size;
    cl_uint type; /* CL_MEM_TYPE_{HOST,DEVICE,SHARED}_INTEL */
} guarded_t;

/* Address space only: PROT_NONE pages take no memory. */
#define GUARD_BYTES ((size_t)1 << 20)

static pthread_mutex_t guard_lock = PTHREAD_MUTEX_INITIALIZER;
static guarded_t *guard_list;

cpu_ze_guard_t cpu_ze_guard_mode(void)
{
    /* Read at every allocation, so that a test can switch the side. */
    if (!sdpa_env_flag("ZE_CPU_GUARD_PAGES", 0))
        return CPU_ZE_GUARD_OFF;
    return strcmp(getenv("ZE_CPU_GUARD_PAGES"), "start") == 0 ? CPU_ZE_GUARD_START
                                                              : CPU_ZE_GUARD_END;
}

void *cpu_ze_guard_alloc(cpu_ze_guard_t mode, size_t size, size_t alignment, cl_uint type)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (alignment == 0)
        alignment = 1;
    /* Room for size, plus what aligning the end-placed pointer may take when
     * the alignment exceeds a page. */
    const size_t slack = alignment > page ? alignment : 0;
    const size_t guard = GUARD_BYTES > page ? GUARD_BYTES / page * page : page;
    if (size > SIZE_MAX - slack - page - 2 * guard)
        return NULL;
    const size_t body = (size + slack + page - 1) / page * page;
    guarded_t *g = calloc(1, sizeof(*g));
    if (g == NULL)
        return NULL;
    g->map_size = body + 2 * guard;
    void *map = mmap(NULL, g->map_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) {
        free(g);
        return NULL;
    }
    g->map = map;
    char *first = g->map + guard;
    if (mprotect(first, body, PROT_READ | PROT_WRITE) != 0) {
        munmap(g->map, g->map_size);
        free(g);
        return NULL;
    }
    if (mode == CPU_ZE_GUARD_START) {
        g->ptr = (char *)(((uintptr_t)first + alignment - 1) / alignment * alignment);
    } else {
        /* The last byte against the trailing guard, rounded down to the
         * alignment (a few bytes of slack for sizes that are not multiples
         * of it). */
        const uintptr_t end = (uintptr_t)(first + body) - size;
        g->ptr = (char *)(end / alignment * alignment);
    }
    g->size = size;
    g->type = type;
    pthread_mutex_lock(&guard_lock);
    g->next = guard_list;
    guard_list = g;
    pthread_mutex_unlock(&guard_lock);
    return g->ptr;
}

/* The guarded allocation holding ptr, NULL if none; guard_lock held. */
static guarded_t *find(const void *ptr)
{
    const char *p = ptr;
    for (guarded_t *g = guard_list; g != NULL; g = g->next)
        if (p >= g->ptr && p < g->ptr + g->size)
            return g;
    return NULL;
}

bool cpu_ze_guard_describe(const void *ptr, cl_uint *type, void **base, size_t *size)
{
    pthread_mutex_lock(&guard_lock);
    const guarded_t *g = find(ptr);
    if (g != NULL) {
        *type = g->type;
        *base = g->ptr;
        *size = g->size;
    }
    pthread_mutex_unlock(&guard_lock);
    return g != NULL;
}

int cpu_ze_guard_free(void *ptr)
{
    pthread_mutex_lock(&guard_lock);
    guarded_t **link = &guard_list;
    while (*link != NULL && (*link)->ptr != ptr)
        link = &(*link)->next;
    guarded_t *g = *link;
    if (g != NULL)
        *link = g->next;
    pthread_mutex_unlock(&guard_lock);
    if (g == NULL)
        return 0;
    munmap(g->map, g->map_size);
    free(g);
    return 1;
}
