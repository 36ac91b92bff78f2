"""The C ABI of sdpa.h as ctypes structures and constants, public: for a
caller that builds descriptors itself (any member sdpa.h defines, including
ABI 1.1's varlen, paged KV, window, softcap, ALiBi, split-KV, merge and
dropout) and drives a backend through Device.primitive() or its own
Level Zero code.

    from sdpa_ze import abi
    p = abi.new_problem()             # struct_size and struct_version set
    p.window.enabled, p.window.left, p.window.right = 1, 128, 0

Names drop the C prefix: sdpa_problem_desc_t is ProblemDesc,
SDPA_MASK_CAUSAL_TOP_LEFT is MASK_CAUSAL_TOP_LEFT. STRUCTS maps every C
struct name to its mirror; the test suite checks each layout against the C
compiler's."""

import ctypes

from . import _abi
# Every public name of the mirrors (STRUCTS, new_problem, ProblemDesc, ...).
from ._abi import *  # noqa: F401,F403


def new_merge_desc():
    """A MergeDesc with struct_size and struct_version set."""
    d = _abi.MergeDesc()
    d.struct_size, d.struct_version = ctypes.sizeof(d), _abi.MERGE_DESC_VERSION
    return d


def new_merge_args():
    """A MergeArgs with struct_size and struct_version set."""
    a = _abi.MergeArgs()
    a.struct_size, a.struct_version = ctypes.sizeof(a), _abi.MERGE_ARGS_VERSION
    return a
