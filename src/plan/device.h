/*
 * device.h - what the core needs to know about a Level Zero device.
 *
 * The ze backend queries the device once (zeDeviceGetProperties,
 * zeDeviceGetComputeProperties, zeDeviceGetModuleProperties) and hands the
 * structs to sdpa_device_info_from_ze(); everything downstream (configuration
 * tables, constraint checks, plans) reads only sdpa_device_info_t, so it can be
 * tested with hand-built structs and no device.
 */
#ifndef SDPA_CORE_DEVICE_H
#define SDPA_CORE_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include <level_zero/ze_api.h>

/* The families the configuration tables distinguish. */
typedef enum sdpa_device_class {
    SDPA_DEVICE_CLASS_UNKNOWN_GPU = 0, /* a GPU we cannot place: generic configurations */
    SDPA_DEVICE_CLASS_CPU,             /* ZE_DEVICE_TYPE_CPU, e.g. our drivers/ze_cpu driver */
    SDPA_DEVICE_CLASS_XE_LP,           /* Gen12 integrated (TGL, RKL, ADL, RPL) and DG1 */
    SDPA_DEVICE_CLASS_XE_HPG,          /* Arc A-series / Flex (DG2), MTL and ARL (Xe-LPG) */
    SDPA_DEVICE_CLASS_XE_HPC,          /* Data Center GPU Max (PVC) */
    SDPA_DEVICE_CLASS_XE2,             /* Lunar Lake, Battlemage */
    SDPA_DEVICE_CLASS_XE3,             /* Panther Lake and later */
    SDPA_DEVICE_CLASS_COUNT
} sdpa_device_class_t;

#define SDPA_DEVICE_MAX_SUBGROUP_SIZES 8

/* Which kernels the plans may choose: SDPA_ZE_KERNELS (kernel_set.c). */
typedef enum sdpa_kernel_set {
    /* The fast path (kernel_abi_xe.h) where the device has matrix engines
     * (discrete Xe-HPG, Xe-HPC, Xe2, Xe3), the portable kernels elsewhere
     * and for the problems the fast path does not serve. The default. */
    SDPA_KERNELS_AUTO = 0,
    /* The portable kernels only. */
    SDPA_KERNELS_PORTABLE,
    /* The fast path wherever it serves the problem, with Xe-HPC's
     * configuration rows (sub-group 16) on a device without matrix engines,
     * whose variants emulate the matrix products (the CPU device). */
    SDPA_KERNELS_XE,
    /* The same with Xe-HPG's rows (sub-group 8). */
    SDPA_KERNELS_XE_HPG,
} sdpa_kernel_set_t;

/* How the backward kernels add f32 into global memory: SDPA_ZE_FLOAT_ATOMICS
 * (float_atomics.c). */
typedef enum sdpa_float_atomics {
    /* The device's native atomic add on GPUs that report it, but Xe-LP;
     * compare-and-swap loops elsewhere. The CPU device (x86) and Xe-LP have
     * no float atomic add: their compilers expand the native add into such a
     * loop themselves, and ours builds faster on the CPU (doc/module-cache.md)
     * and reads with a load where IGC's uses an atomic on Xe-LP
     * (doc/gpu-isa-paper.md). The default. */
    SDPA_FLOAT_ATOMICS_AUTO = 0,
    /* Compare-and-swap loops everywhere. */
    SDPA_FLOAT_ATOMICS_CAS,
    /* The native add wherever the device reports it, the CPU device included
     * (the tests run both variants there). */
    SDPA_FLOAT_ATOMICS_NATIVE,
} sdpa_float_atomics_t;

typedef struct sdpa_device_info {
    sdpa_device_class_t device_class;
    int integrated; /* 1: shares memory with the host (ZE_DEVICE_PROPERTY_FLAG_INTEGRATED) */
    uint32_t vendor_id, device_id;

    /* Sub-group sizes the device supports, as reported. */
    uint32_t num_subgroup_sizes;
    uint32_t subgroup_sizes[SDPA_DEVICE_MAX_SUBGROUP_SIZES];

    uint32_t max_group_size;        /* work-items per work-group */
    uint32_t max_group_size_xyz[3]; /* per dimension */
    uint32_t max_group_count_xyz[3];
    uint64_t slm_bytes;       /* shared local memory per work-group */
    uint64_t max_alloc_bytes; /* largest single allocation */

    int has_fp16; /* ZE_DEVICE_MODULE_FLAG_FP16 */
    /* bf16 is only stored, never computed in: the kernels widen it to f32 with
     * an integer shift, which every device can do, so this is always 1. */
    int has_bf16;
    /* f32 atomic add on global memory: 1 if the caller chained a
     * ze_float_atomic_ext_properties_t to the module properties and it reports
     * ZE_DEVICE_FP_ATOMIC_EXT_FLAG_GLOBAL_ADD, else 0 (unknown: kernels must
     * fall back to a compare-and-swap loop). */
    int has_f32_atomic_add;

    /* Compute units: numSlices * numSubslicesPerSlice * numEUsPerSubslice
     * (EUs of a GPU; the CPU driver reports its cores). Work-groups that can
     * run at once, about; split-KV decode splits until it fills them. */
    uint32_t compute_units;

    char name[ZE_MAX_DEVICE_NAME];

    /* Not a property of the device: the kernel set the caller asked for
     * (SDPA_KERNELS_AUTO when zeroed). */
    sdpa_kernel_set_t kernels;
    /* Not one either: how the caller asked the backward kernels to add f32
     * (SDPA_ZE_FLOAT_ATOMICS; SDPA_FLOAT_ATOMICS_AUTO when zeroed). */
    sdpa_float_atomics_t float_atomics;
} sdpa_device_info_t;

