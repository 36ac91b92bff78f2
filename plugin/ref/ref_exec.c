/* ref_exec.c - the scalars one execution reads (scale, dropout), fetched on
 * the host whether the caller passed values or pointers. */
#include <string.h>

#include "device_arrays.h"
#include "error.h"

#include "ref.h"

/* The multiplier of q.k: 1 without a scale, 1 / scale when inverted. */
static double score_scale(const sdpa_problem_desc_t *p, const sdpa_exec_args_t *a)
{
    double scale;
    switch (p->scale_kind) {
    case SDPA_SCALE_HOST:
        scale = a->scale;
        break;
    case SDPA_SCALE_DEVICE:
        scale = sdpa_element_load(a->scale_ptr, 0, p->scale_dtype);
        break;
    default:
        return 1.0;
    }
    return p->invert_scale ? 1.0 / scale : scale;
}

sdpa_status_t ref_exec_init(ref_exec_t *x, const sdpa_problem_desc_t *problem,
                            const sdpa_shape_t *shape, const sdpa_exec_args_t *args)
{
    memset(x, 0, sizeof(*x));
    x->problem = problem;
    x->shape = shape;
    x->args = args;
    x->score_scale = score_scale(problem, args);
    x->softcap = problem->softcap;
    /* The device arrays, readable here: refused when they break sdpa.h. */
    const sdpa_device_arrays_t arrays = {args->cu_seqlens_q, args->cu_seqlens_k,
                                         args->block_table, args->cache_seqlens};
    SDPA_TRY(sdpa_device_arrays_check(problem, shape, &arrays));
    const sdpa_dropout_desc_t *dr = &problem->dropout;
    if (!dr->enabled)
        return SDPA_SUCCESS;
    x->dropout = 1;
    if (dr->host_scalars) {
        x->dropout_p = args->dropout_p;
        x->dropout_seed = (uint64_t)args->dropout_seed;
        x->dropout_offset = dr->with_offset ? (uint64_t)args->dropout_offset : 0;
    } else {
        int64_t seed = 0, offset = 0;
        memcpy(&x->dropout_p, args->dropout_p_ptr, sizeof(float));
        memcpy(&seed, args->dropout_seed_ptr, sizeof(seed));
        if (dr->with_offset)
            memcpy(&offset, args->dropout_offset_ptr, sizeof(offset));
        x->dropout_seed = (uint64_t)seed;
        x->dropout_offset = (uint64_t)offset;
    }
    return SDPA_SUCCESS;
}

void ref_seq_of(const ref_exec_t *x, int64_t b, ref_seq_t *out)
{
    const sdpa_problem_desc_t *p = x->problem;
    const sdpa_exec_args_t *a = x->args;
    memset(out, 0, sizeof(*out));
    out->b = b;
    out->qb = out->kb = b;
    out->len_q = x->shape->q_len;
    out->len_k = x->shape->k_len;
    if (p->varlen.enabled) {
        const int32_t *cu_q = a->cu_seqlens_q, *cu_k = a->cu_seqlens_k;
        out->qb = out->kb = 0;
        out->q0 = cu_q[b];
        out->len_q = cu_q[b + 1] - cu_q[b];
        out->k0 = cu_k[b];
        out->len_k = cu_k[b + 1] - cu_k[b];
    } else if (p->paged_kv.enabled) {
        out->blocks = (const int32_t *)a->block_table + b * p->paged_kv.block_table_stride;
        out->block_size = p->k.dims[2];
        out->len_k = ((const int32_t *)a->cache_seqlens)[b];
    }
}
