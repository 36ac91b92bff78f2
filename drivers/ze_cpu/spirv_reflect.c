/*
 * spirv_reflect.c - a single pass over a SPIR-V module that records where
 * each type, constant and function is defined, then answers: which kernels
 * (OpEntryPoint Kernel -> OpFunction -> OpFunctionParameter types), and
 * which specialization constants (OpDecorate SpecId on OpSpecConstant*).
 *
 * Layout rules for value arguments are OpenCL C's (C layout, vec3 padded to
 * vec4), since that is what the host side of a Level Zero program packs.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spirv_reflect.h"

enum {
    SPIRV_MAGIC = 0x07230203,
    MAX_BOUND = 1u << 24, /* ids; a bigger bound is surely corrupt */
    MAX_TYPE_DEPTH = 32,

    OP_MEMORY_MODEL = 14,
    OP_ENTRY_POINT = 15,
    OP_EXECUTION_MODE = 16,
    OP_TYPE_VOID = 19,
    OP_TYPE_BOOL = 20,
    OP_TYPE_INT = 21,
    OP_TYPE_FLOAT = 22,
    OP_TYPE_VECTOR = 23,
    OP_TYPE_ARRAY = 28,
    OP_TYPE_STRUCT = 30,
    OP_TYPE_POINTER = 32,
    OP_CONSTANT = 43,
    OP_SPEC_CONSTANT_TRUE = 48,
    OP_SPEC_CONSTANT_FALSE = 49,
    OP_SPEC_CONSTANT = 50,
    OP_FUNCTION = 54,
    OP_FUNCTION_PARAMETER = 55,
    OP_DECORATE = 71,

    DECORATION_SPEC_ID = 1,
    DECORATION_CPACKED = 10,
    EXECUTION_MODEL_KERNEL = 6,
    EXECUTION_MODE_LOCAL_SIZE = 17,
    EXECUTION_MODE_SUBGROUP_SIZE = 35,
    ADDRESSING_PHYSICAL32 = 1,

    STORAGE_UNIFORM_CONSTANT = 0,
    STORAGE_WORKGROUP = 4,
    STORAGE_CROSS_WORKGROUP = 5,
    STORAGE_FUNCTION = 7,
    STORAGE_GENERIC = 8,
    STORAGE_DEVICE_ONLY_INTEL = 5936,
    STORAGE_HOST_ONLY_INTEL = 5937,
};

/* A type's size and alignment, once computed. */
typedef struct layout {
    uint32_t size, align;
} layout_t;

enum { LAYOUT_UNKNOWN, LAYOUT_BUSY, LAYOUT_DONE, LAYOUT_INVALID };

typedef struct parser {
    const uint32_t *words;
    size_t num_words;
    uint32_t bound;
    uint32_t *def;          /* def[id]: word offset of the defining instruction, 0 if none */
    uint32_t *spec_id_plus; /* spec_id_plus[id]: SpecId + 1, 0 if undecorated */
    uint8_t *packed;        /* packed[id]: the struct is CPacked */
    /* layouts[id] once layout_state[id] is LAYOUT_DONE: each type is laid
     * out once, however many paths lead to it (a chain of structs of two
     * members each has 2^depth paths). */
    layout_t *layouts;
    uint8_t *layout_state;
    uint32_t pointer_size;
    uint32_t *entry_points; /* word offsets */
    uint32_t num_entry_points;
    uint32_t *modes; /* word offsets of OpExecutionMode */
    uint32_t num_modes;
    uint32_t *spec_defs; /* word offsets of OpSpecConstant{,True,False} */
    uint32_t num_spec_defs;
    char *why;
    size_t why_size;
} parser_t;

static int fail(parser_t *p, const char *format, ...) __attribute__((format(printf, 2, 3)));

static int fail(parser_t *p, const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    vsnprintf(p->why, p->why_size, format, ap);
    va_end(ap);
    return -1;
}

static uint32_t opcode_at(const parser_t *p, uint32_t offset)
{
    return p->words[offset] & 0xffffu;
}

static uint32_t word_count_at(const parser_t *p, uint32_t offset)
{
    return p->words[offset] >> 16;
}

/* Word i of the instruction at offset, or 0 past its end (the pass already
 * checked every instruction lies inside the module). */
