/*
 * spec_table.h - specialization constants as seen by the host.
 *
 * The same rows as the kernels' spec_constants.h (both come from
 * spec_constants.def): an enum of SpecIds, and a table with each constant's
 * name, type and size, which host code uses to build ze_module_constants_t.
 */
#ifndef SDPA_SPIRV_SPEC_TABLE_H
#define SDPA_SPIRV_SPEC_TABLE_H

#include <stddef.h>
#include <stdint.h>

typedef enum sdpa_spec_type {
    SDPA_SPEC_TYPE_int,
    SDPA_SPEC_TYPE_uint,
    SDPA_SPEC_TYPE_long,
    SDPA_SPEC_TYPE_float,
    SDPA_SPEC_TYPE_bool,
} sdpa_spec_type_t;

/* SDPA_SC_<NAME> = SpecId. */
typedef enum sdpa_spec_id {
#define SDPA_SPEC_CONSTANT(name, id, type, default_value, meaning) SDPA_SC_##name = id,
#include "spec_constants.def"
#undef SDPA_SPEC_CONSTANT
} sdpa_spec_id_t;

typedef struct sdpa_spec_constant_info {
    const char *name;
    uint32_t id;
    sdpa_spec_type_t type;
    size_t size; /* bytes of the value handed to zeModuleCreate */
    const char *meaning;
} sdpa_spec_constant_info_t;

extern const sdpa_spec_constant_info_t sdpa_spec_constant_table[];
extern const size_t sdpa_spec_constant_count;

/* The row with SpecId id, or NULL. */
const sdpa_spec_constant_info_t *sdpa_spec_constant_find(uint32_t id);

#endif /* SDPA_SPIRV_SPEC_TABLE_H */
