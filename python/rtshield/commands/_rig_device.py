"""``rtshield rig device`` and ``rtshield rig serve``: test any controller under storms,
and the rig's own targets as devices to test (docs/rig.md, "Testing any device").

Registered on the ``rig`` group by :mod:`rtshield.commands.rig`.
"""

from __future__ import annotations

import shutil
import signal
import time
from pathlib import Path
from typing import Annotated

import typer

from rtshield.clitools import Out, Terminated, arg, opt, verb
from rtshield.errors import UsageError

DEVICE_HELP = (
    "Flood the device at --target through the interface --iface with the storms of a "
    "profile (default: the shipped one, every storm kind as a ramp of rates), while "
    "monitors watch its essential function (MODBUS/TCP polls, ICMP echo, UDP echo, TCP "
    "connect, its heartbeat). Checks that the target answers before the first storm, caps "
    "every rate at --max-rate, holds each step evenly at its rate (a shaper on --iface, "
    "given back after each run; an --iface with a queueing discipline of your own is "
    "refused), stops every flood at once on Ctrl-C or SIGTERM. An interrupted test "
    "resumes: the same command into the same --out measures the baseline again and reads "
    "back every run that finished (another profile, target or option: it starts afresh, "
    "saying so). Writes "
    "DIR/summary.json (per storm and step the rate asked and achieved, each monitor's "
    "statistics and verdict, the breaking rate and the recovery time), DIR/report.html, "
    "DIR/fig_latency.png, DIR/monitors/ and DIR/logs/. Exit status 0: every monitor passed; "
    "1: a monitor failed; 2: usage. Send storms only to a device on a test network of your "
    "own."
)
DEVICE_SHORT_HELP = "a robustness test of any controller: storm ramps, its function monitored"
DEVICE_EPILOG = (
    "\b\nexamples: sudo rtshield rig serve linux --iface dut0      (in another terminal)\n"
    "          sudo rtshield rig device --target 198.18.0.1 --iface dut0 --out dev\n"
    "          rtshield schema profile --out profile.schema.json"
)
SERVE_HELP = (
    "Start one of the rig's targets as a standalone device in a network namespace, behind "
    "a veth pair whose other end is created here as --iface; print 'target ADDRESS on "
    "interface IFNAME' and serve until Ctrl-C or SIGTERM, then remove everything. Every "
    "served device has MODBUS/TCP on 5020, a TCP listener on 502, a UDP sink on 6000, UDP "
    "echo on 7 and answers ICMP echo; the linux device also sends a heartbeat to "
    "198.18.0.2:5005 every 10 ms (the others send none: the default profile skips that "
    "monitor). Targets: freertos-tcp and lwip (the rig's FreeRTOS device application on "
    "FreeRTOS-Plus-TCP or lwIP; boards posix and mps2-an385), linux (board host)."
)
SERVE_SHORT_HELP = "one of the rig's targets as a standalone device to test"
SERVE_EPILOG = (
    "\b\nexamples: sudo rtshield rig serve freertos-tcp --protect off --iface dut0\n"
    "          sudo rtshield rig serve lwip --board mps2-an385 --iface dut0\n"
    "          sudo rtshield rig serve linux --iface dut0"
)


def _on_signal(signum, frame):  # noqa: ARG001
    raise Terminated(signum)


def add_verbs(rig: typer.Typer) -> None:
    """Add ``device`` and ``serve`` to the ``rig`` group."""

    @verb(rig, "device", handle_device, group="rig", help=DEVICE_HELP,
          short_help=DEVICE_SHORT_HELP, epilog=DEVICE_EPILOG)
    def device(
        out: Out,
        target: Annotated[str, opt("--target", "the device's IPv4 address", "IP")],
        iface: Annotated[str, opt(
            "--iface", "the interface the storms go out of; the target must be on its link",
            "IF")],
        profile: Annotated[str | None, opt(
            "--profile", "the storm profile (TOML; 'rtshield schema profile' gives its JSON "
            "Schema); default: the shipped one", "FILE")] = None,
        max_rate: Annotated[str, opt(
            "--max-rate", "the highest rate any step sends, packets/s, 'max' steps "
            "included (default 50000); 'none' lifts the cap", "PPS|none")] = "50000",
        storms: Annotated[str | None, opt(
            "--storms", "run only these storms of the profile (comma-separated names)",
            "LIST")] = None,
        monitors: Annotated[str | None, opt(
            "--monitors", "use only these monitors of the profile (comma-separated names)",
            "LIST")] = None,
    ) -> None:
        ...

    @verb(rig, "serve", handle_serve, group="rig", help=SERVE_HELP,
          short_help=SERVE_SHORT_HELP, epilog=SERVE_EPILOG)
    def serve(
        target: Annotated[str, arg("TARGET", "freertos-tcp, lwip or linux")],
        iface: Annotated[str, opt(
            "--iface", "the name of the veth end created here (default rtsdut0)",
            "NAME")] = "rtsdut0",
        protect: Annotated[str, opt(
            "--protect", "freertos-tcp, lwip: libshield in the receive path (on) or the "
            "stack's usual path (off); linux: nftables ingress limits of SYN and ARP (on) or "
            "none (off); default on", "on|off")] = "on",
        board: Annotated[str | None, opt(
            "--board", "where the target runs: freertos-tcp, lwip: posix (the FreeRTOS "
            "POSIX port on this host, the default) or mps2-an385 (Cortex-M3 in QEMU); "
            "linux: host", "BOARD")] = None,
        scenario: Annotated[str | None, opt(
            "--scenario", "freertos-tcp, lwip: the device scenario (default "
            "rig/freertos/modbus_device.toml; on mps2-an385 "
            "rig/freertos/mps2-an385/modbus_device.toml)", "FILE")] = None,
        freertos_tree: Annotated[str | None, opt(
            "--freertos-tree", "freertos-tcp, lwip: the folder holding FreeRTOS-Kernel and "
            "FreeRTOS-Plus-TCP or lwip (default: $RTS_THIRD_PARTY, else third_party/)",
            "DIR")] = None,
    ) -> None:
        ...


