"""An independent SimPy model of the Danicki et al. device, for benchmarking.

This is the reference the engine is timed against (issue 13, item 1). It
implements the semantics of docs/model.md for the configurations of
Danicki et al. §3 that use an edge NIC and either no mitigation or Queue
Mitigation, with its own code: nothing here imports rtshield.

The device (one core; the ESP32's second core runs nothing in these runs):

- **Edge NIC.** Each arriving packet asserts the RX line. The line has a
  pending bit: an assertion while it is already set is lost (dropped as
  ``line_disabled`` when the line is off, else ``irq_overrun``); otherwise
  the packet is latched with the pending bit and rides with the interrupt.
- **Interrupts.** No nesting. When the running handler ends, the lowest
  pending and enabled line runs next (line 0, the RTOS tick, before the RX
  line); only when none is left does a task run again. The pending bit is
  cleared when the handler starts. An RX handler costs ``isr_entry_exit +
  isr_per_packet``; its effects (the enqueue, Queue Mitigation's reaction
  to a full queue, waking the driver) take place when it ends.
- **RTOS tick** every ``tick``, costing ``isr_entry_exit + tick_isr``; with
  time slicing, a tick moves the interrupted task behind the other ready
  tasks of its priority.
- **Scheduler** (FreeRTOS): fixed priorities, higher number wins, a task
  made ready goes to the back of its priority's list, a higher-priority
  task preempts at once (after the running handler), equals do not.
- **Critical task**: ``work`` of CPU time per period ``P``, released at
  0, P, 2P ...; finished early it sleeps until its next release; finished
  at or after its deadline it counts a miss and starts its next cycle at
  once with a deadline one period later.
- **Driver task**: takes one packet from the driver queue when it gets the
  CPU, works ``driver_per_packet`` (+ ``mitigation_driver`` with Queue
  Mitigation) on it, repeats; blocks on an empty queue and is woken by the
  RX handler.
- **Queue Mitigation**: a failed enqueue drops the packet and disables the
  RX line (once); the driver re-enables it after it finished a packet and
  found the queue empty.

Event order at equal times follows docs/model.md (end of the running
activity, then tick, then packet arrival, then task release); "kick the
core after every event" is a SimPy interrupt, which SimPy processes before
any other event of the same instant. The custom priorities are passed to
``Environment.schedule``, as ``simpy.Timeout`` itself does.

Traffic: evenly spaced arrivals per rate step, the fractional nanoseconds
of the gap carried over, a gap never reaching into the next step (the
pyramid restarts at each change point), as docs/model.md "Traffic" says.

    python bench/simpy_danicki.py scenarios/danicki2021/queue_500.toml
"""

from __future__ import annotations

import re
import sys
from collections import deque
from dataclasses import dataclass
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

import simpy

REPO = Path(__file__).resolve().parent.parent
PRESETS = REPO / "python" / "rtshield" / "platforms"

# Event priorities at equal times (docs/model.md, "Time and events").
# simpy.Timeout uses NORMAL (1): the end of the running ISR or task job.
P_TICK = 4
P_ARRIVAL = 5
P_RELEASE = 6

INF = float("inf")


# ----------------------------------------------------------------- parameters

_UNITS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


def duration_ns(v) -> int:
    """'10ms' -> 10_000_000 (integer nanoseconds)."""
    m = re.fullmatch(r"\s*([0-9_.]+)\s*(ns|us|µs|ms|s)\s*", str(v))
    if not m:
        raise ValueError(f"not a duration: {v!r}")
    return round(float(m.group(1).replace("_", "")) * _UNITS[m.group(2)])


def rate_pps(v) -> float:
    m = re.fullmatch(r"\s*([0-9_.]+)\s*pps\s*", str(v))
    if not m:
        raise ValueError(f"not a rate: {v!r}")
    return float(m.group(1).replace("_", ""))


@dataclass
class Params:
    name: str
    duration: int
    tick: int
    tick_isr: int
    isr_entry_exit: int
    isr_per_packet: int
    driver_per_packet: int
    mitigation_driver: int
    time_slicing: bool
    period: int
    work: int
    critical_prio: int
    offset: int
    driver_prio: int
    queue: int
    mitigation: str  # "none" or "queue"
    flows: list  # dicts: pattern, start_ns, start/peak/step pps, step_every, rate


