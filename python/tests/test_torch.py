"""sdpa_ze with PyTorch: torch tensors in and out, and sdpa_ze.torch's
autograd functions against torch.nn.functional.scaled_dot_product_attention
(values and gradients) or, for the features PyTorch lacks, the float64
NumPy reference. Skipped when torch is not installed (test_llm_features.py
covers every feature without it)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: the PyTorch tests are "
                            "skipped (pip install torch to run them)")
F = torch.nn.functional

import sdpa_ze  # noqa: E402
import sdpa_ze.torch as sz  # noqa: E402

import reference as ref  # noqa: E402

D = 64
EPS = {torch.float32: 2.0 ** -24, torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}


def rand(gen, *shape, dtype=torch.float32, grad=True):
    x = (torch.rand(*shape, generator=gen) * 2 - 1).to(dtype)
    return x.requires_grad_(grad)


@pytest.fixture
def gen(request):
    return torch.Generator().manual_seed(sum(ord(c) for c in request.node.nodeid))


def assert_close(got, want, what, dtype=torch.float32, terms=64, scale=1.0):
    """|got - want| <= 8 * magnitude * (eps * sqrt(terms) + the rounding of
    the output's dtype), as the reference module's tolerances."""
    got, want = got.detach().double(), want.detach().double()
    magnitude = max(want.abs().max().item(), 1e-30) * scale
    tol = 8 * magnitude * (EPS[torch.float32] * np.sqrt(terms) + EPS[dtype])
    err = (got - want).abs().max().item()
    assert err <= tol, "%s: max error %.3g > tolerance %.3g" % (what, err, tol)


def grads_of(out, inputs, grad_out):
    return torch.autograd.grad(out, inputs, grad_out)


# --------------------------------------------------------------------------
# Torch tensors in, torch tensors out
# --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_tensors_in_tensors_out(gen, dtype):
    """attention() takes torch tensors (requires_grad too) and returns torch
    tensors of the input dtype that torch.from_dlpack accepts."""
    q, k, v = (rand(gen, 1, 2, 40, D, dtype=dtype) for _ in range(3))
    o = sdpa_ze.attention(q, k, v, causal=True)
    assert isinstance(o, torch.Tensor) and o.dtype == dtype and o.shape == q.shape
    assert torch.from_dlpack(o).data_ptr() == o.data_ptr()
    want = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=True)
    assert_close(o, want, "O %s" % dtype, dtype, 40)
    o, lse = sdpa_ze.attention(q, k, v, return_lse=True)
    assert isinstance(lse, torch.Tensor) and lse.dtype == torch.float32


def test_outputs_outlive_the_call(gen):
    """A result owns its memory: it survives the inputs and other calls."""
    q, k, v = (rand(gen, 1, 2, 40, D, grad=False) for _ in range(3))
    o = sdpa_ze.attention(q, k, v)
    kept = o.clone()
    del q, k, v
    for _ in range(3):
        sdpa_ze.attention(*(rand(gen, 1, 2, 40, D, grad=False) for _ in range(3)))
    assert torch.equal(o, kept)


# --------------------------------------------------------------------------
# scaled_dot_product_attention against PyTorch's
# --------------------------------------------------------------------------

SDPA_CASES = {
    "causal-gqa": dict(hq=4, hkv=2, sq=48, sk=48, causal=True, mask=None),
    "bool-mask": dict(hq=2, hkv=2, sq=40, sk=56, causal=False, mask="bool"),
    "float-mask-scale": dict(hq=2, hkv=2, sq=40, sk=56, causal=False, mask="float", scale=0.3),
}


@pytest.mark.parametrize("name", sorted(SDPA_CASES))
def test_sdpa_matches_pytorch(gen, name):
    c = SDPA_CASES[name]
    q = rand(gen, 2, c["hq"], c["sq"], D)
    k, v = rand(gen, 2, c["hkv"], c["sk"], D), rand(gen, 2, c["hkv"], c["sk"], D)
    mask = None
    if c["mask"] == "bool":
        mask = torch.rand(c["sq"], c["sk"], generator=gen) < 0.7
        mask[:, 0] = True
    elif c["mask"] == "float":
        mask = torch.rand(1, c["hq"], c["sq"], c["sk"], generator=gen) * 4 - 2
    kw = dict(attn_mask=mask, is_causal=c["causal"], scale=c.get("scale"),
              enable_gqa=c["hq"] != c["hkv"])
    o = sz.scaled_dot_product_attention(q, k, v, **kw)
    want = F.scaled_dot_product_attention(q.double(), k.double(), v.double(),
                                          **dict(kw, attn_mask=None if mask is None else
                                                 mask if mask.dtype == torch.bool
                                                 else mask.double()))
    assert o.dtype == torch.float32 and o.shape == q.shape
    assert_close(o, want, "O " + name, terms=c["sk"])
    do = torch.rand(o.shape, generator=gen) - 0.5
    got = grads_of(o, (q, k, v), do)
    wants = grads_of(want, (q, k, v), do.double())
    for n, g, w in zip(("dQ", "dK", "dV"), got, wants):
        assert g.shape == w.shape
        assert_close(g, w, "%s %s" % (n, name), terms=c["sq"] + c["sk"] + D)


def test_sdpa_bfloat16_and_three_dimensions(gen):
    """bf16 in, bf16 out and bf16 gradients; 3-D inputs [N, L, E]."""
    q, k, v = (rand(gen, 2, 2, 32, D, dtype=torch.bfloat16) for _ in range(3))
    o = sz.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert o.dtype == torch.bfloat16
    want = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=True)
    assert_close(o, want, "O bf16", torch.bfloat16, 32)
    dq, = grads_of(o.float().sum(), (q,), None)
    assert dq.dtype == torch.bfloat16
    x = rand(gen, 3, 24, D)
    o3 = sz.scaled_dot_product_attention(x, x, x)
    assert o3.shape == x.shape
    assert_close(o3, F.scaled_dot_product_attention(x.double(), x.double(), x.double()), "O 3-D")


def test_sdpa_refuses_what_pytorch_refuses(gen):
    q, k = rand(gen, 1, 4, 8, D), rand(gen, 1, 2, 8, D)
    with pytest.raises(ValueError, match="enable_gqa"):
        sz.scaled_dot_product_attention(q, k, k)
    with pytest.raises(ValueError, match="attn_mask and is_causal"):
        sz.scaled_dot_product_attention(q, q, q, attn_mask=torch.ones(8, 8, dtype=torch.bool),
                                        is_causal=True)


def test_sdpa_dropout_is_the_documented_stream(gen):
    """Dropout: the seed comes from torch's generator; O and the gradients
    are the reference's with sdpa.h's Philox keep mask for that seed."""
    p = 0.2
    q, k, v = (rand(gen, 1, 2, 32, D) for _ in range(3))
    torch.manual_seed(1234)
    seed = int(torch.randint(0, 2 ** 62, (1,), dtype=torch.int64).item())
    torch.manual_seed(1234)
    o = sz.scaled_dot_product_attention(q, k, v, dropout_p=p)
    keep = ref.dropout_keep((1, 2, 32, 32), p, seed, 0)
    arrays = [x.detach().numpy() for x in (q, k, v)]
    want, _ = ref.feature_forward(*arrays, keep=keep, dropout_p=p)
    assert_close(o, torch.from_numpy(want), "O dropout", terms=32, scale=4)
    do = torch.rand(o.shape, generator=gen) - 0.5
    got = grads_of(o, (q, k, v), do)
    wants = ref.feature_backward(do.numpy(), *arrays, keep=keep, dropout_p=p)
    for n, g, w in zip(("dQ", "dK", "dV"), got, wants):
        assert_close(g, torch.from_numpy(w), n + " dropout", terms=32 + 32 + D)


# --------------------------------------------------------------------------
# FlashAttention's entry points
# --------------------------------------------------------------------------

def test_flash_attn_func_features(gen):
    """[B, S, H, D] layout with a window, a softcap and ALiBi (which PyTorch
    lacks: the NumPy reference), values and gradients; lse returned."""
    q = rand(gen, 2, 40, 4, D)
    k, v = rand(gen, 2, 56, 2, D), rand(gen, 2, 56, 2, D)
    slopes = torch.tensor([0.5, 0.25, 0.125, 0.0625])
    kw = dict(causal=True, window_size=(24, 0), softcap=0.3, alibi_slopes=slopes)
    o, lse = sz.flash_attn_func(q, k, v, return_lse=True, **kw)
    assert o.shape == q.shape and lse.shape == (2, 4, 40)
    arrays = [x.detach().transpose(1, 2).numpy() for x in (q, k, v)]
    rkw = dict(causal="bottom_right", window=(24, 0), softcap=0.3, alibi=slopes.numpy())
    want, want_lse = ref.feature_forward(*arrays, **rkw)
    assert_close(o.transpose(1, 2), torch.from_numpy(want), "O flash", terms=56)
    assert_close(lse, torch.from_numpy(want_lse), "lse flash", terms=56)
    do = torch.rand(o.shape, generator=gen) - 0.5
    got = grads_of(o, (q, k, v), do)
    wants = ref.feature_backward(do.transpose(1, 2).numpy(), *arrays, **rkw)
    for n, g, w in zip(("dQ", "dK", "dV"), got, wants):
        assert_close(g.transpose(1, 2), torch.from_numpy(w), n + " flash", terms=40 + 56 + D)


def test_flash_attn_varlen_func(gen):
    """Packed sequences against PyTorch's SDPA on each sequence."""
    lq, lk = [7, 20, 1], [7, 33, 12]
    cu_q = torch.tensor([0] + list(np.cumsum(lq)), dtype=torch.int32)
    cu_k = torch.tensor([0] + list(np.cumsum(lk)), dtype=torch.int32)
    q = rand(gen, sum(lq), 2, D)
    k, v = rand(gen, sum(lk), 2, D), rand(gen, sum(lk), 2, D)
    o = sz.flash_attn_varlen_func(q, k, v, cu_q, cu_k, max(lq), max(lk))
    do = torch.rand(o.shape, generator=gen) - 0.5
    got = grads_of(o, (q, k, v), do)
    qd, kd, vd = (x.detach().double().requires_grad_() for x in (q, k, v))
    pieces = []
    for b in range(3):
        rq, rk = slice(int(cu_q[b]), int(cu_q[b + 1])), slice(int(cu_k[b]), int(cu_k[b + 1]))
        pieces.append(F.scaled_dot_product_attention(
            qd[rq].transpose(0, 1), kd[rk].transpose(0, 1), vd[rk].transpose(0, 1)
        ).transpose(0, 1))
    want = torch.cat(pieces)
    assert_close(o, want, "O varlen", terms=max(lk))
    wants = grads_of(want, (qd, kd, vd), do.double())
    for n, g, w in zip(("dQ", "dK", "dV"), got, wants):
        assert_close(g, w, n + " varlen", terms=max(lq) + max(lk) + D)


def test_flash_attn_with_kvcache_paged_and_split(gen):
    """A paged cache, decode split two ways, and the same through
    flash_attn_varlen_func's block_table; merging two halves."""
    lengths = torch.tensor([40, 9], dtype=torch.int32)
    k_cache, v_cache = rand(gen, 6, 16, 2, D, grad=False), rand(gen, 6, 16, 2, D, grad=False)
    table = torch.tensor([[4, 0, 2], [5, 1, 3]], dtype=torch.int32)
    q = rand(gen, 2, 1, 4, D, grad=False)
    o = sz.flash_attn_with_kvcache(q, k_cache, v_cache, lengths, table, num_splits=2)
    for b in range(2):
        keys = torch.cat([k_cache[i] for i in table[b]])[:lengths[b]]
        vals = torch.cat([v_cache[i] for i in table[b]])[:lengths[b]]
        want = F.scaled_dot_product_attention(q[b].transpose(0, 1).double(),
                                              keys.transpose(0, 1).double().repeat_interleave(2, 0),
                                              vals.transpose(0, 1).double().repeat_interleave(2, 0))
        assert_close(o[b].transpose(0, 1), want, "O paged %d" % b, terms=40)
    cu_q = torch.tensor([0, 1, 2], dtype=torch.int32)
    cu_k = torch.tensor([0, 40, 49], dtype=torch.int32)
    o2 = sz.flash_attn_varlen_func(q.reshape(2, 4, D), k_cache, v_cache, cu_q, cu_k, 1, 40,
                                   block_table=table)
    assert_close(o2, o.reshape(2, 4, D), "O varlen+block_table", terms=40)


def test_merge_attention_states(gen):
    q = rand(gen, 1, 2, 16, D, grad=False)
    k, v = rand(gen, 1, 2, 48, D, grad=False), rand(gen, 1, 2, 48, D, grad=False)
    o1, l1 = sdpa_ze.attention(q, k[:, :, :20], v[:, :, :20], return_lse=True)
    o2, l2 = sdpa_ze.attention(q, k[:, :, 20:], v[:, :, 20:], return_lse=True)
    o, lse = sz.merge_attention_states([o1, o2], [l1, l2])
    assert isinstance(o, torch.Tensor)
    assert_close(o, F.scaled_dot_product_attention(q.double(), k.double(), v.double()),
                 "O merged", terms=48)


# --------------------------------------------------------------------------
# torch.library and torch.compile
# --------------------------------------------------------------------------

def test_custom_ops_pass_opcheck(gen):
    """The custom ops' schemas, fake implementations, autograd registration
    and AOT dispatch are consistent (torch.library.opcheck, every test)."""
    q, k, v = (rand(gen, 1, 2, 16, D, grad=False) for _ in range(3))
    options = (1, 0.125, -1, -1, 0.0, None, None, None, 0, 0, 0.0, 0)
    forward = (q, k, v, None) + options
    torch.library.opcheck(torch.ops.sdpa_ze.attention_forward.default, forward)
    o, lse = torch.ops.sdpa_ze.attention_forward(*forward)
    backward = (torch.rand(o.shape, generator=gen), q, k, v, o, lse, None) + options + (False,)
    torch.library.opcheck(torch.ops.sdpa_ze.attention_backward.default, backward)


def test_torch_compile_traces_through(gen):
    """torch.compile (fullgraph, AOT autograd over the fake implementations)
    gives the eager values and gradients."""
    q, k, v = (rand(gen, 1, 2, 24, D) for _ in range(3))

    def layer(q, k, v):
        return sz.scaled_dot_product_attention(q, k, v, is_causal=True).sum()

    compiled = torch.compile(layer, backend="aot_eager", fullgraph=True)
    got = torch.autograd.grad(compiled(q, k, v), (q, k, v))
    want = torch.autograd.grad(layer(q, k, v), (q, k, v))
    for g, w in zip(got, want):
        assert torch.allclose(g, w, rtol=0, atol=1e-6)


def test_training_a_toy_attention_layer(gen):
    """A few optimizer steps of a small attention layer with sdpa_ze and
    with PyTorch's SDPA from the same weights: the gradients agree at every
    step."""
    torch.manual_seed(0)

    class Layer(torch.nn.Module):
        def __init__(self, attend):
            super().__init__()
            self.qkv, self.out = torch.nn.Linear(64, 192), torch.nn.Linear(64, 64)
            self.attend = attend

        def forward(self, x):
            b, s, _ = x.shape
            q, k, v = self.qkv(x).view(b, s, 3, 2, 32).permute(2, 0, 3, 1, 4)
            return self.out(self.attend(q, k, v, is_causal=True).transpose(1, 2).reshape(b, s, 64))

    ours, theirs = Layer(sz.scaled_dot_product_attention), Layer(F.scaled_dot_product_attention)
    theirs.load_state_dict(ours.state_dict())
    x, target = torch.randn(4, 16, 64, generator=gen), torch.randn(4, 16, 64, generator=gen)
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (ours, theirs)]
    for step in range(3):
        for m, opt in zip((ours, theirs), optimizers):
            opt.zero_grad()
            F.mse_loss(m(x), target).backward()
        for (name, a), b in zip(ours.named_parameters(), theirs.parameters()):
            assert_close(a.grad, b.grad, "step %d %s.grad" % (step, name), terms=16 + 16 + 32,
                         scale=4)
        for opt in optimizers:
            opt.step()


