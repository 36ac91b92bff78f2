/* problem_check.c - checking a problem descriptor and taking the copy every
 * backend keeps (sdpa_problem_check). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "problem.h"
#include "problem_llm.h"
#include "size_math.h"

/* Dims above this are refused: kernels take sizes as 32-bit ints and launch
 * one work-group row per head and per batch. */
#define SDPA_MAX_DIM INT32_MAX

/* Names of the four dims of each kind of tensor, for messages. Dim 3 of q,
 * k, v, dst and the gradients is the head size, checked against
 * SDPA_MAX_HEAD_SIZE; dim 3 of the mask and dS is Sk. */
static const char *const q_dim_names[4] = {"batch", "query heads", "queries", "head size"};
static const char *const kv_dim_names[4] = {"batch", "K/V heads", "keys", "head size"};
static const char *const scores_dim_names[4] = {"batch", "query heads", "queries", "keys"};

static int dim3_is_head_size(const char *const dim_names[4])
{
    return dim_names != scores_dim_names;
}

/* ------------------------------------------------------------------------- */
/* Struct headers, enums and booleans                                        */
/* ------------------------------------------------------------------------- */

sdpa_status_t sdpa_struct_check(const char *what, uint32_t struct_size, uint32_t struct_version,
                                uint32_t known_version, size_t v1_size, size_t known_size)
{
    if (struct_version == 0 || struct_version > known_version)
        return sdpa_fail(SDPA_ERROR_INVALID_STRUCT,
                         "%s->struct_version = %u: this backend knows versions 1..%u", what,
                         struct_version, known_version);
    if (struct_size < v1_size)
        return sdpa_fail(SDPA_ERROR_INVALID_STRUCT,
                         "%s->struct_size = %u: smaller than version 1 of the struct (%zu bytes)",
                         what, struct_size, v1_size);
    if (struct_size > known_size)
        return sdpa_fail(SDPA_ERROR_INVALID_STRUCT,
                         "%s->struct_size = %u: larger than version %u of the struct (%zu bytes)",
                         what, struct_size, struct_version, known_size);
    return SDPA_SUCCESS;
}

/* Enums may hold any int; compare as unsigned so negative values fail too. */
static sdpa_status_t check_enum(const char *field, unsigned value, unsigned last,
                                const char *type_name)
{
    if (value > last)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "%s = %d: not a valid %s", field, (int)value,
                         type_name);
    return SDPA_SUCCESS;
}

static sdpa_status_t check_bool(const char *field, uint32_t value)
{
    if (value > 1)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "%s = %u: must be 0 or 1", field, value);
    return SDPA_SUCCESS;
}

sdpa_status_t sdpa_check_enum(const char *field, unsigned value, unsigned last,
                              const char *type_name)
{
    return check_enum(field, value, last, type_name);
}

sdpa_status_t sdpa_check_bool(const char *field, uint32_t value)
{
    return check_bool(field, value);
}

static sdpa_status_t check_dtype_enum(const char *field, sdpa_dtype_t dtype)
{
    return check_enum(field, (unsigned)dtype, SDPA_DTYPE_F8_E5M2, "sdpa_dtype_t");
}

/* A dtype that must be f32, f16 or bf16 (q, dst, mask, ds, scales, ...). */
static sdpa_status_t check_float_dtype(const char *field, sdpa_dtype_t dtype, const char *why)
{
    SDPA_TRY(check_dtype_enum(field, dtype));
    if (dtype == SDPA_DTYPE_UNDEF)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "%s = undef: %s", field, why);
    if (!sdpa_dtype_is_float(dtype))
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "%s = %s: must be f32, f16 or bf16", field,
                         sdpa_dtype_name(dtype));
    return SDPA_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* Tensors                                                                   */
/* ------------------------------------------------------------------------- */

/* Dims in 1..SDPA_MAX_DIM (dim 3 in 1..SDPA_MAX_HEAD_SIZE when it is the
 * head size), non-negative strides, addressable extent, and the packing
 * rules of 4-bit types. The dtype enum is already checked. */
