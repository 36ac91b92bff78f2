#!/bin/sh
# sdpa/test_quant through the fast path's emulated variants (SDPA_ZE_KERNELS=xe):
# quantized K/V are converted into local memory by the cvt variants.
exec "$(dirname "$0")/xe_suite.sh" xe sdpa/test_quant
