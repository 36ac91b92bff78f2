#!/bin/sh
# sdpa/test_dropout_bwd through the portable kernels with the native f32
# atomic add (the -fadd variants, SDPA_ZE_FLOAT_ATOMICS=native): by default
# the CPU device takes the compare-and-swap variants, which GPUs without the
# add take too.
SDPA_ZE_FLOAT_ATOMICS=native
export SDPA_ZE_FLOAT_ATOMICS
exec "$(dirname "$0")/xe_suite.sh" auto sdpa/test_dropout_bwd
