/*
 * spirv_variants.h - the SPIR-V variants the build compiles, the rows of
 * spirv/abi/variants.def (which spirv/Makefile.am reads too), and the
 * choice of one by its build-time fields: the plans take a variant's name
 * from here instead of spelling it.
 */
#ifndef SDPA_SPIRV_VARIANTS_H
#define SDPA_SPIRV_VARIANTS_H

#include <stddef.h>

/* d_max of a row built once per head-size bucket (head_size_buckets.def). */
#define SDPA_SPIRV_EACH_BUCKET (-1)

typedef struct sdpa_spirv_variant {
    const char *name;  /* <source>[-<field>...], e.g. "sdpa_xe_fwd-k32-d64-emu" */
    int d_max;         /* head-size bucket, 0 if none, or SDPA_SPIRV_EACH_BUCKET */
    int subgroup_size; /* 0 if none */
} sdpa_spirv_variant_t;

/* The rows of variants.def, in order. */
extern const sdpa_spirv_variant_t sdpa_spirv_variants[];
extern const size_t sdpa_spirv_variant_count;

/* The head-size buckets, ascending (head_size_buckets.def). */
extern const int sdpa_spirv_head_size_buckets[];
extern const size_t sdpa_spirv_head_size_bucket_count;

/* The switches of a name's fields (variants.def says what each builds). */
enum {
    SDPA_SPIRV_FIELD_CVT = 1u << 0,  /* cvt */
    SDPA_SPIRV_FIELD_EMU = 1u << 1,  /* emu */
    SDPA_SPIRV_FIELD_FADD = 1u << 2, /* fadd */
    SDPA_SPIRV_FIELD_KVG = 1u << 3,  /* kvg */
};

/* A variant's build-time fields. */
typedef struct sdpa_spirv_fields {
    int keys;          /* k<N>, 0 if absent */
    int dsub;          /* d<N>, 0 if absent */
    unsigned switches; /* SDPA_SPIRV_FIELD_* */
} sdpa_spirv_fields_t;

/* Splits name ("<source>[-<field>...]") into the length of its source and
 * its fields. Returns 1, or 0 if a field is none of variants.def's (or
 * repeats one). */
int sdpa_spirv_variant_fields(const char *name, size_t *source_length, sdpa_spirv_fields_t *fields);

/* The name of the row of variants.def built from source with exactly these
 * fields, for d_max (0, or a head-size bucket) and subgroup_size; NULL if
 * there is none. The string is static. */
const char *sdpa_spirv_variant_name(const char *source, const sdpa_spirv_fields_t *fields,
                                    int d_max, int subgroup_size);

#endif /* SDPA_SPIRV_VARIANTS_H */
