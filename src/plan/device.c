/* device.c - classifying a Level Zero device for the configuration tables. */
#include <string.h>

#include "device.h"

#define INTEL_VENDOR_ID 0x8086u

/* PCI device ids of Intel GPUs, by family (from Intel's public lists of
 * supported devices; ranges are wider than the ids shipped so far where a
 * family owns the whole block). */
static const struct intel_id_range {
    uint16_t first, last;
    sdpa_device_class_t device_class;
} intel_id_ranges[] = {
        {0x9A40, 0x9AFF, SDPA_DEVICE_CLASS_XE_LP},  /* Tiger Lake */
        {0x4C80, 0x4C9F, SDPA_DEVICE_CLASS_XE_LP},  /* Rocket Lake */
        {0x4680, 0x469F, SDPA_DEVICE_CLASS_XE_LP},  /* Alder Lake-S */
        {0x4620, 0x462F, SDPA_DEVICE_CLASS_XE_LP},  /* Alder Lake-P */
        {0x46A0, 0x46DF, SDPA_DEVICE_CLASS_XE_LP},  /* Alder Lake-P/N */
        {0xA720, 0xA72F, SDPA_DEVICE_CLASS_XE_LP},  /* Raptor Lake-P */
        {0xA780, 0xA78F, SDPA_DEVICE_CLASS_XE_LP},  /* Raptor Lake-S */
        {0xA7A0, 0xA7AF, SDPA_DEVICE_CLASS_XE_LP},  /* Raptor Lake-P */
        {0x4900, 0x490F, SDPA_DEVICE_CLASS_XE_LP},  /* DG1 */
        {0x5690, 0x56CF, SDPA_DEVICE_CLASS_XE_HPG}, /* DG2: Arc A-series, Flex */
        {0x7D40, 0x7DFF, SDPA_DEVICE_CLASS_XE_HPG}, /* Meteor Lake, Arrow Lake (Xe-LPG) */
        {0x0B69, 0x0B69, SDPA_DEVICE_CLASS_XE_HPC}, /* Ponte Vecchio */
        {0x0B6E, 0x0B6E, SDPA_DEVICE_CLASS_XE_HPC},
        {0x0BD0, 0x0BDF, SDPA_DEVICE_CLASS_XE_HPC},
        {0x6420, 0x6420, SDPA_DEVICE_CLASS_XE2}, /* Lunar Lake */
        {0x64A0, 0x64BF, SDPA_DEVICE_CLASS_XE2},
        {0xE200, 0xE2FF, SDPA_DEVICE_CLASS_XE2}, /* Battlemage */
        {0xB080, 0xB0BF, SDPA_DEVICE_CLASS_XE3}, /* Panther Lake */
        {0xFD80, 0xFD8F, SDPA_DEVICE_CLASS_XE3}, /* Wildcat Lake */
};

/* Words in marketing names, tried in order when the id is not listed. */
static const struct intel_name_rule {
    const char *word;
    sdpa_device_class_t device_class;
} intel_name_rules[] = {
        {"Data Center GPU Max", SDPA_DEVICE_CLASS_XE_HPC},
        {"Data Center GPU Flex", SDPA_DEVICE_CLASS_XE_HPG},
        {"Arc(TM) Pro B", SDPA_DEVICE_CLASS_XE2},
        {"Arc(TM) B", SDPA_DEVICE_CLASS_XE2},
        {"Arc(TM) 130V", SDPA_DEVICE_CLASS_XE2},
        {"Arc(TM) 140V", SDPA_DEVICE_CLASS_XE2},
        {"Arc(TM) Pro A", SDPA_DEVICE_CLASS_XE_HPG},
        {"Arc(TM) A", SDPA_DEVICE_CLASS_XE_HPG},
        {"Iris(R) Xe", SDPA_DEVICE_CLASS_XE_LP},
};

sdpa_device_class_t sdpa_device_class_of_intel_gpu(uint32_t device_id, const char *name)
{
    for (size_t i = 0; i < sizeof(intel_id_ranges) / sizeof(intel_id_ranges[0]); i++)
        if (device_id >= intel_id_ranges[i].first && device_id <= intel_id_ranges[i].last)
            return intel_id_ranges[i].device_class;
    if (name)
        for (size_t i = 0; i < sizeof(intel_name_rules) / sizeof(intel_name_rules[0]); i++)
            if (strstr(name, intel_name_rules[i].word))
                return intel_name_rules[i].device_class;
    return SDPA_DEVICE_CLASS_UNKNOWN_GPU;
}

/* The float-atomics extension struct, if the caller chained one. */
static const ze_float_atomic_ext_properties_t *find_float_atomics(const void *next)
{
    /* Every extension struct starts with stype and pNext. */
    typedef struct {
        ze_structure_type_t stype;
        const void *pNext;
    } ext_header_t;
    for (const ext_header_t *ext = next; ext; ext = ext->pNext)
        if (ext->stype == ZE_STRUCTURE_TYPE_FLOAT_ATOMIC_EXT_PROPERTIES)
            return (const ze_float_atomic_ext_properties_t *)ext;
    return NULL;
}

