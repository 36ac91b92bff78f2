/*
 * cp_create.c - creating and destroying a context-parallel object: checking
 * the rank's shard and that every rank agrees on it, the command list and
 * events, the buffers (cp_internal.h lists them) and the sdpa primitives the
 * rank's steps need.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_internal.h"
#include "error.h"
#include "problem.h"

/* Returns from the enclosing function if a call failed. */
#define TRY(expr)                                                                                  \
    do {                                                                                           \
        sdpa_status_t try_status_ = (expr);                                                        \
        if (try_status_ != SDPA_SUCCESS)                                                           \
            return try_status_;                                                                    \
    } while (0)

/* ------------------------------------------------------------------------- */
/* Checks                                                                    */
/* ------------------------------------------------------------------------- */

/* What sdpa_problem_check does not refuse but the ring cannot serve. */
static sdpa_status_t check_shard(const sdpa_problem_desc_t *p, sdpa_cp_layout_t layout)
{
    if (p->mask_kind == SDPA_MASK_BUFFER)
        return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                         "problem->mask_kind = BUFFER: a mask tensor is not sharded by the ring; "
                         "use NONE or causal");
    if (p->dropout.enabled)
        return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                         "problem->dropout.enabled = 1: the ring does not reproduce the dropout "
                         "counters of the whole sequence");
#if SDPA_PROBLEM_DESC_VERSION >= 2
    /* ABI 1.1's LLM members: those that depend on where a token sits in its
     * sequence, or lay it out otherwise, would see a chunk's positions, not
     * the sequence's. The softcap is per score and merges exactly. */
    if (p->varlen.enabled || p->paged_kv.enabled || p->window.enabled ||
        p->alibi != SDPA_ALIBI_NONE)
        return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                         "problem->%s: the ring shards one dense sequence and gives each "
                         "primitive a chunk of it, whose positions are not the sequence's",
                         p->varlen.enabled     ? "varlen.enabled = 1"
                         : p->paged_kv.enabled ? "paged_kv.enabled = 1"
                         : p->window.enabled   ? "window.enabled = 1"
                                               : "alibi is not NONE");
#endif
#if SDPA_PROBLEM_DESC_VERSION >= 3
    /* Each chunk's primitive would count the sink once: the merge of the
     * chunks would count it once per chunk. */
    if (p->sinks)
        return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                         "problem->sinks = 1: the ring merges chunks that would each count "
                         "the sinks once");
#endif
    /* The ring's buffers and merges take one head size. */
    if (p->v.dims[3] != p->q.dims[3])
        return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                         "problem->v.dims[3] = %lld differs from q.dims[3] = %lld: the ring "
                         "takes one head size for Q, K, V and O",
                         (long long)p->v.dims[3], (long long)p->q.dims[3]);
    static const char *const names[3] = {"k", "v", "dst"};
    const sdpa_tensor_desc_t *same[3] = {&p->k, &p->v, &p->dst};
    for (int i = 0; i < 3; i++)
        if (same[i]->dtype != p->q.dtype)
            return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                             "problem->%s.dtype = %s differs from q.dtype = %s: the ring takes "
                             "one dtype for Q, K, V and O",
                             names[i], sdpa_dtype_name(same[i]->dtype),
                             sdpa_dtype_name(p->q.dtype));
    if (p->prop_kind == SDPA_BACKWARD && p->ds.dtype != SDPA_DTYPE_UNDEF)
        return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                         "problem->ds.dtype = %s: the ring does not write dS",
                         sdpa_dtype_name(p->ds.dtype));
    if (p->q.dims[2] != p->k.dims[2])
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "problem->q.dims[2] = %lld differs from k.dims[2] = %lld: a rank holds "
                         "the queries and the keys of the same tokens",
                         (long long)p->q.dims[2], (long long)p->k.dims[2]);
    int chunks = cp_chunks_per_rank(layout);
    if (p->q.dims[2] % chunks != 0)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "problem->q.dims[2] = %lld is odd: ZIGZAG cuts a rank's tokens into "
                         "two chunks of the same length",
                         (long long)p->q.dims[2]);
    return SDPA_SUCCESS;
}

