#!/bin/sh
# ring-4ranks.sh - the balanced causal case (zigzag, f16, GQA,
# deterministic) on 4 ranks (run-mpi.sh).
exec "${srcdir:-.}/cp/run-mpi.sh" 4 zigzag
