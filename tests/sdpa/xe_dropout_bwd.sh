#!/bin/sh
# sdpa/test_dropout_bwd through the backward fast path's emulated variants
# (SDPA_ZE_KERNELS=xe).
exec "$(dirname "$0")/xe_suite.sh" xe sdpa/test_dropout_bwd
