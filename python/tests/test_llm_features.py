"""Every ABI 1.1 feature from Python, against the float64 NumPy reference:
sliding window, logit softcap, ALiBi, variable-length batches, a paged KV
cache, split-KV decode, merging attention states, and dropout (its keep
mask checked bit for bit against sdpa.h's Philox numbering). Always runs
(NumPy only); torch's own comparisons are in test_torch.py."""

import numpy as np
import pytest

import sdpa_ze

import reference as ref
from conftest import uniform

D = 64


def close(got, want, dtype, what, sk=64, abs_tol=None):
    tol = ref.forward_tolerance(sk, D) if abs_tol is None else abs_tol
    ref.assert_close(got, want, tol, dtype, what)


def close_gradients(grads, wants, sq, sk, dtype, what):
    for name, got, want in zip(("dQ", "dK", "dV"), grads, wants):
        assert got.shape == want.shape, name
        ref.assert_close(got, want, ref.gradient_tolerance(want, sq, sk, D, dtype), dtype,
                         "%s %s" % (what, name))


def test_window_softcap_alibi_forward_and_backward(device, rng):
    """A sliding window with a causal mask, a softcap the scores reach, and
    per-head ALiBi slopes, forward and backward (GQA 4:2)."""
    q = uniform(rng, (2, 4, 48, D)) * 4
    k, v = uniform(rng, (2, 2, 64, D)) * 4, uniform(rng, (2, 2, 64, D))
    slopes = np.array([0.5, 0.25, 0.125, 0.0625], dtype=np.float32)
    kw = dict(causal="bottom_right", window=(20, 3), softcap=1.5, alibi_slopes=slopes)
    rkw = dict(causal="bottom_right", window=(20, 3), softcap=1.5, alibi=slopes)
    o, lse = sdpa_ze.attention(q, k, v, return_lse=True, **kw)
    want, want_lse = ref.feature_forward(q, k, v, **rkw)
    close(o, want, "float32", "O (window, softcap, alibi)")
    ref.assert_close(lse, want_lse, ref.lse_tolerance(64, D), "float32", "lse")
    # The features matter: without the cap the numbers are others.
    plain, _ = ref.feature_forward(q, k, v, causal="bottom_right", window=(20, 3), alibi=slopes)
    assert np.abs(plain - want).max() > 1e-2
    do = uniform(rng, q.shape)
    grads = sdpa_ze.attention_backward(do, q, k, v, o, lse, **kw)
    close_gradients(grads, ref.feature_backward(do, q, k, v, **rkw), 48, 64, "float32",
                    "window+softcap+alibi")


def test_alibi_per_batch_and_head(device, rng):
    q, k, v = (uniform(rng, (2, 2, 32, D)) for _ in range(3))
    slopes = np.array([[0.5, 0.1], [0.3, 0.0]], dtype=np.float32)
    o = sdpa_ze.attention(q, k, v, alibi_slopes=slopes)
    want, _ = ref.feature_forward(q, k, v, alibi=slopes)
    close(o, want, "float32", "O (alibi [B, Hq])", sk=32)


VARLEN_Q, VARLEN_K = [5, 0, 17], [9, 3, 30]


def test_varlen_forward_and_backward(device, rng):
    """Three packed sequences (one without queries), causal bottom-right,
    each its own problem; lse is [Hq, total_q]."""
    cu_q = np.concatenate([[0], np.cumsum(VARLEN_Q)]).astype(np.int32)
    cu_k = np.concatenate([[0], np.cumsum(VARLEN_K)]).astype(np.int32)
    q = uniform(rng, (1, 4, cu_q[-1], D))
    k, v = uniform(rng, (1, 2, cu_k[-1], D)), uniform(rng, (1, 2, cu_k[-1], D))
    kw = dict(causal="bottom_right", cu_seqlens_q=cu_q, cu_seqlens_k=cu_k,
              max_seqlen_q=max(VARLEN_Q), max_seqlen_k=max(VARLEN_K))
    o, lse = sdpa_ze.attention(q, k, v, return_lse=True, **kw)
    assert lse.shape == (4, cu_q[-1])
    do = uniform(rng, q.shape)
    dq, dk, dv = sdpa_ze.attention_backward(do, q, k, v, o, lse, **kw)
    for b in range(len(VARLEN_Q)):
        rq, rk = slice(cu_q[b], cu_q[b + 1]), slice(cu_k[b], cu_k[b + 1])
        if rq.start == rq.stop:
            continue
        qs, ks, vs = q[:, :, rq], k[:, :, rk], v[:, :, rk]
        want, want_lse = ref.feature_forward(qs, ks, vs, causal="bottom_right")
        close(o[:, :, rq], want, "float32", "O (varlen seq %d)" % b)
        ref.assert_close(lse[:, rq], want_lse[0], ref.lse_tolerance(64, D), "float32",
                         "lse (varlen seq %d)" % b)
        wants = ref.feature_backward(do[:, :, rq], qs, ks, vs, causal="bottom_right")
        close_gradients((dq[:, :, rq], dk[:, :, rk], dv[:, :, rk]), wants, VARLEN_Q[b],
                        VARLEN_K[b], "float32", "varlen seq %d" % b)
    # Keys of the sequence without queries get no gradient.
    rk = slice(cu_k[1], cu_k[2])
    assert np.all(dk[:, :, rk] == 0) and np.all(dv[:, :, rk] == 0)


