#!/bin/sh
# run-mpi.sh RANKS [CASES] - runs cp/test_cp under $MPIEXEC with RANKS
# processes on this machine (make check: cp/ring-*ranks.sh); CASES, a
# space-separated list of its case names (zigzag strided causal_f32), picks
# some of them (CK_INCLUDE_TAGS, unless the environment sets it); default all.
#
# Open MPI settings, unless the environment sets them already: root may run
# it (CI runs as root), more ranks than cores (--oversubscribe), the ob1
# point-to-point layer over self and shared memory only (nothing leaves the
# machine, no UCX), and no single-copy shared memory (CMA is refused in many
# containers). Other MPIs ignore these variables.
set -eu
ranks=$1
if [ -n "${2:-}" ] && [ -z "${CK_INCLUDE_TAGS:-}" ]; then
    CK_INCLUDE_TAGS=$2
    export CK_INCLUDE_TAGS
fi
if [ -z "${MPIEXEC:-}" ]; then
    echo "run-mpi.sh: MPIEXEC is not set (configure finds mpiexec)" >&2
    exit 99
fi
OMPI_ALLOW_RUN_AS_ROOT=1
OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
OMPI_MCA_rmaps_base_oversubscribe=${OMPI_MCA_rmaps_base_oversubscribe:-1}
OMPI_MCA_pml=${OMPI_MCA_pml:-ob1}
OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader}
OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM OMPI_MCA_rmaps_base_oversubscribe \
    OMPI_MCA_pml OMPI_MCA_btl OMPI_MCA_btl_vader_single_copy_mechanism
# A rank that hangs (a ring out of step) must not hang the test suite.
exec timeout "${CP_TEST_TIMEOUT:-600}" "$MPIEXEC" -n "$ranks" ./cp/test_cp
