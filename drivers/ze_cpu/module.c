/*
 * module.c - zeModuleCreate from SPIR-V: reflect the module (kernels,
 * parameter kinds, constant sizes), create the OpenCL program from the IL,
 * apply ze_module_constants_t as specialization constants, translate the
 * build flags, build. From a native binary (native_binary.h): check the
 * container, take the reflection it carries, load the OpenCL program
 * binary. Build logs are standalone objects that own a copy of the text.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "native_binary.h"
#include "ze_cpu.h"

/* A growable NUL-terminated string; on allocation failure it keeps what it
 * had (a log is best effort). */
typedef struct text {
    char *s;
    size_t len, cap;
} text_t;

static void text_append(text_t *t, const char *format, ...) __attribute__((format(printf, 2, 3)));

static void text_append(text_t *t, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    int n = vsnprintf(NULL, 0, format, ap);
    va_end(ap);
    if (n <= 0)
        return;
    if (t->len + (size_t)n + 1 > t->cap) {
        size_t cap = (t->len + (size_t)n + 1) * 2;
        char *grown = realloc(t->s, cap);
        if (grown == NULL)
            return;
        t->s = grown;
        t->cap = cap;
    }
    va_start(ap, format);
    vsnprintf(t->s + t->len, t->cap - t->len, format, ap);
    va_end(ap);
    t->len += (size_t)n;
}

/* Hands the text to a new build log object (or frees it if the caller did
 * not ask for one). */
static ze_result_t make_build_log(text_t *log, ze_module_build_log_handle_t *phBuildLog)
{
    if (phBuildLog == NULL) {
        free(log->s);
        return ZE_RESULT_SUCCESS;
    }
    struct cpu_ze_build_log *b = calloc(1, sizeof *b);
    ze_result_t result = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    if (b != NULL && (log->s != NULL || (log->s = calloc(1, 1)) != NULL)) {
        b->text = log->s;
        result = cpu_ze_handle_publish(b, CPU_ZE_KIND_LOG);
    }
    if (result != ZE_RESULT_SUCCESS) {
        free(b);
        free(log->s);
        *phBuildLog = NULL;
        return result;
    }
    *phBuildLog = (ze_module_build_log_handle_t)b;
    return ZE_RESULT_SUCCESS;
}

/*
 * Level Zero build flags -> OpenCL options. -ze-opt-disable becomes
 * -cl-opt-disable; every other -ze-* flag has no meaning on a CPU (register
 * file size, >4 GiB buffers: addressing is 64-bit anyway) and is ignored
 * with a note in the log; anything else goes to OpenCL unchanged.
 */
static char *translate_flags(const char *flags, text_t *log)
{
    size_t cap = (flags ? strlen(flags) : 0) + 64;
    char *out = malloc(cap);
    if (out == NULL)
        return NULL;
    out[0] = '\0';
    size_t len = 0;
    for (const char *p = flags ? flags : ""; *p != '\0';) {
        while (*p == ' ' || *p == '\t' || *p == '\n')
            p++;
        size_t n = strcspn(p, " \t\n");
        if (n == 0)
            break;
        const char *mapped = NULL;
        size_t mapped_len = n;
        if (n == strlen("-ze-opt-disable") && strncmp(p, "-ze-opt-disable", n) == 0) {
            mapped = "-cl-opt-disable";
            mapped_len = strlen(mapped);
        } else if (strncmp(p, "-ze-", 4) == 0) {
            text_append(log, "ze_cpu: build flag %.*s ignored (no meaning on a CPU)\n", (int)n, p);
        } else {
            mapped = p;
        }
        if (mapped != NULL && len + mapped_len + 2 <= cap) {
            memcpy(out + len, mapped, mapped_len);
            len += mapped_len;
            out[len++] = ' ';
            out[len] = '\0';
        }
        p += n;
    }
    return out;
}

/* Applies the caller's constants; each SpecId must exist in the module
 * (as Intel's GPU driver requires), its size comes from the SPIR-V. */
static ze_result_t apply_constants(cl_program program, const spirv_reflection_t *reflection,
                                   const ze_module_constants_t *constants, text_t *log)
{
    for (uint32_t i = 0; constants != NULL && i < constants->numConstants; i++) {
        uint32_t id = constants->pConstantIds[i];
        const spirv_spec_constant_t *c = spirv_find_spec_constant(reflection, id);
        if (c == NULL) {
            text_append(log, "ze_cpu: specialization constant %u is not in the module\n", id);
            return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
        }
        if (constants->pConstantValues[i] == NULL) {
            text_append(log, "ze_cpu: value of specialization constant %u is NULL\n", id);
            return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
        }
        cl_int err = clSetProgramSpecializationConstant(program, id, c->size,
                                                        constants->pConstantValues[i]);
        if (err != CL_SUCCESS) {
            text_append(log, "ze_cpu: clSetProgramSpecializationConstant(%u, %u bytes): %s\n", id,
                        c->size, cpu_ze_cl_error_name(err));
            return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
        }
    }
    return ZE_RESULT_SUCCESS;
}

