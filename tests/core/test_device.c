/* test_device.c - classifying devices and choosing the sub-group size. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "device.h"
#include "kernel_abi.h"
#include "kernel_abi_bwd.h"
#include "spirv_registry.h"

/* Property structs of a device as zeDeviceGet*Properties would fill them. */
typedef struct ze_device_structs {
    ze_device_properties_t props;
    ze_device_compute_properties_t compute;
    ze_device_module_properties_t module;
} ze_device_structs_t;

static void make_structs(ze_device_type_t type, uint32_t vendor, uint32_t id, const char *name,
                         ze_device_structs_t *s)
{
    memset(s, 0, sizeof(*s));
    s->props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
    s->props.type = type;
    s->props.vendorId = vendor;
    s->props.deviceId = id;
    s->props.maxMemAllocSize = 1u << 30;
    strncpy(s->props.name, name, sizeof(s->props.name) - 1);
    s->compute.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES;
    s->compute.maxTotalGroupSize = 1024;
    s->compute.maxGroupSizeX = 1024;
    s->compute.maxGroupSizeY = 512;
    s->compute.maxGroupSizeZ = 64;
    s->compute.maxGroupCountX = 1u << 31;
    s->compute.maxGroupCountY = 65535;
    s->compute.maxGroupCountZ = 65535;
    s->compute.maxSharedLocalMemory = 65536;
    s->compute.numSubGroupSizes = 3;
    s->compute.subGroupSizes[0] = 8;
    s->compute.subGroupSizes[1] = 16;
    s->compute.subGroupSizes[2] = 32;
    s->module.stype = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES;
    s->module.flags = ZE_DEVICE_MODULE_FLAG_FP16;
}

static sdpa_device_info_t info_of(const ze_device_structs_t *s)
{
    sdpa_device_info_t info;
    memset(&info, 0x5a, sizeof(info)); /* every field must be written */
    sdpa_device_info_from_ze(&s->props, &s->compute, &s->module, &info);
    return info;
}

START_TEST(cpu_device_is_cpu_class_whatever_its_id)
{
    ze_device_structs_t s;
    /* An id in the DG2 range must not matter for a CPU. */
    make_structs(ZE_DEVICE_TYPE_CPU, 0x8086, 0x56A0, "sdpa-ze CPU", &s);
    s.compute.maxTotalGroupSize = 8192;
    s.compute.maxSharedLocalMemory = 262144;
    sdpa_device_info_t info = info_of(&s);
    ck_assert_int_eq(info.device_class, SDPA_DEVICE_CLASS_CPU);
    ck_assert_str_eq(info.name, "sdpa-ze CPU");
    ck_assert_uint_eq(info.max_group_size, 8192);
    ck_assert_uint_eq(info.max_group_size_xyz[0], 1024);
    ck_assert_uint_eq(info.max_group_size_xyz[1], 512);
    ck_assert_uint_eq(info.max_group_size_xyz[2], 64);
    ck_assert_uint_eq(info.max_group_count_xyz[0], 1u << 31);
    ck_assert_uint_eq(info.max_group_count_xyz[1], 65535);
    ck_assert_uint_eq(info.slm_bytes, 262144);
    ck_assert_uint_eq(info.max_alloc_bytes, 1u << 30);
    ck_assert_uint_eq(info.num_subgroup_sizes, 3);
    ck_assert_uint_eq(info.subgroup_sizes[2], 32);
    ck_assert_int_eq(info.has_fp16, 1);
    ck_assert_int_eq(info.has_bf16, 1);
    ck_assert_int_eq(info.has_f32_atomic_add, 0);
    ck_assert_int_eq(info.integrated, 0);
    ck_assert_uint_eq(info.vendor_id, 0x8086);
    ck_assert_uint_eq(info.device_id, 0x56A0);
}
END_TEST

