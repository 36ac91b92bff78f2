/* test_kernel_contract.c - the contract between the host and the embedded
 * kernels: the argument tables (the spirv/ .def tables) agree with the
 * kernels' parameter lists in every SPIR-V variant, the plugin's check of a
 * module's argument count says what is wrong, spec_constants.def has a
 * row for exactly the constants some kernel reads, and the embedded
 * variants are the rows of variants.def, each found by its fields. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "arg_tables.h"
#include "error.h"
#include "spec_table.h"
#include "spirv_registry.h"
#include "spirv_variants.h"

/* The kernels of each source, the table each takes and how many SPIR-V
 * variants the source has at least (the merge kernel has one: no head-size
 * bucket, no sub-group size). */
typedef struct kernel_entry {
    const char *source, *kernel;
    const sdpa_arg_table_t *args;
    int min_variants;
} kernel_entry_t;

static const kernel_entry_t kernels[] = {
        {SDPA_FWD_SOURCE, SDPA_FWD_KERNEL, &sdpa_fwd_args_table, 2},
        {SDPA_FWD_SOURCE SDPA_FWD_GLOBAL_KV_FIELD, SDPA_FWD_KERNEL, &sdpa_fwd_args_table, 2},
        {SDPA_BWD_SOURCE, SDPA_BWD_PREPROCESS_KERNEL, &sdpa_bwd_pre_args_table, 2},
        {SDPA_BWD_SOURCE, SDPA_BWD_KERNEL, &sdpa_bwd_args_table, 2},
        {SDPA_BWD_SOURCE, SDPA_BWD_DQ_KERNEL, &sdpa_bwd_args_table, 2},
        {SDPA_BWD_SOURCE, SDPA_BWD_POSTPROCESS_KERNEL, &sdpa_bwd_post_args_table, 2},
        {SDPA_MERGE_SOURCE, SDPA_MERGE_KERNEL, &sdpa_merge_kernel_args_table, 1},
};
#define KERNEL_COUNT (sizeof(kernels) / sizeof(kernels[0]))

/* SPIR-V opcodes read below. */
enum { OP_ENTRY_POINT = 15, OP_FUNCTION = 54, OP_FUNCTION_PARAMETER = 55 };

/* The number of parameters of entry point `name` in module m, or -1 if m
 * has no such entry point. */
static int spirv_entry_params(const sdpa_spirv_module_t *m, const char *name)
{
    const uint32_t *w = (const uint32_t *)m->code;
    const size_t n = m->size / 4;
    uint32_t function = 0;
    for (size_t i = 5; i < n && (w[i] >> 16); i += w[i] >> 16)
        if ((w[i] & 0xffff) == OP_ENTRY_POINT && strcmp((const char *)&w[i + 3], name) == 0)
            function = w[i + 2];
    if (!function)
        return -1;
    int params = -1;
    for (size_t i = 5; i < n && (w[i] >> 16); i += w[i] >> 16) {
        uint32_t op = w[i] & 0xffff;
        if (op == OP_FUNCTION)
            params = w[i + 2] == function ? 0 : -1;
        else if (op == OP_FUNCTION_PARAMETER && params >= 0)
            params++;
        else if (params >= 0)
            return params;
    }
    return params;
}

START_TEST(every_variant_takes_the_table_arguments)
{
    const kernel_entry_t *e = &kernels[_i];
    int variants = 0;
    for (size_t v = 0; v < sdpa_spirv_module_count; v++) {
        const sdpa_spirv_module_t *m = &sdpa_spirv_modules[v];
        if (strcmp(m->source, e->source) != 0)
            continue;
        variants++;
        int params = spirv_entry_params(m, e->kernel);
        ck_assert_msg(params == (int)e->args->count, "%s in %s.%d.%d takes %d arguments, %s lists %u",
                      e->kernel, m->source, m->d_max, m->subgroup_size, params, e->args->file,
                      e->args->count);
    }
    ck_assert_int_ge(variants, e->min_variants);
}
END_TEST

static size_t kind_size(sdpa_arg_kind_t kind)
{
    switch (kind) {
    case SDPA_ARG_KIND_PTR:
        return sizeof(void *);
    case SDPA_ARG_KIND_LONG:
        return 8;
    default:
        return 4;
    }
}

