"""Device: one Level Zero device with an sdpa backend bound to it, its
primitives (cached per problem) and the operands it hands them."""

import atexit
import collections
import ctypes
import threading

from . import _abi
from . import _dtypes
from ._errors import SdpaError
from ._library import libraries
from ._usm import UsmArray
from ._ze import ZeDevice

# Primitives kept per device (creating one may build a Level Zero module).
PRIMITIVE_CACHE_SIZE = 64


class Primitive:
    """A created sdpa primitive: ``handle``, ``workspace_bytes``,
    ``scratch_bytes`` and ``config`` (the kernel configuration string)."""

    def __init__(self, device, problem):
        self._device = device
        iface = device._iface
        handle = ctypes.c_void_p()
        if isinstance(problem, _abi.MergeDesc):
            device._check("merge_create", iface.merge_create(
                device._context, ctypes.byref(problem), ctypes.byref(handle)))
        else:
            device._check("primitive_create", iface.primitive_create(
                device._context, ctypes.byref(problem), ctypes.byref(handle)))
        self.handle = handle.value
        try:
            self.workspace_bytes = self._query_size(_abi.QUERY_WORKSPACE_BYTES)
            self.scratch_bytes = self._query_size(_abi.QUERY_SCRATCH_BYTES)
            text = ctypes.create_string_buffer(256)
            device._check("primitive_query", iface.primitive_query(
                self.handle, _abi.QUERY_CONFIG_STRING, ctypes.cast(text, ctypes.c_void_p), 256))
            self.config = text.value.decode()
        except BaseException:
            self.destroy()
            raise

    def _query_size(self, what):
        value = ctypes.c_size_t()
        self._device._check("primitive_query", self._device._iface.primitive_query(
            self.handle, what, ctypes.cast(ctypes.byref(value), ctypes.c_void_p),
            ctypes.sizeof(value)))
        return value.value

    def execute(self, args):
        self._device._check("primitive_execute",
                            self._device._iface.primitive_execute(self.handle,
                                                                  ctypes.byref(args)))

    def merge(self, args):
        """merge_execute with args (an _abi.MergeArgs)."""
        self._device._check("merge_execute",
                            self._device._iface.merge_execute(self.handle, ctypes.byref(args)))

    def destroy(self):
        if self.handle:
            self._device._iface.primitive_destroy(self.handle)
            self.handle = None


