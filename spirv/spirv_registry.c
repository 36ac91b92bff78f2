/* spirv_registry.c - looks up an embedded SPIR-V variant. */
#include <string.h>

#include "spirv_registry.h"

const sdpa_spirv_module_t *sdpa_spirv_find(const char *source, int d_max, int subgroup_size)
{
    for (size_t i = 0; i < sdpa_spirv_module_count; i++) {
        const sdpa_spirv_module_t *m = &sdpa_spirv_modules[i];
        if (m->d_max == d_max && m->subgroup_size == subgroup_size &&
            strcmp(m->source, source) == 0)
            return m;
    }
    return NULL;
}

int sdpa_spirv_has_spec_id(const sdpa_spirv_module_t *module, unsigned id)
{
    for (size_t i = 0; i < module->spec_id_count; i++)
        if (module->spec_ids[i] == id)
            return 1;
    return 0;
}
