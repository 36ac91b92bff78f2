"""Fixtures shared by the Python tests: the default device, random inputs
exactly representable in each dtype."""

import numpy as np
import pytest

import sdpa_ze


@pytest.fixture(scope="session")
def device():
    return sdpa_ze.default_device()


def uniform(rng, shape, dtype="float32"):
    """Values in [-1, 1) exactly representable in dtype, as float32 (or
    float16) NumPy arrays; bfloat16 values come as float32."""
    values = rng.uniform(-1, 1, size=shape).astype(np.float32)
    if dtype == "float16":
        return values.astype(np.float16)
    if dtype == "bfloat16":
        from sdpa_ze import _dtypes
        return _dtypes.float32_from_bfloat16(_dtypes.bfloat16_from_float32(values))
    return values


@pytest.fixture
def rng(request):
    # One stream per test, stable across runs and test orders.
    seed = sum(ord(c) for c in request.node.nodeid)
    return np.random.default_rng(seed)


class DLPackOnly:
    """Another library's tensor: only __dlpack__ and __dlpack_device__ of the
    wrapped array, optionally forcing the export to a given device."""

    def __init__(self, array, dl_device=None):
        self._array, self._dl_device = array, dl_device

    def __dlpack__(self, **kwargs):
        if self._dl_device is not None:
            kwargs["dl_device"] = self._dl_device
        try:
            return self._array.__dlpack__(**kwargs)
        except TypeError:  # NumPy < 2 takes stream only
            kwargs.pop("max_version", None)
            return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        if self._dl_device is not None:
            return tuple(self._dl_device)
        return self._array.__dlpack_device__()
