#!/usr/bin/env bash
# Fuzz smoke: build the libFuzzer targets with clang (ASan + UBSan) in a
# separate build directory and run each for a bounded time from its seed
# corpus. Any crash, sanitizer report or leak fails the run.
#   tools/fuzz_smoke.sh            50 s of fuzzing in total, split evenly, the
#                                  targets as many at a time as CPUs
#   FUZZ_SECONDS=600 tools/fuzz_smoke.sh   600 s per target (see docs/fuzzing.md)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build="$here/build/fuzz"
total=${FUZZ_TOTAL_SECONDS:-50}
command -v clang >/dev/null || { echo "fuzz_smoke: clang not found (Debian: clang, libclang-rt-14-dev)" >&2; exit 1; }
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang -DRTS_BUILD_FUZZ=ON -DRTS_BUILD_TESTS=OFF \
      -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build "$build" -j 2 >"$build.build.log" 2>&1 || { tail -20 "$build.build.log" >&2; exit 1; }
targets=()
for t in "$build"/fuzz_*; do [ -x "$t" ] && [ -f "$t" ] && targets+=("$t"); done
[ ${#targets[@]} -gt 0 ] || { echo "fuzz_smoke: no fuzz targets built" >&2; exit 1; }
secs=${FUZZ_SECONDS:-$(( total / ${#targets[@]} ))}
[ "$secs" -ge 1 ] || secs=1
# UBSan stops at the first report (with -fno-sanitize-recover in the build),
# and a report that still reaches the log fails the run.
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
# fuzz_one TARGET: run it for its share; its verdict lines into $build/NAME.verdict,
# its exit status (0 clean, 1 a finding) into $build/NAME.status.
fuzz_one() {
  local target=$1 name work dirs seeds rc=0
  name=$(basename "$target")
  work="$build/corpus-$name"      # grows during the run; seeds stay untouched
  mkdir -p "$work"
  dirs=("$work")
  seeds="$here/libshield/tests/fuzz/corpus/$name"
  [ -d "$seeds" ] && dirs+=("$seeds")
  {
    echo "fuzz $name for ${secs}s"
    if ! (cd "$build" && "$target" -max_total_time="$secs" -timeout=10 -rss_limit_mb=1024 \
            -print_final_stats=1 -artifact_prefix="$build/$name-" "${dirs[@]}" >"$build/$name.log" 2>&1); then
      echo "fuzz $name: FINDING (log: $build/$name.log)"
      tail -40 "$build/$name.log"
      rc=1
    elif grep -q "runtime error:" "$build/$name.log"; then
      echo "fuzz $name: UndefinedBehaviorSanitizer report (log: $build/$name.log)"
      grep -m 5 "runtime error:" "$build/$name.log"
      rc=1
    else
      grep -E '^stat::number_of_executed_units' "$build/$name.log" || true
    fi
  } >"$build/$name.verdict" 2>&1
  echo "$rc" >"$build/$name.status"
}
# The targets run side by side, as many at a time as there are CPUs (each
# single-threaded, each for its whole share); verdicts in the targets' order.
jobs=$(nproc 2>/dev/null || echo 1)
for target in "${targets[@]}"; do
  rm -f "$build/$(basename "$target").status"
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  fuzz_one "$target" &
done
wait
status=0
for target in "${targets[@]}"; do
  name=$(basename "$target")
  if [ "$(cat "$build/$name.status" 2>/dev/null)" = 0 ]; then
    cat "$build/$name.verdict"
  else
    cat "$build/$name.verdict" >&2
    status=1
  fi
done
exit $status
