/* invalid_table.c - invalid problems, arguments and calls, each with the
 * status and the words the message must contain. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked_iface.h"
#include "invalid_table.h"

typedef enum where {
    AT_CREATE,  /* primitive_create(mutated problem) */
    AT_EXECUTE, /* primitive_execute(valid primitive, mutated args) */
    AT_CALL,    /* a custom call */
} where_t;

typedef struct invalid_case {
    const char *label;
    where_t where;
    /* The valid starting point, then the mutation. */
    void (*base)(sdpa_problem_desc_t *d);
    void (*mutate_problem)(sdpa_problem_desc_t *d);
    void (*mutate_args)(sdpa_exec_args_t *a);
    /* AT_CALL: returns the status of the call under test. */
    sdpa_status_t (*call)(const sdpa_backend_iface_t *iface, sdpa_context_t *ctx,
                          const sdpa_problem_desc_t *valid);
    sdpa_status_t expected;
    const char *needles[3]; /* words the message must contain */
} invalid_case_t;

/* ------------------------------------------------------------------------- */
/* Valid starting points                                                     */
/* ------------------------------------------------------------------------- */

static void fwd(sdpa_problem_desc_t *d)
{
    problem_init(d, SDPA_FORWARD_INFERENCE, 2, 4, 2, 8, 6, 16, SDPA_DTYPE_F16, SDPA_DTYPE_F16);
}
static void train(sdpa_problem_desc_t *d)
{
    problem_init(d, SDPA_FORWARD_TRAINING, 2, 4, 2, 8, 6, 16, SDPA_DTYPE_F16, SDPA_DTYPE_F16);
}
static void bwd(sdpa_problem_desc_t *d)
{
    problem_init(d, SDPA_BACKWARD, 2, 4, 2, 8, 6, 16, SDPA_DTYPE_F16, SDPA_DTYPE_F16);
}
static void quant(sdpa_problem_desc_t *d)
{
    problem_init(d, SDPA_FORWARD_INFERENCE, 2, 4, 2, 8, 6, 16, SDPA_DTYPE_F16, SDPA_DTYPE_S8);
    d->k_quant = (sdpa_quant_desc_t){
            .scales = SDPA_QUANT_PER_GROUP, .scales_dtype = SDPA_DTYPE_F16, .group_size = 8};
    d->v_quant = (sdpa_quant_desc_t){.scales = SDPA_QUANT_PER_TENSOR,
                                     .scales_dtype = SDPA_DTYPE_F32,
                                     .zero_points = SDPA_QUANT_PER_TENSOR,
                                     .zero_points_dtype = SDPA_DTYPE_S8};
}
static void masked(sdpa_problem_desc_t *d)
{
    fwd(d);
    d->mask_kind = SDPA_MASK_BUFFER;
    d->mask = dense_tensor(SDPA_DTYPE_F16, 1, 4, 8, 6);
}
static void dropout_train(sdpa_problem_desc_t *d)
{
    train(d);
    d->dropout = (sdpa_dropout_desc_t){.enabled = 1, .host_scalars = 1, .with_mask_output = 1};
}
static void dropout_device(sdpa_problem_desc_t *d)
{
    train(d);
    d->dropout = (sdpa_dropout_desc_t){.enabled = 1, .host_scalars = 0, .with_offset = 1};
}
static void device_scale(sdpa_problem_desc_t *d)
{
    fwd(d);
    d->scale_kind = SDPA_SCALE_DEVICE;
    d->scale_dtype = SDPA_DTYPE_F32;
}
static void bwd_ds(sdpa_problem_desc_t *d)
{
    bwd(d);
    d->ds = dense_tensor(SDPA_DTYPE_F32, 2, 4, 8, 6);
}

/* ABI 1.1 features: varlen over 2 sequences packed in 12 query and 10 key
 * rows; a paged cache of 4 blocks of 16 keys, 2 per sequence. */
static void varlen(sdpa_problem_desc_t *d)
{
    problem_init(d, SDPA_FORWARD_TRAINING, 1, 4, 2, 12, 10, 16, SDPA_DTYPE_F16, SDPA_DTYPE_F16);
    d->varlen = (sdpa_varlen_desc_t){1, 2, 8, 6};
}
static void paged(sdpa_problem_desc_t *d)
{
    problem_init(d, SDPA_FORWARD_INFERENCE, 2, 4, 2, 1, 16, 16, SDPA_DTYPE_F16, SDPA_DTYPE_F16);
    d->k.dims[0] = d->v.dims[0] = 4;
    d->paged_kv = (sdpa_paged_kv_desc_t){1, 2, 0};
    d->mask_kind = SDPA_MASK_CAUSAL_BOTTOM_RIGHT;
}
static void windowed(sdpa_problem_desc_t *d)
{
    bwd(d);
    d->window = (sdpa_window_desc_t){1, 2, 0};
    d->softcap = 30.0f;
    d->alibi = SDPA_ALIBI_PER_HEAD;
}

/* ------------------------------------------------------------------------- */
/* Mutations of the problem                                                  */
/* ------------------------------------------------------------------------- */

#define MUTATE(name, body)                                                                         \
    static void name(sdpa_problem_desc_t *d)                                                       \
    {                                                                                              \
        body;                                                                                      \
    }

