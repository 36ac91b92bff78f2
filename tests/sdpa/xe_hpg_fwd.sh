#!/bin/sh
# sdpa/test_fwd through the fast path's emulated variants with Xe-HPG's
# configurations (sub-groups of 8: SDPA_ZE_KERNELS=xe_hpg).
exec "$(dirname "$0")/xe_suite.sh" xe_hpg sdpa/test_fwd
