/* merge_plan.c - the launch of a merge (kernel_abi_merge.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "fwd_plan.h"
#include "merge_plan.h"
#include "problem.h"
#include "tensor_layout.h"

/* The kernel and the host agree on the number of state arguments. */
_Static_assert(SDPA_MERGE_ARG_O15 - SDPA_MERGE_ARG_O0 + 1 == SDPA_MERGE_MAX_STATES,
               "sdpa_merge_args.def has one O argument per state");
_Static_assert(SDPA_MERGE_ARG_LSE15 - SDPA_MERGE_ARG_LSE0 + 1 == SDPA_MERGE_MAX_STATES,
               "sdpa_merge_args.def has one LSE argument per state");

/* The batch, head and query strides of an LSE tensor. */
static void lse_strides(int64_t *out, const sdpa_tensor_desc_t *t)
{
    for (int axis = 0; axis < 3; axis++)
        out[axis] = t->dtype == SDPA_DTYPE_UNDEF ? 0 : t->strides[axis];
}

sdpa_status_t sdpa_merge_plan_make(const sdpa_merge_desc_t *m, const sdpa_device_info_t *device,
                                   sdpa_merge_plan_t *out)
{
    sdpa_merge_plan_t plan;
    memset(&plan, 0, sizeof(plan));
    const int64_t counts[3] = {m->dst.dims[2], m->dst.dims[1], m->dst.dims[0]};
    const int axis = sdpa_device_group_count_excess(device, counts);
    if (axis >= 0)
        return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                         "merge group count %c = %" PRId64 " (%s) exceeds device \"%s\"'s limit",
                         "xyz"[axis], counts[axis],
                         axis == 0   ? "queries"
                         : axis == 1 ? "heads"
                                     : "batch",
                         device->name);
    for (int i = 0; i < 3; i++)
        plan.group_count[i] = (uint32_t)counts[i];
    plan.head_size = (int32_t)m->dst.dims[3];
    plan.local_size[0] = (uint32_t)SDPA_MERGE_LOCAL_SIZE(plan.head_size);
    plan.local_size[1] = plan.local_size[2] = 1;

    int64_t *s = plan.strides;
    for (int n = 0; n < 4; n++)
        *s++ = m->states.strides[n];
    lse_strides(s, &m->states_lse);
    s += 3;
    for (int n = 0; n < 4; n++)
        *s++ = m->dst.strides[n];
    lse_strides(s, &m->dst_lse);

    sdpa_spec_values_t *v = &plan.constants;
    sdpa_spec_values_init(v);
    sdpa_spec_values_set_int(v, SDPA_SC_MERGE_NUM_STATES, (int32_t)m->num_states);
    sdpa_spec_values_set_int(v, SDPA_SC_MERGE_STATE_DT, m->states.dtype);
    sdpa_spec_values_set_int(v, SDPA_SC_DST_DT, m->dst.dtype);
    sdpa_spec_values_set_bool(v, SDPA_SC_MERGE_WRITE_LSE, m->dst_lse.dtype != SDPA_DTYPE_UNDEF);
    sdpa_spec_values_set_bool(v, SDPA_SC_SOFTMAX_INF_AS_ZERO,
                              m->softmax_kind == SDPA_SOFTMAX_INF_AS_ZERO);

    /* Every state spans as much as the first. */
    const uint64_t limit = (uint64_t)1 << 32;
    const sdpa_tensor_desc_t *tensors[4] = {&m->states, &m->states_lse, &m->dst, &m->dst_lse};
    plan.build_flags = "";
    for (int t = 0; t < 4; t++)
        if (sdpa_tensor_span_bytes(tensors[t]) >= limit)
            plan.build_flags = SDPA_ZE_FLAG_LARGE_BUFFERS;

    snprintf(plan.config_string, sizeof(plan.config_string), "merge n%u %s->%s d%" PRId32 " wg%u%s",
             m->num_states, sdpa_dtype_name(m->states.dtype), sdpa_dtype_name(m->dst.dtype),
             plan.head_size, plan.local_size[0],
             m->dst_lse.dtype != SDPA_DTYPE_UNDEF ? " lse" : "");
    *out = plan;
    return SDPA_SUCCESS;
}
