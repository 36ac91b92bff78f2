/* native_binary.c - packing and checking the driver's native module binary
 * (the container native_binary.h describes). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "byte_writer.h"
#include "fnv1a.h"
#include "native_binary.h"

static const char native_magic[8] = "ZECPUNB";
#define NATIVE_BYTE_ORDER 0x01020304u
#define NATIVE_HEADER_BYTES 32u

/* Bounds for what a container may declare: far above any real module, low
 * enough that a corrupted count allocates nothing absurd. */
#define NATIVE_MAX_KERNELS 4096u
#define NATIVE_MAX_ARGS 4096u
#define NATIVE_MAX_CONSTANTS 65536u
#define NATIVE_MAX_STRING 4096u

/* FNV-1a 64: detects truncation and stray bytes; the container is read
 * once per module creation, and the cost is small next to loading it. */
static uint64_t checksum(const uint8_t *bytes, size_t size)
{
    return sdpa_fnv1a64(SDPA_FNV1A64_OFFSET, bytes, size);
}

/* The engine that compiled a binary: platform, compiler version, device. */
static int engine_identity(char *out, size_t out_size)
{
    const cpu_ze_engine_t *e = &cpu_ze.engine;
    int n = snprintf(out, out_size, "%s|%s|%s|", e->platform_name, e->driver_version,
                     e->device_name);
    for (size_t i = 0; i < sizeof e->device_uuid && n > 0 && (size_t)n + 2 < out_size; i++)
        n += snprintf(out + n, out_size - (size_t)n, "%02x", e->device_uuid[i]);
    return n;
}

/* --- Writing ------------------------------------------------------------------------ */

static void put_string(sdpa_byte_writer_t *w, const char *s)
{
    size_t len = strlen(s);
    sdpa_byte_put_u32(w, (uint32_t)len);
    sdpa_byte_put(w, s, len);
}

static ze_result_t program_binary(cl_program program, uint8_t **out, size_t *size)
{
    cl_uint devices = 0;
    if (clGetProgramInfo(program, CL_PROGRAM_NUM_DEVICES, sizeof devices, &devices, NULL) !=
                CL_SUCCESS ||
        devices != 1)
        return cpu_ze_fail(ZE_RESULT_ERROR_UNKNOWN,
                           "zeModuleGetNativeBinary: the program has %u devices, not 1", devices);
    size_t bytes = 0;
    cl_int err = clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof bytes, &bytes, NULL);
    if (err != CL_SUCCESS || bytes == 0)
        return cpu_ze_fail(ZE_RESULT_ERROR_UNKNOWN,
                           "zeModuleGetNativeBinary: CL_PROGRAM_BINARY_SIZES: %s, %zu bytes",
                           cpu_ze_cl_error_name(err), bytes);
    uint8_t *binary = malloc(bytes);
    if (binary == NULL)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    err = clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof binary, &binary, NULL);
    if (err != CL_SUCCESS) {
        free(binary);
        return cpu_ze_fail(ZE_RESULT_ERROR_UNKNOWN,
                           "zeModuleGetNativeBinary: CL_PROGRAM_BINARIES: %s",
                           cpu_ze_cl_error_name(err));
    }
    *out = binary;
    *size = bytes;
    return ZE_RESULT_SUCCESS;
}

ze_result_t cpu_ze_native_pack(cl_program program, const spirv_reflection_t *r, uint8_t **out,
                               size_t *size)
{
    uint8_t *binary = NULL;
    size_t binary_size = 0;
    ze_result_t result = program_binary(program, &binary, &binary_size);
    if (result != ZE_RESULT_SUCCESS)
        return result;

    sdpa_byte_writer_t w = {0};
    uint8_t header[NATIVE_HEADER_BYTES] = {0};
    sdpa_byte_put(&w, header, sizeof header); /* filled in below */
    char identity[512];
    engine_identity(identity, sizeof identity);
    put_string(&w, identity);
    sdpa_byte_put_u32(&w, r->version);
    sdpa_byte_put_u32(&w, r->num_kernels);
    for (uint32_t k = 0; k < r->num_kernels; k++) {
        const spirv_kernel_info_t *kernel = &r->kernels[k];
        put_string(&w, kernel->name);
        sdpa_byte_put_u32(&w, kernel->num_args);
        for (uint32_t a = 0; a < kernel->num_args; a++) {
            sdpa_byte_put_u32(&w, (uint32_t)kernel->args[a].kind);
            sdpa_byte_put_u32(&w, kernel->args[a].size);
        }
        for (int d = 0; d < 3; d++)
            sdpa_byte_put_u32(&w, kernel->required_group_size[d]);
        sdpa_byte_put_u32(&w, kernel->required_subgroup_size);
    }
    sdpa_byte_put_u32(&w, r->num_spec_constants);
    for (uint32_t c = 0; c < r->num_spec_constants; c++) {
        sdpa_byte_put_u32(&w, r->spec_constants[c].spec_id);
        sdpa_byte_put_u32(&w, r->spec_constants[c].size);
    }
    sdpa_byte_put_u64(&w, binary_size);
    sdpa_byte_put(&w, binary, binary_size);
    free(binary);
    if (w.failed) {
        free(w.bytes);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }

    uint32_t version = CPU_ZE_NATIVE_VERSION, order = NATIVE_BYTE_ORDER;
    uint64_t payload = w.size - NATIVE_HEADER_BYTES;
    uint64_t sum = checksum(w.bytes + NATIVE_HEADER_BYTES, payload);
    memcpy(w.bytes, native_magic, 8);
    memcpy(w.bytes + 8, &version, 4);
    memcpy(w.bytes + 12, &order, 4);
    memcpy(w.bytes + 16, &payload, 8);
    memcpy(w.bytes + 24, &sum, 8);
    *out = w.bytes;
    *size = w.size;
    return ZE_RESULT_SUCCESS;
}

