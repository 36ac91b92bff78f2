"""sdpa_ze for PyTorch: attention with autograd on the sdpa-ze device, with
the signatures PyTorch and FlashAttention users already call.

    import torch, sdpa_ze.torch as sz
    o = sz.scaled_dot_product_attention(q, k, v, is_causal=True)   # like F.sdpa
    o = sz.flash_attn_func(q, k, v, causal=True)                    # [B, S, H, D]
    o = sz.flash_attn_varlen_func(q, k, v, cu_q, cu_k, max_q, max_k)
    o = sz.flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens, block_table)

Tensors are CPU torch tensors (float32, float16, bfloat16; K and V also
torch.float8_e4m3fn and float8_e5m2 with k_scale / v_scale, forward only;
attention sinks with their gradient through sinks=); they are copied
into the device's shared memory, and the results are torch tensors over that
memory (no copy back). Forward and backward run the plugin's kernels: the
backward is sdpa-ze's (the log-sum-exp of the forward is saved, nothing is
recomputed in PyTorch). The two passes are the custom operators
``torch.ops.sdpa_ze.attention_forward`` and ``attention_backward`` (with
fake implementations, so torch.compile traces through them) behind a
torch.autograd.Function (Attention)."""

import math
from typing import List, Optional, Tuple

import torch

from . import _attention

__all__ = ["scaled_dot_product_attention", "flash_attn_func", "flash_attn_varlen_func",
           "flash_attn_with_kvcache", "merge_attention_states", "Attention"]

_CAUSAL = (False, "top_left", "bottom_right")  # the ops' causal argument indexes this


def _features(window_left, window_right, softcap, alibi_slopes, cu_seqlens_q, cu_seqlens_k,
              max_seqlen_q, max_seqlen_k, dropout_p, dropout_seed):
    varlen = cu_seqlens_q is not None
    return dict(window=(window_left, window_right), softcap=softcap,
                alibi_slopes=alibi_slopes, cu_seqlens_q=cu_seqlens_q,
                cu_seqlens_k=cu_seqlens_k, max_seqlen_q=max_seqlen_q if varlen else None,
                max_seqlen_k=max_seqlen_k if varlen else None, dropout_p=dropout_p,
                dropout_seed=dropout_seed)


@torch.library.custom_op("sdpa_ze::attention_forward", mutates_args=())
def attention_forward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                      mask: Optional[torch.Tensor], causal: int, scale: float,
                      window_left: int, window_right: int, softcap: float,
                      alibi_slopes: Optional[torch.Tensor], cu_seqlens_q: Optional[torch.Tensor],
                      cu_seqlens_k: Optional[torch.Tensor], max_seqlen_q: int, max_seqlen_k: int,
                      dropout_p: float, dropout_seed: int, sinks: Optional[torch.Tensor] = None,
                      k_scale: Optional[torch.Tensor] = None,
                      v_scale: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor,
                                                                       torch.Tensor]:
    """(O, lse) of attention over q, k, v in sdpa.h's layout [B, H, S, D]
    (varlen: [1, H, total, D]); lse float32 [B, Hq, Sq] ([Hq, total_q]).
    sinks: float32 [Hq]; k_scale, v_scale: the scales of FP8 K/V (ABI 1.2)."""
    return _attention.attention(
        q, k, v, mask=mask, causal=_CAUSAL[causal], scale=scale, return_lse=True,
        sinks=sinks, k_scale=k_scale, v_scale=v_scale,
        **_features(window_left, window_right, softcap, alibi_slopes, cu_seqlens_q,
                    cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p, dropout_seed))


@attention_forward.register_fake
def _(q, k, v, mask, causal, scale, window_left, window_right, softcap, alibi_slopes,
      cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p, dropout_seed,
      sinks=None, k_scale=None, v_scale=None):
    b, hq, sq, _ = q.shape
    lse_shape = (hq, sq) if cu_seqlens_q is not None else (b, hq, sq)
    return (q.new_empty((b, hq, sq, v.shape[3])),  # O takes V's head size
            q.new_empty(lse_shape, dtype=torch.float32))