/* Fills *out from the three property structs of one device (none may be
 * NULL; their pNext chains are only read, for ze_float_atomic_ext_properties_t
 * on module). A CPU device (type ZE_DEVICE_TYPE_CPU) is SDPA_DEVICE_CLASS_CPU
 * whatever its vendor. An Intel GPU (vendor 0x8086) is classified from its
 * PCI device id (ranges from Intel's published id lists, see device.c), and if
 * the id is not in the list, from words in its name ("Arc(TM) A", "Data Center
 * GPU Max", ...); any other GPU is SDPA_DEVICE_CLASS_UNKNOWN_GPU.
 *
 * Limits of the heuristic: ids of products released after the list was
 * written fall back to the name, and a name that matches no rule gives
 * UNKNOWN_GPU (generic, slower configurations, never a wrong result). The
 * Level Zero 1.4 headers have no IP-version query, which would be exact. */
void sdpa_device_info_from_ze(const ze_device_properties_t *props,
                              const ze_device_compute_properties_t *compute,
                              const ze_device_module_properties_t *module, sdpa_device_info_t *out);

/* The class an Intel GPU with this PCI device id and name belongs to, by the
 * rules above (exposed for tests). name may be NULL. */
sdpa_device_class_t sdpa_device_class_of_intel_gpu(uint32_t device_id, const char *name);

/* "cpu", "xe_lp", "xe_hpg", "xe_hpc", "xe2", "xe3", "unknown_gpu", or
 * "invalid". */
const char *sdpa_device_class_name(sdpa_device_class_t device_class);

/* 1 if device reports sub-group size size. */
int sdpa_device_supports_subgroup(const sdpa_device_info_t *device, uint32_t size);

/* The sub-group size the attention kernels use on device, the first of a
 * preference list the device supports, 0 if none (it cannot run them):
 *   Xe-LP, Xe-HPG: 8, then 16. Their EUs are 8 lanes wide for f32, and at
 *     sub-group 8 a lane has 512 bytes of its thread's 4 KiB register file
 *     (twice what it has at 16), which the kernels need to run spill-free
 *     (doc/gpu-isa.md); the Xe-HPG rows of the tables assume it.
 *   Xe-HPC, Xe2, Xe3: 16 only. 16 is their native width and their hardware
 *     has no SIMD8, whatever a driver lists.
 *   everything else (CPU, unknown GPUs): 16, then 8. The CPU tables are
 *     written for 16.
 * The SPIR-V variants exist for 8 and 16 only (spirv/abi/variants.def), so a
 * device that offers neither (only 32, say) gets 0 and the kernels refuse
 * it; 32 is never chosen. */
uint32_t sdpa_device_subgroup_size(const sdpa_device_info_t *device);

/* The first axis (0, 1, 2) whose count exceeds the device's largest group
 * count along it (max_group_count_xyz; 0 there means no limit below
 * UINT32_MAX), or -1 if a launch of counts work-groups fits. */
int sdpa_device_group_count_excess(const sdpa_device_info_t *device, const int64_t counts[3]);
/* 1 if the backward kernels add f32 on device with its native atomic add
 * (the -fadd SPIR-V variants, spirv/abi/variants.def), 0 if with compare-and-swap
 * loops: native only where the device reports has_f32_atomic_add, and then
 * as device->float_atomics says (sdpa_float_atomics_t). The one place the
 * choice is made (bwd_plan.c and xe_bwd_plan.c name their variants from it). */
int sdpa_device_native_f32_add(const sdpa_device_info_t *device);

/* Parses text (SDPA_ZE_FLOAT_ATOMICS: "auto", NULL or empty; "cas";
 * "native") into *out. Returns 0, or -1 for any other text (*out untouched). */
int sdpa_float_atomics_parse(const char *text, sdpa_float_atomics_t *out);

/* Parses text (SDPA_ZE_KERNELS: "auto", "portable", "xe" or "xe_hpg"; NULL
 * or empty: auto) into *out. Returns 0, or -1 for any other text (*out
 * untouched). */
int sdpa_kernel_set_parse(const char *text, sdpa_kernel_set_t *out);

/* The name sdpa_kernel_set_parse accepts for set ("auto", ...). */
const char *sdpa_kernel_set_name(sdpa_kernel_set_t set);

#endif /* SDPA_CORE_DEVICE_H */