MUTATE(size_zero, d->struct_size = 0)
MUTATE(size_too_big, d->struct_size = sizeof(*d) + 8)
MUTATE(version_zero, d->struct_version = 0)
MUTATE(version_future, d->struct_version = SDPA_PROBLEM_DESC_VERSION + 1)
MUTATE(bad_prop_kind, d->prop_kind = (sdpa_prop_kind_t)7)
MUTATE(bad_mask_kind, d->mask_kind = (sdpa_mask_kind_t)9)
MUTATE(bad_scale_kind, d->scale_kind = (sdpa_scale_kind_t)-1)
MUTATE(bad_softmax_kind, d->softmax_kind = (sdpa_softmax_kind_t)5)
MUTATE(bad_q_dtype, d->q.dtype = (sdpa_dtype_t)42)
MUTATE(q_undef, d->q.dtype = SDPA_DTYPE_UNDEF)
MUTATE(q_integer, d->q.dtype = d->dst.dtype = SDPA_DTYPE_S8)
MUTATE(head_size_zero, d->q.dims[3] = 0)
MUTATE(head_size_577, d->q.dims[3] = d->k.dims[3] = d->v.dims[3] = d->dst.dims[3] = 577)
MUTATE(batch_zero, d->k.dims[0] = 0)
MUTATE(kv_heads_not_dividing, d->k.dims[1] = d->v.dims[1] = 3)
MUTATE(batch_mismatch, d->k.dims[0] = d->v.dims[0] = 3)
MUTATE(head_size_mismatch, d->k.dims[3] = d->v.dims[3] = 8)
MUTATE(v_keys_mismatch, d->v.dims[2] = 7)
MUTATE(dst_dtype_mismatch, d->dst.dtype = SDPA_DTYPE_F32)
MUTATE(dst_dims_mismatch, d->dst.dims[2] = 9)
MUTATE(negative_stride, d->q.strides[2] = -16)
MUTATE(huge_dim, d->q.dims[2] = d->dst.dims[2] = 3000000000LL)
MUTATE(overflowing_strides, d->k.strides[3] = INT64_MAX / 8)
MUTATE(k_s32, d->k.dtype = SDPA_DTYPE_S32)
MUTATE(k_int_without_scales, d->k.dtype = SDPA_DTYPE_S8)
MUTATE(float_k_with_scales, d->k_quant = ((sdpa_quant_desc_t){.scales = SDPA_QUANT_PER_TENSOR,
                                                              .scales_dtype = SDPA_DTYPE_F32}))
MUTATE(bad_quant_kind, d->k_quant.scales = (sdpa_quant_kind_t)4)
MUTATE(group_size_3, d->k_quant.group_size = 3)
MUTATE(group_size_32, d->k_quant.group_size = 32)
MUTATE(scales_dtype_s8, d->k_quant.scales_dtype = SDPA_DTYPE_S8)
MUTATE(zero_points_dtype_f32, d->v_quant.zero_points_dtype = SDPA_DTYPE_F32)
MUTATE(k_s4_stride3, d->k.dtype = SDPA_DTYPE_S4; d->k.strides[3] = 2; d->k.strides[2] = 32;
       d->k.strides[1] = 192; d->k.strides[0] = 384)
MUTATE(k_s4_odd_stride, d->k.dtype = SDPA_DTYPE_S4; d->k.strides[2] = 17; d->k.strides[1] = 102;
       d->k.strides[0] = 204)
MUTATE(mask_missing, d->mask.dtype = SDPA_DTYPE_UNDEF)
MUTATE(mask_integer, d->mask.dtype = SDPA_DTYPE_U8)
MUTATE(mask_heads_3, d->mask.dims[1] = 3)
MUTATE(mask_keys, d->mask.dims[3] = 5)
MUTATE(causal_with_mask_tensor, d->mask_kind = SDPA_MASK_CAUSAL_TOP_LEFT)
MUTATE(device_scale_undef, d->scale_dtype = SDPA_DTYPE_UNDEF)
MUTATE(device_scale_s32, d->scale_dtype = SDPA_DTYPE_S32)
MUTATE(invert_scale_2, d->invert_scale = 2)
MUTATE(kq_acc_bf16, d->kq_acc_dtype = SDPA_DTYPE_BF16)
MUTATE(vs_acc_99, d->vs_acc_dtype = (sdpa_dtype_t)99)
MUTATE(dropout_in_inference, d->prop_kind = SDPA_FORWARD_INFERENCE)
MUTATE(dropout_enabled_2, d->dropout.enabled = 2)
MUTATE(offset_without_dropout, d->dropout.enabled = 0; d->dropout.with_offset = 1)
MUTATE(mask_output_in_backward, d->prop_kind = SDPA_BACKWARD; d->diff_dst = d->dst;
       d->diff_q = d->q; d->diff_k = d->k; d->diff_v = d->v)
MUTATE(quant_in_backward, d->k.dtype = SDPA_DTYPE_S8;
       d->k_quant = ((sdpa_quant_desc_t){.scales = SDPA_QUANT_PER_TENSOR,
                                         .scales_dtype = SDPA_DTYPE_F32}))
MUTATE(diff_q_dtype, d->diff_q.dtype = SDPA_DTYPE_F32)
MUTATE(diff_k_dims, d->diff_k.dims[2] = 5)
MUTATE(diff_dst_missing, d->diff_dst.dtype = SDPA_DTYPE_UNDEF)
MUTATE(diff_k_dtype, d->diff_k.dtype = SDPA_DTYPE_BF16)
MUTATE(diff_v_head_size, d->diff_v.dims[3] = 17)
MUTATE(diff_dst_queries, d->diff_dst.dims[2] = 9)
MUTATE(diff_q_negative_stride, d->diff_q.strides[2] = -16)
MUTATE(diff_v_missing, d->diff_v.dtype = SDPA_DTYPE_UNDEF)
MUTATE(ds_dims, d->ds.dims[3] = 5)
MUTATE(ds_integer, d->ds.dtype = SDPA_DTYPE_S8)
MUTATE(deterministic_3, d->deterministic = 3)

