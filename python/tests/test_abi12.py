"""ABI 1.2 from Python, against the float64 NumPy reference: attention
sinks (forward, backward and the sinks' gradient; a sink above every score,
a fully masked row), FP8 K/V with per-tensor, per-head and per-group scales
(decoded in the reference from the format definition), integer K/V, and
the refusals; each on the default backend (ze) and on ref, the oracle.
Always runs (NumPy only); torch's are in test_torch.py."""

import numpy as np
import pytest

import sdpa_ze

import reference as ref
from conftest import uniform

D = 64


@pytest.fixture(scope="module")
def ref_device():
    device = sdpa_ze.Device("ref")
    yield device
    device.close()


@pytest.fixture(params=["default", "ref"], autouse=True)
def backend(request, device, ref_device):
    """Every test twice: on the default device, then with the ref backend's
    as the default."""
    if request.param == "default":
        yield device
        return
    previous = sdpa_ze.set_default_device(ref_device)
    try:
        yield ref_device
    finally:
        sdpa_ze.set_default_device(previous)


def close(got, want, what, sk, value_bound=1.0):
    ref.assert_close(got, want, ref.forward_tolerance(sk, D, value_bound), "float32", what)


def close_lse(got, want, what, sk):
    ref.assert_close(got, want, ref.lse_tolerance(sk, D), "float32", what)


def sink_tolerance(do, q, k, v, sinks, **kw):
    """Per head: the sinks' gradient sums B * Sq terms P_sink_i * D_i, each
    D_i = dO_i . O_i a dot product of D terms, and both sums cancel, so the
    f32 rounding is relative to the sum of the terms' magnitudes, sum_i
    P_sink_i sum_d |dO_id| (P |V|)_id, not to the result's."""
    o_abs, lse = ref.feature_forward(q, k, np.abs(v), sinks=sinks, **kw)
    p_sink = np.exp(np.asarray(sinks, np.float64).reshape(1, -1, 1) - lse)
    terms = (p_sink * (np.abs(do) * o_abs).sum(axis=-1)).sum(axis=(0, 2))
    b, _, sq, _ = q.shape
    return 8 * ref.EPS_F32_ACC * np.sqrt(b * sq + D) * terms


# --------------------------------------------------------------------------
# Attention sinks
# --------------------------------------------------------------------------

@pytest.mark.parametrize("causal,window", [(False, None), ("bottom_right", (16, 0))])
def test_sinks_forward_and_backward(device, rng, causal, window):
    """Sinks of both signs (GQA 4:2), with and without a causal sliding
    window: O, lse, dQ, dK, dV and the sinks' gradient."""
    q = uniform(rng, (2, 4, 24, D)) * 3
    k, v = uniform(rng, (2, 2, 40, D)) * 3, uniform(rng, (2, 2, 40, D))
    sinks = np.array([0.5, -1.0, 2.0, 0.0], dtype=np.float32)
    kw = dict(causal=causal, window=window)
    o, lse = sdpa_ze.attention(q, k, v, return_lse=True, sinks=sinks, **kw)
    want, want_lse = ref.feature_forward(q, k, v, sinks=sinks, **kw)
    close(o, want, "O (sinks)", 40)
    close_lse(lse, want_lse, "lse (sinks)", 40)
    # The sinks matter: without them O is another.
    plain, _ = ref.feature_forward(q, k, v, **kw)
    assert np.abs(plain - want).max() > 1e-2
    do = uniform(rng, o.shape)
    grads = sdpa_ze.attention_backward(do, q, k, v, o, lse, sinks=sinks, **kw)
    assert len(grads) == 4
    wants = ref.feature_backward(do, q, k, v, sinks=sinks, **kw)
    for name, got, w in zip(("dQ", "dK", "dV"), grads, wants):
        ref.assert_close(got, w, ref.gradient_tolerance(w, 24, 40, D, "float32"), "float32",
                         "%s (sinks)" % name)
    dsinks = grads[3]
    assert dsinks.shape == (4,) and dsinks.dtype == np.float32
    assert np.abs(wants[3]).min() > 1e-3  # every head's gradient is there to get wrong
    tol = sink_tolerance(do, q, k, v, sinks, **kw)
    ref.assert_close(dsinks, wants[3], tol, "float32", "dsinks")
    # Into the caller's array, overwritten (not accumulated).
    into = np.full(4, 7.0, dtype=np.float32)
    again = sdpa_ze.attention_backward(do, q, k, v, o, lse, sinks=sinks, grad_sinks=into, **kw)
    assert again[3] is into
    ref.assert_close(into, wants[3], tol, "float32", "into")