def load_params(scenario: str | Path) -> Params:
    """Read a Danicki scenario file and its platform preset (TOML)."""
    sc = tomllib.loads(Path(scenario).read_text())
    meta = sc["scenario"]
    preset = tomllib.loads((PRESETS / f"{meta['platform']}.toml").read_text())
    plat, costs, dflt = preset["platform"], preset["costs"], preset.get("defaults", {})

    def sect(name):
        d = dict(dflt.get(name, {}))
        d.update(sc.get(name, {}))
        return d

    crit, drv, nic, mit = sect("critical"), sect("driver"), sect("nic"), sect("mitigation")
    if nic.get("kind", "edge") != "edge":
        raise ValueError("this model has the edge NIC only")
    kind = mit.get("kind", "none")
    if kind not in ("none", "queue"):
        raise ValueError(f"this model has no {kind!r} mitigation (none, queue)")
    if sc.get("tasks") or sc.get("rx") or sc.get("sources"):
        raise ValueError("this model has the critical task and the driver only")
    c = dict(costs)
    c.update(sc.get("costs", {}))
    flows = []
    for f in sc.get("flows", []):
        fl = {
            "pattern": f.get("pattern", "constant"),
            "start_ns": duration_ns(f.get("begin", "0s")),
        }
        if fl["pattern"] == "pyramid":
            fl.update(
                start=rate_pps(f.get("start", "0pps")),
                peak=rate_pps(f["peak"]),
                step=rate_pps(f["step"]),
                every=duration_ns(f["step_every"]),
            )
        elif fl["pattern"] == "constant":
            fl["rate"] = rate_pps(f["rate"])
        else:
            raise ValueError(f"pattern {fl['pattern']!r}: this model has pyramid and constant")
        flows.append(fl)
    return Params(
        name=meta["name"],
        duration=duration_ns(meta["duration"]),
        tick=duration_ns(plat["tick"]),
        tick_isr=duration_ns(plat["tick_isr"]),
        isr_entry_exit=duration_ns(c["isr_entry_exit"]),
        isr_per_packet=duration_ns(c["isr_per_packet"]),
        driver_per_packet=duration_ns(c["driver_per_packet"]),
        mitigation_driver=duration_ns(c["mitigation_driver"]) if kind == "queue" else 0,
        time_slicing=bool(plat.get("time_slicing", True)),
        period=duration_ns(crit["period"]),
        work=duration_ns(crit["work"]),
        critical_prio=int(crit["priority"]),
        offset=duration_ns(crit.get("offset", "0s")),
        driver_prio=int(drv["priority"]),
        queue=int(drv["queue"]),
        mitigation=kind,
        flows=flows,
    )


# -------------------------------------------------------------------- traffic


class Traffic:
    """Arrival times of one flow (docs/model.md "Traffic"), in integer ns."""

    def __init__(self, f: dict):
        self.f = f
        self.frac = 0.0
        self.steps = 0
        if f["pattern"] == "pyramid" and f["step"] > 0 and f["peak"] > f["start"]:
            n = (f["peak"] - f["start"]) / f["step"]
            k = int(n)
            self.steps = k + 1 if k < n else k

    def rate(self, t: int) -> float:
        f = self.f
        if t < f["start_ns"]:
            return 0.0
        if f["pattern"] == "constant":
            return f["rate"]
        k = (t - f["start_ns"]) // f["every"]
        n = self.steps
        up = k if k <= n else (2 * n - k if k <= 2 * n else 0)
        return min(f["start"] + float(up) * f["step"], f["peak"])

    def change_after(self, t: int) -> float:
        f = self.f
        if t < f["start_ns"]:
            return f["start_ns"]
        if f["pattern"] != "pyramid":
            return INF
        k = (t - f["start_ns"]) // f["every"] + 1
        return INF if k > 2 * self.steps + 1 else f["start_ns"] + k * f["every"]

    def next_after(self, t: int) -> float:
        while True:
            r = self.rate(t)
            if r <= 0.0:
                nc = self.change_after(t)
                if nc == INF:
                    return INF
                t, self.frac = nc, 0.0
                continue
            gap = 1e9 / r + self.frac
            whole = max(int(gap), 1)
            nc = self.change_after(t)
            if t + whole > nc:  # the new rate starts afresh at the change point
                t, self.frac = nc, 0.0
                continue
            self.frac = gap - float(int(gap))
            return t + whole


# --------------------------------------------------------------------- device


