"""attention(), attention_backward() and merge_states(): the forward and
backward passes of scaled-dot-product attention, and the merge of partial
attention states, on a Device, for NumPy, DLPack and torch arrays. Every
member of sdpa_problem_desc_t that changes the problem has a keyword here."""

import ctypes
import math

from . import _abi
from . import _dlpack
from . import _dtypes
from ._device import default_device
from ._operands import Operand

_CAUSAL = {False: _abi.MASK_NONE, None: _abi.MASK_NONE, True: _abi.MASK_CAUSAL_TOP_LEFT,
           "top_left": _abi.MASK_CAUSAL_TOP_LEFT, "bottom_right": _abi.MASK_CAUSAL_BOTTOM_RIGHT}
_SOFTMAX = {"accurate": _abi.SOFTMAX_ACCURATE, "inf_as_zero": _abi.SOFTMAX_INF_AS_ZERO}
_INDEX = (_dtypes.INT32,)
# K and V: the floats, or (ABI 1.2 and before) quantized with scales.
_KV = _dtypes.FLOATS + _dtypes.FLOAT8S + _dtypes.INTEGERS_KV
_ZERO_POINTS = (_dtypes.INT8, _dtypes.UINT8, _dtypes.INT32)


def _four_d(operand):
    if len(operand.shape) != 4:
        raise ValueError("%s: shape %s; expected 4 dimensions [batch, heads, sequence, "
                         "head_size]" % (operand.name, operand.shape))


def _to_torch(array):
    """A torch CPU tensor over array's memory (shared or host USM), without a
    copy; the tensor keeps the memory alive."""
    import torch

    class _HostExport:
        def __dlpack_device__(self):
            return (1, 0)  # kDLCPU

        def __dlpack__(self, stream=None, max_version=None, **_):
            return array.__dlpack__(dl_device=(1, 0), max_version=max_version)

    return torch.from_dlpack(_HostExport())


def _result(array, like):
    """array (a UsmArray) as the caller's kind of array: a torch tensor for
    torch inputs, NumPy for NumPy and kDLCPU inputs (views of the same
    memory), the UsmArray otherwise (and for bfloat16, which NumPy lacks)."""
    if like.framework == "torch" and array.memory != "device":
        return _to_torch(array)
    if like.origin in ("numpy", "dlpack") and like.dtype is not _dtypes.BFLOAT16 \
            and array.memory != "device":
        return array.numpy()
    return array


def _pair(window, name):
    if window is None:
        return None
    try:
        left, right = (int(x) for x in window)
    except (TypeError, ValueError):
        raise ValueError("%s = %r: expected a pair (left, right), -1 for unbounded"
                         % (name, window)) from None
    return left, right


