#!/usr/bin/env bash
# Instructions per packet of the receive path's ISR half (classify +
# enqueue), counted by callgrind on the host, written to docs/rx-isr-cost.md.
#   bench/rx_isr_cost.sh            measure and rewrite the results file
#   bench/rx_isr_cost.sh --print    measure and print only
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out="$here/build/bench-rx"
n=10000
mkdir -p "$out"
command -v valgrind >/dev/null || { echo "rx_isr_cost: valgrind not found (Debian package valgrind)" >&2; exit 1; }
cc=${CC:-cc}
cflags=(-std=c11 -O2 -g -I"$here/libshield/include")
"$cc" "${cflags[@]}" -o "$out/rx_isr_cost" "$here/bench/rx_isr_cost.c" "$here"/libshield/src/*.c
rows=()
for sc in udp_registered short_circuit classify descriptor; do
  fn="path_$sc"
  valgrind --tool=callgrind --callgrind-out-file="$out/cg.$sc" --toggle-collect="$fn" \
    "$out/rx_isr_cost" "$sc" "$n" >/dev/null 2>"$out/cg.$sc.log"
  ir=$(awk '/^summary:/ {print $2}' "$out/cg.$sc")
  [ -n "$ir" ] || { echo "rx_isr_cost: no summary for $sc" >&2; exit 1; }
  per=$(( (ir + n / 2) / n ))
  rows+=("| $sc | $per |")
done
commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)
ccv=$("$cc" --version | head -1)
cpu=$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null || uname -m)
table=$(printf '%s\n' "| scenario | instructions per packet |" "|---|---:|" "${rows[@]}")
if [ "${1:-}" = "--print" ]; then
  echo "$table"
  exit 0
fi
cat >"$here/docs/rx-isr-cost.md" <<MD
# Receive path: instructions per packet in the ISR

Measured by \`bench/rx_isr_cost.sh\` with \`valgrind --tool=callgrind\`
(instructions executed, inclusive, inside one per-packet function, averaged
over $n packets). Host build, \`$cc -O2\` ($ccv), $cpu, commit $commit,
default options (\`RTS_FLOW_MAX\` 16, 8 bound sockets + the target), no port
cache hook (the cache invalidation itself is the platform's cost).

$table

- **udp_registered**: \`rts_rx_eager_isr()\` for a UDP frame to a bound port:
  global-limit check, ring take, classification (Ethernet, IPv4 checks, UDP
  ports, one pass over the flow table), server admit, enqueue, priority raise.
- **short_circuit**: the same call for a lowest-priority frame while the ring
  is below its threshold: classification, then path (a) of Behnke et al.
  Figure 8 (the buffer goes straight back to the ring).
- **classify**: \`rts_classify_isr()\` alone on the registered-UDP frame.
- **descriptor**: \`rts_rx_eager_desc_isr()\`, the unified design of Behnke
  §9 where the NIC descriptor carries flow and priority.

Instruction counts are a host proxy: on a Cortex-M3 or Cortex-A9 the cycle
count also depends on memory wait states and on the header cache
invalidation, which Behnke et al. measured at 1.62 µs (short circuit) and
1.75 µs (enqueue) without and 4.4 µs with eager invalidation on a Zynq-7000.
MD
echo "$table"
echo "wrote docs/rx-isr-cost.md"