MUTATE(varlen_batch_in_dims, d->q.dims[0] = d->dst.dims[0] = d->k.dims[0] = d->v.dims[0] = 2)
MUTATE(varlen_batch_zero, d->varlen.batch = 0)
MUTATE(varlen_long_queries, d->varlen.max_seqlen_q = 13)
MUTATE(varlen_long_keys, d->varlen.max_seqlen_k = 11)
MUTATE(varlen_enabled_2, d->varlen.enabled = 2)
MUTATE(varlen_mask_keys, d->mask_kind = SDPA_MASK_BUFFER;
       d->mask = dense_tensor(SDPA_DTYPE_F32, 2, 1, 8, 10))
MUTATE(varlen_paged, d->paged_kv = ((sdpa_paged_kv_desc_t){1, 1, 0}))
MUTATE(paged_block_8, d->k.dims[2] = d->v.dims[2] = 8)
MUTATE(paged_block_24, d->k.dims[2] = d->v.dims[2] = 24)
MUTATE(paged_table_too_big, d->paged_kv.max_blocks_per_seq = 5)
MUTATE(paged_table_stride, d->paged_kv.block_table_stride = 1)
MUTATE(paged_backward, d->prop_kind = SDPA_BACKWARD; d->diff_dst = d->diff_q = d->dst;
       d->diff_k = d->diff_v = d->k)
MUTATE(paged_mask_buffer, d->mask_kind = SDPA_MASK_BUFFER;
       d->mask = dense_tensor(SDPA_DTYPE_F16, 2, 4, 1, 32))
MUTATE(paged_dropout, d->prop_kind = SDPA_FORWARD_TRAINING;
       d->dropout = ((sdpa_dropout_desc_t){.enabled = 1, .host_scalars = 1}))
/* Sizes the mask's and dS's dims follow from, checked before they are
 * multiplied (20293597238 x 16 keys would pass 2^63) or quoted. */
MUTATE(paged_huge_table_mask, d->paged_kv.max_blocks_per_seq = 20293597238;
       d->mask_kind = SDPA_MASK_BUFFER; d->mask = dense_tensor(SDPA_DTYPE_F16, 2, 4, 1, 7))
MUTATE(paged_negative_table_mask, d->paged_kv.max_blocks_per_seq = -INT64_MAX;
       d->mask_kind = SDPA_MASK_BUFFER; d->mask = dense_tensor(SDPA_DTYPE_F16, 2, 4, 1, 7))
MUTATE(paged_huge_table_ds, d->paged_kv.max_blocks_per_seq = 20293597238;
       d->prop_kind = SDPA_BACKWARD; d->diff_dst = d->diff_q = d->dst; d->diff_k = d->diff_v = d->k;
       d->ds = dense_tensor(SDPA_DTYPE_F32, 2, 4, 1, 7))
MUTATE(varlen_negative_keys_mask, d->varlen.max_seqlen_k = -5; d->mask_kind = SDPA_MASK_BUFFER;
       d->mask = dense_tensor(SDPA_DTYPE_F32, 2, 1, 8, 10))
MUTATE(varlen_huge_batch_mask, d->varlen.batch = INT64_MAX; d->mask_kind = SDPA_MASK_BUFFER;
       d->mask = dense_tensor(SDPA_DTYPE_F32, 2, 1, 8, 6))
MUTATE(window_left_minus_2, d->window.left = -2)
MUTATE(window_enabled_3, d->window.enabled = 3)
MUTATE(softcap_negative, d->softcap = -1.0f)
MUTATE(softcap_nan, d->softcap = NAN)
MUTATE(softcap_inf, d->softcap = INFINITY)
MUTATE(alibi_3, d->alibi = (sdpa_alibi_kind_t)3)
MUTATE(sinks_2, d->sinks = 2)
MUTATE(window_ds_keys, d->ds = dense_tensor(SDPA_DTYPE_F32, 2, 4, 8, 7))

/* Sizes past what memory can hold: one row per (batch, head) broadcast
 * over huge dims (strides 0 outside the row), so only the buffers the
 * problem implies, which are dense, would be huge. */
static void broadcast(sdpa_tensor_desc_t *t, int64_t d0, int64_t d1, int64_t d2)
{
    t->dims[0] = d0;
    t->dims[1] = d1;
    t->dims[2] = d2;
    t->strides[0] = t->strides[1] = t->strides[2] = 0;
    t->strides[3] = 1;
}
#define HUGE_BH ((int64_t)1 << 30)
MUTATE(workspace_overflow, broadcast(&d->q, HUGE_BH, HUGE_BH, 16);
       broadcast(&d->dst, HUGE_BH, HUGE_BH, 16); broadcast(&d->k, HUGE_BH, 1, 6);
       broadcast(&d->v, HUGE_BH, 1, 6))
MUTATE(keep_mask_overflow, broadcast(&d->q, HUGE_BH >> 2, HUGE_BH >> 2, 8);
       broadcast(&d->dst, HUGE_BH >> 2, HUGE_BH >> 2, 8); broadcast(&d->k, HUGE_BH >> 2, 1, 1024);
       broadcast(&d->v, HUGE_BH >> 2, 1, 1024))
MUTATE(group_scales_overflow, broadcast(&d->q, HUGE_BH, HUGE_BH, 8);
       broadcast(&d->dst, HUGE_BH, HUGE_BH, 8); broadcast(&d->k, HUGE_BH, HUGE_BH, 1024);
       broadcast(&d->v, HUGE_BH, HUGE_BH, 1024))
/* Dense f32 [2^30, 2^24, 1, 512]: its last element is at 2^63 - 2^33 + 511,
 * an offset int64 holds, but its bytes are not addressable. */
MUTATE(dense_bytes_overflow, d->q.dtype = SDPA_DTYPE_F32;
       d->q = dense_tensor(SDPA_DTYPE_F32, HUGE_BH, (int64_t)1 << 24, 1, 512))

