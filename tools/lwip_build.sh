#!/usr/bin/env bash
# The lwIP adapter (libshield/port/lwip/) with lwIP on FreeRTOS (NO_SYS 0:
# lwIP's contrib/ports/freertos/sys_arch.c) against the real kernel.
#   tools/lwip_build.sh build OUTDIR [--markdown]
#       compile the adapter with lwIP and the kernel for the POSIX port
#       (host gcc) and for Cortex-M3 (arm-none-eabi-gcc, portable/GCC/ARM_CM3),
#       warnings as errors; check it needs no heap and that lwIP's
#       arch/sys_arch.h is the FreeRTOS one; print its Cortex-M3 code size
#   tools/lwip_build.sh posix-test OUTDIR
#       build lwIP + FreeRTOS (POSIX port, heap_3) + libshield + the adapter
#       + test/test_lwip_freertos.c once per variant (the receive task or
#       tcpip_thread as the network task; the receive task with a global
#       limit; the stock path without libshield) and run each: exit 0 when
#       every check holds
#   tools/lwip_build.sh qemu-test OUTDIR
#       the same four programs for Cortex-M3 (heap_4), booted in
#       qemu-system-arm -M mps2-an385 (semihosting: output, exit status)
# The sources come from $RTS_THIRD_PARTY (default: the repository's
# third_party/): FreeRTOS-Kernel/ and lwip/. Exit 77 (ctest: skipped) with
# the reason when a tree or a tool is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

usage="usage: lwip_build.sh build|posix-test|qemu-test OUTDIR [--markdown]"
mode=${1:?$usage}
out=${2:?$usage}
fmt=${3:-}
tp=${RTS_THIRD_PARTY:-$here/third_party}
kernel=$tp/FreeRTOS-Kernel
lwip=$tp/lwip
adapter=$here/libshield/port/lwip
fport=$here/libshield/port/freertos
selftest=$fport/selftest

skip() { echo "lwip_build: SKIPPED: $*" >&2; exit 77; }
[ -f "$kernel/tasks.c" ] || skip "no FreeRTOS kernel at $kernel (set RTS_THIRD_PARTY; CMake: -DRTS_THIRD_PARTY_DIR=...)"
[ -f "$lwip/src/core/init.c" ] || skip "no lwIP at $lwip (set RTS_THIRD_PARTY; CMake: -DRTS_THIRD_PARTY_DIR=...)"
[ -f "$lwip/contrib/ports/freertos/sys_arch.c" ] || skip "no lwIP FreeRTOS port in $lwip/contrib/ports/freertos"
mkdir -p "$out"
out=$(cd "$out" && pwd)