def paged_cache(rng, lengths, block=16, hkv=2, blocks_per_seq=4):
    """A KV cache in shuffled blocks [num_blocks, Hkv, block, D] and the
    contiguous keys of each sequence."""
    b = len(lengths)
    num_blocks = b * blocks_per_seq + 3
    k_cache = uniform(rng, (num_blocks, hkv, block, D))
    v_cache = uniform(rng, (num_blocks, hkv, block, D))
    table = rng.permutation(num_blocks)[:b * blocks_per_seq].reshape(b, blocks_per_seq)
    table = table.astype(np.int32)

    def gather(cache, s):
        rows = np.concatenate([cache[blk] for blk in table[s]], axis=1)
        return rows[None, :, :lengths[s]]

    return k_cache, v_cache, table, gather


@pytest.mark.parametrize("sq,num_splits", [(1, 1), (1, 4), (4, 0)])
def test_paged_kv_and_split_kv(device, rng, sq, num_splits):
    """Decode (one query) unsplit and split four ways, and a chunked
    prefill (four queries, causal bottom-right) over a paged cache."""
    lengths = np.array([50, 7, 64], dtype=np.int32)
    k_cache, v_cache, table, gather = paged_cache(rng, lengths)
    q = uniform(rng, (3, 4, sq, D))
    causal = "bottom_right" if sq > 1 else False
    o = sdpa_ze.attention(q, k_cache, v_cache, causal=causal, block_table=table,
                          cache_seqlens=lengths, num_splits=num_splits)
    for s in range(3):
        want, _ = ref.feature_forward(q[s:s + 1], gather(k_cache, s), gather(v_cache, s),
                                      causal=causal)
        close(o[s:s + 1], want, "float32", "O (paged seq %d, splits %d)" % (s, num_splits))


def test_merge_states(device, rng):
    """Attention over two halves of the keys, merged, is attention over all
    of them; a state that saw no key (lse -inf) adds nothing."""
    q = uniform(rng, (2, 2, 24, D))
    k, v = uniform(rng, (2, 2, 64, D)), uniform(rng, (2, 2, 64, D))
    o1, l1 = sdpa_ze.attention(q, k[:, :, :40], v[:, :, :40], return_lse=True)
    o2, l2 = sdpa_ze.attention(q, k[:, :, 40:], v[:, :, 40:], return_lse=True)
    empty_o = np.full_like(o1, np.nan)
    empty_l = np.full_like(l1, -np.inf)
    o, lse = sdpa_ze.merge_states([o1, o2, empty_o], [l1, l2, empty_l])
    want, want_lse = ref.forward(q, k, v)
    close(o, want, "float32", "O (merged)")
    ref.assert_close(lse, want_lse, ref.lse_tolerance(64, D), "float32", "lse (merged)")
    want_o, _ = ref.merge([o1, o2], [l1, l2])
    close(o, want_o, "float32", "O (merge formula)")
    with pytest.raises(ValueError, match="17 states"):
        sdpa_ze.merge_states([o1] * 17, [l1] * 17)


def test_dropout_forward_and_backward(device, rng):
    """The keep mask is sdpa.h's Philox stream bit for bit; O and the
    gradients are the reference's with that mask; the backward regenerates
    it from the same p, seed and offset."""
    p, seed, offset = 0.25, 0x123456789AB, 7
    q, k, v = (uniform(rng, (1, 2, 32, D)) for _ in range(3))
    kw = dict(dropout_p=p, dropout_seed=seed, dropout_offset=offset)
    o, lse, keep = sdpa_ze.attention(q, k, v, return_lse=True, return_dropout_mask=True, **kw)
    want_keep = ref.dropout_keep((1, 2, 32, 32), p, seed, offset)
    assert keep.dtype == np.uint8 and np.array_equal(keep.astype(bool), want_keep)
    assert 0.6 < want_keep.mean() < 0.9
    want, _ = ref.feature_forward(q, k, v, keep=want_keep, dropout_p=p)
    close(o, want, "float32", "O (dropout)", abs_tol=4 * ref.forward_tolerance(32, D))
    do = uniform(rng, q.shape)
    grads = sdpa_ze.attention_backward(do, q, k, v, o, lse, **kw)
    close_gradients(grads, ref.feature_backward(do, q, k, v, keep=want_keep, dropout_p=p),
                    32, 32, "float32", "dropout")


def test_public_abi_structures():
    """sdpa_ze.abi is the public name of the ctypes mirrors."""
    from sdpa_ze import abi
    p = abi.new_problem()
    assert p.struct_version == abi.PROBLEM_DESC_VERSION == 3
    p.window.enabled, p.paged_kv.max_blocks_per_seq, p.varlen.batch = 1, 4, 3
    assert abi.STRUCTS["sdpa_merge_desc_t"] is abi.MergeDesc
    assert abi.new_merge_desc().struct_version == abi.MERGE_DESC_VERSION
    assert abi.new_merge_args().struct_version == abi.MERGE_ARGS_VERSION
    assert abi.ALIBI_PER_BATCH_HEAD == 2
