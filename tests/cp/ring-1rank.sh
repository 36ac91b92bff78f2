#!/bin/sh
# ring-1rank.sh - the degenerate ring on 1 rank (no transfers, the caller's
# K/V only): the balanced causal case (run-mpi.sh).
exec "${srcdir:-.}/cp/run-mpi.sh" 1 zigzag
