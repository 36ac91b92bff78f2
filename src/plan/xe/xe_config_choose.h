/*
 * xe_config_choose.h - how the fast path picks its configuration, the same
 * for the forward (xe_fwd_plan.h) and the backward (xe_bwd_plan.h): an
 * environment override it accepts, else the first matching row of its
 * table (xe_config_table.c) that it accepts, else nothing, and the plan
 * falls back to the portable kernels, whose own choice then reports a bad
 * override. What differs between the directions is a sdpa_xe_direction_t
 * (sdpa_fwd_xe_direction, sdpa_bwd_xe_direction), as the portable plans'
 * choice differs by config_choose.c's direction_t.
 */
#ifndef SDPA_CORE_XE_CONFIG_CHOOSE_H
#define SDPA_CORE_XE_CONFIG_CHOOSE_H

#include <stddef.h>
#include <stdint.h>

#include "config_choose.h"
#include "device.h"
#include "kernel_config.h"
#include "problem.h"
#include "sdpa.h"
#include "xe_target.h"

/* One direction of the fast path, for sdpa_xe_config_choose. config is
 * always the direction's configuration type (sdpa_fwd_config_t or
 * sdpa_bwd_config_t). */
typedef struct sdpa_xe_direction {
    /* The xe table: *count rows of row_size bytes, each a criteria followed
     * by a configuration of config_size bytes at config_offset. */
    const void *rows;
    const size_t *count;
    size_t row_size, config_offset, config_size;
    /* Reads the override that applies to problem into config (config_env.h):
     * *found 1 if set, *var its name; a malformed value fails. */
    sdpa_status_t (*from_env)(const sdpa_problem_desc_t *problem, void *config, int *found,
                              const char **var);
    /* The portable kernels' table query for the problem
     * (sdpa_fwd_config_query_for, sdpa_bwd_config_query_for). */
    void (*query_for)(const sdpa_problem_desc_t *problem, const sdpa_shape_t *shape,
                      const sdpa_device_info_t *device, sdpa_config_query_t *query);
    /* The direction's rules (sdpa_fwd_xe_config_check,
     * sdpa_bwd_xe_config_check), quoting source in the error. */
    sdpa_status_t (*check)(const void *config, const sdpa_xe_target_t *target,
                           const sdpa_device_info_t *device, int64_t head_size, const char *source);
} sdpa_xe_direction_t;

/* Chooses the fast path's configuration in direction d for problem (of
 * shape, served on device by target) into out (d->config_size bytes). The
 * override (d->from_env) that passes d->check is used as is; one that does
 * not leaves the choice to the portable kernels (*use = 0), whose checks
 * judge it. Without an override: the rows of d's table matching the
 * portable query for target's row class (FMA and F32 dropped: the fast path
 * multiplies on the matrix engine), best first (as
 * sdpa_config_candidates_in orders them); the first that d->check accepts
 * wins; none: *use = 0. *use 1: out and *source are set. Clears the error
 * state of refused configurations. Returns SDPA_SUCCESS, or the override's
 * parse error. */
sdpa_status_t sdpa_xe_config_choose(const sdpa_xe_direction_t *d,
                                    const sdpa_problem_desc_t *problem, const sdpa_shape_t *shape,
                                    const sdpa_device_info_t *device,
                                    const sdpa_xe_target_t *target, void *out,
                                    sdpa_config_source_t *source, int *use);

#endif /* SDPA_CORE_XE_CONFIG_CHOOSE_H */