class _Call:
    """The operands and problem shared by the forward and the backward."""

    def __init__(self, device, q, k, v, mask, causal, scale, softmax, features):
        self.device = device or default_device()
        d = self.device
        self.q = Operand(d, q, "q")
        self.k, self.v = Operand(d, k, "k", dtypes=_KV), Operand(d, v, "v", dtypes=_KV)
        for operand in (self.q, self.k, self.v):
            _four_d(operand)
        try:
            mask_kind = _CAUSAL[causal]
        except (KeyError, TypeError):
            raise ValueError("causal = %r: expected False, True (= 'top_left') or "
                             "'bottom_right'" % (causal,)) from None
        try:
            softmax_kind = _SOFTMAX[softmax]
        except (KeyError, TypeError):
            raise ValueError("softmax = %r: expected 'accurate' or 'inf_as_zero'"
                             % (softmax,)) from None
        self.mask = None
        if mask is not None:
            if mask_kind != _abi.MASK_NONE:
                raise ValueError("mask and causal together: the ABI takes one mask; fold the "
                                 "causal part into the additive mask")
            self.mask = Operand(d, mask, "mask", as_additive_mask=True)
            if not 1 <= len(self.mask.shape) <= 4:
                raise ValueError("mask: shape %s; expected up to 4 dimensions broadcasting "
                                 "to [batch, q_heads, q_len, k_len]" % (self.mask.shape,))
            mask_kind = _abi.MASK_BUFFER
        head_size = self.q.shape[3]
        self.scale = 1.0 / math.sqrt(head_size) if scale is None else float(scale)

        p = _abi.new_problem()
        p.q, p.k, p.v = self.q.desc(), self.k.desc(), self.v.desc()
        p.mask_kind, p.softmax_kind, p.scale_kind = mask_kind, softmax_kind, _abi.SCALE_HOST
        if self.mask is not None:
            p.mask = self.mask.desc()
        self.problem = p
        self.indices = {}
        self._features(**features)

    def _index(self, x, name, ndim):
        operand = Operand(self.device, x, name, dtypes=_INDEX)
        if len(operand.shape) != ndim:
            raise ValueError("%s: shape %s; expected %d dimension(s)"
                             % (name, operand.shape, ndim))
        if operand.strides[-1] != 1:
            raise ValueError("%s: the last dimension must be dense (stride 1)" % name)
        self.indices[name] = operand
        return operand

    def _features(self, window=None, softcap=0.0, alibi_slopes=None, cu_seqlens_q=None,
                  cu_seqlens_k=None, max_seqlen_q=None, max_seqlen_k=None, block_table=None,
                  cache_seqlens=None, num_splits=0, dropout_p=0.0, dropout_seed=0,
                  dropout_offset=0, return_dropout_mask=False, sinks=None, k_scale=None,
                  v_scale=None, k_zero_point=None, v_zero_point=None, require_scales=True):
        p = self.problem
        window = _pair(window, "window")
        if window is not None and window != (-1, -1):
            p.window.enabled, (p.window.left, p.window.right) = 1, window
        p.softcap = float(softcap or 0.0)
        if alibi_slopes is not None:
            slopes = Operand(self.device, alibi_slopes, "alibi_slopes", dtypes=(_dtypes.FLOAT32,))
            kinds = {1: _abi.ALIBI_PER_HEAD, 2: _abi.ALIBI_PER_BATCH_HEAD}
            if len(slopes.shape) not in kinds:
                raise ValueError("alibi_slopes: shape %s; expected [q_heads] or "
                                 "[batch, q_heads]" % (slopes.shape,))
            p.alibi = kinds[len(slopes.shape)]
            self.indices["alibi_slopes"] = slopes
        if (cu_seqlens_q is None) != (cu_seqlens_k is None):
            raise ValueError("cu_seqlens_q and cu_seqlens_k go together")
        if cu_seqlens_q is not None:
            cq = self._index(cu_seqlens_q, "cu_seqlens_q", 1)
            ck = self._index(cu_seqlens_k, "cu_seqlens_k", 1)
            if cq.shape != ck.shape or cq.shape[0] < 2:
                raise ValueError("cu_seqlens_q %s and cu_seqlens_k %s: expected the same "
                                 "shape [batch + 1]" % (cq.shape, ck.shape))
            if max_seqlen_q is None or max_seqlen_k is None:
                raise ValueError("varlen: max_seqlen_q and max_seqlen_k are required")
            p.varlen.enabled, p.varlen.batch = 1, cq.shape[0] - 1
            p.varlen.max_seqlen_q, p.varlen.max_seqlen_k = int(max_seqlen_q), int(max_seqlen_k)
        if (block_table is None) != (cache_seqlens is None):
            raise ValueError("block_table and cache_seqlens go together (paged KV cache)")
        if block_table is not None:
            table = self._index(block_table, "block_table", 2)
            self._index(cache_seqlens, "cache_seqlens", 1)
            p.paged_kv.enabled, p.paged_kv.max_blocks_per_seq = 1, table.shape[1]
            p.paged_kv.block_table_stride = table.strides[0]
        p.num_splits = int(num_splits)
        self.dropout = None
        if dropout_p:
            p.dropout.enabled, p.dropout.host_scalars, p.dropout.with_offset = 1, 1, 1
            p.dropout.with_mask_output = 1 if return_dropout_mask else 0
            self.dropout = (float(dropout_p), int(dropout_seed), int(dropout_offset))
        if sinks is not None:
            sink_op = Operand(self.device, sinks, "sinks", dtypes=(_dtypes.FLOAT32,))
            hq = self.q.shape[1]
            if tuple(sink_op.shape) != (hq,) or sink_op.strides[0] != 1:
                raise ValueError("sinks: shape %s; expected a dense float32 [q_heads] = [%d]"
                                 % (tuple(sink_op.shape), hq))
            p.sinks = 1
            self.indices["sinks"] = sink_op
        p.k_quant = self._quant(self.k, "k", k_scale, k_zero_point, require_scales)
        p.v_quant = self._quant(self.v, "v", v_scale, v_zero_point, require_scales)

    def _quant_array(self, x, name, kv, dtypes):
        """(kind, operand, group_size) of a scale or zero-point argument: a
        Python number or one element (per tensor), [Hkv] (per head), or
        [B, Hkv, Sk, D / group_size] (per group; K/V's first three extents)."""
        if isinstance(x, (int, float)) and not isinstance(x, bool):
            dtype = _dtypes.FLOAT32 if _dtypes.FLOAT32 in dtypes else _dtypes.INT32
            if dtype is _dtypes.INT32 and x != int(x):
                raise ValueError("%s = %r: a zero point is an integer" % (name, x))
            x = self.device.asarray([x], dtype.name)
        elif hasattr(x, "reshape") and tuple(getattr(x, "shape", (1,))) == ():
            x = x.reshape(1)
        operand = Operand(self.device, x, name, dtypes=dtypes)
        shape, strides = tuple(operand.shape), tuple(operand.strides)
        hkv, head = kv.shape[1], kv.shape[3]
        if len(shape) == 1 and shape[0] == 1:
            kind, group = _abi.QUANT_PER_TENSOR, 0
        elif len(shape) == 1 and shape[0] == hkv:
            kind, group = _abi.QUANT_PER_HEAD, 0
        elif len(shape) == 4 and shape[:3] == tuple(kv.shape[:3]) and shape[3] \
                and head % shape[3] == 0:
            kind, group = _abi.QUANT_PER_GROUP, head // shape[3]
            if group & (group - 1):
                raise ValueError("%s: %d groups of %s's head size %d make groups of %d; "
                                 "expected a power of two" % (name, shape[3], kv.name, head,
                                                              group))
        else:
            raise ValueError("%s: shape %s; expected one value (per tensor), [%d] (per K/V "
                             "head) or [%s, D / group_size] (per group)"
                             % (name, shape, hkv, ", ".join(str(n) for n in kv.shape[:3])))
        if strides != _dlpack._compact_strides(shape):
            raise ValueError("%s: strides %s; expected a dense array" % (name, strides))
        return kind, operand, group

    def _quant(self, kv, which, scale, zero_point, require_scales):
        """The sdpa_quant_desc_t of K or V, and its arrays in self.indices."""
        desc = _abi.QuantDesc()
        fp8 = kv.dtype in _dtypes.FLOAT8S
        integer = kv.dtype in _dtypes.INTEGERS_KV
        if not (fp8 or integer):
            if scale is not None or zero_point is not None:
                raise ValueError("%s_scale / %s_zero_point: %s is %s; scales and zero points "
                                 "apply to FP8 (float8_e4m3fn, float8_e5m2) and integer "
                                 "(int8, uint8) K/V only" % (which, which, which,
                                                             kv.dtype.name))
            return desc
        if scale is None and integer and require_scales:
            raise ValueError("%s is %s: %s_scale is required (x = (%s - %s_zero_point) * "
                             "%s_scale)" % (which, kv.dtype.name, which, which, which, which))
        if zero_point is not None and fp8:
            raise ValueError("%s_zero_point: %s is %s, which takes scales only"
                             % (which, which, kv.dtype.name))
        group_sizes = set()
        if scale is not None:
            desc.scales, op, group = self._quant_array(scale, which + "_scale", kv,
                                                       _dtypes.FLOATS)
            desc.scales_dtype = op.dtype.sdpa
            self.indices[which + "_scales"] = op
            group_sizes.add(group)
        if zero_point is not None:
            desc.zero_points, op, group = self._quant_array(
                zero_point, which + "_zero_point", kv, _ZERO_POINTS)
            desc.zero_points_dtype = op.dtype.sdpa
            self.indices[which + "_zero_points"] = op
            group_sizes.add(group)
        group_sizes.discard(0)
        if len(group_sizes) > 1:
            raise ValueError("%s_scale and %s_zero_point: different group sizes %s"
                             % (which, which, sorted(group_sizes)))
        desc.group_size = group_sizes.pop() if group_sizes else 0
        return desc

    def lse_shape(self):
        """The log-sum-exp workspace: [B, Hq, Sq], or [Hq, total_q] with varlen."""
        b, hq, sq, _ = self.q.shape
        return (hq, sq) if self.problem.varlen.enabled else (b, hq, sq)

    def output(self, given, shape, dtype, name):
        """The operand for an output and what to return for it: the caller's
        array as it is, or a new one as _result() gives it."""
        if given is not None:
            return Operand(self.device, given, name, output=True,
                           dtypes=_dtypes.FLOATS + (_dtypes.UINT8,)), given
        array = self.device.empty(shape, dtype)
        return Operand(self.device, array, name, output=True,
                       dtypes=_dtypes.FLOATS + (_dtypes.UINT8,)), _result(array, self.q)

    def args(self):
        a = _abi.new_exec_args()
        a.q, a.k, a.v, a.scale = self.q.address, self.k.address, self.v.address, self.scale
        if self.mask is not None:
            a.mask = self.mask.address
        for name, operand in self.indices.items():
            setattr(a, name, operand.address)
        if self.dropout is not None:
            a.dropout_p, a.dropout_seed, a.dropout_offset = self.dropout
        return a

    def operands(self):
        return [self.q, self.k, self.v, self.mask] + list(self.indices.values())


