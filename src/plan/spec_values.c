/* spec_values.c - specialization-constant values, checked and canonical. */
#include <assert.h>
#include <string.h>

#include "fnv1a.h"
#include "spec_values.h"

void sdpa_spec_values_init(sdpa_spec_values_t *v)
{
    memset(v, 0, sizeof(*v));
}

/* The table row of id if it is an attention constant of type type, else
 * NULL (after failing an assertion). */
static const sdpa_spec_constant_info_t *checked_info(sdpa_spec_id_t id, sdpa_spec_type_t type)
{
    const sdpa_spec_constant_info_t *info = sdpa_spec_constant_find((uint32_t)id);
    int ok = info && info->id >= SDPA_SPEC_FIRST_ATTENTION_ID && info->type == type;
    assert(ok && "unknown SpecId, probe SpecId, or setter of the wrong type");
    return ok ? info : NULL;
}

/* Index of id in v->ids, or of where it would be inserted. */
static uint32_t position(const sdpa_spec_values_t *v, uint32_t id)
{
    uint32_t lo = 0, hi = v->count;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (v->ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The slot of id, created (zeroed) if absent; NULL if v is full. */
static sdpa_spec_slot_t *slot_for(sdpa_spec_values_t *v, uint32_t id)
{
    uint32_t pos = position(v, id);
    if (pos < v->count && v->ids[pos] == id) {
        memset(&v->slots[pos], 0, sizeof(v->slots[pos]));
        return &v->slots[pos];
    }
    assert(v->count < SDPA_SPEC_VALUES_MAX);
    if (v->count >= SDPA_SPEC_VALUES_MAX)
        return NULL;
    memmove(&v->ids[pos + 1], &v->ids[pos], (v->count - pos) * sizeof(v->ids[0]));
    memmove(&v->slots[pos + 1], &v->slots[pos], (v->count - pos) * sizeof(v->slots[0]));
    v->count++;
    v->ids[pos] = id;
    memset(&v->slots[pos], 0, sizeof(v->slots[pos]));
    return &v->slots[pos];
}

static sdpa_spec_slot_t *slot_to_set(sdpa_spec_values_t *v, sdpa_spec_id_t id,
                                     sdpa_spec_type_t type)
{
    return checked_info(id, type) ? slot_for(v, (uint32_t)id) : NULL;
}

/* One setter per constant type (spec_values.h): they differ only in the
 * type checked and the slot member written. */
#define SPEC_VALUES_SETTER(type, c_type, member, stored)                                           \
    void sdpa_spec_values_set_##type(sdpa_spec_values_t *v, sdpa_spec_id_t id, c_type value)       \
    {                                                                                              \
        sdpa_spec_slot_t *slot = slot_to_set(v, id, SDPA_SPEC_TYPE_##type);                        \
        if (slot)                                                                                  \
            slot->member = stored;                                                                 \
    }

SPEC_VALUES_SETTER(int, int32_t, i, value)
SPEC_VALUES_SETTER(uint, uint32_t, u, value)
SPEC_VALUES_SETTER(long, int64_t, l, value)
SPEC_VALUES_SETTER(float, float, f, value)
SPEC_VALUES_SETTER(bool, int, b, value != 0)

#undef SPEC_VALUES_SETTER

const void *sdpa_spec_values_find(const sdpa_spec_values_t *v, sdpa_spec_id_t id)
{
    uint32_t pos = position(v, (uint32_t)id);
    if (pos < v->count && v->ids[pos] == (uint32_t)id)
        return &v->slots[pos];
    return NULL;
}

int32_t sdpa_spec_values_get_int(const sdpa_spec_values_t *v, sdpa_spec_id_t id)
{
    const sdpa_spec_slot_t *slot = sdpa_spec_values_find(v, id);
    int ok = slot && checked_info(id, SDPA_SPEC_TYPE_int);
    assert(ok && "constant not set");
    return ok ? slot->i : 0;
}

int sdpa_spec_values_get_bool(const sdpa_spec_values_t *v, sdpa_spec_id_t id)
{
    const sdpa_spec_slot_t *slot = sdpa_spec_values_find(v, id);
    int ok = slot && checked_info(id, SDPA_SPEC_TYPE_bool);
    assert(ok && "constant not set");
    return ok ? slot->b : 0;
}

ze_module_constants_t sdpa_spec_values_ze(sdpa_spec_values_t *v)
{
    for (uint32_t i = 0; i < v->count; i++)
        v->value_ptrs[i] = &v->slots[i];
    ze_module_constants_t constants = {v->count, v->ids, v->value_ptrs};
    return constants;
}

/* Bytes of the value in a slot (the size of its constant's type). */
static size_t value_size(uint32_t id)
{
    const sdpa_spec_constant_info_t *info = sdpa_spec_constant_find(id);
    return info ? info->size : sizeof(sdpa_spec_slot_t);
}

int sdpa_spec_values_equal(const sdpa_spec_values_t *a, const sdpa_spec_values_t *b)
{
    if (a->count != b->count)
        return 0;
    for (uint32_t i = 0; i < a->count; i++)
        if (a->ids[i] != b->ids[i] ||
            memcmp(&a->slots[i], &b->slots[i], value_size(a->ids[i])) != 0)
            return 0;
    return 1;
}

uint64_t sdpa_spec_values_hash(const sdpa_spec_values_t *v)
{
    uint64_t hash = SDPA_FNV1A64_OFFSET;
    for (uint32_t i = 0; i < v->count; i++) {
        hash = sdpa_fnv1a64(hash, &v->ids[i], sizeof(v->ids[i]));
        hash = sdpa_fnv1a64(hash, &v->slots[i], value_size(v->ids[i]));
    }
    return hash;
}
