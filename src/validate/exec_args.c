/* exec_args.c - checking the arguments of one execution against its
 * problem, and the buffers a problem implies. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "problem.h"
#include "problem_llm.h"
#include "size_math.h"

/* ------------------------------------------------------------------------- */
/* Execution arguments                                                       */
/* ------------------------------------------------------------------------- */

/* Fails if a pointer the problem needs is NULL; reason says why it is needed. */
static sdpa_status_t need(const void *pointer, const char *member, const char *reason)
{
    if (pointer == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "args->%s is NULL but %s", member, reason);
    return SDPA_SUCCESS;
}

static sdpa_status_t check_quant_args(const char *name, const sdpa_quant_desc_t *q,
                                      const void *scales, const void *zero_points)
{
    char member[24], reason[64];
    if (q->scales != SDPA_QUANT_NONE) {
        snprintf(member, sizeof(member), "%s_scales", name);
        snprintf(reason, sizeof(reason), "%s_quant.scales = %s", name,
                 sdpa_quant_kind_name(q->scales));
        SDPA_TRY(need(scales, member, reason));
    }
    if (q->zero_points != SDPA_QUANT_NONE) {
        snprintf(member, sizeof(member), "%s_zero_points", name);
        snprintf(reason, sizeof(reason), "%s_quant.zero_points = %s", name,
                 sdpa_quant_kind_name(q->zero_points));
        SDPA_TRY(need(zero_points, member, reason));
    }
    return SDPA_SUCCESS;
}

/* Bytes of one element of dtype as pointers must be aligned to (sdpa.h):
 * 1 for the 4-bit types, whose pointers address bytes. */
size_t sdpa_dtype_alignment(sdpa_dtype_t dtype)
{
    const int bits = sdpa_dtype_bits(dtype);
    return bits >= 8 ? (size_t)bits / 8 : 1;
}

/* Fails if a pointer the problem uses is not a multiple of its element
 * size: such an address cannot hold an element of its type. */
static sdpa_status_t aligned(const void *pointer, const char *member, size_t alignment,
                             const char *type)
{
    if (pointer != NULL && (uintptr_t)pointer % alignment != 0)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "args->%s = %p is not aligned to its elements (%s, %zu bytes)", member,
                         pointer, type, alignment);
    return SDPA_SUCCESS;
}

static sdpa_status_t aligned_tensor(const void *pointer, const char *member, sdpa_dtype_t dtype)
{
    return aligned(pointer, member, sdpa_dtype_alignment(dtype), sdpa_dtype_name(dtype));
}

/* Element alignment of every pointer the problem uses (the NULL checks of
 * check_args come first; pointers a problem does not use are ignored). */
static sdpa_status_t check_alignment(const sdpa_problem_desc_t *p, const sdpa_exec_args_t *a)
{
    SDPA_TRY(aligned_tensor(a->q, "q", p->q.dtype));
    SDPA_TRY(aligned_tensor(a->k, "k", p->k.dtype));
    SDPA_TRY(aligned_tensor(a->v, "v", p->v.dtype));
    SDPA_TRY(aligned_tensor(a->dst, "dst", p->dst.dtype));
    if (p->mask_kind == SDPA_MASK_BUFFER)
        SDPA_TRY(aligned_tensor(a->mask, "mask", p->mask.dtype));
    if (p->prop_kind != SDPA_FORWARD_INFERENCE)
        SDPA_TRY(aligned(a->workspace, "workspace", sizeof(float), "f32"));
    if (p->scale_kind == SDPA_SCALE_DEVICE)
        SDPA_TRY(aligned_tensor(a->scale_ptr, "scale_ptr", p->scale_dtype));
    if (p->k_quant.scales != SDPA_QUANT_NONE)
        SDPA_TRY(aligned_tensor(a->k_scales, "k_scales", p->k_quant.scales_dtype));
    if (p->k_quant.zero_points != SDPA_QUANT_NONE)
        SDPA_TRY(aligned_tensor(a->k_zero_points, "k_zero_points", p->k_quant.zero_points_dtype));
    if (p->v_quant.scales != SDPA_QUANT_NONE)
        SDPA_TRY(aligned_tensor(a->v_scales, "v_scales", p->v_quant.scales_dtype));
    if (p->v_quant.zero_points != SDPA_QUANT_NONE)
        SDPA_TRY(aligned_tensor(a->v_zero_points, "v_zero_points", p->v_quant.zero_points_dtype));
    if (p->dropout.enabled && !p->dropout.host_scalars) {
        SDPA_TRY(aligned(a->dropout_p_ptr, "dropout_p_ptr", sizeof(float), "f32"));
        SDPA_TRY(aligned(a->dropout_seed_ptr, "dropout_seed_ptr", sizeof(int64_t), "int64"));
        if (p->dropout.with_offset)
            SDPA_TRY(
                    aligned(a->dropout_offset_ptr, "dropout_offset_ptr", sizeof(int64_t), "int64"));
    }
    if (p->prop_kind == SDPA_BACKWARD) {
        SDPA_TRY(aligned_tensor(a->diff_dst, "diff_dst", p->diff_dst.dtype));
        SDPA_TRY(aligned_tensor(a->diff_q, "diff_q", p->diff_q.dtype));
        SDPA_TRY(aligned_tensor(a->diff_k, "diff_k", p->diff_k.dtype));
        SDPA_TRY(aligned_tensor(a->diff_v, "diff_v", p->diff_v.dtype));
        if (p->ds.dtype != SDPA_DTYPE_UNDEF)
            SDPA_TRY(aligned_tensor(a->ds, "ds", p->ds.dtype));
    }
    return SDPA_SUCCESS;
}

