#!/bin/sh
# ring-4ranks.sh - the context-parallel tests on 4 ranks (run-mpi.sh).
exec "${srcdir:-.}/cp/run-mpi.sh" 4
