/* merge_check.c - checking merge descriptors and their execution arguments. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "merge_check.h"
#include "problem.h"

static const char *const state_dim_names[4] = {"batch", "heads", "queries", "head size"};
static const char *const lse_dim_names[4] = {"batch", "heads", "queries", "1"};

/* dims[n] of t equal those of ref for n < count. */
static sdpa_status_t check_dims_like(const char *name, const sdpa_tensor_desc_t *t,
                                     const char *ref_name, const sdpa_tensor_desc_t *ref, int count)
{
    for (int n = 0; n < count; n++) {
        if (t->dims[n] != ref->dims[n])
            return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                             "%s.dims[%d] = %lld (%s) differs from %s.dims[%d] = %lld", name, n,
                             (long long)t->dims[n], state_dim_names[n], ref_name, n,
                             (long long)ref->dims[n]);
    }
    return SDPA_SUCCESS;
}

/* An O tensor (states or dst): f32, f16 or bf16 [B, H, S, D]. */
static sdpa_status_t check_o_tensor(const char *name, const sdpa_tensor_desc_t *t)
{
    char why[48];
    snprintf(why, sizeof(why), "the merge needs %s", name);
    SDPA_TRY(sdpa_tensor_check(name, t, state_dim_names, why));
    if (!sdpa_dtype_is_float(t->dtype))
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "%s.dtype = %s: must be f32, f16 or bf16",
                         name, sdpa_dtype_name(t->dtype));
    return SDPA_SUCCESS;
}

/* An LSE tensor: f32 [B, H, S, 1] with the states' B, H, S. */
static sdpa_status_t check_lse_tensor(const char *name, const sdpa_tensor_desc_t *t,
                                      const sdpa_tensor_desc_t *states)
{
    if (t->dtype != SDPA_DTYPE_F32)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "%s.dtype = %s: log-sum-exps are f32", name,
                         sdpa_dtype_name(t->dtype));
    if (t->dims[3] != 1)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "%s.dims[3] = %lld: a log-sum-exp tensor is [B, H, S, 1]", name,
                         (long long)t->dims[3]);
    SDPA_TRY(sdpa_tensor_check(name, t, lse_dim_names, "unreachable"));
    return check_dims_like(name, t, "states", states, 3);
}

/* Copies t over zeroed memory, member by member (no padding garbage);
 * keep_stride3 0 zeroes strides[3] (an LSE tensor does not use it). */
static void copy_tensor(sdpa_tensor_desc_t *out, const sdpa_tensor_desc_t *t, int keep_stride3)
{
    memset(out, 0, sizeof(*out));
    out->dtype = t->dtype;
    for (int n = 0; n < 4; n++) {
        out->dims[n] = t->dims[n];
        out->strides[n] = t->strides[n];
    }
    if (!keep_stride3)
        out->strides[3] = 0;
}

sdpa_status_t sdpa_merge_check(const sdpa_merge_desc_t *desc, sdpa_merge_desc_t *out)
{
    if (desc == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "desc is NULL");
    if (out == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "out is NULL (internal)");
    SDPA_TRY(sdpa_struct_check("desc", desc->struct_size, desc->struct_version,
                               SDPA_MERGE_DESC_VERSION, sizeof(*desc), sizeof(*desc)));
    if (desc->num_states < 1 || desc->num_states > SDPA_MERGE_MAX_STATES)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "num_states = %u: must be in 1..%d (SDPA_MERGE_MAX_STATES; merge more "
                         "states in steps)",
                         desc->num_states, SDPA_MERGE_MAX_STATES);
    if ((unsigned)desc->softmax_kind > SDPA_SOFTMAX_INF_AS_ZERO)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "softmax_kind = %d: not a valid sdpa_softmax_kind_t",
                         (int)desc->softmax_kind);
    SDPA_TRY(check_o_tensor("states", &desc->states));
    SDPA_TRY(check_lse_tensor("states_lse", &desc->states_lse, &desc->states));
    SDPA_TRY(check_o_tensor("dst", &desc->dst));
    SDPA_TRY(check_dims_like("dst", &desc->dst, "states", &desc->states, 4));
    if (desc->dst_lse.dtype != SDPA_DTYPE_UNDEF)
        SDPA_TRY(check_lse_tensor("dst_lse", &desc->dst_lse, &desc->states));

    sdpa_merge_desc_t m;
    memset(&m, 0, sizeof(m));
    m.struct_size = sizeof(m);
    m.struct_version = SDPA_MERGE_DESC_VERSION;
    m.num_states = desc->num_states;
    m.softmax_kind = desc->softmax_kind;
    copy_tensor(&m.states, &desc->states, 1);
    copy_tensor(&m.states_lse, &desc->states_lse, 0);
    copy_tensor(&m.dst, &desc->dst, 1);
    if (desc->dst_lse.dtype != SDPA_DTYPE_UNDEF)
        copy_tensor(&m.dst_lse, &desc->dst_lse, 0);
    *out = m;
    return SDPA_SUCCESS;
}

