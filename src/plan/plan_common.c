/* plan_common.c - the decisions the forward and backward plans share. */
#include <inttypes.h>

#include "config_choose.h"
#include "kernel_abi.h"
#include "error.h"
#include "plan_common.h"

/* Thin Q: oneDNN's threshold for its second-token (decode) tables. */
#define THIN_Q_MAX_QUERIES 16

sdpa_status_t sdpa_plan_variant(const sdpa_shape_t *shape, const sdpa_device_info_t *device,
                                int max_head_size, const char *direction, uint32_t *subgroup_size,
                                int *d_max)
{
    *subgroup_size = sdpa_device_subgroup_size(device);
    if (*subgroup_size == 0)
        return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                         "device \"%s\" supports none of the sub-group sizes 16, 8 and 32 the "
                         "kernels are built for",
                         device->name);
    /* One bucket holds both head sizes (Q/K's and V's). */
    const int64_t widest = sdpa_shape_widest_head(shape);
    *d_max = sdpa_head_size_bucket(widest);
    if (*d_max == 0 || widest > max_head_size)
        return sdpa_fail(SDPA_ERROR_UNSUPPORTED, "head size %" PRId64 ": %s serves 1..%d", widest,
                         direction, max_head_size);
    return SDPA_SUCCESS;
}

sdpa_status_t sdpa_plan_check_group_count(const int64_t counts[3], const sdpa_device_info_t *device,
                                          const char *what)
{
    for (int i = 0; i < 3; i++) {
        uint32_t max = device->max_group_count_xyz[i] ? device->max_group_count_xyz[i] : UINT32_MAX;
        if (counts[i] > (int64_t)max)
            return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                             "%s group count %c = %" PRId64 " exceeds the device's %" PRIu32, what,
                             "xyz"[i], counts[i], max);
    }
    return SDPA_SUCCESS;
}

unsigned sdpa_plan_config_props(const sdpa_problem_desc_t *problem,
                                const sdpa_device_info_t *device, int64_t queries)
{
    unsigned props = 0;
    if (queries <= THIN_Q_MAX_QUERIES)
        props |= SDPA_CONFIG_THIN_Q;
    if (device->integrated)
        props |= SDPA_CONFIG_INTEGRATED;
    if (SDPA_KERNELS_USE_FMA)
        props |= SDPA_CONFIG_FMA;
    if (problem->q.dtype == SDPA_DTYPE_F32)
        props |= SDPA_CONFIG_F32;
    return props;
}

void sdpa_plan_common_constants(sdpa_spec_values_t *v, const sdpa_problem_desc_t *p,
                                const sdpa_shape_t *shape, int d_max)
{
    const int mask_buffer = p->mask_kind == SDPA_MASK_BUFFER;
    const int dropout = p->dropout.enabled != 0;
    sdpa_spec_values_init(v);

    sdpa_spec_values_set_int(v, SDPA_SC_QRY_DT, p->q.dtype);
    sdpa_spec_values_set_int(v, SDPA_SC_KEY_DT, p->k.dtype);
    sdpa_spec_values_set_int(v, SDPA_SC_VAL_DT, p->v.dtype);
    sdpa_spec_values_set_int(v, SDPA_SC_DST_DT, p->dst.dtype);
    sdpa_spec_values_set_int(v, SDPA_SC_MSK_DT, mask_buffer ? p->mask.dtype : SDPA_DTYPE_UNDEF);
    sdpa_spec_values_set_int(v, SDPA_SC_SCALE_DT,
                             p->scale_kind == SDPA_SCALE_DEVICE ? p->scale_dtype : SDPA_DTYPE_F32);

    sdpa_spec_values_set_int(v, SDPA_SC_KV_GROUP_SIZE, (int32_t)shape->kv_group_size);
    sdpa_spec_values_set_bool(v, SDPA_SC_TRANSPOSE_K, p->k.strides[2] == 1 && p->k.strides[3] != 1);
    sdpa_spec_values_set_bool(v, SDPA_SC_D_FULL,
                              shape->head_size == d_max && shape->head_size_v == d_max);

    sdpa_spec_values_set_bool(v, SDPA_SC_WITH_ATTN_SCALE, p->scale_kind != SDPA_SCALE_NONE);
    sdpa_spec_values_set_bool(v, SDPA_SC_WITH_HOST_SCALE, p->scale_kind == SDPA_SCALE_HOST);
    sdpa_spec_values_set_bool(v, SDPA_SC_INVERT_SCALE,
                              p->scale_kind != SDPA_SCALE_NONE && p->invert_scale);
    sdpa_spec_values_set_int(v, SDPA_SC_MASK_KIND, p->mask_kind);
    sdpa_spec_values_set_bool(v, SDPA_SC_BROADCAST_MASK_Q, mask_buffer && p->mask.dims[2] == 1);
    sdpa_spec_values_set_bool(v, SDPA_SC_SOFTMAX_INF_AS_ZERO,
                              p->softmax_kind == SDPA_SOFTMAX_INF_AS_ZERO);

    sdpa_spec_values_set_bool(v, SDPA_SC_WITH_DROPOUT, dropout);
    sdpa_spec_values_set_bool(v, SDPA_SC_DROPOUT_HOST_SCALARS, dropout && p->dropout.host_scalars);
    sdpa_spec_values_set_bool(v, SDPA_SC_DROPOUT_OFFSET, dropout && p->dropout.with_offset);

    sdpa_spec_values_set_bool(v, SDPA_SC_WITH_WINDOW, p->window.enabled != 0);
    sdpa_spec_values_set_bool(v, SDPA_SC_WITH_SOFTCAP, p->softcap > 0.0f);
    sdpa_spec_values_set_int(v, SDPA_SC_ALIBI_KIND, p->alibi);
    sdpa_spec_values_set_bool(v, SDPA_SC_WITH_SINKS, p->sinks != 0);
}

_Static_assert(SDPA_ALIBI_KIND_NONE == SDPA_ALIBI_NONE &&
                       SDPA_ALIBI_KIND_PER_HEAD == SDPA_ALIBI_PER_HEAD &&
                       SDPA_ALIBI_KIND_PER_BATCH_HEAD == SDPA_ALIBI_PER_BATCH_HEAD,
               "kernel_abi.h's ALiBi kinds are sdpa_alibi_kind_t's");

void sdpa_plan_window_bounds(const sdpa_problem_desc_t *p, int64_t sq, int64_t sk, int32_t *left,
                             int32_t *right)
{
    const int on = p->window.enabled != 0;
    *left = on && p->window.left >= 0 && p->window.left < sk ? (int32_t)p->window.left : -1;
    *right = on && p->window.right >= 0 && p->window.right < sq ? (int32_t)p->window.right : -1;
}

sdpa_status_t sdpa_plan_window_check(const sdpa_problem_desc_t *p, int64_t sq, int64_t sk)
{
    if (p->window.enabled && sq + sk > INT32_MAX)
        return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                         "window.enabled = 1 with %lld queries and %lld keys: windows over more "
                         "than %d positions together are not supported",
                         (long long)sq, (long long)sk, INT32_MAX);
    return SDPA_SUCCESS;
}
