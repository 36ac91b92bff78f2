/*
 * sdpa_bwd_scores.h - turning raw scores q.k back into the forward's
 * probabilities and their gradient (the score factor and the causal band
 * are sdpa_scores.h, shared with the forward): the dropout keep
 * decision (Philox4x32-10 of sdpa_philox.h, the layout and rule of
 * sdpa_dropout_desc_t in sdpa.h, regenerated exactly as the forward drew
 * it), and the two fused epilogues of the score tiles:
 *
 *   S block  -> P = exp(s - LSE), s the scaled and masked score, and P = 0
 *               for the whole row when LSE = -inf (a fully masked row:
 *               never exp(-inf - -inf)); P Z and P go to local memory (Z:
 *               the dropout factor);
 *   dP block -> dS = P (Z dP - D_i), to local memory and, WITH_DS, to the
 *               dS output.
 */
#ifndef SDPA_SPIRV_BWD_SCORES_H
#define SDPA_SPIRV_BWD_SCORES_H

#include "kernel_abi_bwd.h"
#include "sdpa_bwd_gemm.h"
#include "sdpa_common.h"
#include "sdpa_fwd_softmax.h"
#include "sdpa_philox.h"
#include "sdpa_scores.h"

/* The cl_intel_subgroups shuffle (OpSubgroupShuffleINTEL, from the
 * SPV_INTEL_subgroups extension the build enables); declared here because
 * the compiler declares it only with -cl-ext=+cl_intel_subgroups. */
uint __attribute__((overloadable)) intel_sub_group_shuffle(uint value, uint lane);

/* The factor a probability whose random word is `word` is multiplied by:
 * 1 / (1 - p) if kept, else 0 (the keep rule of sdpa_philox.h). */
static inline float sdpa_bwd_keep_factor(const private sdpa_dropout_args *d, uint word)
{
    return sdpa_dropout_keep_word(word, d->p) ? d->keep_scale : 0.0f;
}

/*
 * Dropout factors of elements n0 + c, c = 0 .. 3 * SUBGROUP_SIZE - 1 (three
 * vectors, lane l of vector v holding c = v * SUBGROUP_SIZE + l), stored at
 * dst[v * SUBGROUP_SIZE] for v < nvec (dst: this lane's column of vector 0).
 * One Philox4x32-10 block serves four consecutive elements: lane l computes
 * block n0 / 4 + l, and the lanes fetch their words with shuffles, so that
 * one sub-group-wide Philox call covers three vectors (4 * sg - 3 elements
 * from any starting point) instead of one.
 */
static inline __attribute__((always_inline)) void
sdpa_bwd_dropout_factors3(const private sdpa_dropout_args *d, ulong n0, local float *dst, int nvec)
{
    const uint lane = get_sub_group_local_id();
    const ulong block = d->offset + n0 / 4 + lane; /* this lane's Philox counter */
    const uint4 w = sdpa_dropout_block(d->seed, block);
    const uint skew = (uint)(n0 % 4);
    for (int v = 0; v < 3 && v < nvec; v++) {
        const uint c = skew + (uint)v * SUBGROUP_SIZE + lane; /* position from block n0 / 4 */
        const uint src = c / 4;
        const uint w0 = intel_sub_group_shuffle(w.s0, src), w1 = intel_sub_group_shuffle(w.s1, src);
        const uint w2 = intel_sub_group_shuffle(w.s2, src), w3 = intel_sub_group_shuffle(w.s3, src);
        /* Bit tests rather than a switch on c % 4: LLVM turns that into a
         * switch on an i2, which llvm-spirv-15 cannot translate. */
        const uint lo = (c & 1u) ? w1 : w0, hi = (c & 1u) ? w3 : w2;
        dst[v * SUBGROUP_SIZE] = sdpa_bwd_keep_factor(d, (c & 2u) ? hi : lo);
    }
}

