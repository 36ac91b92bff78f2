/*
 * fuzz_spirv_libfuzzer.c - libFuzzer's entry point for the SPIR-V reader
 * (`make -C drivers/ze_cpu fuzz-spirv`, clang-15 -fsanitize=fuzzer): every
 * input goes through spirv_fuzz_one, which aborts on a broken promise;
 * ASan and UBSan catch the rest. The corpus starts from spirv/'s modules.
 */
#include <stddef.h>
#include <stdint.h>

#include "spirv_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    spirv_fuzz_one(data, size);
    return 0;
}
