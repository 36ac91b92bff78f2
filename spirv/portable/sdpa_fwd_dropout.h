/*
 * sdpa_fwd_dropout.h - dropout of the forward's probabilities: the Philox
 * element number of a score, dropout of a run of consecutive keys of one
 * query (in local memory for the portable kernel, in registers for the fast
 * path, which applies sdpa_fwd_dropout_keep_bits to its register tile),
 * and the keep mask of the keys a causal work-group never visits.
 */
#ifndef SDPA_SPIRV_FWD_DROPOUT_H
#define SDPA_SPIRV_FWD_DROPOUT_H

#include "sdpa_fwd_rows.h"
#include "sdpa_philox.h"

/* Linear index of element (b, head, query, key) of [B, Hq, Sq, Sk] for tile
 * row r: the Philox element number and the keep mask offset. */
static inline ulong sdpa_fwd_dropout_index(const private sdpa_fwd_rows *w, int r, int sq, int sk,
                                           int key)
{
    const ulong row = ((ulong)w->b * (ulong)w->hq + (ulong)sdpa_fwd_row_head(w, r)) * (ulong)sq +
                      (ulong)sdpa_fwd_row_query(w, r);
    return row * (ulong)sk + (ulong)key;
}

/*
 * The keep decisions of elements n0 .. n0 + count - 1 (count <= 32, keys
 * key0 .. key0 + count - 1 of one row): bit i is set iff element n0 + i is
 * kept. With DROPOUT_OUTPUT_MASK the keep byte of every element of a valid
 * row before key_end is stored too, whether the key is masked or not, as the
 * reference does.
 *
 * A Philox block gives the words of four consecutive elements: the run
 * starts at word n0 % 4 of block n0 / 4, so it takes count / 4 + 1 blocks
 * at most, one per iteration. The loop stays a loop: on a GPU, unrolled
 * Philox blocks are computed side by side and fill the register file.
 */
static inline uint sdpa_fwd_dropout_keep_bits(const private sdpa_dropout_args *dr, ulong n0,
                                              int count, int key0, int key_end, bool row_valid,
                                              global uchar *keep_mask)
{
    const ulong block0 = n0 / 4;
    const int skip = (int)(n0 % 4);
    const int blocks = (skip + count + 3) / 4;
    uint bits = 0;
    for (int g = 0; g < blocks; g++) {
        const uint4 words = sdpa_dropout_block(dr->seed, dr->offset + block0 + (ulong)g);
        /* Unrolled: an inner loop's latch may be laid out before its
         * dominator, which llvm-spirv-15 emits as invalid SPIR-V. */
#pragma unroll
        for (int q = 0; q < 4; q++) {
            const int i = 4 * g + q - skip; /* element of the run */
            if (i >= 0 && i < count) {
                const bool keep = sdpa_dropout_keep_word(sdpa_dropout_pick(words, (uint)q), dr->p);
                bits |= (uint)keep << i;
                if (SC(DROPOUT_OUTPUT_MASK) && row_valid && key0 + i < key_end)
                    keep_mask[n0 + (ulong)i] = keep ? 1 : 0;
            }
        }
    }
    return bits;
}

/*
 * Dropout of one column of P in local memory, in place: s[i * s_ld] is key
 * key0 + i, element n0 + i (i < rows_s). Dropped probabilities become 0;
 * kept ones stay unscaled (the caller folds 1 / (1 - p) into 1 / sum). The
 * keep bytes as sdpa_fwd_dropout_keep_bits.
 */
static inline void sdpa_fwd_dropout_scores(local float *s, int s_ld, int rows_s,
                                           const private sdpa_dropout_args *dr, ulong n0, int key0,
                                           int key_end, bool row_valid, global uchar *keep_mask)
{
    for (int i0 = 0; i0 < rows_s; i0 += 32) {
        const int n = rows_s - i0 < 32 ? rows_s - i0 : 32;
        const uint bits = sdpa_fwd_dropout_keep_bits(dr, n0 + (ulong)i0, n, key0 + i0, key_end,
                                                     row_valid, keep_mask);
        for (int i = 0; i < n; i++)
            s[(i0 + i) * s_ld] = (bits >> i) & 1 ? s[(i0 + i) * s_ld] : 0.0f;
    }
}

/*
 * The keep mask of keys [k_end, keys) of every row of w: a causal
 * work-group's key loop stops at k_end, and the mask output covers every
 * element of the sequence's `keys` keys (not the padding up to sk, the
 * mask's row length, with VARLEN). Spread
 * over the work-group's `threads` work-items (this one is `tid`), a Philox
 * block (four elements) per work-item, consecutive blocks in consecutive
 * lanes.
 */
static inline void sdpa_fwd_dropout_mask_tail(const private sdpa_fwd_rows *w, int sq, int sk,
                                              int keys, int k_end,
                                              const private sdpa_dropout_args *drop,
                                              global uchar *dropout_mask, int tid, int threads)
{
    for (int r = 0; r < w->rows; r++) {
        /* elements first .. end - 1 of the mask */
        const ulong first = sdpa_fwd_dropout_index(w, r, sq, sk, k_end);
        const ulong end = first + (ulong)(keys - k_end);
        for (ulong blk = first / 4 + (ulong)tid; blk * 4 < end; blk += (ulong)threads) {
            const uint4 words = sdpa_dropout_block(drop->seed, drop->offset + blk);
#pragma unroll
            for (uint q = 0; q < 4; q++) {
                const ulong n = blk * 4 + q;
                if (n >= first && n < end)
                    dropout_mask[n] =
                            sdpa_dropout_keep_word(sdpa_dropout_pick(words, q), drop->p) ? 1 : 0;
            }
        }
    }
}

#endif /* SDPA_SPIRV_FWD_DROPOUT_H */
