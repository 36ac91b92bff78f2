/*
 * gpu_models.h - the Intel GPUs the ISA gate compiles for, described as their
 * Level Zero drivers report them.
 *
 * There is no Intel GPU on our machines, so the gate (tools/gpu-isa) and the
 * configuration tests (tests/core) need the device descriptions the plugin
 * would see. Each model is the three property structs of zeDeviceGet*Properties
 * for one product of a family, as Intel's compute runtime reports them; the
 * core's own sdpa_device_info_from_ze() turns them into the
 * sdpa_device_info_t everything downstream reads, so the class comes from the
 * PCI id exactly as on a real device. ocloc_device names the same product for
 * Intel's offline compiler.
 *
 * A header of static data, included by tools/gpu_isa_plan.c and
 * tests/core/core_fixtures.c: one description, two programs.
 */
#ifndef SDPA_TOOLS_GPU_MODELS_H
#define SDPA_TOOLS_GPU_MODELS_H

#include <stddef.h>
#include <string.h>

#include <level_zero/ze_api.h>

#include "device.h"

typedef struct gpu_model {
    const char *ocloc_device; /* ocloc -device */
    const char *family;       /* marketing family, for the report */
    int grf_bytes;            /* one general register (32 or 64 bytes); not in Level Zero */
    ze_device_properties_t props;
    ze_device_compute_properties_t compute;
    ze_device_module_properties_t module;
} gpu_model_t;

/* The float atomics Intel's compute runtime reports on every GPU it drives
 * (ze_float_atomic_ext_properties_t chained to the module properties; its
 * CompilerProductHelper: f32 and f64 load/store, add and min/max, global
 * and local; f16 without add). Xe-HPG and Xe-HPC add f32 in the memory
 * pipeline; IGC compiles the add on Xe-LP to a compare-and-swap loop, so
 * the plugin keeps its own there (sdpa_device_native_f32_add). */
#define GPU_MODEL_FP_ATOMIC_ALL                                                                    \
    (ZE_DEVICE_FP_ATOMIC_EXT_FLAG_GLOBAL_LOAD_STORE | ZE_DEVICE_FP_ATOMIC_EXT_FLAG_GLOBAL_ADD |    \
     ZE_DEVICE_FP_ATOMIC_EXT_FLAG_GLOBAL_MIN_MAX | ZE_DEVICE_FP_ATOMIC_EXT_FLAG_LOCAL_LOAD_STORE | \
     ZE_DEVICE_FP_ATOMIC_EXT_FLAG_LOCAL_ADD | ZE_DEVICE_FP_ATOMIC_EXT_FLAG_LOCAL_MIN_MAX)
static ze_float_atomic_ext_properties_t gpu_model_float_atomics = {
        .stype = ZE_STRUCTURE_TYPE_FLOAT_ATOMIC_EXT_PROPERTIES,
        .fp16Flags = GPU_MODEL_FP_ATOMIC_ALL & ~(ZE_DEVICE_FP_ATOMIC_EXT_FLAG_GLOBAL_ADD |
                                                 ZE_DEVICE_FP_ATOMIC_EXT_FLAG_LOCAL_ADD),
        .fp32Flags = GPU_MODEL_FP_ATOMIC_ALL,
        .fp64Flags = GPU_MODEL_FP_ATOMIC_ALL};

/* An Intel GPU's device properties: PCI id, property flags (integrated
 * or 0), largest allocation, threads per EU (XVE), its SIMD width, EUs per
 * sub-slice (Xe-core), sub-slices per slice, slices, and the name. */
#define GPU_MODEL_PROPS(device_id, property_flags, max_alloc, threads, simd_width, eus,            \
                        subslices, slices, device_name)                                            \
    {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES, .type = ZE_DEVICE_TYPE_GPU, .vendorId = 0x8086, \
     .deviceId = (device_id), .flags = (property_flags), .maxMemAllocSize = (max_alloc),           \
     .numThreadsPerEU = (threads), .physicalEUSimdWidth = (simd_width),                            \
     .numEUsPerSubslice = (eus), .numSubslicesPerSlice = (subslices), .numSlices = (slices),       \
     .name = device_name}
/* The compute properties the runtime reports on every model, but for the
 * work-group size, the local memory and the sub-group sizes (count, list). */
#define GPU_MODEL_COMPUTE(group_size, slm_kib, num_subgroup_sizes, ...)                            \
    {.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES, .maxTotalGroupSize = (group_size),     \
     .maxGroupSizeX = (group_size), .maxGroupSizeY = (group_size), .maxGroupSizeZ = (group_size),  \
     .maxGroupCountX = 0xFFFFFFFFu, .maxGroupCountY = 0xFFFFFFFFu, .maxGroupCountZ = 0xFFFFFFFFu,  \
     .maxSharedLocalMemory = (slm_kib) * 1024, .numSubGroupSizes = (num_subgroup_sizes),          \
     .subGroupSizes = {__VA_ARGS__}}
/* The module properties: the float atomics above and the given flags. */
#define GPU_MODEL_MODULE(module_flags)                                                             \
    {.stype = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES, .pNext = &gpu_model_float_atomics,       \
     .flags = (module_flags)}

