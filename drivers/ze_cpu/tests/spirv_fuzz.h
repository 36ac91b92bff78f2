/*
 * spirv_fuzz.h - one input of the SPIR-V reader's fuzz targets, shared by
 * the seeded mutation driver that runs in `make check` (test_spirv_fuzz.c)
 * and the libFuzzer target for long runs (fuzz_spirv_libfuzzer.c).
 */
#ifndef ZE_CPU_SPIRV_FUZZ_H
#define ZE_CPU_SPIRV_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* Reads the size bytes at data as SPIR-V with spirv_reflect, from a heap
 * block of exactly size / 4 words (so a sanitizer sees any read past the
 * end), then checks what the reader promises: on success every kernel,
 * argument and constant is well formed; on refusal the reason is a
 * non-empty string. Returns 1 if the module was accepted, 0 if refused;
 * prints the broken promise and aborts otherwise. */
int spirv_fuzz_one(const uint8_t *data, size_t size);

#endif /* ZE_CPU_SPIRV_FUZZ_H */
