"""The ctypes mirrors of sdpa.h against the C compiler's layout (the
abi_layout program built from abi_layout.c; its path comes in
$SDPA_ABI_LAYOUT, which `make check` sets)."""

import ctypes
import os
import subprocess

import pytest

import sdpa_ze
from sdpa_ze import _abi


def c_layout():
    program = os.environ.get("SDPA_ABI_LAYOUT")
    if not program:
        pytest.skip("SDPA_ABI_LAYOUT is not set (make check sets it)")
    rows = {}
    for line in subprocess.run([program], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        struct, member, offset, size = line.split()
        rows[(struct, member)] = (int(offset), int(size))
    return rows


def test_every_struct_matches_the_header():
    rows = c_layout()
    assert rows[("SDPA_ABI_VERSION", "value")][1] == _abi.ABI_VERSION
    structs = {struct for struct, _ in rows} - {"SDPA_ABI_VERSION"}
    assert structs == set(_abi.STRUCTS)
    for name, mirror in _abi.STRUCTS.items():
        assert rows[(name, "sizeof")] == (0, ctypes.sizeof(mirror)), name
        c_members = {m for s, m in rows if s == name} - {"sizeof"}
        assert c_members == {f for f, _ in mirror._fields_}, name
        for field, _ in mirror._fields_:
            descriptor = getattr(mirror, field)
            assert rows[(name, field)] == (descriptor.offset, descriptor.size), (name, field)


def test_version_matches_the_build():
    expected = os.environ.get("SDPA_PACKAGE_VERSION")
    if not expected:
        pytest.skip("SDPA_PACKAGE_VERSION is not set (make check sets it)")
    assert sdpa_ze.__version__ == expected
