#!/usr/bin/env bash
# The engine alone on the Danicki pyramid (issue 13, item 3): instructions per
# simulated packet (callgrind, deterministic) and CPU-seconds (best of 10),
# without Python. rtshield.engine builds each scenario's rtsim_config, whose
# bytes a small C driver (bench/engine_cost.c) runs against build/dev's
# native library (tools/dev.sh builds it: LTO, profile-guided, RelWithDebInfo).
#   bench/engine_cost.sh [SCENARIO.toml ...]    default: queue_500, scheduler_equal
. "$(dirname "$0")/common.sh"
bench_out bench-engine
lib="$here/build/dev/librtshield_native.so"
need_valgrind
[ -f "$lib" ] || { echo "engine_cost: $lib missing: run tools/dev.sh" >&2; exit 1; }
"$cc" -std=c11 -O2 -I"$here/sim/include" -I"$here/libshield/include" -o "$out/engine_cost" \
  "$here/bench/engine_cost.c" "$lib" -Wl,-rpath,"$here/build/dev"
if [ $# -eq 0 ]; then
  set -- "$here/scenarios/danicki2021/queue_500.toml" "$here/scenarios/danicki2021/scheduler_equal.toml"
fi
echo "| scenario | packets | events | instructions | per packet | CPU-s (best of 10) | M pkt per CPU-s |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for sc in "$@"; do
  name=$(basename "$sc" .toml)
  scenario_config "$sc" "$out/$name.bin"
  valgrind --tool=callgrind --callgrind-out-file="$out/cg.$name" "$out/engine_cost" "$out/$name.bin" 1 \
    >/dev/null 2>"$out/cg.$name.log"
  ir=$(callgrind_ir "$out/cg.$name" "$name")
  read -r _ pk _ ev _ _ _ cpu < <("$out/engine_cost" "$out/$name.bin" 10)
  awk -v n="$name" -v pk="$pk" -v ev="$ev" -v ir="$ir" -v cpu="$cpu" 'BEGIN {
    printf "| %s | %d | %d | %d | %.0f | %.4f | %.1f |\n", n, pk, ev, ir, ir / pk, cpu, pk / cpu / 1e6 }'
done