FEATURES_DOC = """
    LLM features (ABI 1.1; see sdpa.h for the exact rules):
    window=(left, right): a sliding window, query i sees keys
    pos_i - left .. pos_i + right (-1: unbounded), pos_i = i + Sk - Sq.
    softcap: s <- softcap * tanh(s / softcap) on the scaled scores (0: off).
    alibi_slopes: float32 [Hq] or [B, Hq], bias -slope * |pos_i - j|.
    cu_seqlens_q, cu_seqlens_k (int32 [B + 1]) with max_seqlen_q,
    max_seqlen_k: variable-length batches packed along the sequence, q and
    O [1, Hq, total_q, D], k, v [1, Hkv, total_k, D]; lse is [Hq, total_q].
    dropout_p, dropout_seed, dropout_offset: dropout on the probabilities
    (Philox, sdpa.h's numbering; pass the same three to the backward).

    Attention sinks (ABI 1.2; gpt-oss, StreamingLLM): sinks, float32 [Hq],
    one learned logit per query head that joins every row's softmax
    denominator and takes no value: O_i = sum_j exp(s_ij - m) V_j /
    (exp(sink_h - m) + sum_j exp(s_ij - m)), and lse includes it. A row
    that sees no key gives O = 0 and lse = sink_h; a sink of -inf is none.
    Pass the same sinks to the backward, which also returns their gradient."""


