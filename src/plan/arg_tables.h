/*
 * arg_tables.h - the row tables of the kernels' argument lists
 * (spirv/abi/kernel_args.h says how the .def tables make them) and the check a
 * backend makes when it creates a kernel.
 */
#ifndef SDPA_CORE_ARG_TABLES_H
#define SDPA_CORE_ARG_TABLES_H

#include <stdint.h>

#include "kernel_abi.h"
#include "kernel_abi_bwd.h"
#include "kernel_abi_merge.h"
#include "sdpa.h"

/* Checks that kernel `kernel` of SPIR-V variant `variant`, which declares
 * `declared` arguments (zeKernelGetProperties -> numKernelArgs), takes the
 * table's. Returns SDPA_SUCCESS, or SDPA_ERROR_DEVICE with a message naming
 * the kernel, the variant, both counts and the table (a stale or foreign
 * module: the embedded ones are built from the same table). */
sdpa_status_t sdpa_kernel_args_check(const sdpa_arg_table_t *table, const char *kernel,
                                     const char *variant, uint32_t declared);

#endif /* SDPA_CORE_ARG_TABLES_H */
