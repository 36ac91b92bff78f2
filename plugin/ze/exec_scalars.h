/*
 * exec_scalars.h - the scale and dropout values one execution passes to a
 * kernel, whatever its argument table: host scalars or device pointers as
 * the problem says, and 0 / NULL for what it does not use (a kernel reads
 * only what its constants select).
 */
#ifndef SDPA_ZE_EXEC_SCALARS_H
#define SDPA_ZE_EXEC_SCALARS_H

#include <stdint.h>

#include "sdpa.h"

typedef struct sdpa_ze_exec_scalars {
    const void *scale_ptr;  /* device scale, else NULL */
    float scale, inv_scale; /* host scale and 1 / scale, else 1 */
    /* Dropout: host scalars, or device pointers (no offset, or 0, without
     * with_offset). */
    int64_t dropout_seed, dropout_offset;
    float dropout_p;
    const void *dropout_seed_ptr, *dropout_offset_ptr, *dropout_p_ptr;
    /* Score modifiers (ABI 1.1): the window bounds of sdpa_plan_window_bounds,
     * the softcap (0: off) and the ALiBi slopes (NULL: none). */
    int32_t window_left, window_right;
    float softcap;
    const void *alibi_slopes;
} sdpa_ze_exec_scalars_t;

/* The values of execution a (checked) of problem p. */
void sdpa_ze_exec_scalars(const sdpa_problem_desc_t *p, const sdpa_exec_args_t *a,
                          sdpa_ze_exec_scalars_t *out);

/* Sets the rows SCALE_PTR, SCALE, INV_SCALE and DROPOUT_* of args, a
 * pointer to the struct of any argument table that has them (the rows have
 * the same names in every table), from s. */
#define SDPA_ZE_SET_EXEC_SCALARS(args, s)                                                          \
    do {                                                                                           \
        (args)->SCALE_PTR = (s)->scale_ptr;                                                        \
        (args)->SCALE = (s)->scale;                                                                \
        (args)->INV_SCALE = (s)->inv_scale;                                                        \
        (args)->DROPOUT_SEED = (s)->dropout_seed;                                                  \
        (args)->DROPOUT_OFFSET = (s)->dropout_offset;                                              \
        (args)->DROPOUT_P = (s)->dropout_p;                                                        \
        (args)->DROPOUT_SEED_PTR = (s)->dropout_seed_ptr;                                          \
        (args)->DROPOUT_OFFSET_PTR = (s)->dropout_offset_ptr;                                      \
        (args)->DROPOUT_P_PTR = (s)->dropout_p_ptr;                                                \
    } while (0)

/* Sets the rows WINDOW_LEFT, WINDOW_RIGHT, SOFTCAP and ALIBI_SLOPES of the
 * forward and backward argument tables from s. */
#define SDPA_ZE_SET_SCORE_MODS(args, s)                                                            \
    do {                                                                                           \
        (args)->WINDOW_LEFT = (s)->window_left;                                                    \
        (args)->WINDOW_RIGHT = (s)->window_right;                                                  \
        (args)->SOFTCAP = (s)->softcap;                                                            \
        (args)->ALIBI_SLOPES = (s)->alibi_slopes;                                                  \
    } while (0)

#endif /* SDPA_ZE_EXEC_SCALARS_H */
