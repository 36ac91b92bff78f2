"""sdpa_ze.distributed: context-parallel (ring) attention across the ranks of
a torch.distributed process group, through libsdpa_cp's transport table
(sdpa_cp_transport.h) with torch.distributed's point-to-point operations as
the transport (gloo on the CPU; any backend with isend/irecv of CPU tensors).

    import torch.distributed as dist, sdpa_ze.distributed as szd
    dist.init_process_group("gloo", ...)
    idx = szd.shard_indices(seq_len // dist.get_world_size(), layout="zigzag")
    o = szd.ring_attention(q[:, :, idx], k[:, :, idx], v[:, :, idx],
                           is_causal=True, layout="zigzag")
    o.sum().backward()          # dQ, dK, dV of this rank's tokens, over the ring

Every rank passes its shard [B, H, L, D] of one sequence of S = ranks * L
tokens (CPU torch tensors, float32, float16 or bfloat16; K/V heads may
divide Q's); the result is this rank's rows of attention over the whole
sequence, with autograd (the backward is the ring's too). Calls are
collective: every rank of the group calls in the same order with the same
shapes. Objects are cached per problem, so a training loop creates them
once; those on one group run one at a time (each execution's messages are
complete when it returns).

The callbacks run on the calling thread while sdpa_cp_execute runs (ctypes
releases the GIL around the C call and takes it back for each callback).
gloo's Work.is_completed() does not report the completion of a send or
receive, so each request is waited for by a daemon thread of its own, and
the library's test reads that thread's flag. A callback never lets an
exception reach C: it returns an error code whose text error_string gives,
and the call fails with SdpaError quoting it.
"""

import atexit
import ctypes
import math
import os
import threading
import weakref

import torch
import torch.distributed as dist

from . import _abi
from ._attention import _to_torch
from ._device import default_device
from ._errors import SdpaError
from ._library import libraries
from ._operands import Operand

__all__ = ["ring_attention", "shard_indices", "RingAttention", "TorchTransport"]

TRANSPORT_VERSION = 1
TRANSPORT_DESC_VERSION = 1
LAYOUTS = {"contiguous": 0, "zigzag": 1}

_c_int, _vp, _size = ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t
_ISEND = ctypes.CFUNCTYPE(_c_int, _vp, _vp, _size, _c_int, _c_int, ctypes.POINTER(_vp))
_IRECV = _ISEND
_TEST = ctypes.CFUNCTYPE(_c_int, _vp, _vp, ctypes.POINTER(_c_int))
_WAIT = ctypes.CFUNCTYPE(_c_int, _vp, _vp)
_ABANDON = _WAIT
_ERROR_STRING = ctypes.CFUNCTYPE(_vp, _vp, _c_int)  # a char * this module keeps alive


class Transport(ctypes.Structure):
    """sdpa_cp_transport_t."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("struct_version", ctypes.c_uint32),
                ("user", _vp), ("rank", _c_int), ("ranks", _c_int),
                ("isend", _ISEND), ("irecv", _IRECV), ("test", _TEST), ("wait", _WAIT),
                ("abandon", _ABANDON), ("error_string", _ERROR_STRING)]


class TransportDesc(ctypes.Structure):
    """sdpa_cp_transport_desc_t."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("struct_version", ctypes.c_uint32),
                ("transport", ctypes.POINTER(Transport)), ("backend", _vp), ("context", _vp),
                ("ze_context", _vp), ("ze_device", _vp), ("layout", _c_int),
                ("problem", ctypes.POINTER(_abi.ProblemDesc)), ("timeout_seconds", ctypes.c_double)]


_cp = None