# --------------------------------------------------------------------------
# ABI 1.2: attention sinks and FP8 K/V
# --------------------------------------------------------------------------

def test_sinks_with_autograd(gen):
    """flash_attn_func with sinks (GQA 4:2, causal, a sliding window): O
    against the float64 reference, and the gradients of q, k, v and the
    sinks through autograd against its backward."""
    q, k, v = rand(gen, 2, 24, 4, D), rand(gen, 2, 32, 2, D), rand(gen, 2, 32, 2, D)
    sinks = torch.tensor([0.5, -1.0, 2.0, 0.0], requires_grad=True)
    o = sz.flash_attn_func(q, k, v, causal=True, window_size=(12, 0), sinks=sinks)
    bhsd = [x.detach().transpose(1, 2).numpy() for x in (q, k, v)]
    kw = dict(causal="bottom_right", window=(12, 0), sinks=sinks.detach().numpy())
    want, _ = ref.feature_forward(*bhsd, **kw)
    assert_close(o.transpose(1, 2), torch.from_numpy(want), "O (sinks)", terms=32)
    do = torch.rand(o.shape, generator=gen) - 0.5
    got = torch.autograd.grad(o, (q, k, v, sinks), do)
    wants = ref.feature_backward(do.transpose(1, 2).numpy(), *bhsd, **kw)
    for name, g, w in zip(("dQ", "dK", "dV"), got, wants):
        assert_close(g.transpose(1, 2), torch.from_numpy(w), name + " (sinks)", terms=56)
    assert got[3].shape == (4,) and got[3].abs().min() > 1e-3
    assert_close(got[3], torch.from_numpy(wants[3]), "dsinks", terms=2 * 24 + D)