/* The members of the desc that cannot be used to talk to the other ranks. */
static sdpa_status_t check_desc_local(const sdpa_cp_transport_desc_t *desc, sdpa_cp_t **out)
{
    if (out == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "out is NULL");
    *out = NULL;
    if (desc == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "desc is NULL");
    TRY(sdpa_struct_check("desc", desc->struct_size, desc->struct_version,
                          SDPA_CP_TRANSPORT_DESC_VERSION, sizeof(*desc), sizeof(*desc)));
    return cp_transport_check(desc->transport);
}

/* The rest of the desc, on one rank. */
static sdpa_status_t check_desc(const sdpa_cp_transport_desc_t *desc, sdpa_problem_desc_t *problem)
{
    const sdpa_backend_iface_t *be = desc->backend;
    if (be == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "desc->backend is NULL");
    if (SDPA_VERSION_MAJOR(be->abi_version) != 1 || SDPA_VERSION_MINOR(be->abi_version) < 1 ||
        be->struct_size <
                offsetof(sdpa_backend_iface_t, merge_execute) + sizeof(be->merge_execute) ||
        be->merge_create == NULL || be->merge_execute == NULL)
        return sdpa_fail(SDPA_ERROR_ABI_VERSION,
                         "desc->backend speaks ABI %u.%u: the ring merges partial results with "
                         "merge_create and merge_execute (ABI 1.1)",
                         SDPA_VERSION_MAJOR(be->abi_version), SDPA_VERSION_MINOR(be->abi_version));
    if (desc->context == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "desc->context is NULL");
    if (desc->ze_context == NULL || desc->ze_device == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "desc->%s is NULL: the ring allocates its buffers and command list there",
                         desc->ze_context == NULL ? "ze_context" : "ze_device");
    if (cp_chunks_per_rank(desc->layout) == 0)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "desc->layout = %d: not a valid sdpa_cp_layout_t", (int)desc->layout);
    if (desc->problem == NULL)
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "desc->problem is NULL");
    sdpa_shape_t shape;
    sdpa_status_t status = sdpa_problem_check(desc->problem, problem, &shape);
    if (status != SDPA_SUCCESS) {
        char why[1024];
        snprintf(why, sizeof(why), "%s", sdpa_error_message());
        return sdpa_fail(status, "desc->problem: %s", why);
    }
    return check_shard(problem, desc->layout);
}

/* What every rank must have in common, with the names messages use. */
enum { DIGEST_FIELDS = 14 };
static const char *const digest_names[DIGEST_FIELDS] = {
        "layout",          "problem->prop_kind",    "problem->q.dtype",
        "causal",          "problem->q.dims[0] (batch)", "problem->q.dims[1] (query heads)",
        "problem->k.dims[1] (K/V heads)", "problem->q.dims[2] (tokens per rank)",
        "problem->q.dims[3] (head size)", "problem->scale_kind", "problem->invert_scale",
        "problem->softmax_kind", "problem->deterministic", "problem->kq_acc_dtype, vs_acc_dtype"};

static void digest(const sdpa_cp_transport_desc_t *desc, const sdpa_problem_desc_t *p,
                   int64_t values[DIGEST_FIELDS])
{
    int64_t v[DIGEST_FIELDS] = {desc->layout,
                                p->prop_kind,
                                p->q.dtype,
                                p->mask_kind != SDPA_MASK_NONE,
                                p->q.dims[0],
                                p->q.dims[1],
                                p->k.dims[1],
                                p->q.dims[2],
                                p->q.dims[3],
                                p->scale_kind,
                                p->invert_scale,
                                p->softmax_kind,
                                p->deterministic,
                                (int64_t)p->kq_acc_dtype * 16 + p->vs_acc_dtype};
    memcpy(values, v, sizeof(v));
}

