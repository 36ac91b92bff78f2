"""The package finds sdpa-ze by itself: libsdpa, the backends and the CPU
Level Zero driver, with none of the variables the build tree's run
environment sets (configure's record in _config.py, doc/python.md); and a
Device binds to Level Zero handles that are not its own."""

import os
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
