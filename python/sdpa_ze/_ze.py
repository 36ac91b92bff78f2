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
    """The first device of the first Level Zero driver, and a context on it.

    ``driver``, ``device`` and ``context`` are the raw handles (ints), for a
    caller that wants to share them with other Level Zero code."""

    def __init__(self):
        ze = libraries().ze
        self._ze = ze
        no_driver = (" (no Level Zero driver: on a machine without an Intel GPU, set "
                     "ZE_ENABLE_ALT_DRIVERS to the CPU driver libze_cpu.so)")
        _check("zeInit", ze.zeInit(0), no_driver)
        count, driver = ctypes.c_uint32(1), _vp()
        _check("zeDriverGet", ze.zeDriverGet(ctypes.byref(count), ctypes.byref(driver)), no_driver)
        if count.value == 0:
            raise LevelZeroError("zeDriverGet", 0, no_driver)
        count, device = ctypes.c_uint32(1), _vp()
        _check("zeDeviceGet", ze.zeDeviceGet(driver, ctypes.byref(count), ctypes.byref(device)))
        if count.value == 0:
            raise LevelZeroError("zeDeviceGet", 0, " (the driver has no device)")
        desc, context = _ContextDesc(_STYPE_CONTEXT_DESC, None, 0), _vp()
        _check("zeContextCreate", ze.zeContextCreate(driver, ctypes.byref(desc),
                                                     ctypes.byref(context)))
        self.driver, self.device, self.context = driver.value, device.value, context.value
        self.ordinal = 0  # the device's index in zeDeviceGet's list
        self._copy_list = None

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
        when no allocation of it is alive)."""
        if self._copy_list is not None:
            self._ze.zeCommandListDestroy(self._copy_list)
            self._copy_list = None
        if destroy_context and self.context:
            self._ze.zeContextDestroy(self.context)
            self.context = None
