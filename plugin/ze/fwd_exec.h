/*
 * fwd_exec.h - what one forward execution passes to its kernel besides the
 * plan: the pointers, the scale and the dropout scalars of sdpa_exec_args_t,
 * with everything the problem does not use set to NULL or 0 (a kernel reads
 * only what its constants select). Shared by the portable launch (fwd.c)
 * and the fast path's (fwd_xe.c).
 */
#ifndef SDPA_ZE_FWD_EXEC_H
#define SDPA_ZE_FWD_EXEC_H

#include <stdint.h>

#include "sdpa.h"

typedef struct ze_fwd_exec {
    const void *q, *k, *v, *mask, *scale_ptr;
    void *dst;
    float *workspace;       /* log-sum-exp (training), else NULL */
    float scale, inv_scale; /* host scale and 1 / scale, else 1 */
    const void *k_scales, *k_zero_points, *v_scales, *v_zero_points;
    /* Dropout: host scalars, or device pointers (the offset is 0, or no
     * pointer, without with_offset). */
    int64_t dropout_seed, dropout_offset;
    float dropout_p;
    const void *dropout_seed_ptr, *dropout_offset_ptr, *dropout_p_ptr;
    void *keep_mask;
} ze_fwd_exec_t;

/* The values of execution a (checked) of forward problem p. */
void ze_fwd_exec_values(const sdpa_problem_desc_t *p, const sdpa_exec_args_t *a,
                        ze_fwd_exec_t *out);

#endif /* SDPA_ZE_FWD_EXEC_H */