static sdpa_status_t check_layout(const char *name, const sdpa_tensor_desc_t *t,
                                  const char *const dim_names[4])
{
    for (int n = 0; n < 4; n++) {
        long long dim = (long long)t->dims[n];
        if (n == 3 && dim3_is_head_size(dim_names)) {
            if (dim < 1 || dim > SDPA_MAX_HEAD_SIZE)
                return sdpa_fail(dim < 1 ? SDPA_ERROR_INVALID_ARGUMENT : SDPA_ERROR_UNSUPPORTED,
                                 "%s.dims[3] = %lld (head size): must be in 1..%d", name, dim,
                                 SDPA_MAX_HEAD_SIZE);
            continue;
        }
        if (dim < 1)
            return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "%s.dims[%d] = %lld (%s): must be >= 1",
                             name, n, dim, dim_names[n]);
        if (dim > SDPA_MAX_DIM)
            return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                             "%s.dims[%d] = %lld (%s): sizes above %d are not supported", name, n,
                             dim, dim_names[n], SDPA_MAX_DIM);
    }
    for (int n = 0; n < 4; n++) {
        if (t->strides[n] < 0)
            return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                             "%s.strides[%d] = %lld: strides must be non-negative", name, n,
                             (long long)t->strides[n]);
    }
    /* The largest offset must fit in int64 (4-bit types count nibbles). */
    int64_t extent = 0;
    for (int n = 0; n < 4; n++) {
        int64_t term;
        if (__builtin_mul_overflow(t->dims[n] - 1, t->strides[n], &term) ||
            __builtin_add_overflow(extent, term, &extent))
            return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                             "%s.strides[%d] = %lld with %s.dims[%d] = %lld: the largest element "
                             "offset overflows 64 bits",
                             name, n, (long long)t->strides[n], name, n, (long long)t->dims[n]);
    }
    /* ... and its last byte must be addressable. */
    if (sdpa_size_bytes(sdpa_size_span_elements(t->dims, t->strides), sdpa_dtype_bits(t->dtype)) >
        SDPA_MAX_BUFFER_BYTES)
        return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                         "%s: dims {%lld, %lld, %lld, %lld} with strides {%lld, %lld, %lld, %lld} "
                         "of %s span more than %llu bytes, the largest addressable buffer",
                         name, (long long)t->dims[0], (long long)t->dims[1], (long long)t->dims[2],
                         (long long)t->dims[3], (long long)t->strides[0], (long long)t->strides[1],
                         (long long)t->strides[2], (long long)t->strides[3],
                         sdpa_dtype_name(t->dtype), (unsigned long long)SDPA_MAX_BUFFER_BYTES);
    if (sdpa_dtype_bits(t->dtype) == 4) {
        if (t->strides[3] != 1)
            return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                             "%s.strides[3] = %lld: a 4-bit tensor (%s) needs innermost stride 1",
                             name, (long long)t->strides[3], sdpa_dtype_name(t->dtype));
        for (int n = 0; n < 3; n++) {
            if (t->strides[n] % 2 != 0)
                return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                                 "%s.strides[%d] = %lld: a 4-bit tensor (%s) needs even strides "
                                 "outside the innermost dim",
                                 name, n, (long long)t->strides[n], sdpa_dtype_name(t->dtype));
        }
    }
    return SDPA_SUCCESS;
}

/* t.dims[n] must equal ref.dims[n] for every n. */
static sdpa_status_t check_same_dims(const char *name, const sdpa_tensor_desc_t *t,
                                     const char *ref_name, const sdpa_tensor_desc_t *ref,
                                     const char *const dim_names[4])
{
    for (int n = 0; n < 4; n++) {
        if (t->dims[n] != ref->dims[n])
            return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                             "%s.dims[%d] = %lld (%s) differs from %s.dims[%d] = %lld", name, n,
                             (long long)t->dims[n], dim_names[n], ref_name, n,
                             (long long)ref->dims[n]);
    }
    return SDPA_SUCCESS;
}

