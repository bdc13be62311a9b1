#!/usr/bin/env bash
# Portability proof: compile every libshield component for Cortex-M3 with
# warnings as errors, freestanding, and print its code size.
#   tools/cortex_m3_build.sh OUTDIR            build and print the table
#   tools/cortex_m3_build.sh OUTDIR --markdown print the table as markdown
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: cortex_m3_build.sh OUTDIR [--markdown]}
fmt=${2:-}
cc=arm-none-eabi-gcc
size=arm-none-eabi-size
command -v $cc >/dev/null || { echo "cortex_m3_build: $cc not found (Debian package gcc-arm-none-eabi)" >&2; exit 1; }
mkdir -p "$out"
flags=(-std=c11 -mcpu=cortex-m3 -mthumb -Os -ffreestanding -Wall -Wextra -Werror
       -Wshadow -Wconversion -Wno-sign-conversion -Wstrict-prototypes
       -ffunction-sections -fdata-sections -I"$here/libshield/include")
objs=()
for src in "$here"/libshield/src/*.c; do
  obj="$out/$(basename "${src%.c}").o"
  $cc "${flags[@]}" -c "$src" -o "$obj"
  objs+=("$obj")
done
# The template port must build for the target as well.
$cc "${flags[@]}" -c "$here/libshield/port/template/rts_port_template.c" -o "$out/port_template.o"
# No heap and no libc: the only symbols a component may take from outside
# libshield are the compiler's runtime helpers (__aeabi_* for 64-bit
# division) and the memset/memcpy that GCC may emit for struct copies.
bad=$(arm-none-eabi-nm -u "${objs[@]}" | awk '$1=="U"{print $2}' |
      grep -v -E '^(rts_[a-z0-9_]+|__aeabi_[a-z0-9_]+|memset|memcpy)$' | sort -u || true)
if [ -n "$bad" ]; then
  echo "cortex_m3_build: libshield uses symbols outside itself (heap or libc):" $bad >&2
  exit 1
fi
if [ "$fmt" = "--markdown" ]; then
  echo "| component | text (B) | data (B) | bss (B) |"
  echo "|---|---:|---:|---:|"
  $size "${objs[@]}" | awk 'NR>1 { n=$6; sub(".*/","",n); sub("\\.o$","",n); printf "| %s | %d | %d | %d |\n", n, $1, $2, $3 }'
else
  $size "${objs[@]}"
fi
echo "cortex-m3 build: ${#objs[@]} components, no warnings, no heap or libc symbols"
