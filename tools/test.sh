#!/usr/bin/env bash
# Run every test of rtshield: install what is missing (the Python package while
# the C tests run), then
#   1. C: libshield and the simulator under ASan+UBSan, through ctest
#      (includes the Cortex-M3 build with warnings as errors);
#   2. the libFuzzer smoke runs (bounded, see docs/fuzzing.md);
#   3. ruff, the layering checks (tools/check_layers.py: libshield and the
#      simulator's rooms; lint-imports: the Python import layers), then pytest
#      (units and end-to-end runs) on as many workers as CPUs.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
jobs=$(nproc 2>/dev/null || echo 2)

# The demo's, the rig's and the tests' Debian packages first: the C build and
# tests need them. Then the Python package (rebuilt only when a file it is built
# from changed: tools/install.sh, its stamp) installs in the background while
# the C tests run, which need nothing of it; its output follows theirs.
"$here/tools/install.sh" --test --debian
mkdir -p "$here/build"
install_log="$here/build/install.log"
"$here/tools/install.sh" --test >"$install_log" 2>&1 &
install_pid=$!
# whatever ends this script, the installation is not cut off halfway
trap 'wait "$install_pid" 2>/dev/null || true' EXIT

# The C build directories (build/asan, build/fuzz) are Ninja's: a repeated run
# rebuilds only what changed.
echo "== C tests (ASan + UBSan; the Python package installs meanwhile: build/install.log)"
cmake -S . -B build/asan -G Ninja -DRTS_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build/asan -j "$jobs"
# A test that cannot run exits 77 with its reason (ctest: "Skipped"). This
# script installed every tool the tests use and third_party/ holds every tree,
# so here a skip is a failure, reported with its reason.
rc=0
ctest --test-dir build/asan --output-on-failure -j "$jobs" || rc=$?
if grep -h "SKIPPED:" build/asan/Testing/Temporary/LastTest.log 2>/dev/null; then
  echo "tools/test.sh: the tests above were skipped (reason on each line)" >&2
  rc=1
fi
[ "$rc" -eq 0 ] || exit "$rc"

echo "== Python package (tools/install.sh --test)"
install_rc=0
wait "$install_pid" || install_rc=$?
cat "$install_log"
if [ "$install_rc" -ne 0 ]; then
  echo "tools/test.sh: tools/install.sh --test failed (exit $install_rc, above)" >&2
  exit 1
fi
# Everything below uses the virtual environment install.sh made.
export PATH="$here/.venv/bin:$PATH"

if [ -x "$here/tools/fuzz_smoke.sh" ]; then
  echo "== fuzz smoke"
  "$here/tools/fuzz_smoke.sh"
fi

echo "== Python lint"
python3 -m ruff check python tests tools libshield/tests/vectors $(ls bench/*.py >/dev/null 2>&1 && echo bench)
echo "== Layering (libshield, sim/src)"
python3 tools/check_layers.py
echo "== Python import layers (.importlinter, on the source tree)"
PYTHONPATH="$here/python" lint-imports "$here/.importlinter" --no-cache
echo "== Python tests"
# On as many workers as CPUs (pytest-xdist): the rig's tests (namespaces,
# `rig clean`) all in one unit, every other module in its own
# (tests/conftest.py: work_unit, its scheduler).
python3 -m pytest -q -n "$jobs"
