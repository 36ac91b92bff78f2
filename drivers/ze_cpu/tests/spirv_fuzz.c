/* spirv_fuzz.c - one fuzz input through the SPIR-V reader, and its promises. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spirv_fuzz.h"
#include "spirv_reflect.h"

static void broken(const char *what, unsigned a, unsigned b)
{
    fprintf(stderr, "spirv_reflect broke a promise: %s (%u, %u)\n", what, a, b);
    abort();
}

static void check_arg(const spirv_kernel_arg_t *arg, unsigned index)
{
    switch (arg->kind) {
    case SPIRV_ARG_VALUE:
        if (arg->size == 0 || arg->size > SPIRV_MAX_VALUE_BYTES)
            broken("value argument size out of range", index, arg->size);
        break;
    case SPIRV_ARG_GLOBAL_POINTER:
        if (arg->size != 8)
            broken("pointer argument is not 8 bytes", index, arg->size);
        break;
    case SPIRV_ARG_LOCAL_POINTER:
        if (arg->size != sizeof(size_t))
            broken("local argument is not a size_t", index, arg->size);
        break;
    case SPIRV_ARG_UNSUPPORTED:
        if (arg->size != 0)
            broken("unsupported argument has a size", index, arg->size);
        break;
    default:
        broken("argument of no kind", index, (unsigned)arg->kind);
    }
}

static void check_reflection(const spirv_reflection_t *r, size_t module_bytes)
{
    for (uint32_t k = 0; k < r->num_kernels; k++) {
        const spirv_kernel_info_t *kernel = &r->kernels[k];
        if (kernel->name == NULL || strlen(kernel->name) >= module_bytes)
            broken("kernel name not from the module", k, 0);
        if (spirv_find_kernel(r, kernel->name) == NULL)
            broken("kernel not found by its name", k, 0);
        if (kernel->num_args > 0 && kernel->args == NULL)
            broken("arguments without an array", k, kernel->num_args);
        for (uint32_t i = 0; i < kernel->num_args; i++)
            check_arg(&kernel->args[i], i);
    }
    for (uint32_t c = 0; c < r->num_spec_constants; c++) {
        const spirv_spec_constant_t *constant = &r->spec_constants[c];
        if (constant->size != 1 && constant->size != 2 && constant->size != 4 &&
            constant->size != 8)
            broken("specialization constant size", constant->spec_id, constant->size);
        if (spirv_find_spec_constant(r, constant->spec_id) != constant)
            broken("specialization constant listed twice", constant->spec_id, c);
    }
}

int spirv_fuzz_one(const uint8_t *data, size_t size)
{
    size_t num_words = size / 4;
    uint32_t *words = malloc(num_words ? num_words * 4 : 1);
    if (words == NULL)
        return 0;
    memcpy(words, data, num_words * 4);
    spirv_reflection_t *r = NULL;
    char why[128];
    memset(why, 0x55, sizeof why);
    int accepted = spirv_reflect(words, num_words, &r, why, sizeof why) == 0;
    if (accepted) {
        if (r == NULL)
            broken("success without a reflection", 0, 0);
        check_reflection(r, num_words * 4);
    } else if (r != NULL || memchr(why, '\0', sizeof why) == NULL || why[0] == '\0') {
        broken("refusal without a reason", 0, 0);
    }
    spirv_reflection_free(r);
    free(words);
    return accepted;
}
