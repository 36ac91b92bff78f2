/*
 * spirv_registry.h - the SPIR-V modules built from the .cl files in spirv/, embedded in
 * the libraries that link libsdpa_spirv.
 *
 * A kernel source is compiled once per variant: per head-size bucket (D_MAX,
 * the largest head size it serves, which sizes its arrays) and per sub-group
 * size. Kernels whose arrays do not depend on the head size have d_max 0.
 */
#ifndef SDPA_SPIRV_REGISTRY_H
#define SDPA_SPIRV_REGISTRY_H

#include <stddef.h>

typedef struct sdpa_spirv_module {
    const char *source; /* the .cl file's base name, e.g. "sdpa_fwd" */
    int d_max;          /* head-size bucket, 0 if none */
    int subgroup_size;  /* SUBGROUP_SIZE the variant was compiled with */
    const unsigned char *code;
    size_t size; /* bytes, a multiple of 4 */
    /* The SpecIds the module declares, ascending. The compiler drops the
     * constants no kernel of the variant reads, and a driver may refuse to
     * specialize an id the module does not have, so the host passes only
     * these. */
    const unsigned *spec_ids;
    size_t spec_id_count;
} sdpa_spirv_module_t;

extern const sdpa_spirv_module_t sdpa_spirv_modules[];
extern const size_t sdpa_spirv_module_count;

/* 1 if module declares specialization constant id. */
int sdpa_spirv_has_spec_id(const sdpa_spirv_module_t *module, unsigned id);

/* The variant of source compiled for exactly (d_max, subgroup_size), or NULL. */
const sdpa_spirv_module_t *sdpa_spirv_find(const char *source, int d_max, int subgroup_size);

#endif /* SDPA_SPIRV_REGISTRY_H */