static void append_cl_build_log(cl_program program, text_t *log)
{
    size_t size = 0;
    if (clGetProgramBuildInfo(program, cpu_ze.engine.device, CL_PROGRAM_BUILD_LOG, 0, NULL,
                              &size) != CL_SUCCESS ||
        size <= 1)
        return;
    char *cl_log = malloc(size);
    if (cl_log == NULL)
        return;
    if (clGetProgramBuildInfo(program, cpu_ze.engine.device, CL_PROGRAM_BUILD_LOG, size, cl_log,
                              NULL) == CL_SUCCESS) {
        cl_log[size - 1] = '\0';
        text_append(log, "%s", cl_log);
    }
    free(cl_log);
}

/* A native binary (native_binary.h): the container is checked before
 * OpenCL sees the program binary. Specialization constants and build flags
 * are ignored: the binary was built with them (the Level Zero
 * specification makes constants SPIR-V only). A binary the driver or the
 * engine refuses is ZE_RESULT_ERROR_INVALID_NATIVE_BINARY: the caller
 * rebuilds from SPIR-V. */
static ze_result_t load_native(struct cpu_ze_context *context, const ze_module_desc_t *desc,
                               struct cpu_ze_module *module, text_t *log)
{
    char why[512] = "";
    const uint8_t *binary = NULL;
    size_t binary_size = 0;
    ze_result_t result = cpu_ze_native_unpack(desc->pInputModule, desc->inputSize,
                                              &module->reflection, &binary, &binary_size, why,
                                              sizeof why);
    if (result != ZE_RESULT_SUCCESS) {
        text_append(log, "ze_cpu: native binary refused: %s\n", why);
        return result;
    }
    cl_int err, binary_status = CL_SUCCESS;
    module->program = clCreateProgramWithBinary(context->cl, 1, &cpu_ze.engine.device,
                                                &binary_size, &binary, &binary_status, &err);
    if (module->program == NULL) {
        text_append(log, "ze_cpu: clCreateProgramWithBinary: %s (binary status %s)\n",
                    cpu_ze_cl_error_name(err), cpu_ze_cl_error_name(binary_status));
        return err == CL_OUT_OF_HOST_MEMORY ? ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY
                                            : ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
    }
    err = clBuildProgram(module->program, 1, &cpu_ze.engine.device, NULL, NULL, NULL);
    append_cl_build_log(module->program, log);
    if (err != CL_SUCCESS) {
        text_append(log, "ze_cpu: clBuildProgram of the native binary: %s\n",
                    cpu_ze_cl_error_name(err));
        return ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
    }
    return ZE_RESULT_SUCCESS;
}

/* Everything but argument validation: returns the module (program and
 * reflection; no context, no reference) or a failure with the reason in
 * log. */
static ze_result_t build_module(struct cpu_ze_context *context, const ze_module_desc_t *desc,
                                struct cpu_ze_module **out, text_t *log)
{
    ze_result_t result = ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
    uint32_t *words = NULL;
    char *options = NULL;
    struct cpu_ze_module *module = calloc(1, sizeof *module);
    char why[256];
    cl_int err;

    if (module == NULL) {
        result = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        goto fail;
    }
    if (desc->format == ZE_MODULE_FORMAT_NATIVE) {
        result = load_native(context, desc, module, log);
        if (result != ZE_RESULT_SUCCESS)
            goto fail;
        *out = module;
        return ZE_RESULT_SUCCESS;
    }
    if (desc->inputSize % 4 != 0) {
        text_append(log, "ze_cpu: SPIR-V size %zu is not a multiple of 4\n", desc->inputSize);
        goto fail;
    }
    /* A word-aligned copy: the caller's bytes may be unaligned. */
    words = malloc(desc->inputSize);
    if (words == NULL) {
        result = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        goto fail;
    }
    memcpy(words, desc->pInputModule, desc->inputSize);
    if (spirv_reflect(words, desc->inputSize / 4, &module->reflection, why, sizeof why) != 0) {
        text_append(log, "ze_cpu: invalid SPIR-V: %s\n", why);
        goto fail;
    }

    module->program = clCreateProgramWithIL(context->cl, words, desc->inputSize, &err);
    if (module->program == NULL) {
        text_append(log, "ze_cpu: clCreateProgramWithIL: %s\n", cpu_ze_cl_error_name(err));
        goto fail;
    }
    result = apply_constants(module->program, module->reflection, desc->pConstants, log);
    if (result != ZE_RESULT_SUCCESS)
        goto fail;

