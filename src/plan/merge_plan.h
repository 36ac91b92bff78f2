/*
 * merge_plan.h - everything about a merge launch (spirv/portable/sdpa_merge.cl) that
 * is fixed when the primitive is created: constants, geometry, build flags
 * and the scalar arguments. The ze backend builds (or finds) the module,
 * sets these arguments and, per execution, the state pointers.
 */
#ifndef SDPA_CORE_MERGE_PLAN_H
#define SDPA_CORE_MERGE_PLAN_H

#include <stdint.h>

#include "device.h"
#include "kernel_abi_merge.h"
#include "sdpa.h"
#include "spec_values.h"

/* Stride arguments SDPA_MERGE_ARG_O_S0 .. SDPA_MERGE_ARG_DST_LSE_S2. */
#define SDPA_MERGE_STRIDE_ARGS (SDPA_MERGE_ARG_DST_LSE_S2 - SDPA_MERGE_ARG_O_S0 + 1)

typedef struct sdpa_merge_plan {
    /* MERGE_NUM_STATES, MERGE_STATE_DT, DST_DT, MERGE_WRITE_LSE,
     * SOFTMAX_INF_AS_ZERO. */
    sdpa_spec_values_t constants;
    const char *build_flags; /* "" or SDPA_ZE_FLAG_LARGE_BUFFERS; static */
    uint32_t local_size[3];
    uint32_t group_count[3];
    int32_t head_size; /* SDPA_MERGE_ARG_D */
    /* SDPA_MERGE_ARG_O_S0 + i: the states' O, their LSE (3), dst, dst_lse
     * (3, zero when not written). */
    int64_t strides[SDPA_MERGE_STRIDE_ARGS];
    char config_string[96]; /* "merge n2 f16->f32 d128 lse" */
} sdpa_merge_plan_t;

/* Plans merge (the output of sdpa_merge_check) on device: SDPA_SUCCESS, or
 * SDPA_ERROR_UNSUPPORTED when a group count exceeds the device's. */
sdpa_status_t sdpa_merge_plan_make(const sdpa_merge_desc_t *merge, const sdpa_device_info_t *device,
                                   sdpa_merge_plan_t *out);

#endif /* SDPA_CORE_MERGE_PLAN_H */
