#!/usr/bin/env bash
# Install rtshield on a fresh Debian machine: what the chosen use needs from
# Debian, then the Python package with its native library in .venv.
#   tools/install.sh          what `rtshield demo` (and run, compare, sweep,
#                             analyze, design) needs: C build tools,
#                             python3-venv, the package
#   tools/install.sh --rig    also what `rtshield rig` runs (docs/rig.md):
#                             flood and scan tools, namespaces, nftables,
#                             the Cortex-M3 cross compiler and QEMU (--board mps2-an385)
#   tools/install.sh --test   also what tools/test.sh runs: the rig's tools,
#                             clang with libFuzzer, Chromium, pytest, ruff and import-linter
# Each step says what it installs and why; apt and pip show their progress.
# A repeated run installs nothing when nothing is missing, and reinstalls the
# Python package only when a file it is built from changed (a stamp in .venv).
#   --packages   print the Debian packages of the chosen use, one a line; install nothing
#   --check      install nothing; say what is missing or out of date (exit 1 if anything)
#   --debian     install only the Debian packages (tools/test.sh: the C tests then run while
#                the Python package installs)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
say() { echo "rtshield install: $*"; }

rig=0 test=0 mode=install debian_only=0
for arg in "$@"; do
  case "$arg" in
    --rig) rig=1 ;;
    --test) test=1 rig=1 ;;
    --packages) mode=packages ;;
    --check) mode=check ;;
    --debian) debian_only=1 ;;
    -h|--help) sed -n '2,18s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "tools/install.sh: unknown option $arg (use --rig, --test, --packages, --check, --debian)" >&2
       exit 2 ;;
  esac
done

# One group per line: "why: packages". Only the groups the chosen use needs.
groups=("the native library and the simulator (C build tools): build-essential cmake ninja-build"
        "the virtual environment .venv (Debian's Python refuses pip outside one): python3-venv")
[ "$rig" -eq 1 ] && groups+=(
  "rtshield rig (docs/rig.md): hping3 nmap netsniff-ng stress-ng nftables iproute2 ethtool iputils-ping util-linux"
  "the FreeRTOS targets' build (the host compiler, the project's patches to upstream drivers): gcc patch"
  "the MPS2 board in QEMU (rig --board mps2-an385, the Cortex-M3 tests): gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm")
[ "$test" -eq 1 ] && groups+=(
  "the fuzz smoke (clang with libFuzzer): clang libclang-rt-14-dev"
  "the report test in headless Chromium: chromium"
  "the benchmarks' memory and instruction counts (bench/): valgrind")

if [ "$mode" = packages ]; then
  for g in "${groups[@]}"; do printf '%s\n' ${g##*: }; done
  exit 0
fi

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing=()
for g in "${groups[@]}"; do
  why=${g%%: *}
  need=()
  for p in ${g##*: }; do installed "$p" || need+=("$p"); done
  if [ ${#need[@]} -gt 0 ]; then
    say "$([ "$mode" = check ] && echo "missing ")Debian packages for $why: ${need[*]}"
    missing+=("${need[@]}")
  fi
done
if [ "$mode" = check ]; then
  stale=${#missing[@]}
elif [ ${#missing[@]} -gt 0 ]; then
  say "apt-get update, then apt-get install of ${#missing[@]} packages (a few minutes on a fresh machine)"
  $sudo apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y "${missing[@]}"
fi
if [ "$debian_only" -eq 1 ]; then
  [ "$mode" = check ] && exit $(( ${#missing[@]} > 0 ))
  say "Debian packages done"
  exit 0
fi

# The Python package goes into a virtual environment of its own, .venv in the
# checkout: Debian's system Python refuses `pip install` outside one (PEP 668).
venv="$here/.venv"
if [ "$mode" = check ] && [ ! -x "$venv/bin/python" ]; then
  say "no virtual environment $venv"
  exit 1
elif [ ! -x "$venv/bin/python" ]; then
  say "virtual environment $venv"
  python3 -m venv "$venv"
fi

# What pip builds the package from (pyproject.toml's build and wheel, CMake's
# native library and installed sources): these files, as git lists them in a
# checkout (tracked or new, not ignored), else every file in them.
inputs=(pyproject.toml CMakeLists.txt README.md LICENSE python libshield sim scenarios rig tools
        third_party)
sources() {
  if git -C "$here" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git -C "$here" ls-files -z --cached --others --exclude-standard -- "${inputs[@]}"
  else
    (cd "$here" && find "${inputs[@]}" -name __pycache__ -prune -o -type f -print0)
  fi
}
digest=$( { "$venv/bin/python" --version
            (cd "$here" && sources | sort -z | xargs -0 sha256sum 2>/dev/null) || true; } |
          sha256sum | cut -d' ' -f1)
stamp="$venv/.rtshield-installed"
extra=""
[ "$test" -eq 1 ] && extra="[test]"
have=$(cat "$stamp" 2>/dev/null || true)
# The stamp holds "DIGEST EXTRAS": the same sources and at least the extras asked for.
if [ -x "$venv/bin/rtshield" ] && { [ "$have" = "$digest $extra" ] ||
     { [ -z "$extra" ] && [ "${have%% *}" = "$digest" ]; }; }; then
  say "Python package rtshield$extra up to date in $venv (sources unchanged)"
elif [ "$mode" = check ]; then
  say "Python package rtshield$extra in $venv: not installed, or its sources changed since"
  exit 1
else
  say "Python package rtshield$extra into $venv: its dependencies, then the native library built with CMake"
  rm -f "$stamp"
  "$venv/bin/python" -m pip install --disable-pip-version-check --progress-bar on "$here$extra"
  echo "$digest $extra" >"$stamp"
fi
[ "$mode" = check ] && exit $(( stale > 0 ))
say "done; run $venv/bin/rtshield (or add $venv/bin to PATH)"
