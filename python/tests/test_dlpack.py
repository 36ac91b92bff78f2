"""DLPack and NumPy exchange: round trips, capsule lifetimes, and the
no-copy path for memory that already is USM."""

import gc

import numpy as np
import pytest

import sdpa_ze
from sdpa_ze import _dlpack

import reference as ref
from conftest import DLPackOnly, uniform

KDL_CPU, KDL_CUDA, KDL_ONEAPI = 1, 2, 14


def numpy_version():
    return tuple(int(part) for part in np.__version__.split(".")[:2])


def test_usm_array_reports_oneapi(device):
    a = sdpa_ze.empty((2, 3), "float16")
    assert a.__dlpack_device__() == (KDL_ONEAPI, device.ordinal)
    assert device.memory_kind(a.address) == "shared" == a.memory


def test_numpy_producer_is_consumed(device, rng):
    """NumPy's own __dlpack__ export (kDLCPU, host memory) as an input: staged,
    and the result equals the one from the plain arrays."""
    q, k, v = (uniform(rng, (1, 4, 72, 64)) for _ in range(3))
    staged = device.stats["staged"]
    o = sdpa_ze.attention(DLPackOnly(q), DLPackOnly(k), DLPackOnly(v))
    assert device.stats["staged"] == staged + 3
    assert isinstance(o, np.ndarray)
    assert np.array_equal(o, sdpa_ze.attention(q, k, v))


@pytest.mark.parametrize("max_version", [None, (1, 0)])
def test_our_export_round_trips_without_copy(device, rng, max_version):
    """Our capsule (legacy or versioned) taken back by our consumer is the
    same memory; the deleter runs when the consumer lets go."""
    a = sdpa_ze.asarray(uniform(rng, (2, 3, 5)))
    before = _dlpack.exported_count()
    capsule = a.__dlpack__(max_version=max_version)
    assert _dlpack.exported_count() == before + 1

    class Producer:
        def __dlpack__(self, **kwargs):
            return capsule

        def __dlpack_device__(self):
            return a.__dlpack_device__()

    b = sdpa_ze.from_dlpack(Producer())
    assert b.address == a.address and b.shape == a.shape and b.memory == "shared"
    assert np.array_equal(b.numpy(), a.numpy())
    del b, capsule
    gc.collect()
    assert _dlpack.exported_count() == before


def test_unconsumed_capsule_releases(device):
    """A capsule dropped unconsumed, or refused by a consumer (NumPy cannot
    take kDLOneAPI): its tensor is released, and the consumer's exception
    comes through."""
    a = sdpa_ze.empty((4,))
    before = _dlpack.exported_count()
    for max_version in (None, (1, 0)):
        capsule = a.__dlpack__(max_version=max_version)
        assert _dlpack.exported_count() == before + 1
        del capsule
        assert _dlpack.exported_count() == before
    with pytest.raises((BufferError, RuntimeError), match="device"):
        np.from_dlpack(DLPackOnly(a))
    assert _dlpack.exported_count() == before


def test_numpy_consumes_host_visible_usm(device, rng):
    """NumPy's from_dlpack on our export asked for kDLCPU: the same memory."""
    values = uniform(rng, (3, 7))
    a = sdpa_ze.asarray(values)
    viewed = np.from_dlpack(DLPackOnly(a, dl_device=(KDL_CPU, 0)))
    assert viewed.__array_interface__["data"][0] == a.address
    assert np.array_equal(viewed, values)
    a.numpy()[0, 0] = 42  # writes through the same memory
    assert viewed[0, 0] == 42


@pytest.mark.skipif(numpy_version() < (2, 1), reason="NumPy < 2.1 has no from_dlpack(device=)")
def test_numpy2_from_dlpack_device_cpu(device, rng):
    values = uniform(rng, (3, 7))
    a = sdpa_ze.asarray(values)
    viewed = np.from_dlpack(a, device="cpu")
    assert viewed.__array_interface__["data"][0] == a.address
    # kDLOneAPI, which NumPy cannot take as it is; its error must come through
    # (a capsule it refuses dies with that exception pending).
    with pytest.raises((BufferError, RuntimeError), match="device"):
        np.from_dlpack(a)


