"""The NumPy float64 reference the tests compare with, and tolerances that
follow from the data types (the same model as the C suites' oracles)."""

import numpy as np

EPS_F32_ACC = 2.0 ** -24  # f32 accumulation, unit roundoff


def _scores(q, k, scale, mask, causal):
    group = q.shape[1] // k.shape[1]
    k = np.repeat(k, group, axis=1)
    s = scale * (q @ k.transpose(0, 1, 3, 2))
    sq, sk = s.shape[-2:]
    if mask is not None:
        s = s + mask
    if causal:
        shift = 0 if causal in (True, "top_left") else sk - sq
        visible = np.arange(sk)[None, :] <= np.arange(sq)[:, None] + shift
        s = np.where(visible, s, -np.inf)
    return s


def forward(q, k, v, scale=None, mask=None, causal=False):
    """(O, lse) in float64; q, k, v any float arrays [B, H, S, D], mask an
    additive float mask broadcasting to the scores."""
    q, k, v = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    mask = None if mask is None else np.asarray(mask, dtype=np.float64)
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    s = _scores(q, k, scale, mask, causal)
    with np.errstate(invalid="ignore", divide="ignore"):  # fully masked rows give NaN
        m = s.max(axis=-1, keepdims=True)
        p = np.exp(s - m)
        total = p.sum(axis=-1, keepdims=True)
        group = q.shape[1] // k.shape[1]
        o = (p / total) @ np.repeat(v, group, axis=1)
        return o, (m + np.log(total))[..., 0]


def backward(do, q, k, v, scale=None, mask=None, causal=False):
    """(dQ, dK, dV) in float64, dK and dV summed over each group's query
    heads."""
    do, q, k, v = (np.asarray(x, dtype=np.float64) for x in (do, q, k, v))
    mask = None if mask is None else np.asarray(mask, dtype=np.float64)
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    group = q.shape[1] // k.shape[1]
    s = _scores(q, k, scale, mask, causal)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    kr, vr = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    dv = p.transpose(0, 1, 3, 2) @ do
    dp = do @ vr.transpose(0, 1, 3, 2)
    ds = p * (dp - (dp * p).sum(axis=-1, keepdims=True))
    dq = scale * (ds @ kr)
    dk = scale * (ds.transpose(0, 1, 3, 2) @ q)

    def group_sum(x):
        b, h, s_, d = x.shape
        return x.reshape(b, h // group, group, s_, d).sum(axis=2)

    return dq, group_sum(dk), group_sum(dv)


def ulp(dtype, magnitude):
    """One unit in the last place of dtype at magnitude (elementwise)."""
    info = {"float32": (23, -126), "float16": (10, -14), "bfloat16": (7, -126)}[dtype]
    exponent = np.floor(np.log2(np.maximum(np.abs(magnitude), 2.0 ** info[1])))
    return 2.0 ** (exponent - info[0])


def epsilon(dtype):
    return {"float32": 0.0, "float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}[dtype]


def assert_close(got, want, abs_tol, dtype, what):
    """|got - want| <= abs_tol + 1 ulp of dtype at want, elementwise; NaN
    where want is NaN."""
    got = np.asarray(got, dtype=np.float64)
    tol = abs_tol + ulp(dtype, want)
    err = np.abs(got - want)
    nan_ok = np.isnan(want) == np.isnan(got)
    bad = ~nan_ok | (~np.isnan(want) & (err > tol))
    if bad.any():
        at = np.unravel_index(np.argmax(np.where(bad, err / tol, 0)), want.shape)
        raise AssertionError("%s: %d of %d elements differ; worst at %s: got %.9g want %.9g "
                             "tolerance %.3g" % (what, bad.sum(), bad.size, at, got[at],
                                                 want[at], tol[at]))


def forward_tolerance(k_len, head_size, value_bound=1.0):
    """O: f32 accumulation over D terms for the scores and Sk for P.V."""
    return 8 * EPS_F32_ACC * (np.sqrt(k_len) + np.sqrt(head_size)) * value_bound


def lse_tolerance(k_len, head_size):
    return 8 * EPS_F32_ACC * (np.sqrt(k_len) + np.sqrt(head_size)) * 4


def gradient_tolerance(want, q_len, k_len, head_size, dtype):
    """f32 rounding growing with the reduction lengths, plus the rounding of O
    to its dtype (the kernels form D_i = rowsum(dO * O) from the rounded O)."""
    magnitude = max(np.abs(want).max(), 1e-30)
    terms = np.sqrt(q_len + k_len + head_size)
    return 8 * magnitude * (EPS_F32_ACC * terms + epsilon(dtype))
