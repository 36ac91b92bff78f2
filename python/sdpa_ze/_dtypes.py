"""Element types by name, and their spellings in NumPy, DLPack and sdpa.h."""

import numpy as np

from . import _abi, _dlpack


class DType:
    """name: "float32", "float16", "bfloat16" or "bool"; itemsize in bytes;
    storage: the NumPy dtype holding the bits (uint16 for bfloat16, which
    NumPy lacks); dlpack: (code, bits, lanes); sdpa: sdpa_dtype_t or None."""

    def __init__(self, name, itemsize, storage, dlpack, sdpa):
        self.name, self.itemsize, self.storage = name, itemsize, np.dtype(storage)
        self.dlpack, self.sdpa = dlpack, sdpa

    @property
    def numpy(self):
        """The NumPy dtype of this type, or None (bfloat16, the 8-bit floats)."""
        return None if self.name == "bfloat16" or self.name.startswith("float8") else self.storage

    def __repr__(self):
        return self.name


FLOAT32 = DType("float32", 4, np.float32, (_dlpack.KDL_FLOAT, 32, 1), _abi.DTYPE_F32)
FLOAT16 = DType("float16", 2, np.float16, (_dlpack.KDL_FLOAT, 16, 1), _abi.DTYPE_F16)
BFLOAT16 = DType("bfloat16", 2, np.uint16, (_dlpack.KDL_BFLOAT, 16, 1), _abi.DTYPE_BF16)
BOOL = DType("bool", 1, np.bool_, (_dlpack.KDL_BOOL, 8, 1), None)
# Index arrays (cu_seqlens, block tables, cache lengths), the dropout keep
# mask, integer-quantized K/V (int8, uint8) and their zero points (int32 too).
INT32 = DType("int32", 4, np.int32, (_dlpack.KDL_INT, 32, 1), _abi.DTYPE_S32)
UINT8 = DType("uint8", 1, np.uint8, (_dlpack.KDL_UINT, 8, 1), _abi.DTYPE_U8)
INT8 = DType("int8", 1, np.int8, (_dlpack.KDL_INT, 8, 1), _abi.DTYPE_S8)
# OCP FP8 (torch.float8_e4m3fn, torch.float8_e5m2), bits in uint8: K and V
# of an FP8 KV cache (attention(), forward only).
FLOAT8_E4M3FN = DType("float8_e4m3fn", 1, np.uint8, (_dlpack.KDL_FLOAT8_E4M3FN, 8, 1),
                      _abi.DTYPE_F8_E4M3)
FLOAT8_E5M2 = DType("float8_e5m2", 1, np.uint8, (_dlpack.KDL_FLOAT8_E5M2, 8, 1),
                    _abi.DTYPE_F8_E5M2)

FLOATS = (FLOAT32, FLOAT16, BFLOAT16)
FLOAT8S = (FLOAT8_E4M3FN, FLOAT8_E5M2)
INTEGERS_KV = (INT8, UINT8)  # integer K/V, dequantized with scales and zero points
_ALL = (FLOAT32, FLOAT16, BFLOAT16, BOOL, INT32, UINT8, INT8, FLOAT8_E4M3FN, FLOAT8_E5M2)
_BY_NAME = {t.name: t for t in _ALL}
_BY_DLPACK = {t.dlpack: t for t in _ALL}


def from_name(name):
    """The DType called name (a string, a NumPy dtype or a DType)."""
    if isinstance(name, DType):
        return name
    key = name if isinstance(name, str) else np.dtype(name).name
    try:
        return _BY_NAME[key]
    except KeyError:
        raise TypeError("dtype %s is not supported (float32, float16, bfloat16; bool for "
                        "masks; int32 for index arrays)" % key) from None


def from_numpy(dtype):
    dtype = np.dtype(dtype)
    if dtype.name in ("float32", "float16", "bool", "int32", "uint8", "int8"):
        return _BY_NAME[dtype.name]
    raise TypeError("dtype %s is not supported (float32, float16; bfloat16 and the 8-bit "
                    "floats through DLPack or Device.asarray; bool for masks; int32 for index "
                    "arrays; int8, uint8 for quantized K/V)" % dtype.name)


def from_dlpack(code_bits_lanes):
    try:
        return _BY_DLPACK[tuple(code_bits_lanes)]
    except KeyError:
        code, bits, lanes = code_bits_lanes
        raise TypeError("DLPack dtype (code %d, bits %d, lanes %d) is not supported "
                        "(float32, float16, bfloat16; bool for masks; int32 for index arrays)"
                        % (code, bits, lanes)) from None


def bfloat16_from_float32(values):
    """The bfloat16 bits (uint16) nearest to float32 values (round to nearest
    even; NaN stays NaN)."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    nan = np.isnan(np.asarray(values, dtype=np.float32))
    return np.where(nan, (bits >> 16) | 0x40, rounded).astype(np.uint16)


def float32_from_bfloat16(bits):
    """float32 values of bfloat16 bits (exact)."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)
