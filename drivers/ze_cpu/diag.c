/* diag.c - failure reporting and notes (ZE_CPU_DEBUG), OpenCL error names, the clock. */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "env_flag.h"
#include "ze_cpu.h"

static pthread_once_t debug_once = PTHREAD_ONCE_INIT;
static bool debug_enabled;

static void read_debug_env(void)
{
    debug_enabled = sdpa_env_flag("ZE_CPU_DEBUG", 0);
}

bool cpu_ze_debug_enabled(void)
{
    pthread_once(&debug_once, read_debug_env);
    return debug_enabled;
}

ze_result_t cpu_ze_fail(ze_result_t result, const char *format, ...)
{
    if (cpu_ze_debug_enabled()) {
        va_list ap;
        va_start(ap, format);
        fprintf(stderr, "ze_cpu: ");
        vfprintf(stderr, format, ap);
        fprintf(stderr, " (result 0x%x)\n", (unsigned)result);
        va_end(ap);
    }
    return result;
}

void cpu_ze_note(const char *format, ...)
{
    if (!cpu_ze_debug_enabled())
        return;
    va_list ap;
    va_start(ap, format);
    fprintf(stderr, "ze_cpu: ");
    vfprintf(stderr, format, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

bool cpu_ze_stype_unset(ze_structure_type_t stype, const char *what, const char *caller)
{
    if (stype != 0)
        return false;
    cpu_ze_note("%s: %s->stype is not set (0); accepted", caller, what);
    return true;
}

const char *cpu_ze_cl_error_name(cl_int error)
{
    switch (error) {
#define NAME(e)                                                                                    \
    case e:                                                                                        \
        return #e;
        NAME(CL_SUCCESS)
        NAME(CL_DEVICE_NOT_FOUND)
        NAME(CL_DEVICE_NOT_AVAILABLE)
        NAME(CL_COMPILER_NOT_AVAILABLE)
        NAME(CL_MEM_OBJECT_ALLOCATION_FAILURE)
        NAME(CL_OUT_OF_RESOURCES)
        NAME(CL_OUT_OF_HOST_MEMORY)
        NAME(CL_BUILD_PROGRAM_FAILURE)
        NAME(CL_INVALID_VALUE)
        NAME(CL_INVALID_DEVICE)
        NAME(CL_INVALID_CONTEXT)
        NAME(CL_INVALID_COMMAND_QUEUE)
        NAME(CL_INVALID_MEM_OBJECT)
        NAME(CL_INVALID_BINARY)
        NAME(CL_INVALID_BUILD_OPTIONS)
        NAME(CL_INVALID_PROGRAM)
        NAME(CL_INVALID_PROGRAM_EXECUTABLE)
        NAME(CL_INVALID_KERNEL_NAME)
        NAME(CL_INVALID_KERNEL)
        NAME(CL_INVALID_ARG_INDEX)
        NAME(CL_INVALID_ARG_VALUE)
        NAME(CL_INVALID_ARG_SIZE)
        NAME(CL_INVALID_KERNEL_ARGS)
        NAME(CL_INVALID_WORK_DIMENSION)
        NAME(CL_INVALID_WORK_GROUP_SIZE)
        NAME(CL_INVALID_WORK_ITEM_SIZE)
        NAME(CL_INVALID_GLOBAL_OFFSET)
        NAME(CL_INVALID_EVENT_WAIT_LIST)
        NAME(CL_INVALID_OPERATION)
        NAME(CL_INVALID_BUFFER_SIZE)
        NAME(CL_INVALID_GLOBAL_WORK_SIZE)
        NAME(CL_INVALID_PROPERTY)
        NAME(CL_INVALID_SPEC_ID)
#undef NAME
    default:
        return "an OpenCL error";
    }
}

ze_result_t cpu_ze_result_from_cl(cl_int error)
{
    switch (error) {
    case CL_SUCCESS:
        return ZE_RESULT_SUCCESS;
    case CL_OUT_OF_HOST_MEMORY:
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    case CL_OUT_OF_RESOURCES:
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
        return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
    case CL_INVALID_BUFFER_SIZE:
        return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
    case CL_INVALID_VALUE:
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    default:
        return ZE_RESULT_ERROR_UNKNOWN;
    }
}

uint64_t cpu_ze_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
