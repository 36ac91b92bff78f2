/* philox.c - Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random
 * numbers: as easy as 1, 2, 3", SC'11) and the dropout keep rule. */
#include "philox.h"
#include "kernel_abi.h"

/* One round: two 32x32->64 multiplications, the halves mixed with the other
 * two words and the key. */
static void philox_round(uint32_t c[4], const uint32_t k[2])
{
    uint64_t p0 = (uint64_t)SDPA_PHILOX_M0 * c[0];
    uint64_t p1 = (uint64_t)SDPA_PHILOX_M1 * c[2];
    uint32_t next[4] = {
            (uint32_t)(p1 >> 32) ^ c[1] ^ k[0],
            (uint32_t)p1,
            (uint32_t)(p0 >> 32) ^ c[3] ^ k[1],
            (uint32_t)p0,
    };
    for (int i = 0; i < 4; i++)
        c[i] = next[i];
}

void sdpa_philox4x32_10(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c[4] = {counter[0], counter[1], counter[2], counter[3]};
    uint32_t k[2] = {key[0], key[1]};
    for (int round = 0; round < SDPA_PHILOX_ROUNDS; round++) {
        if (round > 0) { /* the key schedule advances between rounds */
            k[0] += SDPA_PHILOX_W0;
            k[1] += SDPA_PHILOX_W1;
        }
        philox_round(c, k);
    }
    for (int i = 0; i < 4; i++)
        out[i] = c[i];
}

/* The four words of block c = offset + n / 4. */
static void dropout_block(uint64_t seed, uint64_t c, uint32_t out[4])
{
    const uint32_t counter[4] = {(uint32_t)c, (uint32_t)(c >> 32), 0, 0};
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    sdpa_philox4x32_10(counter, key, out);
}

uint32_t sdpa_dropout_word(uint64_t seed, uint64_t offset, uint64_t n)
{
    uint32_t words[4];
    dropout_block(seed, offset + n / 4, words);
    return words[n % 4];
}

int sdpa_dropout_keep(uint32_t word, float p)
{
    /* 24 bits convert to float exactly, so host and kernels agree. */
    return (float)(word >> 8) * 0x1p-24f >= p;
}

void sdpa_dropout_keep_run(uint64_t seed, uint64_t offset, uint64_t n0, int64_t count, float p,
                           uint8_t *keep)
{
    uint32_t words[4];
    uint64_t block = UINT64_MAX;
    for (int64_t i = 0; i < count; i++) {
        uint64_t n = n0 + (uint64_t)i;
        if (n / 4 != block) {
            block = n / 4;
            dropout_block(seed, offset + block, words);
        }
        keep[i] = (uint8_t)sdpa_dropout_keep(words[n % 4], p);
    }
}
