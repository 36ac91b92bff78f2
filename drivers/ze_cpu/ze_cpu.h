/*
 * ze_cpu.h - the CPU Level Zero driver's objects and internal interfaces.
 *
 * The driver implements a subset of Level Zero 1.4 on top of an OpenCL
 * platform reached through the ICD loader (Intel's CPU runtime by default).
 * Every Level Zero handle is a pointer to one of the structs below, and
 * the registry (registry.c) knows which pointers are live handles of which
 * kind: a handle of the wrong kind, a destroyed one or a wild pointer is
 * refused with ZE_RESULT_ERROR_INVALID_NULL_HANDLE without being followed.
 *
 * Lifetimes: a handle dies when it is destroyed; the object behind it lives
 * on while other objects need it (reference counts): a kernel while
 * recorded launches hold it, a module while its kernels live, an event
 * pool while its events or recorded commands naming them live, a context
 * while anything created in it lives. So parents may be destroyed before
 * their children, in any order, as Intel's driver allows.
 *
 * Execution model: a regular command list records commands (kernel arguments
 * and group size are snapshotted at append time); a command queue owns an
 * in-order cl_command_queue and a worker thread that replays submitted lists
 * in order, so an execution may wait on an event the host signals later. A
 * synchronous immediate list replays each append on the caller's thread; an
 * asynchronous one hands each append to its own worker.
 *
 * Entry points are named cpu_<Level Zero name> (Mesa's convention), never
 * zeXxx, and only the *GetProcAddrTable getters are exported.
 */
#ifndef ZE_CPU_H
#define ZE_CPU_H

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <level_zero/ze_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "spirv_reflect.h"

/* --- Handles ---------------------------------------------------------------- */

typedef enum cpu_ze_kind {
    CPU_ZE_KIND_CONTEXT = 1,
    CPU_ZE_KIND_QUEUE,
    CPU_ZE_KIND_LIST,
    CPU_ZE_KIND_FENCE,
    CPU_ZE_KIND_POOL,
    CPU_ZE_KIND_EVENT,
    CPU_ZE_KIND_MODULE,
    CPU_ZE_KIND_LOG,
    CPU_ZE_KIND_KERNEL,
} cpu_ze_kind_t;

/* Makes object a live handle of kind. Returns ZE_RESULT_SUCCESS,
 * ZE_RESULT_ERROR_INVALID_ARGUMENT if the address already is a live handle
 * (an event pool's slot taken twice), or ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY. */
ze_result_t cpu_ze_handle_publish(const void *object, cpu_ze_kind_t kind);

/* True if handle is a live handle of kind; never dereferences handle. */
bool cpu_ze_handle_is(const void *handle, cpu_ze_kind_t kind);

/* Ends handle's life if it is a live handle of kind; false if it was not
 * (so of two threads destroying one handle, one wins). */
bool cpu_ze_handle_retire(const void *handle, cpu_ze_kind_t kind);

/* Returns from the calling function unless handle is a live handle of
 * kind. */
#define CPU_ZE_CHECK_HANDLE(handle, kind)                                                          \
    do {                                                                                           \
        if (!cpu_ze_handle_is((handle), (kind)))                                                   \
            return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, "%s: %s is not a live handle", \
                               __func__, #handle);                                                 \
    } while (0)

/* Retires handle (checked live before) or returns from the calling function
 * because another thread destroyed it meanwhile. */
#define CPU_ZE_RETIRE_HANDLE(handle, kind)                                                         \
    do {                                                                                           \
        if (!cpu_ze_handle_retire((handle), (kind)))                                               \
            return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_NULL_HANDLE,                                \
                               "%s: %s was destroyed by another thread", __func__, #handle);       \
    } while (0)

/* Returns ZE_RESULT_ERROR_INVALID_NULL_POINTER from the calling function if
 * pointer is NULL. */
#define CPU_ZE_CHECK_POINTER(pointer)                                                              \
    do {                                                                                           \
        if ((pointer) == NULL)                                                                     \
            return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_NULL_POINTER, "%s: %s is NULL", __func__,   \
                               #pointer);                                                          \
    } while (0)

