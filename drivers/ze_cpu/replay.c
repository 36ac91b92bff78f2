/*
 * replay.c - recorded commands and their execution on an in-order OpenCL
 * queue.
 *
 * Level Zero events are host objects here. A command's wait list is waited
 * on by the replaying thread before the command is enqueued; a command's
 * signal event is signalled by the replaying thread once the queue has
 * drained (clFinish), which also makes the command's memory effects visible
 * to whoever sees the event (release/acquire on the event's flag). Commands
 * without events are only enqueued, so a list of launches runs back to
 * back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ze_cpu.h"

cpu_ze_command_t *cpu_ze_recording_push(cpu_ze_recording_t *rec)
{
    if (rec->count == rec->capacity) {
        size_t capacity = rec->capacity ? rec->capacity * 2 : 16;
        cpu_ze_command_t *grown = realloc(rec->commands, capacity * sizeof *grown);
        if (grown == NULL)
            return NULL;
        rec->commands = grown;
        rec->capacity = capacity;
    }
    cpu_ze_command_t *cmd = &rec->commands[rec->count++];
    memset(cmd, 0, sizeof *cmd);
    return cmd;
}

void *cpu_ze_recording_reserve(cpu_ze_recording_t *rec, size_t bytes, size_t *offset)
{
    size_t start = (rec->arena_used + 7u) & ~(size_t)7u;
    if (start + bytes > rec->arena_capacity) {
        size_t capacity = rec->arena_capacity ? rec->arena_capacity : 1024;
        while (capacity < start + bytes)
            capacity *= 2;
        uint8_t *grown = realloc(rec->arena, capacity);
        if (grown == NULL)
            return NULL;
        rec->arena = grown;
        rec->arena_capacity = capacity;
    }
    rec->arena_used = start + bytes;
    *offset = start;
    return rec->arena + start;
}

/* The events cmd names: its signal event, its wait list, the event it
 * resets, the events it queries; NULL entries are skipped by the caller. */
typedef struct event_list {
    struct cpu_ze_event *one[2];
    struct cpu_ze_event *const *many[2];
    uint32_t num_many[2];
} event_list_t;

static event_list_t events_of(const cpu_ze_recording_t *rec, const cpu_ze_command_t *cmd)
{
    event_list_t e = {{cmd->signal, NULL}, {NULL, NULL}, {0, 0}};
    if (cmd->num_waits > 0) {
        e.many[0] = (struct cpu_ze_event *const *)(const void *)(rec->arena + cmd->waits_offset);
        e.num_many[0] = cmd->num_waits;
    }
    if (cmd->kind == CPU_ZE_CMD_EVENT_RESET)
        e.one[1] = cmd->u.reset;
    if (cmd->kind == CPU_ZE_CMD_QUERY_TIMESTAMPS && cmd->u.query.num_events > 0) {
        e.many[1] = (struct cpu_ze_event *const *)(const void *)(rec->arena +
                                                                 cmd->u.query.events_offset);
        e.num_many[1] = cmd->u.query.num_events;
    }
    return e;
}

/* Retains (delta 1) or releases (delta -1) the pool of every event cmd
 * names. */
static void hold_event_pools(const cpu_ze_recording_t *rec, const cpu_ze_command_t *cmd, int delta)
{
    event_list_t e = events_of(rec, cmd);
    for (int k = 0; k < 2; k++) {
        if (e.one[k] != NULL)
            delta > 0 ? cpu_ze_pool_retain(e.one[k]->pool) : cpu_ze_pool_release(e.one[k]->pool);
        for (uint32_t i = 0; i < e.num_many[k]; i++)
            delta > 0 ? cpu_ze_pool_retain(e.many[k][i]->pool)
                      : cpu_ze_pool_release(e.many[k][i]->pool);
    }
}

void cpu_ze_command_retain(const cpu_ze_recording_t *rec, const cpu_ze_command_t *cmd)
{
    if (cmd->kind == CPU_ZE_CMD_LAUNCH)
        atomic_fetch_add_explicit(&cmd->u.launch.kernel->refs, 1, memory_order_relaxed);
    hold_event_pools(rec, cmd, 1);
}