START_TEST(tables_are_well_formed)
{
    const sdpa_arg_table_t *t = kernels[_i].args;
    ck_assert_uint_gt(t->count, 0);
    for (uint32_t i = 0; i < t->count; i++) {
        const sdpa_arg_row_t *r = &t->rows[i];
        ck_assert_uint_eq(r->size, kind_size(r->kind));
        if (i > 0)
            ck_assert_uint_gt(r->offset, t->rows[i - 1].offset);
        for (uint32_t j = 0; j < i; j++)
            ck_assert_str_ne(r->name, t->rows[j].name);
    }
}
END_TEST

START_TEST(count_check_names_kernel_variant_and_table)
{
    ck_assert_int_eq(sdpa_kernel_args_check(&sdpa_fwd_args_table, "sdpa_fwd", "sdpa_fwd.64.16",
                                            sdpa_fwd_args_table.count),
                     SDPA_SUCCESS);
    ck_assert_int_eq(sdpa_kernel_args_check(&sdpa_bwd_args_table, "sdpa_bwd_dq", "sdpa_bwd.0.8",
                                            sdpa_bwd_args_table.count + 1),
                     SDPA_ERROR_DEVICE);
    const char *msg = sdpa_error_message();
    ck_assert_ptr_nonnull(strstr(msg, "sdpa_bwd_dq"));
    ck_assert_ptr_nonnull(strstr(msg, "sdpa_bwd.0.8"));
    ck_assert_ptr_nonnull(strstr(msg, "sdpa_bwd_args.def"));
    char counts[64];
    snprintf(counts, sizeof(counts), "takes %u arguments", sdpa_bwd_args_table.count + 1);
    ck_assert_ptr_nonnull(strstr(msg, counts));
}
END_TEST

/* The compiler keeps only the constants a variant's kernels read (the build
 * records them, spirv_registry.h): a row no variant declares is dead. */
START_TEST(every_spec_constant_row_is_read_by_some_variant)
{
    for (size_t i = 0; i < sdpa_spec_constant_count; i++) {
        const sdpa_spec_constant_info_t *c = &sdpa_spec_constant_table[i];
        int declared = 0;
        for (size_t v = 0; v < sdpa_spirv_module_count && !declared; v++)
            declared = sdpa_spirv_has_spec_id(&sdpa_spirv_modules[v], c->id);
        ck_assert_msg(declared, "%s (SpecId %u) is read by no kernel: retire its row", c->name,
                      c->id);
    }
}
END_TEST

START_TEST(every_declared_spec_constant_has_a_row)
{
    for (size_t v = 0; v < sdpa_spirv_module_count; v++) {
        const sdpa_spirv_module_t *m = &sdpa_spirv_modules[v];
        for (size_t i = 0; i < m->spec_id_count; i++)
            ck_assert_msg(sdpa_spec_constant_find(m->spec_ids[i]) != NULL,
                          "%s.%d.%d declares SpecId %u, which spec_constants.def lacks", m->source,
                          m->d_max, m->subgroup_size, m->spec_ids[i]);
    }
}
END_TEST

/* The modules of row v of variants.def (one per head-size bucket if it is
 * bucketed), each in the registry, and the row found by its own fields:
 * what the build lists, what is embedded and what a plan can choose agree. */
START_TEST(every_variant_row_is_built_and_found_by_its_fields)
{
    size_t modules = 0;
    for (size_t v = 0; v < sdpa_spirv_variant_count; v++) {
        const sdpa_spirv_variant_t *row = &sdpa_spirv_variants[v];
        size_t source_length;
        sdpa_spirv_fields_t fields;
        ck_assert_msg(sdpa_spirv_variant_fields(row->name, &source_length, &fields),
                      "variants.def: %s has a field variants.def does not list", row->name);
        char source[64];
        ck_assert_uint_lt(source_length, sizeof(source));
        memcpy(source, row->name, source_length);
        source[source_length] = '\0';
        const int bucketed = row->d_max == SDPA_SPIRV_EACH_BUCKET;
        const size_t count = bucketed ? sdpa_spirv_head_size_bucket_count : 1;
        for (size_t b = 0; b < count; b++) {
            const int d_max = bucketed ? sdpa_spirv_head_size_buckets[b] : row->d_max;
            ck_assert_msg(sdpa_spirv_find(row->name, d_max, row->subgroup_size) != NULL,
                          "%s.%d.%d is a row of variants.def but not embedded", row->name, d_max,
                          row->subgroup_size);
            const char *found = sdpa_spirv_variant_name(source, &fields, d_max, row->subgroup_size);
            ck_assert_msg(found == row->name, "%s.%d.%d: its fields find %s", row->name, d_max,
                          row->subgroup_size, found ? found : "nothing");
            modules++;
        }
    }
    ck_assert_uint_eq(modules, sdpa_spirv_module_count);
}
END_TEST