/* Collective: every rank's digest is the same. */
static sdpa_status_t agree_on_problem(const sdpa_cp_transport_t *t,
                                      const int64_t values[DIGEST_FIELDS])
{
    int64_t *all = calloc((size_t)t->ranks * DIGEST_FIELDS, sizeof(*all));
    if (all == NULL)
        return sdpa_fail(SDPA_ERROR_OUT_OF_HOST_MEMORY, "no memory for %d ranks' digests",
                         t->ranks);
    const char *call = NULL;
    int code = cp_exchange_all(t, values, DIGEST_FIELDS, all, &call);
    sdpa_status_t status = code != 0 ? cp_transport_failure(t, code, call) : SDPA_SUCCESS;
    for (int i = 0; i < DIGEST_FIELDS && status == SDPA_SUCCESS; i++) {
        int64_t low = values[i], high = values[i];
        for (int r = 0; r < t->ranks; r++) {
            int64_t v = all[(size_t)r * DIGEST_FIELDS + (size_t)i];
            low = v < low ? v : low;
            high = v > high ? v : high;
        }
        if (low != high)
            status = sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                               "%s differs between ranks (%lld .. %lld): every rank must "
                               "describe its shard of the same problem",
                               digest_names[i], (long long)low, (long long)high);
    }
    free(all);
    return status;
}

/* ------------------------------------------------------------------------- */
/* Level Zero: list, events, memory                                          */
/* ------------------------------------------------------------------------- */

#define ZE_TRY(call)                                                                               \
    do {                                                                                           \
        ze_result_t ze_result_ = (call);                                                           \
        if (ze_result_ != ZE_RESULT_SUCCESS)                                                       \
            return cp_ze_failure(ze_result_, #call);                                               \
    } while (0)

/* The first queue group of the device that runs kernels. */
static sdpa_status_t compute_group(ze_device_handle_t device, uint32_t *ordinal)
{
    uint32_t count = 0;
    ZE_TRY(zeDeviceGetCommandQueueGroupProperties(device, &count, NULL));
    ze_command_queue_group_properties_t *groups = calloc(count ? count : 1, sizeof(*groups));
    if (groups == NULL)
        return sdpa_fail(SDPA_ERROR_OUT_OF_HOST_MEMORY, "no memory for %u queue groups", count);
    for (uint32_t i = 0; i < count; i++)
        groups[i].stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
    ze_result_t result = zeDeviceGetCommandQueueGroupProperties(device, &count, groups);
    uint32_t found = count;
    for (uint32_t i = 0; result == ZE_RESULT_SUCCESS && i < count && found == count; i++)
        if (groups[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE)
            found = i;
    free(groups);
    if (result != ZE_RESULT_SUCCESS)
        return cp_ze_failure(result, "zeDeviceGetCommandQueueGroupProperties");
    if (found == count)
        return sdpa_fail(SDPA_ERROR_UNSUPPORTED, "the device has no compute queue group");
    *ordinal = found;
    return SDPA_SUCCESS;
}

/* An asynchronous immediate list: appends return at once, so that the host
 * drives the transport while the device runs them. */
static sdpa_status_t create_list_and_events(sdpa_cp_t *cp)
{
    uint32_t ordinal = 0;
    TRY(compute_group(cp->ze_device, &ordinal));
    ze_command_queue_desc_t queue = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                     .ordinal = ordinal,
                                     .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                     .priority = ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ZE_TRY(zeCommandListCreateImmediate(cp->ze_context, cp->ze_device, &queue, &cp->list));
    ze_event_pool_desc_t pool = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
                                 .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
                                 .count = 2};
    ZE_TRY(zeEventPoolCreate(cp->ze_context, &pool, 1, &cp->ze_device, &cp->event_pool));
    ze_event_desc_t event = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC,
                             .index = 0,
                             .signal = ZE_EVENT_SCOPE_FLAG_HOST,
                             .wait = ZE_EVENT_SCOPE_FLAG_HOST};
    ZE_TRY(zeEventCreate(cp->event_pool, &event, &cp->step_done));
    event.index = 1;
    ZE_TRY(zeEventCreate(cp->event_pool, &event, &cp->staged));
    return SDPA_SUCCESS;
}

