/* problem_names.c - dtype facts and the names of the ABI's enums, for
 * messages. */
#include "problem.h"

/* ------------------------------------------------------------------------- */
/* Names                                                                     */
/* ------------------------------------------------------------------------- */

int sdpa_dtype_bits(sdpa_dtype_t dtype)
{
    switch (dtype) {
    case SDPA_DTYPE_F32:
        return 32;
    case SDPA_DTYPE_F16:
        return 16;
    case SDPA_DTYPE_BF16:
        return 16;
    case SDPA_DTYPE_S8:
        return 8;
    case SDPA_DTYPE_U8:
        return 8;
    case SDPA_DTYPE_S4:
        return 4;
    case SDPA_DTYPE_U4:
        return 4;
    case SDPA_DTYPE_S32:
        return 32;
    case SDPA_DTYPE_F8_E4M3:
    case SDPA_DTYPE_F8_E5M2:
        return 8;
    case SDPA_DTYPE_UNDEF:
        return 0;
    }
    return 0;
}

int sdpa_dtype_is_float(sdpa_dtype_t dtype)
{
    return dtype == SDPA_DTYPE_F32 || dtype == SDPA_DTYPE_F16 || dtype == SDPA_DTYPE_BF16;
}

int sdpa_dtype_is_quantized(sdpa_dtype_t dtype)
{
    return dtype == SDPA_DTYPE_S8 || dtype == SDPA_DTYPE_U8 || dtype == SDPA_DTYPE_S4 ||
           dtype == SDPA_DTYPE_U4;
}

int sdpa_dtype_is_fp8(sdpa_dtype_t dtype)
{
    return dtype == SDPA_DTYPE_F8_E4M3 || dtype == SDPA_DTYPE_F8_E5M2;
}

int sdpa_dtype_is_dequantized(sdpa_dtype_t dtype)
{
    return sdpa_dtype_is_quantized(dtype) || sdpa_dtype_is_fp8(dtype);
}

const char *sdpa_dtype_name(sdpa_dtype_t dtype)
{
    switch (dtype) {
    case SDPA_DTYPE_UNDEF:
        return "undef";
    case SDPA_DTYPE_F32:
        return "f32";
    case SDPA_DTYPE_F16:
        return "f16";
    case SDPA_DTYPE_BF16:
        return "bf16";
    case SDPA_DTYPE_S8:
        return "s8";
    case SDPA_DTYPE_U8:
        return "u8";
    case SDPA_DTYPE_S4:
        return "s4";
    case SDPA_DTYPE_U4:
        return "u4";
    case SDPA_DTYPE_S32:
        return "s32";
    case SDPA_DTYPE_F8_E4M3:
        return "f8_e4m3";
    case SDPA_DTYPE_F8_E5M2:
        return "f8_e5m2";
    }
    return "invalid";
}

const char *sdpa_prop_kind_name(sdpa_prop_kind_t kind)
{
    switch (kind) {
    case SDPA_FORWARD_INFERENCE:
        return "FORWARD_INFERENCE";
    case SDPA_FORWARD_TRAINING:
        return "FORWARD_TRAINING";
    case SDPA_BACKWARD:
        return "BACKWARD";
    }
    return "invalid";
}

const char *sdpa_mask_kind_name(sdpa_mask_kind_t kind)
{
    switch (kind) {
    case SDPA_MASK_NONE:
        return "NONE";
    case SDPA_MASK_BUFFER:
        return "BUFFER";
    case SDPA_MASK_CAUSAL_TOP_LEFT:
        return "CAUSAL_TOP_LEFT";
    case SDPA_MASK_CAUSAL_BOTTOM_RIGHT:
        return "CAUSAL_BOTTOM_RIGHT";
    }
    return "invalid";
}

const char *sdpa_scale_kind_name(sdpa_scale_kind_t kind)
{
    switch (kind) {
    case SDPA_SCALE_NONE:
        return "NONE";
    case SDPA_SCALE_HOST:
        return "HOST";
    case SDPA_SCALE_DEVICE:
        return "DEVICE";
    }
    return "invalid";
}

const char *sdpa_softmax_kind_name(sdpa_softmax_kind_t kind)
{
    switch (kind) {
    case SDPA_SOFTMAX_ACCURATE:
        return "ACCURATE";
    case SDPA_SOFTMAX_INF_AS_ZERO:
        return "INF_AS_ZERO";
    }
    return "invalid";
}

const char *sdpa_quant_kind_name(sdpa_quant_kind_t kind)
{
    switch (kind) {
    case SDPA_QUANT_NONE:
        return "NONE";
    case SDPA_QUANT_PER_TENSOR:
        return "PER_TENSOR";
    case SDPA_QUANT_PER_GROUP:
        return "PER_GROUP";
    case SDPA_QUANT_PER_HEAD:
        return "PER_HEAD";
    }
    return "invalid";
}
