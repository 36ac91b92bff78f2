/* spec_table.c - the host's copy of spec_constants.def. */
#include "spec_table.h"

#define SDPA_SPEC_SIZE_int 4
#define SDPA_SPEC_SIZE_uint 4
#define SDPA_SPEC_SIZE_long 8
#define SDPA_SPEC_SIZE_float 4
#define SDPA_SPEC_SIZE_bool 1

const sdpa_spec_constant_info_t sdpa_spec_constant_table[] = {
#define SDPA_SPEC_CONSTANT(name, id, type, default_value, meaning)                                 \
    {#name, id, SDPA_SPEC_TYPE_##type, SDPA_SPEC_SIZE_##type, meaning},
#include "spec_constants.def"
#undef SDPA_SPEC_CONSTANT
};

const size_t sdpa_spec_constant_count =
        sizeof(sdpa_spec_constant_table) / sizeof(sdpa_spec_constant_table[0]);

const sdpa_spec_constant_info_t *sdpa_spec_constant_find(uint32_t id)
{
    for (size_t i = 0; i < sdpa_spec_constant_count; i++)
        if (sdpa_spec_constant_table[i].id == id)
            return &sdpa_spec_constant_table[i];
    return NULL;
}
