#!/bin/sh
# rerun.sh - runs a device suite again under another environment.
#
# tests/sdpa.am lists each rerun as one name, SUITE@ENV.rerun (RERUNS), and
# make check calls this script with that name (the file does not exist; the
# name is the whole specification). ENV is one or more of, joined by '+':
#   xe, xe_hpg  SDPA_ZE_KERNELS: the fast path, emulated on the CPU device
#               with Xe-HPC's / Xe-HPG's configurations (doc/fast-path.md)
#   fadd        SDPA_ZE_FLOAT_ATOMICS=native: the -fadd variants GPUs take
# The suite program is sdpa/SUITE in the tests build directory (the current
# directory under make check). Exit 99 (a hard error) on an unknown ENV.
set -eu
name=${1##*/}
name=${name%.rerun}
suite=${name%%@*}
settings=${name#*@}
if [ "$suite" = "$name" ] || [ -z "$settings" ]; then
    echo "rerun.sh: '$1' is not SUITE@ENV.rerun" >&2
    exit 99
fi
for setting in $(echo "$settings" | tr '+' ' '); do
    case $setting in
    xe | xe_hpg) SDPA_ZE_KERNELS=$setting; export SDPA_ZE_KERNELS ;;
    fadd) SDPA_ZE_FLOAT_ATOMICS=native; export SDPA_ZE_FLOAT_ATOMICS ;;
    *)
        echo "rerun.sh: unknown environment '$setting' in '$1'" >&2
        exit 99
        ;;
    esac
done
exec "./sdpa/$suite"