/* ------------------------------------------------------------------------- */
/* Mutations of the arguments                                                */
/* ------------------------------------------------------------------------- */

#define MUTATE_ARGS(name, body)                                                                    \
    static void name(sdpa_exec_args_t *a)                                                          \
    {                                                                                              \
        body;                                                                                      \
    }

MUTATE_ARGS(args_size_small, a->struct_size = 4)
MUTATE_ARGS(args_version_future, a->struct_version = SDPA_EXEC_ARGS_VERSION + 1)
MUTATE_ARGS(args_q_null, a->q = NULL)
MUTATE_ARGS(args_k_null, a->k = NULL)
MUTATE_ARGS(args_dst_null, a->dst = NULL)
MUTATE_ARGS(args_mask_null, a->mask = NULL)
MUTATE_ARGS(args_workspace_null, a->workspace = NULL)
MUTATE_ARGS(args_scale_ptr_null, a->scale_ptr = NULL)
MUTATE_ARGS(args_k_scales_null, a->k_scales = NULL)
MUTATE_ARGS(args_v_zero_points_null, a->v_zero_points = NULL)
MUTATE_ARGS(args_dropout_p_1, a->dropout_p = 1.0f)
MUTATE_ARGS(args_dropout_p_negative, a->dropout_p = -0.5f)
MUTATE_ARGS(args_dropout_mask_null, a->dropout_mask = NULL)
MUTATE_ARGS(args_seed_ptr_null, a->dropout_seed_ptr = NULL)
MUTATE_ARGS(args_offset_ptr_null, a->dropout_offset_ptr = NULL)
MUTATE_ARGS(args_diff_q_null, a->diff_q = NULL)
MUTATE_ARGS(args_diff_dst_null, a->diff_dst = NULL)
MUTATE_ARGS(args_diff_k_null, a->diff_k = NULL)
MUTATE_ARGS(args_diff_v_null, a->diff_v = NULL)
MUTATE_ARGS(args_ds_null, a->ds = NULL)
MUTATE_ARGS(args_wait_events_null, a->num_wait_events = 2; a->wait_events = NULL)
/* Addresses that cannot hold an element of their type. */
MUTATE_ARGS(args_q_odd_byte, a->q = (const char *)a->q + 1)
MUTATE_ARGS(args_workspace_2_bytes, a->workspace = (char *)a->workspace + 2)
MUTATE_ARGS(args_diff_k_odd_byte, a->diff_k = (char *)a->diff_k + 1)
MUTATE_ARGS(args_seed_ptr_4_bytes, a->dropout_seed_ptr = (const char *)a->dropout_seed_ptr + 4)

/* ------------------------------------------------------------------------- */
/* Calls                                                                     */
/* ------------------------------------------------------------------------- */

static sdpa_status_t create_null_desc(const sdpa_backend_iface_t *iface, sdpa_context_t *ctx,
                                      const sdpa_problem_desc_t *valid)
{
    (void)valid;
    sdpa_primitive_t *prim = (sdpa_primitive_t *)&prim;
    sdpa_status_t status = iface->primitive_create(ctx, NULL, &prim);
    ck_assert_ptr_null(prim);
    return status;
}

static sdpa_status_t create_null_out(const sdpa_backend_iface_t *iface, sdpa_context_t *ctx,
                                     const sdpa_problem_desc_t *valid)
{
    return iface->primitive_create(ctx, valid, NULL);
}

static sdpa_status_t execute_null_args(const sdpa_backend_iface_t *iface, sdpa_context_t *ctx,
                                       const sdpa_problem_desc_t *valid)
{
    sdpa_primitive_t *prim = NULL;
    ck_assert_int_eq(iface->primitive_create(ctx, valid, &prim), SDPA_SUCCESS);
    sdpa_status_t status = iface->primitive_execute(prim, NULL);
    iface->primitive_destroy(prim);
    return status;
}

static sdpa_status_t context_flags(const sdpa_backend_iface_t *iface, sdpa_context_t *ctx,
                                   const sdpa_problem_desc_t *valid)
{
    (void)ctx;
    (void)valid;
    sdpa_context_desc_t desc = {
            .struct_size = sizeof(desc), .struct_version = SDPA_CONTEXT_DESC_VERSION, .flags = 1};
    sdpa_context_t *other = (sdpa_context_t *)&other;
    sdpa_status_t status = iface->context_create(&desc, &other);
    ck_assert_ptr_null(other);
    return status;
}

static sdpa_status_t context_version(const sdpa_backend_iface_t *iface, sdpa_context_t *ctx,
                                     const sdpa_problem_desc_t *valid)
{
    (void)ctx;
    (void)valid;
    sdpa_context_desc_t desc = {.struct_size = sizeof(desc), .struct_version = 0};
    sdpa_context_t *other = NULL;
    return iface->context_create(&desc, &other);
}

static sdpa_status_t context_null_desc(const sdpa_backend_iface_t *iface, sdpa_context_t *ctx,
                                       const sdpa_problem_desc_t *valid)
{
    (void)ctx;
    (void)valid;
    sdpa_context_t *other = NULL;
    return iface->context_create(NULL, &other);
}

static sdpa_status_t query_small_out(const sdpa_backend_iface_t *iface, sdpa_context_t *ctx,
                                     const sdpa_problem_desc_t *valid)
{
    sdpa_primitive_t *prim = NULL;
    ck_assert_int_eq(iface->primitive_create(ctx, valid, &prim), SDPA_SUCCESS);
    uint32_t small = 0;
    sdpa_status_t status =
            iface->primitive_query(prim, SDPA_QUERY_WORKSPACE_BYTES, &small, sizeof(small));
    iface->primitive_destroy(prim);
    return status;
}