/* An output of the shape of O: Q's first three dims and V's head size. */
static sdpa_status_t check_same_output_dims(const char *name, const sdpa_tensor_desc_t *t,
                                            const sdpa_problem_desc_t *d)
{
    for (int n = 0; n < 3; n++) {
        if (t->dims[n] != d->q.dims[n])
            return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                             "%s.dims[%d] = %lld (%s) differs from q.dims[%d] = %lld", name, n,
                             (long long)t->dims[n], q_dim_names[n], n, (long long)d->q.dims[n]);
    }
    if (t->dims[3] != d->v.dims[3])
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "%s.dims[3] = %lld (head size) differs from v.dims[3] = %lld: O takes "
                         "V's head size",
                         name, (long long)t->dims[3], (long long)d->v.dims[3]);
    return SDPA_SUCCESS;
}

/* A required tensor: present (dtype not UNDEF), valid dtype enum, layout. */
static sdpa_status_t check_required(const char *name, const sdpa_tensor_desc_t *t,
                                    const char *const dim_names[4], const char *why)
{
    char field[32];
    snprintf(field, sizeof(field), "%s.dtype", name);
    SDPA_TRY(check_dtype_enum(field, t->dtype));
    if (t->dtype == SDPA_DTYPE_UNDEF)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "%s.dtype = undef: %s", name, why);
    return check_layout(name, t, dim_names);
}

sdpa_status_t sdpa_tensor_check(const char *name, const sdpa_tensor_desc_t *t,
                                const char *const dim_names[4], const char *why)
{
    return check_required(name, t, dim_names, why);
}

/* q, k, v and dst: dtypes, layouts and the [B, H, S, D] relations. */
static sdpa_status_t check_qkvo(const sdpa_problem_desc_t *d)
{
    SDPA_TRY(check_required("q", &d->q, q_dim_names, "q is required"));
    if (!sdpa_dtype_is_float(d->q.dtype))
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "q.dtype = %s: must be f32, f16 or bf16",
                         sdpa_dtype_name(d->q.dtype));

    static const char *const names[2] = {"k", "v"};
    const sdpa_tensor_desc_t *kv[2] = {&d->k, &d->v};
    for (int t = 0; t < 2; t++) {
        SDPA_TRY(check_required(names[t], kv[t], kv_dim_names, "K and V are required"));
        if (!sdpa_dtype_is_float(kv[t]->dtype) && !sdpa_dtype_is_dequantized(kv[t]->dtype))
            return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                             "%s.dtype = %s: must be f32, f16, bf16, s8, u8, s4, u4, f8_e4m3 or "
                             "f8_e5m2",
                             names[t], sdpa_dtype_name(kv[t]->dtype));
    }
    if (d->k.dims[0] != d->q.dims[0] && !d->paged_kv.enabled) /* a cache: num_blocks */
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "k.dims[0] = %lld (batch) differs from q.dims[0] = %lld",
                         (long long)d->k.dims[0], (long long)d->q.dims[0]);
    if (d->q.dims[1] % d->k.dims[1] != 0)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "k.dims[1] = %lld (K/V heads) does not divide q.dims[1] = %lld (query "
                         "heads)",
                         (long long)d->k.dims[1], (long long)d->q.dims[1]);
    if (d->k.dims[3] != d->q.dims[3])
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "k.dims[3] = %lld (head size) differs from q.dims[3] = %lld",
                         (long long)d->k.dims[3], (long long)d->q.dims[3]);
    /* V's head size Dv may differ from Q's and K's (sdpa.h): only its first
     * three dims follow K's. */
    for (int n = 0; n < 3; n++) {
        if (d->v.dims[n] != d->k.dims[n])
            return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                             "v.dims[%d] = %lld (%s) differs from k.dims[%d] = %lld", n,
                             (long long)d->v.dims[n], kv_dim_names[n], n, (long long)d->k.dims[n]);
    }

    SDPA_TRY(check_required("dst", &d->dst, q_dim_names, "dst is required"));
    if (d->dst.dtype != d->q.dtype)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "dst.dtype = %s differs from q.dtype = %s: q and dst share one dtype",
                         sdpa_dtype_name(d->dst.dtype), sdpa_dtype_name(d->q.dtype));
    return check_same_output_dims("dst", &d->dst, d);
}

