/*
 * sdpa_philox.h - Philox4x32-10 and the dropout keep rule in OpenCL C, the
 * device twin of src/validate/philox.c. The counter layout and the keep rule are
 * part of the ABI (sdpa_dropout_desc_t in include/sdpa.h); host and kernels
 * must agree bit for bit (the tests compare the keep masks).
 */
#ifndef SDPA_SPIRV_PHILOX_H
#define SDPA_SPIRV_PHILOX_H

#include "sdpa_common.h"

/* The round keys of Philox4x32-10 for one key: k[2 r] and k[2 r + 1] for
 * round r, the key advanced r times by the Weyl constants. Computed once
 * where one key serves many blocks (the dropout seed of a work-group),
 * they save the blocks two adds a round. */
typedef struct sdpa_philox_keys {
    uint k[2 * SDPA_PHILOX_ROUNDS];
} sdpa_philox_keys;

static inline sdpa_philox_keys sdpa_philox_keys_of(uint2 k)
{
    sdpa_philox_keys rk;
#pragma unroll
    for (int round = 0; round < SDPA_PHILOX_ROUNDS; round++) {
        rk.k[2 * round] = k.x;
        rk.k[2 * round + 1] = k.y;
        k.x += SDPA_PHILOX_W0;
        k.y += SDPA_PHILOX_W1;
    }
    return rk;
}

/* Philox4x32-10(counter, key) with the key's round keys rk: ten rounds of
 * two 32x32->64 products. Fully unrolled: left a loop (with the key
 * advanced in it), clang-15 -O2 peeled its first round and llvm-spirv-15
 * then emitted blocks before their dominators (spirv-val rejected it). */
static inline uint4 sdpa_philox4x32_10_keyed(uint4 c, const private sdpa_philox_keys *rk)
{
#pragma unroll
    for (int round = 0; round < SDPA_PHILOX_ROUNDS; round++) {
        const uint lo0 = SDPA_PHILOX_M0 * c.x, hi0 = mul_hi(SDPA_PHILOX_M0, c.x);
        const uint lo1 = SDPA_PHILOX_M1 * c.z, hi1 = mul_hi(SDPA_PHILOX_M1, c.z);
        c = (uint4)(hi1 ^ c.y ^ rk->k[2 * round], lo1, hi0 ^ c.w ^ rk->k[2 * round + 1], lo0);
    }
    return c;
}

/* Philox4x32-10(counter, key). */
static inline uint4 sdpa_philox4x32_10(uint4 c, uint2 k)
{
    const sdpa_philox_keys rk = sdpa_philox_keys_of(k);
    return sdpa_philox4x32_10_keyed(c, &rk);
}

/* The round keys of the dropout key {lo32(seed), hi32(seed)}. */
static inline sdpa_philox_keys sdpa_dropout_keys(ulong seed)
{
    return sdpa_philox_keys_of((uint2)((uint)seed, (uint)(seed >> 32)));
}

/* The four words of block c with the seed's round keys rk: Philox4x32-10
 * of counter {lo32(c), hi32(c), 0, 0}. Element n uses word n % 4 of block
 * offset + n / 4. */
static inline uint4 sdpa_dropout_block_keyed(const private sdpa_philox_keys *rk, ulong c)
{
    return sdpa_philox4x32_10_keyed((uint4)((uint)c, (uint)(c >> 32), 0u, 0u), rk);
}

/* sdpa_dropout_block_keyed with key {lo32(seed), hi32(seed)}. */
static inline uint4 sdpa_dropout_block(ulong seed, ulong c)
{
    const sdpa_philox_keys rk = sdpa_dropout_keys(seed);
    return sdpa_dropout_block_keyed(&rk, c);
}

/* Word i % 4 of w. Scalar selects on the bits of i: a chain of compares on
 * i % 4 becomes a switch on an i2, which llvm-spirv rejects, and SPIR-V 1.2
 * has no vector select on a scalar condition. */
static inline uint sdpa_dropout_pick(uint4 w, uint i)
{
    const uint lo = (i & 1) ? w.y : w.x;
    const uint hi = (i & 1) ? w.w : w.z;
    return (i & 2) ? hi : lo;
}

/* The random word of element n (linear index into [B, Hq, Sq, Sk]). */
static inline uint sdpa_dropout_word(ulong seed, ulong offset, ulong n)
{
    return sdpa_dropout_pick(sdpa_dropout_block(seed, offset + n / 4), (uint)n);
}

/* Whether an element whose random word is word survives dropout with
 * probability p: the top 24 bits of the word, as a float in [0, 1) (exact),
 * compared with p. */
static inline bool sdpa_dropout_keep_word(uint word, float p)
{
    return (float)(word >> 8) * 0x1p-24f >= p;
}

/* sdpa_dropout_keep_word on the word's integer bits, for any p but NaN:
 * (float)(word >> 8) * 2^-24 >= p, both sides exact, is (word >> 8) >=
 * ceil(p 2^24). The threshold once per probability (0 for p <= 0: all
 * kept; 2^24 or more for p >= 1: none), then one compare a word. */
static inline uint sdpa_dropout_keep_threshold(float p)
{
    return convert_uint_sat(ceil(p * 0x1p24f));
}

static inline bool sdpa_dropout_kept(uint word, uint threshold)
{
    return (word >> 8) >= threshold;
}

/* Whether element n survives dropout with probability p. */
static inline bool sdpa_dropout_keep(ulong seed, ulong offset, ulong n, float p)
{
    return sdpa_dropout_keep_word(sdpa_dropout_word(seed, offset, n), p);
}

/* The dropout scalars of one execution (kernel_abi.h), read once. */
typedef struct sdpa_dropout_args {
    ulong seed, offset;
    float p;
    float keep_scale; /* 1 / (1 - p), the factor of a kept probability */
} sdpa_dropout_args;

/* Reads the scalars from the kernel arguments (DROPOUT_HOST_SCALARS) or
 * from device memory (every work-item reads the same values). The offset is
 * 0 unless DROPOUT_OFFSET; without WITH_DROPOUT, p = 0 and keep_scale = 1. */
static inline __attribute__((always_inline)) sdpa_dropout_args
sdpa_dropout_args_read(long seed, long offset, float p, const global long *seed_ptr,
                       const global long *offset_ptr, const global float *p_ptr)
{
    sdpa_dropout_args d = {0, 0, 0.0f, 1.0f};
    if (!SC(WITH_DROPOUT))
        return d;
    if (SC(DROPOUT_HOST_SCALARS)) {
        d.seed = (ulong)seed;
        d.offset = SC(DROPOUT_OFFSET) ? (ulong)offset : 0;
        d.p = p;
    } else {
        d.seed = (ulong)*seed_ptr;
        d.offset = SC(DROPOUT_OFFSET) ? (ulong)*offset_ptr : 0;
        d.p = *p_ptr;
    }
    d.keep_scale = 1.0f / (1.0f - d.p);
    return d;
}

#endif /* SDPA_SPIRV_PHILOX_H */
