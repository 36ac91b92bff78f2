/*
 * plan_common.h - what the forward and backward plans decide the same way:
 * the SPIR-V variant's sub-group size and head-size bucket, the group-count
 * limit, the configuration-table properties and the specialization
 * constants both directions read.
 */
#ifndef SDPA_CORE_PLAN_COMMON_H
#define SDPA_CORE_PLAN_COMMON_H

#include <stdint.h>

#include "device.h"
#include "kernel_config.h"
#include "problem.h"
#include "sdpa.h"
#include "spec_values.h"

/* Our kernels multiply with FMA (no systolic-array path), so configuration
 * queries carry SDPA_CONFIG_FMA. */
#define SDPA_KERNELS_USE_FMA 1

/* Sets *subgroup_size (sdpa_device_subgroup_size) and *d_max (the head-size
 * bucket) for a problem of shape on device. Returns SDPA_SUCCESS, or
 * SDPA_ERROR_UNSUPPORTED when the device has none of the sub-group sizes
 * the kernels are built for, or the head size is outside 1..max_head_size
 * (`direction` names the pass in the message). */
sdpa_status_t sdpa_plan_variant(const sdpa_shape_t *shape, const sdpa_device_info_t *device,
                                int max_head_size, const char *direction, uint32_t *subgroup_size,
                                int *d_max);

/* Checks a launch of counts[0..2] work-groups against the device's limits
 * (a limit of 0 is none). Returns SDPA_SUCCESS, or SDPA_ERROR_UNSUPPORTED
 * naming the axis, `what` the launch. */
sdpa_status_t sdpa_plan_check_group_count(const int64_t counts[3], const sdpa_device_info_t *device,
                                          const char *what);

/* The configuration-table properties both directions set: THIN_Q when
 * `queries` is at most 16 (oneDNN's threshold for its second-token tables),
 * INTEGRATED, FMA (our kernels have no systolic-array path) and F32 (Q is
 * f32). */
unsigned sdpa_plan_config_props(const sdpa_problem_desc_t *problem,
                                const sdpa_device_info_t *device, int64_t queries);

/* Initializes v and sets the constants both directions read the same way:
 * the dtypes of Q, K, V, O, the mask and a device scale, KV_GROUP_SIZE,
 * TRANSPOSE_K, D_FULL (head size == d_max), the scale, mask and softmax
 * constants and WITH_DROPOUT, DROPOUT_HOST_SCALARS, DROPOUT_OFFSET. */
void sdpa_plan_common_constants(sdpa_spec_values_t *v, const sdpa_problem_desc_t *p,
                                const sdpa_shape_t *shape, int d_max);

/* The window bounds the kernels take (WINDOW_LEFT, WINDOW_RIGHT) for sq
 * queries and sk keys: window.left and window.right, with -1 (unbounded)
 * for no window and for a bound that masks nothing (left >= sk, right >=
 * sq), so that a kernel's pos - left and pos + right stay within int for
 * any sq + sk <= INT32_MAX (sdpa_plan_window_check). */
void sdpa_plan_window_bounds(const sdpa_problem_desc_t *p, int64_t sq, int64_t sk, int32_t *left,
                             int32_t *right);

/* SDPA_ERROR_UNSUPPORTED if a window problem has more than INT32_MAX
 * queries and keys together (the kernels' positions are ints). */
sdpa_status_t sdpa_plan_window_check(const sdpa_problem_desc_t *p, int64_t sq, int64_t sk);

#endif /* SDPA_CORE_PLAN_COMMON_H */
