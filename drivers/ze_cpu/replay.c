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

void cpu_ze_recording_clear(cpu_ze_recording_t *rec)
{
    for (size_t i = 0; i < rec->count; i++)
        if (rec->commands[i].kind == CPU_ZE_CMD_LAUNCH)
            cpu_ze_kernel_release(rec->commands[i].u.launch.kernel);
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
        }

        if (cmd->signal != NULL) {
            if (pending) {
                cl_int finish_err = clFinish(queue);
                if (err == CL_SUCCESS)
                    err = finish_err;
                pending = false;
            }
            if (stamped) {
                cmd->signal->start_ns = start_ns;
                cmd->signal->end_ns = cpu_ze_now_ns();
            }
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
