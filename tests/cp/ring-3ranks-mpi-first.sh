#!/bin/sh
# ring-3ranks-mpi-first.sh - MPI_Init before zeInit, as frameworks do, on 3
# ranks: Open MPI's hwloc has loaded the OpenCL ICD loader (which reads its
# vendor list once) before the CPU driver looks for its engine. The causal
# f32 case (run-mpi.sh).
CP_TEST_MPI_FIRST=1
export CP_TEST_MPI_FIRST
exec "${srcdir:-.}/cp/run-mpi.sh" 3 causal_f32
