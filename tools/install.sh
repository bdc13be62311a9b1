#!/usr/bin/env bash
# Install rtshield and everything it needs on a fresh Debian machine:
# the C toolchains (host, Cortex-M3 cross compiler, clang with libFuzzer),
# then the Python package with its native library.
#   tools/install.sh          install rtshield
#   tools/install.sh --test   also the test tools (pytest, ruff)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

debs=(build-essential cmake ninja-build gcc-arm-none-eabi libnewlib-arm-none-eabi
      clang libclang-rt-14-dev valgrind iproute2)
missing=()
for p in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "rtshield install: Debian packages: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

extra=""
[ "${1:-}" = "--test" ] && extra="[test]"
echo "rtshield install: Python package${extra}"
python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore "$here$extra"
