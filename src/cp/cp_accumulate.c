/*
 * cp_accumulate.c - adding gradient contributions on the host, in f32.
 *
 * The backward writes each task's dQ, dK and dV in the problem's dtype to
 * host USM, where the travelling f32 accumulators are (the transport sends
 * them from there): adding them there costs one pass over memory the host
 * touches anyway. f16 is decoded through a table of its 65536 values (exact), bf16
 * is the high half of an f32.
 */
#include <pthread.h>
#include <string.h>

#include "cp_internal.h"
#include "element.h"

static float f16_values[65536];
static pthread_once_t f16_once = PTHREAD_ONCE_INIT;

static void fill_f16_values(void)
{
    for (uint32_t bits = 0; bits < 65536; bits++) {
        uint16_t half = (uint16_t)bits;
        f16_values[bits] = (float)sdpa_element_load(&half, 0, SDPA_DTYPE_F16);
    }
}

void cp_add_to_f32(float *dst, const void *src, sdpa_dtype_t dtype, size_t count)
{
    if (dtype == SDPA_DTYPE_F32) {
        const float *s = src;
        for (size_t i = 0; i < count; i++)
            dst[i] += s[i];
    } else if (dtype == SDPA_DTYPE_F16) {
        pthread_once(&f16_once, fill_f16_values);
        const uint16_t *s = src;
        for (size_t i = 0; i < count; i++)
            dst[i] += f16_values[s[i]];
    } else {
        const uint16_t *s = src;
        for (size_t i = 0; i < count; i++) {
            uint32_t bits = (uint32_t)s[i] << 16;
            float value;
            memcpy(&value, &bits, sizeof(value));
            dst[i] += value;
        }
    }
}
