/*
 * sdpa_example.c - one scaled-dot-product attention on the default Level Zero
 * device, checked against the host reference backend.
 *
 * What a framework does, in order:
 *   1. Level Zero: zeInit, the first driver's first device, a context, an
 *      in-order command list and an event to wait on.
 *   2. Q, K, V and O as shared USM, filled with reproducible random values.
 *   3. sdpa_backend_open(NULL): the backend named by $SDPA_BACKEND, default
 *      "ze"; a context bound to our Level Zero context, device and list.
 *   4. A primitive for one attention problem (expensive: it builds the
 *      kernels), executed a few times (cheap: it appends to our list).
 *   5. The same problem on the "ref" backend (host, double precision) and
 *      the largest error against it.
 *
 * Defaults are a Llama-style layer: B=1, Hq=32, Hkv=8 (grouped-query
 * attention), S=1024, D=128, causal, f16, scale 1/sqrt(D). Run it with
 * `make run-example` in the build tree. Installed, point the Level Zero
 * loader at a driver (the CPU driver that --enable-cpu-driver installs is
 * `pkg-config --variable=cpu_driver sdpa`) and run it:
 *
 *   ZE_ENABLE_ALT_DRIVERS=$(pkg-config --variable=cpu_driver sdpa) sdpa_example --seq 512
 *
 * It uses only sdpa.h, Level Zero and the C library, so it builds out of tree:
 *
 *   cc $(pkg-config --cflags sdpa) sdpa_example.c $(pkg-config --libs sdpa)
 *
 * Exit status: 0 if the result matches the reference within the tolerance of
 * the data type, 1 if it does not, 2 on any error.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <level_zero/ze_api.h>

#include <sdpa.h>

/* Where the build system knows the CPU Level Zero driver to be, for the
 * message printed when no driver is found. */
#ifndef SDPA_EXAMPLE_CPU_DRIVER
#define SDPA_EXAMPLE_CPU_DRIVER "$(pkg-config --variable=cpu_driver sdpa)"
#endif

/* ------------------------------------------------------------------------- */
/* Elements: f32, f16 and bf16 on the host                                   */
/* ------------------------------------------------------------------------- */

static const char *dtype_name(sdpa_dtype_t dtype)
{
    return dtype == SDPA_DTYPE_F32 ? "f32" : dtype == SDPA_DTYPE_F16 ? "f16" : "bf16";
}

static size_t dtype_bytes(sdpa_dtype_t dtype)
{
    return dtype == SDPA_DTYPE_F32 ? 4 : 2;
}

/* The distance from 1 to the next number of dtype: its relative rounding step. */
static double dtype_epsilon(sdpa_dtype_t dtype)
{
    return ldexp(1.0, dtype == SDPA_DTYPE_F32 ? -23 : dtype == SDPA_DTYPE_F16 ? -10 : -7);
}

static uint32_t float_bits(float value)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    return bits;
}

/* value as IEEE binary16, rounded to nearest even; overflow gives infinity. */
static uint16_t f16_from_float(float value)
{
    uint32_t bits = float_bits(value);
    uint16_t sign = (uint16_t)((bits >> 16) & 0x8000);
    uint32_t magnitude = bits & 0x7fffffff;
    if (magnitude > 0x7f800000) /* NaN */
        return sign | 0x7e00;
    if (magnitude >= 0x477ff000) /* 65520 and up round to infinity */
        return sign | 0x7c00;
    if (magnitude < 0x38800000) /* below 2^-14: a subnormal, in units of 2^-24 */
        return sign | (uint16_t)lrintf(fabsf(value) * 16777216.0f);
    uint32_t rebiased = magnitude - (112u << 23); /* exponent bias 127 -> 15 */
    return sign | (uint16_t)((rebiased + 0xfff + ((rebiased >> 13) & 1)) >> 13);
}

