/*
 * sha256.h - SHA-256 (FIPS 180-4), for the persistent module cache: the
 * names of its entries (a digest of everything that identifies a module)
 * and the checksum that keeps a damaged entry from being loaded.
 */
#ifndef SDPA_ZE_SHA256_H
#define SDPA_ZE_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SDPA_SHA256_BYTES 32

typedef struct sdpa_sha256 {
    uint32_t state[8];
    uint64_t length; /* bytes hashed so far */
    unsigned char block[64];
    size_t used; /* bytes waiting in block */
} sdpa_sha256_t;

/* Starts a digest. */
void sdpa_sha256_init(sdpa_sha256_t *h);

/* Hashes size more bytes (any size, in any number of calls). */
void sdpa_sha256_update(sdpa_sha256_t *h, const void *data, size_t size);

/* Stores the digest of everything hashed in out; h must be initialized
 * again before reuse. */
void sdpa_sha256_final(sdpa_sha256_t *h, unsigned char out[SDPA_SHA256_BYTES]);

/* The digest of one buffer. */
void sdpa_sha256(const void *data, size_t size, unsigned char out[SDPA_SHA256_BYTES]);

#endif /* SDPA_ZE_SHA256_H */