@pytest.mark.parametrize("fp8", [torch.float8_e4m3fn, torch.float8_e5m2])
def test_fp8_kv_cache(gen, fp8):
    """torch.float8 K and V with per-head (K) and per-tensor (V, a float)
    scales, against the reference decoding the bits itself; the backward
    is the library's refusal."""
    q = rand(gen, 1, 16, 4, D, grad=False)
    k = (torch.rand(1, 32, 2, D, generator=gen) * 4 - 2).to(fp8)
    v = (torch.rand(1, 32, 2, D, generator=gen) * 4 - 2).to(fp8)
    k_scale = torch.tensor([0.25, 0.5])
    o = sz.flash_attn_func(q, k, v, causal=True, k_scale=k_scale, v_scale=0.75)
    name = str(fp8).split(".")[1]
    k_values = ref.fp8_decode(k.view(torch.uint8).transpose(1, 2).numpy(), name)
    v_values = ref.fp8_decode(v.view(torch.uint8).transpose(1, 2).numpy(), name)
    want, _ = ref.feature_forward(q.transpose(1, 2).numpy(),
                                  k_values * k_scale.numpy().reshape(1, 2, 1, 1),
                                  v_values * 0.75, causal="bottom_right")
    assert_close(o.transpose(1, 2), torch.from_numpy(want), "O (%s)" % name, terms=32)
    q.requires_grad_(True)
    o = sz.flash_attn_func(q, k, v, k_scale=k_scale, v_scale=0.75)
    with pytest.raises(sdpa_ze.SdpaError, match="(?i)fp8|f8|quantized"):
        o.sum().backward()