static uint32_t operand(const parser_t *p, uint32_t offset, uint32_t i)
{
    return i < word_count_at(p, offset) ? p->words[offset + i] : 0;
}

/* The defining instruction's offset of a valid id, or 0. */
static uint32_t def_of(const parser_t *p, uint32_t id)
{
    return id < p->bound ? p->def[id] : 0;
}

/* Appends offset to a list that grows by doubling: capacity is the
 * smallest power of two >= count, so growth is due when count is a power of two (or 0). */
static int push_offset(parser_t *p, uint32_t **array, uint32_t *count, uint32_t offset)
{
    uint32_t n = *count;
    if (n == 0 || (n & (n - 1)) == 0) {
        uint32_t *grown = realloc(*array, (size_t)(n ? 2 * n : 1) * sizeof **array);
        if (grown == NULL)
            return fail(p, "out of host memory");
        *array = grown;
    }
    (*array)[(*count)++] = offset;
    return 0;
}

static void set_def(parser_t *p, uint32_t id, uint32_t offset)
{
    if (id < p->bound)
        p->def[id] = offset;
}

/* One pass: check every instruction fits, remember definitions. */
static int scan(parser_t *p)
{
    for (size_t at = 5; at < p->num_words;) {
        uint32_t count = p->words[at] >> 16, op = p->words[at] & 0xffffu;
        if (count == 0 || at + count > p->num_words)
            return fail(p, "instruction at word %zu (opcode %u) runs past the end", at, op);
        uint32_t offset = (uint32_t)at;
        switch (op) {
        case OP_MEMORY_MODEL:
            if (count > 1 && p->words[at + 1] == ADDRESSING_PHYSICAL32)
                p->pointer_size = 4;
            break;
        case OP_ENTRY_POINT:
            if (count < 4)
                return fail(p, "OpEntryPoint at word %zu is too short", at);
            if (p->words[at + 1] == EXECUTION_MODEL_KERNEL &&
                push_offset(p, &p->entry_points, &p->num_entry_points, offset) != 0)
                return -1;
            break;
        case OP_EXECUTION_MODE:
            if (count >= 3 && push_offset(p, &p->modes, &p->num_modes, offset) != 0)
                return -1;
            break;
        case OP_DECORATE:
            if (count >= 3 && p->words[at + 2] == DECORATION_SPEC_ID && count >= 4 &&
                p->words[at + 1] < p->bound)
                p->spec_id_plus[p->words[at + 1]] = p->words[at + 3] + 1;
            if (count >= 3 && p->words[at + 2] == DECORATION_CPACKED && p->words[at + 1] < p->bound)
                p->packed[p->words[at + 1]] = 1;
            break;
        case OP_SPEC_CONSTANT_TRUE:
        case OP_SPEC_CONSTANT_FALSE:
        case OP_SPEC_CONSTANT:
            if (count < 3)
                return fail(p, "OpSpecConstant at word %zu is too short", at);
            set_def(p, p->words[at + 2], offset);
            if (push_offset(p, &p->spec_defs, &p->num_spec_defs, offset) != 0)
                return -1;
            break;
        case OP_CONSTANT:
        case OP_FUNCTION:
        case OP_FUNCTION_PARAMETER:
            if (count >= 3)
                set_def(p, p->words[at + 2], offset);
            break;
        default:
            /* Types: OpTypeVoid (19) .. OpTypeForwardPointer (39) define word 1. */
            if (op >= OP_TYPE_VOID && op <= 39 && count >= 2)
                set_def(p, p->words[at + 1], offset);
            break;
        }
        at += count;
    }
    return 0;
}

static uint64_t round_up(uint64_t value, uint64_t align)
{
    return align > 1 ? (value + align - 1) / align * align : value;
}

/* type_layout's answer when a type nests deeper than MAX_TYPE_DEPTH: like
 * -1, but depends on where the type was reached from, so not remembered. */
#define TOO_DEEP (-2)

static int type_layout(parser_t *p, uint32_t type_id, int depth, layout_t *out);

/* The layout of the type defined at at, by OpenCL C's rules; 0, -1 (no
 * layout: opaque, malformed, cyclic) or TOO_DEEP. */