START_TEST(intel_gpus_classified_by_pci_id)
{
    static const struct {
        uint32_t id;
        sdpa_device_class_t expected;
    } cases[] = {
            {0x9A49, SDPA_DEVICE_CLASS_XE_LP},  {0x4680, SDPA_DEVICE_CLASS_XE_LP},
            {0x46A6, SDPA_DEVICE_CLASS_XE_LP},  {0xA7A0, SDPA_DEVICE_CLASS_XE_LP},
            {0x4905, SDPA_DEVICE_CLASS_XE_LP},  {0x56A0, SDPA_DEVICE_CLASS_XE_HPG},
            {0x5690, SDPA_DEVICE_CLASS_XE_HPG}, {0x56C0, SDPA_DEVICE_CLASS_XE_HPG},
            {0x7D55, SDPA_DEVICE_CLASS_XE_HPG}, {0x7DD5, SDPA_DEVICE_CLASS_XE_HPG},
            {0x0BD5, SDPA_DEVICE_CLASS_XE_HPC}, {0x0B69, SDPA_DEVICE_CLASS_XE_HPC},
            {0x64A0, SDPA_DEVICE_CLASS_XE2},    {0x6420, SDPA_DEVICE_CLASS_XE2},
            {0xE20B, SDPA_DEVICE_CLASS_XE2},    {0xE211, SDPA_DEVICE_CLASS_XE2},
            {0xB080, SDPA_DEVICE_CLASS_XE3},    {0xFD80, SDPA_DEVICE_CLASS_XE3},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ze_device_structs_t s;
        /* A misleading name: the id decides. */
        make_structs(ZE_DEVICE_TYPE_GPU, 0x8086, cases[i].id, "Intel(R) Arc(TM) A770 Graphics", &s);
        sdpa_device_info_t info = info_of(&s);
        ck_assert_msg(info.device_class == cases[i].expected, "id 0x%04X: class %s, expected %s",
                      cases[i].id, sdpa_device_class_name(info.device_class),
                      sdpa_device_class_name(cases[i].expected));
    }
}
END_TEST

START_TEST(unknown_intel_ids_classified_by_name)
{
    static const struct {
        const char *name;
        sdpa_device_class_t expected;
    } cases[] = {
            {"Intel(R) Data Center GPU Max 1100", SDPA_DEVICE_CLASS_XE_HPC},
            {"Intel(R) Data Center GPU Flex 170", SDPA_DEVICE_CLASS_XE_HPG},
            {"Intel(R) Arc(TM) B570 Graphics", SDPA_DEVICE_CLASS_XE2},
            {"Intel(R) Arc(TM) Pro B60 Graphics", SDPA_DEVICE_CLASS_XE2},
            {"Intel(R) Arc(TM) 140V GPU (16GB)", SDPA_DEVICE_CLASS_XE2},
            {"Intel(R) Arc(TM) A380 Graphics", SDPA_DEVICE_CLASS_XE_HPG},
            {"Intel(R) Arc(TM) Pro A60M Graphics", SDPA_DEVICE_CLASS_XE_HPG},
            {"Intel(R) Iris(R) Xe Graphics", SDPA_DEVICE_CLASS_XE_LP},
            {"Intel(R) Graphics [0x1234]", SDPA_DEVICE_CLASS_UNKNOWN_GPU},
            {"", SDPA_DEVICE_CLASS_UNKNOWN_GPU},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ze_device_structs_t s;
        make_structs(ZE_DEVICE_TYPE_GPU, 0x8086, 0x1234, cases[i].name, &s);
        sdpa_device_info_t info = info_of(&s);
        ck_assert_msg(info.device_class == cases[i].expected, "\"%s\": class %s, expected %s",
                      cases[i].name, sdpa_device_class_name(info.device_class),
                      sdpa_device_class_name(cases[i].expected));
    }
    ck_assert_int_eq(sdpa_device_class_of_intel_gpu(0x1234, NULL), SDPA_DEVICE_CLASS_UNKNOWN_GPU);
}
END_TEST