class _At(simpy.events.Event):
    """A timeout with an explicit priority among events of the same instant."""

    def __init__(self, env, delay, priority):
        super().__init__(env)
        self._ok = True
        self._value = None
        env.schedule(self, priority, delay)


class Task:
    __slots__ = (
        "name",
        "prio",
        "ready",
        "seq",
        "remaining",
        "kind",
        "release",
        "deadline",
        "has_packet",
    )

    def __init__(self, name, prio, kind):
        self.name, self.prio, self.kind = name, prio, kind
        self.ready = False
        self.seq = 0
        self.remaining = 0
        self.release = self.deadline = 0
        self.has_packet = False


class Device:
    """The simulated ESP32 core 0: NIC line, ISRs, scheduler, two tasks."""

    def __init__(self, p: Params):
        self.p = p
        self.env = env = simpy.Environment()
        self.c = dict(
            offered=0,
            irq_raised=0,
            irq_lost=0,
            isr_runs=0,
            received=0,
            processed=0,
            delivered=0,
            line_disabled=0,
            irq_overrun=0,
            queue_full=0,
            cycles=0,
            misses=0,
            lateness_pct=0.0,
            line_disables=0,
            line_enables=0,
        )
        # interrupt lines of the core
        self.rx_enabled = True
        self.rx_pending = False
        self.rx_latched = 0  # arrival time of the packet riding with the pending interrupt
        self.tick_pending = False
        self.isr_pkt = 0
        self.line_off = False  # Queue Mitigation holds the line
        self.rxq: deque = deque()
        self.seq = 0
        self.critical = Task("critical", p.critical_prio, "periodic")
        self.driver = Task("driver", p.driver_prio, "driver")
        self.tasks = [self.critical, self.driver]
        self.cur = None  # task that had the CPU last (kept across an ISR)
        self.rotate = False
        # what the CPU process is doing: "isr", "task", "idle"
        self.doing = "idle"
        self.wake = None
        self.kicking = False
        self.critical.release = p.offset
        self.critical.deadline = p.offset + p.period
        self.critical.remaining = p.work
        self.cpu = env.process(self._cpu())
        if p.tick > 0:
            env.process(self._ticks())
        env.process(self._releases_first())
        for f in p.flows:
            env.process(self._arrivals(Traffic(f)))

    # ---- scheduler
    def _ready(self, t: Task):
        if not t.ready:
            t.ready = True
            self.seq += 1
            t.seq = self.seq

    def _pick(self):
        best = None
        for t in self.tasks:
            if t.ready and (
                best is None or t.prio > best.prio or (t.prio == best.prio and t.seq < best.seq)
            ):
                best = t
        return best

    def _kick(self):
        """Something changed outside the CPU process: preempt or wake it."""
        if self.doing == "isr":
            return  # no nesting: the dispatch happens when the handler ends
        if self.doing == "idle":
            if self.wake is not None and not self.wake.triggered:
                self.wake.succeed()
            return
        if self.kicking:
            return
        run = self.cur
        if (self.tick_pending or (self.rx_pending and self.rx_enabled)) or any(
            t.ready and t.prio > run.prio for t in self.tasks
        ):
            self.kicking = True
            self.cpu.interrupt()

    # ---- external events
    def _ticks(self):
        env, tick = self.env, self.p.tick
        t = tick
        while True:
            yield _At(env, t - env.now, P_TICK)
            self.tick_pending = True
            self._kick()
            t += tick

    def _releases_first(self):
        yield _At(self.env, self.p.offset, P_RELEASE)
        self._ready(self.critical)
        self._kick()

    def _release_at(self, when):
        yield _At(self.env, when - self.env.now, P_RELEASE)
        self._ready(self.critical)
        self._kick()

    def _arrivals(self, tr: Traffic):
        env, c, end = self.env, self.c, self.p.duration
        t = tr.next_after(0)
        while t < end:
            yield _At(env, t - env.now, P_ARRIVAL)
            c["offered"] += 1
            c["irq_raised"] += 1
            if self.rx_pending:
                c["irq_lost"] += 1
                c["irq_overrun" if self.rx_enabled else "line_disabled"] += 1
            else:
                self.rx_pending = True
                self.rx_latched = t
                self._kick()
            t = tr.next_after(t)

    # ---- the core
    def _set_rx(self, on: bool):
        if on != self.rx_enabled:
            self.rx_enabled = on
            self.c["line_enables" if on else "line_disables"] += 1

    def _rx_isr_end(self):
        c = self.c
        c["received"] += 1
        if len(self.rxq) >= self.p.queue:
            c["queue_full"] += 1
            if self.p.mitigation == "queue" and not self.line_off:
                self.line_off = True
                self._set_rx(False)
            return
        self.rxq.append(self.isr_pkt)
        self._ready(self.driver)

    def _tick_isr_end(self):
        cur = self.cur
        if not self.p.time_slicing or cur is None or not cur.ready:
            return
        if any(t is not cur and t.ready and t.prio == cur.prio for t in self.tasks):
            self.rotate = True

    def _task_done(self, t: Task):
        env, p, c = self.env, self.p, self.c
        now = env.now
        if t is self.critical:
            earliness = t.deadline - now
            c["cycles"] += 1
            if earliness < 0:
                c["misses"] += 1
                c["lateness_pct"] += -earliness * 100.0 / p.period
            t.remaining = p.work
            if earliness > 0:  # early: sleep until the next period
                t.release = t.deadline
                t.deadline = t.release + p.period
                t.ready = False
                env.process(self._release_at(t.release))
            else:  # on time or late: the next cycle starts at once
                t.release = now
                t.deadline = now + p.period
        else:  # driver: one packet processed and delivered
            t.has_packet = False
            c["processed"] += 1
            c["delivered"] += 1
            if self.line_off and not self.rxq:  # Queue Mitigation: drained
                self.line_off = False
                self._set_rx(True)

    def _begin(self, t: Task) -> bool:
        """The task gets the CPU: the driver takes its next packet now."""
        if t is self.driver and not t.has_packet:
            if not self.rxq:
                t.ready = False
                return False
            self.rxq.popleft()
            t.has_packet = True
            t.remaining = self.p.driver_per_packet + self.p.mitigation_driver
        return True

    def _cpu(self):
        env, p, c = self.env, self.p, self.c
        isr_tick = p.isr_entry_exit + p.tick_isr
        isr_rx = p.isr_entry_exit + p.isr_per_packet
        while True:
            # interrupts first: the lowest pending enabled line
            if self.tick_pending:
                self.tick_pending = False
                self.doing = "isr"
                yield env.timeout(isr_tick)
                self._tick_isr_end()
                continue
            if self.rx_pending and self.rx_enabled:
                self.rx_pending = False
                self.isr_pkt = self.rx_latched
                c["isr_runs"] += 1
                self.doing = "isr"
                yield env.timeout(isr_rx)
                self._rx_isr_end()
                continue
            if self.rotate:
                self.rotate = False
                if self.cur is not None and self.cur.ready:
                    self.seq += 1
                    self.cur.seq = self.seq
            t = self._pick()
            while t is not None and not self._begin(t):
                t = self._pick()
            self.cur = t
            if t is None:
                self.doing = "idle"
                self.wake = env.event()
                yield self.wake
                continue
            # A re-enabled line may be pending (the driver's reaction).
            if self.rx_pending and self.rx_enabled:
                continue
            self.doing = "task"
            start = env.now
            try:
                yield env.timeout(t.remaining)
                t.remaining = 0
            except simpy.Interrupt:
                self.kicking = False
                t.remaining -= env.now - start
                if t.remaining > 0:
                    continue
            self._task_done(t)

    def run(self) -> dict:
        self.env.run(until=self.p.duration)
        # A critical cycle still running past its deadline at the end counts
        # as missed, once per period it has overrun (docs/model.md).
        t, end = self.critical, self.p.duration
        if t.ready and end > t.deadline:
            self.c["misses"] += (end - t.deadline) // self.p.period + 1
            self.c["lateness_pct"] += (end - t.deadline) * 100.0 / self.p.period
        out = dict(self.c)
        out["dropped"] = out["line_disabled"] + out["irq_overrun"] + out["queue_full"]
        return out


def simulate(scenario: str | Path) -> dict:
    """Run the scenario through the SimPy model; the run's counters."""
    return Device(load_params(scenario)).run()


if __name__ == "__main__":
    import json
    import time

    t0 = time.perf_counter()
    res = simulate(
        sys.argv[1] if len(sys.argv) > 1 else REPO / "scenarios" / "danicki2021" / "queue_500.toml"
    )
    res["wall_s"] = round(time.perf_counter() - t0, 3)
    print(json.dumps(res, indent=1))