def _names(value: str | None, option: str) -> list[str] | None:
    if value is None:
        return None
    names = [v.strip() for v in value.split(",") if v.strip()]
    if not names:
        raise UsageError(f"rig device: {option} is empty")
    return names


def _cap(value: str) -> float | None:
    if value.strip().lower() == "none":
        return None
    try:
        cap = float(value)
    except ValueError:
        raise UsageError(
            f"rig device: --max-rate {value!r} is not a number of packets/s or 'none'"
        ) from None
    if not 1 <= cap <= 1e8:
        raise UsageError("rig device: --max-rate must be between 1 and 100000000 packets/s")
    return cap


def handle_device(args) -> int:
    from rtshield.outputs import (
        atomic_write,
        claim_dir,
        format_summary_json,
        prepare_out_dir,
        prune_stale,
    )
    from rtshield.rig import device, harness, shaper
    from rtshield.rig.device import iface as link

    cap = _cap(args.max_rate)
    target = link.check_target(args.target)
    harness.check_ifname(args.iface, "--iface")
    path = Path(args.profile) if args.profile else device.default_profile()
    try:
        prof, text = device.load_profile(path)
    except UsageError as e:
        raise UsageError(f"rig device: --profile {e}") from None
    prof = device.select(prof, _names(args.storms, "--storms"), _names(args.monitors, "--monitors"))
    harness.require_root()
    harness.TOOLS.setdefault("trafgen", "netsniff-ng")
    paced = device.needs_shaper(prof, cap)
    tools = ["timeout", "ip", "ping", "chrt", *(["tc"] if paced else []),
             *sorted({device.tool_of(s.kind) for s in prof.storm})]
    harness.require_tools(tools)
    link.route_source(target, args.iface)  # the target is on --iface's link, before DIR
    if paced:  # the storms' shaper can have the interface's queueing, before DIR
        shaper.check_lendable(args.iface)
    say = (lambda m: None) if args.quiet else (lambda m: print(f"rig device: {m}", flush=True))
    # an interrupted test leaves its staging folder, and in it the record of its finished
    # runs, which the same test into the same --out reads back (rig/device/record.py)
    out = prepare_out_dir(args.out, resumable=True, kind="rig device")
    # the monitors' files are this attempt's (an earlier attempt's runs keep their
    # samples in the record)
    shutil.rmtree(out / "monitors", ignore_errors=True)
    for d in ("monitors", "logs"):
        claim_dir(out, d)
    minutes = device.planned_seconds(prof, cap, longest=False) / 60
    say(f"{len(prof.storm)} storms, {len(prof.monitor)} monitors; about {minutes:.1f} min, "
        "longer while the device recovers")
    old = {s: signal.signal(s, _on_signal) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        with harness.Processes(log_dir=out / "logs") as procs:
            raw = device.run_test(
                procs, prof, device.Options(target, args.iface, cap, out, say)
            )
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
    summary = device.summarize(raw, prof, path, {"max_rate": cap})
    atomic_write(out / "summary.json", format_summary_json(summary))
    atomic_write(out / "profile.toml", text)
    fig = device.latency_figure(out, summary)
    report = device.write_report(out, summary, text, fig)
    device.discard_record(out)  # finished: the same command measures again
    prune_stale(out, time.time_ns())
    for s in summary["storms"]:
        br = s["breaking_rate"]
        print(
            f"  {s['name']}: {s['verdict']}"
            + (f" (breaking rate {br:,.0f} pkt/s)" if br is not None else "")
        )
    if raw["resumed"]:
        runs = sum(len(st["runs"]) for s in summary["storms"] for st in s["steps"])
        print(f"rig device: {raw['resumed']} of {runs} runs were recorded by an earlier, "
              "interrupted attempt into this --out and not run again")
    print(f"rig device: {summary['verdict']}; results: {out}/ (report: {report})")
    return device.exit_code(summary)


def handle_serve(args) -> int:
    from rtshield.rig import harness, serve

    if args.target not in serve.TARGETS:
        raise UsageError(
            f"rig serve: {args.target!r} is not a target: {', '.join(serve.TARGETS)}"
        )
    t = serve.TARGETS[args.target]
    board = args.board or t.boards[0]
    if board not in t.boards:
        raise UsageError(
            f"rig serve {t.name}: --board {board!r} is not one of {', '.join(t.boards)}"
        )
    if args.protect not in ("on", "off"):
        raise UsageError(f"rig serve: --protect must be on or off, not {args.protect!r}")
    if (args.scenario or args.freertos_tree) and t.name == "linux":
        opt_name = "--scenario" if args.scenario else "--freertos-tree"
        raise UsageError(f"rig serve: {opt_name} is an option of freertos-tcp and lwip")
    harness.check_ifname(args.iface, "--iface")
    harness.require_root()
    say = (lambda m: None) if args.quiet else (lambda m: print(m, flush=True))
    opts = serve.ServeOptions(
        iface=args.iface,
        protect=args.protect == "on",
        board=board,
        scenario=Path(args.scenario) if args.scenario else None,
        freertos_tree=args.freertos_tree,
        say=say,
    )
    old = {s: signal.signal(s, _on_signal) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        done = serve.serve(t.name, opts, lambda line: print(line, flush=True))
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
    say(f"rig serve: stopped; everything removed ({done['restarts']} restarts)")
    return 0
