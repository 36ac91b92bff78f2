"""Forward and backward against the NumPy float64 reference.

Every distinct problem kind builds a Level Zero module (about a second for a
forward, ten for a backward on the CPU device), so the cases share kinds
where they can: shapes are small and head sizes 64."""

import numpy as np
import pytest

import sdpa_ze

import reference as ref
from conftest import uniform


def check_forward(q, k, v, o, dtype, what, **kw):
    want, _ = ref.forward(q, k, v, **kw)
    tol = ref.forward_tolerance(k.shape[2], q.shape[3])
    ref.assert_close(o, want, tol, dtype, what)


@pytest.mark.parametrize("dtype,causal,hq,hkv", [
    ("float32", False, 4, 4),
    ("float16", True, 4, 2),      # f16, causal top-left, GQA
    ("float32", "bottom_right", 4, 1),  # MQA, queries at the end of the keys
])
def test_forward_matches_reference(device, rng, dtype, causal, hq, hkv):
    sq, sk = (40, 72) if causal == "bottom_right" else (72, 72)
    q = uniform(rng, (2, hq, sq, 64), dtype)
    k, v = uniform(rng, (2, hkv, sk, 64), dtype), uniform(rng, (2, hkv, sk, 64), dtype)
    o = sdpa_ze.attention(q, k, v, causal=causal)
    assert isinstance(o, np.ndarray) and o.dtype == q.dtype and o.shape == q.shape
    check_forward(q, k, v, o, dtype, "O", causal=causal)


def test_forward_scale_and_out(device, rng):
    """An explicit scale, and out= given as a plain (non-USM) array: computed in
    USM and copied back into it."""
    q, k, v = (uniform(rng, (2, 4, 72, 64)) for _ in range(3))
    out = np.full(q.shape, np.nan, dtype=np.float32)
    copied = device.stats["copied_back"]
    result = sdpa_ze.attention(q, k, v, scale=0.3, out=out)
    assert result is out and device.stats["copied_back"] == copied + 1
    check_forward(q, k, v, out, "float32", "O (scale 0.3)", scale=0.3)


def test_forward_strided_inputs(device, rng):
    """Inputs laid out [B, S, H, D] and viewed as [B, H, S, D]: USM views pass
    their strides through, host arrays with negative strides are staged."""
    qs = sdpa_ze.asarray(uniform(rng, (2, 72, 4, 64)))
    q = np.asarray(qs).transpose(0, 2, 1, 3)          # a strided view of USM
    k = uniform(rng, (2, 4, 72, 64))[:, :, ::-1, :]   # negative strides
    v = uniform(rng, (2, 4, 72, 64))
    staged = device.stats["staged"]
    o = sdpa_ze.attention(q, k, v)
    assert device.stats["staged"] == staged + 2       # k and v, not q
    check_forward(q, k, v, o, "float32", "O (strided)")


def test_forward_masks(device, rng):
    """An additive float mask broadcast over batch and heads, and the same
    mask as booleans (True: attend)."""
    q, k, v = (uniform(rng, (2, 4, 72, 64)) for _ in range(3))
    allowed = rng.uniform(size=(72, 72)) < 0.7
    allowed[:, 0] = True  # no fully masked row
    additive = np.where(allowed, rng.uniform(-1, 1, size=(72, 72)), -np.inf).astype(np.float32)
    o = sdpa_ze.attention(q, k, v, mask=additive)
    check_forward(q, k, v, o, "float32", "O (additive mask)", mask=additive)
    o = sdpa_ze.attention(q, k, v, mask=allowed)
    check_forward(q, k, v, o, "float32", "O (bool mask)",
                  mask=np.where(allowed, 0.0, -np.inf))


def test_forward_fully_masked_rows(device, rng):
    """softmax='inf_as_zero' gives 0 for a row that sees no key."""
    q, k, v = (uniform(rng, (1, 2, 72, 64)) for _ in range(3))
    mask = np.zeros((1, 1, 72, 72), dtype=np.float32)
    mask[..., 5, :] = -np.inf
    o = sdpa_ze.attention(q, k, v, mask=mask, softmax="inf_as_zero")
    assert np.all(o[:, :, 5, :] == 0)
    keep = np.arange(72) != 5
    want, _ = ref.forward(q, k, v, mask=mask)
    ref.assert_close(o[:, :, keep], want[:, :, keep], ref.forward_tolerance(72, 64), "float32",
                     "O (inf_as_zero)")