def attention(q, k, v, *, mask=None, causal=False, scale=None, softmax="accurate",
              return_lse=False, out=None, lse=None, device=None, window=None, softcap=0.0,
              alibi_slopes=None, cu_seqlens_q=None, cu_seqlens_k=None, max_seqlen_q=None,
              max_seqlen_k=None, block_table=None, cache_seqlens=None, num_splits=0,
              dropout_p=0.0, dropout_seed=0, dropout_offset=0, return_dropout_mask=False,
              sinks=None, k_scale=None, v_scale=None, k_zero_point=None, v_zero_point=None):
    call = _Call(device, q, k, v, mask, causal, scale, softmax, dict(
        window=window, softcap=softcap, alibi_slopes=alibi_slopes, cu_seqlens_q=cu_seqlens_q,
        cu_seqlens_k=cu_seqlens_k, max_seqlen_q=max_seqlen_q, max_seqlen_k=max_seqlen_k,
        block_table=block_table, cache_seqlens=cache_seqlens, num_splits=num_splits,
        dropout_p=dropout_p, dropout_seed=dropout_seed, dropout_offset=dropout_offset,
        return_dropout_mask=return_dropout_mask, sinks=sinks, k_scale=k_scale,
        v_scale=v_scale, k_zero_point=k_zero_point, v_zero_point=v_zero_point))
    d, p = call.device, call.problem
    b, hq, sq, _ = call.q.shape
    head_v = call.v.shape[3]  # O takes V's head size, which may differ from Q's
    training = return_lse or call.dropout is not None
    p.prop_kind = _abi.FORWARD_TRAINING if training else _abi.FORWARD_INFERENCE
    out_op, out = call.output(out, (b, hq, sq, head_v), call.q.dtype.name, "out")
    _four_d(out_op)
    p.dst = out_op.desc()
    primitive = d.primitive(p)
    a = call.args()
    a.dst = out_op.address
    outputs = [out_op]
    lse_shape = call.lse_shape()
    lse_op = None
    if training:
        lse_op, lse = call.output(lse, lse_shape, "float32", "lse")
        _check_workspace(lse_op, lse_shape, primitive.workspace_bytes)
        a.workspace = lse_op.address
        outputs.append(lse_op)
    mask_out = None
    if return_dropout_mask:
        if call.dropout is None:
            raise ValueError("return_dropout_mask needs dropout_p > 0")
        sk = p.varlen.max_seqlen_k if p.varlen.enabled else (
            p.paged_kv.max_blocks_per_seq * call.k.shape[2] if p.paged_kv.enabled
            else call.k.shape[2])
        rows = p.varlen.batch if p.varlen.enabled else b
        sq_pad = p.varlen.max_seqlen_q if p.varlen.enabled else sq
        mask_op, mask_out = call.output(None, (rows, hq, sq_pad, sk), "uint8", "dropout_mask")
        a.dropout_mask = mask_op.address
        outputs.append(mask_op)
    primitive.execute(a)
    d.keep_until_synchronized(call.operands() + outputs)
    for operand in outputs:
        operand.finish(d)
    results = [out]
    if return_lse:
        results.append(lse)
    if return_dropout_mask:
        results.append(mask_out)
    return results[0] if len(results) == 1 else tuple(results)


