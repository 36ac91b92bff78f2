"""Finding and loading libsdpa (the front loader) and the Level Zero loader,
and choosing the backends' directory and the Level Zero driver, so that the
first call works with no environment variable set.

libsdpa is searched, first match wins:

1. ``$SDPA_LIBRARY``: the path of libsdpa.so (or of a directory holding it);
2. the build tree, when this package is imported from a checkout of sdpa-ze
   (``python/sdpa_ze`` beside ``src/.libs/libsdpa.so``);
3. the build tree configure recorded in ``_config.py`` (a package installed
   with pip from a configured tree);
4. the install prefix configure recorded (``LIBDIR/libsdpa.so.0``);
5. the dynamic linker's search path (``libsdpa.so.0``: an install prefix in
   ``/etc/ld.so.conf`` such as /usr/local/lib, or ``LD_LIBRARY_PATH``);
6. the libdir of ``pkg-config sdpa`` (an install found through
   ``PKG_CONFIG_PATH``).

Each place also says where its backends and its CPU Level Zero driver are:
the build tree's plugin/.libs and drivers/ze_cpu/.libs; an install's
plugin directory and ``cpu_driver`` (from _config.py, else from sdpa.pc's
variables). The backends are then opened by path (unless
``$SDPA_PLUGIN_DIR`` or a path is given), and the Level Zero loader is
pointed at the CPU driver through ``ZE_ENABLE_ALT_DRIVERS`` before zeInit
when ``SDPA_ZE_DRIVER`` asks for it: ``cpu`` always, ``system`` never,
unset or ``auto`` only when there is no Intel GPU with its driver
(intel_gpu_present) and ZE_ENABLE_ALT_DRIVERS is unset. The CPU driver finds Intel's
CPU OpenCL runtime by itself (the engine configure found; doc/cpu-driver.md).
"""

import ctypes
import ctypes.util
import glob
import os
import re
import subprocess

from . import _abi

try:
    from . import _config
except ImportError:  # sources not configured: no recorded locations
    _config = None

# The soname the front loader is installed under (-version-info 0:0:0).
LIBSDPA_SONAME = "libsdpa.so.0"
ZE_LOADER_SONAME = "libze_loader.so.1"
# The Level Zero driver of Intel GPUs, which the loader finds by itself.
GPU_DRIVER_NAME = "ze_intel_gpu"


class LibraryNotFoundError(OSError):
    """libsdpa or the Level Zero loader could not be loaded; the message lists
    every place tried."""


class Place:
    """Where a libsdpa comes from: ``origin`` (which search step), ``library``
    (the path or soname to load), ``plugin_dir`` (its backends, or None:
    libsdpa's own default) and ``cpu_driver`` (the CPU Level Zero driver
    there, or None)."""

    def __init__(self, origin, library, plugin_dir=None, cpu_driver=None):
        self.origin, self.library = origin, library
        self.plugin_dir, self.cpu_driver = plugin_dir, cpu_driver


def _build_tree_place(origin, top):
    library = os.path.join(top, "src", ".libs", "libsdpa.so")
    if not os.path.isfile(library):
        return None
    return Place(origin, library, os.path.join(top, "plugin", ".libs"),
                 os.path.join(top, "drivers", "ze_cpu", ".libs", "libze_cpu.so"))


def _checkout_root():
    """The top of the sdpa-ze build tree this package sits in, or None."""
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.dirname(os.path.dirname(here))


def expand(value, variables):
    """value with make's ${name} references replaced from variables
    (recursively), as configure leaves them in prefix-relative paths."""
    for _ in range(8):
        expanded = re.sub(r"\$\{(\w+)\}", lambda m: variables.get(m.group(1), m.group(0)),
                          value)
        if expanded == value:
            break
        value = expanded
    return value


def _recorded_install():
    if _config is None or not getattr(_config, "VARIABLES", None):
        return None
    variables = dict(_config.VARIABLES)
    libdir = expand(variables["libdir"], variables)
    variables["libdir"] = libdir
    return Place("configured prefix", os.path.join(libdir, LIBSDPA_SONAME),
                 expand(_config.PLUGIN_DIR, variables) or None,
                 expand(_config.CPU_DRIVER, variables) or None)


