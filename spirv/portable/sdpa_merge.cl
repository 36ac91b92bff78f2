/*
 * sdpa_merge.cl - merging attention states: n partial results (O_s, LSE_s)
 * of the same queries over disjoint key ranges into the result over all of
 * them (sdpa.h, sdpa_merge_desc_t), for merge primitives and as the second
 * step of split-KV decode.
 *
 * One work-group per output row (kernel_abi_merge.h). The states are
 * separate kernel arguments O0..O15, LSE0..LSE15; SDPA_MERGE_EACH_STATE
 * spells the per-state code out once per argument, and a state s at or past
 * MERGE_NUM_STATES (a specialization constant) folds away with its
 * argument, which the host passes as NULL.
 */
#include "sdpa_common.h"
#include "kernel_abi_merge.h"

#define SDPA_MERGE_EACH_STATE(X)                                                                   \
    X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)

/* A state past the merge's count reads as "saw no key". */
#define SDPA_MERGE_LOAD_LSE(s)                                                                     \
    const float lse##s = (s) < SC(MERGE_NUM_STATES) ? LSE##s[lse_off] : -INFINITY;
/* NaN or +inf poisons the row (sdpa.h). */
#define SDPA_MERGE_MAX(s)                                                                          \
    bad = bad || isnan(lse##s) || lse##s == INFINITY;                                              \
    m = fmax(m, lse##s);
#define SDPA_MERGE_WEIGHT(s)                                                                       \
    const float w##s = lse##s == -INFINITY || !usable ? 0.0f : exp(lse##s - m);                    \
    sum += w##s;
/* A state that saw no key adds nothing, whatever its O holds (NaN). */
#define SDPA_MERGE_ACCUMULATE(s)                                                                   \
    if ((s) < SC(MERGE_NUM_STATES) && lse##s != -INFINITY)                                         \
        acc = fma(w##s, sdpa_load(O##s, o_off, SC(MERGE_STATE_DT)), acc);

kernel void sdpa_merge(
#include "sdpa_merge_args.def"
)
{
    const long b = get_group_id(2), h = get_group_id(1), i = get_group_id(0);
    const long lse_off = b * LSE_S0 + h * LSE_S1 + i * LSE_S2;

    SDPA_MERGE_EACH_STATE(SDPA_MERGE_LOAD_LSE)
    /* An attention sink (split-KV decode of a problem with sinks) is one
     * more state, O = 0 and LSE = the head's sink: counted once, here. */
    const float lse_sink = SC(WITH_SINKS) ? SINKS[h] : -INFINITY;
    float m = -INFINITY;
    bool bad = false;
    SDPA_MERGE_EACH_STATE(SDPA_MERGE_MAX)
    bad = bad || isnan(lse_sink) || lse_sink == INFINITY;
    m = fmax(m, lse_sink);
    const bool empty = !bad && m == -INFINITY; /* no state saw a key */
    const bool usable = !bad && !empty;
    float sum = lse_sink == -INFINITY || !usable ? 0.0f : exp(lse_sink - m);
    SDPA_MERGE_EACH_STATE(SDPA_MERGE_WEIGHT)
    const float inv_sum = usable ? 1.0f / sum : 0.0f;
    /* The row of a fully masked forward (sdpa.h), or a poisoned one. */
    const float fixed = bad || !SC(SOFTMAX_INF_AS_ZERO) ? NAN : 0.0f;

    /* Every work-item has read the LSEs before work-item 0 may overwrite
     * them (dst_lse may be a state's LSE). */
    barrier(CLK_GLOBAL_MEM_FENCE);

    const long o_row = b * O_S0 + h * O_S1 + i * O_S2;
    const long dst_row = b * DST_S0 + h * DST_S1 + i * DST_S2;
    for (int d = get_local_id(0); d < D; d += get_local_size(0)) {
        const long o_off = o_row + d * O_S3;
        float acc = 0.0f;
        SDPA_MERGE_EACH_STATE(SDPA_MERGE_ACCUMULATE)
        sdpa_store(DST, dst_row + d * DST_S3, SC(DST_DT), usable ? acc * inv_sum : fixed);
    }
    if (SC(MERGE_WRITE_LSE) && get_local_id(0) == 0)
        DST_LSE[b * DST_LSE_S0 + h * DST_LSE_S1 + i * DST_LSE_S2] = usable ? m + log(sum)
                                                                    : bad  ? NAN
                                                                           : -INFINITY;
}