def test_forward_bfloat16(device, rng):
    """bfloat16 (which NumPy lacks) through UsmArrays; the result is a UsmArray."""
    q, k, v = (uniform(rng, (1, 4, 72, 64), "bfloat16") for _ in range(3))
    qu, ku, vu = (sdpa_ze.asarray(x, dtype="bfloat16") for x in (q, k, v))
    o = sdpa_ze.attention(qu, ku, vu, causal=True)
    assert isinstance(o, sdpa_ze.UsmArray) and o.dtype == "bfloat16"
    check_forward(q, k, v, o.numpy(), "bfloat16", "O (bfloat16)", causal=True)


# --------------------------------------------------------------------------
# Backward
# --------------------------------------------------------------------------

BACKWARD_CASES = {
    # f32, grouped-query, causal: dK and dV summed over each group.
    "f32-gqa-causal": dict(dtype="float32", hq=4, hkv=2, sq=72, sk=72, causal=True, mask=False),
    # f16 with an additive mask broadcast over batch.
    "f16-mask": dict(dtype="float16", hq=2, hkv=2, sq=48, sk=80, causal=False, mask=True),
}


def backward_inputs(rng, c):
    dtype = c["dtype"]
    q = uniform(rng, (2, c["hq"], c["sq"], 64), dtype)
    k, v = (uniform(rng, (2, c["hkv"], c["sk"], 64), dtype) for _ in range(2))
    do = uniform(rng, q.shape, dtype)
    mask = None
    if c["mask"]:
        mask = rng.uniform(-2, 2, size=(1, c["hq"], c["sq"], c["sk"])).astype(np.float32)
    return q, k, v, do, mask


def check_gradients(grads, wants, c, what):
    for name, got, want in zip(("dQ", "dK", "dV"), grads, wants):
        assert got.shape == want.shape, name
        tol = ref.gradient_tolerance(want, c["sq"], c["sk"], 64, c["dtype"])
        ref.assert_close(got, want, tol, c["dtype"], "%s %s" % (what, name))


@pytest.mark.parametrize("name", sorted(BACKWARD_CASES))
def test_backward_matches_reference(device, rng, name):
    c = BACKWARD_CASES[name]
    q, k, v, do, mask = backward_inputs(rng, c)
    kw = dict(causal=c["causal"], mask=mask)
    o, lse = sdpa_ze.attention(q, k, v, return_lse=True, **kw)
    want_o, want_lse = ref.forward(q, k, v, **kw)
    ref.assert_close(o, want_o, ref.forward_tolerance(c["sk"], 64), c["dtype"], "O")
    ref.assert_close(lse, want_lse, ref.lse_tolerance(c["sk"], 64), "float32", "lse")
    grads = sdpa_ze.attention_backward(do, q, k, v, o, lse, **kw)
    assert all(g.dtype == q.dtype for g in grads)
    check_gradients(grads, ref.backward(do, q, k, v, **kw), c, name)


def test_backward_deterministic_and_in_place(device, rng):
    """deterministic=True gives the same bits twice; USM inputs and outputs
    (UsmArrays) cost no copy."""
    c = BACKWARD_CASES["f32-gqa-causal"]
    q, k, v, do, _ = backward_inputs(rng, c)
    qu, ku, vu, dou = (sdpa_ze.asarray(x) for x in (q, k, v, do))
    o, lse = sdpa_ze.attention(qu, ku, vu, causal=True, return_lse=True)
    assert isinstance(o, sdpa_ze.UsmArray) and isinstance(lse, sdpa_ze.UsmArray)
    grads = [sdpa_ze.empty(x.shape) for x in (q, k, v)]
    staged = device.stats["staged"]
    results = sdpa_ze.attention_backward(dou, qu, ku, vu, o, lse, causal=True, deterministic=True,
                                         grad_q=grads[0], grad_k=grads[1], grad_v=grads[2])
    assert all(r is g for r, g in zip(results, grads))
    first = [g.numpy().copy() for g in grads]
    sdpa_ze.attention_backward(dou, qu, ku, vu, o, lse, causal=True, deterministic=True,
                               grad_q=grads[0], grad_k=grads[1], grad_v=grads[2])
    assert device.stats["staged"] == staged
    for a, g in zip(first, grads):
        assert np.array_equal(a, g.numpy())
    check_gradients(first, ref.backward(do, q, k, v, causal=True), c, "deterministic")
