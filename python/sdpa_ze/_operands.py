"""Operands: a caller's array (NumPy, anything with __dlpack__, or a
UsmArray) as the C ABI takes it -- an address in USM of the device's context,
a shape, strides in elements and a dtype.

Memory that already is USM of the context (a UsmArray, a kDLOneAPI tensor of
the same context, or a NumPy/kDLCPU view of such memory) is passed through
as it is, strides included. Anything else on the host is copied ("staged")
into a dense shared USM array first; an output that is not USM is computed
into a staged array and copied back after the execution."""

import numpy as np

from . import _dlpack
from . import _dtypes
from ._usm import UsmArray, host_view


def _is_torch_tensor(x):
    return type(x).__module__.split(".")[0] == "torch" and hasattr(x, "detach")


class _Source:
    """What a caller's array is: address, shape, strides (elements; None when
    not a whole number of elements), dtype (DType), device_type (a DLPack
    device type), read_only, host (a NumPy view of host memory, or None),
    keepalive (what keeps the memory valid), origin ("numpy", "dlpack" or
    "usm")."""

    def __init__(self, device, x, name):
        self.framework = None
        if _is_torch_tensor(x):
            # torch refuses to export a tensor that requires grad; the data is
            # all the ABI reads.
            self.framework = "torch"
            x = x.detach()
        self.keepalive = x
        if isinstance(x, UsmArray):
            self._from_usm_array(x)
        elif isinstance(x, np.ndarray) or not hasattr(x, "__dlpack__"):
            self._from_numpy(np.asarray(x), name)
        else:
            self._from_dlpack(device, x, name)

    def _from_usm_array(self, x):
        self.origin, self.device_type = "usm", _dlpack.KDL_ONEAPI
        self.address, self.shape, self.strides = x.address, x.shape, x.strides
        self.dtype, self.read_only = _dtypes.from_name(x.dtype), False
        self.host = x._storage_view() if x.memory != "device" else None

    def _from_numpy(self, array, name):
        self.origin, self.device_type = "numpy", _dlpack.KDL_CPU
        try:
            self.dtype = _dtypes.from_numpy(array.dtype)
        except TypeError as error:
            raise TypeError("%s: %s" % (name, error)) from None
        self.address, self.shape = array.__array_interface__["data"][0], array.shape
        size = array.itemsize
        self.strides = (tuple(s // size for s in array.strides)
                        if all(s % size == 0 for s in array.strides) else None)
        self.read_only, self.host = not array.flags.writeable, array

    def _from_dlpack(self, device, x, name):
        imported = _dlpack.consume(x)
        self.keepalive = imported
        self.origin, self.device_type = "dlpack", imported.device[0]
        try:
            self.dtype = _dtypes.from_dlpack(imported.dtype)
        except TypeError as error:
            raise TypeError("%s: %s" % (name, error)) from None
        self.address, self.shape, self.strides = imported.address, imported.shape, imported.strides
        self.read_only = imported.read_only
        host_visible = self.device_type in (_dlpack.KDL_CPU, _dlpack.KDL_CUDA_HOST) or (
            self.device_type == _dlpack.KDL_ONEAPI
            and device.memory_kind(self.address) in ("shared", "host"))
        self.host = (host_view(imported, self.address, self.shape, self.strides, self.dtype,
                               self.read_only) if host_visible and self.address else None)


def _extent_bytes(shape, strides, itemsize):
    """Bytes from the first element to past the last one (0 if empty)."""
    if any(n == 0 for n in shape):
        return 0
    return sum((n - 1) * s for n, s in zip(shape, strides)) * itemsize + itemsize


class Operand:
    """One tensor for the ABI: ``address``, ``shape``, ``strides``
    (elements), ``dtype`` (DType), ``staged`` (True if this package copied
    it), ``origin`` of the caller's array. For an output that is not USM,
    finish() copies the result back into the caller's array."""

    def __init__(self, device, x, name, output=False, as_additive_mask=False, dtypes=None):
        source = _Source(device, x, name)
        self.name, self.origin, self.staged = name, source.origin, False
        self.framework = source.framework
        allowed = dtypes or _dtypes.FLOATS
        if source.dtype not in allowed and not (as_additive_mask
                                                 and source.dtype is _dtypes.BOOL):
            raise TypeError("%s: dtype %s is not accepted here (%s)"
                            % (name, source.dtype.name, ", ".join(t.name for t in allowed)))
        self._keepalive, self._writeback = [source.keepalive], None
        if output and source.read_only:
            raise ValueError("%s: the array is read-only" % name)
        if source.device_type not in (_dlpack.KDL_CPU, _dlpack.KDL_CUDA_HOST, _dlpack.KDL_ONEAPI):
            raise ValueError("%s: DLPack device %s is not supported (kDLCPU or kDLOneAPI)"
                             % (name, _dlpack.device_name(source.device_type)))
        convert = as_additive_mask and source.dtype is _dtypes.BOOL
        if not convert and self._usable_in_place(device, source):
            self.address, self.shape, self.strides = source.address, source.shape, source.strides
            self.dtype = source.dtype
            return
        if source.device_type == _dlpack.KDL_ONEAPI and not device.memory_kind(source.address):
            raise ValueError("%s: kDLOneAPI memory at 0x%x is not an allocation of this "
                             "package's Level Zero context" % (name, source.address))
        if source.host is None:
            raise ValueError("%s: strided device memory cannot be staged; pass a dense array"
                             % name)
        self._stage(device, source, output, convert)

    @staticmethod
    def _usable_in_place(device, source):
        if source.strides is None or any(s < 0 for s in source.strides):
            return False
        if any(n == 0 for n in source.shape):
            return True  # nothing to read or write; the ABI judges the shape
        if not device.memory_kind(source.address):
            return False
        base, size = device._ze.address_range(source.address)
        end = source.address + _extent_bytes(source.shape, source.strides, source.dtype.itemsize)
        return end <= base + size

    def _stage(self, device, source, output, convert):
        dtype = _dtypes.FLOAT32 if convert else source.dtype
        staged = device.empty(source.shape, dtype)
        self.staged, self.dtype = True, dtype
        self.address, self.shape, self.strides = staged.address, staged.shape, staged.strides
        self._keepalive.append(staged)
        if output:
            self._writeback = (source.host, staged)
            return
        view = staged._storage_view()
        if convert:  # True: the pair takes part (0), False: it does not (-inf)
            view[...] = np.where(source.host, np.float32(0), np.float32(-np.inf))
        else:
            view[...] = source.host
        device.stats["staged"] += 1
        device.stats["staged_bytes"] += staged.nbytes

    def desc(self, rank=4):
        """The sdpa_tensor_desc_t of this operand, with leading dimensions of
        extent 1 added up to rank."""
        from . import _abi
        missing = rank - len(self.shape)
        d = _abi.TensorDesc()
        d.dtype = self.dtype.sdpa
        d.dims[:] = [1] * missing + list(self.shape)
        d.strides[:] = [0] * missing + list(self.strides)
        return d

    def finish(self, device):
        """After the execution: copies a staged output back to the caller."""
        if self._writeback is not None:
            host, staged = self._writeback
            host[...] = staged._storage_view()
            device.stats["copied_back"] += 1
