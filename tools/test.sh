#!/usr/bin/env bash
# Run every test of rtshield: install what is missing, then
#   1. C: libshield and the simulator under ASan+UBSan, through ctest
#      (includes the Cortex-M3 build with warnings as errors);
#   2. the libFuzzer smoke runs (bounded, see docs/fuzzing.md);
#   3. Python: ruff, then pytest (units and end-to-end runs).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
jobs=$(nproc 2>/dev/null || echo 2)

"$here/tools/install.sh" --test
# Everything below uses the virtual environment install.sh made.
export PATH="$here/.venv/bin:$PATH"
# The FreeRTOS trees the port, the target and the rig are built against
# (docs/rig.md): beside the checkout unless the caller points elsewhere. The
# installed package does not know where the checkout is, so say it here.
if [ -z "${RTS_THIRD_PARTY:-}" ] && [ -d "$here/../shared/third_party" ]; then
  export RTS_THIRD_PARTY="$(cd "$here/../shared/third_party" && pwd)"
fi

echo "== C tests (ASan + UBSan)"
cmake -S . -B build/asan -G Ninja -DRTS_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build/asan -j "$jobs"
ctest --test-dir build/asan --output-on-failure -j "$jobs"

if [ -x "$here/tools/fuzz_smoke.sh" ]; then
  echo "== fuzz smoke"
  "$here/tools/fuzz_smoke.sh"
fi

echo "== Python lint"
python3 -m ruff check python tests libshield/tests/vectors $(ls bench/*.py >/dev/null 2>&1 && echo bench)
echo "== Python tests"
python3 -m pytest -q