/* True for an stype of 0, which no structure type has: the application
 * zero-initialized the struct and did not set it. Accepted, as Intel's
 * driver does (noted under ZE_CPU_DEBUG); a wrong stype is refused. */
bool cpu_ze_stype_unset(ze_structure_type_t stype, const char *what, const char *caller);

/* Returns ZE_RESULT_ERROR_INVALID_ARGUMENT from the calling function unless
 * the descriptor or property struct has the expected stype (or none). */
#define CPU_ZE_CHECK_STYPE(desc, expected)                                                         \
    do {                                                                                           \
        if ((desc)->stype != (expected) && !cpu_ze_stype_unset((desc)->stype, #desc, __func__))    \
            return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ARGUMENT, "%s: %s->stype = 0x%x, not %s",   \
                               __func__, #desc, (unsigned)(desc)->stype, #expected);               \
    } while (0)

/* The checks of every entry that creates an object from a desc, in this
 * order: desc and out non-NULL, desc->stype expected (or unset). */
#define CPU_ZE_CHECK_CREATE_DESC(desc, expected, out)                                              \
    do {                                                                                           \
        CPU_ZE_CHECK_POINTER(desc);                                                                \
        CPU_ZE_CHECK_POINTER(out);                                                                 \
        CPU_ZE_CHECK_STYPE(desc, expected);                                                        \
    } while (0)

/* Returns result; when ZE_CPU_DEBUG is set, first prints the formatted reason
 * to stderr. Every refusal goes through here so users can see why. */
ze_result_t cpu_ze_fail(ze_result_t result, const char *format, ...)
        __attribute__((format(printf, 2, 3)));

/* True when ZE_CPU_DEBUG is set to something other than 0. */
bool cpu_ze_debug_enabled(void);

/* Under ZE_CPU_DEBUG, prints a note to stderr (something accepted that a
 * stricter driver would refuse, what a lenient destroy kept alive). */
void cpu_ze_note(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* "CL_OUT_OF_RESOURCES", ... for messages. */
const char *cpu_ze_cl_error_name(cl_int error);

/* The Level Zero result for a failed OpenCL allocation-like call. */
ze_result_t cpu_ze_result_from_cl(cl_int error);

/* Monotonic nanoseconds: the clock of events' timestamps and of
 * zeDeviceGetGlobalTimestamps. */
uint64_t cpu_ze_now_ns(void);

/* --- Guarded allocations (memory_guard.c, ZE_CPU_GUARD_PAGES) ----------------- */

typedef enum cpu_ze_guard {
    CPU_ZE_GUARD_OFF = 0,
    CPU_ZE_GUARD_END,   /* the allocation ends against the trailing guard page */
    CPU_ZE_GUARD_START, /* it starts right after the leading one */
} cpu_ze_guard_t;

/* What ZE_CPU_GUARD_PAGES asks for now (read at every allocation). */
cpu_ze_guard_t cpu_ze_guard_mode(void);
/* size bytes aligned to alignment in a mapping of their own, between
 * PROT_NONE pages, placed as mode says; type is the USM type the driver
 * reports for it. NULL when out of memory. */
void *cpu_ze_guard_alloc(cpu_ze_guard_t mode, size_t size, size_t alignment, cl_uint type);
/* If ptr lies in a guarded allocation: its type, base and size, and true. */
bool cpu_ze_guard_describe(const void *ptr, cl_uint *type, void **base, size_t *size);
/* Unmaps the guarded allocation whose base is ptr: 1, or 0 if there is none.
 * Does not wait for commands using it (the caller synchronizes first). */
int cpu_ze_guard_free(void *ptr);

/* --- The engine: one OpenCL platform and its CPU device ---------------------- */

typedef struct cpu_ze_engine {
    cl_platform_id platform;
    cl_device_id device;
    char platform_name[256];
    char device_name[ZE_MAX_DEVICE_NAME];
    char driver_version[128]; /* CL_DRIVER_VERSION: identifies its compiler */

    /* cl_intel_unified_shared_memory entry points. */
    clHostMemAllocINTEL_fn host_mem_alloc;
    clDeviceMemAllocINTEL_fn device_mem_alloc;
    clSharedMemAllocINTEL_fn shared_mem_alloc;
    clMemBlockingFreeINTEL_fn mem_blocking_free;
    clGetMemAllocInfoINTEL_fn get_mem_alloc_info;
    clSetKernelArgMemPointerINTEL_fn set_kernel_arg_mem_pointer;
    clEnqueueMemFillINTEL_fn enqueue_mem_fill;
    clEnqueueMemcpyINTEL_fn enqueue_memcpy;

    /* Device facts, read once. */
    cl_uint vendor_id;
    cl_uint compute_units;
    cl_uint clock_mhz;
    cl_uint native_vector_width_float;
    cl_uint address_bits;
    cl_ulong global_mem_size;
    cl_ulong max_mem_alloc_size;
    cl_ulong local_mem_size;
    cl_ulong global_mem_cache_size;
    size_t max_work_group_size;
    size_t max_work_item_sizes[3];
    size_t max_parameter_size;
    size_t printf_buffer_size;
    uint32_t num_sub_group_sizes;
    uint32_t sub_group_sizes[8];
    uint32_t spirv_version; /* ZE_MAKE_VERSION of the newest SPIR-V accepted */
    cl_device_fp_config half_fp_config, single_fp_config, double_fp_config;
    cl_bitfield half_fp_atomics, single_fp_atomics, double_fp_atomics; /* cl_ext_float_atomics */
    cl_bitfield usm_host_caps, usm_device_caps, usm_shared_caps, usm_cross_caps, usm_system_caps;
    bool has_int64_atomics;
    bool has_dp4a;
    bool has_float_atomics;
    uint8_t device_uuid[16];
    uint8_t driver_uuid[16];
} cpu_ze_engine_t;

/* Chooses the engine: ZE_CPU_OPENCL_ENGINE, else the user's OCL_ICD_VENDORS,
 * else the configured default if it exists, else the system's ICDs
 * (engine_choice.c). library (PATH_MAX bytes) gets the absolute path of the
 * engine library to open directly, or "" to take the ICD loader's
 * platforms. Returns ZE_RESULT_ERROR_UNINITIALIZED if ZE_CPU_OPENCL_ENGINE
 * names no library. */
ze_result_t cpu_ze_engine_choose(char *library);

/* Finds the platform (ZE_CPU_OPENCL_PLATFORM, else the first with a CPU
 * device, preferring Intel's) and reads its facts into engine. Returns
 * ZE_RESULT_ERROR_UNINITIALIZED when there is no usable platform. */
ze_result_t cpu_ze_engine_open(cpu_ze_engine_t *engine);

/* --- Driver and device (one each) --------------------------------------------- */

/* Their handles are their addresses, compared, never followed. */
struct cpu_ze_driver {
    char unused;
};

struct cpu_ze_device {
    char unused;
};

/* The process-wide state zeInit fills once. */
typedef struct cpu_ze_global {
    struct cpu_ze_driver driver;
    struct cpu_ze_device device;
    cpu_ze_engine_t engine;
    ze_result_t init_result;
    atomic_bool ready; /* zeInit found an engine */
} cpu_ze_global_t;

extern cpu_ze_global_t cpu_ze;

/* ZE_RESULT_SUCCESS once zeInit has found an engine. */
static inline bool cpu_ze_ready(void)
{
    return atomic_load_explicit(&cpu_ze.ready, memory_order_acquire);
}

/* ZE_RESULT_SUCCESS if driver is this driver's handle (after zeInit). */
ze_result_t cpu_ze_check_driver(ze_driver_handle_t driver);

/* ZE_RESULT_SUCCESS if device is this driver's device (after zeInit). */
ze_result_t cpu_ze_check_device(ze_device_handle_t device);

#define CPU_ZE_CHECK_DRIVER(driver)                                                                \
    do {                                                                                           \
        ze_result_t r_ = cpu_ze_check_driver(driver);                                              \
        if (r_ != ZE_RESULT_SUCCESS)                                                               \
            return r_;                                                                             \
    } while (0)

#define CPU_ZE_CHECK_DEVICE(device)                                                                \
    do {                                                                                           \
        ze_result_t r_ = cpu_ze_check_device(device);                                              \
        if (r_ != ZE_RESULT_SUCCESS)                                                               \
            return r_;                                                                             \
    } while (0)

/* --- Contexts ------------------------------------------------------------------ */

struct cpu_ze_context {
    cl_context cl;
    /* The handle counts one, every queue, command list, module and event
     * pool object created in the context one more: zeContextDestroy ends
     * the handle at once, the OpenCL context goes with the last reference. */
    atomic_int refs;
};

void cpu_ze_context_retain(struct cpu_ze_context *context);
void cpu_ze_context_release(struct cpu_ze_context *context);

/* --- Synchronization primitives (events and fences) ------------------------------ */

/* Sets *flag to 1 (release) and wakes every waiter. */
void cpu_ze_flag_signal(atomic_uint *flag);

/* Waits until *flag is 1 (acquire) or timeout_ns passes (UINT64_MAX: never,
 * 0: just query). Returns ZE_RESULT_SUCCESS or ZE_RESULT_NOT_READY. */
ze_result_t cpu_ze_flag_wait(atomic_uint *flag, uint64_t timeout_ns);

/* Decrements *counter under the same lock and wakes waiters: after this
 * the releasing thread must not touch the object that holds counter. */
void cpu_ze_counter_release(atomic_int *counter);

/* Waits up to timeout_ns for *counter to be 0; true if it is. Seeing 0
 * means every releasing thread is done with the object. */
bool cpu_ze_counter_wait_zero(atomic_int *counter, uint64_t timeout_ns);

/* The absolute CLOCK_MONOTONIC time timeout_ns from now; false (and no
 * deadline) if the timeout is so long it means "forever". */
bool cpu_ze_deadline(uint64_t timeout_ns, struct timespec *deadline);

/* How long destroy and reset wait for an execution that is finishing
 * before they answer ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE. */
#define CPU_ZE_IN_USE_GRACE_NS 200000000ull

struct cpu_ze_event_pool;

/* A slot of its pool; the handle is the slot's address. */
struct cpu_ze_event {
    struct cpu_ze_event_pool *pool;
    atomic_uint signalled;
    /* Host clock at start and end of the command that signalled it (pools
     * with ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP; other events: the time of
     * the signal, twice); written before the release store of signalled. */
    uint64_t start_ns, end_ns;
};

struct cpu_ze_event_pool {
    struct cpu_ze_context *context; /* holds a reference */
    ze_event_pool_flags_t flags;
    uint32_t count;
    /* The handle, each live event, and each recorded command naming one of
     * the pool's events count one: the slots outlive zeEventPoolDestroy
     * while anything may still touch them. */
    atomic_int refs;
    struct cpu_ze_event *events; /* count slots */
};

void cpu_ze_pool_retain(struct cpu_ze_event_pool *pool);
void cpu_ze_pool_release(struct cpu_ze_event_pool *pool);

static inline bool cpu_ze_event_has_timestamps(const struct cpu_ze_event *event)
{
    return (event->pool->flags & ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP) != 0;
}

/* The kernel timestamps of a signalled event (read after an acquire load of
 * its flag): host-clock ns, global and context alike. */
void cpu_ze_event_timestamps(const struct cpu_ze_event *event,
                             ze_kernel_timestamp_result_t *result);

struct cpu_ze_command_queue;

struct cpu_ze_fence {
    struct cpu_ze_command_queue *queue; /* compared, never followed: may be destroyed */
    atomic_uint signalled;
    atomic_int pending; /* submitted executions that will signal it */
};

/* --- Modules and kernels ---------------------------------------------------------- */

struct cpu_ze_module {
    struct cpu_ze_context *context; /* holds a reference */
    cl_program program;
    spirv_reflection_t *reflection; /* kernels, their parameters, constants */
    /* The handle counts one, each kernel object one more: zeModuleDestroy
     * ends the handle, the program lives while kernels or recorded
     * launches of them do. */
    atomic_int refs;
};

void cpu_ze_module_release(struct cpu_ze_module *module);

struct cpu_ze_build_log {
    char *text; /* NUL-terminated, never NULL */
};

struct cpu_ze_kernel {
    struct cpu_ze_module *module;    /* holds a reference */
    const spirv_kernel_info_t *info; /* owned by module->reflection */
    cl_kernel cl;
    /* The handle counts as one reference, each recorded launch as one more:
     * a command list may outlive zeKernelDestroy. */
    atomic_int refs;
    uint32_t group_size[3];
    size_t max_group_size; /* CL_KERNEL_WORK_GROUP_SIZE */
    ze_kernel_indirect_access_flags_t indirect_access;

    /* Argument values as zeKernelSetArgumentValue left them: argument i
     * occupies arg_size[i] bytes at arg_offset[i] of values (a pointer as
     * its 8 bytes, a local argument as its size_t byte count). A launch
     * snapshots values with one memcpy. */
    uint32_t num_args;
    uint32_t *arg_offset;
    uint32_t *arg_size;
    uint8_t *arg_is_set;
    size_t values_size;
    uint8_t *values;

    /* What the cl_kernel currently holds, so a replay sets only the
     * arguments that changed. Guarded by launch_lock, which also makes
     * "set arguments + enqueue" atomic across queues. */
    pthread_mutex_t launch_lock;
    uint8_t *applied;
    uint8_t *arg_is_applied;
};

/* Drops one reference; frees the kernel (and its module reference) at zero. */
void cpu_ze_kernel_release(struct cpu_ze_kernel *kernel);

/* Sets the cl_kernel's arguments from a snapshot and enqueues the launch on
 * queue. Thread-safe per kernel. Returns the OpenCL error, CL_SUCCESS. */
cl_int cpu_ze_kernel_enqueue(struct cpu_ze_kernel *kernel, cl_command_queue queue,
                             const uint8_t *values, const uint32_t groups[3],
                             const uint32_t group_size[3]);

/* --- Recorded commands -------------------------------------------------------------- */

typedef enum cpu_ze_command_kind {
    CPU_ZE_CMD_LAUNCH,
    CPU_ZE_CMD_COPY,
    CPU_ZE_CMD_FILL,
    CPU_ZE_CMD_BARRIER, /* also AppendWaitOnEvents and AppendSignalEvent */
    CPU_ZE_CMD_EVENT_RESET,
    CPU_ZE_CMD_TIMESTAMP,
    CPU_ZE_CMD_QUERY_TIMESTAMPS,
} cpu_ze_command_kind_t;

/* Every event a command names (signal, waits, reset, queried) holds a
 * reference on its pool, the kernel of a launch one on the kernel: see
 * cpu_ze_command_retain. */
typedef struct cpu_ze_command {
    cpu_ze_command_kind_t kind;
    uint32_t num_waits;
    size_t waits_offset; /* arena offset of struct cpu_ze_event *[num_waits] */
    struct cpu_ze_event *signal;
    union {
        struct {
            struct cpu_ze_kernel *kernel; /* holds a reference */
            uint32_t groups[3];
            uint32_t group_size[3];
            size_t values_offset; /* arena offset of the argument snapshot */
        } launch;
        struct {
            void *dst;
            const void *src;
            size_t size;
        } copy;
        struct {
            void *dst;
            size_t size;
            size_t pattern_offset; /* arena offset of the pattern */
            size_t pattern_size;
        } fill;
        struct cpu_ze_event *reset;
        uint64_t *timestamp_dst;
        struct {
            uint32_t num_events;
            size_t events_offset; /* arena offset of struct cpu_ze_event *[num_events] */
            uint8_t *dst;
            size_t offsets_offset; /* arena offset of size_t[num_events], byte offsets in dst */
        } query;
    } u;
} cpu_ze_command_t;

/* An ordered sequence of commands and the bytes they refer to (wait lists,
 * argument snapshots, fill patterns). Offsets, not pointers, so the arena
 * may grow. */
typedef struct cpu_ze_recording {
    cpu_ze_command_t *commands;
    size_t count, capacity;
    uint8_t *arena;
    size_t arena_used, arena_capacity;
} cpu_ze_recording_t;

/* A new zeroed command at the end of rec, or NULL if out of memory. */
cpu_ze_command_t *cpu_ze_recording_push(cpu_ze_recording_t *rec);

/* Reserves bytes (8-byte aligned) in rec's arena and stores their offset;
 * returns their address, valid until the next reservation, or NULL. */
void *cpu_ze_recording_reserve(cpu_ze_recording_t *rec, size_t bytes, size_t *offset);

/* Takes the references cmd (fully written, in rec) holds: its kernel and
 * the pools of the events it names. Every recorded command takes them
 * once; cpu_ze_recording_clear drops them. */
void cpu_ze_command_retain(const cpu_ze_recording_t *rec, const cpu_ze_command_t *cmd);

/* Forgets every command (dropping their references); keeps the storage. */
void cpu_ze_recording_clear(cpu_ze_recording_t *rec);

/* Clears and frees the storage. */
void cpu_ze_recording_free(cpu_ze_recording_t *rec);

/* Runs rec's commands in order on queue (waits on the host, signals after
 * completion). Every command runs even after a failure, so no event is left
 * unsignalled; returns the first failure. Ends with the queue drained. */
ze_result_t cpu_ze_replay(const cpu_ze_recording_t *rec, cl_command_queue queue);

/* --- Executors: an in-order OpenCL queue with a worker thread ------------------------ */

struct cpu_ze_command_list;

typedef struct cpu_ze_job {
    struct cpu_ze_job *next;
    uint32_t num_lists;
    struct cpu_ze_command_list **lists; /* regular lists, each counted in ->executions */
    cpu_ze_recording_t *owned;          /* one append of an asynchronous immediate list */
    struct cpu_ze_fence *fence;         /* signalled after the job, or NULL */
} cpu_ze_job_t;

typedef struct cpu_ze_executor {
    cl_command_queue queue;
    pthread_t thread;
    bool thread_started;
    pthread_mutex_t lock;
    pthread_cond_t wake; /* the worker waits for jobs */
    pthread_cond_t done; /* synchronize waits for completions */
    cpu_ze_job_t *head, *tail;
    uint64_t submitted, completed;
    bool stopping;
    ze_result_t error; /* first failure while executing, reported once */
} cpu_ze_executor_t;

/* Creates the OpenCL queue and starts the worker. */
ze_result_t cpu_ze_executor_init(cpu_ze_executor_t *exec, struct cpu_ze_context *context);

/* Stops the worker after the queued jobs and releases the queue. */
void cpu_ze_executor_fini(cpu_ze_executor_t *exec);

/* Queues job (taking ownership). */
void cpu_ze_executor_submit(cpu_ze_executor_t *exec, cpu_ze_job_t *job);

/* Waits for everything submitted so far (timeout as for events). Returns
 * ZE_RESULT_NOT_READY on timeout, else the first execution failure since
 * the last call, else ZE_RESULT_SUCCESS. */
ze_result_t cpu_ze_executor_wait(cpu_ze_executor_t *exec, uint64_t timeout_ns);

/* --- Command queues and command lists ------------------------------------------------ */

struct cpu_ze_command_queue {
    struct cpu_ze_context *context; /* holds a reference */
    ze_command_queue_mode_t mode;
    cpu_ze_executor_t exec;
};

struct cpu_ze_command_list {
    struct cpu_ze_context *context; /* holds a reference */
    bool immediate;
    bool synchronous; /* immediate lists: replay each append on the caller */
    /* Serializes appends, close and reset: Level Zero forbids appending to
     * one list from two threads at once, and a program that does so gets
     * its commands in some order instead of a corrupted recording. A
     * synchronous immediate list holds it while it replays. */
    pthread_mutex_t lock;
    bool closed; /* regular lists */
    cpu_ze_recording_t rec;
    atomic_int executions;       /* submitted and not finished; reset/destroy refuse */
    cl_command_queue sync_queue; /* synchronous immediate lists */
    cpu_ze_executor_t *exec;     /* asynchronous immediate lists */
};

/* Admits list (a live handle) to an execution on a queue of context: it
 * must be a closed regular list of that context. Counts the execution
 * (list->executions), which the worker ends; index names the list in
 * messages. */
ze_result_t cpu_ze_list_admit(struct cpu_ze_command_list *list, struct cpu_ze_context *context,
                              uint32_t index);

/* Validates a command queue descriptor for queues and immediate lists. */
ze_result_t cpu_ze_check_queue_desc(const ze_command_queue_desc_t *desc, const char *caller);

/* The checks of the two entries that make an executor from a queue desc,
 * zeCommandQueueCreate and zeCommandListCreateImmediate (name, for the
 * desc's messages): the context, the device, the out pointer, the desc. */
#define CPU_ZE_CHECK_QUEUE_CREATE(hContext, hDevice, desc, out, name)                              \
    do {                                                                                           \
        CPU_ZE_CHECK_HANDLE(hContext, CPU_ZE_KIND_CONTEXT);                                        \
        CPU_ZE_CHECK_DEVICE(hDevice);                                                              \
        CPU_ZE_CHECK_POINTER(out);                                                                 \
        ze_result_t q_ = cpu_ze_check_queue_desc(desc, name);                                      \
        if (q_ != ZE_RESULT_SUCCESS)                                                               \
            return q_;                                                                             \
    } while (0)

/* --- Entry points ------------------------------------------------------------------------ */

/* Defines the implementation of Level Zero function name: cpu_<name>. Its
 * parameters must match entry_points.def, which declares it below. */
#define CPU_ZE_ENTRY(name, ...) ze_result_t ZE_APICALL cpu_##name(__VA_ARGS__)

/* Ids of the functions in entry_points.def, in order: CPU_ZE_API_ID_<name>. */
typedef enum cpu_ze_api_id {
#define CPU_ZE_API(name, params, args) CPU_ZE_API_ID_##name,
#define CPU_ZE_API_UNSUPPORTED(name, params) CPU_ZE_API_ID_##name,
#include "entry_points.def"
#undef CPU_ZE_API
#undef CPU_ZE_API_UNSUPPORTED
    CPU_ZE_API_COUNT
} cpu_ze_api_id_t;

/* cpu_<name>: the implementations; cpu_hook_<name>: what the DDI tables
 * hold (hooks.c: counts the call, fails it if a fault is armed for it,
 * else calls cpu_<name> or answers UNSUPPORTED_FEATURE). */
#define CPU_ZE_API(name, params, args)                                                             \
    ze_result_t ZE_APICALL cpu_##name params;                                                      \
    ze_result_t ZE_APICALL cpu_hook_##name params;
#define CPU_ZE_API_UNSUPPORTED(name, params) ze_result_t ZE_APICALL cpu_hook_##name params;
#include "entry_points.def"
#undef CPU_ZE_API
#undef CPU_ZE_API_UNSUPPORTED

/* The extension functions zeDriverGetExtensionFunctionAddress hands out
 * (zex_cpu.h). */
ze_result_t ZE_APICALL cpu_zexCpuFaultInject(const char *api_function, uint32_t nth,
                                             ze_result_t result);
ze_result_t ZE_APICALL cpu_zexCpuCallCounts(uint32_t *count, const char **names, uint64_t *calls);

#endif /* ZE_CPU_H */
