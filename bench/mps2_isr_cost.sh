#!/usr/bin/env bash
# Instructions per frame of libshield's receive path on the MPS2 board
# (Cortex-M3 in QEMU): each path's time inside the per-frame hook
# (rts_freertos_shield_frame_isr(), called by the LAN9118 interface's RX
# interrupt) as the image measured it on the board's 25 MHz timer, under
# QEMU's -icount, where guest time is instructions x 2^shift ns.
#   bench/mps2_isr_cost.sh            shift=7 (128 ns per instruction: the
#                                     timer's 40 ns tick is a third of one)
#   RTS_MPS2_BENCH_ICOUNT=shift=6,sleep=off bench/mps2_isr_cost.sh
# Prints a markdown table (bench/RESULTS.md quotes it). Needs
# arm-none-eabi-gcc, qemu-system-arm and the FreeRTOS trees
# (tools/freertos_build.sh mps2-bench builds and boots the image).
. "$(dirname "$0")/common.sh"
bench_out bench-mps2
icount=${RTS_MPS2_BENCH_ICOUNT:-shift=7,sleep=off}
shift_n=$(sed -n 's/.*shift=\([0-9]*\).*/\1/p' <<<"$icount")
[ -n "$shift_n" ] || { echo "mps2_isr_cost: RTS_MPS2_BENCH_ICOUNT needs shift=N: $icount" >&2; exit 2; }
log=$out/mps2-bench.log
RTS_MPS2_BENCH_ICOUNT=$icount "$here/tools/freertos_build.sh" mps2-bench "$out" >"$log" 2>&1 || {
  rc=$?
  [ "$rc" -eq 77 ] && { tail -1 "$log" >&2; exit 77; }
  echo "mps2_isr_cost: the benchmark image failed (exit $rc):" >&2
  grep -v '^t_\|^ ' "$log" | tail -20 >&2
  exit 1
}
grep -q '^rts mps2 bench: OK' "$log" || { echo "mps2_isr_cost: no result in $log" >&2; exit 1; }
commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)
awk -v shift="$shift_n" -v commit="$commit" -v icount="$icount" '
  /^clock_read_ns / { clock = $2 }
  /^path / { name = $2; frames = $4 }
  /^path_ns / {
    if (frames > 0) { n[name] = frames; ns[name] = $2; order[++k] = name }
  }
  /^copy frames / { copy_n = $3 }
  /^copy words / { copy_w = $3 }
  /^copy_ns / { copy_ns = $2 }
  /^isr runs / { isr_n = $3 }
  /^isr_ns / { isr_ns = $2 }
  /^shield_ns / { shield_ns = $2 }
  END {
    per = 2 ^ shift
    label["enqueue"] = "enqueue (queued, the network task not raised)"
    label["raise"] = "high-priority delivery (queued, the network task raised)"
    label["recycle"] = "recycle (queued, a lower-priority queued buffer recycled, path (c))"
    label["short_circuit"] = "short circuit (path (a))"
    label["flow_limit"] = "drop: flow server exhausted (path (b))"
    label["queue_full"] = "drop: flow queue full"
    printf "Cortex-M3 (arm-none-eabi-gcc -Os), QEMU mps2-an385 -icount %s (%d ns per instruction), commit %s; the clock read around the hook (%d ns, %.1f instructions) subtracted.\n\n", icount, per, commit, clock, clock / per
    print "| path | frames | instructions per frame |"
    print "|---|---:|---:|"
    for (i = 1; i <= k; i++) {
      p = order[i]
      printf "| %s | %d | %.0f |\n", label[p], n[p], (ns[p] / n[p] - clock) / per
    }
    # The interrupt around the hook (rts_netif_mps2.c): each frame moved out of the
    # LAN9118 RX FIFO into a slot (status word, smsc9220_receive_by_chunks, the slot
    # filled), one clock read subtracted as for the hook; and each run of the handler
    # less its copies and hook, less the clock reads those two measurements add to it
    # (two a frame, one for the handler itself).
    printf "\n| interrupt handler (Ethernet IRQ 13) | count | instructions |\n|---|---:|---:|\n"
    printf "| FIFO copy, per frame (status word, smsc9220_receive_by_chunks, slot filled) | %d | %.0f |\n", copy_n, (copy_ns / copy_n - clock) / per
    shield_n = 0
    for (i = 1; i <= k; i++) shield_n += n[order[i]]
    rest = (isr_ns - copy_ns - shield_ns) / isr_n - (2 * copy_n / isr_n + 1) * clock
    printf "| the rest of a run (clear, line check, hand-over, re-pend), per run | %d | %.0f |\n", isr_n, rest / per
    printf "| frames per run (mean) | | %.2f |\n", copy_n / isr_n
    printf "| FIFO words per frame (mean, frame and FCS) | | %.1f |\n", copy_w / copy_n
  }' "$log"