/* Allocates bytes of host (host 1) or device USM into *out, remembered for
 * sdpa_cp_destroy and SDPA_CP_QUERY_MEMORY_BYTES. */
static sdpa_status_t allocate(sdpa_cp_t *cp, size_t bytes, int host, void **out)
{
    if (cp->allocation_count == CP_MAX_ALLOCATIONS)
        return sdpa_fail(SDPA_ERROR_OUT_OF_HOST_MEMORY, "more than %d buffers (internal)",
                         CP_MAX_ALLOCATIONS);
    void *pointer = NULL;
    ze_result_t result;
    if (host) {
        ze_host_mem_alloc_desc_t hd = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
        result = zeMemAllocHost(cp->ze_context, &hd, bytes, 256, &pointer);
    } else {
        ze_device_mem_alloc_desc_t dd = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
        result = zeMemAllocDevice(cp->ze_context, &dd, bytes, 256, cp->ze_device, &pointer);
    }
    if (result != ZE_RESULT_SUCCESS)
        return cp_ze_failure(result, host ? "zeMemAllocHost" : "zeMemAllocDevice");
    cp->allocations[cp->allocation_count++] = pointer;
    cp->allocated_bytes += bytes;
    *out = pointer;
    return SDPA_SUCCESS;
}

/* The largest number of tasks the rank has in one step, and which
 * (K/V source, mask) pairs its tasks use. */
static int plan_tasks(const sdpa_cp_t *cp, int used[CP_KV_SOURCES][CP_MASKS])
{
    int most = 0;
    memset(used, 0, sizeof(int) * CP_KV_SOURCES * CP_MASKS);
    for (int step = 0; step < cp->ranks; step++) {
        cp_task_t tasks[CP_MAX_TASKS];
        int count = cp_step_tasks(cp->layout, cp->causal, cp->ranks, cp->rank, step, tasks);
        for (int i = 0; i < count; i++)
            used[step == 0 ? CP_KV_CALLER : CP_KV_RING]
                [tasks[i].mask == SDPA_MASK_NONE ? CP_MASK_NONE : CP_MASK_DIAGONAL] = 1;
        if (count > most)
            most = count;
    }
    return most;
}

