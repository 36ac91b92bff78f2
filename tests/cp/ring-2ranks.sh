#!/bin/sh
# ring-2ranks.sh - the context-parallel tests on 2 ranks (run-mpi.sh).
exec "${srcdir:-.}/cp/run-mpi.sh" 2
