/*
 * philox.h - Philox4x32-10 and the dropout keep rule on the host.
 *
 * The counter layout and the keep rule are part of the ABI, fixed at
 * sdpa_dropout_desc_t in include/sdpa.h (the kernels implement the same
 * formulas); the host copy serves the reference backend and the tests.
 */
#ifndef SDPA_CORE_PHILOX_H
#define SDPA_CORE_PHILOX_H

#include <stdint.h>

/* One Philox4x32 block with 10 rounds (Salmon et al., SC'11): out =
 * Philox4x32-10(counter, key). */
void sdpa_philox4x32_10(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4]);

/* The random word of element n (the linear index into [B, Hq, Sq, Sk]) for a
 * dropout seed and offset: word n % 4 of Philox4x32-10 with counter
 * {lo32(c), hi32(c), 0, 0}, c = offset + n / 4, and key {lo32(seed),
 * hi32(seed)}. */
uint32_t sdpa_dropout_word(uint64_t seed, uint64_t offset, uint64_t n);

/* 1 if an element whose random word is word survives dropout with
 * probability p: (word >> 8) * 2^-24 >= p. */
int sdpa_dropout_keep(uint32_t word, float p);

/* Keep flags (1 kept, 0 dropped) of count consecutive elements starting at
 * linear index n0, computing each Philox block once. keep holds count bytes. */
void sdpa_dropout_keep_run(uint64_t seed, uint64_t offset, uint64_t n0, int64_t count, float p,
                           uint8_t *keep);

#endif /* SDPA_CORE_PHILOX_H */
