/*
 * engine.c - finds the OpenCL platform the driver runs on and reads its
 * device's facts once, so property queries never call OpenCL again.
 *
 * The platforms come from the engine library the driver opens itself, or
 * from the ICD loader (engine_choice.c). Either way they are ICD objects:
 * each starts with its implementation's dispatch table (cl_khr_icd), and
 * the ICD loader's entry points, which the rest of the driver calls, send
 * every call to the table of the object it is about. So a platform the
 * loader never listed works as well, except where the loader looks the
 * platform up in its own list: clGetPlatformIDs, and a CL_CONTEXT_PLATFORM
 * property (context.c passes none).
 */
#include <dlfcn.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ze_cpu.h"

/* cl_ext_float_atomics, absent from Debian 12's OpenCL headers. */
#ifndef CL_DEVICE_SINGLE_FP_ATOMIC_CAPABILITIES_EXT
#define CL_DEVICE_SINGLE_FP_ATOMIC_CAPABILITIES_EXT 0x4231
#define CL_DEVICE_DOUBLE_FP_ATOMIC_CAPABILITIES_EXT 0x4232
#define CL_DEVICE_HALF_FP_ATOMIC_CAPABILITIES_EXT 0x4233
#endif

static bool platform_has_cpu(cl_platform_id platform, cl_device_id *device)
{
    cl_uint count = 0;
    return clGetDeviceIDs(platform, CL_DEVICE_TYPE_CPU, 1, device, &count) == CL_SUCCESS &&
           count > 0;
}

static bool has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = strstr(list, word); p != NULL; p = strstr(p + 1, word)) {
        bool starts = p == list || p[-1] == ' ';
        bool ends = p[n] == '\0' || p[n] == ' ';
        if (starts && ends)
            return true;
    }
    return false;
}

/* The newest "SPIR-V_M.N" in CL_DEVICE_IL_VERSION, as ZE_MAKE_VERSION, or 0. */
static uint32_t newest_spirv(const char *il_versions)
{
    uint32_t best = 0;
    for (const char *p = strstr(il_versions, "SPIR-V_"); p != NULL; p = strstr(p + 1, "SPIR-V_")) {
        unsigned major = 0, minor = 0;
        if (sscanf(p, "SPIR-V_%u.%u", &major, &minor) == 2 && ZE_MAKE_VERSION(major, minor) > best)
            best = ZE_MAKE_VERSION(major, minor);
    }
    return best;
}

static void *extension_function(cpu_ze_engine_t *engine, const char *name)
{
    return clGetExtensionFunctionAddressForPlatform(engine->platform, name);
}

/* A device query answered straight into a member of the engine, of the
 * member's size (its type is the query's). */
typedef struct {
    cl_device_info param;
    size_t offset;
    size_t size;
} device_query_t;

#define DEVICE_QUERY(param, member)                                                                \
    {param, offsetof(cpu_ze_engine_t, member), sizeof(((cpu_ze_engine_t *)0)->member)}
#define COUNT_OF(array) (sizeof(array) / sizeof((array)[0]))