/* ------------------------------------------------------------------------- */
/* Mask, scale, accumulation                                                 */
/* ------------------------------------------------------------------------- */

static sdpa_status_t check_mask(const sdpa_problem_desc_t *d)
{
    SDPA_TRY(check_enum("mask_kind", (unsigned)d->mask_kind, SDPA_MASK_CAUSAL_BOTTOM_RIGHT,
                        "sdpa_mask_kind_t"));
    if (d->mask_kind != SDPA_MASK_BUFFER) {
        SDPA_TRY(check_dtype_enum("mask.dtype", d->mask.dtype));
        if (d->mask.dtype != SDPA_DTYPE_UNDEF)
            return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                             "mask.dtype = %s but mask_kind = %s takes no mask tensor (use "
                             "BUFFER, or dtype undef)",
                             sdpa_dtype_name(d->mask.dtype), sdpa_mask_kind_name(d->mask_kind));
        return SDPA_SUCCESS;
    }
    SDPA_TRY(check_float_dtype("mask.dtype", d->mask.dtype,
                               "mask_kind = BUFFER needs a mask tensor"));
    SDPA_TRY(check_layout("mask", &d->mask, scores_dim_names));
    /* [B or 1, Hq or 1, Sq or 1, Sk] of the scores (problem_llm.h) */
    int64_t target[4];
    sdpa_llm_scores_dims(d, target);
    for (int n = 0; n < 3; n++) {
        if (d->mask.dims[n] != 1 && d->mask.dims[n] != target[n])
            return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                             "mask.dims[%d] = %lld does not broadcast to q.dims[%d] = %lld (%s): "
                             "must be 1 or %lld",
                             n, (long long)d->mask.dims[n], n, (long long)target[n],
                             scores_dim_names[n], (long long)target[n]);
    }
    if (d->mask.dims[3] != target[3])
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "mask.dims[3] = %lld differs from %s = %lld (keys): the mask's "
                         "last dim must be Sk",
                         (long long)d->mask.dims[3],
                         d->varlen.enabled ? "varlen.max_seqlen_k" : "k.dims[2]",
                         (long long)target[3]);
    return SDPA_SUCCESS;
}

static sdpa_status_t check_scale(const sdpa_problem_desc_t *d)
{
    SDPA_TRY(check_enum("scale_kind", (unsigned)d->scale_kind, SDPA_SCALE_DEVICE,
                        "sdpa_scale_kind_t"));
    SDPA_TRY(check_bool("invert_scale", d->invert_scale));
    if (d->scale_kind == SDPA_SCALE_DEVICE)
        return check_float_dtype("scale_dtype", d->scale_dtype,
                                 "scale_kind = DEVICE needs f32, f16 or bf16");
    return SDPA_SUCCESS;
}

static sdpa_status_t check_acc_dtype(const char *field, sdpa_dtype_t dtype)
{
    SDPA_TRY(check_dtype_enum(field, dtype));
    if (dtype != SDPA_DTYPE_UNDEF && dtype != SDPA_DTYPE_F32 && dtype != SDPA_DTYPE_F16)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "%s = %s: must be f32 (or undef) or f16",
                         field, sdpa_dtype_name(dtype));
    return SDPA_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* Quantization and dropout                                                  */
/* ------------------------------------------------------------------------- */

/* Quantization parameters q of tensor t (named name, "k" or "v"): integer
 * K/V need scales and may take zero points, FP8 K/V may take scales and
 * take no zero points, float K/V take neither (sdpa.h). */