/* ------------------------------------------------------------------------- */
/* The table                                                                 */
/* ------------------------------------------------------------------------- */

#define IA SDPA_ERROR_INVALID_ARGUMENT
#define IS SDPA_ERROR_INVALID_STRUCT
#define UN SDPA_ERROR_UNSUPPORTED
#define P(label, base, m, status, ...)                                                             \
    {                                                                                              \
        label, AT_CREATE, base, m, NULL, NULL, status,                                             \
        {                                                                                          \
            __VA_ARGS__                                                                            \
        }                                                                                          \
    }
#define A(label, base, m, status, ...)                                                             \
    {                                                                                              \
        label, AT_EXECUTE, base, NULL, m, NULL, status,                                            \
        {                                                                                          \
            __VA_ARGS__                                                                            \
        }                                                                                          \
    }
#define C(label, base, f, status, ...)                                                             \
    {                                                                                              \
        label, AT_CALL, base, NULL, NULL, f, status,                                               \
        {                                                                                          \
            __VA_ARGS__                                                                            \
        }                                                                                          \
    }

static const invalid_case_t table[] = {
        /* struct headers */
        P("size 0", fwd, size_zero, IS, "desc->struct_size = 0"),
        P("size too big", fwd, size_too_big, IS, "desc->struct_size", "larger"),
        P("version 0", fwd, version_zero, IS, "desc->struct_version = 0"),
        P("version from the future", fwd, version_future, IS, "this backend knows versions 1.."),
        /* enums */
        P("prop_kind", fwd, bad_prop_kind, IA, "prop_kind = 7"),
        P("mask_kind", fwd, bad_mask_kind, IA, "mask_kind = 9"),
        P("scale_kind", fwd, bad_scale_kind, IA, "scale_kind = -1"),
        P("softmax_kind", fwd, bad_softmax_kind, IA, "softmax_kind = 5"),
        P("q dtype enum", fwd, bad_q_dtype, IA, "q.dtype = 42"),
        P("quant kind enum", quant, bad_quant_kind, IA, "k_quant.scales = 4"),
        P("vs_acc_dtype enum", fwd, vs_acc_99, IA, "vs_acc_dtype = 99"),
        /* tensors */
        P("q missing", fwd, q_undef, IA, "q.dtype = undef"),
        P("integer q", fwd, q_integer, IA, "q.dtype = s8"),
        P("head size 0", fwd, head_size_zero, IA, "q.dims[3] = 0 (head size)", "1..576"),
        P("head size 577", fwd, head_size_577, UN, "q.dims[3] = 577 (head size)", "1..576"),
        P("batch 0", fwd, batch_zero, IA, "k.dims[0] = 0 (batch)"),
        P("kv heads", fwd, kv_heads_not_dividing, IA, "k.dims[1] = 3 (K/V heads)", "q.dims[1] = 4"),
        P("batch mismatch", fwd, batch_mismatch, IA, "k.dims[0] = 3", "q.dims[0] = 2"),
        P("head size mismatch", fwd, head_size_mismatch, IA, "k.dims[3] = 8", "q.dims[3] = 16"),
        P("v keys", fwd, v_keys_mismatch, IA, "v.dims[2] = 7 (keys)", "k.dims[2] = 6"),
        P("dst dtype", fwd, dst_dtype_mismatch, IA, "dst.dtype = f32", "q.dtype = f16"),
        P("dst dims", fwd, dst_dims_mismatch, IA, "dst.dims[2] = 9"),
        P("negative stride", fwd, negative_stride, IA, "q.strides[2] = -16"),
        P("dim above int32", fwd, huge_dim, UN, "q.dims[2] = 3000000000"),
        P("offset overflow", fwd, overflowing_strides, IA, "k.strides[3]", "overflows"),
        P("k s32", fwd, k_s32, IA, "k.dtype = s32"),
        /* buffers past the address space */
        P("tensor bytes", bwd, dense_bytes_overflow, UN, "q: dims {1073741824, 16777216, 1, 512}",
          "span more than"),
        P("workspace bytes", train, workspace_overflow, UN, "workspace",
          "1073741824 x 1073741824 x 16"),
        P("dropout index", dropout_train, keep_mask_overflow, UN, "dropout",
          "268435456 x 268435456 x 8 x 1024"),
        P("group scales", quant, group_scales_overflow, UN, "k_quant.group_size",
          "1073741824 x 1073741824 x 1024 x 2"),
        /* quantization */
        P("int k without scales", fwd, k_int_without_scales, IA, "k_quant.scales = NONE",
          "k.dtype = s8"),
        P("float k with scales", fwd, float_k_with_scales, IA, "k_quant.scales = PER_TENSOR",
          "k.dtype = f16"),
        P("group size 3", quant, group_size_3, IA, "k_quant.group_size = 3"),
        P("group size 32 > D", quant, group_size_32, IA, "k_quant.group_size = 32"),
        P("scales dtype", quant, scales_dtype_s8, IA, "k_quant.scales_dtype = s8"),
        P("zero point dtype", quant, zero_points_dtype_f32, IA, "v_quant.zero_points_dtype = f32"),
        P("s4 innermost stride", quant, k_s4_stride3, IA, "k.strides[3] = 2"),
        P("s4 odd stride", quant, k_s4_odd_stride, IA, "k.strides[2] = 17"),
        P("quantized backward", bwd, quant_in_backward, UN, "k.dtype = s8", "backward"),
        /* mask */
        P("mask missing", masked, mask_missing, IA, "mask.dtype = undef", "BUFFER"),
        P("mask integer", masked, mask_integer, IA, "mask.dtype = u8"),
        P("mask heads", masked, mask_heads_3, IA, "mask.dims[1] = 3", "must be 1 or 4"),
        P("mask keys", masked, mask_keys, IA, "mask.dims[3] = 5", "k.dims[2] = 6"),
        P("causal with tensor", masked, causal_with_mask_tensor, IA, "mask.dtype = f16",
          "CAUSAL_TOP_LEFT"),
        /* scale, accumulation */
        P("device scale dtype", device_scale, device_scale_undef, IA, "scale_dtype = undef"),
        P("device scale s32", device_scale, device_scale_s32, IA, "scale_dtype = s32"),
        P("invert_scale 2", fwd, invert_scale_2, IA, "invert_scale = 2"),
        P("bf16 accumulation", fwd, kq_acc_bf16, IA, "kq_acc_dtype = bf16"),
        /* dropout */
        P("dropout inference", dropout_train, dropout_in_inference, IA, "dropout.enabled = 1",
          "FORWARD_INFERENCE"),
        P("dropout enabled 2", dropout_train, dropout_enabled_2, IA, "dropout.enabled = 2"),
        P("offset without dropout", fwd, offset_without_dropout, IA, "dropout.with_offset = 1"),
        P("mask output backward", dropout_train, mask_output_in_backward, IA,
          "dropout.with_mask_output = 1", "BACKWARD"),
        /* backward tensors */
        P("diff_q dtype", bwd, diff_q_dtype, IA, "diff_q.dtype = f32", "q.dtype = f16"),
        P("diff_k dims", bwd, diff_k_dims, IA, "diff_k.dims[2] = 5"),
        P("diff_dst missing", bwd, diff_dst_missing, IA, "diff_dst.dtype = undef"),
        P("diff_k dtype", bwd, diff_k_dtype, IA, "diff_k.dtype = bf16"),
        P("diff_v head size", bwd, diff_v_head_size, IA, "diff_v.dims[3] = 17"),
        P("diff_dst queries", bwd, diff_dst_queries, IA, "diff_dst.dims[2] = 9"),
        P("diff_q stride", bwd, diff_q_negative_stride, IA, "diff_q.strides[2] = -16",
          "non-negative"),
        P("diff_v missing", bwd, diff_v_missing, IA, "diff_v.dtype = undef"),
        P("ds dims", bwd_ds, ds_dims, IA, "ds.dims[3] = 5", "k.dims[2] = 6"),
        P("ds dtype", bwd_ds, ds_integer, IA, "ds.dtype = s8"),
        P("deterministic 3", bwd, deterministic_3, IA, "deterministic = 3"),
        /* execution arguments */
        A("args size", fwd, args_size_small, IS, "args->struct_size = 4"),
        A("args version", fwd, args_version_future, IS, "this backend knows versions 1.."),
        A("args q", fwd, args_q_null, IA, "args->q is NULL"),
        A("args k", fwd, args_k_null, IA, "args->k is NULL"),
        A("args dst", bwd, args_dst_null, IA, "args->dst is NULL", "backward"),
        A("args mask", masked, args_mask_null, IA, "args->mask is NULL", "BUFFER"),
        A("args workspace", train, args_workspace_null, IA, "args->workspace is NULL",
          "FORWARD_TRAINING"),
        A("args scale_ptr", device_scale, args_scale_ptr_null, IA, "args->scale_ptr is NULL"),
        A("args k_scales", quant, args_k_scales_null, IA, "args->k_scales is NULL",
          "k_quant.scales = PER_GROUP"),
        A("args v_zero_points", quant, args_v_zero_points_null, IA, "args->v_zero_points is NULL"),
        A("args dropout_p 1", dropout_train, args_dropout_p_1, IA, "args->dropout_p = 1"),
        A("args dropout_p < 0", dropout_train, args_dropout_p_negative, IA,
          "args->dropout_p = -0.5"),
        A("args dropout_mask", dropout_train, args_dropout_mask_null, IA,
          "args->dropout_mask is NULL"),
        A("args seed pointer", dropout_device, args_seed_ptr_null, IA,
          "args->dropout_seed_ptr is NULL"),
        A("args offset pointer", dropout_device, args_offset_ptr_null, IA,
          "args->dropout_offset_ptr is NULL"),
        A("args diff_q", bwd, args_diff_q_null, IA, "args->diff_q is NULL"),
        A("args diff_dst", bwd, args_diff_dst_null, IA, "args->diff_dst is NULL"),
        A("args diff_k", bwd, args_diff_k_null, IA, "args->diff_k is NULL"),
        A("args diff_v", bwd, args_diff_v_null, IA, "args->diff_v is NULL"),
        A("args workspace backward", bwd, args_workspace_null, IA, "args->workspace is NULL",
          "log-sum-exp"),
        A("args ds", bwd_ds, args_ds_null, IA, "args->ds is NULL"),
        A("args wait_events", fwd, args_wait_events_null, IA, "args->wait_events is NULL",
          "num_wait_events = 2"),
        A("args q odd byte", fwd, args_q_odd_byte, IA, "args->q", "not aligned", "f16, 2 bytes"),
        A("args workspace 2 bytes in", train, args_workspace_2_bytes, IA, "args->workspace",
          "f32, 4 bytes"),
        A("args diff_k odd byte", bwd, args_diff_k_odd_byte, IA, "args->diff_k", "not aligned"),
        A("args seed pointer 4 bytes in", dropout_device, args_seed_ptr_4_bytes, IA,
          "args->dropout_seed_ptr", "int64, 8 bytes"),
        /* ABI 1.1 features */
        P("varlen batch in dims[0]", varlen, varlen_batch_in_dims, IA, "q.dims[0] = 2",
          "dims[0] must be 1"),
        P("varlen batch 0", varlen, varlen_batch_zero, IA, "varlen.batch = 0"),
        P("varlen longest queries", varlen, varlen_long_queries, IA, "varlen.max_seqlen_q = 13",
          "q.dims[2] = 12"),
        P("varlen longest keys", varlen, varlen_long_keys, IA, "varlen.max_seqlen_k = 11"),
        P("varlen enabled 2", varlen, varlen_enabled_2, IA, "varlen.enabled = 2"),
        P("varlen mask keys", varlen, varlen_mask_keys, IA, "mask.dims[3] = 10",
          "varlen.max_seqlen_k = 6"),
        P("varlen and paged", varlen, varlen_paged, UN, "varlen.enabled = 1",
          "paged_kv.enabled = 1"),
        P("paged block 8", paged, paged_block_8, IA, "k.dims[2] = 8 (block_size)",
          "power of two in 16..256"),
        P("paged block 24", paged, paged_block_24, IA, "k.dims[2] = 24 (block_size)"),
        P("paged table larger than the cache", paged, paged_table_too_big, IA,
          "paged_kv.max_blocks_per_seq = 5", "larger than the cache"),
        P("paged table stride", paged, paged_table_stride, IA,
          "paged_kv.block_table_stride = 1"),
        P("paged backward", paged, paged_backward, UN, "prop_kind = BACKWARD"),
        P("paged mask buffer", paged, paged_mask_buffer, UN, "mask_kind = BUFFER"),
        P("paged dropout", paged, paged_dropout, UN, "dropout.enabled = 1"),
        P("paged 20293597238 blocks with a mask", paged, paged_huge_table_mask, UN,
          "paged_kv.max_blocks_per_seq = 20293597238", "sizes above 2147483647"),
        P("paged -INT64_MAX blocks with a mask", paged, paged_negative_table_mask, IA,
          "paged_kv.max_blocks_per_seq = -9223372036854775807", "must be >= 1"),
        P("paged 20293597238 blocks with dS", paged, paged_huge_table_ds, UN,
          "paged_kv.max_blocks_per_seq = 20293597238", "sizes above 2147483647"),
        P("varlen -5 keys with a mask", varlen, varlen_negative_keys_mask, IA,
          "varlen.max_seqlen_k = -5", "must be >= 1"),
        P("varlen INT64_MAX sequences with a mask", varlen, varlen_huge_batch_mask, UN,
          "varlen.batch = 9223372036854775807", "sizes above 2147483647"),
        P("window left -2", windowed, window_left_minus_2, IA, "window.left = -2"),
        P("window enabled 3", windowed, window_enabled_3, IA, "window.enabled = 3"),
        P("softcap negative", windowed, softcap_negative, IA, "softcap = -1"),
        P("softcap NaN", windowed, softcap_nan, IA, "softcap = nan"),
        P("softcap inf", windowed, softcap_inf, IA, "softcap = inf"),
        P("alibi 3", windowed, alibi_3, IA, "alibi = 3", "sdpa_alibi_kind_t"),
        P("sinks 2", windowed, sinks_2, IA, "sinks = 2", "must be 0 or 1"),
        P("ds keys with a window", windowed, window_ds_keys, IA, "ds.dims[3] = 7"),
        /* calls */
        C("create NULL desc", fwd, create_null_desc, IA, "desc is NULL"),
        C("create NULL out", fwd, create_null_out, IA, "out is NULL"),
        C("execute NULL args", fwd, execute_null_args, IA, "args is NULL"),
        C("context flags", fwd, context_flags, IA, "desc->flags = 1"),
        C("context version", fwd, context_version, IS, "desc->struct_version = 0"),
        C("context NULL desc", fwd, context_null_desc, IA, "desc is NULL"),
        C("query out_size", fwd, query_small_out, IA, "out_size = 4"),
};

