/*
 * sdpa_fwd_softmax.h - scores to probabilities: the scale (sdpa_scores.h)
 * folded with log2(e) so that the softmax can use exp2, the masks (additive buffer, causal top-left / bottom-right, keys past
 * the end), and the online-softmax update of the running maximum.
 */
#ifndef SDPA_SPIRV_FWD_SOFTMAX_H
#define SDPA_SPIRV_FWD_SOFTMAX_H

#include "sdpa_fwd_quant.h"
#include "sdpa_scores.h"

/*
 * 2^x for the softmax: x = score - max <= 0, or -inf. Inline and branch
 * free: x = n + f with n an integer and |f| <= 1/2, 2^f from its Taylor
 * polynomial of degree 7 (truncation error 5e-9, so about one f32 ulp after
 * rounding), 2^n put straight into the exponent bits. Results below 2^-126
 * (where a probability no longer matters next to the row maximum's 1)
 * flush to 0, and -inf gives exactly 0. A NaN score is not propagated (it
 * becomes 0, as does +inf - +inf). On the CPU device this is several times
 * cheaper than the library exp2 (a call per vector, 13% of the forward
 * time); a GPU has a native exp2, which -DSDPA_FWD_LIBRARY_EXP2 selects.
 */
static inline float sdpa_fwd_exp2(float x)
{
#ifdef SDPA_FWD_LIBRARY_EXP2
    return exp2(x);
#else
    x = fmax(x, -127.0f);
    float n = rint(x);
    float f = x - n;
    float p = 1.5252733804059840e-5f;
    p = fma(p, f, 1.5403530393381609e-4f);
    p = fma(p, f, 1.3333558146428443e-3f);
    p = fma(p, f, 9.6181291076284772e-3f);
    p = fma(p, f, 5.5504108664821580e-2f);
    p = fma(p, f, 2.4022650695910071e-1f);
    p = fma(p, f, 6.9314718055994531e-1f);
    p = fma(p, f, 1.0f);
    /* n in [-127, 0]: n = -127 gives exponent bits 0, i.e. a factor 0 */
    return p * as_float(((int)n + 127) << 23);
#endif
}

/* Running softmax state of one query: the maximum score seen so far (log2
 * units) and the sum of exp2(score - max) over the keys seen so far. */
typedef struct sdpa_fwd_softmax_state {
    float max;
    float sum;
} sdpa_fwd_softmax_state;

static inline void sdpa_fwd_softmax_init(private sdpa_fwd_softmax_state *st)
{
    st->max = -INFINITY;
    st->sum = 0.0f;
}

/*
 * The state a row of query head h starts from: nothing seen, or with an
 * attention sink (with_sink: WITH_SINKS and not a split-KV part, whose
 * merge adds the sink) the sink already folded in as a key of score
 * sink_h that takes no value: max = sink_h (log2 units) and sum =
 * exp2(0) = 1 in the one copy that counts it (count_sum; a row's state
 * split across sub-groups counts it once). A sink of -inf is none; +inf
 * or NaN makes the row NaN (sdpa.h).
 */
static inline sdpa_fwd_softmax_state sdpa_fwd_softmax_start(const global float *sinks, int h,
                                                            bool with_sink, bool count_sum)
{
    sdpa_fwd_softmax_state st = {-INFINITY, 0.0f};
    if (SC(WITH_SINKS) && with_sink) {
        const float sink = sinks[h];
        st.max = sink * SDPA_LOG2E;
        st.sum = isnan(sink) || sink == INFINITY ? NAN
                 : sink == -INFINITY || !count_sum ? 0.0f
                                                   : 1.0f;
    }
    return st;
}

/*
 * Folds a tile's maximum (log2 units) into the running maximum and returns
 * alpha = exp2(max_old - max_new), the factor that rescales the running sum
 * and O (the caller updates the sum). *shift receives the value to subtract
 * from this tile's scores: max_new, or 0 while every score seen so far is
 * -inf (a row fully masked so far), so that exp2(-inf - shift) gives 0
 * instead of NaN.
 */
static inline float sdpa_fwd_update_max(private sdpa_fwd_softmax_state *st, float tile_max,
                                        private float *shift)
{
    float m_new = fmax(st->max, tile_max);
    float sh = (m_new == -INFINITY) ? 0.0f : m_new;
    float alpha = sdpa_fwd_exp2(st->max - sh);
    st->max = m_new;
    *shift = sh;
    return alpha;
}

/* Log-sum-exp in natural-log units from the running max (log2 units) and
 * sum. A row without any visible key gives -inf in both softmax modes
 * (sdpa.h: log of an empty sum), which backward reads as "P = 0 for the
 * whole row"; only O differs between the modes (sdpa_fwd_inv_sum). */
static inline float sdpa_fwd_lse(float m, float l)
{
    if (l == 0.0f)
        return -INFINITY;
    return (m + log2(l)) * SDPA_LN2;
}

/* 1 / l, the factor that normalizes a row of O; for a row without any
 * visible key 0 (SOFTMAX_INF_AS_ZERO) or NaN (0 / 0, as naive softmax). */
static inline float sdpa_fwd_inv_sum(float l)
{
    if (l == 0.0f)
        return SC(SOFTMAX_INF_AS_ZERO) ? 0.0f : NAN;
    return 1.0f / l;
}

#endif /* SDPA_SPIRV_FWD_SOFTMAX_H */