attention.__doc__ = """Scaled-dot-product attention: softmax(scale * q k^T + mask) v.

    q: [B, Hq, Sq, D]; k: [B, Hkv, Sk, D], v: [B, Hkv, Sk, Dv] with Hq a
    multiple of Hkv (grouped-query attention) and Dv V's head size (it may
    differ from D); float32, float16 or bfloat16 (k and v may differ from
    q). Arrays are NumPy arrays, torch tensors, UsmArrays, or anything with
    ``__dlpack__`` on kDLCPU or kDLOneAPI.

    mask: an additive float mask (or a bool mask, True = attend) broadcasting
    to [B, Hq, Sq, Sk], with up to 4 dimensions (leading ones are added).
    causal: True or "top_left" (query i sees keys j <= i, like PyTorch's
    is_causal), "bottom_right" (j <= i + Sk - Sq), or False.
    scale: default 1 / sqrt(D). softmax: "accurate" (a fully masked row gives
    NaN) or "inf_as_zero" (it gives 0).
""" + FEATURES_DOC + """
    block_table (int32 [B, max_blocks]) with cache_seqlens (int32 [B]): a
    paged KV cache, k and v [num_blocks, Hkv, block_size, D] (forward only).
    num_splits: split-KV decode (0: the backend decides, 1: never).
    return_dropout_mask: also return the uint8 keep mask [B, Hq, Sq, Sk].

    Quantized K/V (forward only): k and v may each be an FP8 KV cache,
    float8_e4m3fn or float8_e5m2 (torch tensors, DLPack, or
    Device.asarray(bits, "float8_e4m3fn") from uint8 bit patterns), read as
    fp8 * scale; or int8 / uint8, read as (x - zero_point) * scale.
    k_scale, v_scale: a Python float or one element (per tensor), [Hkv]
    (per K/V head), or [B, Hkv, Sk, D / group_size] (per group of
    group_size head elements of each token, group_size a power of two
    inferred from the last extent; K/V's own first three extents, so paged
    caches take [num_blocks, Hkv, block_size, G]); float32, float16 or
    bfloat16. Optional for FP8 (a scale of 1), required for integers.
    k_zero_point, v_zero_point: integer K/V only, an int or an int8, uint8
    or int32 array shaped like the scales. Scales on a float K/V, zero
    points on FP8, or a shape that is none of these raise ValueError.

    Returns O [B, Hq, Sq, Dv] in q's dtype -- with return_lse=True the pair
    (O, lse), lse the float32 log-sum-exp [B, Hq, Sq] that
    attention_backward() takes (and the keep mask last when asked for).
    Results are torch tensors for torch inputs, NumPy arrays when q is a
    NumPy or kDLCPU array (views of USM: passing them on costs no copy),
    UsmArrays otherwise. out and lse may name arrays to write into; they are
    returned. Raises SdpaError when the backend refuses the problem."""


