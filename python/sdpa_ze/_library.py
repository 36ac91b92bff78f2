"""Finding and loading libsdpa (the front loader) and the Level Zero loader.

libsdpa is searched, first match wins:

1. ``$SDPA_LIBRARY``: the path of libsdpa.so (or of a directory holding it);
2. the build tree, when this package is imported from a checkout of sdpa-ze
   (``python/sdpa_ze`` beside ``src/.libs/libsdpa.so``);
3. the dynamic linker's search path (``libsdpa.so.0``: an install prefix in
   ``/etc/ld.so.conf`` such as /usr/local/lib, or ``LD_LIBRARY_PATH``);
4. the libdir of ``pkg-config sdpa`` (an install prefix that the dynamic
   linker does not search, found through ``PKG_CONFIG_PATH``).

When libsdpa comes from the build tree, the package also points the front
loader at the plugins built there (``SDPA_PLUGIN_DIR``) and the Level Zero
loader at the CPU driver built there (``ZE_ENABLE_ALT_DRIVERS``), unless the
caller set those variables or ``SDPA_ZE_DRIVER=system`` -- what ``make
run-example`` does for the demo.
"""

import ctypes
import os
import subprocess

from . import _abi

# The soname the front loader is installed under (-version-info 0:0:0).
LIBSDPA_SONAME = "libsdpa.so.0"
ZE_LOADER_SONAME = "libze_loader.so.1"


class LibraryNotFoundError(OSError):
    """libsdpa or the Level Zero loader could not be loaded; the message lists
    every place tried."""


def _build_tree_root():
    """The top of the sdpa-ze build tree this package sits in, or None."""
    here = os.path.dirname(os.path.abspath(__file__))
    top = os.path.dirname(os.path.dirname(here))
    if os.path.isfile(os.path.join(top, "src", ".libs", "libsdpa.so")):
        return top
    return None


def _pkg_config_libdir():
    try:
        result = subprocess.run(
            ["pkg-config", "--variable=libdir", "sdpa"],
            capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    libdir = result.stdout.strip()
    return libdir if result.returncode == 0 and libdir else None


def _candidates():
    """(where, path) pairs in search order; path None means 'not applicable'."""
    env = os.environ.get("SDPA_LIBRARY")
    if env:
        path = os.path.join(env, "libsdpa.so") if os.path.isdir(env) else env
        yield "$SDPA_LIBRARY", path
        return  # an explicit choice is not second-guessed
    top = _build_tree_root()
    if top:
        yield "build tree", os.path.join(top, "src", ".libs", "libsdpa.so")
    yield "dynamic linker", LIBSDPA_SONAME
    libdir = _pkg_config_libdir()
    if libdir:
        yield "pkg-config sdpa", os.path.join(libdir, LIBSDPA_SONAME)


def _use_build_tree_environment(top):
    """Mirror run_env.am for a library loaded from the build tree."""
    os.environ.setdefault("SDPA_PLUGIN_DIR", os.path.join(top, "plugin", ".libs"))
    driver = os.path.join(top, "drivers", "ze_cpu", ".libs", "libze_cpu.so")
    if (os.environ.get("SDPA_ZE_DRIVER", "cpu") != "system"
            and "ZE_ENABLE_ALT_DRIVERS" not in os.environ and os.path.isfile(driver)):
        os.environ["ZE_ENABLE_ALT_DRIVERS"] = driver


def _declare(function, restype, argtypes):
    function.restype = restype
    function.argtypes = argtypes
    return function


class Libraries:
    """The two loaded libraries with their prototypes declared.

    Attributes: ``sdpa`` (libsdpa), ``ze`` (libze_loader), ``sdpa_path`` and
    ``origin`` (which search step found libsdpa)."""

    def __init__(self):
        tried = []
        for origin, path in _candidates():
            try:
                # RTLD_GLOBAL is not needed: the plugins link their own loader.
                self.sdpa = ctypes.CDLL(path)
            except OSError as error:
                tried.append("%s: %s" % (origin, error))
                continue
            self.sdpa_path, self.origin = path, origin
            break
        else:
            raise LibraryNotFoundError(
                "cannot load libsdpa (set SDPA_LIBRARY to the path of libsdpa.so): "
                + "; ".join(tried))
        if origin == "build tree":
            _use_build_tree_environment(_build_tree_root())
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
