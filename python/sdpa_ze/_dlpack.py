"""DLPack in pure Python: taking a tensor from any producer's ``__dlpack__``
capsule, and handing out ours.

The structures follow dlpack.h (DLPack 1.0: DLManagedTensorVersioned, with the
legacy DLManagedTensor for producers and consumers that predate it); the
capsule protocol follows the Python array API standard: a producer names an
unconsumed capsule "dltensor" or "dltensor_versioned", the consumer renames it
"used_dltensor[_versioned]" when it takes ownership and calls the deleter when
it is done. A capsule of ours that dies unconsumed is noticed at the next
export (see _sweep), since a capsule destructor written in Python cannot run
safely.
"""

import ctypes
import sys
import threading
import weakref

# DLDeviceType values used here.
KDL_CPU = 1
KDL_CUDA_HOST = 3
KDL_ONEAPI = 14

# DLDataTypeCode values used here.
KDL_INT, KDL_UINT, KDL_FLOAT, KDL_BFLOAT, KDL_BOOL = 0, 1, 2, 4, 6
# DLPack 1.1's 8-bit floats (torch.float8_e4m3fn, torch.float8_e5m2).
KDL_FLOAT8_E4M3FN, KDL_FLOAT8_E5M2 = 10, 12

# DLManagedTensorVersioned.flags bits.
FLAG_READ_ONLY = 1 << 0
FLAG_IS_COPIED = 1 << 1

VERSION = (1, 0)  # the DLPack version this module speaks

_DEVICE_NAMES = {1: "CPU", 2: "CUDA", 3: "CUDAHost", 4: "OpenCL", 7: "Vulkan", 8: "Metal",
                 9: "VPI", 10: "ROCM", 11: "ROCMHost", 12: "ExtDev", 13: "CUDAManaged",
                 14: "OneAPI", 15: "WebGPU", 16: "Hexagon", 17: "MAIA"}


def device_name(device_type):
    return "kDL%s" % _DEVICE_NAMES.get(device_type, "Device%d" % device_type)


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


# Deleters are stored as raw addresses (they may be NULL).
class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64),
                ("dl_tensor", DLTensor)]


_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

# Capsule names, kept alive for the life of the process (a capsule keeps the
# pointer it was given).
_NAMES = {name: ctypes.create_string_buffer(name)
          for name in (b"dltensor", b"dltensor_versioned", b"used_dltensor",
                       b"used_dltensor_versioned")}

# The C API of capsules, on a handle of our own so that these prototypes do
# not change ctypes.pythonapi's.
_live = ctypes.PyDLL(None)
_live.PyCapsule_GetName.restype = ctypes.c_void_p
_live.PyCapsule_GetName.argtypes = [ctypes.py_object]
_live.PyCapsule_GetPointer.restype = ctypes.c_void_p
_live.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_void_p]
_live.PyCapsule_SetName.restype = ctypes.c_int
_live.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_void_p]
_live.PyCapsule_New.restype = ctypes.py_object
_live.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
_live.PyCapsule_IsValid.restype = ctypes.c_int
_live.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_void_p]


# --------------------------------------------------------------------------
# Consuming
# --------------------------------------------------------------------------

class Imported:
    """A tensor taken from a DLPack capsule.

    ``address`` is the first element (data + byte_offset), ``strides`` count
    elements, ``dtype`` is (code, bits, lanes), ``device`` is (type, id).
    The producer's memory stays valid while this object lives; the deleter
    runs when it is collected."""

    def __init__(self, address, shape, strides, dtype, device, read_only, finalizer):
        self.address, self.shape, self.strides = address, shape, strides
        self.dtype, self.device, self.read_only = dtype, device, read_only
        self._finalizer = finalizer


def _call_deleter(deleter, managed):
    _Deleter(deleter)(managed)


def _compact_strides(shape):
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return tuple(reversed(strides))


