/* spirv_variants.c - the rows of variants.def, and a variant chosen by its
 * fields. */
#include <string.h>

#include "spirv_variants.h"

#define SDPA_SPIRV_VARIANT(name, d_max, subgroup_size) {name, d_max, subgroup_size},
#define SDPA_SPIRV_BUCKETED_VARIANT(name, subgroup_size)                                           \
    {name, SDPA_SPIRV_EACH_BUCKET, subgroup_size},
const sdpa_spirv_variant_t sdpa_spirv_variants[] = {
#include "variants.def"
};
#undef SDPA_SPIRV_VARIANT
#undef SDPA_SPIRV_BUCKETED_VARIANT
const size_t sdpa_spirv_variant_count =
        sizeof(sdpa_spirv_variants) / sizeof(sdpa_spirv_variants[0]);

#define SDPA_HEAD_SIZE_BUCKET(d_max) d_max,
const int sdpa_spirv_head_size_buckets[] = {
#include "head_size_buckets.def"
};
#undef SDPA_HEAD_SIZE_BUCKET
const size_t sdpa_spirv_head_size_bucket_count =
        sizeof(sdpa_spirv_head_size_buckets) / sizeof(sdpa_spirv_head_size_buckets[0]);

/* The switches named by a field. */
static const struct {
    const char *field;
    unsigned switch_bit;
} switch_fields[] = {
        {"cvt", SDPA_SPIRV_FIELD_CVT},
        {"emu", SDPA_SPIRV_FIELD_EMU},
        {"fadd", SDPA_SPIRV_FIELD_FADD},
        {"kvg", SDPA_SPIRV_FIELD_KVG},
};

/* *value from the n characters of digits at s (a number of k<N>, d<N>):
 * 1, or 0 if they are not a positive decimal number or *value is set. */
static int parse_number(const char *s, size_t n, int *value)
{
    if (n == 0 || n > 4 || *value != 0 || s[0] == '0')
        return 0;
    int v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        v = 10 * v + (s[i] - '0');
    }
    *value = v;
    return 1;
}

/* Adds the field of n characters at s to *fields: 1, or 0 if it is none of
 * variants.def's or repeats one. */
static int parse_field(const char *s, size_t n, sdpa_spirv_fields_t *fields)
{
    for (size_t i = 0; i < sizeof(switch_fields) / sizeof(switch_fields[0]); i++)
        if (strlen(switch_fields[i].field) == n && strncmp(s, switch_fields[i].field, n) == 0) {
            if (fields->switches & switch_fields[i].switch_bit)
                return 0;
            fields->switches |= switch_fields[i].switch_bit;
            return 1;
        }
    if (n > 1 && s[0] == 'k')
        return parse_number(s + 1, n - 1, &fields->keys);
    if (n > 1 && s[0] == 'd')
        return parse_number(s + 1, n - 1, &fields->dsub);
    return 0;
}

int sdpa_spirv_variant_fields(const char *name, size_t *source_length, sdpa_spirv_fields_t *fields)
{
    const sdpa_spirv_fields_t none = {0, 0, 0};
    *fields = none;
    const char *field = strchr(name, '-');
    *source_length = field ? (size_t)(field - name) : strlen(name);
    while (field) {
        const char *next = strchr(field + 1, '-');
        const size_t n = next ? (size_t)(next - field - 1) : strlen(field + 1);
        if (!parse_field(field + 1, n, fields))
            return 0;
        field = next;
    }
    return 1;
}

/* 1 if a row's d_max serves d_max. */
static int serves_d_max(int row_d_max, int d_max)
{
    if (row_d_max != SDPA_SPIRV_EACH_BUCKET)
        return row_d_max == d_max;
    for (size_t i = 0; i < sdpa_spirv_head_size_bucket_count; i++)
        if (sdpa_spirv_head_size_buckets[i] == d_max)
            return 1;
    return 0;
}

const char *sdpa_spirv_variant_name(const char *source, const sdpa_spirv_fields_t *fields,
                                    int d_max, int subgroup_size)
{
    for (size_t i = 0; i < sdpa_spirv_variant_count; i++) {
        const sdpa_spirv_variant_t *v = &sdpa_spirv_variants[i];
        size_t source_length;
        sdpa_spirv_fields_t f;
        if (v->subgroup_size != subgroup_size || !serves_d_max(v->d_max, d_max) ||
            !sdpa_spirv_variant_fields(v->name, &source_length, &f))
            continue;
        if (source_length == strlen(source) && strncmp(v->name, source, source_length) == 0 &&
            f.keys == fields->keys && f.dsub == fields->dsub && f.switches == fields->switches)
            return v->name;
    }
    return NULL;
}