    options = translate_flags(desc->pBuildFlags, log);
    if (options == NULL) {
        result = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        goto fail;
    }
    err = clBuildProgram(module->program, 1, &cpu_ze.engine.device, options, NULL, NULL);
    append_cl_build_log(module->program, log);
    if (err != CL_SUCCESS) {
        text_append(log, "ze_cpu: clBuildProgram(\"%s\"): %s\n", options,
                    cpu_ze_cl_error_name(err));
        result = ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
        goto fail;
    }
    free(options);
    free(words);
    *out = module;
    return ZE_RESULT_SUCCESS;

fail:
    free(options);
    free(words);
    if (module != NULL) {
        if (module->program != NULL)
            clReleaseProgram(module->program);
        spirv_reflection_free(module->reflection);
        free(module);
    }
    return result;
}

CPU_ZE_ENTRY(zeModuleCreate, ze_context_handle_t hContext, ze_device_handle_t hDevice,
             const ze_module_desc_t *desc, ze_module_handle_t *phModule,
             ze_module_build_log_handle_t *phBuildLog)
{
    if (phBuildLog != NULL)
        *phBuildLog = NULL;
    CPU_ZE_CHECK_HANDLE(hContext, CPU_ZE_KIND_CONTEXT);
    CPU_ZE_CHECK_DEVICE(hDevice);
    CPU_ZE_CHECK_CREATE_DESC(desc, ZE_STRUCTURE_TYPE_MODULE_DESC, phModule);
    if (desc->format != ZE_MODULE_FORMAT_IL_SPIRV && desc->format != ZE_MODULE_FORMAT_NATIVE)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_ENUMERATION, "zeModuleCreate: format = %d",
                           (int)desc->format);
    CPU_ZE_CHECK_POINTER(desc->pInputModule);
    if (desc->inputSize == 0)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_SIZE, "zeModuleCreate: inputSize = 0");
    const ze_module_constants_t *constants = desc->pConstants;
    if (constants != NULL && constants->numConstants > 0 &&
        (constants->pConstantIds == NULL || constants->pConstantValues == NULL))
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_NULL_POINTER,
                           "zeModuleCreate: %u constants without ids or values",
                           constants->numConstants);

    struct cpu_ze_context *context = (struct cpu_ze_context *)hContext;
    struct cpu_ze_module *module = NULL;
    text_t log = {0};
    ze_result_t result = build_module(context, desc, &module, &log);
    if (result == ZE_RESULT_SUCCESS) {
        /* Intel's driver leaves the log of a successful build empty, and
         * programs check that: what the engine and the driver had to say
         * (ignored -ze-* flags) goes to ZE_CPU_DEBUG instead. */
        if (log.len > 0) {
            if (strspn(log.s, " \t\r\n") < log.len)
                cpu_ze_note("zeModuleCreate: log of a successful build:\n%s", log.s);
            log.s[0] = '\0';
            log.len = 0;
        }
        module->context = context;
        cpu_ze_context_retain(context);
        atomic_init(&module->refs, 1);
        result = cpu_ze_handle_publish(module, CPU_ZE_KIND_MODULE);
        if (result != ZE_RESULT_SUCCESS) {
            cpu_ze_module_release(module);
            module = NULL;
        }
    }
    if (result != ZE_RESULT_SUCCESS) {
        if (log.len == 0)
            text_append(&log, "ze_cpu: module creation failed (result 0x%x)\n", (unsigned)result);
        cpu_ze_fail(result, "zeModuleCreate: %s", log.s ? log.s : "");
    }
    ze_result_t log_result = make_build_log(&log, phBuildLog);
    if (result == ZE_RESULT_SUCCESS && log_result != ZE_RESULT_SUCCESS) {
        cpu_ze_handle_retire(module, CPU_ZE_KIND_MODULE);
        cpu_ze_module_release(module);
        return log_result;
    }
    if (result != ZE_RESULT_SUCCESS) {
        *phModule = NULL;
        return result;
    }
    *phModule = (ze_module_handle_t)module;
    return ZE_RESULT_SUCCESS;
}

void cpu_ze_module_release(struct cpu_ze_module *module)
{
    if (atomic_fetch_sub_explicit(&module->refs, 1, memory_order_acq_rel) != 1)
        return;
    struct cpu_ze_context *context = module->context;
    clReleaseProgram(module->program);
    spirv_reflection_free(module->reflection);
    free(module);
    cpu_ze_context_release(context);
}

/* Always succeeds on a live handle: kernels created from the module, and
 * launches of them recorded in command lists, keep the program until they
 * are destroyed (programs destroy modules before kernels, and before
 * command lists that still record launches). */