/* What every phase of a work-group knows about its problem. */
typedef struct sdpa_bwd_problem {
    long b;            /* batch */
    int h, hq, hkv;    /* query head, query heads, K/V head */
    int sq, sk, d;     /* queries, keys (of the sequence, with VARLEN), head size */
    int dv;            /* V's head size (of O, dO, dV): d unless they differ */
    long q_row0, k_row0; /* VARLEN: the sequence's first packed query and key rows */
    long stat_row0;    /* LSE and D_i index of (b, h, query 0) */
    int ld;            /* floats per head-dim row in local memory: SDPA_BWD_LD(max(d, dv)) */
    int causal_offset; /* query i sees key j <= i + causal_offset */
    int pos_offset;    /* query i sits at key position i + pos_offset (Sk - Sq) */
    int win_left, win_right; /* WITH_WINDOW: the bounds, -1 unbounded */
    float factor;      /* the score multiplier: scale, 1 / scale or 1 */
    float log2_factor; /* factor * log2(e) */
    sdpa_softcap cap;  /* WITH_SOFTCAP, log2 units */
    float slope2;      /* ALiBi slope of (b, h), log2 units */
    const global void *msk;
    long msk_head, ms2, ms3; /* mask offset of (b, h); query and key strides */
    sdpa_dropout_args drop;
    ulong drop_head; /* dropout index of (b, h, query 0, key 0) */
    int drop_sk;     /* dropout row length: Sk (VARLEN: max_seqlen_k, the padded layout) */
} sdpa_bwd_problem;

/*
 * A sub-group's score tile: rows are queries query0.. (block rows qt0..),
 * lanes are keys key0 + vector * SUBGROUP_SIZE + lane (block columns kt0..).
 * p and ds are the block's [br][bc] tiles.
 */
typedef struct sdpa_bwd_scores {
    const private sdpa_bwd_problem *x;
    local float *p, *ds;
    local const float *lse2, *di;
    int bc, kt0, qt0, key0, query0;
    bool check; /* some key of the tile is past the end or outside the causal band or window */
    global void *ds_out; /* WITH_DS in the key-block pass, else NULL */
    long ds_head, dss2, dss3;
} sdpa_bwd_scores;

static inline __attribute__((always_inline)) float
sdpa_bwd_scores_init(const private sdpa_bwd_scores *t, int i, int j)
{
    return 0.0f;
}

/* S block -> P: p gets P Z, ds gets P (read back by the dP epilogue). With
 * dropout, p holds Z on entry. */
static inline __attribute__((always_inline)) void sdpa_bwd_p_apply(const private sdpa_bwd_scores *t,
                                                                   int i, int j, float s)
{
    const private sdpa_bwd_problem *x = t->x;
    const int lane = get_sub_group_local_id();
    const int key = t->key0 + j * SUBGROUP_SIZE + lane;
    const int q = t->query0 + i;
    /* Rows past the last query (a partial block) get P = 0: their mask row
     * is past the mask's end, which may not be mapped. */
    bool valid = q < x->sq;
    const int pos = q + x->pos_offset;
    if (t->check)
        valid = valid && key < x->sk && (!sdpa_is_causal() || key <= q + x->causal_offset) &&
                key >= sdpa_window_first(pos, x->win_left) &&
                key <= sdpa_window_last(pos, x->win_right, key);
    /* P is computed on every lane and kept where valid: without a branch
     * around it the CPU device's vectorizer needs no masked operations (a
     * third of this epilogue's instructions before). Only the mask's load
     * stays behind the test. */
    float th;
    float score = sdpa_softcap_score(s, x->log2_factor, &x->cap, &th);
    if (SC(ALIBI_KIND) != SDPA_ALIBI_KIND_NONE)
        score = fma(-x->slope2, (float)abs(pos - key), score);
    if (SC(MASK_KIND) == SDPA_MASK_KIND_BUFFER && valid) {
        const long row = x->msk_head + (long)q * x->ms2;
        const float add = x->ms3 == 1 ? sdpa_load(x->msk, row + key, SC(MSK_DT))
                                      : sdpa_load(x->msk, row + (long)key * x->ms3, SC(MSK_DT));
        score = fma(add, SDPA_LOG2E, score);
    }
    /* A -inf log-sum-exp (sdpa.h: a fully masked row) is P = 0. The
     * forward's polynomial exp2 (the library's is a call per vector on the
     * CPU device); the clamp keeps it finite whatever LSE the caller gave. */
    const float lse2 = t->lse2[t->qt0 + i];
    const float e = sdpa_fwd_exp2(fmin(score - lse2, 127.0f));
    const float p = valid && lse2 != -INFINITY ? e : 0.0f;
    const int idx = (t->qt0 + i) * t->bc + t->kt0 + j * SUBGROUP_SIZE + lane;
    const float z = SC(WITH_DROPOUT) ? t->p[idx] : 1.0f; /* from sdpa_bwd_dropout_tile */
    /* The dS output with the softcap needs P where dropout dropped it: -P
     * marks those until sdpa_bwd_ds_apply restores P Z = 0. */
    const bool mark = SC(WITH_SOFTCAP) && SC(WITH_DS) && SC(WITH_DROPOUT) && t->ds_out;
    t->p[idx] = mark && z == 0.0f ? -p : p * z;
    /* With the softcap, P times its derivative 1 - th^2 (sdpa_bwd_ds_apply). */
    t->ds[idx] = SC(WITH_SOFTCAP) ? p * (1.0f - th * th) : p;
}