static sdpa_status_t check_quant(const char *name, const sdpa_tensor_desc_t *t,
                                 const sdpa_quant_desc_t *q, int64_t head_size)
{
    char field[40];
    snprintf(field, sizeof(field), "%s_quant.scales", name);
    SDPA_TRY(check_enum(field, (unsigned)q->scales, SDPA_QUANT_PER_HEAD, "sdpa_quant_kind_t"));
    snprintf(field, sizeof(field), "%s_quant.zero_points", name);
    SDPA_TRY(check_enum(field, (unsigned)q->zero_points, SDPA_QUANT_PER_HEAD, "sdpa_quant_kind_t"));

    if (!sdpa_dtype_is_dequantized(t->dtype)) {
        if (q->scales != SDPA_QUANT_NONE || q->zero_points != SDPA_QUANT_NONE)
            return sdpa_fail(
                    SDPA_ERROR_INVALID_ARGUMENT,
                    "%s_quant.%s = %s but %s.dtype = %s: only s8, u8, s4, u4, f8_e4m3 and "
                    "f8_e5m2 K/V are dequantized",
                    name, q->scales != SDPA_QUANT_NONE ? "scales" : "zero_points",
                    sdpa_quant_kind_name(q->scales != SDPA_QUANT_NONE ? q->scales : q->zero_points),
                    name, sdpa_dtype_name(t->dtype));
        return SDPA_SUCCESS;
    }
    const int fp8 = sdpa_dtype_is_fp8(t->dtype);
    if (q->scales == SDPA_QUANT_NONE && !fp8)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "%s_quant.scales = NONE but %s.dtype = %s: integer K/V need scales", name,
                         name, sdpa_dtype_name(t->dtype));
    if (fp8 && q->zero_points != SDPA_QUANT_NONE)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "%s_quant.zero_points = %s but %s.dtype = %s: FP8 K/V take no zero "
                         "points (x = fp8 * scale)",
                         name, sdpa_quant_kind_name(q->zero_points), name,
                         sdpa_dtype_name(t->dtype));
    if (q->scales != SDPA_QUANT_NONE) {
        snprintf(field, sizeof(field), "%s_quant.scales_dtype", name);
        SDPA_TRY(check_float_dtype(field, q->scales_dtype, "scales need f32, f16 or bf16"));
    }
    if (q->zero_points != SDPA_QUANT_NONE) {
        sdpa_dtype_t zdt = q->zero_points_dtype;
        snprintf(field, sizeof(field), "%s_quant.zero_points_dtype", name);
        SDPA_TRY(check_dtype_enum(field, zdt));
        if (zdt == SDPA_DTYPE_UNDEF)
            return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                             "%s = undef: zero points need s8, u8, s4, u4 or s32", field);
        if (!sdpa_dtype_is_quantized(zdt) && zdt != SDPA_DTYPE_S32)
            return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "%s = %s: must be s8, u8, s4, u4 or s32",
                             field, sdpa_dtype_name(zdt));
    }
    if (q->scales == SDPA_QUANT_PER_GROUP || q->zero_points == SDPA_QUANT_PER_GROUP) {
        int64_t g = q->group_size;
        if (g < 1 || (g & (g - 1)) != 0 || head_size % g != 0)
            return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                             "%s_quant.group_size = %lld: PER_GROUP needs a power of two dividing "
                             "the head size %lld",
                             name, (long long)g, (long long)head_size);
    }
    return SDPA_SUCCESS;
}

static sdpa_status_t check_dropout(const sdpa_problem_desc_t *d)
{
    const sdpa_dropout_desc_t *dr = &d->dropout;
    SDPA_TRY(check_bool("dropout.enabled", dr->enabled));
    SDPA_TRY(check_bool("dropout.host_scalars", dr->host_scalars));
    SDPA_TRY(check_bool("dropout.with_offset", dr->with_offset));
    SDPA_TRY(check_bool("dropout.with_mask_output", dr->with_mask_output));
    if (!dr->enabled) {
        if (dr->with_offset)
            return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                             "dropout.with_offset = 1 but dropout.enabled = 0");
        if (dr->with_mask_output)
            return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                             "dropout.with_mask_output = 1 but dropout.enabled = 0");
        return SDPA_SUCCESS;
    }
    if (d->prop_kind == SDPA_FORWARD_INFERENCE)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "dropout.enabled = 1 but prop_kind = FORWARD_INFERENCE: dropout needs "
                         "FORWARD_TRAINING or BACKWARD");
    if (dr->with_mask_output && d->prop_kind == SDPA_BACKWARD)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "dropout.with_mask_output = 1 but prop_kind = BACKWARD: only forward "
                         "writes the keep mask");
    return SDPA_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* Backward tensors                                                          */