@torch.library.custom_op("sdpa_ze::attention_backward", mutates_args=())
def attention_backward(grad_out: torch.Tensor, q: torch.Tensor, k: torch.Tensor,
                       v: torch.Tensor, out: torch.Tensor, lse: torch.Tensor,
                       mask: Optional[torch.Tensor], causal: int, scale: float,
                       window_left: int, window_right: int, softcap: float,
                       alibi_slopes: Optional[torch.Tensor],
                       cu_seqlens_q: Optional[torch.Tensor],
                       cu_seqlens_k: Optional[torch.Tensor], max_seqlen_q: int,
                       max_seqlen_k: int, dropout_p: float, dropout_seed: int,
                       deterministic: bool, sinks: Optional[torch.Tensor] = None
                       ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dQ, dK, dV, dsinks) of attention_forward for grad_out; dsinks is
    float32 [Hq], or empty [0] without sinks (an operator returns tensors)."""
    grads = _attention.attention_backward(
        grad_out, q, k, v, out, lse, mask=mask, causal=_CAUSAL[causal], scale=scale,
        deterministic=deterministic, sinks=sinks,
        **_features(window_left, window_right, softcap, alibi_slopes, cu_seqlens_q,
                    cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p, dropout_seed))
    if sinks is None:
        grads += (q.new_empty((0,), dtype=torch.float32),)
    return grads


@attention_backward.register_fake
def _(grad_out, q, k, v, out, lse, mask, causal, scale, window_left, window_right, softcap,
      alibi_slopes, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, dropout_p,
      dropout_seed, deterministic, sinks=None):
    dsinks = q.new_empty((0,) if sinks is None else (q.shape[1],), dtype=torch.float32)
    return (q.new_empty(q.shape, dtype=q.dtype), k.new_empty(k.shape, dtype=q.dtype),
            v.new_empty(v.shape, dtype=q.dtype), dsinks)


class Attention(torch.autograd.Function):
    """Attention in sdpa.h's layout with autograd: apply(q, k, v, mask,
    alibi_slopes, cu_seqlens_q, cu_seqlens_k, options[, sinks, k_scale,
    v_scale]), options a tuple (causal, scale, window_left, window_right,
    softcap, max_seqlen_q, max_seqlen_k, dropout_p, dropout_seed,
    deterministic). Returns (O, lse); lse has no gradient. sinks (float32
    [Hq]) get their gradient; no gradient flows to the mask, the slopes or
    the scales of FP8 K/V (whose backward SdpaError refuses)."""

    @staticmethod
    def forward(ctx, q, k, v, mask, alibi_slopes, cu_seqlens_q, cu_seqlens_k, options,
                sinks=None, k_scale=None, v_scale=None):
        (causal, scale, wl, wr, softcap, max_q, max_k, dropout_p, seed, _) = options
        out, lse = torch.ops.sdpa_ze.attention_forward(
            q, k, v, mask, causal, scale, wl, wr, softcap, alibi_slopes, cu_seqlens_q,
            cu_seqlens_k, max_q, max_k, dropout_p, seed, sinks, k_scale, v_scale)
        ctx.save_for_backward(q, k, v, out, lse, mask, alibi_slopes, cu_seqlens_q, cu_seqlens_k,
                              sinks)
        ctx.options = options
        ctx.mark_non_differentiable(lse)
        return out, lse

    @staticmethod
    def backward(ctx, grad_out, grad_lse):
        q, k, v, out, lse, mask, alibi_slopes, cu_q, cu_k, sinks = ctx.saved_tensors
        (causal, scale, wl, wr, softcap, max_q, max_k, dropout_p, seed,
         deterministic) = ctx.options
        dq, dk, dv, dsinks = torch.ops.sdpa_ze.attention_backward(
            grad_out, q, k, v, out, lse, mask, causal, scale, wl, wr, softcap, alibi_slopes,
            cu_q, cu_k, max_q, max_k, dropout_p, seed, deterministic, sinks)
        dsinks = dsinks if sinks is not None else None
        return dq, dk, dv, None, None, None, None, None, dsinks, None, None


def _seed(dropout_p):
    """A dropout seed from torch's default generator (so torch.manual_seed
    makes runs repeatable), 0 without dropout."""
    if not dropout_p:
        return 0
    return int(torch.randint(0, 2 ** 62, (1,), dtype=torch.int64).item())


def _attend(q, k, v, mask=None, causal=0, scale=None, window=(-1, -1), softcap=0.0,
            alibi_slopes=None, cu_seqlens_q=None, cu_seqlens_k=None, max_seqlen_q=0,
            max_seqlen_k=0, dropout_p=0.0, deterministic=False, sinks=None, k_scale=None,
            v_scale=None):
    """Attention in sdpa.h's layout through Attention; returns (O, lse)."""
    if mask is not None and mask.requires_grad:
        raise ValueError("attn_mask requires grad: sdpa_ze computes no gradient for the mask")
    k_scale, v_scale = _scale_tensor(k_scale, "k_scale"), _scale_tensor(v_scale, "v_scale")
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    left, right = (int(x) for x in window)
    options = (int(causal), scale, left, right, float(softcap or 0.0), int(max_seqlen_q or 0),
               int(max_seqlen_k or 0), float(dropout_p), _seed(dropout_p), bool(deterministic))
    if cu_seqlens_q is not None:
        cu_seqlens_q, cu_seqlens_k = cu_seqlens_q.to(torch.int32), cu_seqlens_k.to(torch.int32)
    return Attention.apply(q, k, v, mask, alibi_slopes, cu_seqlens_q, cu_seqlens_k, options,
                           sinks, k_scale, v_scale)


