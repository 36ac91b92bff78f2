/*
 * fnv1a.h - FNV-1a, 64-bit: the one implementation of the hash behind the
 * specialization values' hash, the module cache's in-memory keys and the
 * CPU driver's native-binary checksum (doc/cpu-driver.md). Not for security:
 * it finds truncation, stray bytes and unequal keys.
 */
#ifndef SDPA_ZEUTIL_FNV1A_H
#define SDPA_ZEUTIL_FNV1A_H

#include <stddef.h>
#include <stdint.h>

/* The standard offset basis and prime of 64-bit FNV. */
#define SDPA_FNV1A64_OFFSET 0xcbf29ce484222325ull
#define SDPA_FNV1A64_PRIME 0x100000001b3ull

/* Continues hash over size bytes at data; start with SDPA_FNV1A64_OFFSET. */
static inline uint64_t sdpa_fnv1a64(uint64_t hash, const void *data, size_t size)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < size; i++)
        hash = (hash ^ p[i]) * SDPA_FNV1A64_PRIME;
    return hash;
}

#endif /* SDPA_ZEUTIL_FNV1A_H */