/* Fails if pointer is NULL or not a multiple of its element size. */
static sdpa_status_t check_pointer(const void *pointer, const char *member, sdpa_dtype_t dtype,
                                   const char *reason)
{
    if (pointer == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "args->%s is NULL but %s", member, reason);
    const size_t alignment = sdpa_dtype_alignment(dtype);
    if ((uintptr_t)pointer % alignment != 0)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "args->%s = %p is not aligned to its elements (%s, %zu bytes)", member,
                         pointer, sdpa_dtype_name(dtype), alignment);
    return SDPA_SUCCESS;
}

/* The num_states pointers of args->states (lse 0) or args->states_lse (lse 1). */
static sdpa_status_t check_state_pointers(const sdpa_merge_desc_t *m, const sdpa_merge_args_t *a,
                                          int lse)
{
    const char *name = lse ? "states_lse" : "states";
    char reason[64];
    snprintf(reason, sizeof(reason), "num_states = %u", m->num_states);
    if (lse ? a->states_lse == NULL : a->states == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "args->%s is NULL but %s", name, reason);
    for (uint32_t s = 0; s < m->num_states; s++) {
        char member[32];
        snprintf(member, sizeof(member), "%s[%u]", name, s);
        const void *pointer = lse ? (const void *)a->states_lse[s] : a->states[s];
        SDPA_TRY(check_pointer(pointer, member, lse ? SDPA_DTYPE_F32 : m->states.dtype, reason));
    }
    return SDPA_SUCCESS;
}

sdpa_status_t sdpa_merge_args_check(const sdpa_merge_desc_t *merge, const sdpa_merge_args_t *args,
                                    sdpa_merge_args_t *out)
{
    if (args == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "args is NULL");
    if (merge == NULL || out == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "%s is NULL (internal)",
                         merge == NULL ? "merge" : "out");
    SDPA_TRY(sdpa_struct_check("args", args->struct_size, args->struct_version,
                               SDPA_MERGE_ARGS_VERSION, sizeof(*args), sizeof(*args)));
    SDPA_TRY(check_state_pointers(merge, args, 0));
    SDPA_TRY(check_state_pointers(merge, args, 1));
    SDPA_TRY(check_pointer(args->dst, "dst", merge->dst.dtype, "the merge writes O"));
    if (merge->dst_lse.dtype != SDPA_DTYPE_UNDEF)
        SDPA_TRY(check_pointer(args->dst_lse, "dst_lse", SDPA_DTYPE_F32, "dst_lse.dtype = f32"));
    if (args->num_wait_events > 0 && args->wait_events == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "args->wait_events is NULL but args->num_wait_events = %u",
                         args->num_wait_events);
    *out = *args;
    out->struct_size = sizeof(*out);
    out->struct_version = SDPA_MERGE_ARGS_VERSION;
    return SDPA_SUCCESS;
}
