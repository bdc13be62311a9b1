#!/usr/bin/env bash
# What profile-guided optimisation would give the engine (issue 28): builds
# the native library twice more (build/pgo: instrumented, then with GCC's
# -fprofile-use from one run of queue_500), then compares it with build/dev's
# (tools/dev.sh: -O2, LTO) on the scenarios given: instructions per simulated
# packet (callgrind, deterministic) and CPU-seconds, best and median of
# ROUNDS rounds of 3 runs each, the two libraries in turn. The same code is
# compiled (-ffp-contract=off as always): only inlining and code layout differ.
#   bench/engine_pgo.sh [ROUNDS] [SCENARIO.toml ...]   default: 8, queue_500
. "$(dirname "$0")/common.sh"
bench_out bench-engine
need_valgrind
rounds=${1:-8}
shift || true
[ $# -gt 0 ] || set -- "$here/scenarios/danicki2021/queue_500.toml"
dev="$here/build/dev"
[ -f "$dev/librtshield_native.so" ] || { echo "engine_pgo: $dev/librtshield_native.so missing: run tools/dev.sh" >&2; exit 1; }
pgo="$here/build/pgo"
prof="$pgo/profile"
py=${PYTHON:-python3}
cfg() { # cfg SCENARIO OUT.bin: the rtsim_config rtshield.engine builds, as raw bytes
  PYTHONPATH="$here/python${PYTHONPATH:+:$PYTHONPATH}" "$py" - "$1" "$2" <<'PY'
import sys
from rtshield._native import load
from rtshield.engine_config import build_config
from rtshield.scenario import load_scenario

ffi, lib = load()
cfg, _ = build_config(load_scenario(sys.argv[1]), ffi, lib)
open(sys.argv[2], "wb").write(bytes(ffi.buffer(cfg)))
PY
}
driver() { # driver NAME LIBDIR: bench/engine_cost.c against that library
  "$cc" -std=c11 -O2 -I"$here/sim/include" -I"$here/libshield/include" -o "$out/engine_cost_$1" \
    "$here/bench/engine_cost.c" "$2/librtshield_native.so" -Wl,-rpath,"$2"
}
build_pgo() { # build_pgo FLAGS LDFLAGS: (re)configure build/pgo with these flags, build it
  cmake -S "$here" -B "$pgo" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRTS_BUILD_NATIVE=ON \
    -DRTS_BUILD_TESTS=OFF -DCMAKE_C_FLAGS="$1" -DCMAKE_SHARED_LINKER_FLAGS="$2" >/dev/null
  cmake --build "$pgo" --target rtshield_native >/dev/null
}
cfg "$here/scenarios/danicki2021/queue_500.toml" "$out/train.bin"
rm -rf "$prof"
build_pgo "-fprofile-generate -fprofile-update=single -fprofile-dir=$prof" "-fprofile-generate"
driver pgo "$pgo"
"$out/engine_cost_pgo" "$out/train.bin" 1 >/dev/null  # the training run
# the same build folder, so that the objects find their profiles
build_pgo "-fprofile-use -fprofile-partial-training -fprofile-dir=$prof -Wno-missing-profile" ""
driver pgo "$pgo"
driver dev "$dev"
echo "| scenario | library | instructions per packet | CPU-s best | CPU-s median |"
echo "|---|---|---:|---:|---:|"
for sc in "$@"; do
  name=$(basename "$sc" .toml)
  cfg "$sc" "$out/$name.bin"
  for v in dev pgo; do
    valgrind --tool=callgrind --callgrind-out-file="$out/cg.$name.$v" "$out/engine_cost_$v" \
      "$out/$name.bin" 1 >/dev/null 2>"$out/cg.$name.$v.log"
  done
  for _ in $(seq "$rounds"); do
    for v in dev pgo; do
      echo "$v $("$out/engine_cost_$v" "$out/$name.bin" 3 | awk '{print $NF}')"
    done
  done >"$out/times.$name"
  for v in dev pgo; do
    ir=$(callgrind_ir "$out/cg.$name.$v" "$name $v")
    read -r _ pk _ < <("$out/engine_cost_$v" "$out/$name.bin" 1)
    sort -n -k2 <(awk -v v="$v" '$1 == v {print $1, $2}' "$out/times.$name") | awk -v n="$name" \
      -v v="$v" -v ir="$ir" -v pk="$pk" '{t[NR] = $2} END {
        printf "| %s | %s | %.1f | %.4f | %.4f |\n", n, (v == "dev" ? "build/dev (-O2, LTO)" : "with -fprofile-use"),
          ir / pk, t[1], (NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2) }'
  done
done
echo "engine_pgo: the profile-guided library is $pgo/librtshield_native.so" >&2
