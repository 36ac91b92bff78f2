/*
 * spec_constants.h - specialization constants as seen by the kernels.
 *
 * Every row of spec_constants.def becomes an inline function sc_NAME() that
 * returns __spirv_SpecConstant(SPEC_ID, DEFAULT). llvm-spirv turns each call
 * into an OpSpecConstant decorated with SpecId, so the value is fixed when the
 * host builds the module (zeModuleCreate with ze_module_constants_t) and the
 * device compiler folds every branch on it. Use SC(NAME) in kernel code.
 */
#ifndef SDPA_SPIRV_SPEC_CONSTANTS_H
#define SDPA_SPIRV_SPEC_CONSTANTS_H

/* The translator's builtin, one overload per type the table uses. */
int __attribute__((overloadable)) __spirv_SpecConstant(int id, int default_value);
uint __attribute__((overloadable)) __spirv_SpecConstant(int id, uint default_value);
long __attribute__((overloadable)) __spirv_SpecConstant(int id, long default_value);
float __attribute__((overloadable)) __spirv_SpecConstant(int id, float default_value);
bool __attribute__((overloadable)) __spirv_SpecConstant(int id, bool default_value);

#define SDPA_SPEC_CONSTANT(name, id, type, default_value, meaning)                                 \
    static inline type sc_##name(void)                                                             \
    {                                                                                              \
        return __spirv_SpecConstant(id, (type)(default_value));                                    \
    }
#include "spec_constants.def"
#undef SDPA_SPEC_CONSTANT

#define SC(name) sc_##name()

#endif /* SDPA_SPIRV_SPEC_CONSTANTS_H */