/* clang-format off */
static const gpu_model_t gpu_models[] = {
    /* Xe-LP: Tiger Lake GT2, 96 EUs of 8 lanes, 7 threads each; 64 KiB of
     * local memory; integrated; no fp64. */
    {"tgllp", "Xe-LP: Tiger Lake, Iris Xe", 32,
     GPU_MODEL_PROPS(0x9A49, ZE_DEVICE_PROPERTY_FLAG_INTEGRATED, 4294959104u,
                     7, 8, 16, 6, 1, "Intel(R) Iris(R) Xe Graphics"),
     GPU_MODEL_COMPUTE(512, 64, 3, 8, 16, 32),
     GPU_MODEL_MODULE(ZE_DEVICE_MODULE_FLAG_FP16)},
    /* Xe-HPG: Arc A770 (DG2-512), 512 EUs of 8 lanes, 8 threads each; 64 KiB
     * of local memory. */
    {"acm-g10", "Xe-HPG: Arc A770, DG2", 32,
     GPU_MODEL_PROPS(0x56A0, 0, 4294959104u,
                     8, 8, 16, 4, 8, "Intel(R) Arc(TM) A770 Graphics"),
     GPU_MODEL_COMPUTE(1024, 64, 3, 8, 16, 32),
     GPU_MODEL_MODULE(ZE_DEVICE_MODULE_FLAG_FP16)},
    /* Xe-HPC: Data Center GPU Max 1550, 1024 EUs of 16 lanes, 8 threads each;
     * 128 KiB of local memory; no sub-group 8. */
    {"pvc", "Xe-HPC: Data Center GPU Max 1550", 64,
     GPU_MODEL_PROPS(0x0BD5, 0, 65536ull << 20,
                     8, 16, 8, 16, 8, "Intel(R) Data Center GPU Max 1550"),
     GPU_MODEL_COMPUTE(1024, 128, 2, 16, 32),
     GPU_MODEL_MODULE(ZE_DEVICE_MODULE_FLAG_FP16 | ZE_DEVICE_MODULE_FLAG_FP64)},
    /* Xe2-HPG: Arc B580 (BMG-G21, PCI id 0xE20B), 20 Xe-cores (5 render
     * slices of 4) of 8 XVEs; an XVE is 16 lanes wide with 8 threads and one
     * XMX engine (DPAS 8 x 16 x 16 in f16/bf16, Xe-HPC's shape); 128
     * registers of 64 bytes (256 in the large-register mode); 128 KiB of
     * local memory per Xe-core (compute runtime: maxProgrammableSlmSize);
     * sub-groups 16 and 32. */
    {"bmg-g21", "Xe2-HPG: Arc B580, Battlemage", 64,
     GPU_MODEL_PROPS(0xE20B, 0, 4294959104u,
                     8, 16, 8, 4, 5, "Intel(R) Arc(TM) B580 Graphics"),
     GPU_MODEL_COMPUTE(1024, 128, 2, 16, 32),
     GPU_MODEL_MODULE(ZE_DEVICE_MODULE_FLAG_FP16 | ZE_DEVICE_MODULE_FLAG_FP64)},
    /* Xe2-LPG: Lunar Lake's Arc 140V (PCI id 0x64A0), integrated, 8 Xe-cores
     * of 8 XVEs, otherwise the Xe-core of the B580 (8 threads, XMX, 128 KiB
     * of local memory, sub-groups 16 and 32). */
    {"lnl-m", "Xe2-LPG: Lunar Lake, Arc 140V", 64,
     GPU_MODEL_PROPS(0x64A0, ZE_DEVICE_PROPERTY_FLAG_INTEGRATED, 4294959104u,
                     8, 16, 8, 8, 1, "Intel(R) Arc(TM) 140V GPU (16GB)"),
     GPU_MODEL_COMPUTE(1024, 128, 2, 16, 32),
     GPU_MODEL_MODULE(ZE_DEVICE_MODULE_FLAG_FP16 | ZE_DEVICE_MODULE_FLAG_FP64)},
    /* Xe3-LPG: Panther Lake H's Arc B390 (PCI id 0xB080), integrated, 12
     * Xe3-cores (2 render slices of 6) of 8 XVEs of 16 lanes with XMX; 10
     * threads per XVE (the compute runtime's NumThreadsPerEu; IGC trades
     * threads for registers per kernel), 128 KiB of local memory,
     * sub-groups 16 and 32. */
    {"ptl-h", "Xe3-LPG: Panther Lake, Arc B390", 64,
     GPU_MODEL_PROPS(0xB080, ZE_DEVICE_PROPERTY_FLAG_INTEGRATED, 4294959104u,
                     10, 16, 8, 6, 2, "Intel(R) Arc(TM) B390 GPU"),
     GPU_MODEL_COMPUTE(1024, 128, 2, 16, 32),
     GPU_MODEL_MODULE(ZE_DEVICE_MODULE_FLAG_FP16 | ZE_DEVICE_MODULE_FLAG_FP64)},
};
/* clang-format on */

#define GPU_MODEL_COUNT (sizeof(gpu_models) / sizeof(gpu_models[0]))

/* The first model of device class c (Xe2: the B580), or NULL if the gate
 * has none. */
static inline const gpu_model_t *gpu_model_of_class(sdpa_device_class_t c)
{
    for (size_t i = 0; i < GPU_MODEL_COUNT; i++)
        if (sdpa_device_class_of_intel_gpu(gpu_models[i].props.deviceId,
                                           gpu_models[i].props.name) == c)
            return &gpu_models[i];
    return NULL;
}

/* The sdpa_device_info_t the ze backend derives from model (through the
 * core's sdpa_device_info_from_ze, as for a real device). */
static inline void gpu_model_device_info(const gpu_model_t *model, sdpa_device_info_t *out)
{
    sdpa_device_info_from_ze(&model->props, &model->compute, &model->module, out);
}

#endif /* SDPA_TOOLS_GPU_MODELS_H */
