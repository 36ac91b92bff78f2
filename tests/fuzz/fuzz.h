/*
 * fuzz.h - what a fuzz target is, and the byte reader the targets build their
 * inputs with.
 *
 * A target is one function with libFuzzer's signature. It turns the bytes
 * into a structured input (a problem descriptor, an environment value),
 * calls the code under test, checks what came back against an independent
 * oracle and calls fuzz_fail() on any disagreement; crashes and sanitizer
 * reports count as failures too. The same target links either with
 * libFuzzer (`make fuzz`, clang-15 -fsanitize=fuzzer) for long guided runs,
 * or with fuzz_main.c, a seeded random driver with a fixed budget that
 * `make check` runs (doc/reliability.md).
 */
#ifndef SDPA_TESTS_FUZZ_H
#define SDPA_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* Runs one input; returns 0 (libFuzzer's convention). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One line about what the inputs so far reached (e.g. "812 accepted"),
 * printed by fuzz_main.c at the end of a run. */
const char *fuzz_stats(void);

/* Reports an oracle failure for the current input (printf format) and
 * aborts, so that both drivers keep the input as a reproducer. */
void fuzz_fail(const char *format, ...) __attribute__((format(printf, 1, 2), noreturn));

/* Reads an input front to back; past its end every read returns 0. */
typedef struct fuzz_input {
    const uint8_t *data;
    size_t size, pos;
} fuzz_input_t;

static inline uint8_t fuzz_u8(fuzz_input_t *in)
{
    return in->pos < in->size ? in->data[in->pos++] : 0;
}

static inline uint32_t fuzz_u32(fuzz_input_t *in)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)fuzz_u8(in) << (8 * i);
    return v;
}

static inline uint64_t fuzz_u64(fuzz_input_t *in)
{
    return fuzz_u32(in) | (uint64_t)fuzz_u32(in) << 32;
}

/* One of n choices (n >= 1). */
static inline uint32_t fuzz_pick(fuzz_input_t *in, uint32_t n)
{
    return fuzz_u8(in) % n;
}

#endif /* SDPA_TESTS_FUZZ_H */