def test_custom_ops_pass_opcheck_with_sinks(gen):
    q, k, v = (rand(gen, 1, 2, 16, D, grad=False) for _ in range(3))
    sinks = torch.tensor([0.25, -0.5])
    options = (1, 0.125, -1, -1, 0.0, None, None, None, 0, 0, 0.0, 0)
    forward = (q, k, v, None) + options + (sinks,)
    torch.library.opcheck(torch.ops.sdpa_ze.attention_forward.default, forward)
    o, lse = torch.ops.sdpa_ze.attention_forward(*forward)
    backward = (torch.rand(o.shape, generator=gen), q, k, v, o, lse, None) + options + (
        False, sinks)
    torch.library.opcheck(torch.ops.sdpa_ze.attention_backward.default, backward)


def test_kvcache_fp8_with_sinks(gen):
    """flash_attn_with_kvcache over an FP8 e5m2 paged cache [num_blocks,
    block_size, Hkv, D] with a per-tensor K scale and sinks."""
    k_cache = (torch.rand(6, 16, 2, D, generator=gen) * 4 - 2).to(torch.float8_e5m2)
    v_cache = (torch.rand(6, 16, 2, D, generator=gen) * 4 - 2).to(torch.float8_e5m2)
    table = torch.tensor([[4, 1, 5], [0, 2, 3]], dtype=torch.int32)
    lengths = torch.tensor([40, 9], dtype=torch.int32)
    q = rand(gen, 2, 1, 4, D, grad=False)
    sinks = torch.tensor([0.5, 1.5, -1.0, 2.5])
    o = sz.flash_attn_with_kvcache(q, k_cache, v_cache, lengths, table, sinks=sinks,
                                   k_scale=0.5)
    for s in range(2):
        def rows(cache):
            bits = torch.cat([cache[b] for b in table[s].tolist()]).view(torch.uint8)
            return ref.fp8_decode(bits[:lengths[s]].permute(1, 0, 2).numpy(), "float8_e5m2")
        want, _ = ref.feature_forward(q[s:s + 1].transpose(1, 2).numpy(),
                                      rows(k_cache)[None] * 0.5, rows(v_cache)[None],
                                      sinks=sinks.numpy())
        assert_close(o[s:s + 1].transpose(1, 2), torch.from_numpy(want),
                     "O (kvcache e5m2 + sinks, seq %d)" % s, terms=48)
