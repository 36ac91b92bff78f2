/*
 * t_module.c - modules from SPIR-V with specialization constants: every
 * constant type takes effect, defaults apply without constants, two
 * specializations of the same SPIR-V coexist, build flags and logs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec_table.h"
#include "ze_test.h"

/* A constant's default from the one table (spec_constants.def), exactly
 * representable as a double for the probe's five rows. */
#define PROBE_TYPE_int int32_t
#define PROBE_TYPE_uint uint32_t
#define PROBE_TYPE_long int64_t
#define PROBE_TYPE_float float
#define PROBE_TYPE_bool bool
static double default_value_of(uint32_t spec_id)
{
    switch (spec_id) {
#define SDPA_SPEC_CONSTANT(name, id, type, default_value, meaning)                                 \
    case id:                                                                                       \
        return (double)(PROBE_TYPE_##type)(default_value);
#include "spec_constants.def"
#undef SDPA_SPEC_CONSTANT
    }
    ck_abort_msg("no SpecId %u in spec_constants.def", spec_id);
    return 0;
}

static const probe_constants_t constants_a = {123456, 3000000000u, -9000000000123LL, 3.75f, true};
static const probe_constants_t constants_b = {-42, 17u, 1LL << 40, -0.125f, false};

/* What spec_probe writes: the five constants, widened to long. */
static void run_spec_probe(ze_module_handle_t module, int64_t out[5])
{
    ze_kernel_handle_t kernel = ze_test_kernel(module, "spec_probe");
    int64_t *buf = ze_test_alloc_shared(8 * sizeof *buf);
    memset(buf, 0x55, 8 * sizeof *buf);
    ZE_OK(zeKernelSetArgumentValue(kernel, 0, sizeof buf, &buf));
    ZE_OK(zeKernelSetGroupSize(kernel, 1, 1, 1));
    ze_test_launch_sync(kernel, 1, 1, 1);
    memcpy(out, buf, 5 * sizeof *out);
    ze_test_free(buf);
    ZE_OK(zeKernelDestroy(kernel));
}

void ze_test_expect_constants(const char *what, ze_module_handle_t module,
                              const probe_constants_t *c)
{
    int64_t out[5];
    run_spec_probe(module, out);
    float f;
    int32_t bits = (int32_t)out[3];
    memcpy(&f, &bits, sizeof f);
    printf("%s on %s: int %lld (set %d), uint %lld (set %u), long %lld (set %lld), "
           "float %g (set %g), bool %lld (set %d)\n",
           what, ze_test_env()->properties.name, (long long)out[0], c->i, (long long)out[1], c->u,
           (long long)out[2], (long long)c->l, (double)f, (double)c->f, (long long)out[4], c->b);
    fflush(stdout);
    ck_assert_int_eq(out[0], c->i);
    ck_assert_int_eq(out[1], (int64_t)c->u);
    ck_assert_int_eq(out[2], c->l);
    ck_assert_msg(f == c->f, "float constant: kernel read %g, set %g", (double)f, (double)c->f);
    ck_assert_int_eq(out[4], c->b ? 1 : 0);
}

START_TEST(every_constant_type_takes_effect)
{
    ze_test_expect_constants("constants A", ze_test_probe_module(16, &constants_a), &constants_a);
    ze_test_expect_constants("constants B", ze_test_probe_module(16, &constants_b), &constants_b);
}
END_TEST

START_TEST(defaults_without_constants)
{
    const probe_constants_t defaults = {
            (int32_t)default_value_of(SDPA_SC_PROBE_INT),
            (uint32_t)default_value_of(SDPA_SC_PROBE_UINT),
            (int64_t)default_value_of(SDPA_SC_PROBE_LONG),
            (float)default_value_of(SDPA_SC_PROBE_FLOAT),
            default_value_of(SDPA_SC_PROBE_BOOL) != 0,
    };
    ze_test_expect_constants("defaults", ze_test_probe_module(16, NULL), &defaults);
}
END_TEST

/* Two modules from the same SPIR-V, both alive, each with its constants. */
START_TEST(two_specializations_coexist)
{
    ze_module_handle_t ma = ze_test_probe_module(16, &constants_a);
    ze_module_handle_t mb = ze_test_probe_module(16, &constants_b);
    ck_assert_ptr_ne(ma, mb);
    ze_kernel_handle_t ka = ze_test_kernel(ma, "spec_axpb");
    ze_kernel_handle_t kb = ze_test_kernel(mb, "spec_axpb");
    const uint64_t n = 1000;
    int32_t *src = ze_test_alloc_shared(n * sizeof *src);
    int64_t *da = ze_test_alloc_shared(n * sizeof *da);
    int64_t *db = ze_test_alloc_shared(n * sizeof *db);
    for (uint64_t i = 0; i < n; i++)
        src[i] = (int32_t)i - 500;
    ze_kernel_handle_t kernels[2] = {ka, kb};
    int64_t *dsts[2] = {da, db};
    for (int k = 0; k < 2; k++) {
        ZE_OK(zeKernelSetArgumentValue(kernels[k], 0, sizeof src, &src));
        ZE_OK(zeKernelSetArgumentValue(kernels[k], 1, sizeof dsts[k], &dsts[k]));
        ZE_OK(zeKernelSetArgumentValue(kernels[k], 2, sizeof n, &n));
        ZE_OK(zeKernelSetGroupSize(kernels[k], 64, 1, 1));
    }
    /* Interleaved launches on one list: each kernel keeps its module's constants. */
    ze_test_launch_sync(ka, (uint32_t)(n + 63) / 64, 1, 1);
    ze_test_launch_sync(kb, (uint32_t)(n + 63) / 64, 1, 1);
    for (uint64_t i = 0; i < n; i++) {
        ck_assert_int_eq(da[i], (int64_t)src[i] * constants_a.i + constants_a.l);
        ck_assert_int_eq(db[i], (int64_t)src[i] * constants_b.i + constants_b.l);
    }
    ck_assert_int_ne(da[7], db[7]);
    printf("spec_axpb: A gives %lld, B gives %lld for src %d\n", (long long)da[7], (long long)db[7],
           src[7]);
    ze_test_free(db);
    ze_test_free(da);
    ze_test_free(src);
    ZE_OK(zeKernelDestroy(kb));
    ZE_OK(zeKernelDestroy(ka));
}
END_TEST

START_TEST(kernel_names_and_properties)
{
    ze_module_handle_t module = ze_test_probe_module(16, NULL);
    uint32_t count = 0;
    ZE_OK(zeModuleGetKernelNames(module, &count, NULL));
    ck_assert_uint_eq(count, 6);
    const char *names[6];
    ZE_OK(zeModuleGetKernelNames(module, &count, names));
    const char *expected[] = {"spec_probe",     "spec_axpb", "local_reverse",
                              "subgroup_probe", "add_one",   "many_args"};
    for (size_t e = 0; e < 6; e++) {
        bool found = false;
        for (uint32_t i = 0; i < count; i++)
            found |= strcmp(names[i], expected[e]) == 0;
        ck_assert_msg(found, "kernel %s not listed", expected[e]);
    }
    ze_module_properties_t mp = {.stype = ZE_STRUCTURE_TYPE_MODULE_PROPERTIES};
    ZE_OK(zeModuleGetProperties(module, &mp));
    ck_assert_uint_eq(mp.flags, 0);

    ze_kernel_handle_t kernel = ze_test_kernel(module, "spec_axpb");
    ze_kernel_properties_t kp = {.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES};
    ZE_OK(zeKernelGetProperties(kernel, &kp));
    ck_assert_uint_eq(kp.numKernelArgs, 3);
    ck_assert_uint_eq(kp.requiredGroupSizeX, 0);
    char name[32];
    size_t size = 0;
    ZE_OK(zeKernelGetName(kernel, &size, NULL));
    ck_assert_uint_eq(size, strlen("spec_axpb") + 1);
    ZE_OK(zeKernelGetName(kernel, &size, name));
    ck_assert_str_eq(name, "spec_axpb");
    ZE_OK(zeKernelDestroy(kernel));

    for (int sg = 8; sg <= 16; sg += 8) {
        kernel = ze_test_kernel(ze_test_probe_module(sg, NULL), "subgroup_probe");
        ze_kernel_preferred_group_size_properties_t pref = {
                .stype = ZE_STRUCTURE_TYPE_KERNEL_PREFERRED_GROUP_SIZE_PROPERTIES};
        kp.pNext = &pref;
        ZE_OK(zeKernelSetGroupSize(kernel, 64, 1, 1));
        ZE_OK(zeKernelGetProperties(kernel, &kp));
        ck_assert_uint_eq(kp.requiredSubgroupSize, (uint32_t)sg);
        ck_assert_uint_eq(kp.maxSubgroupSize, (uint32_t)sg);
        ck_assert_uint_ge(pref.preferredMultiple, 1);
        kp.pNext = NULL;
        ZE_OK(zeKernelDestroy(kernel));
    }
}
END_TEST

static char *build_log_text(ze_module_build_log_handle_t log)
{
    size_t size = 0;
    ZE_OK(zeModuleBuildLogGetString(log, &size, NULL));
    ck_assert_uint_ge(size, 1);
    char *text = malloc(size);
    ZE_OK(zeModuleBuildLogGetString(log, &size, text));
    ck_assert_uint_eq(strlen(text) + 1, size);
    return text;
}

/* -ze-* flags a CPU cannot honour are accepted; -ze-opt-disable maps to
 * -cl-opt-disable; the kernels still work. The log of a successful build
 * is empty, as Intel's driver leaves it (the conformance suite checks it):
 * the notes on ignored flags go to ZE_CPU_DEBUG. */
START_TEST(build_flags)
{
    const ze_test_env_t *e = ze_test_env();
    const char *flag_sets[] = {
            "-ze-opt-large-register-file -ze-opt-greater-than-4GB-buffer-required",
            "-ze-opt-disable",
    };
    for (size_t f = 0; f < 2; f++) {
        ze_module_desc_t desc = ze_test_probe_module_desc(16);
        desc.pBuildFlags = flag_sets[f];
        ze_module_handle_t module = NULL;
        ze_module_build_log_handle_t log = NULL;
        ZE_OK(zeModuleCreate(e->context, e->device, &desc, &module, &log));
        char *text = build_log_text(log);
        ck_assert_msg(text[0] == '\0', "log of a successful build is not empty:\n%s", text);
        free(text);
        ZE_OK(zeModuleBuildLogDestroy(log));

        ze_kernel_handle_t kernel = ze_test_kernel(module, "add_one");
        int32_t *buf = ze_test_alloc_shared(64 * sizeof *buf);
        for (int i = 0; i < 32; i++)
            buf[i] = i;
        int32_t *dst = buf + 32;
        ZE_OK(zeKernelSetArgumentValue(kernel, 0, sizeof buf, &buf));
        ZE_OK(zeKernelSetArgumentValue(kernel, 1, sizeof dst, &dst));
        ZE_OK(zeKernelSetGroupSize(kernel, 8, 1, 1));
        ze_test_launch_sync(kernel, 4, 1, 1);
        for (int i = 0; i < 32; i++)
            ck_assert_int_eq(dst[i], i + 1);
        ze_test_free(buf);
        ZE_OK(zeKernelDestroy(kernel));
        ZE_OK(zeModuleDestroy(module));
    }
}
END_TEST

Suite *driver_module_suite(void)
{
    const test_entry_t tests[] = {
            TEST_ONCE(every_constant_type_takes_effect),
            TEST_ONCE(defaults_without_constants),
            TEST_ONCE(two_specializations_coexist),
            TEST_ONCE(kernel_names_and_properties),
            TEST_ONCE(build_flags),
    };
    Suite *s = suite_create("module");
    test_add_case(s, "specialization", 0, tests, TEST_COUNT(tests));
    return s;
}