class Device:
    """A Level Zero device with the backend ``backend`` (None: $SDPA_BACKEND,
    else "ze") bound to it through the front loader.

    Which device: by default the first device of the first Level Zero driver
    (``driver=0, ordinal=0``), in a Level Zero context of this Device's own.
    To share a framework's Level Zero objects, pass the native handles as
    integers: ``ze_context`` and ``ze_device`` (both), and optionally
    ``command_list``, the list executions append to (immediate or regular).
    Without command_list the backend makes a synchronous immediate list and
    every call returns with its results ready. With one, results are ready
    once the caller's list has executed: the arrays this package copied
    inputs into are then kept in ``pending`` until the caller, having
    synchronized, calls ``release_pending()`` (with a synchronous immediate
    list pass ``synchronous=True`` and nothing is kept). The handles stay
    the caller's: close() destroys none of them, and the caller destroys
    them only after closing the Device.

    ``name`` is the device's name, ``features`` a dict of what the backend
    supports there, ``backend`` the backend's name and ``backend_path`` the
    library it came from. ``stats`` counts what the package did for its
    callers: ``staged`` (operands copied into USM), ``staged_bytes``,
    ``copied_back`` (results copied out to non-USM ``out=`` arrays),
    ``allocations`` (USM allocations made) and ``primitives`` (created)."""

    def __init__(self, backend=None, *, driver=0, ordinal=0, ze_context=None, ze_device=None,
                 command_list=None, synchronous=False):
        libs = libraries()
        self._libs = libs
        self._sdpa = libs.sdpa
        self._lock = threading.Lock()  # allocation counts and the closed flag
        self._primitive_lock = threading.Lock()  # held while a primitive is created
        self._primitives = collections.OrderedDict()
        self._live_allocations = 0
        self._closed = False
        self.stats = dict(staged=0, staged_bytes=0, copied_back=0, allocations=0, primitives=0)
        self._ze = ZeDevice(driver, ordinal, ze_context, ze_device)
        self.ordinal = self._ze.ordinal
        self.command_list = int(command_list) if command_list else None
        self.synchronous = self.command_list is None or bool(synchronous)
        self.pending = []
        try:
            self._open_backend(backend)
        except BaseException:
            self._ze.close(destroy_context=True)
            raise

    def keep_until_synchronized(self, operands):
        """Holds operands (and so their staged copies) until release_pending(),
        when executions are asynchronous."""
        if not self.synchronous:
            self.pending.extend(operands)

    def release_pending(self):
        """Drops what pending holds: call it once the caller's command list
        has executed the work appended so far."""
        self.pending = []

    def _open_backend(self, backend):
        handle = ctypes.c_void_p()
        status = self._sdpa.sdpa_backend_open(self._libs.backend_path(backend).encode(),
                                              ctypes.byref(handle))
        if status != _abi.SUCCESS:
            raise SdpaError("sdpa_backend_open", status, self.status_name(status),
                            self._sdpa.sdpa_loader_last_error().decode())
        self._backend = handle.value
        iface = self._sdpa.sdpa_backend_get_iface(self._backend).contents
        if (iface.abi_version >> 16) != _abi.ABI_VERSION_MAJOR or \
                iface.struct_size < ctypes.sizeof(_abi.BackendIface):
            self._sdpa.sdpa_backend_close(self._backend)
            raise RuntimeError("the backend speaks ABI %d.%d with a %d-byte table; this package "
                               "needs ABI %d.x with at least %d bytes"
                               % (iface.abi_version >> 16, iface.abi_version & 0xFFFF,
                                  iface.struct_size, _abi.ABI_VERSION_MAJOR,
                                  ctypes.sizeof(_abi.BackendIface)))
        self._iface = iface
        self.backend = iface.name.decode()
        self.backend_path = self._sdpa.sdpa_backend_path(self._backend).decode()

        desc = _abi.ContextDesc(ctypes.sizeof(_abi.ContextDesc), _abi.CONTEXT_DESC_VERSION,
                                self._ze.context, self._ze.device, self.command_list, 0)
        context = ctypes.c_void_p()
        # NULL command list: the context makes a synchronous immediate one.
        status = iface.context_create(ctypes.byref(desc), ctypes.byref(context))
        if status != _abi.SUCCESS:
            message = iface.last_error().decode()
            self._sdpa.sdpa_backend_close(self._backend)
            raise SdpaError("context_create", status, self.status_name(status), message)
        self._context = context.value
        features = _abi.Features()
        features.struct_size = ctypes.sizeof(features)
        features.struct_version = _abi.FEATURES_VERSION
        status = iface.context_get_features(self._context, ctypes.byref(features))
        if status != _abi.SUCCESS:
            message = iface.last_error().decode()
            iface.context_destroy(self._context)
            self._sdpa.sdpa_backend_close(self._backend)
            raise SdpaError("context_get_features", status, self.status_name(status), message)
        self.name = features.device_name.decode()
        self.features = {name: getattr(features, name) for name, _ in features._fields_
                         if name not in ("struct_size", "struct_version", "device_name")}

    # --- errors ---------------------------------------------------------------
    def status_name(self, status):
        name = self._sdpa.sdpa_status_name(status)
        return name.decode() if name else "status %d" % status

    def _check(self, call, status):
        if status != _abi.SUCCESS:
            raise SdpaError(call, status, self.status_name(status),
                            self._iface.last_error().decode())

    # --- memory ---------------------------------------------------------------
    def empty(self, shape, dtype, memory="shared"):
        """A new dense UsmArray (uninitialized) in this device's context."""
        if self._closed:
            raise RuntimeError("the device is closed")
        return UsmArray.empty(self, shape, dtype, memory)

    def asarray(self, values, dtype=None, memory="shared"):
        """A new dense UsmArray holding values (anything NumPy takes),
        converted to dtype (default: values' dtype; "bfloat16" rounds to
        nearest even)."""
        import numpy as np
        values = np.asarray(values)
        dtype = _dtypes.from_name(dtype if dtype is not None else values.dtype)
        if dtype is _dtypes.BFLOAT16:
            storage = _dtypes.bfloat16_from_float32(values)
        else:
            storage = np.ascontiguousarray(values, dtype=dtype.storage)
        array = self.empty(storage.shape, dtype, memory)
        if storage.nbytes:
            self._ze.copy(array.address, storage.ctypes.data, storage.nbytes)
        return array

    def memory_kind(self, address):
        """"shared", "host" or "device" if address is in USM of this device's
        context, else None."""
        return self._ze.memory_kind(address)

    def _allocated(self, nbytes):
        with self._lock:
            self._live_allocations += 1
            self.stats["allocations"] += 1

    def _free(self, address, nbytes):
        with self._lock:
            self._live_allocations -= 1
            destroy = self._closed and self._live_allocations == 0
        self._ze.free(address)
        if destroy:
            self._ze.close(destroy_context=True)

    # --- primitives -----------------------------------------------------------
    def merge_primitive(self, desc):
        """The merge primitive for desc (an _abi.MergeDesc), cached as
        primitive() caches."""
        return self.primitive(desc)

    def primitive(self, problem):
        """The primitive for problem (an _abi.ProblemDesc, or a MergeDesc),
        created on first use and cached."""
        key = (type(problem).__name__, bytes(problem))
        with self._primitive_lock:
            if self._closed:
                raise RuntimeError("the device is closed")
            cached = self._primitives.get(key)
            if cached is not None:
                self._primitives.move_to_end(key)
                return cached
            primitive = Primitive(self, problem)
            self.stats["primitives"] += 1
            self._primitives[key] = primitive
            if len(self._primitives) > PRIMITIVE_CACHE_SIZE:
                self._primitives.popitem(last=False)[1].destroy()
            return primitive

    def modules_built(self):
        """Level Zero modules the backend has built for this device."""
        value = ctypes.c_uint64()
        self._check("context_query", self._iface.context_query(
            self._context, _abi.QUERY_MODULES_BUILT,
            ctypes.cast(ctypes.byref(value), ctypes.c_void_p), ctypes.sizeof(value)))
        return value.value

    # --- lifetime -------------------------------------------------------------
    def close(self):
        """Destroys the primitives, the sdpa context and the backend. The Level
        Zero context goes once the last UsmArray of this device is gone.
        Further calls on the device raise."""
        with self._primitive_lock, self._lock:
            if self._closed:
                return
            self._closed = True
            for primitive in self._primitives.values():
                primitive.destroy()
            self._primitives.clear()
            destroy_context = self._live_allocations == 0
        self._iface.context_destroy(self._context)
        self._sdpa.sdpa_backend_close(self._backend)
        self._ze.close(destroy_context)


_default = None
_default_lock = threading.Lock()


def default_device():
    """The Device the functions of this package use: the one given to
    set_default_device(), else the first Level Zero device with the default
    backend, opened on first use, closed at exit."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Device()
            atexit.register(_default.close)
        return _default


def set_default_device(device):
    """Makes device (a Device, e.g. one bound to a framework's Level Zero
    context) the one the package's functions use; returns the previous one
    (None if none was opened). The caller keeps closing its own Device."""
    global _default
    if not isinstance(device, Device):
        raise TypeError("set_default_device takes a Device, not %s" % type(device).__name__)
    with _default_lock:
        previous, _default = _default, device
        return previous
