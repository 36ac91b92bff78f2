/* ref_exec.c - the scalars one execution reads (scale, dropout), fetched on
 * the host whether the caller passed values or pointers. */
#include <string.h>

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

void ref_exec_init(ref_exec_t *x, const sdpa_problem_desc_t *problem, const sdpa_shape_t *shape,
                   const sdpa_exec_args_t *args)
{
    memset(x, 0, sizeof(*x));
    x->problem = problem;
    x->shape = shape;
    x->args = args;
    x->score_scale = score_scale(problem, args);
    const sdpa_dropout_desc_t *dr = &problem->dropout;
    if (!dr->enabled)
        return;
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
}
