# plot.gp - the benchmark's picture: GFLOP/s against sequence length, forward
# and backward side by side, for ours, the naive baseline, host sgemm and
# (where it ran) PyTorch, from what `sdpa_bench --sweep --data FILE` writes.
# `make bench-plot` runs it as
#
#   gnuplot -e "data='bench-sweep.tsv'; out='bench-sweep'; title='...'; note='...'; torch=0|1" plot.gp
#
# and gets out.png and out.svg. Columns of the data: case, pass, sq, sk,
# ours, naive, sgemm, torch (GFLOP/s, NaN where a side did not run).

set datafile separator "\t"
set datafile missing "NaN"
set logscale x 2
set xrange [192:5461]
set xtics ("256" 256, "512" 512, "1K" 1024, "2K" 2048, "4K" 4096)
set yrange [0:*]
set grid ytics xtics lc rgb "#dddddd"
set xlabel "sequence length (Sq = Sk)"
set ylabel "GFLOP/s (model flops)"
set key below horizontal maxcols 2 width 2

# x when the row is of pass p, else undefined (the point is skipped).
at(p) = (strcol(2) eq p) ? $4 : NaN

torch_series(p) = torch ? \
    sprintf(", data every ::1 using (at('%s')):8 with linespoints lw 2 pt 9 lc rgb '#d62728' title 'PyTorch CPU SDPA'", p) : ""

panel(p) = sprintf("plot data every ::1 using (at('%s')):5 with linespoints lw 3 pt 7 lc rgb '#1f77b4' title 'sdpa-ze (ours)', " . \
    "data every ::1 using (at('%s')):6 with linespoints lw 2 pt 5 lc rgb '#ff7f0e' title 'naive (OpenBLAS, S materialized)', " . \
    "data every ::1 using (at('%s')):7 with linespoints lw 2 dt 2 pt 4 lc rgb '#2ca02c' title 'host sgemm (same flops)'%s", \
    p, p, p, torch_series(p))

do for [format in "png svg"] {
    if (format eq "png") {
        set terminal pngcairo size 1400,640 font "sans,11"
    } else {
        set terminal svg size 1400,640 font "sans,11" dynamic background rgb "white"
    }
    set output out . "." . format
    set multiplot layout 1,2 title title . (strlen(note) > 0 ? "\n" . note : "")
    set title "forward (inference)"
    eval panel("fwd")
    set title "backward (dQ, dK, dV)"
    eval panel("bwd")
    unset multiplot
    set output
}
