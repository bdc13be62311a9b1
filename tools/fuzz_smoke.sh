#!/usr/bin/env bash
# Fuzz smoke: build the libFuzzer targets with clang (ASan + UBSan) in a
# separate build directory and run each for a bounded time from its seed
# corpus. Any crash, sanitizer report or leak fails the run.
#   tools/fuzz_smoke.sh            25 s per target (two targets: ~50 s)
#   FUZZ_SECONDS=600 tools/fuzz_smoke.sh   longer runs (see docs/fuzzing.md)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
secs=${FUZZ_SECONDS:-25}
build="$here/build/fuzz"
command -v clang >/dev/null || { echo "fuzz_smoke: clang not found (Debian: clang, libclang-rt-14-dev)" >&2; exit 1; }
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang -DRTS_BUILD_FUZZ=ON -DRTS_BUILD_TESTS=OFF \
      -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build "$build" -j 2 >/dev/null
status=0
for target in "$build"/fuzz_*; do
  [ -x "$target" ] || continue
  name=$(basename "$target")
  seeds="$here/libshield/tests/fuzz/corpus/$name"
  work="$build/corpus-$name"      # grows during the run; seeds stay untouched
  mkdir -p "$work"
  echo "fuzz $name for ${secs}s"
  if ! (cd "$build" && "$target" -max_total_time="$secs" -timeout=10 -rss_limit_mb=1024 \
          -print_final_stats=1 -artifact_prefix="$build/$name-" "$work" "$seeds" >"$build/$name.log" 2>&1); then
    echo "fuzz $name: FINDING (log: $build/$name.log)" >&2
    tail -40 "$build/$name.log" >&2
    status=1
  else
    grep -E '^stat::number_of_executed_units' "$build/$name.log" || true
  fi
done
exit $status
