/* arg_tables.c - the row tables of the kernels' argument lists, from the
 * .def files, and the argument-count check. */
#include "arg_tables.h"
#include "error.h"

/* A row: its name, kind, and where the value lies in the table's struct
 * (ARGS, defined before each table). */
#define SDPA_ARG(name, type, kind, meaning)                                                        \
    {#name, SDPA_ARG_KIND_##kind, offsetof(ARGS, name), sizeof(((ARGS *)0)->name)},
#define SDPA_ARG_LAST SDPA_ARG

#define ARGS sdpa_fwd_args_t
static const sdpa_arg_row_t fwd_rows[] = {
#include "sdpa_fwd_args.def"
};
#undef ARGS

#define ARGS sdpa_bwd_pre_args_t
static const sdpa_arg_row_t bwd_pre_rows[] = {
#include "sdpa_bwd_pre_args.def"
};
#undef ARGS

#define ARGS sdpa_bwd_args_t
static const sdpa_arg_row_t bwd_rows[] = {
#include "sdpa_bwd_args.def"
};
#undef ARGS

#define ARGS sdpa_bwd_post_args_t
static const sdpa_arg_row_t bwd_post_rows[] = {
#include "sdpa_bwd_post_args.def"
};
#undef ARGS

#define ARGS sdpa_merge_kernel_args_t
static const sdpa_arg_row_t merge_rows[] = {
#include "sdpa_merge_args.def"
};
#undef ARGS

#undef SDPA_ARG
#undef SDPA_ARG_LAST

#define TABLE(file, rows, count)                                                                   \
    {file, rows, sizeof(rows) / sizeof(rows[0])};                                                  \
    _Static_assert(sizeof(rows) / sizeof(rows[0]) == count, file ": one row per index")

const sdpa_arg_table_t sdpa_fwd_args_table =
        TABLE("sdpa_fwd_args.def", fwd_rows, SDPA_FWD_ARG_COUNT);
const sdpa_arg_table_t sdpa_bwd_pre_args_table =
        TABLE("sdpa_bwd_pre_args.def", bwd_pre_rows, SDPA_BWD_PRE_ARG_COUNT);
const sdpa_arg_table_t sdpa_bwd_args_table =
        TABLE("sdpa_bwd_args.def", bwd_rows, SDPA_BWD_ARG_COUNT);
const sdpa_arg_table_t sdpa_bwd_post_args_table =
        TABLE("sdpa_bwd_post_args.def", bwd_post_rows, SDPA_BWD_POST_ARG_COUNT);
const sdpa_arg_table_t sdpa_merge_kernel_args_table =
        TABLE("sdpa_merge_args.def", merge_rows, SDPA_MERGE_ARG_COUNT);

sdpa_status_t sdpa_kernel_args_check(const sdpa_arg_table_t *table, const char *kernel,
                                     const char *variant, uint32_t declared)
{
    if (declared != table->count)
        return sdpa_fail(SDPA_ERROR_DEVICE,
                         "kernel %s of SPIR-V variant %s takes %u arguments, %s lists %u: the "
                         "module was not built from this library's kernels",
                         kernel, variant, declared, table->file, table->count);
    return SDPA_SUCCESS;
}