/* ------------------------------------------------------------------------- */

static sdpa_status_t check_gradient(const char *name, const sdpa_tensor_desc_t *t,
                                    const char *like_name, const sdpa_tensor_desc_t *like,
                                    const char *const dim_names[4], sdpa_dtype_t dtype,
                                    const char *dtype_owner)
{
    char why[64];
    snprintf(why, sizeof(why), "prop_kind = BACKWARD needs %s", name);
    SDPA_TRY(check_required(name, t, dim_names, why));
    SDPA_TRY(check_same_dims(name, t, like_name, like, dim_names));
    if (t->dtype != dtype)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "%s.dtype = %s differs from %s.dtype = %s",
                         name, sdpa_dtype_name(t->dtype), dtype_owner, sdpa_dtype_name(dtype));
    return SDPA_SUCCESS;
}

static sdpa_status_t check_backward(const sdpa_problem_desc_t *d)
{
    SDPA_TRY(check_bool("deterministic", d->deterministic));
    SDPA_TRY(check_gradient("diff_dst", &d->diff_dst, "dst", &d->dst, q_dim_names, d->dst.dtype,
                            "dst"));
    SDPA_TRY(check_gradient("diff_q", &d->diff_q, "q", &d->q, q_dim_names, d->q.dtype, "q"));
    SDPA_TRY(check_gradient("diff_k", &d->diff_k, "k", &d->k, kv_dim_names, d->q.dtype, "q"));
    SDPA_TRY(check_gradient("diff_v", &d->diff_v, "v", &d->v, kv_dim_names, d->q.dtype, "q"));

    SDPA_TRY(check_dtype_enum("ds.dtype", d->ds.dtype));
    if (d->ds.dtype == SDPA_DTYPE_UNDEF)
        return SDPA_SUCCESS; /* not requested */
    SDPA_TRY(check_float_dtype("ds.dtype", d->ds.dtype, "unreachable"));
    SDPA_TRY(check_layout("ds", &d->ds, scores_dim_names));
    int64_t want[4];
    sdpa_llm_scores_dims(d, want);
    static const char *const plain[4] = {"q.dims[0]", "q.dims[1]", "q.dims[2]", "k.dims[2]"};
    static const char *const varlen[4] = {"varlen.batch", "q.dims[1]", "varlen.max_seqlen_q",
                                          "varlen.max_seqlen_k"};
    const char *const *owner = d->varlen.enabled ? varlen : plain;
    for (int n = 0; n < 4; n++) {
        if (d->ds.dims[n] != want[n])
            return sdpa_fail(
                    SDPA_ERROR_INVALID_ARGUMENT, "ds.dims[%d] = %lld (%s) differs from %s = %lld",
                    n, (long long)d->ds.dims[n], scores_dim_names[n], owner[n], (long long)want[n]);
    }
    return SDPA_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* Buffers the problem implies                                               */
/* ------------------------------------------------------------------------- */

/* A dense buffer of the elements of dims (n of them, named by what) at bits
 * per element must be addressable. */
static sdpa_status_t check_dense_buffer(const char *field, const char *what, const int64_t *dims,
                                        int n, int bits)
{
    uint64_t bytes = sdpa_size_bytes(sdpa_size_product(dims, n), bits);
    if (bytes <= SDPA_MAX_BUFFER_BYTES)
        return SDPA_SUCCESS;
    char shape[128];
    int used = 0;
    for (int i = 0; i < n && used >= 0 && (size_t)used < sizeof(shape); i++)
        used += snprintf(shape + used, sizeof(shape) - (size_t)used, "%s%lld", i ? " x " : "",
                         (long long)dims[i]);
    return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                     "%s (%s = %s) needs more than %llu bytes, the largest addressable buffer",
                     field, what, shape, (unsigned long long)SDPA_MAX_BUFFER_BYTES);
}

