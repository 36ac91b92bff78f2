"""ctypes mirrors of the public ABI in include/sdpa.h (ABI version 1.1).

The layouts here must match sdpa.h member for member: the test suite compares
every offset and size with what the C compiler says (tests/test_abi_layout.py
against the abi_layout program built from tests/abi_layout.c), and every
descriptor carries struct_size, which the backend checks.
"""

import ctypes

ABI_VERSION_MAJOR = 1


def make_version(major, minor):
    return ((major & 0xFFFF) << 16) | (minor & 0xFFFF)


ABI_VERSION = make_version(1, 2)

CONTEXT_DESC_VERSION = 1
PROBLEM_DESC_VERSION = 3
EXEC_ARGS_VERSION = 3
FEATURES_VERSION = 3
MERGE_DESC_VERSION = 1
MERGE_ARGS_VERSION = 1
SUPPORT_VERSION = 1
MERGE_MAX_STATES = 16

# sdpa_status_t
SUCCESS = 0

# sdpa_dtype_t
DTYPE_UNDEF, DTYPE_F32, DTYPE_F16, DTYPE_BF16 = 0, 1, 2, 3
DTYPE_S8, DTYPE_U8, DTYPE_S32 = 4, 5, 8
DTYPE_F8_E4M3, DTYPE_F8_E5M2 = 9, 10

# sdpa_quant_kind_t (PER_HEAD: ABI 1.2)
QUANT_NONE, QUANT_PER_TENSOR, QUANT_PER_GROUP, QUANT_PER_HEAD = 0, 1, 2, 3

# sdpa_prop_kind_t
FORWARD_INFERENCE, FORWARD_TRAINING, BACKWARD = 0, 1, 2

# sdpa_mask_kind_t
MASK_NONE, MASK_BUFFER, MASK_CAUSAL_TOP_LEFT, MASK_CAUSAL_BOTTOM_RIGHT = 0, 1, 2, 3

# sdpa_scale_kind_t
SCALE_NONE, SCALE_HOST, SCALE_DEVICE = 0, 1, 2

# sdpa_softmax_kind_t
SOFTMAX_ACCURATE, SOFTMAX_INF_AS_ZERO = 0, 1

# sdpa_alibi_kind_t (ABI 1.1)
ALIBI_NONE, ALIBI_PER_HEAD, ALIBI_PER_BATCH_HEAD = 0, 1, 2

# sdpa_query_t
QUERY_WORKSPACE_BYTES = 1
QUERY_SCRATCH_BYTES = 2
QUERY_CONFIG_STRING = 3
QUERY_MODULES_BUILT = 4
QUERY_SCRATCH_ALLOCATIONS = 5
QUERY_MODULE_CACHE_HITS = 6
QUERY_MODULE_CACHE_MISSES = 7

_enum = ctypes.c_int  # C enums are int-sized on every ABI we build for
_u32, _i64, _vp = ctypes.c_uint32, ctypes.c_int64, ctypes.c_void_p


class TensorDesc(ctypes.Structure):
    _fields_ = [("dtype", _enum), ("dims", _i64 * 4), ("strides", _i64 * 4)]


class QuantDesc(ctypes.Structure):
    _fields_ = [("scales", _enum), ("scales_dtype", _enum), ("zero_points", _enum),
                ("zero_points_dtype", _enum), ("group_size", _i64)]


class DropoutDesc(ctypes.Structure):
    _fields_ = [("enabled", _u32), ("host_scalars", _u32), ("with_offset", _u32),
                ("with_mask_output", _u32)]


class VarlenDesc(ctypes.Structure):
    _fields_ = [("enabled", _u32), ("batch", _i64), ("max_seqlen_q", _i64),
                ("max_seqlen_k", _i64)]


class PagedKvDesc(ctypes.Structure):
    _fields_ = [("enabled", _u32), ("max_blocks_per_seq", _i64), ("block_table_stride", _i64)]


class WindowDesc(ctypes.Structure):
    _fields_ = [("enabled", _u32), ("left", _i64), ("right", _i64)]


