"""Errors: the C ABI's refusals as SdpaError (status name and the backend's
message naming the field), the binding's own as TypeError/ValueError."""

import os
import subprocess
import sys

import numpy as np
import pytest

import sdpa_ze


def arrays(*shapes, dtype=np.float32):
    return [np.zeros(s, dtype=dtype) for s in shapes]


def test_head_size_mismatch(device):
    q, k, v = arrays((1, 2, 8, 64), (1, 2, 8, 32), (1, 2, 8, 64))
    with pytest.raises(sdpa_ze.SdpaError) as caught:
        sdpa_ze.attention(q, k, v)
    e = caught.value
    assert e.call == "primitive_create"
    assert e.status == 1 and e.status_name == "SDPA_ERROR_INVALID_ARGUMENT"
    assert "k.dims[3] = 32" in e.message
    assert str(e).startswith("primitive_create: SDPA_ERROR_INVALID_ARGUMENT: ")


def test_heads_not_a_multiple(device):
    q, k, v = arrays((1, 3, 8, 64), (1, 2, 8, 64), (1, 2, 8, 64))
    with pytest.raises(sdpa_ze.SdpaError, match="SDPA_ERROR_INVALID_ARGUMENT.*dims\\[1\\]"):
        sdpa_ze.attention(q, k, v)


def test_mask_that_does_not_broadcast(device):
    q, k, v = arrays((1, 2, 8, 64), (1, 2, 8, 64), (1, 2, 8, 64))
    with pytest.raises(sdpa_ze.SdpaError, match="mask"):
        sdpa_ze.attention(q, k, v, mask=np.zeros((3, 8), dtype=np.float32))


def test_binding_errors_name_the_argument(device):
    q, k, v = arrays((1, 2, 8, 64), (1, 2, 8, 64), (1, 2, 8, 64))
    with pytest.raises(TypeError, match="q: dtype float64"):
        sdpa_ze.attention(q.astype(np.float64), k, v)
    with pytest.raises(ValueError, match="v: shape \\(2, 8, 64\\)"):
        sdpa_ze.attention(q, k, v[0])
    with pytest.raises(ValueError, match="mask and causal"):
        sdpa_ze.attention(q, k, v, causal=True, mask=np.zeros((8, 8), dtype=np.float32))
    with pytest.raises(ValueError, match="causal = 'left'"):
        sdpa_ze.attention(q, k, v, causal="left")
    with pytest.raises(TypeError, match="k: dtype bool is not accepted here"):
        sdpa_ze.attention(q, k.astype(bool), v)
    readonly = np.zeros_like(q)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="out: the array is read-only"):
        sdpa_ze.attention(q, k, v, out=readonly)


def test_backward_lse_must_match(device):
    q, k, v = arrays((1, 2, 8, 64), (1, 2, 8, 64), (1, 2, 8, 64))
    with pytest.raises(ValueError, match="lse: shape \\(1, 2, 7\\)"):
        sdpa_ze.attention_backward(q, q, k, v, q, np.zeros((1, 2, 7), dtype=np.float32))


def test_unknown_backend():
    with pytest.raises(sdpa_ze.SdpaError) as caught:
        sdpa_ze.Device(backend="no-such-backend")
    e = caught.value
    assert e.call == "sdpa_backend_open"
    assert e.status_name == "SDPA_ERROR_BACKEND_NOT_FOUND"
    assert "libsdpa_no-such-backend.so" in e.message


def test_library_not_found():
    """SDPA_LIBRARY names the library; a wrong one is reported, not bypassed."""
    env = dict(os.environ, SDPA_LIBRARY="/nonexistent/libsdpa.so")
    code = ("import sdpa_ze\n"
            "try:\n"
            "    sdpa_ze.default_device()\n"
            "except sdpa_ze.LibraryNotFoundError as e:\n"
            "    print('refused:', e)\n")
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                            text=True, timeout=120, check=True)
    assert "refused: cannot load libsdpa" in result.stdout
    assert "$SDPA_LIBRARY: /nonexistent/libsdpa.so" in result.stdout
