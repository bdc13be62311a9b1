#!/usr/bin/env bash
# A short flood against the MPS2 board's networked images: protected and
# unprotected (rts_mps2_device.elf), and stock (rts_mps2_stock.elf, the
# patched upstream interface, when it is beside ELF). Each runs in QEMU on a
# TAP device inside a network namespace of this script's own, with a paced
# UDP control flow and MODBUS/TCP polls from that namespace throughout, an
# hping3 SYN flood at its TCP listener in the middle, ping before and after.
# Root (namespaces, TAP devices).
#   tools/mps2_flood_smoke.sh ELF OUTDIR [FLOOD_SECONDS]
# ELF: tools/freertos_build.sh mps2-build's rts_mps2_device.elf. Writes
# OUTDIR/<variant>/{device.conf,console,stderr,device.json,cycles.bin,
# client.json,summary.json} and prints one line per variant; exit status 0
# when every check holds, 1 when one does not, 77 (skipped) without root or
# a tool. Checks, every variant: the image started, answered ping before the
# flood and again after it (the receive path recovered), the flood reached
# its NIC, the MODBUS/TCP polls were answered after the flood, the image
# ended by itself. "After the flood" is judged by the guest, not by a fixed
# wait: QEMU counts guest time by instructions, so on a busy host the guest
# falls behind and recovers later than the host stopped flooding; the polls
# go on until the image ends, ping is asked again until it answers, and the
# watchdog below bounds it all. Protected: the critical task missed no deadline (on the
# tick count and on the guest clock), every frame of the control flow the
# driver took from the NIC was delivered, the flood was dropped inside
# libshield (counted by reason). Unprotected and stock: libshield dropped
# nothing. Frames the emulated NIC itself dropped (its FIFO full) are
# counted apart: frames the host sent into the TAP minus the frames the
# driver took. QEMU and the clients are always stopped and the namespace
# (with its TAP) removed, also on SIGINT/SIGTERM and when the whole run
# exceeds its bound (60 s by default, RTS_SMOKE_LIMIT_S). RTS_SMOKE_VARIANTS
# names the variants to run (default "protected unprotected stock"; the rig's
# own smoke, `rtshield rig freertos-tcp --board mps2-an385`, runs the first two).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
elf=${1:?usage: mps2_flood_smoke.sh ELF OUTDIR [FLOOD_SECONDS]}
out=${2:?usage: mps2_flood_smoke.sh ELF OUTDIR [FLOOD_SECONDS]}
flood_s=${3:-3}
limit_s=${RTS_SMOKE_LIMIT_S:-60}

skip() { echo "mps2_flood_smoke: SKIPPED: $*" >&2; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces and TAP devices)"
for t in ip hping3 ping qemu-system-arm python3 timeout; do
  command -v "$t" >/dev/null || skip "$t not found (tools/install.sh --test installs it)"
