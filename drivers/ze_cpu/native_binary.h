/*
 * native_binary.h - the driver's native module binary (zeModuleGetNativeBinary,
 * ZE_MODULE_FORMAT_NATIVE): the OpenCL program binary of a built module,
 * wrapped in a small container that also carries
 *   - what the driver learned from the module's SPIR-V: the kernels, the
 *     kind and size of each parameter, required group and sub-group sizes,
 *     the specialization constants. OpenCL program binaries carry no
 *     argument information (clGetKernelArgInfo answers
 *     CL_KERNEL_ARG_INFO_NOT_AVAILABLE), and the driver must know which
 *     8-byte argument is a pointer;
 *   - the identity of the engine that compiled it (platform, driver
 *     version, device name and UUID): a binary of another engine is refused
 *     before OpenCL sees it;
 *   - a checksum of all of it, so that a truncated or corrupted binary is
 *     refused rather than loaded.
 *
 * Layout (little-endian, no padding; doc/cpu-driver.md, "Native binaries"):
 *   header  magic "ZECPUNB\0", u32 container version, u32 0x01020304,
 *           u64 payload bytes, u64 FNV-1a 64 of the payload
 *   payload str engine identity; u32 SPIR-V version; u32 kernels, each:
 *           str name, u32 args, per argument u32 kind and u32 size,
 *           u32 required group size x3, u32 required sub-group size;
 *           u32 constants, each u32 SpecId and u32 size;
 *           u64 program binary bytes, the bytes
 *   where str is a u32 length and that many bytes (no NUL).
 */
#ifndef ZE_CPU_NATIVE_BINARY_H
#define ZE_CPU_NATIVE_BINARY_H

#include "ze_cpu.h"

/* The container version; a binary of another version is refused. */
#define CPU_ZE_NATIVE_VERSION 2u

/* Packs program (built) and reflection into a new buffer: on success *out
 * (the caller frees it) holds *size bytes. Returns ZE_RESULT_SUCCESS,
 * ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY, or ZE_RESULT_ERROR_UNKNOWN if OpenCL
 * does not hand out the program binary. */
ze_result_t cpu_ze_native_pack(cl_program program, const spirv_reflection_t *reflection,
                               uint8_t **out, size_t *size);

/* Checks a container made by cpu_ze_native_pack against this engine. On
 * success stores a new reflection in *reflection (spirv_reflection_free)
 * and the program binary's place inside bytes in *binary, *binary_size.
 * Otherwise returns ZE_RESULT_ERROR_INVALID_NATIVE_BINARY (or
 * ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY) with a one-line reason in
 * why[why_size]; never reads outside bytes[0, size). */
ze_result_t cpu_ze_native_unpack(const uint8_t *bytes, size_t size, spirv_reflection_t **reflection,
                                 const uint8_t **binary, size_t *binary_size, char *why,
                                 size_t why_size);

#endif /* ZE_CPU_NATIVE_BINARY_H */