warn=(-std=c11 -Wall -Wextra -Werror -Wshadow -Wconversion -Wno-sign-conversion -Wstrict-prototypes)
# Libshield priorities 1:1 onto configMAX_PRIORITIES (8); lwIP checks the core lock on every core call.
opts=(-DRTS_FLOW_PRIO_LEVELS=8 -DRTS_CONFIG_ASSERT=1 -DLWIP_FREERTOS_CHECK_CORE_LOCKING=1)
kernel_srcs=("$kernel"/{tasks,queue,list,timers}.c)
lwip_srcs=("$lwip"/src/core/*.c "$lwip"/src/core/ipv4/*.c "$lwip"/src/api/*.c "$lwip/src/netif/ethernet.c"
           "$lwip/contrib/ports/freertos/sys_arch.c")
lib_srcs=("$here"/libshield/src/*.c "$fport/rts_port_freertos.c" "$fport/rts_shield_freertos.c")

# cc_all, cc_one, objs_of: compiles that skip what is up to date (tools/cc.sh;
# a repeated run into the same OUTDIR compiles only what changed).
# shellcheck source=cc.sh
. "$here/tools/cc.sh"

need_arm() {
  command -v arm-none-eabi-gcc >/dev/null ||
    skip "arm-none-eabi-gcc not found (Debian package gcc-arm-none-eabi; tools/install.sh --test installs it)"
}

# Include paths. lwIP's FreeRTOS port include directory comes before the
# platform's arch/cc.h directory: the Unix port's also holds an
# arch/sys_arch.h, which must not shadow the FreeRTOS one.
posix=$kernel/portable/ThirdParty/GCC/Posix
cm3=$kernel/portable/GCC/ARM_CM3
posix_inc=(-I"$adapter/test" -I"$adapter/config/posix" -I"$adapter" -I"$fport" -I"$selftest"
           -I"$here/libshield/include" -isystem "$kernel/include" -isystem "$posix" -isystem "$posix/utils"
           -isystem "$lwip/src/include" -isystem "$lwip/contrib/ports/freertos/include"
           -isystem "$lwip/contrib/ports/unix/port/include")
cm3_inc=(-I"$adapter/test" -I"$adapter/config/cm3" -I"$adapter" -I"$fport" -I"$selftest"
         -I"$here/libshield/include" -isystem "$kernel/include" -isystem "$cm3"
         -isystem "$lwip/src/include" -isystem "$lwip/contrib/ports/freertos/include"
         -isystem "$adapter/cm3")
cm3_flags=(-mcpu=cortex-m3 -mthumb -Os -ffunction-sections -fdata-sections)

check_sys_arch() { # COMPILER INCLUDES...: arch/sys_arch.h resolves to lwIP's FreeRTOS port
  local cc=$1
  shift
  local dep
  dep=$("$cc" -std=gnu11 "$@" -DNO_SYS=0 -M "$lwip/contrib/ports/freertos/sys_arch.c" 2>&1) || {
    echo "$dep" >&2; exit 1; }
  grep -q "contrib/ports/freertos/include/arch/sys_arch.h" <<<"$dep" && ! grep -q "ports/unix/port/include/arch/sys_arch.h" <<<"$dep" || {
    echo "lwip_build: arch/sys_arch.h does not resolve to lwIP's FreeRTOS port" >&2; exit 1; }
}

if [ "$mode" = build ]; then
  check_sys_arch gcc "${posix_inc[@]}"
  cc_one "$out/posix_rts_lwip.o" gcc "${warn[@]}" -O2 "${opts[@]}" "${posix_inc[@]}" -c "$adapter/rts_lwip.c"
  echo "lwip port: POSIX-port build OK (gcc, -Werror; arch/sys_arch.h from contrib/ports/freertos)"
  need_arm
  check_sys_arch arm-none-eabi-gcc "${cm3_flags[@]}" "${cm3_inc[@]}"
  cc_one "$out/cm3_rts_lwip.o" arm-none-eabi-gcc "${cm3_flags[@]}" -ffreestanding "${warn[@]}" "${cm3_inc[@]}" \
    -c "$adapter/rts_lwip.c"
  # No heap: the adapter takes FreeRTOS's and lwIP's API, libshield and its
  # FreeRTOS port, the compiler's helpers and memset/memcpy.
  bad=$(arm-none-eabi-nm -u "$out/cm3_rts_lwip.o" | awk '$1=="U"{print $2}' |
        grep -v -E '^(rts_[a-z0-9_]+|(x|v|ul|ux|pv|pc)[A-Z][A-Za-z0-9]+|(pbuf|tcpip|sys|lwip)_[a-z0-9_]+|__aeabi_[a-z0-9_]+|memset|memcpy)$' |
        sort -u || true)
  if [ -n "$bad" ]; then
    echo "lwip_build: the adapter uses symbols outside FreeRTOS, lwIP and libshield:" $bad >&2
    exit 1
  fi
  if arm-none-eabi-nm -u "$out/cm3_rts_lwip.o" | grep -q -E 'pvPortMalloc|malloc|mem_malloc'; then
    echo "lwip_build: the adapter allocates from a heap" >&2
    exit 1
  fi
  # The NO_SYS variant (bare metal) for Cortex-M3 too.
  cc_one "$out/cm3_nosys_rts_lwip.o" arm-none-eabi-gcc "${cm3_flags[@]}" -ffreestanding "${warn[@]}" -DNO_SYS=1 \
    -I"$adapter" -I"$here/libshield/include" -isystem "$lwip/src/include" -isystem "$adapter/cm3" \
    -c "$adapter/rts_lwip.c"
  # RAM: the adapter's state (one rts_lwip in the caller's storage), per variant.
  # (ram.c written only when its text differs: its objects stay up to date)
  ram_c='#include "rts_lwip.h"'$'\n''rts_lwip rts_lwip_ram;'
  [ "$(cat "$out/ram.c" 2>/dev/null)" = "$ram_c" ] || printf '%s\n' "$ram_c" >"$out/ram.c"
  cc_one "$out/cm3_ram.o" arm-none-eabi-gcc "${cm3_flags[@]}" "${cm3_inc[@]}" -c "$out/ram.c"
  cc_one "$out/cm3_nosys_ram.o" arm-none-eabi-gcc "${cm3_flags[@]}" -DNO_SYS=1 -I"$adapter" \
    -I"$here/libshield/include" -isystem "$lwip/src/include" -isystem "$adapter/cm3" -c "$out/ram.c"
  ram() { printf "%d" "0x$(arm-none-eabi-nm -S "$1" | awk '$4=="rts_lwip_ram" {print $2}')"; }
  ram_fr=$(ram "$out/cm3_ram.o")
  ram_nosys=$(ram "$out/cm3_nosys_ram.o")
  if [ "$fmt" = "--markdown" ]; then
    echo "| build | text (B) | data (B) | bss (B) | rts_lwip (B of caller RAM) |"
    echo "|---|---:|---:|---:|---:|"
    arm-none-eabi-size "$out/cm3_rts_lwip.o" "$out/cm3_nosys_rts_lwip.o" |
      awk -v fr="$ram_fr" -v ns="$ram_nosys" 'NR>1 { n=$6; r=fr; if (n ~ /nosys/) { n="NO_SYS 1 (main loop)"; r=ns } else n="NO_SYS 0 (FreeRTOS)";
                  printf "| %s | %d | %d | %d | %d |\n", n, $1, $2, $3, r }'
  else
    arm-none-eabi-size "$out/cm3_rts_lwip.o" "$out/cm3_nosys_rts_lwip.o"
    echo "rts_lwip: $ram_fr B (FreeRTOS), $ram_nosys B (NO_SYS)"
  fi
  echo "lwip port: Cortex-M3 build OK (arm-none-eabi-gcc -mcpu=cortex-m3 -mthumb -Werror, FreeRTOS and NO_SYS), no heap"
  exit 0
fi

# The test's variants: the network task, a global limit (frames per ms),
# and the stock path without libshield.
variants=(rx-task tcpip-thread rx-task-global stock)
variant_defs() { # VARIANT GLOBAL_CAP
  case $1 in
    rx-task) echo "-DTEST_TCPIP_THREAD=0" ;;
    tcpip-thread) echo "-DTEST_TCPIP_THREAD=1" ;;
    rx-task-global) echo "-DTEST_TCPIP_THREAD=0 -DTEST_GLOBAL_CAP=$2" ;;
    stock) echo "${stock_opts[*]}" ;;
  esac
}
# The stock path: lwIP as it ships (tcpip_input() queues each frame to
# tcpip_thread), the test's NIC without the adapter, no libshield.
stock_opts=(-DLWIP_TCPIP_CORE_LOCKING_INPUT=0 -DTN_NO_ADAPTER=1 -DTEST_STOCK=1)

# run_variants posix|cm3: build the test's four programs and run each.
run_variants() {
  local target=$1 cc cap flags inc third platform
  if [ "$target" = posix ]; then
    cc=gcc cap=20 flags=(-O2 -g -pthread) inc=("${posix_inc[@]}")
    third=("${kernel_srcs[@]}" "$posix/port.c" "$posix/utils/wait_for_event.c" "$kernel/portable/MemMang/heap_3.c")
    platform=("$selftest/main_posix.c")
  else
    cc=arm-none-eabi-gcc cap=6 flags=("${cm3_flags[@]}" -g) inc=("${cm3_inc[@]}")
    third=("${kernel_srcs[@]}" "$cm3/port.c" "$kernel/portable/MemMang/heap_4.c")
    platform=("$selftest/main_cm3.c" "$selftest/mps2_boot.c")
  fi
  # Third-party sources (kernel, port, heap, lwIP): their own dialect, no -Werror.
  objs=()
  cc_all "$out/t_" "$cc" "${flags[@]}" -std=gnu11 -w "${opts[@]}" "${inc[@]}" -- "${third[@]}"
  objs_of "$out/t_" "${third[@]}"
  cc_all "$out/p_" "$cc" "${flags[@]}" "${warn[@]}" "${opts[@]}" "${inc[@]}" -- "${platform[@]}"
  objs_of "$out/p_" "${platform[@]}"
  local common=("${objs[@]}")
  objs=()
  cc_all "$out/l_" "$cc" "${flags[@]}" -std=gnu11 -w "${opts[@]}" "${inc[@]}" -- "${lwip_srcs[@]}"
  objs_of "$out/l_" "${lwip_srcs[@]}"
  local s_srcs=("${lib_srcs[@]}" "$adapter/rts_lwip.c" "$adapter/test/test_nic.c")
  cc_all "$out/" "$cc" "${flags[@]}" "${warn[@]}" "${opts[@]}" "${inc[@]}" -- "${s_srcs[@]}"
  objs_of "$out/" "${s_srcs[@]}"
  local shielded=("${objs[@]}")
  objs=()
  cc_all "$out/s_" "$cc" "${flags[@]}" -std=gnu11 -w "${opts[@]}" "${stock_opts[@]}" "${inc[@]}" -- "${lwip_srcs[@]}"
  objs_of "$out/s_" "${lwip_srcs[@]}"
  cc_all "$out/s_" "$cc" "${flags[@]}" "${warn[@]}" "${opts[@]}" "${stock_opts[@]}" "${inc[@]}" -- \
    "$adapter/test/test_nic.c"
  objs_of "$out/s_" "$adapter/test/test_nic.c"
  local stock=("${objs[@]}")
  local v status=0
  for v in "${variants[@]}"; do
    local own=("${shielded[@]}")
    [ "$v" = stock ] && own=("${stock[@]}")
    # shellcheck disable=SC2046
    cc_one "$out/test_$v.o" "$cc" "${flags[@]}" "${warn[@]}" "${opts[@]}" $(variant_defs "$v" "$cap") "${inc[@]}" \
      -c "$adapter/test/test_lwip_freertos.c"
    if [ "$target" = posix ]; then
      gcc -pthread "${common[@]}" "${own[@]}" "$out/test_$v.o" -o "$out/lwip_freertos_$v"
      echo "lwip port: running lwIP on the FreeRTOS POSIX port ($v)"
      timeout 120 "$out/lwip_freertos_$v" || status=$?
    else
      local elf=$out/lwip_freertos_$v.elf
      arm-none-eabi-gcc "${cm3_flags[@]}" -nostartfiles --specs=nano.specs --specs=nosys.specs \
        -T "$selftest/mps2_an385.ld" -Wl,--gc-sections -Wl,-Map="${elf%.elf}.map" \
        "${common[@]}" "${own[@]}" "$out/test_$v.o" -o "$elf"
      arm-none-eabi-size "$elf"
      echo "lwip port: booting lwIP on FreeRTOS ($v) in qemu-system-arm -M mps2-an385"
      timeout 180 qemu-system-arm -M mps2-an385 -nographic -semihosting -monitor none \
        -serial none -nic none -icount shift=5 -kernel "$elf" || status=$?
    fi
    [ "$status" -eq 0 ] || return "$status"
  done
}

if [ "$mode" = posix-test ]; then
  [ -f "$posix/port.c" ] || skip "no POSIX port at $posix"
  run_variants posix
  exit 0
fi

if [ "$mode" = qemu-test ]; then
  need_arm
  command -v qemu-system-arm >/dev/null ||
    skip "qemu-system-arm not found (Debian package qemu-system-arm; tools/install.sh --test installs it)"
  [ -f "$cm3/port.c" ] || skip "no Cortex-M3 port at $cm3"
  run_variants cm3
  exit 0
fi

echo "lwip_build: unknown mode $mode (build, posix-test, qemu-test)" >&2
exit 2