static const device_query_t device_queries[] = {
        DEVICE_QUERY(CL_DEVICE_VENDOR_ID, vendor_id),
        DEVICE_QUERY(CL_DEVICE_MAX_COMPUTE_UNITS, compute_units),
        DEVICE_QUERY(CL_DEVICE_MAX_CLOCK_FREQUENCY, clock_mhz),
        DEVICE_QUERY(CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, native_vector_width_float),
        DEVICE_QUERY(CL_DEVICE_ADDRESS_BITS, address_bits),
        DEVICE_QUERY(CL_DEVICE_GLOBAL_MEM_SIZE, global_mem_size),
        DEVICE_QUERY(CL_DEVICE_MAX_MEM_ALLOC_SIZE, max_mem_alloc_size),
        DEVICE_QUERY(CL_DEVICE_LOCAL_MEM_SIZE, local_mem_size),
        DEVICE_QUERY(CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, global_mem_cache_size),
        DEVICE_QUERY(CL_DEVICE_MAX_WORK_GROUP_SIZE, max_work_group_size),
        DEVICE_QUERY(CL_DEVICE_MAX_WORK_ITEM_SIZES, max_work_item_sizes),
        DEVICE_QUERY(CL_DEVICE_MAX_PARAMETER_SIZE, max_parameter_size),
        DEVICE_QUERY(CL_DEVICE_PRINTF_BUFFER_SIZE, printf_buffer_size),
        DEVICE_QUERY(CL_DEVICE_HALF_FP_CONFIG, half_fp_config),
        DEVICE_QUERY(CL_DEVICE_SINGLE_FP_CONFIG, single_fp_config),
        DEVICE_QUERY(CL_DEVICE_DOUBLE_FP_CONFIG, double_fp_config),
        DEVICE_QUERY(CL_DEVICE_HOST_MEM_CAPABILITIES_INTEL, usm_host_caps),
        DEVICE_QUERY(CL_DEVICE_DEVICE_MEM_CAPABILITIES_INTEL, usm_device_caps),
        DEVICE_QUERY(CL_DEVICE_SINGLE_DEVICE_SHARED_MEM_CAPABILITIES_INTEL, usm_shared_caps),
        DEVICE_QUERY(CL_DEVICE_CROSS_DEVICE_SHARED_MEM_CAPABILITIES_INTEL, usm_cross_caps),
        DEVICE_QUERY(CL_DEVICE_SHARED_SYSTEM_MEM_CAPABILITIES_INTEL, usm_system_caps),
};

/* With cl_ext_float_atomics. */
static const device_query_t float_atomic_queries[] = {
        DEVICE_QUERY(CL_DEVICE_HALF_FP_ATOMIC_CAPABILITIES_EXT, half_fp_atomics),
        DEVICE_QUERY(CL_DEVICE_SINGLE_FP_ATOMIC_CAPABILITIES_EXT, single_fp_atomics),
        DEVICE_QUERY(CL_DEVICE_DOUBLE_FP_ATOMIC_CAPABILITIES_EXT, double_fp_atomics),
};

/* With cl_khr_device_uuid. */
static const device_query_t uuid_queries[] = {
        DEVICE_QUERY(CL_DEVICE_UUID_KHR, device_uuid),
        DEVICE_QUERY(CL_DRIVER_UUID_KHR, driver_uuid),
};

static void read_device_queries(cpu_ze_engine_t *engine, const device_query_t *queries,
                                size_t count)
{
    for (size_t i = 0; i < count; i++)
        clGetDeviceInfo(engine->device, queries[i].param, queries[i].size,
                        (char *)engine + queries[i].offset, NULL);
}

/* Reads what the driver needs; false (with a reason) if the platform lacks
 * SPIR-V ingestion or Intel USM, which the driver cannot do without. */