def _check_workspace(operand, shape, workspace_bytes):
    """The log-sum-exp is a dense float32 [B, Hq, Sq] ([Hq, total_q] with
    varlen; sdpa.h)."""
    dense = tuple(operand.strides) == _dlpack._compact_strides(tuple(shape))
    if tuple(operand.shape) != tuple(shape) or operand.dtype is not _dtypes.FLOAT32 \
            or not dense:
        raise ValueError("lse: shape %s, dtype %s, strides %s; expected a dense float32 array "
                         "of shape %s" % (operand.shape, operand.dtype.name, operand.strides,
                                          shape))
    if workspace_bytes != 4 * math.prod(shape):
        raise RuntimeError("the backend asks for a %d-byte workspace, not a float32 %s"
                           % (workspace_bytes, shape))


def attention_backward(grad_out, q, k, v, out, lse, *, mask=None, causal=False, scale=None,
                       softmax="accurate", deterministic=False, grad_q=None, grad_k=None,
                       grad_v=None, device=None, window=None, softcap=0.0, alibi_slopes=None,
                       cu_seqlens_q=None, cu_seqlens_k=None, max_seqlen_q=None,
                       max_seqlen_k=None, dropout_p=0.0, dropout_seed=0, dropout_offset=0,
                       sinks=None, grad_sinks=None):
    # No scale arguments: the backward refuses quantized K/V (sdpa.h), and
    # says so through SdpaError rather than a missing-scale ValueError.
    call = _Call(device, q, k, v, mask, causal, scale, softmax, dict(
        window=window, softcap=softcap, alibi_slopes=alibi_slopes, cu_seqlens_q=cu_seqlens_q,
        cu_seqlens_k=cu_seqlens_k, max_seqlen_q=max_seqlen_q, max_seqlen_k=max_seqlen_k,
        dropout_p=dropout_p, dropout_seed=dropout_seed, dropout_offset=dropout_offset,
        sinks=sinks, require_scales=False))
    d, p = call.device, call.problem
    o_op = Operand(d, out, "out")
    do_op = Operand(d, grad_out, "grad_out")
    lse_op = Operand(d, lse, "lse")
    for operand in (o_op, do_op):
        _four_d(operand)
    dtype = call.q.dtype.name
    dq_op, grad_q = call.output(grad_q, call.q.shape, dtype, "grad_q")
    dk_op, grad_k = call.output(grad_k, call.k.shape, dtype, "grad_k")
    dv_op, grad_v = call.output(grad_v, call.v.shape, dtype, "grad_v")
    for operand in (dq_op, dk_op, dv_op):
        _four_d(operand)
    outputs = [dq_op, dk_op, dv_op]
    if sinks is None and grad_sinks is not None:
        raise ValueError("grad_sinks without sinks: there is no sinks' gradient to write")
    if sinks is not None:
        hq = call.q.shape[1]
        ds_op, grad_sinks = call.output(grad_sinks, (hq,), "float32", "grad_sinks")
        if ds_op.dtype is not _dtypes.FLOAT32 or tuple(ds_op.shape) != (hq,) \
                or ds_op.strides[0] != 1:
            raise ValueError("grad_sinks: shape %s, dtype %s; expected a dense float32 [%d]"
                             % (tuple(ds_op.shape), ds_op.dtype.name, hq))
        outputs.append(ds_op)
    p.prop_kind = _abi.BACKWARD
    p.dst, p.diff_dst = o_op.desc(), do_op.desc()
    p.diff_q, p.diff_k, p.diff_v = dq_op.desc(), dk_op.desc(), dv_op.desc()
    p.deterministic = 1 if deterministic else 0
    shape = call.lse_shape()
    _check_workspace(lse_op, shape, 4 * math.prod(shape))
    primitive = d.primitive(p)
    a = call.args()
    a.dst, a.workspace, a.diff_dst = o_op.address, lse_op.address, do_op.address
    a.diff_q, a.diff_k, a.diff_v = dq_op.address, dk_op.address, dv_op.address
    if sinks is not None:
        a.diff_sinks = outputs[3].address
    primitive.execute(a)
    d.keep_until_synchronized(call.operands() + [o_op, do_op, lse_op] + outputs)
    for operand in outputs:
        operand.finish(d)
    if sinks is not None:
        return grad_q, grad_k, grad_v, grad_sinks
    return grad_q, grad_k, grad_v


