/* byte_writer.c - a growable byte buffer that serializes. */
#include "byte_writer.h"

#include <stdlib.h>
#include <string.h>

void sdpa_byte_put(sdpa_byte_writer_t *w, const void *data, size_t size)
{
    if (w->failed)
        return;
    if (size > w->capacity - w->size) {
        size_t capacity = w->capacity ? w->capacity : 256;
        while (capacity - w->size < size) {
            if (capacity > SIZE_MAX / 2) {
                w->failed = 1;
                return;
            }
            capacity *= 2;
        }
        uint8_t *grown = realloc(w->bytes, capacity);
        if (grown == NULL) {
            w->failed = 1;
            return;
        }
        w->bytes = grown;
        w->capacity = capacity;
    }
    memcpy(w->bytes + w->size, data, size);
    w->size += size;
}

void sdpa_byte_put_u32(sdpa_byte_writer_t *w, uint32_t value)
{
    sdpa_byte_put(w, &value, sizeof(value));
}

void sdpa_byte_put_u64(sdpa_byte_writer_t *w, uint64_t value)
{
    sdpa_byte_put(w, &value, sizeof(value));
}
