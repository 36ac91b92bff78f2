"""The few Level Zero calls the package makes itself (ctypes over
libze_loader): the first device, a context, USM allocations and their
properties, and copies on a synchronous immediate command list."""

import ctypes

from ._library import libraries

_vp = ctypes.c_void_p

# ze_structure_type_t values (ze_api.h).
_STYPE_CONTEXT_DESC = 0xD
_STYPE_COMMAND_QUEUE_DESC = 0xE
_STYPE_DEVICE_MEM_ALLOC_DESC = 0x15
_STYPE_HOST_MEM_ALLOC_DESC = 0x16
_STYPE_MEMORY_ALLOCATION_PROPERTIES = 0x17

# ze_memory_type_t, by the names this package uses.
MEMORY_KINDS = {0: None, 1: "host", 2: "device", 3: "shared"}

_COMMAND_QUEUE_MODE_SYNCHRONOUS = 1
_COMMAND_QUEUE_PRIORITY_NORMAL = 0

# Allocations start on a 256-byte boundary, as DLPack recommends.
ALIGNMENT = 256


class LevelZeroError(RuntimeError):
    """A Level Zero call failed. ``function`` names it and ``result`` is its
    ze_result_t."""

    def __init__(self, function, result, hint=""):
        self.function, self.result = function, result
        super().__init__("%s failed: ze_result_t 0x%x%s" % (function, result, hint))


class _ContextDesc(ctypes.Structure):
    _fields_ = [("stype", ctypes.c_int), ("pNext", _vp), ("flags", ctypes.c_uint32)]


class _DeviceMemAllocDesc(ctypes.Structure):
    _fields_ = [("stype", ctypes.c_int), ("pNext", _vp), ("flags", ctypes.c_uint32),
                ("ordinal", ctypes.c_uint32)]


class _HostMemAllocDesc(ctypes.Structure):
    _fields_ = [("stype", ctypes.c_int), ("pNext", _vp), ("flags", ctypes.c_uint32)]


class _MemoryAllocationProperties(ctypes.Structure):
    _fields_ = [("stype", ctypes.c_int), ("pNext", _vp), ("type", ctypes.c_int),
                ("id", ctypes.c_uint64), ("pageSize", ctypes.c_uint64)]


class _CommandQueueDesc(ctypes.Structure):
    _fields_ = [("stype", ctypes.c_int), ("pNext", _vp), ("ordinal", ctypes.c_uint32),
                ("index", ctypes.c_uint32), ("flags", ctypes.c_uint32), ("mode", ctypes.c_int),
                ("priority", ctypes.c_int)]


def _check(function, result, hint=""):
    if result != 0:
        raise LevelZeroError(function, result, hint)