done
[ -f "$elf" ] || { echo "mps2_flood_smoke: no image $elf (tools/freertos_build.sh mps2-build OUTDIR)" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
stock=$(dirname "$elf")/rts_mps2_stock.elf # the upstream interface's image, beside it

ns=rtsm$$
tap=rtsm$$t
dev_ip=198.18.0.1
host_ip=198.18.0.2
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
  ip netns del "$ns" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# The whole run is bounded: past the limit the watchdog stops it (cleanup runs).
(
  trap 'kill "$s" 2>/dev/null; exit 0' TERM
  sleep "$limit_s" &
  s=$!
  wait "$s"
  echo "mps2_flood_smoke: FAILED: over its ${limit_s} s bound" >&2
  kill -TERM $$
) &
watchdog=$!
pids+=("$watchdog")

# The clients, from the namespace: UDP control datagrams at 100 per second
# (sequence number and send time, as the rig's sender) and a MODBUS/TCP poll
# (Read Holding Registers 0..1) every 100 ms, each answer awaited 0.5 s. A
# poll's phase is the flood's as this script marks it (the files flood.start
# and flood.end, written around hping3), and the clients run until the image
# says "done" or ends (at most BOUND s): QEMU counts guest time by
# instructions (-icount), so on a busy host the guest falls behind the host
# and takes the flood, and recovers from it, later than the host sent it.
cat >"$out/client.py" <<'PY'
import json, os, socket, struct, sys, time
dst, bound, d, qemu = sys.argv[1], float(sys.argv[2]), sys.argv[3], int(sys.argv[4])
t0 = time.monotonic()
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
req = bytes.fromhex("000100000006010300000002")
want = bytes.fromhex("00010000000701030400000001")
sent = 0
polls = {"before": [0, 0], "flood": [0, 0], "after": [0, 0]}  # [sent, answered]
m = None
next_udp = next_poll = t0
console, seen = open(os.path.join(d, "console"), "rb"), b""

def device_done():
    global seen
    seen = (seen + console.read())[-4096:]
    try:
        os.kill(qemu, 0)
    except OSError:
        return True  # ended (its own checks say how)
    return b"\ndone" in b"\n" + seen

while (now := time.monotonic()) - t0 < bound:
    if now >= next_udp:
        u.sendto(struct.pack("<QQ", sent, time.monotonic_ns()), (dst, 5000))
        sent += 1
        next_udp = max(next_udp + 0.01, now)  # late (a busy host): no catch-up burst
    if now >= next_poll:
        if device_done():
            break
        next_poll = max(next_poll + 0.1, now)
        ph = ("after" if os.path.exists(os.path.join(d, "flood.end")) else
              "flood" if os.path.exists(os.path.join(d, "flood.start")) else "before")
        polls[ph][0] += 1
        try:
            if m is None:
                m = socket.create_connection((dst, 5020), timeout=0.5)
            m.settimeout(0.5)
            m.sendall(req)
            got = b""
            while len(got) < len(want):
                chunk = m.recv(len(want) - len(got))
                if not chunk:
                    raise OSError("closed")
                got += chunk
            polls[ph][1] += got == want
        except OSError:
            if m is not None:
                m.close()
            m = None
    time.sleep(max(0.0, min(next_udp, next_poll) - time.monotonic()))
print(json.dumps({"udp_sent": sent, "polls": polls}))
PY

in_ns() { ip netns exec "$ns" "$@"; }
tap_tx() { in_ns cat "/sys/class/net/$tap/statistics/tx_packets"; }
pings() { { in_ns ping -c 3 -i 0.2 -W 1 "$dev_ip" 2>/dev/null || true; } | sed -n 's/.* \([0-9]*\) received.*/\1/p'; }

status=0
run_variant() {
  local v=$1 p=1 image=$elf
  [ "$v" = protected ] || p=0
  [ "$v" = stock ] && image=$stock
  local d=$out/$v
  rm -rf "$d"
  mkdir -p "$d"
  local idle_s=1 after_s=3
  local seconds=$((idle_s + flood_s + after_s + 1))
  {
    echo "# $v, written by tools/mps2_flood_smoke.sh"
    echo "ifname lan9118"
    echo "mac 02:00:00:77:00:01"
    echo "ip $dev_ip"
    echo "netmask 255.255.255.0"
    echo "protect $p"
    echo "seconds $seconds"
    echo "out $d"
    echo "crit_period_us 10000"
    echo "crit_work_us 2000"
    echo "crit_prio 4"
    if [ $p = 1 ]; then
      echo "net_prio 1"
      # The global limit: on this NIC every frame is copied out of the chip
      # in the interrupt (programmed I/O), so only switching the interrupt
      # off bounds that work (docs/decisions/mps2-board.md).
      echo "global_capacity ${RTS_SMOKE_GLOBAL_CAPACITY:-40}"
      echo "global_period_us ${RTS_SMOKE_GLOBAL_PERIOD_US:-10000}"
      echo "flow hp udp 5000 5 50 25000 0 5 50"
      echo "flow plc modbus 5020 3 20 10000 0 3 50"
      echo "flow syn_flood tcp 502 0 5 10000 0 1 0"
    else
      echo "net_prio 6"
      echo "flow hp udp 5000 5 0 0 0 5 50"
      echo "flow plc modbus 5020 3 0 0 0 3 50"
      echo "flow syn_flood tcp 502 0 0 0 0 1 0"
    fi
  } >"$d/device.conf"
  ip netns add "$ns"
  in_ns ip link set lo up
  in_ns ip tuntap add dev "$tap" mode tap
  in_ns sysctl -q -w "net.ipv6.conf.$tap.disable_ipv6=1"
  in_ns ip addr add "$host_ip/24" dev "$tap"
  in_ns ip link set "$tap" up
  ip netns exec "$ns" "$here/tools/mps2_run.sh" "$image" "$d/device.conf" \
    -nic "tap,ifname=$tap,script=no,downscript=no" >"$d/console" 2>"$d/stderr" &
  local qemu=$!
  pids+=("$qemu")
  local i
  for i in $(seq 150); do grep -q '^ready' "$d/console" && break; sleep 0.1; done
  if ! grep -q '^ready' "$d/console"; then
    echo "mps2_flood_smoke $v: FAILED: the image never said ready: $(tail -1 "$d/stderr")" >&2
    status=1
    kill "$qemu" 2>/dev/null || true
    wait "$qemu" 2>/dev/null || true
    ip netns del "$ns"
    pids=("$watchdog")
    return
  fi
  local tx0 ping0 ping1 tx1 rc=0
  tx0=$(tap_tx)
  ip netns exec "$ns" python3 "$out/client.py" "$dev_ip" "$limit_s" "$d" "$qemu" >"$d/client.json" &
  local client=$!
  pids+=("$client")
  ping0=$(pings)
  sleep "$idle_s"
  touch "$d/flood.start"
  in_ns timeout "$flood_s" hping3 --flood -S -p 502 "$dev_ip" >"$d/hping3.log" 2>&1 || true
  touch "$d/flood.end"
  sleep 1
  # Answered once the guest has worked through the flood (later on a busy
  # host, above): asked again until it is, while the image runs.
  ping1=0
  while :; do
    ping1=$(pings)
    [ "${ping1:-0}" -ge 1 ] && break
    grep -q '^done' "$d/console" && break
    kill -0 "$qemu" 2>/dev/null || break
  done
  wait "$client" || true
  tx1=$(tap_tx)
  # The image ends by itself after its seconds of guest time; the watchdog
  # bounds the wait.
  tail --pid="$qemu" -f /dev/null
  wait "$qemu" || rc=$?
  ip netns del "$ns"
  python3 - "$d" "$v" "$rc" "${ping0:-0}" "${ping1:-0}" $((tx1 - tx0)) <<'PY' || status=1
import json, pathlib, sys
d, v, rc, ping0, ping1, tap_frames = pathlib.Path(sys.argv[1]), sys.argv[2], *map(int, sys.argv[3:])
console = (d / "console").read_text()
try:
    dev = json.loads((d / "device.json").read_text())
    client = json.loads((d / "client.json").read_text())
except (OSError, ValueError) as e:
    print(f"mps2_flood_smoke {v}: FAILED: no results ({e}); exit status {rc}", file=sys.stderr)
    sys.exit(1)
nif = dev["netif"]
hp = dev["flows"]["hp"]
reasons = ["none", "limiter", "short_circuit", "flow_server", "queue_full", "global_limit"]
drops = {r: n for r, n in zip(reasons, dev["shield_drops"]) if r != "none"}
polls = client["polls"]
summary = {
    "variant": v,
    "exit_status": rc,
    "ping_before": ping0,
    "ping_after": ping1,
    "tap_frames_into_qemu": tap_frames,
    "nic_frames": nif["nic_frames"],
    "emulated_nic_dropped": max(0, tap_frames - nif["nic_frames"]),
    "ring_full": nif["ring_full"],
    "shield_drops": drops,
    "stack_exhausted": nif["stack_exhausted"],
    "to_ip_task": nif["to_ip_task"],
    "critical": {"cycles": dev["cycles"], "misses": dev["misses"], "late_on_clock": dev["late_on_clock"]},
    "ticks_lost": round((dev["ns_end"] - dev["ns_ready"]) / 1e6) - (dev["ticks_end"] - dev["ticks_ready"]),
    "hp": {"sent": client["udp_sent"], "delivered": hp["delivered"], "taken_by_driver": hp.get("shield", {}).get("frames")},
    "modbus_polls": polls,
    "shield_paths": dev["shield_paths"],
}
checks = {
    "the image ended by itself (exit 0, done)": rc == 0 and "done" in console,
    "ping answered before the flood": ping0 == 3,
    "ping answered after the flood (the receive path recovered)": ping1 >= 1,
    "the flood reached the NIC": nif["nic_frames"] > 1000,
    "MODBUS/TCP polls answered after the flood": polls["after"][1] > 0,
}
if v == "protected":
    checks["the critical task missed no deadline (tick count and guest clock)"] = (
        dev["misses"] == 0 and dev["late_on_clock"] == 0)
    checks["every control frame the driver took was delivered"] = (
        hp["shield"]["frames"] > 0 and hp["delivered"] == hp["shield"]["frames"])
    checks["the flood was dropped inside libshield, by reason"] = drops["flow_server"] + drops["short_circuit"] > 1000
else:  # unprotected (rts_netif's stock path) and stock (the upstream interface)
    checks["libshield dropped nothing"] = sum(drops.values()) == 0 and nif["shield_frames"] == 0
summary["checks"] = checks
(d / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
bad = [k for k, ok in checks.items() if not ok]
for k in bad:
    print(f"mps2_flood_smoke {v}: FAILED: {k}", file=sys.stderr)
print(f"mps2_flood_smoke {v}: {len(checks) - len(bad)}/{len(checks)} checks hold: "
      f"NIC {nif['nic_frames']} frames (emulated NIC dropped {summary['emulated_nic_dropped']}, ring full "
      f"{nif['ring_full']}), libshield dropped {sum(drops.values())} {drops}, stack exhausted "
      f"{nif['stack_exhausted']}, critical {dev['cycles']} cycles {dev['misses']} misses "
      f"({dev['late_on_clock']} late on the guest clock), ticks lost "
      f"{summary['ticks_lost']}, hp {hp['delivered']}/{client['udp_sent']} sent, MODBUS answered "
      f"{polls['before'][1]}/{polls['before'][0]} {polls['flood'][1]}/{polls['flood'][0]} "
      f"{polls['after'][1]}/{polls['after'][0]} (before/flood/after), ping {ping0}/3 then {ping1}/3")
sys.exit(1 if bad else 0)
PY
  pids=("$watchdog")
}

for v in ${RTS_SMOKE_VARIANTS:-protected unprotected stock}; do
  case $v in
    protected|unprotected) run_variant "$v" ;;
    stock) [ -f "$stock" ] && run_variant stock ;;
    *) echo "mps2_flood_smoke: unknown variant $v in RTS_SMOKE_VARIANTS (protected, unprotected, stock)" >&2; exit 2 ;;
  esac
done
exit "$status"