int invalid_table_size(void)
{
    return (int)(sizeof(table) / sizeof(table[0]));
}

/* ------------------------------------------------------------------------- */
/* Running it                                                                */
/* ------------------------------------------------------------------------- */

/* Each backend gets a slot: Check fixtures take no arguments, so each slot
 * has its own pair, and a loop test's index encodes slot * SLOT_STRIDE +
 * entry. */
#define SLOTS 4
#define SLOT_STRIDE 1000

typedef struct slot {
    const char *backend_name;
    const invalid_env_t *env;
    sdpa_backend_t *backend;
    const sdpa_backend_iface_t *iface;
    sdpa_context_t *ctx;
} slot_t;

static slot_t slots[SLOTS];
static int slots_used;

static void slot_setup(slot_t *s)
{
    if (sdpa_backend_open(s->backend_name, &s->backend) != SDPA_SUCCESS) {
        fprintf(stderr, "cannot open %s: %s\n", s->backend_name, sdpa_loader_last_error());
        exit(EXIT_FAILURE);
    }
    s->iface = test_checked_iface(sdpa_backend_get_iface(s->backend));
    if (s->iface->context_create(&s->env->context_desc, &s->ctx) != SDPA_SUCCESS) {
        fprintf(stderr, "%s context_create: %s\n", s->backend_name, s->iface->last_error());
        exit(EXIT_FAILURE);
    }
}

