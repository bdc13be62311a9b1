#!/usr/bin/env bash
# Instructions per decision of each interrupt limiter (issue 13: at most 20
# each), counted by callgrind on the host inside the library function.
#   bench/limiter_cost.sh          print the table (markdown)
. "$(dirname "$0")/common.sh"
bench_out bench-limiters
n=10000
need_valgrind
"$cc" -std=c11 -O2 -g -I"$here/libshield/include" -o "$out/limiter_cost" "$here/bench/limiter_cost.c" \
  "$here"/libshield/src/*.c
echo "| decision | function | instructions per call |"
echo "|---|---|---:|"
while read -r sc fn; do
  valgrind --tool=callgrind --callgrind-out-file="$out/cg.$sc" --toggle-collect="$fn" \
    "$out/limiter_cost" "$sc" "$n" >/dev/null 2>"$out/cg.$sc.log"
  ir=$(callgrind_ir "$out/cg.$sc" "$sc")
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
