/*
 * spec_values.h - a set of specialization-constant values for one module.
 *
 * Holds (SpecId, value) pairs, sorted by SpecId, each checked against
 * spirv/spec_table.h when it is set, and hands them to zeModuleCreate as a
 * ze_module_constants_t. Two sets with the same pairs compare equal and hash
 * alike whatever order they were set in, so the ze backend can key its module
 * cache by (SPIR-V variant, constants, build flags).
 *
 * Setting a constant that is not in spec_constants.def, one of the probe
 * kernel's (SpecIds below 100), or with a setter of the wrong type is a
 * programming error: it asserts (and, with NDEBUG, is ignored).
 */
#ifndef SDPA_CORE_SPEC_VALUES_H
#define SDPA_CORE_SPEC_VALUES_H

#include <stdint.h>

#include <level_zero/ze_api.h>

#include "spec_table.h"

/* More than spec_constants.def has rows, with room to grow. */
#define SDPA_SPEC_VALUES_MAX 128

/* SpecIds below this belong to the probe kernel (spec_constants.def). */
#define SDPA_SPEC_FIRST_ATTENTION_ID 100

/* One value, stored at the start of the slot with its type's size (bool: 1
 * byte, int/uint/float: 4, long: 8); the rest of the slot is zero. */
typedef union sdpa_spec_slot {
    uint8_t b;
    int32_t i;
    uint32_t u;
    float f;
    int64_t l;
} sdpa_spec_slot_t;

typedef struct sdpa_spec_values {
    uint32_t count;
    uint32_t ids[SDPA_SPEC_VALUES_MAX]; /* ascending */
    sdpa_spec_slot_t slots[SDPA_SPEC_VALUES_MAX];
    /* Filled by sdpa_spec_values_ze: pointers into slots. */
    const void *value_ptrs[SDPA_SPEC_VALUES_MAX];
} sdpa_spec_values_t;

/* Empties v. A zero-filled struct is empty too. */
void sdpa_spec_values_init(sdpa_spec_values_t *v);

/* Set (or replace) the value of constant id, whose type in
 * spec_constants.def must match the setter. */
void sdpa_spec_values_set_int(sdpa_spec_values_t *v, sdpa_spec_id_t id, int32_t value);
void sdpa_spec_values_set_uint(sdpa_spec_values_t *v, sdpa_spec_id_t id, uint32_t value);
void sdpa_spec_values_set_long(sdpa_spec_values_t *v, sdpa_spec_id_t id, int64_t value);
void sdpa_spec_values_set_float(sdpa_spec_values_t *v, sdpa_spec_id_t id, float value);
/* Any non-zero value is stored as 1. */
void sdpa_spec_values_set_bool(sdpa_spec_values_t *v, sdpa_spec_id_t id, int value);

/* The stored value of id, or NULL if it is not set. The pointed-to storage
 * has the size of id's type. */
const void *sdpa_spec_values_find(const sdpa_spec_values_t *v, sdpa_spec_id_t id);

/* Typed reads of a set constant (assert that it is set and has that type;
 * return 0 otherwise). */
int32_t sdpa_spec_values_get_int(const sdpa_spec_values_t *v, sdpa_spec_id_t id);
int sdpa_spec_values_get_bool(const sdpa_spec_values_t *v, sdpa_spec_id_t id);

/* The constants as zeModuleCreate wants them. The arrays live inside v: the
 * result is valid while v is neither changed nor moved (after copying the
 * struct, call this again on the copy). */
ze_module_constants_t sdpa_spec_values_ze(sdpa_spec_values_t *v);

/* 1 if a and b hold the same constants with bit-identical values. */
int sdpa_spec_values_equal(const sdpa_spec_values_t *a, const sdpa_spec_values_t *b);

/* A 64-bit FNV-1a hash of the (id, value bytes) pairs, consistent with
 * sdpa_spec_values_equal. */
uint64_t sdpa_spec_values_hash(const sdpa_spec_values_t *v);

#endif /* SDPA_CORE_SPEC_VALUES_H */