def test_sink_above_every_score(device, rng):
    """A sink far above every score takes nearly all the mass: O shrinks to
    exp(s - sink) times the values, lse is the sink (to rounding), and the
    sinks' gradient is -sum D_i times P_sink close to 1."""
    q, k, v = (uniform(rng, (1, 2, 16, D)) for _ in range(3))
    sinks = np.array([30.0, 12.0], dtype=np.float32)
    o, lse = sdpa_ze.attention(q, k, v, return_lse=True, sinks=sinks)
    want, want_lse = ref.feature_forward(q, k, v, sinks=sinks)
    assert np.abs(want[0, 0]).max() < 1e-11  # exp(~1 - 30) * 16
    close(o, want, "O (large sink)", 16)
    close_lse(lse, want_lse, "lse (large sink)", 16)
    do = uniform(rng, o.shape)
    *_, dsinks = sdpa_ze.attention_backward(do, q, k, v, o, lse, sinks=sinks)
    _, _, _, want_ds = ref.feature_backward(do, q, k, v, sinks=sinks)
    ref.assert_close(dsinks, want_ds, sink_tolerance(do, q, k, v, sinks), "float32",
                     "dsinks (large sink)")


@pytest.mark.parametrize("softmax", ["accurate", "inf_as_zero"])
def test_fully_masked_row_with_a_sink(device, rng, softmax):
    """With a sink a query that sees no key is not a fully masked row: O is
    0 exactly (in both softmax modes), lse is the sink, and the rows' dQ
    and share of the sinks' gradient are 0."""
    q, k, v = (uniform(rng, (1, 2, 8, D)) for _ in range(3))
    sinks = np.array([0.25, -0.5], dtype=np.float32)
    mask = np.ones((8, 8), dtype=bool)
    mask[3] = False  # query 3 sees nothing
    o, lse = sdpa_ze.attention(q, k, v, mask=mask, return_lse=True, sinks=sinks,
                               softmax=softmax)
    assert np.all(o[:, :, 3] == 0)
    assert np.array_equal(lse[0, :, 3], sinks)
    add = np.where(mask, 0.0, -np.inf)
    s = q.astype(np.float64) @ k.astype(np.float64).transpose(0, 1, 3, 2) / np.sqrt(D) + add
    s = ref._with_sinks(s, sinks)
    m = s.max(axis=-1, keepdims=True)
    p = np.exp(s - m)
    want = (p[..., :-1] / p.sum(axis=-1, keepdims=True)) @ v.astype(np.float64)
    close(o, want, "O (masked row, sink)", 8)
    do = uniform(rng, o.shape)
    dq, _, _, dsinks = sdpa_ze.attention_backward(do, q, k, v, o, lse, mask=mask, sinks=sinks,
                                                  softmax=softmax)
    assert np.all(dq[:, :, 3] == 0)
    assert np.all(np.isfinite(dsinks))


def test_sinks_refusals(device, rng):
    q, k, v = (uniform(rng, (1, 4, 8, D)) for _ in range(3))
    with pytest.raises(ValueError, match=r"sinks: shape \(3,\)"):
        sdpa_ze.attention(q, k, v, sinks=np.zeros(3, dtype=np.float32))
    with pytest.raises(ValueError, match=r"sinks: shape \(1, 4\)"):
        sdpa_ze.attention(q, k, v, sinks=np.zeros((1, 4), dtype=np.float32))
    with pytest.raises(TypeError, match="sinks: dtype float16"):
        sdpa_ze.attention(q, k, v, sinks=np.zeros(4, dtype=np.float16))
    o, lse = sdpa_ze.attention(q, k, v, return_lse=True)
    with pytest.raises(ValueError, match="grad_sinks without sinks"):
        sdpa_ze.attention_backward(q, q, k, v, o, lse, grad_sinks=np.zeros(4, np.float32))
    with pytest.raises(ValueError, match=r"grad_sinks: shape \(2,\)"):
        sdpa_ze.attention_backward(q, q, k, v, o, lse, sinks=np.zeros(4, np.float32),
                                   grad_sinks=np.zeros(2, np.float32))


# --------------------------------------------------------------------------
# FP8 K/V
# --------------------------------------------------------------------------

FP8 = {"float8_e4m3fn": 8, "float8_e5m2": 16}  # biased exponents up to 2^1