def _scale_tensor(scale, name):
    """A scale of FP8 K/V as the operator takes it: a tensor (a Python
    number becomes a one-element float32 tensor)."""
    if scale is None or isinstance(scale, torch.Tensor):
        if scale is not None and scale.requires_grad:
            raise ValueError("%s requires grad: sdpa_ze computes no gradient for the scales"
                             % name)
        return scale
    if isinstance(scale, (int, float)) and not isinstance(scale, bool):
        return torch.tensor([float(scale)], dtype=torch.float32)
    raise TypeError("%s: %s; expected a float or a torch tensor" % (name, type(scale).__name__))


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """torch.nn.functional.scaled_dot_product_attention on the sdpa-ze device.

    query [..., Hq, L, E], key and value [..., Hkv, S, E] (3 or more
    dimensions; leading ones are batch), float32, float16 or bfloat16.
    attn_mask: bool (True = attend) or additive float, broadcasting to
    [..., Hq, L, S]; no gradient flows to it. is_causal: the top-left
    causal mask, as PyTorch's. enable_gqa: Hq a multiple of Hkv (without it
    the head counts must match, as in PyTorch). dropout_p: dropout on the
    probabilities (sdpa-ze's Philox stream, seeded from torch's generator:
    the kept elements differ from PyTorch's). Returns a tensor of query's
    shape and dtype."""
    if attn_mask is not None and is_causal:
        raise ValueError("attn_mask and is_causal together: pass one of them, as "
                         "torch.nn.functional.scaled_dot_product_attention requires")
    if query.dim() < 3:
        raise ValueError("query: %d dimensions; expected at least 3 ([..., L, E])"
                         % query.dim())
    hq, hkv = query.shape[-3] if query.dim() > 3 else 1, key.shape[-3] if key.dim() > 3 else 1
    if hq != hkv and not enable_gqa:
        raise ValueError("query has %d heads and key %d: pass enable_gqa=True for grouped-query "
                         "attention" % (hq, hkv))
    shape = query.shape

    def four_d(x):
        return x.unsqueeze(1) if x.dim() == 3 else x.reshape(-1, *x.shape[-3:])

    mask = attn_mask
    if mask is not None and query.dim() != 4:
        full = (*shape[:-1], key.shape[-2])
        mask = four_d(mask.expand(full) if mask.dim() > 2 or query.dim() > 4 else mask)
    out, _ = _attend(four_d(query), four_d(key), four_d(value), mask,
                     1 if is_causal else 0, scale, dropout_p=dropout_p)
    return out.reshape(shape)


def _flash_outputs(out, lse, return_lse, return_attn_probs):
    if return_attn_probs:
        return out, lse, None  # S_dmask: not kept
    return (out, lse) if return_lse else out


def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False,
                    window_size=(-1, -1), softcap=0.0, alibi_slopes=None, deterministic=False,
                    return_attn_probs=False, return_lse=False, sinks=None, k_scale=None,
                    v_scale=None):
    """FlashAttention's flash_attn_func: q [B, Sq, Hq, D], k and v [B, Sk, Hkv,
    D]; causal is bottom-right aligned (query i sees keys j <= i + Sk - Sq);
    window_size (left, right), -1 unbounded; softcap (0: off); alibi_slopes
    float32 [Hq] or [B, Hq]. sinks: float32 [Hq] attention sinks (gpt-oss),
    with their gradient. k and v may be torch.float8_e4m3fn or float8_e5m2
    (forward only), k_scale and v_scale a float or float32 [Hkv] (the
    dequantization scales: x = fp8 * scale). Returns O [B, Sq, Hq, D]; with
    return_lse (or return_attn_probs, whose third item is None) also the
    float32 lse [B, Hq, Sq]."""
    out, lse = _attend(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), None,
                       2 if causal else 0, softmax_scale, window_size, softcap, alibi_slopes,
                       dropout_p=dropout_p, deterministic=deterministic, sinks=sinks,
                       k_scale=k_scale, v_scale=v_scale)
    return _flash_outputs(out.transpose(1, 2), lse, return_lse, return_attn_probs)