static sdpa_status_t check_args(const sdpa_problem_desc_t *p, const sdpa_exec_args_t *a)
{
    SDPA_TRY(need(a->q, "q", "every problem reads Q"));
    SDPA_TRY(need(a->k, "k", "every problem reads K"));
    SDPA_TRY(need(a->v, "v", "every problem reads V"));
    SDPA_TRY(need(a->dst, "dst",
                  p->prop_kind == SDPA_BACKWARD ? "backward reads O" : "forward writes O"));
    if (p->mask_kind == SDPA_MASK_BUFFER)
        SDPA_TRY(need(a->mask, "mask", "mask_kind = BUFFER"));
    if (p->prop_kind != SDPA_FORWARD_INFERENCE)
        SDPA_TRY(need(a->workspace, "workspace",
                      p->prop_kind == SDPA_BACKWARD ? "backward reads the log-sum-exp workspace"
                                                    : "FORWARD_TRAINING writes the log-sum-exp "
                                                      "workspace"));
    if (p->scale_kind == SDPA_SCALE_DEVICE)
        SDPA_TRY(need(a->scale_ptr, "scale_ptr", "scale_kind = DEVICE"));
    SDPA_TRY(check_quant_args("k", &p->k_quant, a->k_scales, a->k_zero_points));
    SDPA_TRY(check_quant_args("v", &p->v_quant, a->v_scales, a->v_zero_points));

    const sdpa_dropout_desc_t *dr = &p->dropout;
    if (dr->enabled) {
        if (dr->host_scalars) {
            if (!(a->dropout_p >= 0.0f && a->dropout_p < 1.0f))
                return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                                 "args->dropout_p = %g: must be in [0, 1)", (double)a->dropout_p);
        } else {
            SDPA_TRY(need(a->dropout_p_ptr, "dropout_p_ptr", "dropout.host_scalars = 0"));
            SDPA_TRY(need(a->dropout_seed_ptr, "dropout_seed_ptr", "dropout.host_scalars = 0"));
            if (dr->with_offset)
                SDPA_TRY(need(a->dropout_offset_ptr, "dropout_offset_ptr",
                              "dropout.with_offset = 1 and dropout.host_scalars = 0"));
        }
        if (dr->with_mask_output)
            SDPA_TRY(need(a->dropout_mask, "dropout_mask", "dropout.with_mask_output = 1"));
    }
    if (p->prop_kind == SDPA_BACKWARD) {
        SDPA_TRY(need(a->diff_dst, "diff_dst", "prop_kind = BACKWARD"));
        SDPA_TRY(need(a->diff_q, "diff_q", "prop_kind = BACKWARD"));
        SDPA_TRY(need(a->diff_k, "diff_k", "prop_kind = BACKWARD"));
        SDPA_TRY(need(a->diff_v, "diff_v", "prop_kind = BACKWARD"));
        if (p->ds.dtype != SDPA_DTYPE_UNDEF)
            SDPA_TRY(need(a->ds, "ds", "ds.dtype is set (dS requested)"));
    }
    SDPA_TRY(sdpa_llm_args_check(p, a));
    if (a->num_wait_events > 0 && a->wait_events == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "args->wait_events is NULL but "
                         "args->num_wait_events = %u",
                         a->num_wait_events);
    return check_alignment(p, a);
}

sdpa_status_t sdpa_exec_args_check(const sdpa_problem_desc_t *problem, const sdpa_exec_args_t *args,
                                   sdpa_exec_args_t *out)
{
    if (args == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "args is NULL");
    if (problem == NULL || out == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "%s is NULL (internal)",
                         problem == NULL ? "problem" : "out");
    SDPA_TRY(sdpa_struct_check("args", args->struct_size, args->struct_version,
                               SDPA_EXEC_ARGS_VERSION, SDPA_EXEC_ARGS_V1_SIZE,
                               sdpa_exec_args_size(args->struct_version)));
    sdpa_exec_args_t a;
    sdpa_copy_struct(&a, sizeof(a), args, args->struct_size);
    sdpa_llm_zero_newer_args(&a, args->struct_version);
    SDPA_TRY(check_args(problem, &a));
    a.struct_size = sizeof(a);
    a.struct_version = SDPA_EXEC_ARGS_VERSION;
    *out = a;
    return SDPA_SUCCESS;
}

size_t sdpa_workspace_bytes(const sdpa_problem_desc_t *problem, const sdpa_shape_t *shape)
{
    if (problem->prop_kind != SDPA_FORWARD_TRAINING && problem->prop_kind != SDPA_BACKWARD)
        return 0;
    /* f32 [q.dims[0], Hq, q.dims[2]]: with varlen, [Hq, total_q] */
    (void)shape;
    const int64_t rows[3] = {problem->q.dims[0], problem->q.dims[1], problem->q.dims[2]};
    uint64_t bytes = sdpa_size_bytes(sdpa_size_product(rows, 3), 32);
    /* sdpa_problem_check refused problems whose workspace is not addressable. */
    return bytes <= SDPA_MAX_BUFFER_BYTES ? (size_t)bytes : SIZE_MAX;
}
