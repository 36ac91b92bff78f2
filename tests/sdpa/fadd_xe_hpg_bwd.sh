#!/bin/sh
# sdpa/test_bwd through the backward fast path's emulated variants with
# Xe-HPG's configurations (SDPA_ZE_KERNELS=xe_hpg) with the native f32 atomic
# add (the -fadd variants, SDPA_ZE_FLOAT_ATOMICS=native): by default the CPU
# device takes the compare-and-swap variants, which GPUs without the add take
# too.
SDPA_ZE_FLOAT_ATOMICS=native
export SDPA_ZE_FLOAT_ATOMICS
exec "$(dirname "$0")/xe_suite.sh" xe_hpg sdpa/test_bwd
