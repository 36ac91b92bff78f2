/*
 * byte_writer.h - a growable byte buffer that serializes, shared by the ze
 * plugin's module cache (its keys) and the CPU driver (its native binaries):
 * libsdpa_zeutil.
 */
#ifndef SDPA_ZEUTIL_BYTE_WRITER_H
#define SDPA_ZEUTIL_BYTE_WRITER_H

#include <stddef.h>
#include <stdint.h>

/* Zero-initialized to start; the caller frees bytes. Once an allocation
 * fails, failed is set and later puts do nothing: check it at the end. */
typedef struct sdpa_byte_writer {
    uint8_t *bytes;
    size_t size, capacity;
    int failed;
} sdpa_byte_writer_t;

/* Appends size bytes of data, growing the buffer by doubling. */
void sdpa_byte_put(sdpa_byte_writer_t *w, const void *data, size_t size);

/* Appends value in the host's byte order. */
void sdpa_byte_put_u32(sdpa_byte_writer_t *w, uint32_t value);
void sdpa_byte_put_u64(sdpa_byte_writer_t *w, uint64_t value);

#endif /* SDPA_ZEUTIL_BYTE_WRITER_H */
