#!/usr/bin/env bash
# Engine throughput on the receive path (bench/rx_throughput.c), built with
# -O2 like the installed package. Results: bench/RESULTS.md.
. "$(dirname "$0")/common.sh"
bench_out bench-rx
"$cc" -std=c11 -O2 -ffp-contract=off -I"$here/sim/include" -I"$here/sim/src" -I"$here/libshield/include" \
  -I"$here/libshield/port/posix" -I"$here/sim/tests" -I"$here/libshield/tests" \
  -o "$out/rx_throughput" "$here/bench/rx_throughput.c" \
  "$here"/sim/src/*.c "$here"/libshield/src/*.c "$here"/libshield/port/posix/*.c -lm
"$out/rx_throughput" "${1:-10}"