static void slot_teardown(slot_t *s)
{
    s->iface->context_destroy(s->ctx);
    sdpa_backend_close(s->backend);
}

#define SLOT_FIXTURES(n)                                                                           \
    static void setup_##n(void)                                                                    \
    {                                                                                              \
        slot_setup(&slots[n]);                                                                     \
    }                                                                                              \
    static void teardown_##n(void)                                                                 \
    {                                                                                              \
        slot_teardown(&slots[n]);                                                                  \
    }
SLOT_FIXTURES(0)
SLOT_FIXTURES(1)
SLOT_FIXTURES(2)
SLOT_FIXTURES(3)
static void (*const setups[SLOTS])(void) = {setup_0, setup_1, setup_2, setup_3};
static void (*const teardowns[SLOTS])(void) = {teardown_0, teardown_1, teardown_2, teardown_3};

static void check_message(const slot_t *s, const invalid_case_t *c, sdpa_status_t got)
{
    const char *message = s->iface->last_error();
    ck_assert_msg(got == c->expected, "%s %s: got %s, expected %s (%s)", s->backend_name, c->label,
                  sdpa_status_name(got), sdpa_status_name(c->expected), message);
    for (int n = 0; n < 3 && c->needles[n] != NULL; n++)
        ck_assert_msg(strstr(message, c->needles[n]) != NULL, "%s %s: message lacks \"%s\": \"%s\"",
                      s->backend_name, c->label, c->needles[n], message);
}

