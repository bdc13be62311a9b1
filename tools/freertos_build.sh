#!/usr/bin/env bash
# The FreeRTOS port of libshield against the real kernel (libshield/port/freertos/).
#   tools/freertos_build.sh build OUTDIR [--markdown]
#       compile the adapter for the POSIX port (host gcc) and for Cortex-M3
#       (arm-none-eabi-gcc, portable/GCC/ARM_CM3), warnings as errors; check
#       it needs no heap; print its Cortex-M3 code size
#   tools/freertos_build.sh posix-test OUTDIR
#       build the self-test on the POSIX port (kernel + Posix port + heap_3)
#       and run it: it exits 0 when every check holds
#   tools/freertos_build.sh qemu-test OUTDIR
#       build the self-test for Cortex-M3 and boot it in
#       `qemu-system-arm -M mps2-an385` (semihosting: output and exit status)
#   tools/freertos_build.sh tcp-build OUTDIR
#       the rig's device on the POSIX board (rig/freertos: app/, plustcp/,
#       posix/; -Werror) with FreeRTOS-Plus-TCP, the kernel and libshield:
#       links the link check (OUTDIR/rts_freertos_tcp) and the device
#       application that `rtshield rig freertos-tcp` runs
#       (OUTDIR/rts_freertos_device)
#   tools/freertos_build.sh mps2-test OUTDIR
#       the same receive path (rig/freertos/plustcp/rts_netif.c) on Cortex-M3
#       with FreeRTOS-Plus-TCP and the MPS2 board's LAN9118
#       (mps2-an385/rts_netif_mps2.c), booted twice in qemu-system-arm -M
#       mps2-an385 (protected, then the stock path): synthetic control and
#       flood frames through the LAN9118's PHY loopback, counters over
#       semihosting, exit status = the checks
#   tools/freertos_build.sh mps2-build OUTDIR
#       the networked images of the MPS2 board: the device application with
#       rts_netif (OUTDIR/rts_mps2_device.elf) and with Plus-TCP's own
#       MPS2_AN385 interface (OUTDIR/rts_mps2_stock.elf); tools/mps2_run.sh
#       runs them, tools/mps2_flood_smoke.sh floods them on a TAP (root)
#   tools/freertos_build.sh mps2-boot OUTDIR
#       mps2-build, then each image booted on QEMU's user-mode network (no
#       root): UDP datagrams and a MODBUS/TCP poll, its device.json checked
#   tools/freertos_build.sh mps2-bench OUTDIR
#       the receive path's cost image, booted under -icount
#       (bench/mps2_isr_cost.sh reads its output)
#   tools/freertos_build.sh lwip-build OUTDIR
#       the device application on lwIP (rig/freertos/lwip/, with lwIP's
#       FreeRTOS sys_arch) on the POSIX board: OUTDIR/rts_lwip_device
#       (libshield through libshield/port/lwip, LWIP_TCPIP_CORE_LOCKING_INPUT 1)
#       and OUTDIR/rts_lwip_stock (lwIP's usual RTOS driver, no libshield,
#       LWIP_TCPIP_CORE_LOCKING_INPUT 0), which `rtshield rig lwip` runs
#   tools/freertos_build.sh mps2-lwip-build OUTDIR
#       the same two images for the MPS2 board: OUTDIR/rts_mps2_lwip_device.elf
#       and OUTDIR/rts_mps2_lwip_stock.elf (the LAN9118's chip driver from the
#       patched FreeRTOS-Plus-TCP copy)
# Both rig builds compile a copy of FreeRTOS-Plus-TCP's source in OUTDIR with
# the project's patches applied (rig/freertos/patches/); a patch that no
# longer applies fails the build.
# A repeated build into the same OUTDIR compiles only the objects whose
# source, headers or command changed (tools/cc.sh); links run every time.
# The FreeRTOS sources come from $RTS_THIRD_PARTY (default: the repository's
# third_party/), or $RTS_FREERTOS_KERNEL for the kernel tree alone.
# Exit 77 (ctest: skipped) with the reason when a tree or a tool is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

usage="usage: freertos_build.sh build|posix-test|qemu-test|tcp-build|mps2-test|mps2-build|mps2-boot|mps2-bench|lwip-build|mps2-lwip-build OUTDIR [--markdown]"
mode=${1:?$usage}
out=${2:?$usage}
fmt=${3:-}
tp=${RTS_THIRD_PARTY:-$here/third_party}
kernel=${RTS_FREERTOS_KERNEL:-$tp/FreeRTOS-Kernel}
port=$here/libshield/port/freertos

skip() { echo "freertos_build: SKIPPED: $*" >&2; exit 77; }

[ -f "$kernel/tasks.c" ] ||
  skip "no FreeRTOS kernel at $kernel (set RTS_THIRD_PARTY to the folder holding FreeRTOS-Kernel, or RTS_FREERTOS_KERNEL; CMake: -DRTS_THIRD_PARTY_DIR=...)"
mkdir -p "$out"
out=$(cd "$out" && pwd)

