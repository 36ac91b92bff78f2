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


def _group_sum(x, group):
    """x [B, Hq, S, D] summed over each group of group query heads: [B, Hq / group, S, D]."""
    b, h, s_, d = x.shape
    return x.reshape(b, h // group, group, s_, d).sum(axis=2)


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
    return dq, _group_sum(dk, group), _group_sum(dv, group)


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


# --------------------------------------------------------------------------
# ABI 1.1 features (sdpa.h, "LLM features"): one problem [B, H, Sq, Sk] at a
# time; varlen and paged KV are loops over sequences in the tests.
# --------------------------------------------------------------------------

def _feature_scores(q, k, scale, causal, window, softcap, alibi):
    """(raw, s): raw = scale * q.k^T and s = cap(raw) + bias, -inf outside the
    causal band and the window; queries sit at pos_i = i + Sk - Sq."""
    group = q.shape[1] // k.shape[1]
    raw = scale * (q @ np.repeat(k, group, axis=1).transpose(0, 1, 3, 2))
    s = softcap * np.tanh(raw / softcap) if softcap else raw.copy()
    sq, sk = s.shape[-2:]
    i, j = np.arange(sq)[:, None], np.arange(sk)[None, :]
    pos = i + sk - sq
    if alibi is not None:
        slopes = np.asarray(alibi, dtype=np.float64)
        slopes = slopes.reshape((1, -1, 1, 1) if slopes.ndim == 1 else slopes.shape + (1, 1))
        s = s - slopes * np.abs(pos - j)
    visible = np.ones((sq, sk), dtype=bool)
    if causal:
        visible &= j <= (i if causal in (True, "top_left") else pos)
    if window is not None:
        left, right = window
        if left >= 0:
            visible &= j >= pos - left
        if right >= 0:
            visible &= j <= pos + right
    return raw, np.where(visible, s, -np.inf)


def _with_sinks(s, sinks):
    """The scores with one more column, each head's sink (ABI 1.2): it joins
    the softmax denominator and takes no value."""
    sinks = np.asarray(sinks, dtype=np.float64).reshape(1, -1, 1, 1)
    return np.concatenate([s, np.broadcast_to(sinks, s.shape[:-1] + (1,))], axis=-1)


def feature_forward(q, k, v, scale=None, causal=False, window=None, softcap=0.0, alibi=None,
                    keep=None, dropout_p=0.0, sinks=None):
    """(O, lse) in float64 with the ABI 1.1 features and sinks (f32 [Hq]);
    keep (the dropout keep mask [B, Hq, Sq, Sk]) scales kept probabilities
    by 1 / (1 - p)."""
    q, k, v = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    _, s = _feature_scores(q, k, scale, causal, window, softcap, alibi)
    if sinks is not None:
        s = _with_sinks(s, sinks)
    with np.errstate(invalid="ignore", divide="ignore"):
        m = s.max(axis=-1, keepdims=True)
        p = np.exp(s - m)
        total = p.sum(axis=-1, keepdims=True)
        p = p / total
        if sinks is not None:
            p = p[..., :-1]  # the sink's share takes no value
        if keep is not None:
            p = p * keep / (1 - dropout_p)
        group = q.shape[1] // k.shape[1]
        return p @ np.repeat(v, group, axis=1), (m + np.log(total))[..., 0]


def feature_backward(do, q, k, v, scale=None, causal=False, window=None, softcap=0.0,
                     alibi=None, keep=None, dropout_p=0.0, sinks=None):
    """(dQ, dK, dV) in float64 with the ABI 1.1 features; with sinks
    (dQ, dK, dV, dsinks), dsinks_h = -sum over head h's rows of
    P_sink_i * (dO_i . O_i)."""
    do, q, k, v = (np.asarray(x, dtype=np.float64) for x in (do, q, k, v))
    scale = 1 / np.sqrt(q.shape[-1]) if scale is None else scale
    group = q.shape[1] // k.shape[1]
    raw, s = _feature_scores(q, k, scale, causal, window, softcap, alibi)
    if sinks is not None:
        s = _with_sinks(s, sinks)
    with np.errstate(invalid="ignore"):
        p = np.exp(s - s.max(axis=-1, keepdims=True))
        p = np.nan_to_num(p / p.sum(axis=-1, keepdims=True))
    p_sink = None
    if sinks is not None:
        p, p_sink = p[..., :-1], p[..., -1]
    z = np.ones_like(p) if keep is None else keep / (1 - dropout_p)
    kr, vr = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    dv = (p * z).transpose(0, 1, 3, 2) @ do
    dp = (do @ vr.transpose(0, 1, 3, 2)) * z
    row_d = (dp * p).sum(axis=-1, keepdims=True)  # D_i = dO_i . O_i
    ds = p * (dp - row_d)
    if softcap:
        ds = ds * (1 - np.tanh(raw / softcap) ** 2)
    dq = scale * (ds @ kr)
    dk = scale * (ds.transpose(0, 1, 3, 2) @ q)
    if p_sink is not None:
        dsinks = -(p_sink * row_d[..., 0]).sum(axis=(0, 2))
        return dq, _group_sum(dk, group), _group_sum(dv, group), dsinks
    return dq, _group_sum(dk, group), _group_sum(dv, group)


# --------------------------------------------------------------------------
# FP8 (OCP 8-bit floats), decoded from the format definition, bit by bit.
# --------------------------------------------------------------------------

_FP8 = {  # exponent bits, mantissa bits, bias, has infinities
    "float8_e4m3fn": (4, 3, 7, False),
    "float8_e5m2": (5, 2, 15, True),
}


def fp8_decode(bits, fmt):
    """float64 values of FP8 bit patterns (uint8). E4M3FN: no infinities,
    S.1111.111 is NaN; E5M2: IEEE 754-like (all-ones exponent: inf or NaN).
    Subnormals: mantissa * 2^(1 - bias - mantissa bits)."""
    e_bits, m_bits, bias, has_inf = _FP8[fmt]
    b = np.asarray(bits, dtype=np.uint8).astype(np.int64)
    sign = np.where(b >> 7, -1.0, 1.0)
    e = (b >> m_bits) & ((1 << e_bits) - 1)
    m = b & ((1 << m_bits) - 1)
    e_max, m_max = (1 << e_bits) - 1, (1 << m_bits) - 1
    normal = (1 + m / 2.0 ** m_bits) * 2.0 ** (e - bias)
    subnormal = m * 2.0 ** (1 - bias - m_bits)
    value = np.where(e == 0, subnormal, normal)
    if has_inf:
        value = np.where(e == e_max, np.where(m == 0, np.inf, np.nan), value)
    else:
        value = np.where((e == e_max) & (m == m_max), np.nan, value)
    return sign * value


def fp8_random_bits(rng, shape, fmt, max_exponent):
    """Random finite FP8 bit patterns, subnormals included, with biased
    exponents 0..max_exponent (so magnitudes below 2^(max_exponent + 1 -
    bias))."""
    e_bits, m_bits, _, _ = _FP8[fmt]
    sign = rng.integers(0, 2, size=shape)
    e = rng.integers(0, max_exponent + 1, size=shape)
    m = rng.integers(0, 1 << m_bits, size=shape)
    return ((sign << 7) | (e << m_bits) | m).astype(np.uint8)


def merge(outs, lses):
    """sdpa.h's merge of attention states, in float64."""
    lses = np.stack([np.asarray(x, dtype=np.float64) for x in lses])
    outs = np.stack([np.asarray(x, dtype=np.float64) for x in outs])
    m = lses.max(axis=0)
    w = np.exp(lses - m)
    total = w.sum(axis=0)
    return (w[..., None] * outs).sum(axis=0) / total[..., None], m + np.log(total)


_PHILOX_M = (0xD2511F53, 0xCD9E8D57)
_PHILOX_W = (0x9E3779B9, 0xBB67AE85)


def philox4x32_10(counter, key):
    """Philox4x32-10 (Salmon et al., as in Random123) on uint64 arrays holding
    32-bit words: counter (c0, c1, c2, c3), key (k0, k1); returns 4 words."""
    mask = np.uint64(0xFFFFFFFF)
    c = [np.asarray(x, dtype=np.uint64) & mask for x in counter]
    k0, k1 = (np.uint64(x) for x in key)
    for round_ in range(10):
        if round_:
            k0, k1 = (k0 + np.uint64(_PHILOX_W[0])) & mask, (k1 + np.uint64(_PHILOX_W[1])) & mask
        p0, p1 = np.uint64(_PHILOX_M[0]) * c[0], np.uint64(_PHILOX_M[1]) * c[2]
        hi0, lo0, hi1, lo1 = p0 >> np.uint64(32), p0 & mask, p1 >> np.uint64(32), p1 & mask
        c = [hi1 ^ c[1] ^ k0, lo1, hi0 ^ c[3] ^ k1, lo0]
    return c


def dropout_keep(shape, p, seed, offset=0):
    """The keep mask sdpa.h defines for probabilities of shape [B, Hq, Sq, Sk]:
    element n keeps iff (word n % 4 of Philox(offset + n / 4, seed)) >> 8,
    times 2^-24, is >= p."""
    n = np.arange(int(np.prod(shape)), dtype=np.uint64)
    c = (np.uint64(offset) + n // np.uint64(4))
    seed = int(seed) & 0xFFFFFFFFFFFFFFFF
    words = philox4x32_10((c & np.uint64(0xFFFFFFFF), c >> np.uint64(32), 0 * c, 0 * c),
                          (seed & 0xFFFFFFFF, seed >> 32))
    lane = (n % np.uint64(4)).astype(np.int64)
    w = np.choose(lane, words)
    return ((w >> np.uint64(8)).astype(np.float64) * 2.0 ** -24 >= p).reshape(shape)
