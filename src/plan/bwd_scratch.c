/* bwd_scratch.c - scratch regions and zero fills of a backward execution. */
#include <string.h>

#include "bwd_scratch.h"
#include "error.h"
#include "kernel_abi_bwd.h"
#include "scratch_layout.h"
#include "size_math.h"
#include "tensor_layout.h"

_Static_assert(SDPA_BWD_STRIDES_COUNT == SDPA_BWD_STRIDE_COUNT,
               "the strides region must hold kernel_abi_bwd.h's strides buffer");

sdpa_bwd_mode_t sdpa_bwd_mode_of(const sdpa_problem_desc_t *problem)
{
    return problem->deterministic ? SDPA_BWD_MODE_DETERMINISTIC : SDPA_BWD_MODE_ATOMIC;
}

/* An f32 output the kernel may add into directly: no conversion, and a
 * fill of its elements clears exactly it. */
static int f32_dense(const sdpa_tensor_desc_t *t)
{
    return t->dtype == SDPA_DTYPE_F32 && sdpa_tensor_is_dense(t);
}

sdpa_shape_t sdpa_bwd_storage_shape(const sdpa_problem_desc_t *problem, const sdpa_shape_t *shape)
{
    sdpa_shape_t s = *shape;
    if (problem->varlen.enabled) {
        s.batch = 1;
        s.q_len = problem->q.dims[2];
        s.k_len = problem->k.dims[2];
    }
    return s;
}

static void add_fill(sdpa_bwd_scratch_t *s, sdpa_bwd_buffer_t buffer, size_t offset, size_t bytes)
{
    s->fills[s->num_fills++] = (sdpa_zero_fill_t){buffer, offset, bytes};
}

