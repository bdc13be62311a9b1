#!/usr/bin/env bash
# Fuzz campaign: build the libFuzzer targets (clang, ASan + UBSan, UB fatal,
# the same sanitizer flags as tools/fuzz_smoke.sh, optimised: CAMPAIGN_BUILD,
# default RelWithDebInfo) in build/fuzz-campaign and run each
# target for a fixed number of executions, one job at a time, from its seeds
# plus a scratch corpus that persists between campaigns. Prints one line per
# target: executions, wall seconds, exec/s, coverage (edges, features), and
# the outcome; the same lines go to build/fuzz-campaign/summary.tsv.
#   tools/fuzz_campaign.sh                        every target, default counts
#   tools/fuzz_campaign.sh fuzz_classifier        one target (or several)
#   RUNS_fuzz_classifier=1000000 tools/fuzz_campaign.sh fuzz_classifier
#   JOBS=2 tools/fuzz_campaign.sh fuzz_flow_queue  two libFuzzer workers, each
#                                                  doing half the executions
# To stop a target early, send SIGINT to the target process only (not to
# this script): libFuzzer prints its final stats and the line records how
# far it got, as "interrupted".
# Default counts (docs/fuzzing.md): 10^8 for fuzz_classifier, 10^7 for each
# other target. Run it under `nice -n 15` on a shared machine.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build="$here/build/fuzz-campaign"
command -v clang >/dev/null || { echo "fuzz_campaign: clang not found (Debian: clang, libclang-rt-14-dev)" >&2; exit 1; }
btype=${CAMPAIGN_BUILD:-RelWithDebInfo}
jobs=${JOBS:-1}
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz_campaign: JOBS must be a whole number of workers, got '$jobs'" >&2; exit 2; }
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang -DRTS_BUILD_FUZZ=ON -DRTS_BUILD_TESTS=OFF \
      -DCMAKE_BUILD_TYPE="$btype" >/dev/null
cmake --build "$build" -j 2 >"$build.build.log" 2>&1 || { tail -20 "$build.build.log" >&2; exit 1; }
if [ $# -gt 0 ]; then
  names=("$@")
else
  names=()
  for t in "$build"/fuzz_*; do [ -x "$t" ] && [ -f "$t" ] && names+=("$(basename "$t")"); done
fi
[ ${#names[@]} -gt 0 ] || { echo "fuzz_campaign: no fuzz targets built" >&2; exit 1; }
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)
summary="$build/summary.tsv"
[ -f "$summary" ] || printf 'target\tcommit\tbuild\texecutions\twall_s\texec_per_s\tcov_edges\tfeatures\tcorpus\toutcome\n' >"$summary"
status=0
for name in "${names[@]}"; do
  target="$build/$name"
  [ -x "$target" ] || { echo "fuzz_campaign: no target $name" >&2; exit 2; }
  var="RUNS_$name"
  if [ -n "${!var:-}" ]; then runs=${!var}
  elif [ "$name" = fuzz_classifier ]; then runs=100000000
  else runs=10000000; fi
  work="$build/corpus-$name"
  mkdir -p "$work"
  dirs=("$work")
  seeds="$here/libshield/tests/fuzz/corpus/$name"
  [ -d "$seeds" ] && dirs+=("$seeds")
  log="$build/$name.log"
  start=$(date +%s)
  outcome=clean
  rc=0
  if [ "$jobs" -gt 1 ]; then
    # libFuzzer's own workers: each runs ceil(runs / jobs) executions and
    # writes fuzz-<i>.log in the working directory.
    rundir="$build/jobs-$name"
    mkdir -p "$rundir"
    rm -f "$rundir"/fuzz-*.log
    per=$(( (runs + jobs - 1) / jobs ))
    (cd "$rundir" && "$target" -runs="$per" -jobs="$jobs" -workers="$jobs" -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$build/$name-" \
        "${dirs[@]}" >"$log" 2>&1) || rc=$?
    logs=()
    for l in "$rundir"/fuzz-*.log; do [ -f "$l" ] && logs+=("$l"); done
    # No worker log: the target did not start; its own output says why.
    [ ${#logs[@]} -gt 0 ] || logs=("$log")
  else
    (cd "$build" && "$target" -runs="$runs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$build/$name-" "${dirs[@]}" >"$log" 2>&1) || rc=$?
    logs=("$log")
  fi
  wall=$(( $(date +%s) - start ))
  execs=0
  finished=0
  for l in "${logs[@]}"; do
    n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$l" | tail -1)
    if [ -n "$n" ]; then finished=$((finished + 1)); else n=$(grep -oE '^#[0-9]+' "$l" | tail -1 | tr -d '#'); fi
    execs=$(( execs + ${n:-0} ))
  done
  if grep -qE "ERROR:|runtime error:" "${logs[@]}"; then
    outcome="FINDING (see ${logs[*]})"
    status=1
  elif [ "$rc" -ne 0 ] && ! grep -q "libFuzzer: run interrupted" "$log" "${logs[@]}"; then
    outcome="FAILED, exit $rc (see $log)"
    status=1
  elif [ "$finished" -lt "${#logs[@]}" ] || [ "$execs" -lt "$runs" ]; then
    # SIGINT to the target: libFuzzer prints its final stats and exits non-zero.
    outcome="interrupted before $runs runs, no report"
  fi
  rate=$(( execs / (wall > 0 ? wall : 1) ))
  last=$(grep -hE '^#[0-9]+' "${logs[@]}" | sort -t' ' -k1.2n | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9/]*[a-zA-Z]*\).*/\1/p' <<<"$last")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$commit" "$btype" "${execs:-?}" "$wall" "${rate:-?}" \
         "${cov:-?}" "${ft:-?}" "${corp:-?}" "$outcome" | tee -a "$summary"
done
exit $status