class ProblemDesc(ctypes.Structure):
    _fields_ = [
        ("struct_size", _u32), ("struct_version", _u32), ("prop_kind", _enum),
        ("q", TensorDesc), ("k", TensorDesc), ("v", TensorDesc), ("dst", TensorDesc),
        ("mask_kind", _enum), ("mask", TensorDesc),
        ("scale_kind", _enum), ("scale_dtype", _enum), ("invert_scale", _u32),
        ("softmax_kind", _enum),
        ("kq_acc_dtype", _enum), ("vs_acc_dtype", _enum),
        ("k_quant", QuantDesc), ("v_quant", QuantDesc),
        ("dropout", DropoutDesc),
        ("diff_dst", TensorDesc), ("diff_q", TensorDesc), ("diff_k", TensorDesc),
        ("diff_v", TensorDesc), ("ds", TensorDesc),
        ("deterministic", _u32),
        # ABI 1.1, struct_version 2
        ("varlen", VarlenDesc), ("paged_kv", PagedKvDesc), ("window", WindowDesc),
        ("softcap", ctypes.c_float), ("alibi", _enum), ("num_splits", _u32),
        # ABI 1.2, struct_version 3
        ("sinks", _u32),
    ]


class ExecArgs(ctypes.Structure):
    _fields_ = [
        ("struct_size", _u32), ("struct_version", _u32),
        ("q", _vp), ("k", _vp), ("v", _vp), ("dst", _vp), ("mask", _vp), ("workspace", _vp),
        ("scale", ctypes.c_float), ("scale_ptr", _vp),
        ("k_scales", _vp), ("k_zero_points", _vp), ("v_scales", _vp), ("v_zero_points", _vp),
        ("dropout_p", ctypes.c_float), ("dropout_seed", _i64), ("dropout_offset", _i64),
        ("dropout_p_ptr", _vp), ("dropout_seed_ptr", _vp), ("dropout_offset_ptr", _vp),
        ("dropout_mask", _vp),
        ("diff_dst", _vp), ("diff_q", _vp), ("diff_k", _vp), ("diff_v", _vp), ("ds", _vp),
        ("scratch", _vp), ("scratch_size", ctypes.c_size_t),
        ("command_list", _vp), ("signal_event", _vp), ("num_wait_events", _u32),
        ("wait_events", _vp),
        # ABI 1.1, struct_version 2
        ("cu_seqlens_q", _vp), ("cu_seqlens_k", _vp), ("block_table", _vp),
        ("cache_seqlens", _vp), ("alibi_slopes", _vp),
        # ABI 1.2, struct_version 3
        ("sinks", _vp), ("diff_sinks", _vp),
    ]


class ContextDesc(ctypes.Structure):
    _fields_ = [("struct_size", _u32), ("struct_version", _u32), ("ze_context", _vp),
                ("ze_device", _vp), ("command_list", _vp), ("flags", _u32)]


class Features(ctypes.Structure):
    _fields_ = [("struct_size", _u32), ("struct_version", _u32),
                ("device_name", ctypes.c_char * 256),
                ("max_head_size", _u32), ("subgroup_size", _u32),
                ("has_f16", _u32), ("has_bf16", _u32),
                ("has_backward", _u32), ("has_deterministic_backward", _u32),
                ("has_quantized_kv", _u32), ("has_dropout", _u32),
                # ABI 1.1, struct_version 2
                ("has_varlen", _u32), ("has_paged_kv", _u32), ("has_window", _u32),
                ("has_softcap", _u32), ("has_alibi", _u32), ("has_split_kv", _u32),
                ("has_merge", _u32),
                # ABI 1.2, struct_version 3
                ("has_supports_query", _u32), ("has_sinks", _u32),
                ("has_value_head_size", _u32), ("has_v_view_of_k", _u32),
                ("has_fp8_kv", _u32)]


class MergeDesc(ctypes.Structure):
    _fields_ = [("struct_size", _u32), ("struct_version", _u32), ("num_states", _u32),
                ("softmax_kind", _enum), ("states", TensorDesc), ("states_lse", TensorDesc),
                ("dst", TensorDesc), ("dst_lse", TensorDesc)]


