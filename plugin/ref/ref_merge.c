/* ref_merge.c - merge primitives of the ref backend: attention states
 * (O_s, LSE_s) combined in double on the host (sdpa.h, sdpa_merge_desc_t). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend_api.h"
#include "error.h"
#include "merge_check.h"
#include "ref.h"

/* Rows (b, h, i) per work item. */
#define REF_MERGE_ROWS 64

typedef struct merge_job {
    const sdpa_merge_desc_t *m;
    const sdpa_merge_args_t *a;
    int64_t rows; /* B * H * S */
} merge_job_t;

/* Offset of row (b, h, i) of t, whose dims[1], dims[2] are H and S. */
static int64_t row_offset(const sdpa_tensor_desc_t *t, int64_t row)
{
    const int64_t i = row % t->dims[2], bh = row / t->dims[2];
    return ref_offset(t, bh / t->dims[1], bh % t->dims[1], i, 0);
}

/* One row: every input element is read before the output element at the
 * same place is written, so dst may be one of the states (in place). */
static void merge_row(const merge_job_t *job, int64_t row)
{
    const sdpa_merge_desc_t *m = job->m;
    const sdpa_merge_args_t *a = job->a;
    const uint32_t n = m->num_states;
    double lse[SDPA_MERGE_MAX_STATES], weight[SDPA_MERGE_MAX_STATES];
    const int64_t lse_off = row_offset(&m->states_lse, row);
    double max = -INFINITY;
    int bad = 0;
    for (uint32_t s = 0; s < n; s++) {
        lse[s] = sdpa_element_load(a->states_lse[s], lse_off, SDPA_DTYPE_F32);
        bad |= isnan(lse[s]) || lse[s] == INFINITY;
        if (lse[s] > max)
            max = lse[s];
    }
    /* No state saw a key: the row of a fully masked forward (sdpa.h). */
    const int empty = !bad && max == -INFINITY;
    double sum = 0.0;
    for (uint32_t s = 0; s < n; s++) {
        weight[s] = bad || empty || lse[s] == -INFINITY ? 0.0 : exp(lse[s] - max);
        sum += weight[s];
    }
    double empty_value = m->softmax_kind == SDPA_SOFTMAX_INF_AS_ZERO ? 0.0 : NAN;

    const int64_t o_off = row_offset(&m->states, row), d_off = row_offset(&m->dst, row);
    for (int64_t d = 0; d < m->dst.dims[3]; d++) {
        double value;
        if (bad) {
            value = NAN;
        } else if (empty) {
            value = empty_value;
        } else {
            double acc = 0.0;
            for (uint32_t s = 0; s < n; s++)
                if (weight[s] != 0.0)
                    acc += weight[s] * sdpa_element_load(a->states[s],
                                                         o_off + d * m->states.strides[3],
                                                         m->states.dtype);
            value = acc / sum;
        }
        sdpa_element_store(a->dst, d_off + d * m->dst.strides[3], m->dst.dtype, value);
    }
    if (m->dst_lse.dtype != SDPA_DTYPE_UNDEF) {
        double out = bad ? NAN : empty ? -INFINITY : max + log(sum);
        sdpa_element_store(a->dst_lse, row_offset(&m->dst_lse, row), SDPA_DTYPE_F32, out);
    }
}

static void merge_item(void *context, int64_t item, int worker)
{
    (void)worker;
    const merge_job_t *job = context;
    const int64_t end = (item + 1) * REF_MERGE_ROWS;
    for (int64_t row = item * REF_MERGE_ROWS; row < end && row < job->rows; row++)
        merge_row(job, row);
}

sdpa_status_t ref_merge_create(sdpa_context_t *ctx, const sdpa_merge_desc_t *desc,
                               sdpa_primitive_t **out)
{
    SDPA_TRY(sdpa_create_begin(ctx, out));
    sdpa_primitive_t made = {.is_merge = 1};
    SDPA_TRY(sdpa_merge_check(desc, &made.merge));
    return ref_primitive_add(ctx, &made, out);
}

/* The pointers a merge uses, for the device-memory check. */
static int merge_pointers(const sdpa_merge_desc_t *m, const sdpa_merge_args_t *a,
                          ref_pointer_t *list)
{
    static const char *const state_names[SDPA_MERGE_MAX_STATES] = {
            "states[0]",  "states[1]",  "states[2]",  "states[3]", "states[4]",  "states[5]",
            "states[6]",  "states[7]",  "states[8]",  "states[9]", "states[10]", "states[11]",
            "states[12]", "states[13]", "states[14]", "states[15]"};
    static const char *const lse_names[SDPA_MERGE_MAX_STATES] = {
            "states_lse[0]",  "states_lse[1]",  "states_lse[2]",  "states_lse[3]",
            "states_lse[4]",  "states_lse[5]",  "states_lse[6]",  "states_lse[7]",
            "states_lse[8]",  "states_lse[9]",  "states_lse[10]", "states_lse[11]",
            "states_lse[12]", "states_lse[13]", "states_lse[14]", "states_lse[15]"};
    int count = 0;
    for (uint32_t s = 0; s < m->num_states; s++) {
        list[count++] = (ref_pointer_t){state_names[s], a->states[s]};
        list[count++] = (ref_pointer_t){lse_names[s], a->states_lse[s]};
    }
    list[count++] = (ref_pointer_t){"dst", a->dst};
    if (m->dst_lse.dtype != SDPA_DTYPE_UNDEF)
        list[count++] = (ref_pointer_t){"dst_lse", a->dst_lse};
    return count;
}

sdpa_status_t ref_merge_execute(sdpa_primitive_t *prim, const sdpa_merge_args_t *args)
{
    SDPA_TRY(sdpa_execute_begin(prim, prim ? prim->ctx : NULL, prim && prim->is_merge, 1));
    sdpa_merge_args_t checked;
    sdpa_status_t status = sdpa_merge_args_check(&prim->merge, args, &checked);
    if (status != SDPA_SUCCESS)
        return status;
    ref_pointer_t list[2 * SDPA_MERGE_MAX_STATES + 2];
    const int count = merge_pointers(&prim->merge, &checked, list);
    const ref_events_t events = {checked.signal_event, checked.num_wait_events,
                                 checked.wait_events};
    if ((status = ref_check_pointers(prim->ctx, list, count, &events)) != SDPA_SUCCESS ||
        (status = ref_wait_events(prim->ctx, &events)) != SDPA_SUCCESS)
        return status;

    const sdpa_tensor_desc_t *t = &prim->merge.dst;
    merge_job_t job = {&prim->merge, &checked, t->dims[0] * t->dims[1] * t->dims[2]};
    const int64_t items = (job.rows + REF_MERGE_ROWS - 1) / REF_MERGE_ROWS;
    ref_parallel_run(ref_worker_count(items), items, merge_item, &job);
    return ref_signal_event(prim->ctx, &events);
}
