#!/usr/bin/env bash
# Fuzz smoke: build the libFuzzer targets with clang (ASan + UBSan) in a
# separate build directory and run each for a bounded time from its seed
# corpus. Any crash, sanitizer report or leak fails the run.
#   tools/fuzz_smoke.sh            50 s of fuzzing in total, split evenly (about
#                                  90 s with a clean build on 2 cores)
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
status=0
# UBSan stops at the first report (with -fno-sanitize-recover in the build),
# and a report that still reaches the log fails the run.
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
for target in "${targets[@]}"; do
  name=$(basename "$target")
  work="$build/corpus-$name"      # grows during the run; seeds stay untouched
  mkdir -p "$work"
  dirs=("$work")
  seeds="$here/libshield/tests/fuzz/corpus/$name"
  [ -d "$seeds" ] && dirs+=("$seeds")
  echo "fuzz $name for ${secs}s"
  if ! (cd "$build" && "$target" -max_total_time="$secs" -timeout=10 -rss_limit_mb=1024 \
          -print_final_stats=1 -artifact_prefix="$build/$name-" "${dirs[@]}" >"$build/$name.log" 2>&1); then
    echo "fuzz $name: FINDING (log: $build/$name.log)" >&2
    tail -40 "$build/$name.log" >&2
    status=1
  elif grep -q "runtime error:" "$build/$name.log"; then
    echo "fuzz $name: UndefinedBehaviorSanitizer report (log: $build/$name.log)" >&2
    grep -m 5 "runtime error:" "$build/$name.log" >&2
    status=1
  else
    grep -E '^stat::number_of_executed_units' "$build/$name.log" || true
  fi
done
exit $status