/* 0 if the base problem d uses an ABI 1.1 feature the backend does not
 * advertise (context_get_features): then it may refuse the base itself,
 * and only the mutation's refusal is checked. */
static int base_served(const sdpa_backend_iface_t *iface, sdpa_context_t *ctx,
                       const sdpa_problem_desc_t *d)
{
    sdpa_features_t f = {.struct_size = sizeof(f), .struct_version = SDPA_FEATURES_VERSION};
    if (iface->context_get_features(ctx, &f) != SDPA_SUCCESS)
        return 1;
    return !((d->varlen.enabled && !f.has_varlen) || (d->paged_kv.enabled && !f.has_paged_kv) ||
             (d->window.enabled && !f.has_window) || (d->softcap != 0.0f && !f.has_softcap) ||
             (d->alibi != SDPA_ALIBI_NONE && !f.has_alibi) || (d->sinks && !f.has_sinks));
}

/* ABI 1.2: primitive_supports gives, for desc, the status and message
 * primitive_create just gave (status, message), and succeeds itself. */
static void check_supports_agrees(const slot_t *s, const invalid_case_t *c,
                                  const sdpa_problem_desc_t *desc, sdpa_status_t status,
                                  const char *message)
{
    const sdpa_backend_iface_t *iface = s->iface;
    if (iface->struct_size < offsetof(sdpa_backend_iface_t, primitive_supports) +
                                     sizeof(iface->primitive_supports))
        return;
    sdpa_support_t answer;
    memset(&answer, 0xab, sizeof(answer));
    answer.struct_size = sizeof(answer);
    answer.struct_version = SDPA_SUPPORT_VERSION;
    ck_assert_int_eq(iface->primitive_supports(s->ctx, desc, &answer), SDPA_SUCCESS);
    ck_assert_msg(answer.status == status, "%s %s: supports says %s, creation %s",
                  s->backend_name, c->label, sdpa_status_name(answer.status),
                  sdpa_status_name(status));
    ck_assert_msg(strcmp(answer.message, message) == 0,
                  "%s %s: supports says \"%s\", creation \"%s\"", s->backend_name, c->label,
                  answer.message, message);
    ck_assert_int_eq(answer.kernel_kind == SDPA_KERNEL_NONE, status != SDPA_SUCCESS);
}

START_TEST(test_invalid_entry)
{
    const slot_t *s = &slots[_i / SLOT_STRIDE];
    const invalid_case_t *c = &table[_i % SLOT_STRIDE];
    const sdpa_backend_iface_t *iface = s->iface;
    sdpa_context_t *ctx = s->ctx;
    sdpa_problem_desc_t valid;
    c->base(&valid);

    if (c->where == AT_CALL) {
        check_message(s, c, c->call(iface, ctx, &valid));
        return;
    }
    if (c->where == AT_CREATE) {
        /* The unmutated base must be accepted, if the backend serves its
         * features: the failure is the mutation's. */
        sdpa_primitive_t *prim = NULL;
        if (base_served(iface, ctx, &valid))
            ck_assert_msg(iface->primitive_create(ctx, &valid, &prim) == SDPA_SUCCESS,
                          "%s base: %s", c->label, iface->last_error());
        iface->primitive_destroy(prim);
        sdpa_problem_desc_t bad = valid;
        c->mutate_problem(&bad);
        prim = (sdpa_primitive_t *)&prim;
        sdpa_status_t got = iface->primitive_create(ctx, &bad, &prim);
        if (got != SDPA_SUCCESS)
            ck_assert_ptr_null(prim);
        else
            iface->primitive_destroy(prim);
        char message[1024];
        snprintf(message, sizeof(message), "%s", iface->last_error());
        check_message(s, c, got);
        check_supports_agrees(s, c, &bad, got, message);
        return;
    }
    /* AT_EXECUTE: a valid primitive and valid arguments, then one change. */
    attn_case_t ac;
    ac.desc = valid;
    ck_assert_int_eq(case_alloc(&ac, 1, s->env->allocator), 0);
    sdpa_primitive_t *prim = NULL;
    ck_assert_msg(iface->primitive_create(ctx, &ac.desc, &prim) == SDPA_SUCCESS, "%s: %s", c->label,
                  iface->last_error());
    c->mutate_args(&ac.args);
    sdpa_status_t got = iface->primitive_execute(prim, &ac.args);
    iface->primitive_destroy(prim);
    case_free(&ac);
    check_message(s, c, got);
}
END_TEST

TCase *invalid_table_tcase(const char *backend_name, const invalid_env_t *env)
{
    if (slots_used == SLOTS)
        return NULL;
    const int n = slots_used++;
    slots[n].backend_name = backend_name;
    slots[n].env = env;
    TCase *tc = tcase_create(backend_name);
    tcase_add_unchecked_fixture(tc, setups[n], teardowns[n]);
    tcase_add_loop_test(tc, test_invalid_entry, n * SLOT_STRIDE,
                        n * SLOT_STRIDE + invalid_table_size());
    return tc;
}