static int compute_layout(parser_t *p, uint32_t type_id, uint32_t at, int depth, uint64_t *size,
                          uint64_t *align)
{
    layout_t elem;
    int rc;
    switch (opcode_at(p, at)) {
    case OP_TYPE_BOOL:
        *size = *align = 1;
        return 0;
    case OP_TYPE_INT:
    case OP_TYPE_FLOAT: {
        uint32_t width = operand(p, at, 2);
        if (width == 0 || width % 8 != 0 || width > 64)
            return -1;
        *size = *align = width / 8;
        return 0;
    }
    case OP_TYPE_POINTER:
        *size = *align = p->pointer_size;
        return 0;
    case OP_TYPE_VECTOR: {
        uint32_t n = operand(p, at, 3);
        if (n < 2 || n > 16)
            return -1;
        if ((rc = type_layout(p, operand(p, at, 2), depth + 1, &elem)) != 0)
            return rc;
        *size = *align = (uint64_t)(n == 3 ? 4 : n) * elem.size;
        return 0;
    }
    case OP_TYPE_ARRAY: {
        uint32_t length_at = def_of(p, operand(p, at, 3));
        if (length_at == 0 || opcode_at(p, length_at) != OP_CONSTANT)
            return -1;
        if ((rc = type_layout(p, operand(p, at, 2), depth + 1, &elem)) != 0)
            return rc;
        uint64_t length = operand(p, length_at, 3);
        if (word_count_at(p, length_at) > 4)
            length |= (uint64_t)operand(p, length_at, 4) << 32;
        uint64_t stride = round_up(elem.size, elem.align);
        if (length == 0 || length > SPIRV_MAX_VALUE_BYTES / stride)
            return -1;
        *size = length * stride;
        *align = elem.align;
        return 0;
    }
    case OP_TYPE_STRUCT: {
        bool packed = p->packed[type_id] != 0;
        uint64_t offset = 0, max_align = 1;
        for (uint32_t m = 2; m < word_count_at(p, at); m++) {
            if ((rc = type_layout(p, operand(p, at, m), depth + 1, &elem)) != 0)
                return rc;
            uint64_t member_align = packed ? 1 : elem.align;
            offset = round_up(offset, member_align) + elem.size;
            if (offset > SPIRV_MAX_VALUE_BYTES)
                return -1;
            if (member_align > max_align)
                max_align = member_align;
        }
        *size = round_up(offset, max_align);
        *align = max_align;
        return 0;
    }
    default:
        return -1;
    }
}

/* Size (1 to SPIRV_MAX_VALUE_BYTES) and alignment of a type as OpenCL C
 * lays it out, computed once per type; -1 if it has none (opaque types,
 * too large, contains itself, malformed) or TOO_DEEP. */
static int type_layout(parser_t *p, uint32_t type_id, int depth, layout_t *out)
{
    uint32_t at = def_of(p, type_id);
    if (at == 0)
        return -1;
    if (depth > MAX_TYPE_DEPTH)
        return TOO_DEEP;
    switch (p->layout_state[type_id]) {
    case LAYOUT_DONE:
        *out = p->layouts[type_id];
        return 0;
    case LAYOUT_BUSY: /* reached again while laying it out: it contains itself */
    case LAYOUT_INVALID:
        return -1;
    default:
        break;
    }
    p->layout_state[type_id] = LAYOUT_BUSY;
    uint64_t size = 0, align = 1;
    int rc = compute_layout(p, type_id, at, depth, &size, &align);
    if (rc == 0 && (size == 0 || size > SPIRV_MAX_VALUE_BYTES))
        rc = -1;
    if (rc == TOO_DEEP) {
        p->layout_state[type_id] = LAYOUT_UNKNOWN;
        return rc;
    }
    p->layout_state[type_id] = rc == 0 ? LAYOUT_DONE : LAYOUT_INVALID;
    if (rc == 0) {
        p->layouts[type_id] = (layout_t){(uint32_t)size, (uint32_t)align};
        *out = p->layouts[type_id];
    }
    return rc;
}