static bool read_engine(cpu_ze_engine_t *engine, char *why, size_t why_size)
{
    cl_device_id dev = engine->device;
    char text[4096];

    clGetPlatformInfo(engine->platform, CL_PLATFORM_NAME, sizeof engine->platform_name,
                      engine->platform_name, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof engine->device_name, engine->device_name, NULL);
    clGetDeviceInfo(dev, CL_DRIVER_VERSION, sizeof engine->driver_version, engine->driver_version,
                    NULL);

    text[0] = '\0';
    clGetDeviceInfo(dev, CL_DEVICE_IL_VERSION, sizeof text, text, NULL);
    engine->spirv_version = newest_spirv(text);
    if (engine->spirv_version == 0) {
        snprintf(why, why_size, "device does not accept SPIR-V (CL_DEVICE_IL_VERSION \"%.200s\")",
                 text);
        return false;
    }

    engine->host_mem_alloc =
            (clHostMemAllocINTEL_fn)extension_function(engine, "clHostMemAllocINTEL");
    engine->device_mem_alloc =
            (clDeviceMemAllocINTEL_fn)extension_function(engine, "clDeviceMemAllocINTEL");
    engine->shared_mem_alloc =
            (clSharedMemAllocINTEL_fn)extension_function(engine, "clSharedMemAllocINTEL");
    engine->mem_blocking_free =
            (clMemBlockingFreeINTEL_fn)extension_function(engine, "clMemBlockingFreeINTEL");
    engine->get_mem_alloc_info =
            (clGetMemAllocInfoINTEL_fn)extension_function(engine, "clGetMemAllocInfoINTEL");
    engine->set_kernel_arg_mem_pointer = (clSetKernelArgMemPointerINTEL_fn)extension_function(
            engine, "clSetKernelArgMemPointerINTEL");
    engine->enqueue_mem_fill =
            (clEnqueueMemFillINTEL_fn)extension_function(engine, "clEnqueueMemFillINTEL");
    engine->enqueue_memcpy =
            (clEnqueueMemcpyINTEL_fn)extension_function(engine, "clEnqueueMemcpyINTEL");
    if (!engine->host_mem_alloc || !engine->device_mem_alloc || !engine->shared_mem_alloc ||
        !engine->mem_blocking_free || !engine->get_mem_alloc_info ||
        !engine->set_kernel_arg_mem_pointer || !engine->enqueue_mem_fill ||
        !engine->enqueue_memcpy) {
        snprintf(why, why_size, "platform lacks cl_intel_unified_shared_memory");
        return false;
    }

    read_device_queries(engine, device_queries, COUNT_OF(device_queries));

    size_t sizes[8], bytes = 0;
    if (clGetDeviceInfo(dev, CL_DEVICE_SUB_GROUP_SIZES_INTEL, sizeof sizes, sizes, &bytes) ==
        CL_SUCCESS) {
        engine->num_sub_group_sizes = (uint32_t)(bytes / sizeof(size_t));
        for (uint32_t i = 0; i < engine->num_sub_group_sizes; i++)
            engine->sub_group_sizes[i] = (uint32_t)sizes[i];
    }

    text[0] = '\0';
    clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, sizeof text, text, NULL);
    engine->has_int64_atomics = has_word(text, "cl_khr_int64_base_atomics");
    engine->has_dp4a = has_word(text, "cl_khr_integer_dot_product");
    engine->has_float_atomics = has_word(text, "cl_ext_float_atomics");
    if (engine->has_float_atomics)
        read_device_queries(engine, float_atomic_queries, COUNT_OF(float_atomic_queries));
    if (has_word(text, "cl_khr_device_uuid"))
        read_device_queries(engine, uuid_queries, COUNT_OF(uuid_queries));
    return true;
}

typedef cl_int (*icd_get_platform_ids_fn)(cl_uint, cl_platform_id *, cl_uint *);
typedef void *(*get_extension_function_address_fn)(const char *);

/* The platform lister of the engine library at path, opened as an ICD
 * loader opens one: the library exports clGetExtensionFunctionAddress,
 * which answers clIcdGetPlatformIDsKHR. The library stays loaded. */
static ze_result_t open_library(const char *path, icd_get_platform_ids_fn *get)
{
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL)
        return cpu_ze_fail(ZE_RESULT_ERROR_UNINITIALIZED, "cannot open the OpenCL engine: %s",
                           dlerror());
    get_extension_function_address_fn address = NULL;
    *(void **)&address = dlsym(library, "clGetExtensionFunctionAddress");
    if (address != NULL)
        *(void **)get = address("clIcdGetPlatformIDsKHR");
    if (address == NULL || *get == NULL)
        return cpu_ze_fail(ZE_RESULT_ERROR_UNINITIALIZED,
                           "the OpenCL engine %s is not an ICD (no %s)", path,
                           address ? "clIcdGetPlatformIDsKHR" : "clGetExtensionFunctionAddress");
    return ZE_RESULT_SUCCESS;
}

