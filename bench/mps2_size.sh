#!/usr/bin/env bash
# Flash and RAM of the MPS2 board's networked images, from their linker maps:
# rts_mps2_device.elf (the rts_netif interface with libshield) against
# rts_mps2_stock.elf (Plus-TCP's own MPS2_AN385 interface, no libshield),
# each split into libshield (the library and its FreeRTOS port), the
# network interface, and the rest (kernel, stack, application, board).
#   bench/mps2_size.sh          build (tools/freertos_build.sh mps2-build) and print
#   bench/mps2_size.sh OUTDIR   read the images already in OUTDIR
# Prints a markdown table (docs/codesize.md quotes it).
. "$(dirname "$0")/common.sh"
if [ -n "${1:-}" ]; then
  out=$1
else
  bench_out bench-mps2-size
  "$here/tools/freertos_build.sh" mps2-build "$out" >"$out/build.log" 2>&1 || {
    rc=$?
    [ "$rc" -eq 77 ] && { tail -1 "$out/build.log" >&2; exit 77; }
    echo "mps2_size: the build failed (exit $rc): $out/build.log" >&2
    exit 1
  }
fi
lib=" $(cd "$here/libshield/src" && ls ./*.c | sed 's#\./\(.*\)\.c#\1.o#' | tr '\n' ' ')rts_port_freertos.o rts_shield_freertos.o "
commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "arm-none-eabi-gcc -mcpu=cortex-m3 -mthumb -Os, --gc-sections, commit $commit; flash = code, constants, vectors and data's initial values; RAM = data + bss (bss: every record of the application, FreeRTOS's 512 KB heap, the stacks). libshield's state lives in the interface (rts_netif.c), beside its descriptor slots (128 x 1536 B)."
echo
echo "| image | part | flash (B) | RAM (B) |"
echo "|---|---|---:|---:|"
for img in rts_mps2_device rts_mps2_stock; do
  map=$out/$img.map
  [ -f "$map" ] || { echo "mps2_size: no $map" >&2; exit 1; }
  awk -v img="$img" -v lib="$lib" '
    function hex(s,   v, i, c) {
      v = 0
      s = tolower(substr(s, 3))
      for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)) - 1; v = v * 16 + c }
      return v
    }
    /^Linker script and memory map/ { m = 1; next }
    !m { next }
    # an input section: name, then (maybe on the next line) address, size, object
    /^ (\.|COMMON)/ && !/^ \.(debug|comment|ARM\.attributes|stab)/ {
      name = $1
      if (NF < 4) { getline; addr = $1; size = $2; obj = $3 } else { addr = $2; size = $3; obj = $4 }
      if (obj !~ /\.o\)?$/) next
      n = split(obj, p, "/"); o = p[n]
      part = index(lib, " " o " ") ? "libshield" : \
             (o ~ /^(rts_netif|rts_nic|rts_netif_mps2|rts_net_netif|rts_net_stock|t_NetworkInterface)\.o$/) ? "interface" : "rest"
      sz = hex(size)
      if (name ~ /^\.data/) { flash[part] += sz; ram[part] += sz }
      else if (name ~ /^(\.bss|COMMON)/) ram[part] += sz
      else flash[part] += sz
    }
    END {
      split("libshield interface rest", parts, " ")
      for (i = 1; i <= 3; i++) {
        q = parts[i]; tf += flash[q]; tr += ram[q]
        if (flash[q] + ram[q] > 0) printf "| `%s.elf` | %s | %d | %d |\n", img, q, flash[q], ram[q]
      }
      printf "| `%s.elf` | **total** | **%d** | **%d** |\n", img, tf, tr
    }' "$map"
done