class MergeArgs(ctypes.Structure):
    _fields_ = [("struct_size", _u32), ("struct_version", _u32),
                ("states", ctypes.POINTER(_vp)), ("states_lse", ctypes.POINTER(_vp)),
                ("dst", _vp), ("dst_lse", _vp),
                ("command_list", _vp), ("signal_event", _vp), ("num_wait_events", _u32),
                ("wait_events", _vp)]


class Support(ctypes.Structure):
    _fields_ = [("struct_size", _u32), ("struct_version", _u32), ("status", _enum),
                ("kernel_kind", _enum), ("workspace_bytes", ctypes.c_uint64),
                ("scratch_bytes", ctypes.c_uint64), ("message", ctypes.c_char * 1024),
                ("config_string", ctypes.c_char * 384)]


_status = ctypes.c_int
LastErrorFn = ctypes.CFUNCTYPE(ctypes.c_char_p)
ContextCreateFn = ctypes.CFUNCTYPE(_status, ctypes.POINTER(ContextDesc), ctypes.POINTER(_vp))
ContextDestroyFn = ctypes.CFUNCTYPE(None, _vp)
ContextGetFeaturesFn = ctypes.CFUNCTYPE(_status, _vp, ctypes.POINTER(Features))
QueryFn = ctypes.CFUNCTYPE(_status, _vp, _enum, _vp, ctypes.c_size_t)
PrimitiveCreateFn = ctypes.CFUNCTYPE(_status, _vp, ctypes.POINTER(ProblemDesc),
                                     ctypes.POINTER(_vp))
PrimitiveDestroyFn = ctypes.CFUNCTYPE(None, _vp)
PrimitiveExecuteFn = ctypes.CFUNCTYPE(_status, _vp, ctypes.POINTER(ExecArgs))
MergeCreateFn = ctypes.CFUNCTYPE(_status, _vp, ctypes.POINTER(MergeDesc), ctypes.POINTER(_vp))
MergeExecuteFn = ctypes.CFUNCTYPE(_status, _vp, ctypes.POINTER(MergeArgs))
PrimitiveSupportsFn = ctypes.CFUNCTYPE(_status, _vp, ctypes.POINTER(ProblemDesc),
                                       ctypes.POINTER(Support))


class BackendIface(ctypes.Structure):
    _fields_ = [
        ("abi_version", _u32), ("struct_size", _u32), ("name", ctypes.c_char_p),
        ("last_error", LastErrorFn),
        ("context_create", ContextCreateFn),
        ("context_destroy", ContextDestroyFn),
        ("context_get_features", ContextGetFeaturesFn),
        ("context_query", QueryFn),
        ("primitive_create", PrimitiveCreateFn),
        ("primitive_destroy", PrimitiveDestroyFn),
        ("primitive_query", QueryFn),
        ("primitive_execute", PrimitiveExecuteFn),
        ("merge_create", MergeCreateFn),  # ABI 1.1
        ("merge_execute", MergeExecuteFn),
        ("primitive_supports", PrimitiveSupportsFn),  # ABI 1.2
    ]


# Every mirrored struct under its C name, for the layout test.
STRUCTS = {
    "sdpa_tensor_desc_t": TensorDesc,
    "sdpa_quant_desc_t": QuantDesc,
    "sdpa_dropout_desc_t": DropoutDesc,
    "sdpa_problem_desc_t": ProblemDesc,
    "sdpa_exec_args_t": ExecArgs,
    "sdpa_context_desc_t": ContextDesc,
    "sdpa_features_t": Features,
    "sdpa_backend_iface_t": BackendIface,
    "sdpa_varlen_desc_t": VarlenDesc,
    "sdpa_paged_kv_desc_t": PagedKvDesc,
    "sdpa_window_desc_t": WindowDesc,
    "sdpa_merge_desc_t": MergeDesc,
    "sdpa_support_t": Support,
    "sdpa_merge_args_t": MergeArgs,
}


def new_problem():
    p = ProblemDesc()
    p.struct_size, p.struct_version = ctypes.sizeof(ProblemDesc), PROBLEM_DESC_VERSION
    return p


def new_exec_args():
    a = ExecArgs()
    a.struct_size, a.struct_version = ctypes.sizeof(ExecArgs), EXEC_ARGS_VERSION
    return a