/* Names with a field variants.def does not list, or one field twice, are
 * refused; tiles without a row are not found. */
START_TEST(variant_fields_refuse_what_variants_def_lacks)
{
    size_t length;
    sdpa_spirv_fields_t f;
    ck_assert_int_eq(sdpa_spirv_variant_fields("sdpa_xe_fwd-k32-d64-cvt-emu", &length, &f), 1);
    ck_assert_uint_eq(length, strlen("sdpa_xe_fwd"));
    ck_assert_int_eq(f.keys, 32);
    ck_assert_int_eq(f.dsub, 64);
    ck_assert_uint_eq(f.switches, SDPA_SPIRV_FIELD_CVT | SDPA_SPIRV_FIELD_EMU);
    ck_assert_int_eq(sdpa_spirv_variant_fields("sdpa_fwd-kvg", &length, &f), 1);
    ck_assert_uint_eq(f.switches, SDPA_SPIRV_FIELD_KVG);
    const char *bad[] = {"sdpa_xe_fwd-k32-x", "sdpa_xe_fwd-k32-k16", "sdpa_bwd-fadd-fadd",
                         "sdpa_xe_fwd-k",     "sdpa_xe_fwd-k0",      "sdpa_xe_fwd-d6x",
                         "sdpa_fwd-"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_msg(!sdpa_spirv_variant_fields(bad[i], &length, &f), "%s accepted", bad[i]);
    const sdpa_spirv_fields_t k48 = {48, 64, 0}, k32 = {32, 64, 0};
    ck_assert_ptr_null(sdpa_spirv_variant_name("sdpa_xe_fwd", &k48, 0, 16));
    ck_assert_ptr_null(sdpa_spirv_variant_name("sdpa_xe_fwd", &k32, 0, 8));
    ck_assert_ptr_null(sdpa_spirv_variant_name("sdpa_xe", &k32, 0, 16));
    ck_assert_str_eq(sdpa_spirv_variant_name("sdpa_xe_fwd", &k32, 0, 16), "sdpa_xe_fwd-k32-d64");
    const sdpa_spirv_fields_t plain = {0, 0, 0};
    ck_assert_str_eq(sdpa_spirv_variant_name("sdpa_fwd", &plain, 128, 16), "sdpa_fwd");
    ck_assert_ptr_null(sdpa_spirv_variant_name("sdpa_fwd", &plain, 100, 16));
}
END_TEST

int main(void)
{
    Suite *suite = suite_create("kernel_contract");
    TCase *tc = tcase_create("arguments");
    tcase_add_loop_test(tc, every_variant_takes_the_table_arguments, 0, KERNEL_COUNT);
    tcase_add_loop_test(tc, tables_are_well_formed, 0, KERNEL_COUNT);
    tcase_add_test(tc, count_check_names_kernel_variant_and_table);
    suite_add_tcase(suite, tc);
    TCase *constants = tcase_create("spec_constants");
    tcase_add_test(constants, every_spec_constant_row_is_read_by_some_variant);
    tcase_add_test(constants, every_declared_spec_constant_has_a_row);
    suite_add_tcase(suite, constants);
    TCase *variants = tcase_create("variants");
    tcase_add_test(variants, every_variant_row_is_built_and_found_by_its_fields);
    tcase_add_test(variants, variant_fields_refuse_what_variants_def_lacks);
    suite_add_tcase(suite, variants);
    return test_run_suite(suite);
}
