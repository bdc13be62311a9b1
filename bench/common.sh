# shellcheck shell=bash
# Sourced by the benchmark scripts (bench/*.sh): strict mode, the repository
# root ($here), the C compiler ($cc) and the helpers below.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cc=${CC:-cc}
bench=$(basename "$0" .sh) # the script's name, in its error messages

# bench_out DIR: the script's output folder build/DIR, created, in $out.
bench_out() {
  out="$here/build/$1"
  mkdir -p "$out"
}

# need_valgrind: stop with one line when valgrind is not installed.
need_valgrind() {
  command -v valgrind >/dev/null || { echo "$bench: valgrind not found (Debian package valgrind)" >&2; exit 1; }
}

# callgrind_ir FILE WHAT: the instructions in callgrind output FILE (its
# summary line); stops naming WHAT when there is none.
callgrind_ir() {
  local ir
  ir=$(awk '/^summary:/ {print $2}' "$1")
  [ -n "$ir" ] || { echo "$bench: no summary for $2" >&2; exit 1; }
  echo "$ir"
}

# scenario_config SCENARIO.toml OUT.bin: the rtsim_config rtshield.engine
# builds from the scenario, as the raw bytes of the struct (for
# bench/engine_cost.c); Python is $PYTHON or python3, rtshield this checkout's.
scenario_config() {
  PYTHONPATH="$here/python${PYTHONPATH:+:$PYTHONPATH}" "${PYTHON:-python3}" - "$1" "$2" <<'PY'
import sys
from rtshield._native import load
from rtshield.engine_config import build_config
from rtshield.scenario import load_scenario

ffi, lib = load()
cfg, _ = build_config(load_scenario(sys.argv[1]), ffi, lib)
open(sys.argv[2], "wb").write(bytes(ffi.buffer(cfg)))
PY
}
