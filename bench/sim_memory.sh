#!/usr/bin/env bash
# Does the simulator's memory grow with the simulated length? Runs
# bench/sim_memory.c for 10 s and 100 s simulated: peak RSS, then the heap
# peak under valgrind massif (when installed). Results: bench/RESULTS.md.
. "$(dirname "$0")/common.sh"
bench_out bench-mem
"$cc" -std=c11 -O2 -g -I"$here/sim/include" -I"$here/sim/src" -I"$here/libshield/include" \
  -I"$here/libshield/port/posix" -I"$here/sim/tests" -I"$here/libshield/tests" -o "$out/sim_memory" "$here/bench/sim_memory.c" \
  "$here"/sim/src/*.c "$here"/libshield/src/*.c "$here"/libshield/port/posix/*.c -lm
for secs in 10 100; do
  "$out/sim_memory" "$secs"
done
if command -v valgrind >/dev/null; then
  for secs in 10 100; do
    valgrind --tool=massif --massif-out-file="$out/massif.$secs" "$out/sim_memory" "$secs" \
      >/dev/null 2>&1
    peak=$(grep -o 'mem_heap_B=[0-9]*' "$out/massif.$secs" | cut -d= -f2 | sort -n | tail -1)
    echo "$secs s: heap peak $peak B (massif)"
  done
fi
