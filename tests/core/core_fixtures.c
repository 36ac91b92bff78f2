/* core_fixtures.c - hand-built devices and problems for the core's tests. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_fixtures.h"
#include "dense_problem.h"
#include "gpu_models.h"

void fixture_cpu_device(sdpa_device_info_t *out)
{
    static const uint32_t sizes[] = {4, 8, 16, 32, 64};
    memset(out, 0, sizeof(*out));
    out->device_class = SDPA_DEVICE_CLASS_CPU;
    out->vendor_id = 0x8086;
    out->num_subgroup_sizes = 5;
    memcpy(out->subgroup_sizes, sizes, sizeof(sizes));
    out->max_group_size = 8192;
    for (int i = 0; i < 3; i++) {
        out->max_group_size_xyz[i] = 8192;
        out->max_group_count_xyz[i] = UINT32_MAX;
    }
    out->slm_bytes = 256 * 1024;
    out->max_alloc_bytes = (uint64_t)6 << 30;
    out->has_fp16 = out->has_bf16 = 1;
    snprintf(out->name, sizeof(out->name), "test CPU");
}

void fixture_gpu_device(sdpa_device_class_t c, sdpa_device_info_t *out)
{
    /* The ISA gate's models where it has one (one description of each). */
    const gpu_model_t *model = gpu_model_of_class(c);
    if (model) {
        gpu_model_device_info(model, out);
        return;
    }
    memset(out, 0, sizeof(*out));
    out->device_class = c;
    out->vendor_id = 0x8086;
    int from_hpc = c == SDPA_DEVICE_CLASS_XE_HPC || c == SDPA_DEVICE_CLASS_XE2 ||
                   c == SDPA_DEVICE_CLASS_XE3;
    if (from_hpc) {
        out->num_subgroup_sizes = 2;
        out->subgroup_sizes[0] = 16;
        out->subgroup_sizes[1] = 32;
    } else {
        out->num_subgroup_sizes = 3;
        out->subgroup_sizes[0] = 8;
        out->subgroup_sizes[1] = 16;
        out->subgroup_sizes[2] = 32;
    }
    int small = c == SDPA_DEVICE_CLASS_XE_LP || c == SDPA_DEVICE_CLASS_UNKNOWN_GPU;
    out->max_group_size = small ? 512 : 1024;
    for (int i = 0; i < 3; i++) {
        out->max_group_size_xyz[i] = out->max_group_size;
        out->max_group_count_xyz[i] = UINT32_MAX;
    }
    out->slm_bytes = from_hpc ? 128 * 1024 : 64 * 1024;
    out->integrated = c == SDPA_DEVICE_CLASS_XE_LP;
    out->max_alloc_bytes = (uint64_t)4 << 30;
    out->has_fp16 = out->has_bf16 = 1;
    snprintf(out->name, sizeof(out->name), "test %s", sdpa_device_class_name(c));
}

sdpa_tensor_desc_t fixture_tensor(sdpa_dtype_t dtype, int64_t d0, int64_t d1, int64_t d2,
                                  int64_t d3)
{
    return sdpa_tensor_dense(dtype, d0, d1, d2, d3);
}

void fixture_problem(sdpa_dtype_t dtype, int64_t batch, int64_t q_heads, int64_t kv_heads,
                     int64_t q_len, int64_t k_len, int64_t head_size, sdpa_problem_desc_t *p,
                     sdpa_shape_t *shape)
{
    test_dense_problem(p, SDPA_FORWARD_INFERENCE, batch, q_heads, kv_heads, q_len, k_len,
                       head_size, dtype, dtype);
    p->mask_kind = SDPA_MASK_NONE;
    p->scale_kind = SDPA_SCALE_HOST;
    p->softmax_kind = SDPA_SOFTMAX_ACCURATE;
    p->kq_acc_dtype = p->vs_acc_dtype = SDPA_DTYPE_F32;
    *shape = (sdpa_shape_t){batch, q_heads, kv_heads,  q_heads / kv_heads,
                            q_len, k_len,   head_size, head_size};
}

void fixture_make_backward(sdpa_problem_desc_t *p, sdpa_dtype_t grad_dtype)
{
    p->prop_kind = SDPA_BACKWARD;
    p->diff_dst = p->dst;
    p->diff_q = p->q;
    p->diff_k = p->k;
    p->diff_v = p->v;
    p->diff_dst.dtype = p->diff_q.dtype = p->diff_k.dtype = p->diff_v.dtype = grad_dtype;
}

void fixture_backward_problem(sdpa_dtype_t dtype, int64_t batch, int64_t q_heads, int64_t kv_heads,
                              int64_t q_len, int64_t k_len, int64_t head_size,
                              sdpa_problem_desc_t *p, sdpa_shape_t *shape)
{
    fixture_problem(dtype, batch, q_heads, kv_heads, q_len, k_len, head_size, p, shape);
    fixture_make_backward(p, dtype);
}

const char *fixture_xe_unimplemented(sdpa_problem_desc_t *p, int i)
{
    switch (i) {
    case 0:
        p->window = (sdpa_window_desc_t){1, 16, 0};
        return "the fast path has no sliding window";
    case 1:
        p->softcap = 30.0f;
        return "the fast path has no softcap";
    case 2:
        p->alibi = SDPA_ALIBI_PER_HEAD;
        return "the fast path has no ALiBi";
    case 3:
        p->varlen = (sdpa_varlen_desc_t){1, 1, p->q.dims[2], p->k.dims[2]};
        return "the fast path has no variable-length batches";
    case 4:
        p->sinks = 1;
        return "the fast path has no attention sinks";
    default:
        p->paged_kv = (sdpa_paged_kv_desc_t){1, 4, 0};
        return "the fast path has no paged KV cache";
    }
}

void fixture_setenv(const char *name, const char *value)
{
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
}
