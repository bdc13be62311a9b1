#!/usr/bin/env bash
# A falsification campaign of the analysis (docs/analysis.md, "Falsification
# search"): tests/test_analysis_falsify.py's first property (every simulated
# response within its analytic bound) in CHUNKS runs of EXAMPLES examples each,
# seeds FIRST, FIRST+1, ..., without shrinking (a counterexample is reported as
# found). One line per chunk: seed, examples run (valid and rejected draws),
# result, wall time; then the totals and the commit. Exit status 1 when a chunk
# found a counterexample (its output is kept in LOG_DIR/seed-N.txt).
#   tools/falsify_campaign.sh [CHUNKS=10] [EXAMPLES=1000] [FIRST=1] [LOG_DIR]
# Run it on one core at low priority: nice -n 19 tools/falsify_campaign.sh
# Needs rtshield importable (tools/dev.sh and PYTHONPATH=$PWD/python) and pytest,
# hypothesis in the interpreter named by $PYTHON (default python3).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
chunks=${1:-10}
examples=${2:-1000}
first=${3:-1}
logs=${4:-$(mktemp -d -t rtshield-falsify-XXXXXX)}
py=${PYTHON:-python3}
mkdir -p "$logs"
cd "$here"
commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- python tests || echo " + uncommitted changes")
echo "falsification campaign: $chunks chunks of $examples examples from seed $first, commit $commit"
total=0 rejected=0 failed=0 start=$(date +%s)
for ((k = 0; k < chunks; k++)); do
  s=$((first + k))
  t0=$(date +%s)
  RTSHIELD_FALSIFY_EXAMPLES=$examples RTSHIELD_FALSIFY_SEED=$s RTSHIELD_FALSIFY_SHRINK=0 \
    "$py" -m pytest -q tests/test_analysis_falsify.py -k no_simulated_response \
    -p no:cacheprovider --hypothesis-show-statistics >"$logs/seed-$s.txt" 2>&1
  rc=$?
  t1=$(date +%s)
  line=$(grep -m1 -oE '[0-9]+ passing, [0-9]+ failing, and [0-9]+ invalid' "$logs/seed-$s.txt")
  pass=$(sed -E 's/^([0-9]+) passing.*/\1/' <<<"$line")
  fail=$(sed -E 's/.* ([0-9]+) failing.*/\1/' <<<"$line")
  inval=$(sed -E 's/.* ([0-9]+) invalid/\1/' <<<"$line")
  total=$((total + ${pass:-0} + ${fail:-0}))
  rejected=$((rejected + ${inval:-0}))
  if [ "$rc" -ne 0 ]; then
    failed=$((failed + 1))
    echo "seed $s: ${pass:-?} passing, ${fail:-?} failing, ${inval:-?} rejected draws, $((t1 - t0)) s: COUNTEREXAMPLE or error (exit $rc), see $logs/seed-$s.txt"
  else
    echo "seed $s: ${pass:-?} passing, 0 failing, ${inval:-?} rejected draws, $((t1 - t0)) s"
  fi
done
end=$(date +%s)
echo "total: $total examples run, $failed chunks with a counterexample or error, $rejected rejected draws, wall $((end - start)) s, commit $commit, logs $logs"
[ "$failed" -eq 0 ]
