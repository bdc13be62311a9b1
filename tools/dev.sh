#!/usr/bin/env bash
# Developer loop without reinstalling: build the native library into
# build/dev (as an installation builds it: LTO, profile-guided, RTS_PGO in
# CMakeLists.txt) and link it (and its generated cffi declarations) into
# python/rtshield/, so that `PYTHONPATH=python python3 -m pytest tests/...`
# runs the checkout's Python code on the checkout's C code.
#   tools/dev.sh            configure (once) and rebuild after C changes
# The links are ignored by git; `tools/install.sh` stays the way users install.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
cmake -S . -B build/dev -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DRTS_BUILD_NATIVE=ON -DRTS_BUILD_TESTS=OFF -DRTS_PGO=ON >/dev/null
cmake --build build/dev --target rtshield_native >/dev/null
ln -sf "$here/build/dev/librtshield_native.so" python/rtshield/librtshield_native.so
ln -sf "$here/build/dev/rtshield_cdef.h" python/rtshield/rtshield_cdef.h
ln -sf "$here/build/dev/_rtshield_ffi.py" python/rtshield/_rtshield_ffi.py
# the installed package carries the shipped scenarios as rtshield/scenarios
ln -sfn ../../scenarios python/rtshield/scenarios
echo "dev: native library linked into python/rtshield; run PYTHONPATH=$here/python python3 -m pytest ... (an absolute path: tests start subprocesses elsewhere)"
