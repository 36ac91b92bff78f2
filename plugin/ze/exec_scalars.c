/* exec_scalars.c - the scale and dropout values of one execution. */
#include "exec_scalars.h"
#include "plan_common.h"
#include "problem_llm.h"

void sdpa_ze_exec_scalars(const sdpa_problem_desc_t *p, const sdpa_exec_args_t *a,
                          sdpa_ze_exec_scalars_t *out)
{
    const int host_scale = p->scale_kind == SDPA_SCALE_HOST;
    const sdpa_dropout_desc_t *dr = &p->dropout;
    const int host_dropout = dr->enabled && dr->host_scalars;
    const int device_dropout = dr->enabled && !dr->host_scalars;
    *out = (sdpa_ze_exec_scalars_t){
            .scale_ptr = p->scale_kind == SDPA_SCALE_DEVICE ? a->scale_ptr : NULL,
            .scale = host_scale ? a->scale : 1.0f,
            .inv_scale = host_scale ? 1.0f / a->scale : 1.0f,
            .dropout_seed = host_dropout ? a->dropout_seed : 0,
            .dropout_offset = host_dropout && dr->with_offset ? a->dropout_offset : 0,
            .dropout_p = host_dropout ? a->dropout_p : 0.0f,
            .dropout_seed_ptr = device_dropout ? a->dropout_seed_ptr : NULL,
            .dropout_offset_ptr = device_dropout && dr->with_offset ? a->dropout_offset_ptr : NULL,
            .dropout_p_ptr = device_dropout ? a->dropout_p_ptr : NULL,
            .softcap = p->softcap,
            .alibi_slopes = p->alibi != SDPA_ALIBI_NONE ? a->alibi_slopes : NULL,
    };
    int64_t scores[4]; /* [B, Hq, Sq, Sk], the maxima with varlen or a paged cache */
    sdpa_llm_scores_dims(p, scores);
    sdpa_plan_window_bounds(p, scores[2], scores[3], &out->window_left, &out->window_right);
}
