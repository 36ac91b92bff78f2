"""attention() and attention_backward(): the forward and backward passes of
scaled-dot-product attention on a Device, for NumPy and DLPack arrays."""

import math

from . import _abi
from . import _dtypes
from ._device import default_device
from ._operands import Operand

_CAUSAL = {False: _abi.MASK_NONE, None: _abi.MASK_NONE, True: _abi.MASK_CAUSAL_TOP_LEFT,
           "top_left": _abi.MASK_CAUSAL_TOP_LEFT, "bottom_right": _abi.MASK_CAUSAL_BOTTOM_RIGHT}
_SOFTMAX = {"accurate": _abi.SOFTMAX_ACCURATE, "inf_as_zero": _abi.SOFTMAX_INF_AS_ZERO}


def _four_d(operand):
    if len(operand.shape) != 4:
        raise ValueError("%s: shape %s; expected 4 dimensions [batch, heads, sequence, "
                         "head_size]" % (operand.name, operand.shape))


def _result(array, like):
    """array (a UsmArray) as the caller's kind of array: NumPy for NumPy and
    kDLCPU inputs (a view of the same memory), the UsmArray otherwise (and for
    bfloat16, which NumPy lacks)."""
    if like.origin in ("numpy", "dlpack") and like.dtype is not _dtypes.BFLOAT16 \
            and array.memory != "device":
        return array.numpy()
    return array


class _Call:
    """The operands and problem shared by the forward and the backward."""

    def __init__(self, device, q, k, v, mask, causal, scale, softmax):
        self.device = device or default_device()
        d = self.device
        self.q, self.k, self.v = Operand(d, q, "q"), Operand(d, k, "k"), Operand(d, v, "v")
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

    def output(self, given, shape, dtype, name):
        """The operand for an output and what to return for it: the caller's
        array as it is, or a new one as _result() gives it."""
        if given is not None:
            return Operand(self.device, given, name, output=True), given
        array = self.device.empty(shape, dtype)
        return Operand(self.device, array, name, output=True), _result(array, self.q)

    def args(self):
        a = _abi.new_exec_args()
        a.q, a.k, a.v, a.scale = self.q.address, self.k.address, self.v.address, self.scale
        if self.mask is not None:
            a.mask = self.mask.address
        return a


def attention(q, k, v, *, mask=None, causal=False, scale=None, softmax="accurate",
              return_lse=False, out=None, lse=None, device=None):
    """Scaled-dot-product attention: softmax(scale * q k^T + mask) v.

    q: [B, Hq, Sq, D]; k, v: [B, Hkv, Sk, D] with Hq a multiple of Hkv
    (grouped-query attention); float32, float16 or bfloat16 (k and v may
    differ from q). Arrays are NumPy arrays, UsmArrays, or anything with
    ``__dlpack__`` on kDLCPU or kDLOneAPI.

    mask: an additive float mask (or a bool mask, True = attend) broadcasting
    to [B, Hq, Sq, Sk], with up to 4 dimensions (leading ones are added).
    causal: True or "top_left" (query i sees keys j <= i, like PyTorch's
    is_causal), "bottom_right" (j <= i + Sk - Sq), or False.
    scale: default 1 / sqrt(D). softmax: "accurate" (a fully masked row gives
    NaN) or "inf_as_zero" (it gives 0).

    Returns O [B, Hq, Sq, D] in q's dtype -- with return_lse=True the pair
    (O, lse), lse the float32 log-sum-exp [B, Hq, Sq] that
    attention_backward() takes. Results are NumPy arrays when q is a NumPy
    or kDLCPU array (views of USM: passing them on costs no copy), UsmArrays
    otherwise. out and lse may name arrays to write into; they are returned.
    Raises SdpaError when the backend refuses the problem."""
    call = _Call(device, q, k, v, mask, causal, scale, softmax)
    d, p = call.device, call.problem
    b, hq, sq, head = call.q.shape
    p.prop_kind = _abi.FORWARD_TRAINING if return_lse else _abi.FORWARD_INFERENCE
    out_op, out = call.output(out, (b, hq, sq, head), call.q.dtype.name, "out")
    _four_d(out_op)
    p.dst = out_op.desc()
    primitive = d.primitive(p)
    a = call.args()
    a.dst = out_op.address
    outputs = [out_op]
    if return_lse:
        lse_op, lse = call.output(lse, (b, hq, sq), "float32", "lse")
        _check_workspace(lse_op, (b, hq, sq), primitive.workspace_bytes)
        a.workspace = lse_op.address
        outputs.append(lse_op)
    primitive.execute(a)
    for operand in outputs:
        operand.finish(d)
    return (out, lse) if return_lse else out


def _check_workspace(operand, shape, workspace_bytes):
    """The log-sum-exp is a dense float32 [B, Hq, Sq] (sdpa.h)."""
    dense = operand.strides == (shape[1] * shape[2], shape[2], 1)
    if tuple(operand.shape) != shape or operand.dtype is not _dtypes.FLOAT32 or not dense:
        raise ValueError("lse: shape %s, dtype %s, strides %s; expected a dense float32 array "
                         "of shape %s" % (operand.shape, operand.dtype.name, operand.strides,
                                          shape))
    if workspace_bytes != 4 * shape[0] * shape[1] * shape[2]:
        raise RuntimeError("the backend asks for a %d-byte workspace, not a float32 %s"
                           % (workspace_bytes, shape))


def attention_backward(grad_out, q, k, v, out, lse, *, mask=None, causal=False, scale=None,
                       softmax="accurate", deterministic=False, grad_q=None, grad_k=None,
                       grad_v=None, device=None):
    """The gradients of attention(): (grad_q, grad_k, grad_v), in q's dtype
    with the shapes of q, k and v (grad_k and grad_v summed over the query
    heads of a group).

    grad_out is the gradient of the loss with respect to O; out and lse are
    what attention(..., return_lse=True) returned for the same q, k, v, mask,
    causal, scale and softmax, which must be passed again. deterministic=True
    gives bit-identical results from run to run (no floating-point atomics).
    grad_q, grad_k, grad_v may name arrays to write into. Raises SdpaError
    when the backend refuses the problem."""
    call = _Call(device, q, k, v, mask, causal, scale, softmax)
    d, p = call.device, call.problem
    b, hq, sq, _ = call.q.shape
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
    p.prop_kind = _abi.BACKWARD
    p.dst, p.diff_dst = o_op.desc(), do_op.desc()
    p.diff_q, p.diff_k, p.diff_v = dq_op.desc(), dk_op.desc(), dv_op.desc()
    p.deterministic = 1 if deterministic else 0
    _check_workspace(lse_op, (b, hq, sq), 4 * b * hq * sq)
    primitive = d.primitive(p)
    a = call.args()
    a.dst, a.workspace, a.diff_dst = o_op.address, lse_op.address, do_op.address
    a.diff_q, a.diff_k, a.diff_v = dq_op.address, dk_op.address, dv_op.address
    primitive.execute(a)
    for operand in (dq_op, dk_op, dv_op):
        operand.finish(d)
    return grad_q, grad_k, grad_v