def pkg_config_variables():
    """libdir, plugindir and cpu_driver of the installed sdpa.pc, as a dict
    (empty when pkg-config or sdpa.pc is missing)."""
    found = {}
    for name in ("libdir", "plugindir", "cpu_driver"):
        try:
            result = subprocess.run(["pkg-config", "--variable=" + name, "sdpa"],
                                    capture_output=True, text=True, timeout=10, check=False)
        except (OSError, subprocess.SubprocessError):
            return {}
        if result.returncode != 0:
            return {}
        found[name] = result.stdout.strip()
    return found


def _pkg_config_place(variables):
    if not variables.get("libdir"):
        return None
    return Place("pkg-config sdpa", os.path.join(variables["libdir"], LIBSDPA_SONAME),
                 variables.get("plugindir") or None, variables.get("cpu_driver") or None)


def _candidates():
    """The Places to try, in search order."""
    env = os.environ.get("SDPA_LIBRARY")
    if env:
        path = os.path.join(env, "libsdpa.so") if os.path.isdir(env) else env
        # An explicit choice is not second-guessed; a build tree around it
        # still gives its plugins and driver.
        top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(path))))
        tree = _build_tree_place("$SDPA_LIBRARY", top)
        yield Place("$SDPA_LIBRARY", path, tree.plugin_dir if tree else None,
                    tree.cpu_driver if tree else None)
        return
    for origin, top in (("build tree", _checkout_root()),
                        ("configured build tree", getattr(_config, "BUILD_TREE", None))):
        place = _build_tree_place(origin, top) if top else None
        if place:
            yield place
    recorded = _recorded_install()
    if recorded and os.path.isfile(recorded.library):
        yield recorded
    variables = pkg_config_variables()
    linker = _pkg_config_place(variables) or recorded
    yield Place("dynamic linker", LIBSDPA_SONAME, linker.plugin_dir if linker else None,
                linker.cpu_driver if linker else None)
    place = _pkg_config_place(variables)
    if place:
        yield place


def intel_gpu_present():
    """True if an Intel GPU and its Level Zero driver are there: a render
    node whose PCI vendor is Intel (0x8086) and libze_intel_gpu installed.
    The driver alone is not enough: it is often installed on machines
    without the GPU, where zeInit then finds no device."""
    for vendor in glob.glob("/sys/class/drm/renderD*/device/vendor"):
        try:
            with open(vendor) as f:
                if f.read().strip().lower() == "0x8086":
                    return ctypes.util.find_library(GPU_DRIVER_NAME) is not None
        except OSError:
            continue
    return False


def choose_driver(cpu_driver):
    """Points the Level Zero loader at cpu_driver when SDPA_ZE_DRIVER says so
    (see the module's comment); returns the driver chosen, or None (the
    loader's own choice). Must run before the first zeInit of the process."""
    mode = os.environ.get("SDPA_ZE_DRIVER", "auto")
    if mode not in ("auto", "cpu", "system"):
        raise ValueError("SDPA_ZE_DRIVER = %r: expected auto, cpu or system" % mode)
    if mode == "system" or not cpu_driver or not os.path.isfile(cpu_driver):
        return None
    if mode == "auto" and ("ZE_ENABLE_ALT_DRIVERS" in os.environ or intel_gpu_present()):
        return None
    os.environ["ZE_ENABLE_ALT_DRIVERS"] = cpu_driver
    return cpu_driver


def _declare(function, restype, argtypes):
    function.restype = restype
    function.argtypes = argtypes
    return function


