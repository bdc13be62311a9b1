#!/usr/bin/env bash
# Run the MPS2 board's networked image (tools/freertos_build.sh mps2-build:
# rts_mps2_device.elf) in QEMU: the one command line every runner uses.
#   tools/mps2_run.sh ELF CONFIG NIC-OPTION...
#     e.g. tools/mps2_run.sh OUT/rts_mps2_device.elf dev.conf -nic user
#          ip netns exec NS tools/mps2_run.sh OUT/rts_mps2_device.elf dev.conf \
#            -nic tap,ifname=tap0,script=no,downscript=no
# CONFIG: the device's config file (app/rts_device.c), read by the image
# through semihosting; its `out` folder receives device.json, cycles.bin and
# latency_<flow>.bin. stdout: the image's console ("ready", one
# "sync GUEST_NS TICKS" line per 100 ms snapshot, "done"); stderr: its error
# lines and QEMU's own; exit status: the image's (0 done, 2 bad config,
# 3 a socket, 4 kernel assertion, 5 stack overflow, 6/7 start-up or fault).
# Time: -icount shift=5,align=on,sleep=on (docs/decisions/mps2-board.md);
# RTS_MPS2_ICOUNT replaces it (the cost benchmark's exact counts).
set -euo pipefail
elf=${1:?usage: mps2_run.sh ELF CONFIG NIC-OPTION...}
config=${2:?usage: mps2_run.sh ELF CONFIG NIC-OPTION...}
shift 2
[ -f "$elf" ] || { echo "mps2_run: no image $elf" >&2; exit 2; }
[ -f "$config" ] || { echo "mps2_run: no config $config" >&2; exit 2; }
config=$(cd "$(dirname "$config")" && pwd)/$(basename "$config")
case $config in *" "*) echo "mps2_run: the config's path may not contain blanks: $config" >&2; exit 2 ;; esac
exec qemu-system-arm -M mps2-an385 -display none -monitor none -serial none \
  -icount "${RTS_MPS2_ICOUNT:-shift=5,align=on,sleep=on}" \
  -chardev stdio,id=con \
  -semihosting-config "enable=on,target=native,chardev=con,arg=rts_mps2_device,arg=${config//,/,,}" \
  "$@" -kernel "$elf"