def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                           dropout_p=0.0, softmax_scale=None, causal=False,
                           window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                           deterministic=False, return_attn_probs=False, block_table=None,
                           return_lse=False, sinks=None, k_scale=None, v_scale=None):
    """FlashAttention's flash_attn_varlen_func: q [total_q, Hq, D], k and v
    [total_k, Hkv, D] packing B sequences, cu_seqlens_q/k int32 [B + 1].
    Returns O [total_q, Hq, D] (and lse [Hq, total_q]). With block_table,
    k and v are a paged cache [num_blocks, block_size, Hkv, D] and every
    query sequence must have the same length (decode, or equal chunks):
    forward only. sinks, k_scale, v_scale: as flash_attn_func's."""
    if block_table is not None:
        lengths = (cu_seqlens_q[1:] - cu_seqlens_q[:-1]).tolist()
        if len(set(lengths)) != 1:
            raise ValueError("block_table with query lengths %s: sdpa-ze's paged KV takes one "
                             "query length for every sequence" % (lengths,))
        batch, sq = len(lengths), lengths[0]
        cache_seqlens = (cu_seqlens_k[1:] - cu_seqlens_k[:-1]).to(torch.int32)
        result = flash_attn_with_kvcache(
            q.reshape(batch, sq, *q.shape[1:]), k, v, cache_seqlens, block_table,
            softmax_scale=softmax_scale, causal=causal, window_size=window_size,
            softcap=softcap, alibi_slopes=alibi_slopes,
            return_softmax_lse=return_lse or return_attn_probs, sinks=sinks, k_scale=k_scale,
            v_scale=v_scale)
        if isinstance(result, tuple):
            out, lse = result
            return _flash_outputs(out.reshape(q.shape), lse.transpose(0, 1).reshape(
                q.shape[1], -1), return_lse, return_attn_probs)
        return result.reshape(q.shape)
    out, lse = _attend(q.transpose(0, 1).unsqueeze(0), k.transpose(0, 1).unsqueeze(0),
                       v.transpose(0, 1).unsqueeze(0), None, 2 if causal else 0, softmax_scale,
                       window_size, softcap, alibi_slopes, cu_seqlens_q, cu_seqlens_k,
                       max_seqlen_q, max_seqlen_k, dropout_p, deterministic, sinks, k_scale,
                       v_scale)
    return _flash_outputs(out.squeeze(0).transpose(0, 1), lse, return_lse, return_attn_probs)


def flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens, block_table,
                            softmax_scale=None, causal=False, window_size=(-1, -1),
                            softcap=0.0, alibi_slopes=None, num_splits=0,
                            return_softmax_lse=False, sinks=None, k_scale=None, v_scale=None):
    """FlashAttention's flash_attn_with_kvcache over a paged cache (forward
    only, no autograd): q [B, Sq, Hq, D], k_cache and v_cache [num_blocks,
    block_size, Hkv, D], cache_seqlens int32 [B], block_table int32
    [B, max_blocks]. num_splits: split-KV decode (0: the backend decides).
    sinks: float32 [Hq]; an FP8 cache (torch.float8_e4m3fn, float8_e5m2)
    with k_scale, v_scale a float or float32 [Hkv].
    Returns O [B, Sq, Hq, D] (and lse [B, Hq, Sq])."""
    with torch.no_grad():
        result = _attention.attention(
            q.transpose(1, 2), k_cache.permute(0, 2, 1, 3), v_cache.permute(0, 2, 1, 3),
            causal="bottom_right" if causal else False, scale=softmax_scale,
            return_lse=return_softmax_lse, window=window_size, softcap=softcap,
            alibi_slopes=alibi_slopes, block_table=block_table.to(torch.int32),
            cache_seqlens=cache_seqlens.to(torch.int32), num_splits=num_splits, sinks=sinks,
            k_scale=k_scale, v_scale=v_scale)
    if return_softmax_lse:
        return result[0].transpose(1, 2), result[1]
    return result.transpose(1, 2)


def merge_attention_states(outs: List[torch.Tensor], lses: List[torch.Tensor],
                           inf_as_zero=False):
    """Merges partial attention states (O_s [B, H, S, D], lse_s float32
    [B, H, S]) over disjoint key ranges into (O, lse) over all the keys
    (sdpa_ze.merge_states; no autograd)."""
    with torch.no_grad():
        return _attention.merge_states(list(outs), list(lses),
                                       softmax="inf_as_zero" if inf_as_zero else "accurate")