static double f16_to_double(uint16_t half)
{
    int exponent = (half >> 10) & 0x1f, mantissa = half & 0x3ff;
    double magnitude = exponent == 0    ? ldexp(mantissa, -24)
                       : exponent == 31 ? (mantissa ? NAN : INFINITY)
                                        : ldexp(mantissa + 1024, exponent - 25);
    return (half & 0x8000) ? -magnitude : magnitude;
}

/* value as bfloat16 (the high half of an f32), rounded to nearest even. */
static uint16_t bf16_from_float(float value)
{
    uint32_t bits = float_bits(value);
    if ((bits & 0x7fffffff) > 0x7f800000)
        return (uint16_t)((bits >> 16) | 0x40); /* NaN stays NaN */
    return (uint16_t)((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
}

static double bf16_to_double(uint16_t bf16)
{
    uint32_t bits = (uint32_t)bf16 << 16;
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* Stores value, rounded once, as element i of an array of dtype. */
static void element_store(void *data, int64_t i, sdpa_dtype_t dtype, float value)
{
    if (dtype == SDPA_DTYPE_F32)
        ((float *)data)[i] = value;
    else if (dtype == SDPA_DTYPE_F16)
        ((uint16_t *)data)[i] = f16_from_float(value);
    else
        ((uint16_t *)data)[i] = bf16_from_float(value);
}

/* Element i of an array of dtype, exactly. */
static double element_load(const void *data, int64_t i, sdpa_dtype_t dtype)
{
    if (dtype == SDPA_DTYPE_F32)
        return ((const float *)data)[i];
    if (dtype == SDPA_DTYPE_F16)
        return f16_to_double(((const uint16_t *)data)[i]);
    return bf16_to_double(((const uint16_t *)data)[i]);
}

/* ------------------------------------------------------------------------- */
/* Options                                                                   */
/* ------------------------------------------------------------------------- */

typedef struct example_options {
    int64_t batch, heads, kv_heads, seq, head_size;
    sdpa_dtype_t dtype;
    int causal;
    int runs; /* executions timed; the first one is reported on its own */
} example_options_t;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: sdpa_example [--batch N] [--heads N] [--kv-heads N] [--seq N]\n"
            "                    [--head-size N] [--dtype f16|bf16|f32] [--no-causal] [--runs N]\n"
            "Runs one attention on the first Level Zero device with the backend named by\n"
            "SDPA_BACKEND (default \"ze\") and checks it against the \"ref\" backend.\n"
            "Defaults: --batch 1 --heads 32 --kv-heads 8 --seq 1024 --head-size 128 --dtype f16,\n"
            "causal, --runs 5.\n");
}

/* Parses a positive integer option value; 0 on success. */
static int parse_count(const char *name, const char *text, int64_t *out)
{
    char *end = NULL;
    long long value = text ? strtoll(text, &end, 10) : 0;
    if (text == NULL || *text == '\0' || *end != '\0' || value <= 0) {
        fprintf(stderr, "sdpa_example: %s needs a positive integer, got \"%s\"\n", name,
                text ? text : "");
        return -1;
    }
    *out = value;
    return 0;
}

/* Fills opts from argv; returns 0 to run, 1 after --help, -1 on a bad option. */
static int parse_options(int argc, char **argv, example_options_t *opts)
{
    *opts = (example_options_t){.batch = 1,
                                .heads = 32,
                                .kv_heads = 8,
                                .seq = 1024,
                                .head_size = 128,
                                .dtype = SDPA_DTYPE_F16,
                                .causal = 1,
                                .runs = 5};
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t runs = 0;
        int status = 0;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            return 1;
        } else if (strcmp(arg, "--no-causal") == 0) {
            opts->causal = 0;
            continue;
        } else if (strcmp(arg, "--batch") == 0) {
            status = parse_count(arg, value, &opts->batch);
        } else if (strcmp(arg, "--heads") == 0) {
            status = parse_count(arg, value, &opts->heads);
        } else if (strcmp(arg, "--kv-heads") == 0) {
            status = parse_count(arg, value, &opts->kv_heads);
        } else if (strcmp(arg, "--seq") == 0) {
            status = parse_count(arg, value, &opts->seq);
        } else if (strcmp(arg, "--head-size") == 0) {
            status = parse_count(arg, value, &opts->head_size);
        } else if (strcmp(arg, "--runs") == 0) {
            status = parse_count(arg, value, &runs);
            opts->runs = runs > 1000 ? 1000 : (int)runs;
        } else if (strcmp(arg, "--dtype") == 0) {
            if (value && strcmp(value, "f16") == 0)
                opts->dtype = SDPA_DTYPE_F16;
            else if (value && strcmp(value, "bf16") == 0)
                opts->dtype = SDPA_DTYPE_BF16;
            else if (value && strcmp(value, "f32") == 0)
                opts->dtype = SDPA_DTYPE_F32;
            else {
                fprintf(stderr, "sdpa_example: --dtype must be f16, bf16 or f32\n");
                return -1;
            }
        } else {
            fprintf(stderr, "sdpa_example: unknown option \"%s\"\n", arg);
            usage(stderr);
            return -1;
        }
        if (status != 0)
            return -1;
        i++; /* the option's value */
    }
    if (opts->heads % opts->kv_heads != 0) {
        fprintf(stderr,
                "sdpa_example: --heads %lld is not a multiple of --kv-heads %lld (each KV head "
                "serves a whole group of query heads)\n",
                (long long)opts->heads, (long long)opts->kv_heads);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------- */
/* Level Zero                                                                */
/* ------------------------------------------------------------------------- */

/* What the framework owns: a device, a context, an in-order command list on
 * it, and one host-visible event the example waits on. */
typedef struct level_zero {
    ze_driver_handle_t driver;
    ze_device_handle_t device;
    ze_context_handle_t context;
    ze_command_list_handle_t list;
    ze_event_pool_handle_t event_pool;
    ze_event_handle_t done;
} level_zero_t;

static void ze_failed(const char *call, ze_result_t result)
{
    fprintf(stderr, "sdpa_example: %s failed: Level Zero result 0x%x\n", call, (unsigned)result);
}

#define ZE_CHECK(call)                                                                             \
    do {                                                                                           \
        ze_result_t result_ = (call);                                                              \
        if (result_ != ZE_RESULT_SUCCESS) {                                                        \
            ze_failed(#call, result_);                                                             \
            return -1;                                                                             \
        }                                                                                          \
    } while (0)

static const char *device_type_name(ze_device_type_t type)
{
    switch (type) {
    case ZE_DEVICE_TYPE_GPU:
        return "GPU";
    case ZE_DEVICE_TYPE_CPU:
        return "CPU";
    case ZE_DEVICE_TYPE_FPGA:
        return "FPGA";
    case ZE_DEVICE_TYPE_MCA:
        return "MCA";
    case ZE_DEVICE_TYPE_VPU:
        return "VPU";
    default:
        return "unknown";
    }
}

static void explain_missing_driver(void)
{
    fprintf(stderr, "sdpa_example: no Level Zero driver found.\n"
                    "  Without an Intel GPU, run `make run-example` in the build tree, or point\n"
                    "  the loader at sdpa-ze's CPU driver, and the driver at its OpenCL engine\n"
                    "  if it does not find it (ZE_CPU_DEBUG=1 says why):\n"
                    "    ZE_ENABLE_ALT_DRIVERS=" SDPA_EXAMPLE_CPU_DRIVER " \\\n"
                    "    ZE_CPU_OPENCL_ENGINE=/path/to/intel-opencl-rt sdpa_example\n");
}

/* Opens the first driver's first device. Returns 0, or -1 after printing
 * why (everything created so far is released by level_zero_close). */
static int level_zero_open(level_zero_t *ze)
{
    ze_result_t result = zeInit(0);
    uint32_t count = 1;
    if (result == ZE_RESULT_SUCCESS)
        result = zeDriverGet(&count, &ze->driver);
    if (result != ZE_RESULT_SUCCESS || count == 0) {
        explain_missing_driver();
        return -1;
    }
    count = 1;
    ZE_CHECK(zeDeviceGet(ze->driver, &count, &ze->device));
    if (count == 0) {
        fprintf(stderr, "sdpa_example: the Level Zero driver has no device\n");
        return -1;
    }
    ze_device_properties_t props = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
    ZE_CHECK(zeDeviceGetProperties(ze->device, &props));
    printf("device:    %s (%s)\n", props.name, device_type_name(props.type));

    ze_context_desc_t context_desc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    ZE_CHECK(zeContextCreate(ze->driver, &context_desc, &ze->context));

    /* Queue group 0 runs compute on every driver we know; a framework would
     * look for ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE. */
    ze_command_queue_desc_t queue_desc = {
            .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
            .ordinal = 0,
            .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
            .priority = ZE_COMMAND_QUEUE_PRIORITY_NORMAL,
    };
    ZE_CHECK(zeCommandListCreateImmediate(ze->context, ze->device, &queue_desc, &ze->list));

    ze_event_pool_desc_t pool_desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
                                      .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
                                      .count = 1};
    ZE_CHECK(zeEventPoolCreate(ze->context, &pool_desc, 1, &ze->device, &ze->event_pool));
    ze_event_desc_t event_desc = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC,
                                  .index = 0,
                                  .signal = ZE_EVENT_SCOPE_FLAG_HOST,
                                  .wait = ZE_EVENT_SCOPE_FLAG_HOST};
    ZE_CHECK(zeEventCreate(ze->event_pool, &event_desc, &ze->done));
    return 0;
}