static void classify_parameter(parser_t *p, uint32_t type_id, spirv_kernel_arg_t *arg)
{
    layout_t layout;
    uint32_t at = def_of(p, type_id);
    arg->kind = SPIRV_ARG_UNSUPPORTED;
    arg->size = 0;
    if (at == 0)
        return;
    if (opcode_at(p, at) == OP_TYPE_POINTER) {
        switch (operand(p, at, 2)) {
        case STORAGE_WORKGROUP:
            arg->kind = SPIRV_ARG_LOCAL_POINTER;
            arg->size = (uint32_t)sizeof(size_t); /* the byte count given at launch */
            return;
        case STORAGE_FUNCTION: /* a struct passed by value (ByVal) */
            if (type_layout(p, operand(p, at, 3), 0, &layout) == 0) {
                arg->kind = SPIRV_ARG_VALUE;
                arg->size = layout.size;
            }
            return;
        case STORAGE_CROSS_WORKGROUP:
        case STORAGE_UNIFORM_CONSTANT:
        case STORAGE_GENERIC:
        case STORAGE_DEVICE_ONLY_INTEL:
        case STORAGE_HOST_ONLY_INTEL:
            arg->kind = SPIRV_ARG_GLOBAL_POINTER;
            arg->size = 8; /* Level Zero always passes a host-sized pointer */
            return;
        default:
            return;
        }
    }
    if (type_layout(p, type_id, 0, &layout) == 0) {
        arg->kind = SPIRV_ARG_VALUE;
        arg->size = layout.size;
    }
}

static int describe_kernel(parser_t *p, uint32_t entry_at, spirv_kernel_info_t *kernel)
{
    /* Name: a NUL-terminated literal from word 3, inside the instruction. */
    uint32_t count = word_count_at(p, entry_at);
    const char *name = (const char *)&p->words[entry_at + 3];
    size_t max_len = (size_t)(count - 3) * 4;
    size_t len = strnlen(name, max_len);
    if (len == max_len)
        return fail(p, "OpEntryPoint at word %u has an unterminated name", entry_at);
    kernel->name = malloc(len + 1);
    if (kernel->name == NULL)
        return fail(p, "out of host memory");
    memcpy(kernel->name, name, len + 1);

    uint32_t function_id = operand(p, entry_at, 2);
    uint32_t fn_at = def_of(p, function_id);
    if (fn_at == 0 || opcode_at(p, fn_at) != OP_FUNCTION)
        return fail(p, "kernel %s: entry point %%%u is not an OpFunction", kernel->name,
                    function_id);

    uint32_t num_args = 0;
    for (size_t at = fn_at + word_count_at(p, fn_at);
         at < p->num_words && opcode_at(p, (uint32_t)at) == OP_FUNCTION_PARAMETER;
         at += word_count_at(p, (uint32_t)at))
        num_args++;
    kernel->args = calloc(num_args ? num_args : 1, sizeof *kernel->args);
    if (kernel->args == NULL)
        return fail(p, "out of host memory");
    kernel->num_args = num_args;
    size_t at = fn_at + word_count_at(p, fn_at);
    for (uint32_t i = 0; i < num_args; i++) {
        classify_parameter(p, operand(p, (uint32_t)at, 1), &kernel->args[i]);
        at += word_count_at(p, (uint32_t)at);
    }

    for (uint32_t m = 0; m < p->num_modes; m++) {
        uint32_t mode_at = p->modes[m];
        if (operand(p, mode_at, 1) != function_id)
            continue;
        if (operand(p, mode_at, 2) == EXECUTION_MODE_LOCAL_SIZE && word_count_at(p, mode_at) >= 6)
            for (int d = 0; d < 3; d++)
                kernel->required_group_size[d] = operand(p, mode_at, 3 + (uint32_t)d);
        if (operand(p, mode_at, 2) == EXECUTION_MODE_SUBGROUP_SIZE)
            kernel->required_subgroup_size = operand(p, mode_at, 3);
    }
    return 0;
}