def consume(obj):
    """Takes the tensor obj exports through ``__dlpack__`` (asking for a
    versioned capsule, falling back to a legacy one) and returns an Imported.
    Raises BufferError for a capsule this module cannot read."""
    try:
        capsule = obj.__dlpack__(max_version=VERSION)
    except TypeError:  # a producer older than the max_version keyword
        capsule = obj.__dlpack__()
    name_address = _live.PyCapsule_GetName(capsule)
    name = ctypes.string_at(name_address) if name_address else b""
    if name not in (b"dltensor", b"dltensor_versioned"):
        raise BufferError("__dlpack__ returned a capsule named %r, not an unconsumed "
                          "DLPack tensor" % name)
    versioned = name == b"dltensor_versioned"
    managed = _live.PyCapsule_GetPointer(capsule, _NAMES[name])
    if versioned:
        m = DLManagedTensorVersioned.from_address(managed)
        if m.version.major != VERSION[0]:
            # Left unconsumed: the capsule's destructor calls the deleter.
            raise BufferError("DLPack version %d.%d: this package reads major version %d"
                              % (m.version.major, m.version.minor, VERSION[0]))
        flags = m.flags
    else:
        m = DLManagedTensor.from_address(managed)
        flags = 0
    t = m.dl_tensor
    ndim = t.ndim
    shape = tuple(t.shape[i] for i in range(ndim))
    strides = (tuple(t.strides[i] for i in range(ndim)) if t.strides
               else _compact_strides(shape))
    address = (t.data or 0) + t.byte_offset
    deleter = m.deleter
    _live.PyCapsule_SetName(capsule, _NAMES[b"used_" + name])
    holder = Imported(address, shape, strides, (t.dtype.code, t.dtype.bits, t.dtype.lanes),
                      (t.device.device_type, t.device.device_id),
                      bool(flags & FLAG_READ_ONLY), None)
    if deleter:
        holder._finalizer = weakref.finalize(holder, _call_deleter, deleter, managed)
    return holder


# --------------------------------------------------------------------------
# Producing
# --------------------------------------------------------------------------

# Exported tensors not yet released: managed address -> _Export.
_exported = {}
_exported_lock = threading.Lock()


class _Export:
    """What keeps one exported tensor valid: its ctypes structures, the owner
    of the memory, and (until a consumer renames it) the capsule itself."""

    def __init__(self, structures, owner, name):
        self.structures, self.owner, self.name = structures, owner, name
        self.capsule = None


def _release(managed):
    with _exported_lock:
        _exported.pop(managed, None)


@_Deleter
def _deleter(managed):
    _release(managed)


def _sweep():
    """Releases the tensors of capsules that died unconsumed.

    Capsules get no destructor: CPython calls a capsule's destructor while an
    exception may be pending (a consumer that refused the capsule), and a
    ctypes callback cannot run without clobbering it. Instead this module
    holds every capsule it made until a consumer renames it (the consumer
    then owns the tensor and calls the deleter) or until this module's
    reference is the last one (nobody can consume it any more)."""
    with _exported_lock:
        entries = list(_exported.items())
    for managed, entry in entries:
        capsule = entry.capsule
        if capsule is None:
            continue
        if not _live.PyCapsule_IsValid(capsule, _NAMES[entry.name]):
            entry.capsule = None  # consumed: the consumer calls the deleter
        elif sys.getrefcount(capsule) <= 3:  # entry.capsule, capsule, the argument
            entry.capsule = None
            _release(managed)


def export(owner, address, shape, strides, dtype, device, flags=0, max_version=None):
    """A DLPack capsule for the memory at address, kept alive by owner until
    the consumer calls the deleter (or the capsule dies unconsumed).

    dtype is (code, bits, lanes), device (type, id), strides count elements.
    The capsule is versioned (DLPack 1.0, with flags) when max_version allows
    it, legacy otherwise (flags then cannot be signalled)."""
    ndim = len(shape)
    shape_array = (ctypes.c_int64 * max(ndim, 1))(*shape)
    strides_array = (ctypes.c_int64 * max(ndim, 1))(*strides)
    versioned = max_version is not None and tuple(max_version)[0] >= VERSION[0]
    if versioned:
        m = DLManagedTensorVersioned()
        m.version = DLPackVersion(*VERSION)
        m.flags = flags
    else:
        if flags & FLAG_READ_ONLY:
            raise BufferError("a read-only tensor needs a versioned DLPack capsule "
                              "(max_version >= (1, 0))")
        m = DLManagedTensor()
    m.deleter = ctypes.cast(_deleter, ctypes.c_void_p).value
    t = m.dl_tensor
    t.data = address
    t.device = DLDevice(*device)
    t.ndim = ndim
    t.dtype = DLDataType(*dtype)
    t.shape = ctypes.cast(shape_array, ctypes.POINTER(ctypes.c_int64))
    t.strides = ctypes.cast(strides_array, ctypes.POINTER(ctypes.c_int64))
    t.byte_offset = 0
    _sweep()
    managed = ctypes.addressof(m)
    name = b"dltensor_versioned" if versioned else b"dltensor"
    entry = _Export((m, shape_array, strides_array), owner, name)
    with _exported_lock:
        _exported[managed] = entry
    try:
        entry.capsule = _live.PyCapsule_New(managed, _NAMES[name], None)
    except BaseException:
        _release(managed)
        raise
    return entry.capsule


def exported_count():
    """Tensors handed out and not yet released, after releasing those whose
    capsules died unconsumed (for the tests)."""
    _sweep()
    with _exported_lock:
        return len(_exported)
