# SPDX-License-Identifier: MIT
# Plot `ntmem bench copy --csv` output: GB/s against copy size, one line per
# implementation, destination offset 0.
#   gnuplot -e "csv='copy.csv'; out='copy.png'" bench/plot-copy.gp
if (!exists("csv")) csv = 'bench/out/copy.csv'
if (!exists("out")) out = 'bench/out/copy.png'
if (!exists("variant")) variant = 'avx512'

set datafile separator ','
set terminal pngcairo size 1100,650 noenhanced
set output out
set title 'ntmem bench copy: throughput by copy size (destination offset 0)'
set logscale x 2
set xlabel 'copy size (bytes)'
set ylabel 'GB/s'
set key outside right
set grid
set format x '%.0b%B'
# Rows of other series read as NaN; 'missing' keeps each line connected.
set datafile missing NaN

# columns: size,bytes,dst_off,sem,impl,median_ms,min_ms,max_ms,GBps,x_limit,x_peer
row(sem, impl) = (column(3) == 0 && strcol(4) eq sem && strcol(5) eq impl)
series = 'limit:nt-fill nt+flush:inline nt:'.variant.' flush:'.variant.' nt:glibc flush:glibc+flush nt+flush:pmdk'
sem_of(s) = s[1:strstrt(s, ':') - 1]
impl_of(s) = s[strstrt(s, ':') + 1:]

plot for [s in series] csv using (row(sem_of(s), impl_of(s)) ? column(2) : NaN):9 \
	with linespoints title s
