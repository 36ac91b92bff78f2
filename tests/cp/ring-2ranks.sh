#!/bin/sh
# ring-2ranks.sh - every context-parallel case on 2 ranks (run-mpi.sh).
exec "${srcdir:-.}/cp/run-mpi.sh" 2