CPU_ZE_ENTRY(zeModuleDestroy, ze_module_handle_t hModule)
{
    CPU_ZE_CHECK_HANDLE(hModule, CPU_ZE_KIND_MODULE);
    CPU_ZE_RETIRE_HANDLE(hModule, CPU_ZE_KIND_MODULE);
    struct cpu_ze_module *module = (struct cpu_ze_module *)hModule;
    int kernels = atomic_load(&module->refs) - 1;
    if (kernels > 0)
        cpu_ze_note("zeModuleDestroy: %d kernel objects of the module are alive; the program "
                    "lives until they are destroyed",
                    kernels);
    cpu_ze_module_release(module);
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeModuleGetKernelNames, ze_module_handle_t hModule, uint32_t *pCount,
             const char **pNames)
{
    CPU_ZE_CHECK_HANDLE(hModule, CPU_ZE_KIND_MODULE);
    CPU_ZE_CHECK_POINTER(pCount);
    const spirv_reflection_t *r = ((struct cpu_ze_module *)hModule)->reflection;
    if (*pCount == 0 || pNames == NULL) {
        *pCount = r->num_kernels;
        return ZE_RESULT_SUCCESS;
    }
    if (*pCount > r->num_kernels)
        *pCount = r->num_kernels;
    for (uint32_t i = 0; i < *pCount; i++)
        pNames[i] = r->kernels[i].name;
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeModuleGetProperties, ze_module_handle_t hModule,
             ze_module_properties_t *pModuleProperties)
{
    CPU_ZE_CHECK_HANDLE(hModule, CPU_ZE_KIND_MODULE);
    CPU_ZE_CHECK_POINTER(pModuleProperties);
    CPU_ZE_CHECK_STYPE(pModuleProperties, ZE_STRUCTURE_TYPE_MODULE_PROPERTIES);
    pModuleProperties->flags = 0; /* no unresolved imports: modules are fully built */
    return ZE_RESULT_SUCCESS;
}

/* Packs the container anew on each call (a size query, then the copy):
 * nothing is kept in the module, so the call needs no lock. With
 * pModuleNativeBinary set, *pSize must hold at least the binary's size. */
CPU_ZE_ENTRY(zeModuleGetNativeBinary, ze_module_handle_t hModule, size_t *pSize,
             uint8_t *pModuleNativeBinary)
{
    CPU_ZE_CHECK_HANDLE(hModule, CPU_ZE_KIND_MODULE);
    CPU_ZE_CHECK_POINTER(pSize);
    const struct cpu_ze_module *module = (const struct cpu_ze_module *)hModule;
    uint8_t *packed = NULL;
    size_t size = 0;
    ze_result_t result = cpu_ze_native_pack(module->program, module->reflection, &packed, &size);
    if (result != ZE_RESULT_SUCCESS)
        return result;
    if (pModuleNativeBinary != NULL) {
        if (*pSize < size) {
            free(packed);
            return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_SIZE,
                               "zeModuleGetNativeBinary: *pSize = %zu, the binary has %zu bytes",
                               *pSize, size);
        }
        memcpy(pModuleNativeBinary, packed, size);
    }
    *pSize = size;
    free(packed);
    return ZE_RESULT_SUCCESS;
}

CPU_ZE_ENTRY(zeModuleBuildLogDestroy, ze_module_build_log_handle_t hModuleBuildLog)
{
    CPU_ZE_CHECK_HANDLE(hModuleBuildLog, CPU_ZE_KIND_LOG);
    CPU_ZE_RETIRE_HANDLE(hModuleBuildLog, CPU_ZE_KIND_LOG);
    struct cpu_ze_build_log *log = (struct cpu_ze_build_log *)hModuleBuildLog;
    free(log->text);
    free(log);
    return ZE_RESULT_SUCCESS;
}

/* With pBuildLog NULL, *pSize receives the size including the NUL;
 * otherwise up to *pSize bytes are copied, always NUL-terminated. */
CPU_ZE_ENTRY(zeModuleBuildLogGetString, ze_module_build_log_handle_t hModuleBuildLog, size_t *pSize,
             char *pBuildLog)
{
    CPU_ZE_CHECK_HANDLE(hModuleBuildLog, CPU_ZE_KIND_LOG);
    CPU_ZE_CHECK_POINTER(pSize);
    const char *text = ((struct cpu_ze_build_log *)hModuleBuildLog)->text;
    size_t needed = strlen(text) + 1;
    if (pBuildLog == NULL) {
        *pSize = needed;
        return ZE_RESULT_SUCCESS;
    }
    if (*pSize == 0)
        return cpu_ze_fail(ZE_RESULT_ERROR_INVALID_SIZE, "zeModuleBuildLogGetString: *pSize = 0");
    size_t n = *pSize < needed ? *pSize : needed;
    memcpy(pBuildLog, text, n - 1);
    pBuildLog[n - 1] = '\0';
    *pSize = n;
    return ZE_RESULT_SUCCESS;
}