/* The platforms of the engine library at library (not ""), or the ICD
 * loader's: a malloc'd array in *out, their number in *count. */
static ze_result_t list_platforms(const char *library, cl_platform_id **out, cl_uint *count)
{
    icd_get_platform_ids_fn get = clGetPlatformIDs;
    if (library[0] != '\0') {
        ze_result_t r = open_library(library, &get);
        if (r != ZE_RESULT_SUCCESS)
            return r;
    }
    const char *lister = library[0] ? "clIcdGetPlatformIDsKHR" : "clGetPlatformIDs";
    *count = 0;
    cl_int err = get(0, NULL, count);
    if (err != CL_SUCCESS || *count == 0)
        return cpu_ze_fail(ZE_RESULT_ERROR_UNINITIALIZED,
                           "no OpenCL platform (%s: %s, %s%s)", lister, cpu_ze_cl_error_name(err),
                           library[0] ? "engine " : "OCL_ICD_VENDORS=",
                           library[0]                  ? library
                           : getenv("OCL_ICD_VENDORS") ? getenv("OCL_ICD_VENDORS")
                                                       : "(unset)");
    *out = malloc(*count * sizeof **out);
    if (*out == NULL)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    err = get(*count, *out, count);
    if (err != CL_SUCCESS) {
        free(*out);
        return cpu_ze_fail(ZE_RESULT_ERROR_UNINITIALIZED, "%s: %s", lister,
                           cpu_ze_cl_error_name(err));
    }
    return ZE_RESULT_SUCCESS;
}

ze_result_t cpu_ze_engine_open(cpu_ze_engine_t *engine)
{
    char library[PATH_MAX];
    ze_result_t chosen = cpu_ze_engine_choose(library);
    if (chosen != ZE_RESULT_SUCCESS)
        return chosen;

    cl_platform_id *platforms = NULL;
    cl_uint count = 0;
    ze_result_t listed = list_platforms(library, &platforms, &count);
    if (listed != ZE_RESULT_SUCCESS)
        return listed;

    /* Candidates in order of preference: the requested platform only, or
     * Intel's platforms first, then the rest. */
    const char *wanted = getenv("ZE_CPU_OPENCL_PLATFORM");
    ze_result_t result = ZE_RESULT_ERROR_UNINITIALIZED;
    char why[512] = "no platform with a CPU device";
    for (int pass = 0; pass < 2 && result != ZE_RESULT_SUCCESS; pass++) {
        for (cl_uint i = 0; i < count && result != ZE_RESULT_SUCCESS; i++) {
            char name[256] = "";
            clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
            bool intel = strstr(name, "Intel") != NULL;
            if (wanted != NULL ? (pass > 0 || strstr(name, wanted) == NULL) : (pass == 0) != intel)
                continue;
            memset(engine, 0, sizeof *engine);
            engine->platform = platforms[i];
            if (!platform_has_cpu(platforms[i], &engine->device))
                continue;
            if (read_engine(engine, why, sizeof why))
                result = ZE_RESULT_SUCCESS;
            else
                cpu_ze_fail(ZE_RESULT_ERROR_UNINITIALIZED, "platform \"%s\" skipped: %s", name,
                            why);
        }
    }
    free(platforms);
    if (result != ZE_RESULT_SUCCESS)
        return cpu_ze_fail(result, "no usable OpenCL platform%s%s: %s",
                           wanted ? " matching ZE_CPU_OPENCL_PLATFORM=" : "", wanted ? wanted : "",
                           why);
    if (cpu_ze_debug_enabled())
        fprintf(stderr, "ze_cpu: engine \"%s\", device \"%s\"\n", engine->platform_name,
                engine->device_name);
    return ZE_RESULT_SUCCESS;
}