void cpu_ze_recording_clear(cpu_ze_recording_t *rec)
{
    for (size_t i = 0; i < rec->count; i++) {
        const cpu_ze_command_t *cmd = &rec->commands[i];
        hold_event_pools(rec, cmd, -1);
        if (cmd->kind == CPU_ZE_CMD_LAUNCH)
            cpu_ze_kernel_release(cmd->u.launch.kernel);
    }
    rec->count = 0;
    rec->arena_used = 0;
}

void cpu_ze_recording_free(cpu_ze_recording_t *rec)
{
    cpu_ze_recording_clear(rec);
    free(rec->commands);
    free(rec->arena);
    memset(rec, 0, sizeof *rec);
}

static const char *command_name(cpu_ze_command_kind_t kind)
{
    switch (kind) {
    case CPU_ZE_CMD_LAUNCH:
        return "kernel launch";
    case CPU_ZE_CMD_COPY:
        return "memory copy";
    case CPU_ZE_CMD_FILL:
        return "memory fill";
    case CPU_ZE_CMD_BARRIER:
        return "barrier";
    case CPU_ZE_CMD_EVENT_RESET:
        return "event reset";
    case CPU_ZE_CMD_TIMESTAMP:
        return "timestamp";
    case CPU_ZE_CMD_QUERY_TIMESTAMPS:
        return "kernel timestamp query";
    }
    return "command";
}

static bool byte_uniform(const uint8_t *pattern, size_t size)
{
    for (size_t i = 1; i < size; i++)
        if (pattern[i] != pattern[0])
            return false;
    return true;
}

/* Repeats the pattern over dst by doubling the filled prefix with memcpy
 * (copies of at most 256 KiB, which stay in cache): memcpy speed. */
static void host_fill(uint8_t *dst, size_t size, const uint8_t *pattern, size_t pattern_size)
{
    const size_t max_copy = 256u << 10;
    size_t filled = size < pattern_size ? size : pattern_size;
    memcpy(dst, pattern, filled);
    while (filled < size) {
        size_t n = filled;
        if (n > max_copy)
            n = max_copy / pattern_size * pattern_size;
        if (n > size - filled)
            n = size - filled;
        memcpy(dst + filled, dst, n);
        filled += n;
    }
}

/*
 * Fills with a byte-uniform pattern (zeroing, the common case) are the
 * engine's memset, enqueued. The engine fills other patterns at well under
 * 1 GB/s (measured: 64 MiB in 65-250 ms), so those drain the queue and fill
 * on this thread at memcpy speed: USM of a CPU device is host memory.
 */
static cl_int enqueue_fill(cl_command_queue queue, const cpu_ze_command_t *cmd,
                           const uint8_t *pattern, bool *pending)
{
    size_t size = cmd->u.fill.size, pattern_size = cmd->u.fill.pattern_size;
    uint8_t *dst = cmd->u.fill.dst;
    cl_int err = CL_SUCCESS;
    if (byte_uniform(pattern, pattern_size)) {
        *pending = true;
        return cpu_ze.engine.enqueue_mem_fill(queue, dst, pattern, 1, size, 0, NULL, NULL);
    }
    if (*pending)
        err = clFinish(queue);
    *pending = false;
    host_fill(dst, size, pattern, pattern_size);
    return err;
}

/* Copies each queried event's timestamps to its offset in the
 * destination (which may be unaligned). */
static void write_kernel_timestamps(const cpu_ze_recording_t *rec, const cpu_ze_command_t *cmd)
{
    struct cpu_ze_event *const *events =
            (struct cpu_ze_event *const *)(const void *)(rec->arena + cmd->u.query.events_offset);
    const size_t *offsets =
            (const size_t *)(const void *)(rec->arena + cmd->u.query.offsets_offset);
    for (uint32_t i = 0; i < cmd->u.query.num_events; i++) {
        ze_kernel_timestamp_result_t result;
        cpu_ze_event_timestamps(events[i], &result);
        memcpy(cmd->u.query.dst + offsets[i], &result, sizeof result);
    }
}