static void level_zero_close(level_zero_t *ze)
{
    if (ze->done)
        zeEventDestroy(ze->done);
    if (ze->event_pool)
        zeEventPoolDestroy(ze->event_pool);
    if (ze->list)
        zeCommandListDestroy(ze->list);
    if (ze->context)
        zeContextDestroy(ze->context);
}

/* Shared USM: the host fills and reads it, the device computes on it. */
static void *alloc_shared(const level_zero_t *ze, size_t bytes)
{
    ze_device_mem_alloc_desc_t device_desc = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
    ze_host_mem_alloc_desc_t host_desc = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    void *pointer = NULL;
    ze_result_t result = zeMemAllocShared(ze->context, &device_desc, &host_desc, bytes, 64,
                                          ze->device, &pointer);
    if (result != ZE_RESULT_SUCCESS) {
        fprintf(stderr, "sdpa_example: zeMemAllocShared(%zu bytes) failed: 0x%x\n", bytes,
                (unsigned)result);
        return NULL;
    }
    return pointer;
}

/* ------------------------------------------------------------------------- */
/* The attention problem                                                     */
/* ------------------------------------------------------------------------- */

/* A dense [B, H, S, D] tensor. */
static sdpa_tensor_desc_t dense_tensor(sdpa_dtype_t dtype, int64_t b, int64_t h, int64_t s,
                                       int64_t d)
{
    sdpa_tensor_desc_t t = {.dtype = dtype, .dims = {b, h, s, d}};
    t.strides[3] = 1;
    t.strides[2] = d;
    t.strides[1] = s * d;
    t.strides[0] = h * s * d;
    return t;
}