def _cp_library():
    """libsdpa_cp, from the directory libsdpa was loaded from (a build tree's
    src/.libs or an install's libdir), else by soname."""
    global _cp
    if _cp is not None:
        return _cp
    libs = libraries()
    here = os.path.dirname(libs.sdpa_path)
    tried = []
    for name in ([os.path.join(here, "libsdpa_cp.so"), os.path.join(here, "libsdpa_cp.so.0")]
                 if here else []) + ["libsdpa_cp.so.0"]:
        try:
            lib = ctypes.CDLL(name)
            break
        except OSError as error:
            tried.append("%s: %s" % (name, error))
    else:
        raise OSError("cannot load libsdpa_cp: " + "; ".join(tried))
    P = ctypes.POINTER
    lib.sdpa_cp_create_with_transport.restype = _c_int
    lib.sdpa_cp_create_with_transport.argtypes = [P(TransportDesc), P(_vp)]
    lib.sdpa_cp_execute.restype = _c_int
    lib.sdpa_cp_execute.argtypes = [_vp, P(_abi.ExecArgs)]
    lib.sdpa_cp_destroy.restype = None
    lib.sdpa_cp_destroy.argtypes = [_vp]
    lib.sdpa_cp_last_error.restype = ctypes.c_char_p
    lib.sdpa_cp_last_error.argtypes = []
    lib.sdpa_cp_global_token.restype = ctypes.c_int64
    lib.sdpa_cp_global_token.argtypes = [_c_int, _c_int, _c_int, ctypes.c_int64, ctypes.c_int64]
    _cp = lib
    return lib


def _layout(layout):
    try:
        return LAYOUTS[layout]
    except KeyError:
        raise ValueError("layout = %r: expected 'contiguous' or 'zigzag'" % (layout,)) from None


def shard_indices(local_len, layout="contiguous", group=None, rank=None, ranks=None):
    """The global token of each of this rank's local_len rows (a list), as
    libsdpa_cp lays a sequence out (sdpa_cp_global_token): contiguous, rank
    r holds r L .. r L + L - 1; zigzag, chunk r and chunk 2N - 1 - r of L / 2
    tokens. rank and ranks default to the group's."""
    rank = dist.get_rank(group) if rank is None else rank
    ranks = dist.get_world_size(group) if ranks is None else ranks
    lib, code = _cp_library(), _layout(layout)
    tokens = [lib.sdpa_cp_global_token(code, ranks, rank, local_len, i) for i in range(local_len)]
    if any(t < 0 for t in tokens):
        raise ValueError("no %s layout of %d tokens per rank for rank %d of %d"
                         % (layout, local_len, rank, ranks))
    return tokens


class _Request:
    """A pending isend/irecv: its Work, the tensor over the library's buffer
    and the thread that waits for it."""

    def __init__(self, work, tensor):
        self.work, self.tensor, self.error = work, tensor, None
        self.done = threading.Event()
        threading.Thread(target=self._wait, daemon=True).start()

    def _wait(self):
        try:
            self.work.wait()
        except Exception as error:  # noqa: BLE001 - reported through the code
            self.error = "%s: %s" % (type(error).__name__, error)
        self.done.set()


class TorchTransport:
    """The transport table over torch.distributed's isend/irecv in group
    (None: the default group). ``table`` is the sdpa_cp_transport_t; this
    object keeps its callbacks alive and must outlive every cp object made
    with it."""

    def __init__(self, group=None):
        self.group = group
        self.rank, self.ranks = dist.get_rank(group), dist.get_world_size(group)
        self._pending, self._abandoned, self._next = {}, [], 1
        self._errors = []
        self._callbacks = [_ISEND(self._guard(self._isend)), _IRECV(self._guard(self._irecv)),
                           _TEST(self._guard(self._test)), _WAIT(self._guard(self._wait)),
                           _ABANDON(self._abandon), _ERROR_STRING(self._error_string)]
        self.table = Transport(ctypes.sizeof(Transport), TRANSPORT_VERSION, None, self.rank,
                               self.ranks, *self._callbacks)

    def _fail(self, text):
        """A new error code for text (kept: error_string returns its address)."""
        self._errors.append(ctypes.create_string_buffer(text.encode(errors="replace")))
        return len(self._errors)

    def _guard(self, function):
        """function, returning an error code instead of raising into C."""
        def guarded(*args):
            try:
                return function(*args)
            except BaseException as error:  # noqa: BLE001 - C cannot take it
                return self._fail("%s: %s" % (type(error).__name__, error))
        return guarded

    def _peer(self, peer):
        if self.group is None or self.group is dist.group.WORLD:
            return peer
        return dist.get_global_rank(self.group, peer)

    def _post(self, function, buffer, nbytes, peer, tag, out):
        view = (ctypes.c_ubyte * nbytes).from_address(buffer)
        tensor = torch.frombuffer(view, dtype=torch.uint8)
        work = function(tensor, self._peer(peer), group=self.group, tag=tag)
        handle, self._next = self._next, self._next + 1
        self._pending[handle] = _Request(work, tensor)
        out[0] = handle
        return 0

    def _isend(self, user, buffer, nbytes, peer, tag, out):
        return self._post(dist.isend, buffer, nbytes, peer, tag, out)

    def _irecv(self, user, buffer, nbytes, peer, tag, out):
        return self._post(dist.irecv, buffer, nbytes, peer, tag, out)

    def _finish(self, handle):
        request = self._pending.pop(handle)
        return self._fail(request.error) if request.error else 0

    def _test(self, user, handle, done):
        done[0] = 0
        if not self._pending[handle].done.is_set():
            return 0
        code = self._finish(handle)
        done[0] = 1 if code == 0 else 0
        return code

    def _wait(self, user, handle):
        self._pending[handle].done.wait()
        return self._finish(handle)

    def _abandon(self, user, handle):
        # torch.distributed cannot cancel a send or receive: the library
        # keeps the buffer; the request stays referenced here.
        request = self._pending.pop(handle, None)
        if request is not None:
            self._abandoned.append(request)
        return 1

    def _error_string(self, user, code):
        if 1 <= code <= len(self._errors):
            return ctypes.addressof(self._errors[code - 1])
        return None