/* The log-sum-exp workspace, the dropout keep mask (and the Philox element
 * index, which runs over [B, Hq, Sq, Sk]) and per-group quantization
 * parameters are dense buffers whose size the caller does not spell out:
 * refuse problems where they cannot exist, so that no size query wraps. */
static sdpa_status_t check_implied_buffers(const sdpa_problem_desc_t *d)
{
    int64_t scores[4];
    sdpa_llm_scores_dims(d, scores);
    const int64_t rows[3] = {d->q.dims[0], d->q.dims[1], d->q.dims[2]}; /* Q's own (varlen) */
    if (d->prop_kind != SDPA_FORWARD_INFERENCE)
        SDPA_TRY(check_dense_buffer("workspace", "f32 B x Hq x Sq", rows, 3, 32));
    if (d->dropout.enabled)
        SDPA_TRY(check_dense_buffer("dropout", "Philox element index over B x Hq x Sq x Sk", scores,
                                    4, 8));
    static const char *const names[2] = {"k_quant", "v_quant"};
    const sdpa_quant_desc_t *quants[2] = {&d->k_quant, &d->v_quant};
    for (int t = 0; t < 2; t++) {
        const sdpa_quant_desc_t *q = quants[t];
        if (q->scales != SDPA_QUANT_PER_GROUP && q->zero_points != SDPA_QUANT_PER_GROUP)
            continue;
        const int64_t groups[4] = {d->k.dims[0], d->k.dims[1], d->k.dims[2],
                                   (t == 0 ? d->k.dims[3] : d->v.dims[3]) / q->group_size};
        char field[32];
        snprintf(field, sizeof(field), "%s.group_size", names[t]);
        /* s32 zero points or f32 scales: at most 32 bits per group. */
        SDPA_TRY(check_dense_buffer(field, "scales of B x Hkv x Sk x D / group_size", groups, 4,
                                    32));
    }
    return SDPA_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* The problem                                                               */
/* ------------------------------------------------------------------------- */

static sdpa_status_t check_problem(const sdpa_problem_desc_t *d)
{
    SDPA_TRY(check_enum("prop_kind", (unsigned)d->prop_kind, SDPA_BACKWARD, "sdpa_prop_kind_t"));
    SDPA_TRY(check_enum("softmax_kind", (unsigned)d->softmax_kind, SDPA_SOFTMAX_INF_AS_ZERO,
                        "sdpa_softmax_kind_t"));
    SDPA_TRY(sdpa_llm_check_flags(d));
    SDPA_TRY(check_qkvo(d));
    if (d->prop_kind == SDPA_BACKWARD) {
        if (sdpa_dtype_is_fp8(d->k.dtype) || sdpa_dtype_is_fp8(d->v.dtype)) {
            const char *name = sdpa_dtype_is_fp8(d->k.dtype) ? "k" : "v";
            const sdpa_tensor_desc_t *t = name[0] == 'k' ? &d->k : &d->v;
            return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                             "%s.dtype = %s: FP8 K/V are not supported in backward (training "
                             "uses f16 or bf16 K/V)",
                             name, sdpa_dtype_name(t->dtype));
        }
        if (sdpa_dtype_is_quantized(d->k.dtype) || sdpa_dtype_is_quantized(d->v.dtype)) {
            const char *name = sdpa_dtype_is_quantized(d->k.dtype) ? "k" : "v";
            const sdpa_tensor_desc_t *t = name[0] == 'k' ? &d->k : &d->v;
            return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                             "%s.dtype = %s: quantized K/V are not supported in backward", name,
                             sdpa_dtype_name(t->dtype));
        }
    }
    /* The varlen and paged sizes before the mask and dS, whose dims follow
     * from them. */
    SDPA_TRY(sdpa_llm_check_layout(d));
    SDPA_TRY(check_quant("k", &d->k, &d->k_quant, d->q.dims[3]));
    SDPA_TRY(check_quant("v", &d->v, &d->v_quant, d->v.dims[3]));
    SDPA_TRY(check_mask(d));
    SDPA_TRY(check_scale(d));
    SDPA_TRY(check_acc_dtype("kq_acc_dtype", d->kq_acc_dtype));
    SDPA_TRY(check_acc_dtype("vs_acc_dtype", d->vs_acc_dtype));
    SDPA_TRY(check_dropout(d));
    if (d->prop_kind == SDPA_BACKWARD)
        SDPA_TRY(check_backward(d));
    SDPA_TRY(sdpa_llm_check(d));
    return check_implied_buffers(d);
}