warn=(-std=c11 -Wall -Wextra -Werror -Wshadow -Wconversion -Wno-sign-conversion -Wstrict-prototypes)
kernel_srcs=(tasks.c queue.c list.c timers.c)
lib_opts=(-DRTS_FLOW_PRIO_LEVELS=8 -DRTS_CONFIG_ASSERT=1) # self-test: 1:1 onto configMAX_PRIORITIES 8

# cc_all, cc_one, objs_of: compiles that skip what is up to date (tools/cc.sh).
# shellcheck source=cc.sh
. "$here/tools/cc.sh"

need_arm() {
  command -v arm-none-eabi-gcc >/dev/null ||
    skip "arm-none-eabi-gcc not found (Debian package gcc-arm-none-eabi; tools/install.sh --test installs it)"
}

# ------------------------------------------------------------------ build
build_posix_adapter() {
  local inc=(-I"$port" -I"$port/config/posix" -I"$here/libshield/include"
             -isystem "$kernel/include" -isystem "$kernel/portable/ThirdParty/GCC/Posix")
  cc_all "$out/posix_" gcc "${warn[@]}" -O2 "${inc[@]}" -- "$port"/rts_{port,shield}_freertos.c
}

cm3_inc=(-I"$port" -I"$port/config/cm3" -I"$here/libshield/include"
         -isystem "$kernel/include" -isystem "$kernel/portable/GCC/ARM_CM3")
cm3_flags=(-mcpu=cortex-m3 -mthumb -Os -ffunction-sections -fdata-sections)

build_cm3_adapter() {
  cc_all "$out/cm3_" arm-none-eabi-gcc "${cm3_flags[@]}" -ffreestanding "${warn[@]}" "${cm3_inc[@]}" \
    -- "$port"/rts_{port,shield}_freertos.c
  # No heap: what the adapter takes from outside is FreeRTOS's API, libshield,
  # the compiler's runtime helpers and memset/memcpy.
  local bad
  bad=$(arm-none-eabi-nm -u "$out"/cm3_rts_*.o | awk '$1=="U"{print $2}' |
        grep -v -E '^(rts_[a-z0-9_]+|(x|v|ul|ux|pv|pc)[A-Z][A-Za-z0-9]+|__aeabi_[a-z0-9_]+|memset|memcpy)$' |
        sort -u || true)
  if [ -n "$bad" ]; then
    echo "freertos_build: the adapter uses symbols outside FreeRTOS and libshield:" $bad >&2
    exit 1
  fi
  if arm-none-eabi-nm -u "$out"/cm3_rts_*.o | grep -q -E 'pvPortMalloc|malloc'; then
    echo "freertos_build: the adapter allocates from a heap" >&2
    exit 1
  fi
}

if [ "$mode" = build ]; then
  build_posix_adapter
  echo "freertos port: POSIX port build OK (gcc, -Werror)"
  need_arm
  build_cm3_adapter
  if [ "$fmt" = "--markdown" ]; then
    echo "| file | text (B) | data (B) | bss (B) |"
    echo "|---|---:|---:|---:|"
    arm-none-eabi-size "$out"/cm3_rts_*.o |
      awk 'NR>1 { n=$6; sub(".*/cm3_","",n); sub("\\.o$",".c",n); printf "| %s | %d | %d | %d |\n", n, $1, $2, $3 }'
  else
    arm-none-eabi-size "$out"/cm3_rts_*.o
  fi
  echo "freertos port: Cortex-M3 build OK (arm-none-eabi-gcc -mcpu=cortex-m3 -mthumb -Werror), no heap"
  exit 0
fi