sdpa_status_t sdpa_bwd_scratch_plan(const sdpa_problem_desc_t *problem, const sdpa_shape_t *shape,
                                    sdpa_bwd_mode_t mode, int64_t dq_slices,
                                    sdpa_bwd_scratch_t *out)
{
    if (problem->prop_kind != SDPA_BACKWARD)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "prop_kind = %d: only BACKWARD problems have a backward scratch",
                         (int)problem->prop_kind);

    if (dq_slices < 0 || (dq_slices > 0 && problem->varlen.enabled))
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "dq_slices = %lld: partial dQ slices need a count >= 1 and no varlen",
                         (long long)dq_slices);

    sdpa_bwd_scratch_t s;
    memset(&s, 0, sizeof(s));
    s.mode = mode;
    s.dq_slices = dq_slices;
    /* Packed sequences: the sums go through the scratch and a postprocess
     * that writes the sequences' rows only (no fill of the caller's rows
     * outside every sequence). */
    const int varlen = problem->varlen.enabled != 0;
    const sdpa_shape_t packed = sdpa_bwd_storage_shape(problem, shape);
    shape = &packed;

    const int64_t q_dims[4] = {shape->batch, shape->q_heads, shape->q_len, shape->head_size};
    const int64_t kv_dims[4] = {shape->batch, shape->kv_heads, shape->k_len, shape->head_size};
    const int64_t partial_dims[4] = {shape->batch, shape->q_heads, shape->k_len, shape->head_size};
    /* dV's buffers take V's head size. */
    const int64_t v_dims[4] = {shape->batch, shape->kv_heads, shape->k_len, shape->head_size_v};
    const int64_t partial_v_dims[4] = {shape->batch, shape->q_heads, shape->k_len,
                                       shape->head_size_v};
    uint64_t q_rows = sdpa_size_product(q_dims, 3);
    uint64_t q_elems = sdpa_size_product(q_dims, 4);
    uint64_t kv_elems = sdpa_size_product(kv_dims, 4);
    uint64_t partial_elems = sdpa_size_product(partial_dims, 4);
    uint64_t v_elems = sdpa_size_product(v_dims, 4);
    uint64_t partial_v_elems = sdpa_size_product(partial_v_dims, 4);
    const uint64_t dq_slice_elems = sdpa_size_mul(q_elems, (uint64_t)dq_slices);
    int gqa = shape->kv_group_size > 1;
    size_t end = 0;
    int ok = 1;

    /* Partial dQ: written once per element by sdpa_bwd, summed in order by
     * the postprocess, in both modes. */
    if (dq_slices > 0) {
        s.dq_f32_scratch = 1;
        ok &= sdpa_scratch_append(&end, &s.dq, dq_slice_elems, sizeof(float));
    }
    if (mode == SDPA_BWD_MODE_ATOMIC) {
        if (dq_slices == 0) {
            s.dq_f32_scratch = varlen || !f32_dense(&problem->diff_q);
            if (s.dq_f32_scratch)
                ok &= sdpa_scratch_append(&end, &s.dq, q_elems, sizeof(float));
        }
        s.dkv_atomic = gqa;
        s.dkv_f32_scratch =
                gqa && (varlen || !(f32_dense(&problem->diff_k) && f32_dense(&problem->diff_v)));
        if (s.dkv_f32_scratch) {
            ok &= sdpa_scratch_append(&end, &s.dk, kv_elems, sizeof(float));
            ok &= sdpa_scratch_append(&end, &s.dv, v_elems, sizeof(float));
        }
    } else {
        s.dkv_partials = gqa;
        s.dkv_f32_scratch = gqa;
        if (gqa) {
            ok &= sdpa_scratch_append(&end, &s.dk, partial_elems, sizeof(float));
            ok &= sdpa_scratch_append(&end, &s.dv, partial_v_elems, sizeof(float));
        }
    }
    ok &= sdpa_scratch_append(&end, &s.d_i, q_rows, sizeof(float));
    ok &= sdpa_scratch_append(&end, &s.strides, SDPA_BWD_STRIDES_COUNT, sizeof(int64_t));
    /* Fills of the caller's buffers cover their elements as f32. */
    ok &= sdpa_size_bytes(q_elems, 32) <= SDPA_MAX_BUFFER_BYTES &&
          sdpa_size_bytes(kv_elems, 32) <= SDPA_MAX_BUFFER_BYTES &&
          sdpa_size_bytes(v_elems, 32) <= SDPA_MAX_BUFFER_BYTES;
    if (!ok)
        return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                         "backward scratch for B = %lld, Hq = %lld, Sq = %lld, Sk = %lld, D = "
                         "%lld would exceed the largest addressable buffer (2^63 - 1 bytes)",
                         (long long)shape->batch, (long long)shape->q_heads,
                         (long long)shape->q_len, (long long)shape->k_len,
                         (long long)shape->head_size);
    s.total_bytes = end;

    /* Atomic sums start from zero (dQ slices are written whole: no fill). */
    if (mode == SDPA_BWD_MODE_ATOMIC) {
        if (dq_slices == 0 && s.dq_f32_scratch)
            add_fill(&s, SDPA_BWD_BUFFER_SCRATCH, s.dq.offset, s.dq.bytes);
        else if (dq_slices == 0)
            add_fill(&s, SDPA_BWD_BUFFER_DIFF_Q, 0, (size_t)q_elems * sizeof(float));
        if (s.dkv_atomic && s.dkv_f32_scratch) {
            add_fill(&s, SDPA_BWD_BUFFER_SCRATCH, s.dk.offset, s.dk.bytes);
            add_fill(&s, SDPA_BWD_BUFFER_SCRATCH, s.dv.offset, s.dv.bytes);
        } else if (s.dkv_atomic) {
            add_fill(&s, SDPA_BWD_BUFFER_DIFF_K, 0, (size_t)kv_elems * sizeof(float));
            add_fill(&s, SDPA_BWD_BUFFER_DIFF_V, 0, (size_t)v_elems * sizeof(float));
        }
    }
    *out = s;
    return SDPA_SUCCESS;
}