class Libraries:
    """The two loaded libraries with their prototypes declared.

    Attributes: ``sdpa`` (libsdpa), ``ze`` (libze_loader), ``sdpa_path``,
    ``origin`` (which search step found libsdpa), ``place`` (its Place) and
    ``cpu_driver`` (the driver given to the Level Zero loader, or None)."""

    def backend_path(self, name):
        """What to hand sdpa_backend_open for backend name (None: $SDPA_BACKEND,
        else "ze"): the plugin's path in this libsdpa's plugin directory when
        the name is short, $SDPA_PLUGIN_DIR is unset and the file is there;
        else the name itself (libsdpa searches)."""
        name = name or os.environ.get("SDPA_BACKEND") or "ze"
        plugin_dir = self.place.plugin_dir
        if "/" in name or "SDPA_PLUGIN_DIR" in os.environ or not plugin_dir:
            return name
        path = os.path.join(plugin_dir, "libsdpa_%s.so" % name)
        return path if os.path.isfile(path) else name

    def __init__(self):
        tried = []
        for place in _candidates():
            try:
                # RTLD_GLOBAL is not needed: the plugins link their own loader.
                self.sdpa = ctypes.CDLL(place.library)
            except OSError as error:
                tried.append("%s: %s" % (place.origin, error))
                continue
            self.sdpa_path, self.origin, self.place = place.library, place.origin, place
            break
        else:
            raise LibraryNotFoundError(
                "cannot load libsdpa (set SDPA_LIBRARY to the path of libsdpa.so): "
                + "; ".join(tried))
        self.cpu_driver = choose_driver(place.cpu_driver)
        try:
            self.ze = ctypes.CDLL(ZE_LOADER_SONAME)
        except OSError as error:
            raise LibraryNotFoundError(
                "cannot load the Level Zero loader %s (apt-get install libze1): %s"
                % (ZE_LOADER_SONAME, error)) from None
        self._declare_sdpa()
        self._declare_ze()

    def _declare_sdpa(self):
        s, P, c_int, c_char_p = self.sdpa, ctypes.POINTER, ctypes.c_int, ctypes.c_char_p
        vp = ctypes.c_void_p
        _declare(s.sdpa_backend_open, c_int, [c_char_p, P(vp)])
        _declare(s.sdpa_backend_get_iface, P(_abi.BackendIface), [vp])
        _declare(s.sdpa_backend_path, c_char_p, [vp])
        _declare(s.sdpa_backend_close, None, [vp])
        _declare(s.sdpa_loader_last_error, c_char_p, [])
        _declare(s.sdpa_status_name, c_char_p, [c_int])

    def _declare_ze(self):
        z, P, u32, vp = self.ze, ctypes.POINTER, ctypes.c_uint32, ctypes.c_void_p
        r = ctypes.c_uint32  # ze_result_t
        _declare(z.zeInit, r, [u32])
        _declare(z.zeDriverGet, r, [P(u32), P(vp)])
        _declare(z.zeDeviceGet, r, [vp, P(u32), P(vp)])
        _declare(z.zeContextCreate, r, [vp, vp, P(vp)])
        _declare(z.zeContextDestroy, r, [vp])
        _declare(z.zeMemAllocShared, r, [vp, vp, vp, ctypes.c_size_t, ctypes.c_size_t, vp, P(vp)])
        _declare(z.zeMemAllocHost, r, [vp, vp, ctypes.c_size_t, ctypes.c_size_t, P(vp)])
        _declare(z.zeMemAllocDevice, r, [vp, vp, ctypes.c_size_t, ctypes.c_size_t, vp, P(vp)])
        _declare(z.zeMemFree, r, [vp, vp])
        _declare(z.zeMemGetAllocProperties, r, [vp, vp, vp, P(vp)])
        _declare(z.zeMemGetAddressRange, r, [vp, vp, P(vp), P(ctypes.c_size_t)])
        _declare(z.zeCommandListCreateImmediate, r, [vp, vp, vp, P(vp)])
        _declare(z.zeCommandListDestroy, r, [vp])
        _declare(z.zeCommandListAppendMemoryCopy,
                 r, [vp, vp, vp, ctypes.c_size_t, vp, u32, vp])


_libraries = None


def libraries():
    """The loaded libraries (loaded on first call)."""
    global _libraries
    if _libraries is None:
        _libraries = Libraries()
    return _libraries