/* dP block -> dS = P (Z dP - D_i) = (P Z) dP - P D_i; 0 wherever P is 0,
 * even when D_i is not finite: D_i = rowsum(dO o O) of a fully masked row
 * is NaN in ACCURATE mode (its O is), and must reach neither dS nor, through
 * it, dQ and dK. */
static inline __attribute__((always_inline)) void
sdpa_bwd_ds_apply(const private sdpa_bwd_scores *t, int i, int j, float dp)
{
    const int lane = get_sub_group_local_id();
    const int idx = (t->qt0 + i) * t->bc + t->kt0 + j * SUBGROUP_SIZE + lane;
    const float pz = t->p[idx], p = t->ds[idx];
    float ds, ds_value;
    if (SC(WITH_SOFTCAP)) {
        /* p is P g (g the softcap's derivative): dS g = P g (Z dP - D_i),
         * with Z = keep_scale or 0 read off P Z (P Z > 0 iff kept, when
         * P != 0). The dS output (sdpa.h: the gradient with respect to the
         * capped score) is P (Z dP - D_i), P from P Z or from the -P mark. */
        const float z = SC(WITH_DROPOUT) ? (pz > 0.0f ? t->x->drop.keep_scale : 0.0f) : 1.0f;
        const float f = fma(z, dp, -t->di[t->qt0 + i]);
        ds = p == 0.0f ? 0.0f : p * f;
        ds_value = ds;
        if (SC(WITH_DS) && t->ds_out) {
            const float p_plain = !SC(WITH_DROPOUT) ? pz : pz > 0.0f ? pz / z : -pz;
            ds_value = p_plain == 0.0f ? 0.0f : p_plain * f;
            if (SC(WITH_DROPOUT))
                t->p[idx] = fmax(pz, 0.0f); /* P Z again, for dV */
        }
    } else {
        ds = p == 0.0f ? 0.0f : fma(pz, dp, -p * t->di[t->qt0 + i]);
        ds_value = ds;
    }
    t->ds[idx] = ds;
    if (SC(WITH_DS) && t->ds_out) {
        const int key = t->key0 + j * SUBGROUP_SIZE + lane;
        if (key < t->x->sk) {
            const long row = t->ds_head + (long)(t->query0 + i) * t->dss2;
            if (t->dss3 == 1)
                sdpa_store(t->ds_out, row + key, SC(DS_DT), ds_value);
            else
                sdpa_store(t->ds_out, row + (long)key * t->dss3, SC(DS_DT), ds_value);
        }
    }
}

SDPA_BWD_DEFINE_TILE(p, sdpa_bwd_scores, sdpa_bwd_scores_init, sdpa_bwd_p_apply)

/* Dropout factors Z of the tile's `rows` rows and `nvec` vectors, into
 * t->p (where the P epilogue picks them up). */
static inline __attribute__((always_inline)) void
sdpa_bwd_dropout_tile(const private sdpa_bwd_scores *t, int rows, int nvec)
{
    const private sdpa_bwd_problem *x = t->x;
    for (int i = 0; i < rows; i++) {
        const ulong n_row = x->drop_head + (ulong)(t->query0 + i) * (ulong)x->drop_sk +
                            (ulong)t->key0;
        local float *row = t->p + (t->qt0 + i) * t->bc + t->kt0 + get_sub_group_local_id();
        for (int j = 0; j < nvec; j += 3)
            sdpa_bwd_dropout_factors3(&x->drop, n_row + (ulong)j * SUBGROUP_SIZE,
                                      row + j * SUBGROUP_SIZE, nvec - j);
    }
}
SDPA_BWD_DEFINE_TILE(ds, sdpa_bwd_scores, sdpa_bwd_scores_init, sdpa_bwd_ds_apply)

#endif /* SDPA_SPIRV_BWD_SCORES_H */