class RingAttention:
    """The cp objects of one problem: this rank's shard of q [B, Hq, L, D],
    k and v [B, Hkv, L, D] (dtype), a layout, causal or not, for training
    (forward writing the log-sum-exp, and backward). Creation is collective
    over the group."""

    def __init__(self, q, k, v, *, is_causal=False, layout="contiguous", group=None,
                 device=None, timeout=None):
        self.device = device or default_device()
        self.transport = TorchTransport(group)
        self.layout, self.is_causal = _layout(layout), bool(is_causal)
        self.timeout = 0.0 if timeout is None else float(timeout)
        self._lib = _cp_library()
        b, hq, length, d = q.shape
        self.chunks = 2 if self.layout == LAYOUTS["zigzag"] else 1
        self.lse_shape = (self.chunks, b, hq, length // self.chunks)
        self._forward = self._backward = None
        _live.add(self)
        _close_at_exit()

    def _create(self, problem):
        dev = self.device
        desc = TransportDesc(ctypes.sizeof(TransportDesc), TRANSPORT_DESC_VERSION,
                             ctypes.pointer(self.transport.table), ctypes.addressof(dev._iface),
                             dev._context, dev._ze.context, dev._ze.device, self.layout,
                             ctypes.pointer(problem), self.timeout)
        handle = _vp()
        status = self._lib.sdpa_cp_create_with_transport(ctypes.byref(desc), ctypes.byref(handle))
        self._check("sdpa_cp_create_with_transport", status)
        return handle.value

    def _check(self, call, status):
        if status != _abi.SUCCESS:
            raise SdpaError(call, status, self.device.status_name(status),
                            self._lib.sdpa_cp_last_error().decode(errors="replace"))

    def _problem(self, prop_kind, ops):
        p = _abi.new_problem()
        p.prop_kind = prop_kind
        p.q, p.k, p.v, p.dst = (op.desc() for op in ops[:4])
        if prop_kind == _abi.BACKWARD:
            p.diff_dst, p.diff_q, p.diff_k, p.diff_v = (op.desc() for op in ops[4:8])
        p.mask_kind = _abi.MASK_CAUSAL_TOP_LEFT if self.is_causal else _abi.MASK_NONE
        p.scale_kind = _abi.SCALE_HOST
        return p

    def _execute(self, handle, args):
        self._check("sdpa_cp_execute", self._lib.sdpa_cp_execute(handle, ctypes.byref(args)))

    def forward(self, q, k, v, scale):
        """(O, lse) of this rank's queries over the whole sequence: O like q,
        lse float32 [C, B, Hq, L / C] (the cp workspace)."""
        dev = self.device
        o = dev.empty(tuple(q.shape), _dtype_name(q.dtype))
        lse = dev.empty(self.lse_shape, "float32")
        ops = [Operand(dev, q, "q"), Operand(dev, k, "k"), Operand(dev, v, "v"),
               Operand(dev, o, "out", output=True)]
        if self._forward is None:
            self._forward = self._create(self._problem(_abi.FORWARD_TRAINING, ops))
        a = _abi.new_exec_args()
        a.q, a.k, a.v, a.dst = (op.address for op in ops)
        a.workspace, a.scale = lse.address, scale
        self._execute(self._forward, a)
        return _to_torch(o), _to_torch(lse)

    def backward(self, grad_out, q, k, v, o, lse, scale):
        """(dQ, dK, dV) of this rank's tokens, each summed over every rank's
        queries."""
        dev = self.device
        name = _dtype_name(q.dtype)
        grads = [dev.empty(tuple(x.shape), name) for x in (q, k, v)]
        ops = [Operand(dev, q, "q"), Operand(dev, k, "k"), Operand(dev, v, "v"),
               Operand(dev, o, "out"), Operand(dev, grad_out, "grad_out")] + \
            [Operand(dev, g, n, output=True) for g, n in zip(grads, ("dq", "dk", "dv"))]
        lse_op = Operand(dev, lse, "lse")
        if self._backward is None:
            self._backward = self._create(self._problem(_abi.BACKWARD, ops))
        a = _abi.new_exec_args()
        a.q, a.k, a.v, a.dst, a.diff_dst = (op.address for op in ops[:5])
        a.diff_q, a.diff_k, a.diff_v = (op.address for op in ops[5:])
        a.workspace, a.scale = lse_op.address, scale
        self._execute(self._backward, a)
        return tuple(_to_torch(g) for g in grads)

    def close(self):
        """Destroys the cp objects (local: the transport is not called)."""
        for handle in (self._forward, self._backward):
            if handle:
                self._lib.sdpa_cp_destroy(handle)
        self._forward = self._backward = None

    def __del__(self):
        self.close()


# The objects alive, destroyed at exit before their device's Level Zero
# context is: atexit runs handlers last registered first, and this one is
# registered after the device (default_device registers its close).
_live = weakref.WeakSet()
_exit_registered = False


def _close_all():
    for ring in list(_live):
        ring.close()


def _close_at_exit():
    global _exit_registered
    if not _exit_registered:
        atexit.register(_close_all)
        _exit_registered = True


def _dtype_name(dtype):
    names = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16"}
    if dtype not in names:
        raise TypeError("dtype %s: expected float32, float16 or bfloat16" % dtype)
    return names[dtype]


class _RingFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, ring, scale):
        o, lse = ring.forward(q, k, v, scale)
        ctx.ring, ctx.scale = ring, scale
        ctx.save_for_backward(q, k, v, o, lse)
        return o

    @staticmethod
    def backward(ctx, grad_out):
        q, k, v, o, lse = ctx.saved_tensors
        dq, dk, dv = ctx.ring.backward(grad_out.contiguous(), q, k, v, o, lse, ctx.scale)
        return dq, dk, dv, None, None


_rings = {}


def ring_attention(q, k, v, *, is_causal=False, scale=None, layout="contiguous", group=None,
                   device=None, timeout=None):
    """This rank's rows of attention over the whole sequence whose shards the
    group's ranks hold (q [B, Hq, L, D], k, v [B, Hkv, L, D], CPU torch
    tensors; rows as shard_indices(L, layout) says), with autograd.
    Collective. scale: default 1 / sqrt(D). timeout: seconds a rank waits
    for a peer before the call fails (None: $SDPA_CP_TIMEOUT, else none)."""
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        raise ValueError("q, k, v: expected [batch, heads, tokens, head_size] tensors")
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    key = (id(group), layout, bool(is_causal), q.dtype, tuple(q.shape), tuple(k.shape),
           id(device), timeout)
    ring = _rings.get(key)
    if ring is None:
        ring = _rings[key] = RingAttention(q, k, v, is_causal=is_causal, layout=layout,
                                           group=group, device=device, timeout=timeout)
    return _RingFunction.apply(q, k, v, ring, scale)