class ZeDevice:
    """A Level Zero device and a context on it: device ``ordinal`` of driver
    ``driver_index`` with a context of its own (created here, destroyed by
    close()), or the caller's ``context`` and ``device`` handles (ints),
    which this object never destroys.

    ``driver``, ``device`` and ``context`` are the raw handles (ints), for a
    caller that wants to share them with other Level Zero code; ``owned``
    says whether the context is this object's."""

    def __init__(self, driver_index=0, ordinal=0, context=None, device=None):
        ze = libraries().ze
        self._ze = ze
        self._copy_list = None
        no_driver = (" (no Level Zero driver: on a machine without an Intel GPU, install "
                     "sdpa-ze with its CPU driver (configure --enable-cpu-driver) or set "
                     "ZE_ENABLE_ALT_DRIVERS to libze_cpu.so)")
        _check("zeInit", ze.zeInit(0), no_driver)
        if (context is None) != (device is None):
            raise ValueError("ze_context and ze_device go together: pass both handles or "
                             "neither")
        if context is not None:
            self.driver, self.device, self.context = None, int(device), int(context)
            self.ordinal, self.owned = int(ordinal), False
            return
        drivers = self._list("zeDriverGet", lambda n, a: ze.zeDriverGet(n, a), no_driver)
        if not 0 <= driver_index < len(drivers):
            raise ValueError("driver %d: Level Zero lists %d driver(s)"
                             % (driver_index, len(drivers)))
        driver = drivers[driver_index]
        devices = self._list("zeDeviceGet", lambda n, a: ze.zeDeviceGet(driver, n, a),
                             " (the driver has no device)")
        if not 0 <= ordinal < len(devices):
            raise ValueError("ordinal %d: driver %d has %d device(s)"
                             % (ordinal, driver_index, len(devices)))
        desc, context = _ContextDesc(_STYPE_CONTEXT_DESC, None, 0), _vp()
        _check("zeContextCreate", ze.zeContextCreate(driver, ctypes.byref(desc),
                                                     ctypes.byref(context)))
        self.driver, self.device, self.context = driver, devices[ordinal], context.value
        self.ordinal, self.owned = ordinal, True  # the device's index in zeDeviceGet's list

    @staticmethod
    def _list(function, call, hint):
        """The handles a zeXxxGet(count, handles) call lists (at least one)."""
        count = ctypes.c_uint32(0)
        _check(function, call(ctypes.byref(count), None), hint)
        if count.value == 0:
            raise LevelZeroError(function, 0, hint)
        handles = (_vp * count.value)()
        _check(function, call(ctypes.byref(count), handles), hint)
        return [handles[i] for i in range(count.value)]

    def allocate(self, nbytes, kind):
        """A USM allocation of nbytes (> 0) of kind "shared", "host" or
        "device"; returns its address. The caller frees it with free()."""
        ze, pointer = self._ze, _vp()
        device_desc = _DeviceMemAllocDesc(_STYPE_DEVICE_MEM_ALLOC_DESC, None, 0, 0)
        host_desc = _HostMemAllocDesc(_STYPE_HOST_MEM_ALLOC_DESC, None, 0)
        if kind == "shared":
            result = ze.zeMemAllocShared(self.context, ctypes.byref(device_desc),
                                         ctypes.byref(host_desc), nbytes, ALIGNMENT, self.device,
                                         ctypes.byref(pointer))
        elif kind == "host":
            result = ze.zeMemAllocHost(self.context, ctypes.byref(host_desc), nbytes, ALIGNMENT,
                                       ctypes.byref(pointer))
        elif kind == "device":
            result = ze.zeMemAllocDevice(self.context, ctypes.byref(device_desc), nbytes,
                                         ALIGNMENT, self.device, ctypes.byref(pointer))
        else:
            raise ValueError("memory = %r: expected 'shared', 'host' or 'device'" % (kind,))
        _check("zeMemAlloc%s(%d bytes)" % (kind.capitalize(), nbytes), result)
        return pointer.value

    def free(self, address):
        _check("zeMemFree", self._ze.zeMemFree(self.context, address))

    def memory_kind(self, address):
        """"host", "shared" or "device" if address lies in a USM allocation of
        this context, else None."""
        if not address:
            return None
        props = _MemoryAllocationProperties(_STYPE_MEMORY_ALLOCATION_PROPERTIES, None, 0, 0, 0)
        result = self._ze.zeMemGetAllocProperties(self.context, address, ctypes.byref(props), None)
        _check("zeMemGetAllocProperties", result)
        return MEMORY_KINDS.get(props.type)

    def address_range(self, address):
        """(base, size) of the USM allocation holding address."""
        base, size = _vp(), ctypes.c_size_t()
        _check("zeMemGetAddressRange", self._ze.zeMemGetAddressRange(
            self.context, address, ctypes.byref(base), ctypes.byref(size)))
        return base.value or 0, size.value

    def copy(self, dst, src, nbytes):
        """Copies nbytes between any USM or host addresses and waits."""
        ze = self._ze
        if self._copy_list is None:
            desc = _CommandQueueDesc(_STYPE_COMMAND_QUEUE_DESC, None, 0, 0, 0,
                                     _COMMAND_QUEUE_MODE_SYNCHRONOUS,
                                     _COMMAND_QUEUE_PRIORITY_NORMAL)
            handle = _vp()
            _check("zeCommandListCreateImmediate", ze.zeCommandListCreateImmediate(
                self.context, self.device, ctypes.byref(desc), ctypes.byref(handle)))
            self._copy_list = handle.value
        _check("zeCommandListAppendMemoryCopy", ze.zeCommandListAppendMemoryCopy(
            self._copy_list, dst, src, nbytes, None, 0, None))

    def close(self, destroy_context):
        """Destroys the copy list, and the context if destroy_context (only
        when no allocation of it is alive) and it is this object's."""
        if self._copy_list is not None:
            self._ze.zeCommandListDestroy(self._copy_list)
            self._copy_list = None
        if destroy_context and self.context and self.owned:
            self._ze.zeContextDestroy(self.context)
            self.context = None