def fp8_kv(rng, fmt, shape):
    """(the FP8 array on the device, its float64 values)."""
    bits = ref.fp8_random_bits(rng, shape, fmt, FP8[fmt])
    return sdpa_ze.asarray(bits, fmt), ref.fp8_decode(bits, fmt)


@pytest.mark.parametrize("fmt", sorted(FP8))
@pytest.mark.parametrize("per", ["tensor", "head", "none"])
def test_fp8_kv(rng, fmt, per):
    """FP8 K and V (GQA 4:2) with a scale per tensor (a Python float for K,
    a one-element array for V), per K/V head, or none (a scale of 1),
    against the reference's own decoding of the bits."""
    q = uniform(rng, (2, 4, 16, D))
    k, k_values = fp8_kv(rng, fmt, (2, 2, 48, D))
    v, v_values = fp8_kv(rng, fmt, (2, 2, 48, D))
    if per == "tensor":
        k_scale, v_scale = 0.375, np.array([1.5], dtype=np.float32)
        k_mul, v_mul = 0.375, 1.5
    elif per == "head":
        k_scale = np.array([0.25, 0.75], dtype=np.float32)
        v_scale = np.array([2.0, 0.5], dtype=np.float32)
        k_mul, v_mul = k_scale.reshape(1, 2, 1, 1), v_scale.reshape(1, 2, 1, 1)
    else:
        k_scale = v_scale = None
        k_mul = v_mul = 1.0
    o = sdpa_ze.attention(q, k, v, k_scale=k_scale, v_scale=v_scale, causal="bottom_right")
    want, _ = ref.feature_forward(q, k_values * k_mul, v_values * v_mul,
                                  causal="bottom_right")
    bound = np.abs(v_values * v_mul).max()
    close(o, want, "O (%s, scales per %s)" % (fmt, per), 48, bound)
    if per != "none":  # the scales matter
        unscaled, _ = ref.feature_forward(q, k_values, v_values, causal="bottom_right")
        assert np.abs(unscaled - want).max() > 1e-2


def test_fp8_kv_per_group_scales(device, rng):
    """Scales per group of 16 head elements of each token, [B, Hkv, Sk, 4]
    (group_size inferred), float16."""
    q = uniform(rng, (1, 2, 8, D))
    k, k_values = fp8_kv(rng, "float8_e4m3fn", (1, 2, 32, D))
    v, v_values = fp8_kv(rng, "float8_e4m3fn", (1, 2, 32, D))
    k_scale = rng.choice([0.25, 0.5, 1.0], size=(1, 2, 32, 4)).astype(np.float16)
    v_scale = rng.choice([0.5, 2.0], size=(1, 2, 32, 4)).astype(np.float16)
    o = sdpa_ze.attention(q, k, v, k_scale=k_scale, v_scale=v_scale)
    k_mul = np.repeat(k_scale.astype(np.float64), 16, axis=-1)
    v_mul = np.repeat(v_scale.astype(np.float64), 16, axis=-1)
    want, _ = ref.feature_forward(q, k_values * k_mul, v_values * v_mul)
    close(o, want, "O (fp8, scales per group)", 32, np.abs(v_values * v_mul).max())


def test_fp8_decoding_of_the_reference():
    """The reference's decoder on the formats' landmarks (OCP FP8)."""
    e4m3 = ref.fp8_decode(np.array([0x00, 0x01, 0x08, 0x38, 0x7E, 0x7F, 0xFE, 0xB8], np.uint8),
                          "float8_e4m3fn")
    assert list(e4m3[:5]) == [0.0, 2.0 ** -9, 2.0 ** -6, 1.0, 448.0]
    assert np.isnan(e4m3[5]) and e4m3[6] == -448.0 and e4m3[7] == -1.0
    e5m2 = ref.fp8_decode(np.array([0x01, 0x3C, 0x7B, 0x7C, 0x7D, 0xFC], np.uint8), "float8_e5m2")
    assert list(e5m2[:4]) == [2.0 ** -16, 1.0, 57344.0, np.inf]
    assert np.isnan(e5m2[4]) and e5m2[5] == -np.inf


