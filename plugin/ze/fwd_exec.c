/* fwd_exec.c - the values one forward execution passes to its kernel. */
#include "fwd_exec.h"

void ze_fwd_exec_values(const sdpa_problem_desc_t *p, const sdpa_exec_args_t *a, ze_fwd_exec_t *out)
{
    const int training = p->prop_kind == SDPA_FORWARD_TRAINING;
    const sdpa_dropout_desc_t *dr = &p->dropout;
    const int host_dropout = dr->enabled && dr->host_scalars;
    const int device_dropout = dr->enabled && !dr->host_scalars;
    *out = (ze_fwd_exec_t){
            .q = a->q,
            .k = a->k,
            .v = a->v,
            .mask = p->mask_kind == SDPA_MASK_BUFFER ? a->mask : NULL,
            .scale_ptr = p->scale_kind == SDPA_SCALE_DEVICE ? a->scale_ptr : NULL,
            .dst = a->dst,
            .workspace = training ? a->workspace : NULL,
            .scale = p->scale_kind == SDPA_SCALE_HOST ? a->scale : 1.0f,
            .inv_scale = p->scale_kind == SDPA_SCALE_HOST ? 1.0f / a->scale : 1.0f,
            .k_scales = a->k_scales,
            .k_zero_points = a->k_zero_points,
            .v_scales = a->v_scales,
            .v_zero_points = a->v_zero_points,
            .dropout_seed = host_dropout ? a->dropout_seed : 0,
            .dropout_offset = host_dropout && dr->with_offset ? a->dropout_offset : 0,
            .dropout_p = host_dropout ? a->dropout_p : 0.0f,
            .dropout_seed_ptr = device_dropout ? a->dropout_seed_ptr : NULL,
            .dropout_offset_ptr = device_dropout && dr->with_offset ? a->dropout_offset_ptr : NULL,
            .dropout_p_ptr = device_dropout ? a->dropout_p_ptr : NULL,
            .keep_mask = dr->enabled && dr->with_mask_output ? a->dropout_mask : NULL,
    };
}