ze_result_t cpu_ze_replay(const cpu_ze_recording_t *rec, cl_command_queue queue)
{
    ze_result_t first_failure = ZE_RESULT_SUCCESS;
    bool pending = false; /* enqueued work not known to be finished */

    for (size_t i = 0; i < rec->count; i++) {
        const cpu_ze_command_t *cmd = &rec->commands[i];
        struct cpu_ze_event *const *waits =
                cmd->num_waits ? (struct cpu_ze_event *const *)(rec->arena + cmd->waits_offset)
                               : NULL;
        for (uint32_t w = 0; w < cmd->num_waits; w++) {
            if (cpu_ze_flag_wait(&waits[w]->signalled, 0) == ZE_RESULT_SUCCESS)
                continue;
            if (pending)
                clFlush(queue); /* let earlier work run while we block */
            cpu_ze_flag_wait(&waits[w]->signalled, UINT64_MAX);
        }

        cl_int err = CL_SUCCESS;
        bool stamped = cmd->signal != NULL && cpu_ze_event_has_timestamps(cmd->signal);
        if (stamped && pending) { /* the start stamp must not include earlier work */
            err = clFinish(queue);
            pending = false;
        }
        uint64_t start_ns = stamped ? cpu_ze_now_ns() : 0;

        switch (cmd->kind) {
        case CPU_ZE_CMD_LAUNCH: {
            const uint32_t *groups = cmd->u.launch.groups;
            if (groups[0] == 0 || groups[1] == 0 || groups[2] == 0)
                break; /* nothing to run */
            err = cpu_ze_kernel_enqueue(cmd->u.launch.kernel, queue,
                                        rec->arena + cmd->u.launch.values_offset, groups,
                                        cmd->u.launch.group_size);
            pending = true;
            break;
        }
        case CPU_ZE_CMD_COPY:
            if (cmd->u.copy.size > 0)
                err = cpu_ze.engine.enqueue_memcpy(queue, CL_FALSE, cmd->u.copy.dst,
                                                   cmd->u.copy.src, cmd->u.copy.size, 0, NULL,
                                                   NULL);
            pending = true;
            break;
        case CPU_ZE_CMD_FILL:
            if (cmd->u.fill.size > 0)
                err = enqueue_fill(queue, cmd, rec->arena + cmd->u.fill.pattern_offset, &pending);
            break;
        case CPU_ZE_CMD_BARRIER:
            break; /* the queue is in order: only its events matter */
        case CPU_ZE_CMD_EVENT_RESET:
            atomic_store_explicit(&cmd->u.reset->signalled, 0, memory_order_release);
            break;
        case CPU_ZE_CMD_TIMESTAMP:
            if (pending)
                err = clFinish(queue);
            pending = false;
            *cmd->u.timestamp_dst = cpu_ze_now_ns();
            break;
        case CPU_ZE_CMD_QUERY_TIMESTAMPS:
            if (pending) /* earlier commands may still use the destination */
                err = clFinish(queue);
            pending = false;
            write_kernel_timestamps(rec, cmd);
            break;
        }

        if (cmd->signal != NULL) {
            if (pending) {
                cl_int finish_err = clFinish(queue);
                if (err == CL_SUCCESS)
                    err = finish_err;
                pending = false;
            }
            /* Without kernel timestamps, the signal's time is both. */
            cmd->signal->end_ns = cpu_ze_now_ns();
            cmd->signal->start_ns = stamped ? start_ns : cmd->signal->end_ns;
            cpu_ze_flag_signal(&cmd->signal->signalled);
        }
        if (err != CL_SUCCESS) {
            /* On a worker nobody is waiting for this call: say it now (the
             * result still reaches zeCommandQueueSynchronize). */
            fprintf(stderr, "ze_cpu: %s failed: %s\n", command_name(cmd->kind),
                    cpu_ze_cl_error_name(err));
            if (first_failure == ZE_RESULT_SUCCESS)
                first_failure = ZE_RESULT_ERROR_UNKNOWN;
        }
    }
    if (pending) {
        cl_int err = clFinish(queue);
        if (err != CL_SUCCESS && first_failure == ZE_RESULT_SUCCESS) {
            fprintf(stderr, "ze_cpu: clFinish failed: %s\n", cpu_ze_cl_error_name(err));
            first_failure = ZE_RESULT_ERROR_UNKNOWN;
        }
    }
    return first_failure;
}