attention_backward.__doc__ = """The gradients of attention(): (grad_q, grad_k, grad_v),
    in q's dtype with the shapes of q, k and v (grad_k and grad_v summed over
    the query heads of a group); with sinks, (grad_q, grad_k, grad_v,
    grad_sinks), grad_sinks float32 [Hq] (summed over the batch and the rows
    of each head; grad_sinks= may name an array to write into). Quantized
    (FP8, integer) K/V have no backward: SdpaError says so.

    grad_out is the gradient of the loss with respect to O; out and lse are
    what attention(..., return_lse=True) returned for the same q, k, v, mask,
    causal, scale, softmax and features, which must be passed again.
    deterministic=True gives bit-identical results from run to run (no
    floating-point atomics). grad_q, grad_k, grad_v may name arrays to write
    into. Raises SdpaError when the backend refuses the problem.
""" + FEATURES_DOC


def merge_states(states, lses, *, softmax="accurate", out=None, lse_out=None,
                 return_lse=True, dtype=None, device=None):
    """Merges n attention states of the same queries over disjoint parts of
    the keys (split-KV, context parallelism, a KV cache in two pieces) into
    the state over all of them (sdpa.h, sdpa_merge_desc_t).

    states: n arrays O_s [B, H, S, D] of one dtype and layout (n <= 16);
    lses: n float32 log-sum-exps [B, H, S] (dense), what
    attention(..., return_lse=True) returns. Returns (O, lse) with O in
    dtype (default: the states'), or O alone with return_lse=False. out and
    lse_out may name arrays to write into. A state whose lse is -inf adds
    nothing; a row none of whose states saw a key is NaN ("accurate") or 0
    ("inf_as_zero")."""
    device = device or default_device()
    if not 1 <= len(states) <= _abi.MERGE_MAX_STATES or len(states) != len(lses):
        raise ValueError("merge_states: %d states and %d log-sum-exps; expected as many of "
                         "each, 1 to %d" % (len(states), len(lses), _abi.MERGE_MAX_STATES))
    try:
        softmax_kind = _SOFTMAX[softmax]
    except (KeyError, TypeError):
        raise ValueError("softmax = %r: expected 'accurate' or 'inf_as_zero'"
                         % (softmax,)) from None
    o_ops = [Operand(device, s, "states[%d]" % i) for i, s in enumerate(states)]
    l_ops = [Operand(device, x, "lses[%d]" % i, dtypes=(_dtypes.FLOAT32,))
             for i, x in enumerate(lses)]
    first = o_ops[0]
    _four_d(first)
    for o in o_ops[1:]:
        if (o.shape, o.strides, o.dtype) != (first.shape, first.strides, first.dtype):
            raise ValueError("%s: shape %s, strides %s, dtype %s differ from states[0]'s"
                             % (o.name, o.shape, o.strides, o.dtype.name))
    b, h, s, head = first.shape
    for x in l_ops:
        if tuple(x.shape) != (b, h, s) or tuple(x.strides) != (h * s, s, 1):
            raise ValueError("%s: shape %s, strides %s; expected a dense [%d, %d, %d]"
                             % (x.name, x.shape, x.strides, b, h, s))
    out_dtype = _dtypes.from_name(dtype) if dtype is not None else first.dtype

    def output(given, shape, dt, name):
        if given is not None:
            return Operand(device, given, name, output=True), given
        array = device.empty(shape, dt)
        return Operand(device, array, name, output=True), _result(array, first)

    o_op, out = output(out, first.shape, out_dtype.name, "out")
    desc = _abi.MergeDesc()
    desc.struct_size, desc.struct_version = ctypes.sizeof(desc), _abi.MERGE_DESC_VERSION
    desc.num_states, desc.softmax_kind = len(states), softmax_kind
    desc.states, desc.dst = first.desc(), o_op.desc()
    lse_desc = _abi.TensorDesc(_abi.DTYPE_F32, (b, h, s, 1), (h * s, s, 1, 1))
    desc.states_lse = lse_desc
    outputs = [o_op]
    if return_lse:
        lse_op, lse_out = output(lse_out, (b, h, s), "float32", "lse_out")
        if tuple(lse_op.strides) != (h * s, s, 1):
            raise ValueError("lse_out: expected a dense float32 [%d, %d, %d]" % (b, h, s))
        desc.dst_lse = lse_desc
        outputs.append(lse_op)
    primitive = device.merge_primitive(desc)
    args = _abi.MergeArgs()
    args.struct_size, args.struct_version = ctypes.sizeof(args), _abi.MERGE_ARGS_VERSION
    state_ptrs = (ctypes.c_void_p * len(states))(*[o.address for o in o_ops])
    lse_ptrs = (ctypes.c_void_p * len(states))(*[x.address for x in l_ops])
    args.states = ctypes.cast(state_ptrs, ctypes.POINTER(ctypes.c_void_p))
    args.states_lse = ctypes.cast(lse_ptrs, ctypes.POINTER(ctypes.c_void_p))
    args.dst = o_op.address
    args.dst_lse = outputs[1].address if return_lse else None
    primitive.merge(args)
    device.keep_until_synchronized(o_ops + l_ops + outputs)
    for operand in outputs:
        operand.finish(device)
    return (out, lse_out) if return_lse else out
