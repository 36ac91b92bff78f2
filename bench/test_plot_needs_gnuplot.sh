#!/bin/sh
# test_plot_needs_gnuplot.sh - `make plot` (`make bench-plot` at the top)
# without a usable gnuplot fails at once, with a message that names it,
# instead of running its sweep (minutes) and failing at the plot.
# Run by make check here, with MAKE set (Makefile.am).
set -u
unset MAKEFLAGS MFLAGS
started=$(date +%s)
status=0
output=$(timeout 60 "${MAKE:-make}" -s plot GNUPLOT=/nonexistent/gnuplot 2>&1) || status=$?
elapsed=$(($(date +%s) - started))
printf '%s\n' "$output"
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
[ "$status" != 124 ] || fail "make plot ran its sweep for 60 s without gnuplot"
[ "$status" != 0 ] || fail "make plot succeeded without gnuplot"
printf '%s\n' "$output" | grep -q "gnuplot" || fail "the message does not name gnuplot"
[ "$elapsed" -lt 30 ] || fail "make plot took $elapsed s to fail"
echo "PASS: make plot refused in $elapsed s: no gnuplot"
