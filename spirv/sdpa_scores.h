/*
 * sdpa_scores.h - what the forward and backward kernels agree on about a
 * score s_ij = factor * q_i.k_j + mask_ij: the factor (host, device or no
 * scale, possibly inverted) and the causal band. One definition, so that
 * backward recomputes exactly the probabilities forward produced.
 */
#ifndef SDPA_SPIRV_SCORES_H
#define SDPA_SPIRV_SCORES_H

#include "sdpa_common.h"

#define SDPA_LOG2E 1.44269504088896340736f
#define SDPA_LN2 0.693147180559945309417f

/* unit times the score factor: scale, 1 / scale (INVERT_SCALE) or 1 (no
 * scale). unit is 1 for the factor itself (which also multiplies dQ and dK)
 * or log2(e) for scores in log2 units; a device scale divides unit rather
 * than multiplying by its inverse. */
static inline float sdpa_score_factor(float unit, const global void *scale_ptr, float scale,
                                      float inv_scale)
{
    if (!SC(WITH_ATTN_SCALE))
        return unit;
    if (SC(WITH_HOST_SCALE))
        return unit * (SC(INVERT_SCALE) ? inv_scale : scale);
    const float s = sdpa_load(scale_ptr, 0, SC(SCALE_DT));
    return SC(INVERT_SCALE) ? unit / s : unit * s;
}

static inline bool sdpa_is_causal(void)
{
    return SC(MASK_KIND) == SDPA_MASK_KIND_TOP_LEFT || SC(MASK_KIND) == SDPA_MASK_KIND_BOTTOM_RIGHT;
}

/* Query i sees key j iff j <= i + offset (causal masks only). */
static inline int sdpa_causal_offset(int sk, int sq)
{
    return SC(MASK_KIND) == SDPA_MASK_KIND_BOTTOM_RIGHT ? sk - sq : 0;
}

#endif /* SDPA_SPIRV_SCORES_H */
