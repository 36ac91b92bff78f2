"""UsmArray: an n-dimensional array in Level Zero USM (unified shared
memory), exchanged through DLPack as kDLOneAPI."""

import ctypes
import math
import weakref

import numpy as np

from . import _dlpack
from . import _dtypes


class Allocation:
    """One USM allocation of a Device, freed when the last array using it is
    collected. ``address``, ``nbytes``, ``kind`` ("shared", "host", "device")."""

    def __init__(self, device, nbytes, kind):
        self.address = device._ze.allocate(nbytes, kind)
        self.nbytes, self.kind = nbytes, kind
        device._allocated(nbytes)
        self._finalizer = weakref.finalize(self, device._free, self.address, nbytes)


def _dense_strides(shape):
    return _dlpack._compact_strides(tuple(shape))


class _ArrayInterface:
    """What np.asarray views: the array interface of host-visible memory,
    holding whatever keeps that memory alive (the view's .base)."""

    def __init__(self, keepalive, address, shape, strides, dtype, read_only=False):
        self._keepalive = keepalive
        self.__array_interface__ = {
            "version": 3, "shape": tuple(shape), "typestr": dtype.storage.str,
            "data": (address, read_only),
            "strides": tuple(s * dtype.itemsize for s in strides),
        }


def host_view(keepalive, address, shape, strides, dtype, read_only=False):
    """A NumPy array over host-visible memory (the storage dtype: uint16 bits
    for bfloat16), without a copy."""
    return np.asarray(_ArrayInterface(keepalive, address, shape, strides, dtype, read_only))


class UsmArray:
    """An array in USM of a Device: ``shape``, ``strides`` (elements),
    ``dtype`` (a name: "float32", "float16", "bfloat16", "bool"), ``memory``
    ("shared", "host", "device"), ``address`` (of the first element).

    DLPack: ``__dlpack_device__()`` is (kDLOneAPI, device ordinal) and
    ``__dlpack__`` exports the memory as it is, without a copy. A consumer
    that asks for dl_device=(kDLCPU, 0) gets the same memory as a CPU tensor
    when it is host-visible (shared or host USM), or a copy when copy=True.
    NumPy: ``np.asarray(a)`` (or ``a.numpy()``) views host-visible memory and
    copies device memory; bfloat16 comes out as float32 values (a copy).
    """

    def __init__(self, device, owner, address, shape, strides, dtype, memory):
        # owner keeps the memory alive: an Allocation, or the producer's
        # tensor for memory taken through DLPack.
        self.device, self._owner, self._memory = device, owner, memory
        self.address, self.shape = address, tuple(int(n) for n in shape)
        self.strides = tuple(int(s) for s in strides)
        self._dtype = _dtypes.from_name(dtype)

    @classmethod
    def empty(cls, device, shape, dtype, memory="shared"):
        """A new dense (row-major) array, uninitialized."""
        dtype = _dtypes.from_name(dtype)
        shape = tuple(int(n) for n in shape)
        if any(n < 0 for n in shape):
            raise ValueError("shape %s has a negative extent" % (shape,))
        nbytes = max(math.prod(shape) * dtype.itemsize, 1)
        allocation = Allocation(device, nbytes, memory)
        return cls(device, allocation, allocation.address, shape, _dense_strides(shape), dtype,
                   memory)

    # --- properties -------------------------------------------------------
    @property
    def dtype(self):
        return self._dtype.name

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    @property
    def nbytes(self):
        return self.size * self._dtype.itemsize

    @property
    def memory(self):
        return self._memory

    def is_dense(self):
        return self.strides == _dense_strides(self.shape)

    def __repr__(self):
        return "UsmArray(shape=%s, dtype=%s, memory=%s, address=0x%x)" % (
            self.shape, self.dtype, self.memory, self.address)

    # --- NumPy --------------------------------------------------------------
    def _host_visible(self):
        return self.memory in ("shared", "host")

    def _storage_view(self):
        """The memory as NumPy storage (uint16 bits for bfloat16), a view of
        host-visible memory or a copy of device memory."""
        if self._host_visible():
            return host_view(self, self.address, self.shape, self.strides, self._dtype)
        if not self.is_dense():
            raise ValueError("copying strided device memory to the host is not supported")
        out = np.empty(self.shape, dtype=self._dtype.storage)
        if out.nbytes:
            self.device._ze.copy(out.ctypes.data, self.address, out.nbytes)
        return out

    def numpy(self):
        """The values as a NumPy array: a view of shared or host memory, a
        copy of device memory; bfloat16 as float32 (a copy)."""
        storage = self._storage_view()
        if self._dtype is _dtypes.BFLOAT16:
            return _dtypes.float32_from_bfloat16(storage)
        return storage

    def __array__(self, dtype=None, copy=None):
        values = self.numpy()
        is_view = self._host_visible() and self._dtype is not _dtypes.BFLOAT16
        converts = dtype is not None and np.dtype(dtype) != values.dtype
        if copy is False and (converts or not is_view):
            raise ValueError("this %s UsmArray in %s memory cannot become a NumPy array "
                             "without a copy" % (self.dtype, self.memory))
        if converts:
            return values.astype(dtype)
        return values.copy() if copy and is_view else values

    # --- DLPack -------------------------------------------------------------
    def __dlpack_device__(self):
        return (_dlpack.KDL_ONEAPI, self.device.ordinal)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        # Executions are synchronous, so no stream needs to wait: stream is
        # accepted and ignored.
        own = self.__dlpack_device__()
        target = own if dl_device is None else tuple(dl_device)
        if target == own:
            if copy:
                if not self.is_dense():
                    raise BufferError("copying a strided UsmArray is not supported")
                duplicate = self.device.empty(self.shape, self.dtype, memory=self.memory)
                self.device._ze.copy(duplicate.address, self.address, self.nbytes)
                return duplicate._export(own, _dlpack.FLAG_IS_COPIED, max_version)
            return self._export(own, 0, max_version)
        if target == (_dlpack.KDL_CPU, 0):
            if self._host_visible() and not copy:
                return self._export(target, 0, max_version)
            if copy is False:
                raise BufferError("%s memory is not host-visible: exporting it to kDLCPU "
                                  "needs copy=True" % self.memory)
            host = np.ascontiguousarray(self._storage_view()).copy()
            return _dlpack.export(host, host.ctypes.data, host.shape, _dense_strides(host.shape),
                                  self._dtype.dlpack, target, _dlpack.FLAG_IS_COPIED,
                                  max_version)
        raise BufferError("cannot export a UsmArray to %s device %d"
                          % (_dlpack.device_name(target[0]), target[1]))

    def _export(self, device, flags, max_version):
        return _dlpack.export(self, self.address, self.shape, self.strides, self._dtype.dlpack,
                              device, flags, max_version)