static int describe_spec_constants(parser_t *p, spirv_reflection_t *r)
{
    r->spec_constants = calloc(p->num_spec_defs ? p->num_spec_defs : 1, sizeof *r->spec_constants);
    if (r->spec_constants == NULL)
        return fail(p, "out of host memory");
    for (uint32_t i = 0; i < p->num_spec_defs; i++) {
        uint32_t at = p->spec_defs[i], id = operand(p, at, 2);
        if (id >= p->bound || p->spec_id_plus[id] == 0)
            continue; /* not settable from outside: no SpecId */
        /* A scalar: bool, or an int or float of 8, 16, 32 or 64 bits. */
        uint32_t spec_id = p->spec_id_plus[id] - 1, type_id = operand(p, at, 1);
        uint32_t type_at = def_of(p, type_id), type_op = type_at ? opcode_at(p, type_at) : 0;
        layout_t layout;
        if ((type_op != OP_TYPE_BOOL && type_op != OP_TYPE_INT && type_op != OP_TYPE_FLOAT) ||
            type_layout(p, type_id, 0, &layout) != 0 || layout.size > 8 ||
            (layout.size & (layout.size - 1)) != 0)
            return fail(p, "specialization constant %%%u has an unsupported type", id);
        uint32_t size = layout.size;
        /* llvm-spirv may emit one OpSpecConstant per use of a SpecId. */
        const spirv_spec_constant_t *seen = spirv_find_spec_constant(r, spec_id);
        if (seen != NULL && seen->size != size)
            return fail(p, "SpecId %u is declared with sizes %u and %u", spec_id, seen->size, size);
        if (seen != NULL)
            continue;
        spirv_spec_constant_t *c = &r->spec_constants[r->num_spec_constants++];
        c->spec_id = spec_id;
        c->size = size;
    }
    return 0;
}

int spirv_reflect(const uint32_t *words, size_t num_words, spirv_reflection_t **out, char *why,
                  size_t why_size)
{
    parser_t p = {.words = words,
                  .num_words = num_words,
                  .pointer_size = 8,
                  .why = why,
                  .why_size = why_size};
    spirv_reflection_t *r = NULL;
    int rc = -1;

    *out = NULL;
    if (num_words < 5 || words[0] != SPIRV_MAGIC) {
        fail(&p, "not a SPIR-V module (%zu words, magic 0x%08x)", num_words,
             num_words ? words[0] : 0);
        goto done;
    }
    p.bound = words[3];
    if (p.bound == 0 || p.bound > MAX_BOUND) {
        fail(&p, "SPIR-V id bound %u is not plausible", p.bound);
        goto done;
    }
    p.def = calloc(p.bound, sizeof *p.def);
    p.spec_id_plus = calloc(p.bound, sizeof *p.spec_id_plus);
    p.packed = calloc(p.bound, 1);
    p.layouts = calloc(p.bound, sizeof *p.layouts);
    p.layout_state = calloc(p.bound, 1);
    r = calloc(1, sizeof *r);
    if (p.def == NULL || p.spec_id_plus == NULL || p.packed == NULL || p.layouts == NULL ||
        p.layout_state == NULL || r == NULL) {
        fail(&p, "out of host memory");
        goto done;
    }
    r->version = words[1];
    if (scan(&p) != 0)
        goto done;

    r->kernels = calloc(p.num_entry_points ? p.num_entry_points : 1, sizeof *r->kernels);
    if (r->kernels == NULL) {
        fail(&p, "out of host memory");
        goto done;
    }
    for (uint32_t i = 0; i < p.num_entry_points; i++) {
        r->num_kernels = i + 1;
        if (describe_kernel(&p, p.entry_points[i], &r->kernels[i]) != 0)
            goto done;
    }
    if (describe_spec_constants(&p, r) != 0)
        goto done;
    *out = r;
    r = NULL;
    rc = 0;

done:
    spirv_reflection_free(r);
    free(p.spec_defs);
    free(p.modes);
    free(p.entry_points);
    free(p.layout_state);
    free(p.layouts);
    free(p.packed);
    free(p.spec_id_plus);
    free(p.def);
    return rc;
}

const spirv_kernel_info_t *spirv_find_kernel(const spirv_reflection_t *reflection, const char *name)
{
    for (uint32_t i = 0; i < reflection->num_kernels; i++)
        if (strcmp(reflection->kernels[i].name, name) == 0)
            return &reflection->kernels[i];
    return NULL;
}

const spirv_spec_constant_t *spirv_find_spec_constant(const spirv_reflection_t *reflection,
                                                      uint32_t spec_id)
{
    for (uint32_t i = 0; i < reflection->num_spec_constants; i++)
        if (reflection->spec_constants[i].spec_id == spec_id)
            return &reflection->spec_constants[i];
    return NULL;
}

void spirv_reflection_free(spirv_reflection_t *reflection)
{
    if (reflection == NULL)
        return;
    for (uint32_t i = 0; i < reflection->num_kernels; i++) {
        free(reflection->kernels[i].name);
        free(reflection->kernels[i].args);
    }
    free(reflection->kernels);
    free(reflection->spec_constants);
    free(reflection);
}