def test_device_memory_exports_to_cpu_only_as_copy(device, rng):
    values = uniform(rng, (4, 5))
    a = sdpa_ze.asarray(values, memory="device")
    assert a.memory == "device" and np.array_equal(a.numpy(), values)
    with pytest.raises(BufferError):
        a.__dlpack__(dl_device=(KDL_CPU, 0), copy=False)
    copied = np.from_dlpack(DLPackOnly(a, dl_device=(KDL_CPU, 0)))  # copy=None allows it
    assert np.array_equal(copied, values)
    assert copied.__array_interface__["data"][0] != a.address


def test_usm_passes_through_dlpack_without_copy(device, rng):
    """kDLOneAPI tensors of our context (another library's view of USM) are
    used in place, outputs included: nothing staged, out written in place."""
    q, k, v = (uniform(rng, (1, 4, 72, 64)) for _ in range(3))
    usm = [sdpa_ze.asarray(x) for x in (q, k, v)]
    out = sdpa_ze.empty(q.shape)
    staged, allocations = device.stats["staged"], device.stats["allocations"]
    result = sdpa_ze.attention(*(DLPackOnly(u) for u in usm), out=DLPackOnly(out))
    assert device.stats["staged"] == staged
    assert device.stats["allocations"] == allocations
    assert isinstance(result, DLPackOnly)
    ref.assert_close(out.numpy(), ref.forward(q, k, v)[0], ref.forward_tolerance(72, 64),
                     "float32", "O written in place")


def test_numpy_views_of_results_pass_through(device, rng):
    """Results handed back as NumPy arrays view USM: passing them on (here O
    and lse into another call) copies nothing."""
    q, k, v = (uniform(rng, (1, 4, 72, 64)) for _ in range(3))
    o = sdpa_ze.attention(q, k, v)
    assert device.memory_kind(o.__array_interface__["data"][0]) == "shared"
    staged = device.stats["staged"]
    again = sdpa_ze.attention(o, o, o)
    assert device.stats["staged"] == staged
    ref.assert_close(again, ref.forward(o, o, o)[0], ref.forward_tolerance(72, 64), "float32",
                     "attention of a result")


@pytest.mark.parametrize("dl_device,message", [
    # kDLOneAPI memory that is not an allocation of our context
    ((KDL_ONEAPI, 0), "k: kDLOneAPI memory .* not an allocation"),
    ((KDL_CUDA, 0), "k: DLPack device kDLCUDA is not supported"),
])
def test_foreign_memory_is_refused(device, dl_device, message):
    host = np.zeros((1, 1, 8, 64), dtype=np.float32)
    capsule = _dlpack.export(host, host.ctypes.data, host.shape, (512, 512, 64, 1),
                             (2, 32, 1), dl_device)

    class Foreign:
        def __dlpack__(self, **kwargs):
            return capsule

    with pytest.raises(ValueError, match=message):
        sdpa_ze.attention(host, Foreign(), host)


def test_torch_round_trip(device, rng):
    """PyTorch CPU tensors in (kDLCPU), torch tensors over USM out, and
    through DLPack again without a copy. Runs where torch is installed."""
    torch = pytest.importorskip("torch")
    q, k, v = (torch.from_numpy(uniform(rng, (1, 4, 72, 64))) for _ in range(3))
    o = sdpa_ze.attention(q, k, v, causal=True)
    assert isinstance(o, torch.Tensor) and device.memory_kind(o.data_ptr()) == "shared"
    t = torch.from_dlpack(o)
    assert t.data_ptr() == o.data_ptr()
    want = torch.nn.functional.scaled_dot_product_attention(q.double(), k.double(), v.double(),
                                                            is_causal=True)
    ref.assert_close(t.numpy(), want.numpy(), ref.forward_tolerance(72, 64), "float32",
                     "O against torch")
