/* decode_plan.c - the thin-Q decode kernel's problems and its key splits. */
#include <stdlib.h>
#include <string.h>

#include "decode_plan.h"
#include "error.h"
#include "kernel_abi_decode.h"
#include "name_table.h"
#include "scratch_layout.h"
#include "size_math.h"

_Static_assert(SDPA_DECODE_MAX_SPLITS <= SDPA_MERGE_MAX_STATES,
               "one merge combines every split's state");

/* SDPA_ZE_DECODE into *mode: 0 never, 1 always (where it serves), -1 auto
 * (unset, empty or "auto"). Any other value: SDPA_ERROR_INVALID_CONFIG
 * naming it, as SDPA_ZE_KERNELS is refused (a mistyped value would
 * otherwise measure the kernel it meant to avoid). */
static sdpa_status_t decode_mode(int *mode)
{
    static const char *const names[] = {"auto", "0", "1"}; /* modes -1, 0, 1 */
    const char *v = getenv("SDPA_ZE_DECODE");
    const int i = sdpa_name_index(v, names, sizeof(names) / sizeof(names[0]));
    if (i < 0)
        return sdpa_fail(SDPA_ERROR_INVALID_CONFIG,
                         "SDPA_ZE_DECODE = \"%s\": expected auto, 0 or 1", v);
    *mode = i - 1;
    return SDPA_SUCCESS;
}

int sdpa_decode_row_block(const sdpa_shape_t *shape, const sdpa_device_info_t *device, uint32_t sg,
                          uint32_t *block_rows, uint32_t *blocks)
{
    const int64_t rows = shape->kv_group_size * shape->q_len;
    *block_rows = *blocks = 0;
    /* The fewest blocks (each block reads K and V once), rows shared out
     * evenly; more blocks while a block's local memory exceeds the
     * device's. */
    for (int64_t n = SDPA_DECODE_ROW_BLOCKS(rows, SDPA_DECODE_MAX_ROWS); n <= rows; n++) {
        const int64_t r = SDPA_DECODE_ROW_BLOCKS(rows, n);
        if ((uint64_t)SDPA_DECODE_SLM_BYTES(r, shape->head_size, shape->head_size_v, (int64_t)sg) >
            device->slm_bytes)
            continue;
        *block_rows = (uint32_t)r;
        *blocks = (uint32_t)SDPA_DECODE_ROW_BLOCKS(rows, r);
        return 1;
    }
    return 0;
}

int sdpa_decode_serves(const sdpa_problem_desc_t *p, const sdpa_shape_t *shape,
                       const sdpa_device_info_t *device, uint32_t sg)
{
    uint32_t block_rows, blocks;
    if (shape->q_len > SDPA_DECODE_MAX_QUERIES)
        return 0;
    if (p->dropout.enabled || p->varlen.enabled)
        return 0;
    if (p->kq_acc_dtype == SDPA_DTYPE_F16 || p->vs_acc_dtype == SDPA_DTYPE_F16)
        return 0;
    return sdpa_decode_row_block(shape, device, sg, &block_rows, &blocks);
}

sdpa_status_t sdpa_decode_chosen(const sdpa_problem_desc_t *p, const sdpa_shape_t *shape,
                                 const sdpa_device_info_t *device, uint32_t sg, int *chosen,
                                 int *fallback)
{
    int mode = -1;
    *chosen = *fallback = 0;
    sdpa_status_t status = decode_mode(&mode);
    if (status != SDPA_SUCCESS || mode == 0 || !sdpa_decode_serves(p, shape, device, sg))
        return status;
    *chosen = mode == 1 || sdpa_decode_num_splits(p, shape, device, sg) > 1;
    *fallback = 1;
    return SDPA_SUCCESS;
}

uint32_t sdpa_decode_num_splits(const sdpa_problem_desc_t *p, const sdpa_shape_t *shape,
                                const sdpa_device_info_t *device, uint32_t sg)
{
    const int64_t keys = SDPA_DECODE_KEYS((int64_t)sg);
    const int64_t tiles = (shape->k_len + keys - 1) / keys;
    int64_t n;
    if (p->num_splits >= 1) {
        n = p->num_splits;
    } else if (device->device_class == SDPA_DEVICE_CLASS_CPU) {
        /* The decode kernel costs the CPU device more than the portable
         * forward (doc/decode.md): splitting to use more cores does not pay
         * for that yet. */
        n = 1;
    } else {
        uint32_t block_rows, blocks;
        sdpa_decode_row_block(shape, device, sg, &block_rows, &blocks);
        const int64_t groups = shape->batch * shape->kv_heads * (blocks ? blocks : 1);
        const int64_t units = device->compute_units ? device->compute_units : 1;
        n = groups >= units ? 1 : (units + groups - 1) / groups;
        if (n > tiles / SDPA_DECODE_MIN_TILES_PER_SPLIT)
            n = tiles / SDPA_DECODE_MIN_TILES_PER_SPLIT;
    }
    if (n > SDPA_DECODE_MAX_SPLITS)
        n = SDPA_DECODE_MAX_SPLITS;
    if (n > tiles)
        n = tiles;
    return n < 1 ? 1 : (uint32_t)n;
}

sdpa_status_t sdpa_decode_scratch_plan(const sdpa_shape_t *s, uint32_t n, size_t *bytes,
                                       size_t *lse_offset)
{
    *bytes = *lse_offset = 0;
    if (n <= 1)
        return SDPA_SUCCESS;
    const int64_t rows[4] = {(int64_t)n, s->batch, s->q_heads, s->q_len};
    const uint64_t states = sdpa_size_mul(sdpa_size_product(rows, 4), sdpa_size_of(s->head_size_v));
    size_t end = 0;
    sdpa_scratch_region_t o, lse;
    if (!sdpa_scratch_append(&end, &o, states, sizeof(float)) ||
        !sdpa_scratch_append(&end, &lse, sdpa_size_product(rows, 4), sizeof(float)))
        return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                         "num_splits = %u: the split states of B = %lld, Hq = %lld, Sq = %lld, "
                         "Dv = %lld would exceed the largest addressable buffer",
                         (unsigned)n, (long long)s->batch, (long long)s->q_heads,
                         (long long)s->q_len, (long long)s->head_size_v);
    *lse_offset = lse.offset;
    *bytes = end;
    return SDPA_SUCCESS;
}

/* A dense f32 [B, Hq, Sq, d] tensor. */
static sdpa_tensor_desc_t dense_f32(const sdpa_shape_t *s, int64_t d)
{
    sdpa_tensor_desc_t t = {SDPA_DTYPE_F32,
                            {s->batch, s->q_heads, s->q_len, d},
                            {s->q_heads * s->q_len * d, s->q_len * d, d, 1}};
    return t;
}

void sdpa_decode_merge_desc(const sdpa_problem_desc_t *p, const sdpa_shape_t *s, uint32_t n,
                            sdpa_merge_desc_t *out)
{
    memset(out, 0, sizeof(*out));
    out->struct_size = sizeof(*out);
    out->struct_version = SDPA_MERGE_DESC_VERSION;
    out->num_states = n;
    out->softmax_kind = p->softmax_kind;
    out->states = dense_f32(s, s->head_size_v);
    out->states_lse = dense_f32(s, 1);
    out->dst = p->dst;
    if (p->prop_kind == SDPA_FORWARD_TRAINING)
        out->dst_lse = dense_f32(s, 1);
}