/* --- Reading ------------------------------------------------------------------------ */

typedef struct reader {
    const uint8_t *at, *end;
    char *why;
    size_t why_size;
    bool failed;
} reader_t;

static void reject(reader_t *r, const char *format, ...) __attribute__((format(printf, 2, 3)));

static void reject(reader_t *r, const char *format, ...)
{
    if (r->failed)
        return;
    r->failed = true;
    va_list ap;
    va_start(ap, format);
    vsnprintf(r->why, r->why_size, format, ap);
    va_end(ap);
}

static const uint8_t *take(reader_t *r, size_t size, const char *what)
{
    if (r->failed)
        return NULL;
    if (size > (size_t)(r->end - r->at)) {
        reject(r, "truncated: %s needs %zu bytes, %zu left", what, size, (size_t)(r->end - r->at));
        return NULL;
    }
    const uint8_t *p = r->at;
    r->at += size;
    return p;
}

/* Copies the next size bytes into value, which stays 0 past the end. */
static void get(reader_t *r, void *value, size_t size, const char *what)
{
    const uint8_t *p = take(r, size, what);
    if (p != NULL)
        memcpy(value, p, size);
}

static uint32_t get_u32(reader_t *r, const char *what)
{
    uint32_t value = 0;
    get(r, &value, sizeof value, what);
    return value;
}

static uint64_t get_u64(reader_t *r, const char *what)
{
    uint64_t value = 0;
    get(r, &value, sizeof value, what);
    return value;
}

/* A string of at most NATIVE_MAX_STRING bytes, returned as a new
 * NUL-terminated copy (NULL after a failure). */
static char *get_string(reader_t *r, const char *what)
{
    uint32_t len = get_u32(r, what);
    if (!r->failed && (len == 0 || len > NATIVE_MAX_STRING)) {
        reject(r, "%s has length %u", what, len);
        return NULL;
    }
    const uint8_t *p = take(r, len, what);
    if (p == NULL)
        return NULL;
    if (memchr(p, '\0', len) != NULL) {
        reject(r, "%s holds a NUL byte", what);
        return NULL;
    }
    char *s = malloc((size_t)len + 1);
    if (s == NULL) {
        reject(r, "out of host memory");
        return NULL;
    }
    memcpy(s, p, len);
    s[len] = '\0';
    return s;
}

static void read_kernel(reader_t *r, spirv_kernel_info_t *kernel)
{
    kernel->name = get_string(r, "a kernel name");
    uint32_t num_args = get_u32(r, "an argument count");
    if (r->failed)
        return;
    if (num_args > NATIVE_MAX_ARGS) {
        reject(r, "kernel %s declares %u arguments", kernel->name, num_args);
        return;
    }
    kernel->args = calloc(num_args ? num_args : 1, sizeof *kernel->args);
    if (kernel->args == NULL) {
        reject(r, "out of host memory");
        return;
    }
    kernel->num_args = num_args;
    for (uint32_t a = 0; a < num_args && !r->failed; a++) {
        uint32_t kind = get_u32(r, "an argument kind"), size = get_u32(r, "an argument size");
        if (!r->failed && (kind > SPIRV_ARG_UNSUPPORTED || size > SPIRV_MAX_VALUE_BYTES))
            reject(r, "kernel %s, argument %u: kind %u, size %u", kernel->name, a, kind, size);
        kernel->args[a].kind = (spirv_arg_kind_t)kind;
        kernel->args[a].size = size;
    }
    for (int d = 0; d < 3; d++)
        kernel->required_group_size[d] = get_u32(r, "a required group size");
    kernel->required_subgroup_size = get_u32(r, "a required sub-group size");
}

