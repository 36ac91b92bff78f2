/*
 * kernel_args.h - how a kernel's argument list is kept once for both sides.
 *
 * Every kernel's arguments are one X-macro table, <kernel>_args.def, whose
 * rows, in argument order, are
 *
 *     SDPA_ARG(NAME, OpenCL C type, host kind, "meaning")
 *
 * with the last row SDPA_ARG_LAST (a parameter list has no trailing comma).
 * Host kinds: PTR (a USM pointer, NULL when the problem does not use it),
 * INT (int32_t), LONG (int64_t), FLOAT (float), LOCAL (a local-memory size in
 * bytes, set with a NULL value).
 *
 * From the table come:
 *   - the kernel's parameter list (OpenCL C), named after the rows:
 *         kernel void f(
 *         #include "f_args.def"
 *         )
 *   - on the host (kernel_args_host.h): the enum of argument indices
 *     <PREFIX>_<NAME> and <PREFIX>_COUNT, a struct with one field per row
 *     (the value to pass), and a row table (src/plan/arg_tables.c) that
 *     sets every argument from that struct and that the plugin checks the
 *     module's argument count against when it creates the kernel.
 * Adding an argument is one row, plus its value where the struct is filled.
 */
#ifndef SDPA_SPIRV_KERNEL_ARGS_H
#define SDPA_SPIRV_KERNEL_ARGS_H

#ifdef __OPENCL_C_VERSION__

#define SDPA_ARG(name, type, kind, meaning) type name,
#define SDPA_ARG_LAST(name, type, kind, meaning) type name

#else /* host */

#include <stddef.h>
#include <stdint.h>

/* The host value of a row of each kind (LOCAL: the size in bytes). */
#define SDPA_ARG_HOST_PTR const void *
#define SDPA_ARG_HOST_INT int32_t
#define SDPA_ARG_HOST_LONG int64_t
#define SDPA_ARG_HOST_FLOAT float
#define SDPA_ARG_HOST_LOCAL uint32_t

typedef enum sdpa_arg_kind {
    SDPA_ARG_KIND_PTR,
    SDPA_ARG_KIND_INT,
    SDPA_ARG_KIND_LONG,
    SDPA_ARG_KIND_FLOAT,
    SDPA_ARG_KIND_LOCAL
} sdpa_arg_kind_t;

/* One row as the host sees it: where its value lies in the table's struct. */
typedef struct sdpa_arg_row {
    const char *name; /* the row's NAME */
    sdpa_arg_kind_t kind;
    size_t offset, size; /* of the struct field */
} sdpa_arg_row_t;

/* A whole table: the rows in argument order. */
typedef struct sdpa_arg_table {
    const char *file; /* the .def, for messages */
    const sdpa_arg_row_t *rows;
    uint32_t count;
} sdpa_arg_table_t;

#define SDPA_ARGS_CAT_(a, b) a##b
#define SDPA_ARGS_CAT(a, b) SDPA_ARGS_CAT_(a, b)

#endif /* host */

#endif /* SDPA_SPIRV_KERNEL_ARGS_H */