def test_integer_kv(device, rng):
    """int8 K with a per-head scale and uint8 V with a per-tensor scale and
    zero point: x = (q - zero_point) * scale."""
    q = uniform(rng, (1, 2, 8, D))
    k = rng.integers(-100, 100, size=(1, 2, 32, D)).astype(np.int8)
    v = rng.integers(0, 256, size=(1, 2, 32, D)).astype(np.uint8)
    k_scale = np.array([0.01, 0.02], dtype=np.float32)
    o = sdpa_ze.attention(q, k, v, k_scale=k_scale, v_scale=0.0078125, v_zero_point=128)
    k_values = k.astype(np.float64) * k_scale.astype(np.float64).reshape(1, 2, 1, 1)
    v_values = (v.astype(np.float64) - 128) * 0.0078125
    want, _ = ref.feature_forward(q, k_values, v_values)
    close(o, want, "O (int8 K, uint8 V)", 32)


def test_quantized_kv_refusals(device, rng):
    """Scales and zero points where they do not belong, and shapes that are
    none of the three kinds, raise naming the argument; FP8 backward is the
    library's refusal."""
    q = uniform(rng, (1, 4, 8, D))
    k, _ = fp8_kv(rng, "float8_e5m2", (1, 2, 16, D))
    v, _ = fp8_kv(rng, "float8_e5m2", (1, 2, 16, D))
    f = uniform(rng, (1, 2, 16, D))
    with pytest.raises(ValueError, match="k_scale / k_zero_point: k is float32"):
        sdpa_ze.attention(q, f, f, k_scale=0.5)
    with pytest.raises(ValueError, match="v_zero_point: v is float8_e5m2"):
        sdpa_ze.attention(q, k, v, v_zero_point=3)
    with pytest.raises(ValueError, match=r"k_scale: shape \(3,\)"):
        sdpa_ze.attention(q, k, v, k_scale=np.ones(3, np.float32))
    with pytest.raises(ValueError, match=r"v_scale: shape \(1, 2, 16, 5\)"):
        sdpa_ze.attention(q, k, v, v_scale=np.ones((1, 2, 16, 5), np.float32))
    v48, _ = fp8_kv(rng, "float8_e5m2", (1, 2, 16, 48))
    with pytest.raises(ValueError, match="v_scale: 1 groups .* groups of 48"):
        sdpa_ze.attention(q, k, v48, v_scale=np.ones((1, 2, 16, 1), np.float32))
    with pytest.raises(TypeError, match="k_scale: dtype int32"):
        sdpa_ze.attention(q, k, v, k_scale=np.ones(2, np.int32))
    i8 = np.zeros((1, 2, 16, D), np.int8)
    with pytest.raises(ValueError, match="k is int8: k_scale is required"):
        sdpa_ze.attention(q, i8, f)
    o, lse = sdpa_ze.attention(q, f, f, return_lse=True)
    with pytest.raises(sdpa_ze.SdpaError):
        sdpa_ze.attention_backward(o, q, k, v, o, lse)


@pytest.mark.parametrize("num_splits", [1, 4])
def test_paged_fp8_decode_with_sinks(device, rng, num_splits):
    """gpt-oss-style decode over a paged e4m3 cache: one query per
    sequence, per-head scales, sinks, unsplit and split four ways (the
    merge must count each sink once)."""
    lengths = np.array([50, 7, 64], dtype=np.int32)
    block, per_seq = 16, 4
    num_blocks = 3 * per_seq + 2
    k_cache, k_values = fp8_kv(rng, "float8_e4m3fn", (num_blocks, 2, block, D))
    v_cache, v_values = fp8_kv(rng, "float8_e4m3fn", (num_blocks, 2, block, D))
    table = rng.permutation(num_blocks)[:3 * per_seq].reshape(3, per_seq).astype(np.int32)
    k_scale = np.array([0.5, 0.25], dtype=np.float32)
    v_scale = np.array([1.0, 0.5], dtype=np.float32)
    sinks = np.array([1.0, -0.5, 0.0, 3.0], dtype=np.float32)
    q = uniform(rng, (3, 4, 1, D))
    o = sdpa_ze.attention(q, k_cache, v_cache, block_table=table, cache_seqlens=lengths,
                          num_splits=num_splits, sinks=sinks, k_scale=k_scale, v_scale=v_scale)
    for s in range(3):
        def gather(values, mul):
            rows = np.concatenate([values[blk] for blk in table[s]], axis=1)
            return rows[None, :, :lengths[s]] * mul.reshape(1, 2, 1, 1)
        want, _ = ref.feature_forward(q[s:s + 1], gather(k_values, k_scale),
                                      gather(v_values, v_scale), sinks=sinks)
        close(o[s:s + 1], want, "O (paged fp8 + sinks, seq %d, splits %d)" % (s, num_splits),
              64, 4.0)