# --------------------------------------------------------------- self-test
selftest=$port/selftest
lib_srcs=("$here"/libshield/src/*.c)

if [ "$mode" = posix-test ]; then
  posix=$kernel/portable/ThirdParty/GCC/Posix
  [ -f "$posix/port.c" ] || skip "no POSIX port at $posix"
  [ -f "$kernel/portable/MemMang/heap_3.c" ] || skip "no heap_3.c in $kernel/portable/MemMang"
  inc=(-I"$selftest" -I"$port" -I"$port/config/posix" -I"$here/libshield/include"
       -I"$kernel/include" -I"$posix" -I"$posix/utils")
  objs=()
  # Third-party kernel sources: their own dialect, no -Werror.
  k_srcs=("${kernel_srcs[@]/#/$kernel/}" "$posix/port.c" "$posix/utils/wait_for_event.c"
          "$kernel/portable/MemMang/heap_3.c")
  cc_all "$out/k_" gcc -std=gnu11 -O2 -g -pthread -w "${inc[@]}" -- "${k_srcs[@]}"
  objs_of "$out/k_" "${k_srcs[@]}"
  s_srcs=("${lib_srcs[@]}" "$port/rts_port_freertos.c" "$port/rts_shield_freertos.c"
          "$selftest/selftest.c" "$selftest/main_posix.c")
  cc_all "$out/" gcc "${warn[@]}" -O2 -g -pthread "${lib_opts[@]}" "${inc[@]}" -- "${s_srcs[@]}"
  objs_of "$out/" "${s_srcs[@]}"
  gcc -pthread "${objs[@]}" -o "$out/freertos_selftest"
  echo "freertos port: POSIX self-test built; running"
  exec timeout 120 "$out/freertos_selftest"
fi

if [ "$mode" = qemu-test ]; then
  need_arm
  command -v qemu-system-arm >/dev/null ||
    skip "qemu-system-arm not found (Debian package qemu-system-arm; tools/install.sh --test installs it)"
  cm3=$kernel/portable/GCC/ARM_CM3
  [ -f "$cm3/port.c" ] || skip "no Cortex-M3 port at $cm3"
  inc=(-I"$selftest" -I"$port" -I"$port/config/cm3" -I"$here/libshield/include"
       -I"$kernel/include" -I"$cm3")
  objs=()
  k_srcs=("${kernel_srcs[@]/#/$kernel/}" "$cm3/port.c")
  cc_all "$out/k_" arm-none-eabi-gcc "${cm3_flags[@]}" -g -std=gnu11 -w "${inc[@]}" -- "${k_srcs[@]}"
  objs_of "$out/k_" "${k_srcs[@]}"
  s_srcs=("${lib_srcs[@]}" "$port/rts_port_freertos.c" "$port/rts_shield_freertos.c"
          "$selftest/selftest.c" "$selftest/main_cm3.c" "$selftest/mps2_boot.c")
  cc_all "$out/" arm-none-eabi-gcc "${cm3_flags[@]}" -g "${warn[@]}" "${lib_opts[@]}" "${inc[@]}" -- "${s_srcs[@]}"
  objs_of "$out/" "${s_srcs[@]}"
  arm-none-eabi-gcc "${cm3_flags[@]}" -nostartfiles --specs=nano.specs --specs=nosys.specs \
    -T "$selftest/mps2_an385.ld" -Wl,--gc-sections -Wl,-Map="$out/freertos_selftest_cm3.map" \
    "${objs[@]}" -o "$out/freertos_selftest_cm3.elf"
  arm-none-eabi-size "$out/freertos_selftest_cm3.elf"
  echo "freertos port: Cortex-M3 self-test built; booting qemu-system-arm -M mps2-an385"
  # The guest's clock counts its instructions (-icount) and skips its idle time
  # (sleep=off): the self-test's timer checks (an expiry within 3 ticks of its
  # time) judge the port, not the host's scheduling of QEMU, and a boot prints
  # the same bytes every time. On the host's clock, a busy host once made a
  # timer fire 5 ticks late in the guest's time.
  exec timeout 180 qemu-system-arm -M mps2-an385 -nographic -semihosting -monitor none \
    -serial none -icount shift=5,sleep=off -kernel "$out/freertos_selftest_cm3.elf"
fi

rig=$here/rig/freertos
app_srcs=("$rig/app/rts_device.c" "$rig/app/rts_modbus.c" "$rig/plustcp/rts_net_plustcp.c")

# plustcp_tree: the FreeRTOS-Plus-TCP sources the rig's builds compile — a
# copy of $tcp/source in OUTDIR/FreeRTOS-Plus-TCP with the project's patches
# (rig/freertos/patches/*.patch, in order) applied; the tree in
# third_party/ is never edited. Fails loudly when a patch no longer applies.
# Sets ptcp.
plustcp_tree() {
  command -v patch >/dev/null || skip "patch not found (Debian package patch)"
  local copy=$out/FreeRTOS-Plus-TCP stage=$out/FreeRTOS-Plus-TCP.new p
  rm -rf "$stage"
  mkdir -p "$stage"
  cp -R "$tcp/source" "$stage/source"
  for p in "$rig"/patches/*.patch; do
    if ! patch -d "$stage" -p1 --forward --batch --fuzz=0 --no-backup-if-mismatch -s <"$p" >"$out/patch.log" 2>&1; then
      echo "freertos_build: FAILED: $(basename "$p") no longer applies to $tcp:" >&2
      cat "$out/patch.log" >&2
      exit 1
    fi
  done
  # Into the copy the build reads: only what changed since the last build.
  sync_tree "$stage" "$copy"
  rm -rf "$stage"
  ptcp=$copy
}

if [ "$mode" = tcp-build ]; then
  tcp=${RTS_FREERTOS_TCP:-$tp/FreeRTOS-Plus-TCP}
  [ -f "$tcp/source/FreeRTOS_IP.c" ] ||
    skip "no FreeRTOS-Plus-TCP at $tcp (set RTS_THIRD_PARTY or RTS_FREERTOS_TCP)"
  posix=$kernel/portable/ThirdParty/GCC/Posix
  plustcp_tree
  # The POSIX board first: its FreeRTOSConfig.h and rts_board_cfg.h.
  inc=(-I"$rig/posix" -I"$rig/app" -I"$rig/nic" -I"$rig/plustcp" -I"$port" -I"$port/config"
       -I"$here/libshield/include" -I"$kernel/include" -I"$posix" -I"$ptcp/source/include"
       -I"$ptcp/source/portable/Compiler/GCC")
  objs=()
  tcp_srcs=("$ptcp"/source/*.c "$ptcp/source/portable/BufferManagement/BufferAllocation_2.c")
  n=${#tcp_srcs[@]}
  # Third-party sources (stack, kernel, port, heap): their own dialect, no -Werror.
  cc_all "$out/tcp_" gcc -std=gnu11 -O2 -pthread -w "${inc[@]}" -- "${tcp_srcs[@]}"
  objs_of "$out/tcp_" "${tcp_srcs[@]}"
  k_srcs=("${kernel_srcs[@]/#/$kernel/}" "$kernel/event_groups.c" "$posix/port.c"
          "$posix/utils/wait_for_event.c" "$kernel/portable/MemMang/heap_3.c")
  cc_all "$out/k_" gcc -std=gnu11 -O2 -pthread -w "${inc[@]}" -I"$posix/utils" -- "${k_srcs[@]}"
  objs_of "$out/k_" "${k_srcs[@]}"
  rig_opts=(-DRTS_POOL_MAX_BUFS=2048) # the rig's deep NIC ring (rig/freertos/plustcp/rts_netif.h)
  r_srcs=("$rig/plustcp/rts_netif.c" "$rig/plustcp/rts_app_random.c" "$rig/app/rts_random.c" "$rig/posix/rts_netif_posix.c"
          "$rig/nic/rts_nic.c" "$rig/posix/main_link.c" "$rig/posix/board.c" "${app_srcs[@]}"
          "$rig/plustcp/rts_net_netif.c")
  cc_all "$out/" gcc -std=gnu11 -Wall -Wextra -Werror -Wshadow -O2 -pthread "${rig_opts[@]}" "${inc[@]}" \
    -- "${r_srcs[@]}"
  objs+=("$out/rts_netif.o" "$out/rts_netif_posix.o" "$out/rts_nic.o" "$out/rts_app_random.o" "$out/rts_random.o")
  l_srcs=("${lib_srcs[@]}" "$port/rts_port_freertos.c" "$port/rts_shield_freertos.c")
  cc_all "$out/l_" gcc "${warn[@]}" -O2 -pthread "${rig_opts[@]}" "${inc[@]}" -- "${l_srcs[@]}"
  objs_of "$out/l_" "${l_srcs[@]}"
  gcc -pthread "${objs[@]}" "$out/main_link.o" -o "$out/rts_freertos_tcp"
  a_objs=()
  for f in board "${app_srcs[@]}" rts_net_netif; do a_objs+=("$out/$(basename "${f%.c}").o"); done
  gcc -pthread "${objs[@]}" "${a_objs[@]}" -o "$out/rts_freertos_device"
  echo "freertos port: FreeRTOS-Plus-TCP ($n files) + rig/freertos (app/, plustcp/, posix/) built and linked for the POSIX board: rts_freertos_tcp (link check), rts_freertos_device"
  exit 0
fi

# ------------------------------------------------------- the MPS2 board
# The common part of the Cortex-M3 images: the kernel (ARM_CM3, heap_4),
# FreeRTOS-Plus-TCP, the MPS2_AN385 interface folder copied into OUTDIR and
# patched with rig/freertos/patches/ (never edited in place), libshield and
# its port, the rts_netif interface with its LAN9118 backend, the board's
# clock and start-up. Sets inc, mps2_opts, m_objs, mps2 (the patched copy).
mps2_setup() {
  need_arm
  tcp=${RTS_FREERTOS_TCP:-$tp/FreeRTOS-Plus-TCP}
  [ -f "$tcp/source/FreeRTOS_IP.c" ] ||
    skip "no FreeRTOS-Plus-TCP at $tcp (set RTS_THIRD_PARTY or RTS_FREERTOS_TCP)"
  cm3=$kernel/portable/GCC/ARM_CM3
  [ -f "$cm3/port.c" ] || skip "no Cortex-M3 port at $cm3"
  local rel=source/portable/NetworkInterface/MPS2_AN385
  [ -f "$tcp/$rel/ether_lan9118/smsc9220_eth_drv.c" ] || skip "no MPS2_AN385 interface in $tcp"
  plustcp_tree
  mps2=$ptcp/$rel
  inc=(-I"$rig/mps2-an385" -I"$rig/app" -I"$rig/nic" -I"$rig/plustcp" -I"$port" -I"$port/config" -I"$selftest"
       -I"$here/libshield/include" -I"$kernel/include" -I"$cm3" -I"$ptcp/source/include"
       -I"$ptcp/source/portable/Compiler/GCC" -I"$mps2")
  mps2_opts=(-DRTS_POOL_MAX_BUFS=128) # 128 descriptor slots of 1536 B (192 KB), 112 posted
  m_objs=()
  # Third-party sources (kernel, port, heap, stack, LAN9118 driver): their own dialect.
  local t_srcs=("${kernel_srcs[@]/#/$kernel/}" "$kernel/event_groups.c" "$cm3/port.c"
                "$kernel/portable/MemMang/heap_4.c" "$ptcp"/source/*.c
                "$ptcp/source/portable/BufferManagement/BufferAllocation_2.c"
                "$mps2/ether_lan9118/smsc9220_eth_drv.c")
  cc_all "$out/t_" arm-none-eabi-gcc "${cm3_flags[@]}" -g -std=gnu11 -w "${inc[@]}" -- "${t_srcs[@]}"
  objs=()
  objs_of "$out/t_" "${t_srcs[@]}"
  m_objs+=("${objs[@]}")
  local b_srcs=("$rig/mps2-an385/mps2_clock.c" "$selftest/mps2_boot.c")
  local s_srcs=("${lib_srcs[@]}" "$port/rts_port_freertos.c" "$port/rts_shield_freertos.c"
                "$rig/plustcp/rts_netif.c" "$rig/nic/rts_nic.c" "$rig/mps2-an385/rts_netif_mps2.c")
  cc_all "$out/" arm-none-eabi-gcc "${cm3_flags[@]}" -g "${warn[@]}" "${mps2_opts[@]}" "${inc[@]}" \
    -- "${b_srcs[@]}" "${s_srcs[@]}"
  objs=()
  objs_of "$out/" "${b_srcs[@]}"
  m_objs+=("${objs[@]}")
  objs=()
  objs_of "$out/" "${s_srcs[@]}"
  shield_objs=("${objs[@]}") # libshield, its port and the rts_netif interface
}

# link_mps2 ELF OBJS...: one image with the board's memory map.
link_mps2() {
  local elf=$1
  shift
  arm-none-eabi-gcc "${cm3_flags[@]}" -nostartfiles --specs=nano.specs --specs=nosys.specs \
    -T "$selftest/mps2_an385.ld" -Wl,--gc-sections -Wl,-Map="${elf%.elf}.map" "$@" -o "$elf"
}

need_qemu() {
  command -v qemu-system-arm >/dev/null ||
    skip "qemu-system-arm not found (Debian package qemu-system-arm; tools/install.sh --test installs it)"
}

if [ "$mode" = mps2-test ]; then
  need_qemu
  mps2_setup
  status=0
  for variant in protected unprotected; do
    p=1; [ "$variant" = unprotected ] && p=0
    cc_one "$out/selftest_$variant.o" arm-none-eabi-gcc "${cm3_flags[@]}" -g "${warn[@]}" "${mps2_opts[@]}" \
      -DRTS_MPS2_PROTECT=$p "${inc[@]}" -c "$rig/mps2-an385/selftest.c"
    elf=$out/rts_mps2_$variant.elf
    link_mps2 "$elf" "${m_objs[@]}" "${shield_objs[@]}" "$out/selftest_$variant.o"
    arm-none-eabi-size "$elf"
    echo "freertos port: booting the $variant receive path on qemu-system-arm -M mps2-an385"
    timeout 180 qemu-system-arm -M mps2-an385 -nographic -semihosting -monitor none \
      -serial none -nic none -icount shift=5 -kernel "$elf" || status=$?
    [ "$status" -eq 0 ] || break
  done
  exit "$status"
fi

# The cost benchmark's image (mps2-an385/selftest.c with RTS_MPS2_BENCH):
# every receive path many times over the LAN9118's loopback, the time inside
# libshield's per-frame hook per path printed; booted with -icount
# $RTS_MPS2_BENCH_ICOUNT (default shift=7,sleep=off: 128 ns of guest time
# per instruction, nothing but instructions moves the clock).
if [ "$mode" = mps2-bench ]; then
  need_qemu
  mps2_setup
  cc_one "$out/selftest_bench.o" arm-none-eabi-gcc "${cm3_flags[@]}" -g "${warn[@]}" "${mps2_opts[@]}" \
    -DRTS_MPS2_PROTECT=1 -DRTS_MPS2_BENCH=1 "${inc[@]}" -c "$rig/mps2-an385/selftest.c"
  link_mps2 "$out/rts_mps2_bench.elf" "${m_objs[@]}" "${shield_objs[@]}" "$out/selftest_bench.o"
  exec timeout 300 qemu-system-arm -M mps2-an385 -nographic -semihosting -monitor none \
    -serial none -nic none -icount "${RTS_MPS2_BENCH_ICOUNT:-shift=7,sleep=off}" -kernel "$out/rts_mps2_bench.elf"
fi

# mps2_device: the networked images — the device application (app/) on the
# MPS2 board (mps2-an385/board.c):
#   OUTDIR/rts_mps2_device.elf  the rts_netif interface: libshield in the
#                               LAN9118's receive path (protect 1) or the
#                               stock path (protect 0), as on the POSIX board
#   OUTDIR/rts_mps2_stock.elf   Plus-TCP's own MPS2_AN385 interface (patched),
#                               no libshield: protect 0 only; the baseline
mps2_device() {
  mps2_setup
  local a_srcs=("$rig/mps2-an385/board.c" "${app_srcs[@]}" "$rig/plustcp/rts_app_random.c" "$rig/app/rts_random.c"
                "$rig/plustcp/rts_net_netif.c" "$rig/mps2-an385/rts_net_stock.c")
  # -Wno-format: arm-none-eabi's uint32_t is long, the width of the %u the
  # application's printf subset reads; the format checks run in tcp-build.
  cc_all "$out/" arm-none-eabi-gcc "${cm3_flags[@]}" -g -std=gnu11 -Wall -Wextra -Werror -Wshadow -Wno-format \
    "${mps2_opts[@]}" "${inc[@]}" -- "${a_srcs[@]}"
  cc_one "$out/t_NetworkInterface.o" arm-none-eabi-gcc "${cm3_flags[@]}" -g -std=gnu11 -w "${inc[@]}" \
    -I"$mps2/ether_lan9118" -c "$mps2/NetworkInterface.c"
  objs=()
  objs_of "$out/" "${a_srcs[@]:0:6}" # the board, the application, the random hooks
  link_mps2 "$out/rts_mps2_device.elf" "${m_objs[@]}" "${shield_objs[@]}" "${objs[@]}" "$out/rts_net_netif.o"
  link_mps2 "$out/rts_mps2_stock.elf" "${m_objs[@]}" "$out/t_NetworkInterface.o" "${objs[@]}" "$out/rts_net_stock.o"
  arm-none-eabi-size "$out/rts_mps2_device.elf" "$out/rts_mps2_stock.elf"
}

if [ "$mode" = mps2-build ]; then
  mps2_device
  echo "freertos port: the networked images OUTDIR/rts_mps2_device.elf (rts_netif, libshield) and OUTDIR/rts_mps2_stock.elf (the patched upstream MPS2_AN385 interface) built"
  exit 0
fi

# boot_check VARIANT: boot a networked image (protected, unprotected: the
# device image; stock: the stock image) on QEMU's user-mode network (no root): the config from a file, 40 UDP datagrams to its control flow
# and a MODBUS/TCP poll through host forwards (QEMU's SYN is a short one:
# patch 0003), then its results checked.
boot_check() {
  local v=$1 p=1 elf=$out/rts_mps2_device.elf
  [ "$v" = protected ] || p=0
  [ "$v" = stock ] && elf=$out/rts_mps2_stock.elf
  local run=$out/boot-$v
  rm -rf "$run"
  mkdir -p "$run"
  local up=$((20000 + RANDOM % 20000))
  local mp=$((up + 1))
  cat >"$run/device.conf" <<CONF
# boot check of the networked image ($v), written by tools/freertos_build.sh mps2-boot
ifname lan9118
mac 02:00:00:77:00:02
ip 10.0.2.15
netmask 255.255.255.0
protect $p
seconds 3
out $run
crit_period_us 10000
crit_work_us 2000
crit_prio 4
net_prio $([ $p = 1 ] && echo 1 || echo 6)
flow hp udp 5000 5 $([ $p = 1 ] && echo "50 25000" || echo "0 0") 0 5 50
flow plc tcp modbus 5020 3 $([ $p = 1 ] && echo "20 10000" || echo "0 0") 0 3 50
flow syn_flood tcp 502 0 $([ $p = 1 ] && echo "5 10000" || echo "0 0") 0 1 0
CONF
  sed -i 's/^flow plc tcp modbus/flow plc modbus/' "$run/device.conf"
  "$here/tools/mps2_run.sh" "$elf" "$run/device.conf" \
    -nic "user,hostfwd=udp:127.0.0.1:$up-:5000,hostfwd=tcp:127.0.0.1:$mp-:5020" \
    >"$run/console" 2>"$run/stderr" &
  local qemu=$! i
  for i in $(seq 600); do grep -q '^ready' "$run/console" && break; sleep 0.1; done
  if ! grep -q '^ready' "$run/console"; then
    kill "$qemu" 2>/dev/null; wait "$qemu" 2>/dev/null
    echo "mps2-boot $v: FAILED: the image never said ready:" >&2; cat "$run/stderr" >&2
    return 1
  fi
  # 32..35-byte payloads: frames (with the FCS) of every length modulo 4,
  # the LAN9118 driver's remainder word among them (patch 0001).
  for i in $(seq 40); do
    printf '%016d%0*d' "$i" $((16 + i % 4)) 0 >/dev/udp/127.0.0.1/$up || true
    sleep 0.01
  done
  local answer=""
  if exec 3<>/dev/tcp/127.0.0.1/$mp; then
    printf '\x00\x01\x00\x00\x00\x06\x01\x03\x00\x00\x00\x02' >&3
    answer=$(timeout 5 dd bs=1 count=13 <&3 2>/dev/null | od -An -tx1 | tr -d ' \n')
    exec 3<&-
  fi
  local rc=0
  timeout 60 tail --pid="$qemu" -f /dev/null || kill "$qemu" 2>/dev/null
  wait "$qemu" || rc=$?
  echo "mps2-boot $v: exit $rc, modbus answer ${answer:-none}; console: $(tr '\n' ' ' <"$run/console" | cut -c1-60)..."
  [ "$rc" -eq 0 ] || { echo "mps2-boot $v: FAILED: exit status $rc:" >&2; cat "$run/stderr" >&2; return 1; }
  python3 - "$run/device.json" "$v" "$answer" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
v, answer = sys.argv[2], sys.argv[3]
checks = {
    "board mps2-an385, guest clock": d["board"] == "mps2-an385" and d["clock"] == "guest",
    "protect as configured": d["protect"] == (v == "protected"),
    "critical task ran": d["cycles"] >= 250,
    "no deadline missed": d["misses"] == 0,
    "all 40 control datagrams delivered": d["flows"]["hp"]["delivered"] == 40,
    "the MODBUS poll answered (registers 0, 1)": answer == "00010000000701030400000001",
    "the MODBUS server counted it": d["flows"]["plc"]["delivered"] == 1,
    "frames reached the NIC and the IP task": d["netif"]["nic_frames"] >= 40 and d["netif"]["to_ip_task"] >= 40,
    "libshield in the path when protected": (d["netif"]["shield_frames"] > 0) == (v == "protected"),
    "snapshots every 100 ms": len(d["snapshots"]) >= 30,
}
bad = [k for k, ok in checks.items() if not ok]
for k in bad:
    print(f"mps2-boot {v}: FAILED: {k}", file=sys.stderr)
print(f"mps2-boot {v}: {len(checks) - len(bad)}/{len(checks)} checks hold "
      f"(cycles {d['cycles']}, misses {d['misses']}, hp {d['flows']['hp']['delivered']}, "
      f"nic {d['netif']['nic_frames']}, to_ip {d['netif']['to_ip_task']})")
sys.exit(1 if bad else 0)
PY
}

if [ "$mode" = mps2-boot ]; then
  need_qemu
  command -v python3 >/dev/null || skip "python3 not found (the boot check reads device.json with it)"
  mps2_device
  status=0
  for variant in protected unprotected stock; do boot_check "$variant" || status=1; done
  exit "$status"
fi

# ------------------------------------------------- the device on lwIP
# lwip_device posix|cm3: the device application (app/) on lwIP
# (rig/freertos/lwip/) and the board, twice: the protected image (libshield
# through the lwIP adapter) and the stock image (lwIP's usual RTOS driver).
# Everything that includes an lwIP header is compiled once per image, with
# that image's lwIP options; the rest (kernel, libshield, the application,
# the NIC and its backend, the board) once, with the FreeRTOS configuration
# lwIP's sys_arch needs (rig/freertos/lwip/FreeRTOSConfig.h).
lwip_device() {
  local board=$1
  local lwip=$tp/lwip adapter=$here/libshield/port/lwip
  [ -f "$lwip/src/core/init.c" ] || skip "no lwIP at $lwip (set RTS_THIRD_PARTY)"
  [ -f "$lwip/contrib/ports/freertos/sys_arch.c" ] || skip "no lwIP FreeRTOS port in $lwip/contrib/ports/freertos"
  local lwip_srcs=("$lwip"/src/core/*.c "$lwip"/src/core/ipv4/*.c "$lwip"/src/api/*.c "$lwip/src/netif/ethernet.c"
                   "$lwip/contrib/ports/freertos/sys_arch.c")
  local cc flags k_srcs b_srcs arch inc_board opts
  # The stock image: lwIP as it ships to a vendor port, tcpip_thread above the
  # application (configMAX_PRIORITIES - 2, where FreeRTOS-Plus-TCP puts its IP task).
  local stock_opts=(-DLWIP_TCPIP_CORE_LOCKING_INPUT=0 -DTCPIP_THREAD_PRIO=6 -DRTS_NETIF_LWIP_STOCK=1)
  if [ "$board" = posix ]; then
    local posix=$kernel/portable/ThirdParty/GCC/Posix
    cc=gcc flags=(-O2 -pthread) opts=(-DRTS_POOL_MAX_BUFS=2048)
    k_srcs=("${kernel_srcs[@]/#/$kernel/}" "$kernel/event_groups.c" "$posix/port.c"
            "$posix/utils/wait_for_event.c" "$kernel/portable/MemMang/heap_3.c")
    b_srcs=("$rig/posix/board.c" "$rig/posix/rts_netif_posix.c")
    inc_board=(-I"$rig/posix" -I"$posix" -I"$posix/utils")
    arch=("$lwip/contrib/ports/unix/port/include")
  else
    need_arm
    local cm3=$kernel/portable/GCC/ARM_CM3
    [ -f "$cm3/port.c" ] || skip "no Cortex-M3 port at $cm3"
    tcp=${RTS_FREERTOS_TCP:-$tp/FreeRTOS-Plus-TCP}
    local rel=source/portable/NetworkInterface/MPS2_AN385
    [ -f "$tcp/$rel/ether_lan9118/smsc9220_eth_drv.c" ] || skip "no MPS2_AN385 interface (the LAN9118 driver) in $tcp"
    plustcp_tree
    mps2=$ptcp/$rel
    cc=arm-none-eabi-gcc flags=("${cm3_flags[@]}" -g) opts=(-DRTS_POOL_MAX_BUFS=128)
    k_srcs=("${kernel_srcs[@]/#/$kernel/}" "$kernel/event_groups.c" "$cm3/port.c"
            "$kernel/portable/MemMang/heap_4.c" "$mps2/ether_lan9118/smsc9220_eth_drv.c")
    b_srcs=("$rig/mps2-an385/board.c" "$rig/mps2-an385/rts_netif_mps2.c" "$rig/mps2-an385/mps2_clock.c"
            "$selftest/mps2_boot.c")
    inc_board=(-I"$rig/mps2-an385" -I"$selftest" -I"$cm3" -I"$mps2")
    arch=("$adapter/cm3")
  fi
  # The lwIP folder first: its FreeRTOSConfig.h wraps the board's, its lwipopts.h the adapter's.
  # lwIP's FreeRTOS sys_arch.h before the platform's arch/ (the Unix port's holds one too).
  local inc=(-I"$rig/lwip" "${inc_board[@]}" -I"$rig/app" -I"$rig/nic" -I"$adapter" -I"$adapter/config"
             -I"$port" -I"$port/config" -I"$here/libshield/include" -I"$kernel/include"
             -isystem "$lwip/src/include" -isystem "$lwip/contrib/ports/freertos/include" -isystem "${arch[0]}")
  local rigw=(-std=gnu11 -Wall -Wextra -Werror -Wshadow)
  [ "$board" = cm3 ] && rigw+=(-Wno-format) # arm-none-eabi's uint32_t is long: see mps2_device
  objs=()
  cc_all "$out/lk_" "$cc" "${flags[@]}" -std=gnu11 -w "${opts[@]}" "${inc[@]}" -- "${k_srcs[@]}"
  objs_of "$out/lk_" "${k_srcs[@]}"
  local l_srcs=("${lib_srcs[@]}" "$port/rts_port_freertos.c" "$port/rts_shield_freertos.c")
  cc_all "$out/ll_" "$cc" "${flags[@]}" "${warn[@]}" "${opts[@]}" "${inc[@]}" -- "${l_srcs[@]}"
  objs_of "$out/ll_" "${l_srcs[@]}"
  local a_srcs=("$rig/app/rts_device.c" "$rig/app/rts_modbus.c" "$rig/app/rts_random.c" "$rig/nic/rts_nic.c"
                "${b_srcs[@]}")
  cc_all "$out/la_" "$cc" "${flags[@]}" "${rigw[@]}" "${opts[@]}" "${inc[@]}" -- "${a_srcs[@]}"
  objs_of "$out/la_" "${a_srcs[@]}"
  local common=("${objs[@]}") v
  for v in device stock; do
    local vopts=() own=("$rig/lwip/rts_net_lwip.c" "$rig/lwip/rts_netif_lwip.c")
    if [ "$v" = stock ]; then vopts=("${stock_opts[@]}"); else own+=("$adapter/rts_lwip.c"); fi
    objs=()
    cc_all "$out/${v}_l_" "$cc" "${flags[@]}" -std=gnu11 -w "${opts[@]}" "${vopts[@]}" "${inc[@]}" -- "${lwip_srcs[@]}"
    objs_of "$out/${v}_l_" "${lwip_srcs[@]}"
    cc_all "$out/${v}_" "$cc" "${flags[@]}" "${rigw[@]}" "${opts[@]}" "${vopts[@]}" "${inc[@]}" -- "${own[@]}"
    objs_of "$out/${v}_" "${own[@]}"
    if [ "$board" = posix ]; then
      gcc -pthread "${common[@]}" "${objs[@]}" -o "$out/rts_lwip_$v"
    else
      link_mps2 "$out/rts_mps2_lwip_$v.elf" "${common[@]}" "${objs[@]}"
      arm-none-eabi-size "$out/rts_mps2_lwip_$v.elf"
    fi
  done
}

if [ "$mode" = lwip-build ]; then
  [ -f "$kernel/portable/ThirdParty/GCC/Posix/port.c" ] || skip "no POSIX port in $kernel"
  lwip_device posix
  echo "freertos port: the device application on lwIP (POSIX board) built: rts_lwip_device (libshield), rts_lwip_stock (lwIP's usual driver)"
  exit 0
fi

if [ "$mode" = mps2-lwip-build ]; then
  lwip_device cm3
  echo "freertos port: the device application on lwIP (MPS2 board) built: rts_mps2_lwip_device.elf (libshield), rts_mps2_lwip_stock.elf (lwIP's usual driver)"
  exit 0
fi

echo "freertos_build: unknown mode $mode (build, posix-test, qemu-test, tcp-build, mps2-test, mps2-build, mps2-boot, mps2-bench, lwip-build, mps2-lwip-build)" >&2
exit 2
