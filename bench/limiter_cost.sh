#!/usr/bin/env bash
# Instructions per decision of each interrupt limiter (issue 13: at most 20
# each), counted by callgrind on the host inside the library function.
#   bench/limiter_cost.sh          print the table (markdown)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out="$here/build/bench-limiters"
n=10000
mkdir -p "$out"
command -v valgrind >/dev/null || { echo "limiter_cost: valgrind not found (Debian package valgrind)" >&2; exit 1; }
cc=${CC:-cc}
"$cc" -std=c11 -O2 -g -I"$here/libshield/include" -o "$out/limiter_cost" "$here/bench/limiter_cost.c" \
  "$here"/libshield/src/*.c
echo "| decision | function | instructions per call |"
echo "|---|---|---:|"
while read -r sc fn; do
  valgrind --tool=callgrind --callgrind-out-file="$out/cg.$sc" --toggle-collect="$fn" \
    "$out/limiter_cost" "$sc" "$n" >/dev/null 2>"$out/cg.$sc.log"
  ir=$(awk '/^summary:/ {print $2}' "$out/cg.$sc")
  [ -n "$ir" ] || { echo "limiter_cost: no summary for $sc" >&2; exit 1; }
  echo "| $sc | \`$fn\` | $(( (ir + n / 2) / n )) |"
done <<'LIST'
strict_admit rts_strict_on_irq_isr
bursty_admit rts_bursty_on_irq_isr
burst_admit rts_burst_mit_on_rx_isr
burst_refuse rts_burst_mit_on_rx_isr
countdown_pass rts_countdown_on_arrival_isr
glim_admit rts_global_limit_admit_isr
flow_admit rts_flow_table_admit_isr
queue_fail rts_queue_mit_on_enqueue_fail_isr
LIST