/* Zeroes what the problem does not use (see problem.h). */
static void normalize_problem(sdpa_problem_desc_t *d)
{
    sdpa_tensor_desc_t no_tensor;
    memset(&no_tensor, 0, sizeof(no_tensor));
    d->struct_size = sizeof(*d);
    d->struct_version = SDPA_PROBLEM_DESC_VERSION;
    if (d->mask_kind != SDPA_MASK_BUFFER)
        d->mask = no_tensor;
    if (d->scale_kind != SDPA_SCALE_DEVICE)
        d->scale_dtype = SDPA_DTYPE_UNDEF;
    if (d->scale_kind == SDPA_SCALE_NONE)
        d->invert_scale = 0;
    if (d->kq_acc_dtype == SDPA_DTYPE_UNDEF)
        d->kq_acc_dtype = SDPA_DTYPE_F32;
    if (d->vs_acc_dtype == SDPA_DTYPE_UNDEF)
        d->vs_acc_dtype = SDPA_DTYPE_F32;
    sdpa_quant_desc_t *quants[2] = {&d->k_quant, &d->v_quant};
    for (int t = 0; t < 2; t++) {
        sdpa_quant_desc_t *q = quants[t];
        if (q->scales == SDPA_QUANT_NONE)
            q->scales_dtype = SDPA_DTYPE_UNDEF;
        if (q->zero_points == SDPA_QUANT_NONE)
            q->zero_points_dtype = SDPA_DTYPE_UNDEF;
        if (q->scales != SDPA_QUANT_PER_GROUP && q->zero_points != SDPA_QUANT_PER_GROUP)
            q->group_size = 0;
    }
    if (!d->dropout.enabled)
        d->dropout.host_scalars = 0;
    if (d->prop_kind != SDPA_BACKWARD) {
        d->diff_dst = no_tensor;
        d->diff_q = no_tensor;
        d->diff_k = no_tensor;
        d->diff_v = no_tensor;
        d->ds = no_tensor;
        d->deterministic = 0;
    } else if (d->ds.dtype == SDPA_DTYPE_UNDEF) {
        d->ds = no_tensor;
    }
    sdpa_llm_normalize(d);
}

sdpa_status_t sdpa_problem_check(const sdpa_problem_desc_t *desc, sdpa_problem_desc_t *out,
                                 sdpa_shape_t *shape)
{
    if (desc == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "desc is NULL");
    if (out == NULL || shape == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "%s is NULL (internal)",
                         out == NULL ? "out" : "shape");
    SDPA_TRY(sdpa_struct_check("desc", desc->struct_size, desc->struct_version,
                               SDPA_PROBLEM_DESC_VERSION, SDPA_PROBLEM_DESC_V1_SIZE,
                               sdpa_problem_desc_size(desc->struct_version)));

    sdpa_problem_desc_t d;
    sdpa_copy_struct(&d, sizeof(d), desc, desc->struct_size);
    sdpa_llm_zero_newer(&d, desc->struct_version);
    SDPA_TRY(check_problem(&d));
    normalize_problem(&d);

    sdpa_problem_copy(out, &d);
    int64_t scores[4];
    sdpa_llm_scores_dims(&d, scores);
    shape->batch = scores[0];
    shape->q_heads = d.q.dims[1];
    shape->kv_heads = d.k.dims[1];
    shape->kv_group_size = d.q.dims[1] / d.k.dims[1];
    shape->q_len = scores[2];
    shape->k_len = scores[3];
    shape->head_size = d.q.dims[3];
    shape->head_size_v = d.v.dims[3];
    return SDPA_SUCCESS;
}
