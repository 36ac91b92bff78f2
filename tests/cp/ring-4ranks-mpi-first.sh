#!/bin/sh
# ring-4ranks-mpi-first.sh - MPI_Init before zeInit on 4 ranks (see
# ring-3ranks-mpi-first.sh): the refusals, which create and execute on every
# rank's device (run-mpi.sh).
CP_TEST_MPI_FIRST=1
export CP_TEST_MPI_FIRST
exec "${srcdir:-.}/cp/run-mpi.sh" 4 refusals
