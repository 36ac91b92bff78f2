#!/bin/sh
# timeout-4ranks.sh - a peer that never comes, on 4 ranks with a 2 s
# timeout: a rank that does not call execute (then calls it late), a rank
# stopped by SIGSTOP, a rank whose device holds it back mid-ring (forward
# and backward). Every rank must give up within its bound, naming the peer
# it waited for (run-mpi.sh; mpiexec runs under timeout there, shortened
# here).
CP_TEST_TIMEOUT=${CP_TEST_TIMEOUT:-300}
export CP_TEST_TIMEOUT
exec "${srcdir:-.}/cp/run-mpi.sh" 4 "timeout_absent timeout_stopped timeout_ring timeout_backward"
