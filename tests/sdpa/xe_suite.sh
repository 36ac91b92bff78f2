#!/bin/sh
# xe_suite.sh - runs one of the attention suites through the fast path's
# emulated variants on the CPU device (SDPA_ZE_KERNELS, see sdpa.h).
#
# make check lists a wrapper per suite (tests/sdpa.am): xe_<suite>.sh calls
#     xe_suite.sh <kernel set> <program>
# from the tests build directory, where <program> (e.g. sdpa/test_fwd) is.
set -eu
kernels=$1
program=$2
SDPA_ZE_KERNELS=$kernels
export SDPA_ZE_KERNELS
exec "./$program"