static sdpa_problem_desc_t make_problem(const example_options_t *o)
{
    sdpa_problem_desc_t p = {
            .struct_size = sizeof(sdpa_problem_desc_t),
            .struct_version = SDPA_PROBLEM_DESC_VERSION,
            .prop_kind = SDPA_FORWARD_INFERENCE,
            .q = dense_tensor(o->dtype, o->batch, o->heads, o->seq, o->head_size),
            .k = dense_tensor(o->dtype, o->batch, o->kv_heads, o->seq, o->head_size),
            .v = dense_tensor(o->dtype, o->batch, o->kv_heads, o->seq, o->head_size),
            .dst = dense_tensor(o->dtype, o->batch, o->heads, o->seq, o->head_size),
            /* With Sq == Sk bottom-right and top-left causal are the same mask;
             * bottom-right is what a KV-cache decoder needs in general. */
            .mask_kind = o->causal ? SDPA_MASK_CAUSAL_BOTTOM_RIGHT : SDPA_MASK_NONE,
            .scale_kind = SDPA_SCALE_HOST,
            .softmax_kind = SDPA_SOFTMAX_ACCURATE,
    };
    return p;
}

static int64_t tensor_elements(const sdpa_tensor_desc_t *t)
{
    return t->dims[0] * t->dims[1] * t->dims[2] * t->dims[3];
}