START_TEST(other_vendors_are_unknown_gpus)
{
    ze_device_structs_t s;
    make_structs(ZE_DEVICE_TYPE_GPU, 0x10DE, 0x56A0, "Intel(R) Arc(TM) A770 Graphics", &s);
    ck_assert_int_eq(info_of(&s).device_class, SDPA_DEVICE_CLASS_UNKNOWN_GPU);
}
END_TEST

START_TEST(flags_and_limits_copied)
{
    ze_device_structs_t s;
    make_structs(ZE_DEVICE_TYPE_GPU, 0x8086, 0x64A0, "Intel(R) Arc(TM) 140V GPU", &s);
    s.props.flags = ZE_DEVICE_PROPERTY_FLAG_INTEGRATED;
    s.module.flags = ZE_DEVICE_MODULE_FLAG_FP64; /* no fp16 */
    s.compute.numSubGroupSizes = 100;            /* nonsense: capped at the array size */
    for (int i = 0; i < ZE_SUBGROUPSIZE_COUNT; i++)
        s.compute.subGroupSizes[i] = 8u << (i % 3);
    sdpa_device_info_t info = info_of(&s);
    ck_assert_int_eq(info.integrated, 1);
    ck_assert_int_eq(info.has_fp16, 0);
    ck_assert_uint_eq(info.num_subgroup_sizes, SDPA_DEVICE_MAX_SUBGROUP_SIZES);
    ck_assert_uint_eq(info.subgroup_sizes[7], 16);
}
END_TEST

START_TEST(name_is_terminated_even_if_driver_fills_all_bytes)
{
    ze_device_structs_t s;
    make_structs(ZE_DEVICE_TYPE_GPU, 0x8086, 0x0BD5, "", &s);
    memset(s.props.name, 'x', sizeof(s.props.name));
    sdpa_device_info_t info = info_of(&s);
    ck_assert_uint_eq(strlen(info.name), sizeof(info.name) - 1);
}
END_TEST

START_TEST(float_atomics_found_in_pnext_chain)
{
    ze_device_structs_t s;
    make_structs(ZE_DEVICE_TYPE_GPU, 0x8086, 0x0BD5, "PVC", &s);
    ze_float_atomic_ext_properties_t atomics;
    memset(&atomics, 0, sizeof(atomics));
    atomics.stype = ZE_STRUCTURE_TYPE_FLOAT_ATOMIC_EXT_PROPERTIES;
    atomics.fp32Flags = ZE_DEVICE_FP_ATOMIC_EXT_FLAG_GLOBAL_ADD;
    /* Behind another extension struct. */
    ze_device_compute_properties_t other;
    memset(&other, 0, sizeof(other));
    other.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES;
    other.pNext = &atomics;
    s.module.pNext = &other;
    ck_assert_int_eq(info_of(&s).has_f32_atomic_add, 1);

    atomics.fp32Flags = ZE_DEVICE_FP_ATOMIC_EXT_FLAG_GLOBAL_LOAD_STORE;
    ck_assert_int_eq(info_of(&s).has_f32_atomic_add, 0);
}
END_TEST

