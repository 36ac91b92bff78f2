/*
 * kernel_args_host.h - the host's view of one argument table (see
 * kernel_args.h). No include guard: included once per table, after
 *
 *     #define SDPA_ARGS_FILE "sdpa_fwd_args.def"   the table
 *     #define SDPA_ARGS_PREFIX SDPA_FWD_ARG_       index names: SDPA_FWD_ARG_K ...
 *     #define SDPA_ARGS_NAME sdpa_fwd_args         type and table names
 *
 * it declares enum <NAME>_index {<PREFIX><ROW>..., <PREFIX>COUNT}, the struct
 * <NAME>_t with one field per row (SDPA_ARG_HOST_<kind>, named after the
 * row) and the row table <NAME>_table (defined in src/plan/arg_tables.c),
 * then undefines the three parameters.
 */
#include "kernel_args.h"

enum SDPA_ARGS_CAT(SDPA_ARGS_NAME, _index) {
#define SDPA_ARG(name, type, kind, meaning) SDPA_ARGS_CAT(SDPA_ARGS_PREFIX, name),
#define SDPA_ARG_LAST(name, type, kind, meaning)                                                   \
    SDPA_ARGS_CAT(SDPA_ARGS_PREFIX, name), SDPA_ARGS_CAT(SDPA_ARGS_PREFIX, COUNT)
#include SDPA_ARGS_FILE
#undef SDPA_ARG
#undef SDPA_ARG_LAST
};

typedef struct SDPA_ARGS_NAME {
#define SDPA_ARG(name, type, kind, meaning) SDPA_ARG_HOST_##kind name;
#define SDPA_ARG_LAST SDPA_ARG
#include SDPA_ARGS_FILE
#undef SDPA_ARG
#undef SDPA_ARG_LAST
} SDPA_ARGS_CAT(SDPA_ARGS_NAME, _t);

extern const sdpa_arg_table_t SDPA_ARGS_CAT(SDPA_ARGS_NAME, _table);

#undef SDPA_ARGS_FILE
#undef SDPA_ARGS_PREFIX
#undef SDPA_ARGS_NAME