/* splitmix64: a tiny reproducible generator. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform values in [-1, 1), stored in dtype. */
static void fill_random(void *data, int64_t count, sdpa_dtype_t dtype, uint64_t seed)
{
    uint64_t state = seed;
    for (int64_t i = 0; i < count; i++) {
        float unit = (float)(next_random(&state) >> 40) / 16777216.0f; /* [0, 1) */
        element_store(data, i, dtype, 2.0f * unit - 1.0f); /* exact in f32 */
    }
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Floating-point operations of one forward pass: two products of 2*D flops
 * per (query, key) pair; a causal mask skips about half the pairs. */
static double attention_flops(const example_options_t *o)
{
    double flops = 4.0 * (double)o->batch * (double)o->heads * (double)o->seq * (double)o->seq *
                   (double)o->head_size;
    return o->causal ? flops / 2.0 : flops;
}

/* Buffers of one execution. */
typedef struct attention_buffers {
    const void *q, *k, *v;
    void *dst;
} attention_buffers_t;

/* Prints a failed sdpa call with the backend's message. */
static void sdpa_failed(const sdpa_backend_iface_t *iface, const char *call, sdpa_status_t status)
{
    fprintf(stderr, "sdpa_example: %s (%s) failed: %s: %s\n", call, iface->name,
            sdpa_status_name(status), iface->last_error());
}

/* Opens backend name (NULL: $SDPA_BACKEND or "ze"), runs the problem
 * `runs` times into buf->dst and, when verbose, prints timings. Returns 0 or
 * -1 after printing why; everything it creates it also destroys. */
static int run_attention(const char *name, const level_zero_t *ze, const example_options_t *opts,
                         const attention_buffers_t *buf, int runs, int verbose)
{
    sdpa_backend_t *backend = NULL;
    sdpa_context_t *ctx = NULL;
    sdpa_primitive_t *prim = NULL;
    int rc = -1;

    sdpa_status_t status = sdpa_backend_open(name, &backend);
    if (status != SDPA_SUCCESS) {
        fprintf(stderr, "sdpa_example: sdpa_backend_open(%s) failed: %s: %s\n",
                name ? name : "NULL", sdpa_status_name(status), sdpa_loader_last_error());
        if (status == SDPA_ERROR_BACKEND_NOT_FOUND)
            fprintf(stderr, "  Set SDPA_PLUGIN_DIR to the directory holding libsdpa_<name>.so, "
                            "or run `make run-example` in the build tree.\n");
        return -1;
    }
    const sdpa_backend_iface_t *iface = sdpa_backend_get_iface(backend);

    /* The backend appends to our list; results are ready when `done` fires. */
    sdpa_context_desc_t context_desc = {.struct_size = sizeof(context_desc),
                                        .struct_version = SDPA_CONTEXT_DESC_VERSION,
                                        .ze_context = ze->context,
                                        .ze_device = ze->device,
                                        .command_list = ze->list};
    if ((status = iface->context_create(&context_desc, &ctx)) != SDPA_SUCCESS) {
        sdpa_failed(iface, "context_create", status);
        goto cleanup;
    }

    sdpa_problem_desc_t problem = make_problem(opts);
    double start = seconds_now();
    if ((status = iface->primitive_create(ctx, &problem, &prim)) != SDPA_SUCCESS) {
        sdpa_failed(iface, "primitive_create", status);
        goto cleanup;
    }
    double create_seconds = seconds_now() - start;

    sdpa_exec_args_t args = {.struct_size = sizeof(args),
                             .struct_version = SDPA_EXEC_ARGS_VERSION,
                             .q = buf->q,
                             .k = buf->k,
                             .v = buf->v,
                             .dst = buf->dst,
                             .scale = (float)(1.0 / sqrt((double)opts->head_size)),
                             .signal_event = ze->done};
    double first = 0.0, best = INFINITY;
    for (int run = 0; run < runs; run++) {
        start = seconds_now();
        if ((status = iface->primitive_execute(prim, &args)) != SDPA_SUCCESS) {
            sdpa_failed(iface, "primitive_execute", status);
            goto cleanup;
        }
        ze_result_t result = zeEventHostSynchronize(ze->done, UINT64_MAX);
        double elapsed = seconds_now() - start;
        if (result == ZE_RESULT_SUCCESS)
            result = zeEventHostReset(ze->done);
        if (result != ZE_RESULT_SUCCESS) {
            ze_failed("waiting for the execution", result);
            goto cleanup;
        }
        if (run == 0)
            first = elapsed;
        else if (elapsed < best)
            best = elapsed;
    }

    if (verbose) {
        char config[256] = "";
        iface->primitive_query(prim, SDPA_QUERY_CONFIG_STRING, config, sizeof(config));
        double gflop = attention_flops(opts) * 1e-9;
        printf("backend:   %s (%s)\n", iface->name, sdpa_backend_path(backend));
        printf("config:    %s\n", config[0] ? config : "(none)");
        printf("create:    %8.1f ms (validation, configuration, kernel build)\n",
               create_seconds * 1e3);
        printf("first run: %8.1f ms  %8.1f GFLOP/s\n", first * 1e3, gflop / first);
        if (runs > 1)
            printf("best of %d: %8.1f ms  %8.1f GFLOP/s\n", runs - 1, best * 1e3, gflop / best);
    }
    rc = 0;

cleanup:
    iface = backend ? sdpa_backend_get_iface(backend) : NULL;
    if (iface) {
        iface->primitive_destroy(prim);
        iface->context_destroy(ctx);
    }
    sdpa_backend_close(backend);
    return rc;
}

/* ------------------------------------------------------------------------- */
/* Accuracy                                                                  */
/* ------------------------------------------------------------------------- */

/* The largest |ours - ref| we accept, for values V in [-v_max, v_max]:
 *   - each output is rounded to dtype twice (ours and the reference):
 *     half an ulp each, and |O| <= v_max since O is a convex combination
 *     of rows of V;
 *   - the kernel may round P to dtype before P.V: half an ulp of each
 *     p_j, and sum_j p_j |v_j| <= v_max;
 *   - f32 accumulation over Sk keys (softmax sum, P.V) and D dims (Q.K),
 *     whose round-off grows like sqrt(length) * 2^-24; four of those for
 *     margin (and for exp2 approximations).
 * Together: v_max * (1.5 ulp + 4 * 2^-24 * (sqrt(Sk) + sqrt(D) * s_max)),
 * with s_max the largest |score| (scale * D * max|q| * max|k|). */
static double tolerance(const example_options_t *o, double v_max, double s_max)
{
    double ulp = dtype_epsilon(o->dtype);
    double f32_unit = ldexp(1.0, -24);
    return v_max * (1.5 * ulp +
                    4.0 * f32_unit * (sqrt((double)o->seq) + sqrt((double)o->head_size) * s_max));
}

/* Prints the errors of ours against ref; returns 1 if within tolerance. */
static int compare(const example_options_t *o, const void *ours, const void *ref, int64_t count)
{
    double max_abs = 0.0, max_ref = 0.0;
    int64_t worst = 0;
    for (int64_t i = 0; i < count; i++) {
        double a = element_load(ours, i, o->dtype);
        double r = element_load(ref, i, o->dtype);
        double err = fabs(a - r);
        if (!(err <= max_abs)) { /* also catches NaN */
            max_abs = isnan(err) ? INFINITY : err;
            worst = i;
        }
        if (fabs(r) > max_ref)
            max_ref = fabs(r);
    }
    /* Inputs are in [-1, 1): v_max = 1, |score| <= scale * D = sqrt(D). */
    double tol = tolerance(o, 1.0, sqrt((double)o->head_size));
    printf("max |error|: %.3e (element %lld), relative to max|O| = %.3e: %.3e\n", max_abs,
           (long long)worst, max_ref, max_ref > 0 ? max_abs / max_ref : max_abs);
    printf("tolerance:   %.3e (%s: 1.5 ulp + f32 accumulation over %lld keys)\n", tol,
           dtype_name(o->dtype), (long long)o->seq);
    return max_abs <= tol;
}

/* ------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    /* Keep our lines in order with the error messages on stderr when piped. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    example_options_t opts;
    int parsed = parse_options(argc, argv, &opts);
    if (parsed != 0)
        return parsed > 0 ? 0 : 2;

    level_zero_t ze = {0};
    void *q = NULL, *k = NULL, *v = NULL, *dst = NULL, *dst_ref = NULL;
    int rc = 2;

    if (level_zero_open(&ze) != 0)
        goto cleanup;

    sdpa_problem_desc_t problem = make_problem(&opts);
    size_t elem = dtype_bytes(opts.dtype);
    int64_t q_count = tensor_elements(&problem.q), kv_count = tensor_elements(&problem.k);
    if (!(q = alloc_shared(&ze, (size_t)q_count * elem)) ||
        !(k = alloc_shared(&ze, (size_t)kv_count * elem)) ||
        !(v = alloc_shared(&ze, (size_t)kv_count * elem)) ||
        !(dst = alloc_shared(&ze, (size_t)q_count * elem)) ||
        !(dst_ref = alloc_shared(&ze, (size_t)q_count * elem)))
        goto cleanup;
    fill_random(q, q_count, opts.dtype, 1);
    fill_random(k, kv_count, opts.dtype, 2);
    fill_random(v, kv_count, opts.dtype, 3);

    printf("problem:   B=%lld Hq=%lld Hkv=%lld S=%lld D=%lld %s%s, scale 1/sqrt(D)\n",
           (long long)opts.batch, (long long)opts.heads, (long long)opts.kv_heads,
           (long long)opts.seq, (long long)opts.head_size, dtype_name(opts.dtype),
           opts.causal ? " causal" : "");

    attention_buffers_t ours = {q, k, v, dst};
    if (run_attention(NULL, &ze, &opts, &ours, opts.runs, 1) != 0)
        goto cleanup;

    printf("reference: ref backend (host, double precision)...\n");
    attention_buffers_t reference = {q, k, v, dst_ref};
    if (run_attention("ref", &ze, &opts, &reference, 1, 0) != 0)
        goto cleanup;

    if (compare(&opts, dst, dst_ref, q_count)) {
        printf("PASS\n");
        rc = 0;
    } else {
        printf("FAIL: the error exceeds the tolerance\n");
        rc = 1;
    }

cleanup:
    if (ze.context) {
        void *buffers[] = {dst_ref, dst, v, k, q};
        for (size_t i = 0; i < sizeof(buffers) / sizeof(buffers[0]); i++)
            if (buffers[i])
                zeMemFree(ze.context, buffers[i]);
    }
    level_zero_close(&ze);
    return rc;
}
