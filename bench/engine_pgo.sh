#!/usr/bin/env bash
# What profile-guided optimisation gives the engine (issue 28): build/dev's
# native library (tools/dev.sh: LTO and RTS_PGO, as an installation builds
# it) against the same build without RTS_PGO (build/nopgo, built here), on
# the scenarios given: instructions per simulated packet (callgrind,
# deterministic) and CPU-seconds, best and median of ROUNDS rounds of 3 runs
# each, the two libraries in turn. The same code is compiled both times
# (-ffp-contract=off as always): only inlining and code layout differ.
#   bench/engine_pgo.sh [ROUNDS] [SCENARIO.toml ...]   default: 8, queue_500
. "$(dirname "$0")/common.sh"
bench_out bench-engine
need_valgrind
rounds=${1:-8}
shift || true
[ $# -gt 0 ] || set -- "$here/scenarios/danicki2021/queue_500.toml"
dev="$here/build/dev"
[ -f "$dev/librtshield_native.so" ] || { echo "engine_pgo: $dev/librtshield_native.so missing: run tools/dev.sh" >&2; exit 1; }
nopgo="$here/build/nopgo"
cmake -S "$here" -B "$nopgo" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRTS_BUILD_NATIVE=ON \
  -DRTS_BUILD_TESTS=OFF -DRTS_PGO=OFF >/dev/null
cmake --build "$nopgo" --target rtshield_native >/dev/null
for v in dev nopgo; do # bench/engine_cost.c against each library
  d=$dev
  [ "$v" = nopgo ] && d=$nopgo
  "$cc" -std=c11 -O2 -I"$here/sim/include" -I"$here/libshield/include" -o "$out/engine_cost_$v" \
    "$here/bench/engine_cost.c" "$d/librtshield_native.so" -Wl,-rpath,"$d"
done
echo "| scenario | library | instructions per packet | CPU-s best | CPU-s median |"
echo "|---|---|---:|---:|---:|"
for sc in "$@"; do
  name=$(basename "$sc" .toml)
  scenario_config "$sc" "$out/$name.bin"
  for v in nopgo dev; do
    valgrind --tool=callgrind --callgrind-out-file="$out/cg.$name.$v" "$out/engine_cost_$v" \
      "$out/$name.bin" 1 >/dev/null 2>"$out/cg.$name.$v.log"
  done
  for _ in $(seq "$rounds"); do
    for v in nopgo dev; do
      echo "$v $("$out/engine_cost_$v" "$out/$name.bin" 3 | awk '{print $NF}')"
    done
  done >"$out/times.$name"
  for v in nopgo dev; do
    ir=$(callgrind_ir "$out/cg.$name.$v" "$name $v")
    read -r _ pk _ < <("$out/engine_cost_$v" "$out/$name.bin" 1)
    label="-O2, LTO (RTS_PGO off)"
    [ "$v" = dev ] && label="-O2, LTO, profile-guided (build/dev)"
    awk -v v="$v" '$1 == v {print $2}' "$out/times.$name" | sort -n | awk -v n="$name" \
      -v l="$label" -v ir="$ir" -v pk="$pk" '{t[NR] = $1} END {
        printf "| %s | %s | %.1f | %.4f | %.4f |\n", n, l, ir / pk, t[1],
          (NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2) }'
  done
done