START_TEST(subgroup_size_by_class)
{
    static const struct {
        sdpa_device_class_t c;
        uint32_t n, sizes[5], expected;
    } cases[] = {
            /* 16, then 8 ... */
            {SDPA_DEVICE_CLASS_CPU, 5, {4, 8, 16, 32, 64}, 16},
            {SDPA_DEVICE_CLASS_UNKNOWN_GPU, 2, {8, 32}, 8},
            {SDPA_DEVICE_CLASS_CPU, 2, {4, 64}, 0},
            {SDPA_DEVICE_CLASS_CPU, 0, {0}, 0},
            /* ... never 32, for which no variant is built ... */
            {SDPA_DEVICE_CLASS_XE3, 1, {32}, 0},
            {SDPA_DEVICE_CLASS_UNKNOWN_GPU, 2, {32, 64}, 0},
            /* ... 16 only from Xe-HPC on, which have no SIMD8 ... */
            {SDPA_DEVICE_CLASS_XE_HPC, 2, {16, 32}, 16},
            {SDPA_DEVICE_CLASS_XE2, 3, {8, 16, 32}, 16},
            {SDPA_DEVICE_CLASS_XE_HPC, 2, {8, 32}, 0},
            {SDPA_DEVICE_CLASS_XE3, 2, {8, 32}, 0},
            /* ... and 8, then 16 on Xe-LP and Xe-HPG. */
            {SDPA_DEVICE_CLASS_XE_HPG, 3, {8, 16, 32}, 8},
            {SDPA_DEVICE_CLASS_XE_LP, 3, {8, 16, 32}, 8},
            {SDPA_DEVICE_CLASS_XE_HPG, 2, {16, 32}, 16},
            {SDPA_DEVICE_CLASS_XE_LP, 1, {32}, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sdpa_device_info_t info;
        memset(&info, 0, sizeof(info));
        info.device_class = cases[i].c;
        info.num_subgroup_sizes = cases[i].n;
        memcpy(info.subgroup_sizes, cases[i].sizes, sizeof(cases[i].sizes));
        ck_assert_msg(sdpa_device_subgroup_size(&info) == cases[i].expected, "case %zu: %u", i,
                      sdpa_device_subgroup_size(&info));
        ck_assert_int_eq(sdpa_device_supports_subgroup(&info, cases[i].sizes[0]), cases[i].n > 0);
        /* Whatever is chosen has both kernels' SPIR-V variants. */
        uint32_t sg = cases[i].expected;
        if (sg) {
            ck_assert_ptr_nonnull(sdpa_spirv_find(SDPA_FWD_SOURCE, 128, (int)sg));
            ck_assert_ptr_nonnull(
                    sdpa_spirv_find(SDPA_BWD_SOURCE, SDPA_BWD_VARIANT_D_MAX, (int)sg));
        }
    }
}
END_TEST

START_TEST(class_names)
{
    ck_assert_str_eq(sdpa_device_class_name(SDPA_DEVICE_CLASS_CPU), "cpu");
    ck_assert_str_eq(sdpa_device_class_name(SDPA_DEVICE_CLASS_XE_LP), "xe_lp");
    ck_assert_str_eq(sdpa_device_class_name(SDPA_DEVICE_CLASS_XE_HPG), "xe_hpg");
    ck_assert_str_eq(sdpa_device_class_name(SDPA_DEVICE_CLASS_XE_HPC), "xe_hpc");
    ck_assert_str_eq(sdpa_device_class_name(SDPA_DEVICE_CLASS_XE2), "xe2");
    ck_assert_str_eq(sdpa_device_class_name(SDPA_DEVICE_CLASS_XE3), "xe3");
    ck_assert_str_eq(sdpa_device_class_name(SDPA_DEVICE_CLASS_UNKNOWN_GPU), "unknown_gpu");
    ck_assert_str_eq(sdpa_device_class_name((sdpa_device_class_t)99), "invalid");
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_ONCE(cpu_device_is_cpu_class_whatever_its_id),
            TEST_ONCE(intel_gpus_classified_by_pci_id),
            TEST_ONCE(unknown_intel_ids_classified_by_name),
            TEST_ONCE(other_vendors_are_unknown_gpus),
            TEST_ONCE(flags_and_limits_copied),
            TEST_ONCE(name_is_terminated_even_if_driver_fills_all_bytes),
            TEST_ONCE(float_atomics_found_in_pnext_chain),
            TEST_ONCE(subgroup_size_by_class),
            TEST_ONCE(class_names),
    };
    const test_suite_t suite = {.name = "device"};
    return test_run_table(&suite, tests, TEST_COUNT(tests));
}
