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

debs=(build-essential cmake ninja-build python3-venv gcc-arm-none-eabi libnewlib-arm-none-eabi
      clang libclang-rt-14-dev valgrind iproute2 qemu-system-arm
      # the rig (docs/rig.md): flood and scan tools, CPU load, ingress counters/limits
      hping3 nmap netsniff-ng stress-ng nftables ethtool
      # the MPS2 board's flood smoke (tools/mps2_flood_smoke.sh): patch, ping
      patch iputils-ping
      # tests/test_browser_report.py renders the demo report in headless Chromium
      chromium)
missing=()
for p in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "rtshield install: Debian packages: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The Python package goes into a virtual environment of its own, .venv in the
# checkout: Debian's system Python refuses `pip install` outside one (PEP 668).
venv="$here/.venv"
if [ ! -x "$venv/bin/python" ]; then
  echo "rtshield install: virtual environment $venv"
  python3 -m venv "$venv"
fi
extra=""
[ "${1:-}" = "--test" ] && extra="[test]"
echo "rtshield install: Python package${extra} into $venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check "$here$extra"
echo "rtshield install: done; run $venv/bin/rtshield (or add $venv/bin to PATH)"