/* Reads the reflection part of the payload into a new reflection. */
static spirv_reflection_t *read_reflection(reader_t *r)
{
    spirv_reflection_t *reflection = calloc(1, sizeof *reflection);
    if (reflection == NULL) {
        reject(r, "out of host memory");
        return NULL;
    }
    reflection->version = get_u32(r, "the SPIR-V version");
    uint32_t num_kernels = get_u32(r, "the kernel count");
    if (!r->failed && num_kernels > NATIVE_MAX_KERNELS)
        reject(r, "%u kernels", num_kernels);
    if (!r->failed) {
        reflection->kernels = calloc(num_kernels ? num_kernels : 1, sizeof *reflection->kernels);
        if (reflection->kernels == NULL)
            reject(r, "out of host memory");
        else
            reflection->num_kernels = num_kernels;
    }
    for (uint32_t k = 0; k < reflection->num_kernels && !r->failed; k++)
        read_kernel(r, &reflection->kernels[k]);

    uint32_t num_constants = get_u32(r, "the constant count");
    if (!r->failed && num_constants > NATIVE_MAX_CONSTANTS)
        reject(r, "%u specialization constants", num_constants);
    if (!r->failed) {
        reflection->spec_constants =
                calloc(num_constants ? num_constants : 1, sizeof *reflection->spec_constants);
        if (reflection->spec_constants == NULL)
            reject(r, "out of host memory");
        else
            reflection->num_spec_constants = num_constants;
    }
    for (uint32_t c = 0; c < reflection->num_spec_constants && !r->failed; c++) {
        reflection->spec_constants[c].spec_id = get_u32(r, "a SpecId");
        reflection->spec_constants[c].size = get_u32(r, "a constant size");
    }
    if (r->failed) {
        spirv_reflection_free(reflection);
        return NULL;
    }
    return reflection;
}

ze_result_t cpu_ze_native_unpack(const uint8_t *bytes, size_t size, spirv_reflection_t **reflection,
                                 const uint8_t **binary, size_t *binary_size, char *why,
                                 size_t why_size)
{
    reader_t r = {.at = bytes, .end = bytes + size, .why = why, .why_size = why_size};
    const uint8_t *magic = take(&r, 8, "the magic");
    if (magic != NULL && memcmp(magic, native_magic, 8) != 0)
        reject(&r, "not a ze_cpu native binary (bad magic)");
    uint32_t version = get_u32(&r, "the version");
    uint32_t order = get_u32(&r, "the byte order");
    uint64_t payload = get_u64(&r, "the payload size");
    uint64_t sum = get_u64(&r, "the checksum");
    if (!r.failed && version != CPU_ZE_NATIVE_VERSION)
        reject(&r, "container version %u, this driver reads %u", version, CPU_ZE_NATIVE_VERSION);
    if (!r.failed && order != NATIVE_BYTE_ORDER)
        reject(&r, "written on a machine of another byte order");
    if (!r.failed && payload != (uint64_t)(r.end - r.at))
        reject(&r, "%llu payload bytes declared, %zu present", (unsigned long long)payload,
               (size_t)(r.end - r.at));
    if (!r.failed && checksum(r.at, (size_t)payload) != sum)
        reject(&r, "checksum mismatch: corrupted");

    char *identity = get_string(&r, "the engine identity");
    char current[512];
    engine_identity(current, sizeof current);
    if (identity != NULL && strcmp(identity, current) != 0)
        reject(&r, "compiled by another engine (%.200s), this one is %.200s", identity, current);
    free(identity);

    spirv_reflection_t *reflection_read = r.failed ? NULL : read_reflection(&r);
    uint64_t cl_size = get_u64(&r, "the program binary size");
    const uint8_t *cl_binary = NULL;
    if (!r.failed && (cl_size == 0 || cl_size != (uint64_t)(r.end - r.at)))
        reject(&r, "program binary of %llu bytes, %zu present", (unsigned long long)cl_size,
               (size_t)(r.end - r.at));
    else
        cl_binary = take(&r, (size_t)cl_size, "the program binary");
    if (r.failed) {
        spirv_reflection_free(reflection_read);
        return strcmp(why, "out of host memory") == 0 ? ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY
                                                      : ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
    }
    *reflection = reflection_read;
    *binary = cl_binary;
    *binary_size = (size_t)cl_size;
    return ZE_RESULT_SUCCESS;
}
