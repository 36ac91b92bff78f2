"""sdpa_ze.distributed: ring attention over torch.distributed (gloo) at 2
ranks, two processes on localhost, against F.scaled_dot_product_attention
over the whole sequence in float64: each rank's rows of O and its tokens'
dQ, dK and dV. Skipped when torch (or its gloo backend) is not installed."""

import math
import socket

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: the torch.distributed "
                            "tests are skipped (pip install torch to run them)")
dist = pytest.importorskip("torch.distributed")
if not dist.is_available() or not dist.is_gloo_available():
    pytest.skip("torch.distributed with gloo is not available", allow_module_level=True)
import torch.multiprocessing as mp  # noqa: E402

RANKS = 2
EPS = {torch.float32: 2.0 ** -24, torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _check(name, got, want, dtype, terms, parts, rank):
    """|got - want| <= magnitude (8 eps32 sqrt(terms) + (8 + parts) eps of
    dtype): f32 sums in the kernels, results rounded to dtype, and parts
    partial results rounded to dtype and added in f32 (the ring's)."""
    got, want = got.detach().double(), want.detach().double()
    magnitude = max(want.abs().max().item(), 1e-30)
    tol = magnitude * (8 * EPS[torch.float32] * math.sqrt(terms) + (8 + parts) * EPS[dtype])
    err = (got - want).abs().max().item()
    print("rank %d: %-3s max error %.3g (tolerance %.3g)" % (rank, name, err, tol), flush=True)
    assert err <= tol, "rank %d: %s: max error %.3g > tolerance %.3g" % (rank, name, err, tol)


def _worker(rank, port, layout, causal, dtype, heads, kv_heads):
    import torch.nn.functional as F
    import sdpa_ze.distributed as szd

    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port, rank=rank,
                            world_size=RANKS)
    try:
        batch, seq, head_size = 1, 64, 32
        gen = torch.Generator().manual_seed(1234)  # the same sequence on every rank

        def rand(h):
            return (torch.rand(batch, h, seq, head_size, generator=gen) * 2 - 1).to(dtype)

        q, k, v, grad_o = rand(heads), rand(kv_heads), rand(kv_heads), rand(heads)
        idx = szd.shard_indices(seq // RANKS, layout)
        shard = [x[:, :, idx].clone().requires_grad_() for x in (q, k, v)]
        o = szd.ring_attention(*shard, is_causal=causal, layout=layout)
        assert o.dtype == dtype and o.shape == shard[0].shape
        o.backward(grad_o[:, :, idx])

        full = [x.double().requires_grad_() for x in (q, k, v)]
        want = F.scaled_dot_product_attention(*full, is_causal=causal,
                                              enable_gqa=heads != kv_heads)
        want.backward(grad_o.double())
        print("rank %d of %d: %s, %s, %s, %d/%d heads, tokens %s" % (
            rank, RANKS, layout, "causal" if causal else "no mask", dtype, heads, kv_heads,
            idx if len(idx) <= 8 else "%s ... %s" % (idx[:4], idx[-4:])), flush=True)
        _check("O", o, want[:, :, idx], dtype, head_size, 0, rank)
        for name, got, ref in zip(("dQ", "dK", "dV"), shard, full):
            _check(name, got.grad, ref.grad[:, :, idx], dtype, 2 * seq + head_size, 2 * RANKS,
                   rank)
        # The cp objects are cached: a second step reuses them.
        o2 = szd.ring_attention(*shard, is_causal=causal, layout=layout)
        assert torch.equal(o2, o), "rank %d: a second run differs" % rank
    finally:
        dist.destroy_process_group()


@pytest.mark.parametrize("layout, causal, dtype, heads, kv_heads", [
    ("contiguous", False, torch.float32, 2, 2),
    ("zigzag", True, torch.float32, 4, 2),
    ("zigzag", True, torch.bfloat16, 2, 2),
])
def test_ring_attention_two_ranks(layout, causal, dtype, heads, kv_heads):
    mp.spawn(_worker, args=(_free_port(), layout, causal, dtype, heads, kv_heads),
             nprocs=RANKS, join=True)
