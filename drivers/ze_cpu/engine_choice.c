/*
 * engine_choice.c - which OpenCL implementation the driver runs on, decided
 * once, before the driver's first OpenCL call.
 *
 * In order:
 *   1. ZE_CPU_OPENCL_ENGINE: the engine library itself, or a directory
 *      holding libintelocl.so or lib/libintelocl.so (the prefix that
 *      tools/bootstrap or a wheel installs); "system" means step 4. A value
 *      that names no library makes zeInit fail, with a line on stderr.
 *   2. OCL_ICD_VENDORS, when the user set it: left alone.
 *   3. The library configure found (ZE_CPU_DEFAULT_ENGINE), if it still
 *      exists: an installed driver keeps working after the build tree is gone.
 *   4. The system's ICDs (/etc/OpenCL/vendors).
 * Steps 1 and 3 name a library, which the driver opens itself (engine.c):
 * the ICD loader reads OCL_ICD_VENDORS once per process, at its first call,
 * and another library may have made that call already (Open MPI's hwloc
 * does, in MPI_Init). They also set OCL_ICD_VENDORS to the library's
 * absolute path, so that an ICD loader that has not read it yet loads the
 * same file rather than a second engine. Steps 2 and 4 take the platforms
 * the ICD loader lists.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "ze_cpu.h"

#define ENGINE_LIBRARY "libintelocl.so"

/* True if path is an existing regular file (or a link to one). */
static bool is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The engine library that path names, as an absolute path in out (size
 * PATH_MAX): path itself if it is a file, else path/libintelocl.so, else
 * path/lib/libintelocl.so. False if none exists. */
static bool find_engine_library(const char *path, char *out)
{
    static const char *const under[] = {"", "/" ENGINE_LIBRARY, "/lib/" ENGINE_LIBRARY};
    for (size_t i = 0; i < sizeof under / sizeof under[0]; i++) {
        char candidate[PATH_MAX];
        int n = snprintf(candidate, sizeof candidate, "%s%s", path, under[i]);
        if (n > 0 && (size_t)n < sizeof candidate && is_file(candidate) &&
            realpath(candidate, out) != NULL)
            return true;
    }
    return false;
}

/* Chooses library (already in out): points the ICD loader at it too, the
 * value overriding any earlier one. */
static ze_result_t use_library(const char *library, const char *why)
{
    if (setenv("OCL_ICD_VENDORS", library, 1) != 0)
        return cpu_ze_fail(ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY, "setenv(OCL_ICD_VENDORS) failed");
    if (cpu_ze_debug_enabled())
        fprintf(stderr, "ze_cpu: OpenCL engine %s (%s)\n", library, why);
    return ZE_RESULT_SUCCESS;
}

ze_result_t cpu_ze_engine_choose(char *library)
{
    library[0] = '\0';
    const char *named = getenv("ZE_CPU_OPENCL_ENGINE");
    bool system = named != NULL && strcmp(named, "system") == 0;
    if (named != NULL && named[0] != '\0' && !system) {
        if (!find_engine_library(named, library)) {
            /* The loader hides zeInit's result behind "no driver": say why. */
            fprintf(stderr,
                    "ze_cpu: ZE_CPU_OPENCL_ENGINE=%s names no OpenCL engine (give the library, "
                    "or a directory holding " ENGINE_LIBRARY " or lib/" ENGINE_LIBRARY ")\n",
                    named);
            return ZE_RESULT_ERROR_UNINITIALIZED;
        }
        return use_library(library, "ZE_CPU_OPENCL_ENGINE");
    }
    const char *vendors = getenv("OCL_ICD_VENDORS");
    if (vendors == NULL && !system && ZE_CPU_DEFAULT_ENGINE[0] != '\0') {
        if (find_engine_library(ZE_CPU_DEFAULT_ENGINE, library))
            return use_library(library, "the configured default");
        library[0] = '\0';
        if (cpu_ze_debug_enabled())
            fprintf(stderr, "ze_cpu: the configured engine %s is gone\n", ZE_CPU_DEFAULT_ENGINE);
    }
    if (cpu_ze_debug_enabled())
        fprintf(stderr, "ze_cpu: OpenCL engine from %s\n",
                vendors ? "OCL_ICD_VENDORS" : "the system's ICDs");
    return ZE_RESULT_SUCCESS;
}
