/*
 * sdpa_scores.h - what the forward and backward kernels agree on about a
 * score s_ij = factor * q_i.k_j + mask_ij: the factor (host, device or no
 * scale, possibly inverted) and the causal band. One definition, so that
 * backward recomputes exactly the probabilities forward produced.
 */
#ifndef SDPA_SPIRV_SCORES_H
#define SDPA_SPIRV_SCORES_H

#include "sdpa_common.h"
#include "sdpa_uniform.h"
#include "sdpa_view.h"

#define SDPA_LOG2E 1.44269504088896340736f
#define SDPA_LN2 0.693147180559945309417f

/* unit times the score factor: scale, 1 / scale (INVERT_SCALE) or 1 (no
 * scale). unit is 1 for the factor itself (which also multiplies dQ and dK)
 * or log2(e) for scores in log2 units; a device scale divides unit rather
 * than multiplying by its inverse. */
static inline float sdpa_score_factor(float unit, const global void *scale_ptr, float scale,
                                      float inv_scale)
{
    if (!SC(WITH_ATTN_SCALE))
        return unit;
    if (SC(WITH_HOST_SCALE))
        return unit * (SC(INVERT_SCALE) ? inv_scale : scale);
    const float s = sdpa_load(scale_ptr, 0, SC(SCALE_DT));
    return SC(INVERT_SCALE) ? unit / s : unit * s;
}

static inline bool sdpa_is_causal(void)
{
    return SC(MASK_KIND) == SDPA_MASK_KIND_TOP_LEFT || SC(MASK_KIND) == SDPA_MASK_KIND_BOTTOM_RIGHT;
}

/* Query i sees key j iff j <= i + offset (causal masks only). */
static inline int sdpa_causal_offset(int sk, int sq)
{
    return SC(MASK_KIND) == SDPA_MASK_KIND_BOTTOM_RIGHT ? sk - sq : 0;
}

/* The window's first key for a query at position pos: pos - left, or 0
 * without a left bound (left = -1, or no window). The host passes -1 for a
 * bound that masks nothing (left >= Sk, right >= Sq), which keeps pos - left
 * and pos + right within int. */
static inline int sdpa_window_first(int pos, int left)
{
    return SC(WITH_WINDOW) && left >= 0 ? pos - left : 0;
}

/* The last key a query at position pos sees: last, or pos + right if less. */
static inline int sdpa_window_last(int pos, int right, int last)
{
    return SC(WITH_WINDOW) && right >= 0 ? sdpa_imin(last, pos + right) : last;
}

/* The keys a work-group visits, [begin, end), and where its queries sit
 * among them; each kernel narrows [begin, end) to the band its rows' causal
 * mask and window leave (sdpa_fwd_keys_of, sdpa_decode_keys_of). */
typedef struct sdpa_keys {
    int begin, end;
    int causal_offset;
    int pos_offset; /* query i sits at key position i + Sk - Sq */
    int win_left, win_right;
} sdpa_keys;

/* The keys [begin, end) of sk, for sq queries under the window (win_left,
 * win_right). */
static inline __attribute__((always_inline)) sdpa_keys
sdpa_keys_span(int begin, int end, int sk, int sq, int win_left, int win_right)
{
    sdpa_keys k;
    k.begin = begin;
    k.end = end;
    k.causal_offset = sdpa_causal_offset(sk, sq);
    k.pos_offset = sk - sq;
    k.win_left = win_left;
    k.win_right = win_right;
    return k;
}

/* The ALiBi slope of query head h of batch b among hq heads, times unit
 * (log2(e) for scores in log2 units); 0 without ALiBi. */
static inline float sdpa_alibi_slope(const global float *slopes, long b, int hq, int h, float unit)
{
    if (SC(ALIBI_KIND) == SDPA_ALIBI_KIND_NONE)
        return 0.0f;
    const long e = SC(ALIBI_KIND) == SDPA_ALIBI_KIND_PER_BATCH_HEAD ? b * hq + h : h;
    return slopes[e] * unit;
}

/* The softcap's constants for scores in units of unit (1, or log2(e) for
 * log2 units) whose factor times unit is unit_factor: the score is
 * unit * c tanh(qk * in), in = factor / c. Any finite c > 0 is served:
 * c times unit is never formed (above FLT_MAX / log2(e) it is inf, and
 * inf x tanh(0) NaN), and in stays finite (factor / c overflows for a
 * denormal c, or one the device flushes to 0, and qk = 0 times inf is NaN). */
typedef struct sdpa_softcap {
    float in, c, unit;
} sdpa_softcap;

static inline sdpa_softcap sdpa_softcap_of(float c, float unit_factor, float unit)
{
    sdpa_softcap s;
    /* fmin and fmax return the number where the quotient is NaN (0 / 0) */
    s.in = SC(WITH_SOFTCAP) ? fmax(fmin(unit_factor / unit / c, FLT_MAX), -FLT_MAX) : 0.0f;
    s.c = c;
    s.unit = unit;
    return s;
}

/* Below this |qk * in|, tanh(x) = x in f32 (x - tanh(x) < x^3 / 3). */
#define SDPA_SOFTCAP_LINEAR 0x1p-12f

/* The score of raw product qk (q.k, unscaled): qk * unit_factor, or with
 * WITH_SOFTCAP unit * c tanh(qk * in). *th gets the tanh (the softcap's
 * derivative is 1 - th^2), 0 without softcap. Where tanh is linear the
 * score is the uncapped one, exactly what c tanh(qk * in) tends to when
 * qk * in underflows (a c near FLT_MAX). */
static inline float sdpa_softcap_score(float qk, float unit_factor,
                                       const private sdpa_softcap *cap, private float *th)
{
    if (!SC(WITH_SOFTCAP)) {
        *th = 0.0f;
        return qk * unit_factor;
    }
    const float x = qk * cap->in;
    *th = tanh(x);
    return fabs(x) < SDPA_SOFTCAP_LINEAR ? qk * unit_factor : cap->c * *th * cap->unit;
}

/* What turns q.k into a forward score in log2 units: the scale, the
 * softcap, the ALiBi slopes (ALIBI_KIND) and the mask buffer (MASK_KIND
 * BUFFER), built once in a kernel's prologue. */
typedef struct sdpa_score_mods {
    float log2_scale;
    sdpa_softcap cap;
    const global float *alibi_slopes;
    sdpa_view msk;
} sdpa_score_mods;

static inline __attribute__((always_inline)) sdpa_score_mods
sdpa_score_mods_of(const global void *scale_ptr, float scale, float inv_scale, float softcap,
                   const global float *alibi_slopes, sdpa_view msk)
{
    sdpa_score_mods m;
    m.log2_scale = sdpa_score_factor(SDPA_LOG2E, scale_ptr, scale, inv_scale);
    m.cap = sdpa_softcap_of(softcap, m.log2_scale, SDPA_LOG2E);
    m.alibi_slopes = alibi_slopes;
    m.msk = msk;
    return m;
}

/* The masks of one query row: keys outside [first, last] are -inf; pos is
 * the query's key position, slope2 its head's ALiBi slope in log2 units. */
typedef struct sdpa_row_mask {
    int first, last, pos;
    float slope2;
} sdpa_row_mask;

#endif /* SDPA_SPIRV_SCORES_H */
