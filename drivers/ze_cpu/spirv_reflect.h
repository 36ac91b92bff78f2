/*
 * spirv_reflect.h - what the driver must learn from a SPIR-V module before
 * OpenCL builds it: the kernels and the kind and size of each parameter
 * (Level Zero passes a pointer as 8 bytes, indistinguishable from a long,
 * but OpenCL must be told which is which), and the size of each
 * specialization constant (ze_module_constants_t gives values without
 * sizes).
 */
#ifndef ZE_CPU_SPIRV_REFLECT_H
#define ZE_CPU_SPIRV_REFLECT_H

#include <stddef.h>
#include <stdint.h>

typedef enum spirv_arg_kind {
    SPIRV_ARG_VALUE,          /* scalar, vector or struct passed by value */
    SPIRV_ARG_GLOBAL_POINTER, /* global, constant or generic pointer: a USM address */
    SPIRV_ARG_LOCAL_POINTER,  /* local memory sized at launch */
    SPIRV_ARG_UNSUPPORTED,    /* image, sampler, pipe, queue, event */
} spirv_arg_kind_t;

/* The largest value argument (or specialization constant type) the reader
 * sizes: a bigger type (an array of a billion ints) makes its argument
 * SPIRV_ARG_UNSUPPORTED instead. OpenCL devices take a few KiB of
 * arguments; this only keeps sizes far from overflow. */
#define SPIRV_MAX_VALUE_BYTES (1u << 20)

typedef struct spirv_kernel_arg {
    spirv_arg_kind_t kind;
    /* A value: 1 to SPIRV_MAX_VALUE_BYTES bytes; a global pointer: 8; a
     * local buffer: sizeof(size_t) (its byte count); unsupported: 0. */
    uint32_t size;
} spirv_kernel_arg_t;

typedef struct spirv_kernel_info {
    char *name;
    uint32_t num_args;
    spirv_kernel_arg_t *args;
    uint32_t required_group_size[3]; /* OpExecutionMode LocalSize, or 0 0 0 */
    uint32_t required_subgroup_size; /* OpExecutionMode SubgroupSize, or 0 */
} spirv_kernel_info_t;

typedef struct spirv_spec_constant {
    uint32_t spec_id;
    uint32_t size; /* bytes of the value: 1 for bool, else the type's width */
} spirv_spec_constant_t;

typedef struct spirv_reflection {
    uint32_t version; /* the header's version word, e.g. 0x00010200 */
    uint32_t num_kernels;
    spirv_kernel_info_t *kernels; /* in OpEntryPoint order */
    uint32_t num_spec_constants;
    spirv_spec_constant_t *spec_constants;
} spirv_reflection_t;

/* Parses num_words words of SPIR-V. On success stores a new reflection in
 * *out (free it with spirv_reflection_free) and returns 0. On a malformed or
 * unsupported module returns -1 and writes a one-line reason into
 * why[why_size]; never reads outside words. */
int spirv_reflect(const uint32_t *words, size_t num_words, spirv_reflection_t **out, char *why,
                  size_t why_size);

/* The kernel called name, or NULL. */
const spirv_kernel_info_t *spirv_find_kernel(const spirv_reflection_t *reflection,
                                             const char *name);

/* The constant with SpecId spec_id, or NULL. */
const spirv_spec_constant_t *spirv_find_spec_constant(const spirv_reflection_t *reflection,
                                                      uint32_t spec_id);

/* Frees everything spirv_reflect allocated; NULL is fine. */
void spirv_reflection_free(spirv_reflection_t *reflection);

#endif /* ZE_CPU_SPIRV_REFLECT_H */
