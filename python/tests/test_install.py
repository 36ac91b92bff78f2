"""The package finds sdpa-ze by itself: libsdpa, the backends and the CPU
Level Zero driver, with none of the variables the build tree's run
environment sets (configure's record in _config.py, doc/python.md); and a
Device binds to Level Zero handles that are not its own."""

import os
import shutil
import subprocess
import sys

import numpy as np

import sdpa_ze

from conftest import uniform
import reference as ref

FOUND_BY_ITSELF = """
import numpy as np, os, sdpa_ze
q = np.linspace(-1, 1, 2 * 16 * 64, dtype=np.float32).reshape(1, 2, 16, 64)
o = sdpa_ze.attention(q, q, q)
from sdpa_ze import _library
libs = _library.libraries()
print("origin:", libs.origin)
print("backend:", sdpa_ze.default_device().backend_path)
print("driver:", os.environ.get("ZE_ENABLE_ALT_DRIVERS"))
print("shape:", o.shape)
"""


def test_first_call_needs_no_environment():
    env = {k: v for k, v in os.environ.items()
           if k not in ("SDPA_LIBRARY", "SDPA_PLUGIN_DIR", "ZE_ENABLE_ALT_DRIVERS",
                        "SDPA_BACKEND", "SDPA_ZE_DRIVER")}
    result = subprocess.run([sys.executable, "-c", FOUND_BY_ITSELF], env=env,
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "build tree" in out, out  # from the checkout, or recorded by configure
    assert "libsdpa_ze.so" in out and "libze_cpu.so" in out and "shape: (1, 2, 16, 64)" in out


def fake_prefix(tmp_path):
    """An install prefix made of links to this build's libraries, laid out
    as make install lays them (LIBDIR/libsdpa.so.0, LIBDIR/sdpa-ze/...),
    and a copy of the package outside any build tree."""
    from sdpa_ze import _library
    top = _library.libraries().place
    build = os.path.dirname(os.path.dirname(os.path.dirname(_library.libraries().sdpa_path)))
    libdir = tmp_path / "prefix" / "lib"
    (libdir / "sdpa-ze").mkdir(parents=True)
    os.symlink(os.path.realpath(_library.libraries().sdpa_path), libdir / "libsdpa.so.0")
    for name in ("libsdpa_ze.so", "libsdpa_ref.so"):
        os.symlink(os.path.join(top.plugin_dir, name), libdir / "sdpa-ze" / name)
    os.symlink(os.path.join(build, "drivers", "ze_cpu", ".libs", "libze_cpu.so"),
               libdir / "sdpa-ze" / "libze_cpu.so")
    package = tmp_path / "site" / "sdpa_ze"
    shutil.copytree(os.path.dirname(sdpa_ze.__file__), package,
                    ignore=shutil.ignore_patterns("__pycache__", "_config.py"))
    return tmp_path / "prefix", package


def run_probe(package, **extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("SDPA_LIBRARY", "SDPA_PLUGIN_DIR", "ZE_ENABLE_ALT_DRIVERS",
                        "SDPA_BACKEND", "SDPA_ZE_DRIVER", "PKG_CONFIG_PATH")}
    env.update(extra, PYTHONPATH=str(package.parent))
    result = subprocess.run([sys.executable, "-c", FOUND_BY_ITSELF], env=env,
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_found_in_an_install_prefix(tmp_path):
    """A package whose build tree is gone finds the prefix configure
    recorded; one without any record finds it through pkg-config sdpa's
    libdir, plugindir and cpu_driver."""
    prefix, package = fake_prefix(tmp_path)
    (package / "_config.py").write_text(
        'BUILD_TREE = "/nonexistent"\n'
        'VARIABLES = {"prefix": "%s", "exec_prefix": "${prefix}", "libdir": "${exec_prefix}/lib",'
        ' "pkglibdir": "${libdir}/sdpa-ze"}\n'
        'PLUGIN_DIR = "${pkglibdir}"\nCPU_DRIVER = "${libdir}/sdpa-ze/libze_cpu.so"\n' % prefix)
    out = run_probe(package)
    assert "origin: configured prefix" in out, out
    assert "backend: %s/lib/sdpa-ze/libsdpa_ze.so" % prefix in out, out
    assert "driver: %s/lib/sdpa-ze/libze_cpu.so" % prefix in out, out

    (package / "_config.py").unlink()
    pkgconfig = prefix / "lib" / "pkgconfig"
    pkgconfig.mkdir()
    (pkgconfig / "sdpa.pc").write_text(
        "prefix=%s\nlibdir=${prefix}/lib\nplugindir=${libdir}/sdpa-ze\n"
        "cpu_driver=${libdir}/sdpa-ze/libze_cpu.so\n\nName: sdpa\nDescription: test\n"
        "Version: 0\nLibs: -L${libdir} -lsdpa\n" % prefix)
    out = run_probe(package, PKG_CONFIG_PATH=str(pkgconfig))
    assert "origin: pkg-config sdpa" in out, out
    assert "driver: %s/lib/sdpa-ze/libze_cpu.so" % prefix in out, out


def test_expand_make_variables():
    from sdpa_ze._library import expand
    variables = {"prefix": "/opt/x", "exec_prefix": "${prefix}", "libdir": "${exec_prefix}/lib"}
    assert expand("${libdir}/sdpa-ze", variables) == "/opt/x/lib/sdpa-ze"
    assert expand("${unknown}/a", variables) == "${unknown}/a"


def test_device_bound_to_existing_handles(device, rng):
    """A second Device on the first one's Level Zero context and device (as a
    framework would pass its own): the first device's USM is used in place,
    and closing the second leaves the context alive."""
    z = device._ze
    bound = sdpa_ze.Device(ze_context=z.context, ze_device=z.device)
    try:
        q, k, v = (sdpa_ze.asarray(uniform(rng, (1, 2, 40, 64))) for _ in range(3))
        staged = bound.stats["staged"]
        o = sdpa_ze.attention(q, k, v, device=bound)
        assert bound.stats["staged"] == staged
        want, _ = ref.forward(q.numpy(), k.numpy(), v.numpy())
        ref.assert_close(o.numpy(), want, ref.forward_tolerance(40, 64), "float32", "O (bound)")
    finally:
        bound.close()
    o = sdpa_ze.attention(q, k, v)  # the context is still the first device's
    assert np.isfinite(o.numpy()).all()


def test_device_by_ordinal_refuses_a_missing_one():
    import pytest
    with pytest.raises(ValueError, match="ordinal 7"):
        sdpa_ze.Device(ordinal=7)
    with pytest.raises(ValueError, match="ze_context and ze_device go together"):
        sdpa_ze.Device(ze_context=1)