void sdpa_device_info_from_ze(const ze_device_properties_t *props,
                              const ze_device_compute_properties_t *compute,
                              const ze_device_module_properties_t *module, sdpa_device_info_t *out)
{
    memset(out, 0, sizeof(*out));

    memcpy(out->name, props->name, sizeof(out->name));
    out->name[sizeof(out->name) - 1] = '\0';
    out->vendor_id = props->vendorId;
    out->device_id = props->deviceId;
    out->integrated = (props->flags & ZE_DEVICE_PROPERTY_FLAG_INTEGRATED) != 0;
    out->max_alloc_bytes = props->maxMemAllocSize;
    out->compute_units = props->numSlices * props->numSubslicesPerSlice * props->numEUsPerSubslice;

    if (props->type == ZE_DEVICE_TYPE_CPU)
        out->device_class = SDPA_DEVICE_CLASS_CPU;
    else if (props->vendorId == INTEL_VENDOR_ID)
        out->device_class = sdpa_device_class_of_intel_gpu(props->deviceId, out->name);
    else
        out->device_class = SDPA_DEVICE_CLASS_UNKNOWN_GPU;

    uint32_t n = compute->numSubGroupSizes;
    if (n > SDPA_DEVICE_MAX_SUBGROUP_SIZES)
        n = SDPA_DEVICE_MAX_SUBGROUP_SIZES;
    out->num_subgroup_sizes = n;
    for (uint32_t i = 0; i < n; i++)
        out->subgroup_sizes[i] = compute->subGroupSizes[i];
    out->max_group_size = compute->maxTotalGroupSize;
    out->max_group_size_xyz[0] = compute->maxGroupSizeX;
    out->max_group_size_xyz[1] = compute->maxGroupSizeY;
    out->max_group_size_xyz[2] = compute->maxGroupSizeZ;
    out->max_group_count_xyz[0] = compute->maxGroupCountX;
    out->max_group_count_xyz[1] = compute->maxGroupCountY;
    out->max_group_count_xyz[2] = compute->maxGroupCountZ;
    out->slm_bytes = compute->maxSharedLocalMemory;

    out->has_fp16 = (module->flags & ZE_DEVICE_MODULE_FLAG_FP16) != 0;
    out->has_bf16 = 1;
    const ze_float_atomic_ext_properties_t *atomics = find_float_atomics(module->pNext);
    out->has_f32_atomic_add =
            atomics && (atomics->fp32Flags & ZE_DEVICE_FP_ATOMIC_EXT_FLAG_GLOBAL_ADD) != 0;
}

const char *sdpa_device_class_name(sdpa_device_class_t device_class)
{
    switch (device_class) {
    case SDPA_DEVICE_CLASS_UNKNOWN_GPU:
        return "unknown_gpu";
    case SDPA_DEVICE_CLASS_CPU:
        return "cpu";
    case SDPA_DEVICE_CLASS_XE_LP:
        return "xe_lp";
    case SDPA_DEVICE_CLASS_XE_HPG:
        return "xe_hpg";
    case SDPA_DEVICE_CLASS_XE_HPC:
        return "xe_hpc";
    case SDPA_DEVICE_CLASS_XE2:
        return "xe2";
    case SDPA_DEVICE_CLASS_XE3:
        return "xe3";
    case SDPA_DEVICE_CLASS_COUNT:
        break;
    }
    return "invalid";
}

int sdpa_device_supports_subgroup(const sdpa_device_info_t *device, uint32_t size)
{
    for (uint32_t i = 0; i < device->num_subgroup_sizes; i++)
        if (device->subgroup_sizes[i] == size)
            return 1;
    return 0;
}

/* 1 if the hardware of class c has no SIMD8 (Xe-HPC and later: a driver
 * that listed 8 anyway could not build a sub-group-8 kernel). */
static int lacks_simd8(sdpa_device_class_t c)
{
    return c == SDPA_DEVICE_CLASS_XE_HPC || c == SDPA_DEVICE_CLASS_XE2 ||
           c == SDPA_DEVICE_CLASS_XE3;
}

uint32_t sdpa_device_subgroup_size(const sdpa_device_info_t *device)
{
    /* Only sizes a SPIR-V variant is built for (spirv/abi/variants.def: 8, 16). */
    static const uint32_t narrow_first[] = {8, 16};
    static const uint32_t wide_first[] = {16, 8};
    int narrow = device->device_class == SDPA_DEVICE_CLASS_XE_LP ||
                 device->device_class == SDPA_DEVICE_CLASS_XE_HPG;
    const uint32_t *preference = narrow ? narrow_first : wide_first;
    for (size_t i = 0; i < 2; i++) {
        if (preference[i] == 8 && lacks_simd8(device->device_class))
            continue;
        if (sdpa_device_supports_subgroup(device, preference[i]))
            return preference[i];
    }
    return 0;
}

int sdpa_device_group_count_excess(const sdpa_device_info_t *device, const int64_t counts[3])
{
    for (int i = 0; i < 3; i++) {
        uint32_t max = device->max_group_count_xyz[i] ? device->max_group_count_xyz[i] : UINT32_MAX;
        if (counts[i] < 1 || counts[i] > (int64_t)max)
            return i;
    }
    return -1;
}
