"""sdpa_ze: scaled-dot-product attention (flash attention, forward and
backward) on a Level Zero device, from Python.

A pure-Python binding (ctypes) of the public C ABI in sdpa.h, through
libsdpa (the front loader) and the Level Zero loader::

    import numpy as np, sdpa_ze
    o = sdpa_ze.attention(q, k, v, causal=True)                 # forward
    o, lse = sdpa_ze.attention(q, k, v, causal=True, return_lse=True)
    dq, dk, dv = sdpa_ze.attention_backward(do, q, k, v, o, lse, causal=True)

Arrays are NumPy arrays, torch tensors, UsmArrays, or anything exporting
``__dlpack__`` on kDLCPU or kDLOneAPI; memory that already is USM of the
package's Level Zero context is used in place, anything else is copied into
USM first. Everything runs on default_device(): the first device of the
first Level Zero driver, or a Device bound to a framework's Level Zero
context (set_default_device). sdpa_ze.torch has the autograd functions
(scaled_dot_product_attention, flash_attn_func, ...); sdpa_ze.abi the
ctypes structures of sdpa.h.
Failures of the C ABI raise SdpaError, with the status name and the
backend's message. See doc/python.md in the sdpa-ze sources for where the package
finds libsdpa.
"""

from ._attention import attention, attention_backward, merge_states
from ._device import Device, default_device, set_default_device
from ._errors import SdpaError
from ._library import LibraryNotFoundError
from ._usm import UsmArray
from ._ze import LevelZeroError

__version__ = "0.1.0"

__all__ = ["attention", "attention_backward", "merge_states", "default_device",
           "set_default_device", "Device", "SdpaError",
           "LevelZeroError", "LibraryNotFoundError", "UsmArray", "empty", "asarray",
           "from_dlpack"]


def empty(shape, dtype="float32", memory="shared"):
    """A new dense UsmArray on the default device, uninitialized. memory:
    "shared" (default), "host" or "device"."""
    return default_device().empty(shape, dtype, memory)


def asarray(values, dtype=None, memory="shared"):
    """A new dense UsmArray on the default device holding values (anything
    NumPy takes), converted to dtype ("bfloat16" rounds to nearest even)."""
    return default_device().asarray(values, dtype, memory)


def from_dlpack(x):
    """A UsmArray for x's memory (x exports ``__dlpack__``): the same memory
    when it is USM of the default device's context, else a copy into shared
    USM."""
    from ._operands import Operand
    device = default_device()
    operand = Operand(device, x, "x")
    if operand.staged:
        return operand._keepalive[-1]
    return UsmArray(device, operand._keepalive[0], operand.address, operand.shape,
                    operand.strides, operand.dtype.name, device.memory_kind(operand.address))
