#!/bin/sh
# ring-3ranks.sh - an odd ring (the dK/dV accumulators come home in the
# other buffer) on 3 ranks: causal f32 over contiguous shards, where some
# ranks have no work at some steps (run-mpi.sh).
exec "${srcdir:-.}/cp/run-mpi.sh" 3 causal_f32