static sdpa_status_t allocate_buffers(sdpa_cp_t *cp, int tasks_per_step)
{
    const size_t o_chunk = (size_t)(cp->batch * cp->q_heads * cp->chunk_len * cp->head_size);
    const size_t lse_chunk = (size_t)(cp->batch * cp->q_heads * cp->chunk_len);
    const size_t kv_chunk = (size_t)(cp->batch * cp->kv_heads * cp->chunk_len * cp->head_size);
    const size_t kv_block = (size_t)(cp->batch * cp->kv_heads * cp->local_len * cp->head_size);
    const size_t e = cp->elem_bytes, f = sizeof(float);
    const int ring = cp->ranks > 1;

    TRY(allocate(cp, f, 1, (void **)&cp->zero_lse));
    *cp->zero_lse = 0.0f;
    if (ring) {
        TRY(allocate(cp, 2 * cp->block_bytes, 1, &cp->ring[0]));
        TRY(allocate(cp, 2 * cp->block_bytes, 1, &cp->ring[1]));
        TRY(allocate(cp, 2 * cp->block_bytes, 0, &cp->kv_dev));
    }
    if (cp->backward) {
        TRY(allocate(cp, 2 * kv_block * f, 1, &cp->acc[0]));
        if (ring)
            TRY(allocate(cp, 2 * kv_block * f, 1, &cp->acc[1]));
        TRY(allocate(cp, (size_t)cp->chunks * o_chunk * f, 1, &cp->dq_acc));
        for (int set = 0; set < (ring ? 2 : 1); set++)
            for (int i = 0; i < tasks_per_step; i++) {
                TRY(allocate(cp, o_chunk * e, 1, &cp->part_dq[set][i]));
                TRY(allocate(cp, kv_chunk * e, 1, &cp->part_dk[set][i]));
                TRY(allocate(cp, kv_chunk * e, 1, &cp->part_dv[set][i]));
            }
        return SDPA_SUCCESS;
    }
    TRY(allocate(cp, o_chunk * e, 0, &cp->part_o));
    TRY(allocate(cp, lse_chunk * f, 0, &cp->part_lse));
    if (cp->dtype != SDPA_DTYPE_F32)
        TRY(allocate(cp, o_chunk * f, 0, &cp->tmp_o));
    TRY(allocate(cp, (size_t)cp->chunks * o_chunk * f, 0, &cp->acc_o));
    if (!cp->training)
        TRY(allocate(cp, (size_t)cp->chunks * lse_chunk * f, 0, &cp->own_lse));
    return SDPA_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* Primitives                                                                */
/* ------------------------------------------------------------------------- */

static sdpa_tensor_desc_t dense(sdpa_dtype_t dtype, int64_t b, int64_t h, int64_t s, int64_t d)
{
    return (sdpa_tensor_desc_t){dtype, {b, h, s, d}, {h * s * d, s * d, d, 1}};
}

/* t with chunk_len tokens: the view of one chunk (the pointer moves). */
static sdpa_tensor_desc_t chunk_view(const sdpa_cp_t *cp, const sdpa_tensor_desc_t *t)
{
    sdpa_tensor_desc_t view = *t;
    view.dims[2] = cp->chunk_len;
    return view;
}

/* 1 if t is laid out as dense() would lay it out (dims of 1 may have any
 * stride). */
static int is_dense(const sdpa_tensor_desc_t *t)
{
    int64_t expected = 1;
    for (int n = 3; n >= 0; n--) {
        if (t->dims[n] > 1 && t->strides[n] != expected)
            return 0;
        expected *= t->dims[n];
    }
    return 1;
}

/* The LSE of a merge that only converts: one 0 for every row. */
static sdpa_tensor_desc_t zero_lse_desc(const sdpa_tensor_desc_t *states)
{
    return (sdpa_tensor_desc_t){
            SDPA_DTYPE_F32, {states->dims[0], states->dims[1], states->dims[2], 1}, {0, 0, 0, 0}};
}

static sdpa_status_t create_merge(sdpa_cp_t *cp, uint32_t count, sdpa_tensor_desc_t states,
                                  sdpa_tensor_desc_t states_lse, sdpa_tensor_desc_t dst,
                                  sdpa_tensor_desc_t dst_lse, sdpa_primitive_t **out)
{
    sdpa_merge_desc_t m;
    memset(&m, 0, sizeof(m));
    m.struct_size = sizeof(m);
    m.struct_version = SDPA_MERGE_DESC_VERSION;
    m.num_states = count;
    m.softmax_kind = cp->problem.softmax_kind;
    m.states = states;
    m.states_lse = states_lse;
    m.dst = dst;
    m.dst_lse = dst_lse;
    sdpa_status_t status = cp->be->merge_create(cp->ctx, &m, out);
    return status == SDPA_SUCCESS ? status : cp_backend_failure(cp, status, "merge_create");
}

/* A conversion: states (with an LSE of 0) to dst, through the merge with
 * one state. */
static sdpa_status_t create_conversion(sdpa_cp_t *cp, sdpa_tensor_desc_t from,
                                       sdpa_tensor_desc_t to, sdpa_primitive_t **out)
{
    sdpa_tensor_desc_t none;
    memset(&none, 0, sizeof(none));
    return create_merge(cp, 1, from, zero_lse_desc(&from), to, none, out);
}

/* The problem of one task: a chunk of queries over a chunk of keys. */
static sdpa_problem_desc_t task_problem(const sdpa_cp_t *cp, int source, int mask)
{
    const sdpa_problem_desc_t *p = &cp->problem;
    const int64_t b = cp->batch, hq = cp->q_heads, hkv = cp->kv_heads, c = cp->chunk_len,
                  d = cp->head_size;
    sdpa_problem_desc_t t = *p;
    t.mask_kind = mask == CP_MASK_NONE ? SDPA_MASK_NONE : SDPA_MASK_CAUSAL_TOP_LEFT;
#if SDPA_PROBLEM_DESC_VERSION >= 2
    t.num_splits = 1; /* a split forward would need scratch the ring does not count */
#endif
    t.q = chunk_view(cp, &p->q);
    if (source == CP_KV_CALLER) {
        t.k = chunk_view(cp, &p->k);
        t.v = chunk_view(cp, &p->v);
    } else {
        /* A chunk of the dense block in kv_dev: the block's strides. */
        t.k = dense(cp->dtype, b, hkv, cp->local_len, d);
        t.k.dims[2] = c;
        t.v = t.k;
    }
    if (!cp->backward) {
        t.prop_kind = SDPA_FORWARD_TRAINING; /* the merge needs every LSE */
        t.dst = dense(cp->dtype, b, hq, c, d);
        return t;
    }
    t.dst = chunk_view(cp, &p->dst);
    t.diff_dst = chunk_view(cp, &p->diff_dst);
    t.diff_q = dense(cp->dtype, b, hq, c, d);
    t.diff_k = dense(cp->dtype, b, hkv, c, d);
    t.diff_v = t.diff_k;
    return t;
}

static sdpa_status_t create_attention(sdpa_cp_t *cp, const int used[CP_KV_SOURCES][CP_MASKS])
{
    sdpa_problem_desc_t made[CP_KV_SOURCES][CP_MASKS];
    for (int source = 0; source < CP_KV_SOURCES; source++)
        for (int mask = 0; mask < CP_MASKS; mask++) {
            if (!used[source][mask])
                continue;
            made[source][mask] = task_problem(cp, source, mask);
            /* The caller's dense K/V make the two sources one problem. */
            if (source == CP_KV_RING && used[CP_KV_CALLER][mask] &&
                memcmp(&made[CP_KV_CALLER][mask], &made[source][mask], sizeof(made[0][0])) == 0) {
                cp->attn[source][mask] = cp->attn[CP_KV_CALLER][mask];
                continue;
            }
            sdpa_status_t status =
                    cp->be->primitive_create(cp->ctx, &made[source][mask], &cp->attn[source][mask]);
            if (status != SDPA_SUCCESS)
                return cp_backend_failure(cp, status, "primitive_create");
            if (cp->backward) {
                size_t scratch = 0;
                status = cp->be->primitive_query(cp->attn[source][mask], SDPA_QUERY_SCRATCH_BYTES,
                                                 &scratch, sizeof(scratch));
                if (status != SDPA_SUCCESS)
                    return cp_backend_failure(cp, status, "primitive_query");
                if (scratch > cp->scratch_bytes)
                    cp->scratch_bytes = scratch;
            }
        }
    return SDPA_SUCCESS;
}

static sdpa_status_t create_merges(sdpa_cp_t *cp)
{
    const sdpa_problem_desc_t *p = &cp->problem;
    const int64_t b = cp->batch, hq = cp->q_heads, hkv = cp->kv_heads, c = cp->chunk_len,
                  d = cp->head_size;
    const sdpa_tensor_desc_t o32 = dense(SDPA_DTYPE_F32, b, hq, c, d);
    if (cp->ranks > 1 && !is_dense(&p->k))
        TRY(create_conversion(cp, p->k, dense(cp->dtype, b, hkv, cp->local_len, d), &cp->pack_k));
    if (cp->ranks > 1 && !is_dense(&p->v))
        TRY(create_conversion(cp, p->v, dense(cp->dtype, b, hkv, cp->local_len, d), &cp->pack_v));
    if (cp->backward) {
        const sdpa_tensor_desc_t kv32 = dense(SDPA_DTYPE_F32, b, hkv, cp->local_len, d);
        TRY(create_conversion(cp, o32, chunk_view(cp, &p->diff_q), &cp->to_diff_q));
        TRY(create_conversion(cp, kv32, p->diff_k, &cp->to_diff_k));
        TRY(create_conversion(cp, kv32, p->diff_v, &cp->to_diff_v));
        return SDPA_SUCCESS;
    }
    sdpa_tensor_desc_t lse = dense(SDPA_DTYPE_F32, b, hq, c, 1);
    lse.strides[3] = 0;
    TRY(create_merge(cp, 1, dense(cp->dtype, b, hq, c, d), lse, o32, lse, &cp->merge_first));
    TRY(create_merge(cp, 2, o32, lse, o32, lse, &cp->merge_two));
    TRY(create_conversion(cp, o32, chunk_view(cp, &p->dst), &cp->to_dst));
    return SDPA_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* Create and destroy                                                        */
/* ------------------------------------------------------------------------- */

static void free_primitives(sdpa_cp_t *cp)
{
    const sdpa_backend_iface_t *be = cp->be;
    for (int mask = 0; mask < CP_MASKS; mask++) {
        if (cp->attn[CP_KV_RING][mask] != cp->attn[CP_KV_CALLER][mask])
            be->primitive_destroy(cp->attn[CP_KV_RING][mask]);
        be->primitive_destroy(cp->attn[CP_KV_CALLER][mask]);
    }
    sdpa_primitive_t *merges[] = {cp->pack_k,  cp->pack_v,    cp->merge_first, cp->merge_two,
                                  cp->to_dst, cp->to_diff_q, cp->to_diff_k,   cp->to_diff_v};
    for (size_t i = 0; i < sizeof(merges) / sizeof(merges[0]); i++)
        be->primitive_destroy(merges[i]);
}

/* True if p is a buffer the transport sends from or receives into. */
static int is_message_buffer(const sdpa_cp_t *cp, const void *p)
{
    return p == cp->ring[0] || p == cp->ring[1] || p == cp->acc[0] || p == cp->acc[1];
}

/* Frees what create made, in reverse order; the list is idle. */
static void release(sdpa_cp_t *cp)
{
    if (cp->be)
        free_primitives(cp);
    /* A request released pending may still touch the message buffers. */
    for (int i = cp->allocation_count - 1; i >= 0; i--)
        if (!cp->ring_in_flight || !is_message_buffer(cp, cp->allocations[i]))
            zeMemFree(cp->ze_context, cp->allocations[i]);
    cp_agree_free(cp);
    if (cp->staged)
        zeEventDestroy(cp->staged);
    if (cp->step_done)
        zeEventDestroy(cp->step_done);
    if (cp->event_pool)
        zeEventPoolDestroy(cp->event_pool);
    if (cp->list)
        zeCommandListDestroy(cp->list);
}

/* Everything that does not talk to the other ranks. */
static sdpa_status_t create_local(sdpa_cp_t *cp, const sdpa_cp_transport_desc_t *desc)
{
    const sdpa_problem_desc_t *p = &cp->problem;
    cp->be = desc->backend;
    cp->ctx = desc->context;
    cp->ze_context = desc->ze_context;
    cp->ze_device = desc->ze_device;
    cp->layout = desc->layout;
    cp->backward = p->prop_kind == SDPA_BACKWARD;
    cp->training = p->prop_kind != SDPA_FORWARD_INFERENCE;
    cp->causal = p->mask_kind != SDPA_MASK_NONE;
    cp->chunks = cp_chunks_per_rank(desc->layout);
    cp->batch = p->q.dims[0];
    cp->q_heads = p->q.dims[1];
    cp->kv_heads = p->k.dims[1];
    cp->local_len = p->q.dims[2];
    cp->chunk_len = cp->local_len / cp->chunks;
    cp->head_size = p->q.dims[3];
    cp->dtype = p->q.dtype;
    cp->elem_bytes = cp->dtype == SDPA_DTYPE_F32 ? 4 : 2;
    cp->block_bytes =
            (size_t)(cp->batch * cp->kv_heads * cp->local_len * cp->head_size) * cp->elem_bytes;

    int used[CP_KV_SOURCES][CP_MASKS];
    int tasks_per_step = plan_tasks(cp, used);
    TRY(create_list_and_events(cp));
    TRY(allocate_buffers(cp, tasks_per_step));
    TRY(create_attention(cp, used));
    TRY(create_merges(cp));
    return SDPA_SUCCESS;
}

sdpa_status_t cp_create(const sdpa_cp_transport_desc_t *desc, void (*release_owner)(void *owner),
                        void *owner, sdpa_cp_t **out)
{
    sdpa_status_t status = check_desc_local(desc, out);
    if (status != SDPA_SUCCESS) {
        if (release_owner)
            release_owner(owner);
        return status; /* nothing to talk to the other ranks with */
    }
    const sdpa_cp_transport_t *t = desc->transport;

    sdpa_cp_t *cp = calloc(1, sizeof(*cp));
    sdpa_status_t local = cp ? check_desc(desc, &cp->problem)
                             : sdpa_fail(SDPA_ERROR_OUT_OF_HOST_MEMORY, "no memory for sdpa_cp_t");
    if (local == SDPA_SUCCESS)
        local = cp_timeout_of(desc->timeout_seconds, &cp->timeout);

    status = cp_agree(t, local);
    if (status == SDPA_SUCCESS) {
        int64_t values[DIGEST_FIELDS];
        digest(desc, &cp->problem, values);
        status = agree_on_problem(t, values);
    }
    if (status == SDPA_SUCCESS) {
        cp->transport = *t;
        cp->transport_release = release_owner;
        cp->transport_owner = owner;
        cp->rank = t->rank;
        cp->ranks = t->ranks;
        cp->next = (t->rank + 1) % t->ranks;
        cp->prev = (t->rank + t->ranks - 1) % t->ranks;
        cp->stats.struct_size = sizeof(cp->stats);
        cp->stats.struct_version = SDPA_CP_STATS_VERSION;
        cp->failed_peer = -1;
        local = cp_agree_alloc(cp);
        if (local == SDPA_SUCCESS)
            local = create_local(cp, desc);
        status = cp_agree(t, local);
        if (status != SDPA_SUCCESS)
            release(cp);
    }
    if (status != SDPA_SUCCESS) {
        if (release_owner)
            release_owner(owner);
        free(cp);
        return status;
    }
    *out = cp;
    return SDPA_SUCCESS;
}

SDPA_CP_EXPORT sdpa_status_t sdpa_cp_create_with_transport(const sdpa_cp_transport_desc_t *desc,
                                                           sdpa_cp_t **out)
{
    return SDPA_ENTRY(cp_create(desc, NULL, NULL, out));
}

SDPA_CP_EXPORT void sdpa_cp_destroy(sdpa_cp_t *cp)
{
    if (cp == NULL)
        return;
    release(cp);
    if (cp->transport_release)
        cp->transport_release(cp->transport_owner);
    free(cp);
}
