"""``rtshield rig ...``: real flood tools against real targets in the rig's own namespaces.

``rig linux``  the controller study of arXiv 2007.08885 on this kernel (docs/rig.md);
``rig freertos-tcp`` and ``rig lwip``  a FreeRTOS device with FreeRTOS-Plus-TCP or lwIP,
               on the POSIX board or the MPS2 board in QEMU (``--board``);
``rig device`` a robustness test of any controller, ``rig serve`` the rig's targets as
               devices to test it on (:mod:`rtshield.commands._rig_device`);
``rig report`` rebuilds the tables, histograms and report of a finished run;
``rig clean``  removes what killed runs left behind (names starting with ``rtsrig``), sparing
               runs whose owner still runs.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import signal
import time
from pathlib import Path
from typing import Annotated

import typer

from rtshield.cliapp import typer_app
from rtshield.clitools import Out, Terminated, arg, check_choice, opt, verb
from rtshield.commands import VERBS
from rtshield.commands._rig_device import add_verbs
from rtshield.errors import UsageError
from rtshield.progress import ProgressBar

LINUX_HELP = (
    "The DoS controller study (arXiv 2007.08885, Sections 4-7) on this kernel: "
    "a 1 ms cyclic control task under "
    "SCHED_FIFO/RR/DEADLINE sharing (S) or not sharing (D) its CPU with the device's "
    "receive processing, attacked by hping3 SYN floods, mausezahn ARP floods and nmap "
    "full SYN scans, with and without stress-ng load; idle before / attack / idle after "
    "per cell. Writes DIR/summary.json, DIR/tables.txt (Tables 1-2 layout), "
    "DIR/hist_*.png, DIR/report.html and DIR/runs/<cell>/ (summary.json, cycle file, "
    "tool logs). The full matrix is 36 cells of 3 phases each."
)

_TARGET_HELP = (
    "Build the FreeRTOS target (the device application of rig/freertos/ with the kernel, "
    "{stack} and libshield, for the POSIX board or the MPS2 board) if needed, start it on "
    "the device side of the rig's namespaces (MPS2: QEMU on a TAP bridged to the rig's "
    "veth) and run, for each attack, an unprotected and a protected run of idle / attack / "
    "idle while the scenario's flows are sent; simulate the same scenario. Writes "
    "DIR/runs/<variant>-<attack>/summary.json (the simulator's vocabulary), "
    "DIR/sim/<variant>/summary.json, DIR/comparison.json and DIR/report.html."
)
FREERTOS_HELP = _TARGET_HELP.format(stack="FreeRTOS-Plus-TCP")
LWIP_HELP = _TARGET_HELP.format(stack="lwIP (its FreeRTOS sys_arch, the netconn API)") + (
    " lwIP's own counters (lwip_stats: pbuf and memp errors, drops per protocol) are "
    "recorded beside libshield's drop reasons."
)

CLEAN_HELP = (
    "Remove what rig runs whose owner has ended (a killed rtshield command) left behind: "
    "the processes they started (they carry RTSRIG_TAG in their environment), the "
    "processes in their network namespaces (named 'rtsrig-TAG-...': a FreeRTOS device, "
    "QEMU), those namespaces (with their veths, TAP devices, bridges, qdiscs and nftables "
    "tables), their interfaces named rtsrig* in this namespace, their work folders, a "
    "sysctl they changed and the queueing of an interface 'rig device' lent to its storms "
    "(its root qdisc deleted: the kernel's own again). A run whose owner still runs "
    "(another session's campaign) is spared, one line each saying whose it is; --force "
    "removes it too. Nothing else is touched."
)


#: ``--attacks`` of both targets: the rig's attacks (``rig.harness.ATTACKS``) and their tools.
Attacks = Annotated[str, opt(
    "--attacks", "attacks among syn (hping3 SYN flood), arp (mausezahn ARP flood), nmap "
    "(full SYN scan); default all three", "LIST")]

#: The CPUs this process may run on: the defaults of --control-cpu and --network-cpu.
_CPUS = sorted(os.sched_getaffinity(0))


LINUX_SHORT_HELP = (
    "the DoS controller study (arXiv 2007.08885) here: S/D x FIFO/RR/DEADLINE x "
    "attacks"
)
LINUX_EPILOG = (
    "\b\nexamples: rtshield rig linux --out rig-out\n"
    "          rtshield rig linux --select SF,DF --attacks syn --load off "
    "--phase-seconds 2 --out smoke"
)
FREERTOS_TCP_SHORT_HELP = (
    "the real FreeRTOS-Plus-TCP stack with libshield in its receive path, "
    "flooded unprotected and protected"
)
FREERTOS_TCP_EPILOG = (
    "\b\nexamples: sudo rtshield rig freertos-tcp --attacks syn --phase-seconds 2 --out ft\n"
    "          sudo rtshield rig freertos-tcp --board mps2-an385 --out ft-mps2"
)
LWIP_SHORT_HELP = (
    "the real lwIP stack on FreeRTOS with libshield in its receive path, flooded "
    "unprotected and protected"
)
LWIP_EPILOG = "\b\nexample: sudo rtshield rig lwip --attacks syn --phase-seconds 2 --out lw"
REPORT_HELP = "Re-read DIR/runs/*/summary.json and the cycle files and rewrite the results."
REPORT_SHORT_HELP = "rebuild the tables, histograms and report of a finished rig run"
REPORT_EPILOG = (
    "\b\nexamples: rtshield rig report rig-out\n"
    "          rtshield rig report ft --board cal/board.toml"
)
FIT_HELP = (
    "Fit the board's model (its platform preset: the tick as it came, the receive path's "
    "and the stack's cost per frame and per wake-up, libshield's cost per path) to runs "
    "of rig freertos-tcp or rig lwip on the POSIX board, without running the target. "
    "Each RUN is a run's folder (DIR/runs/<variant>-<attack>) or a rig folder (all its "
    "runs). Give an unprotected and a protected run (they hand the stack different "
    "frames per wake-up, which tells the two costs apart) and a SYN run (the simulator's "
    "flood is a SYN flood). Writes DIR/board.toml: the shipped board preset with its "
    "measured numbers replaced, each with its run, key, command and commit; refused "
    "(exit 2) when a number is outside its physical bounds. Hold runs against it with "
    "'rtshield rig report RIGDIR --board DIR/board.toml'."
)
FIT_SHORT_HELP = "fit a target's board preset to its recorded runs (no root)"
FIT_EPILOG = (
    "\b\nexamples: rtshield rig fit ft --out cal\n"
    "          rtshield rig fit ft/runs/unprotected-syn ft/runs/protected-syn --out cal"
)
CLEAN_SHORT_HELP = (
    "remove leftovers of killed rig runs (processes, namespaces named rtsrig-*); live "
    "runs are spared"
)
CLEAN_EPILOG = "\b\nexamples: sudo rtshield rig clean\n          sudo rtshield rig clean --force"


def add_to(app: typer.Typer) -> None:
    rig = typer_app(
        name="rig",
        help="Run real attacks from one network namespace against a device in another, both "
        "created by the rig and always removed, or (rig device) through an interface of this "
        "host against a device you name (docs/rig.md). Needs root and the tools installed "
        "by tools/install.sh --rig.",
        short_help=VERBS["rig"],
        epilog="\b\nexamples: sudo rtshield rig linux --out rig-out\n"
        "          sudo rtshield rig freertos-tcp --attacks syn --out ft\n"
        "          sudo rtshield rig device --target 198.18.0.1 --iface dut0 --out dev\n"
        "          rtshield rig TARGET --help     explains one target",
        invoke_without_command=True,
    )

    @rig.callback()
    def _rig(ctx: typer.Context) -> None:
        if ctx.invoked_subcommand is None:
            _no_target(None)

    @verb(rig, "linux", handle_linux, group="rig", help=LINUX_HELP,
          short_help=LINUX_SHORT_HELP, epilog=LINUX_EPILOG)
    def linux(
        out: Out,
        phase_seconds: Annotated[float, opt(
            "--phase-seconds", "length of each phase: idle before, attack, idle after "
            "(default 10; the paper uses 300)", "S")] = 10.0,
        break_seconds: Annotated[float, opt(
            "--break-seconds", "break between phases (default 2; the paper uses 5)", "S")] = 2.0,
        select: Annotated[str, opt(
            "--select", "configurations to run, comma-separated names or globs: SF, SR, SD, DF, "
            "DR, DD, and with --protect SF+limit, SF+steer ... (default all)", "LIST")] = "*",
        attacks: Attacks = "syn,arp,nmap",
        load: Annotated[str, opt(
            "--load", "stress-ng CPU load: off, on, or both (default both: Tables 1 and 2)",
            "off|on|both")] = "both",
        protect: Annotated[str, opt(
            "--protect", "also run the single-core configurations with an ingress protection: "
            "limit (nftables rate limit on SYN and ARP), steer (receive work moved to "
            "the network CPU); e.g. --protect limit,steer", "LIST")] = "",
        syn_limit: Annotated[int, opt(
            "--syn-limit", "SYN packets/s admitted by --protect limit (default 1000)",
            "PPS")] = 1000,
        arp_limit: Annotated[int, opt(
            "--arp-limit", "ARP packets/s admitted by --protect limit (default 100)",
            "PPS")] = 100,
        cycle_us: Annotated[int, opt(
            "--cycle-us", "control cycle in microseconds (default 1000)", "US")] = 1000,
        control_cpu: Annotated[int, opt(
            "--control-cpu", f"CPU of the control task (default the last, here {_CPUS[-1]})",
            "N")] = _CPUS[-1],
        network_cpu: Annotated[int, opt(
            "--network-cpu", "CPU of the device's receive work in D configurations and of the "
            f"attacker (default the first, here {_CPUS[0]})", "N")] = _CPUS[0],
        dl: Annotated[str, opt(
            "--dl", "SCHED_DEADLINE runtime, deadline, period in ns (default the paper's "
            "100000,1000000,1000000)", "RT,DL,PERIOD")] = "100000,1000000,1000000",
        dl_admission: Annotated[str, opt(
            "--dl-admission", "SCHED_DEADLINE admission control. With 'on' (default) the kernel "
            "refuses a deadline task pinned to one CPU of a larger root domain, so SD/DD rows "
            "say 'refused'; 'off' sets kernel.sched_rt_runtime_us=-1 for the run (this also "
            "lifts RT throttling machine-wide) and restores it afterwards, also through "
            "'rig clean'", "on|off")] = "on",
        no_figures: Annotated[bool, opt("--no-figures", "skip the histograms")] = False,
    ) -> None:
        check_choice(load, "--load", ("off", "on", "both"))
        check_choice(dl_admission, "--dl-admission", ("on", "off"))

    def target_options(
        out: Out,
        board: Annotated[str, opt(
            "--board", "posix (the FreeRTOS POSIX port on this host, default) or mps2-an385 "
            "(a Cortex-M3 image in QEMU, its LAN9118 on a TAP; guest time)", "BOARD")] = "posix",
        scenario: Annotated[str | None, opt(
            "--scenario", "the device as a scenario (default rig/freertos/device.toml; on the "
            "MPS2 board rig/freertos/mps2-an385/device.toml)", "FILE")] = None,
        freertos_tree: Annotated[str | None, opt(
            "--freertos-tree", "folder holding FreeRTOS-Kernel and the stack's tree "
            "(FreeRTOS-Plus-TCP, or lwip; the MPS2 board's LAN9118 driver comes from "
            "FreeRTOS-Plus-TCP) (default $RTS_THIRD_PARTY, else the pinned copies rtshield "
            "ships in third_party/)", "DIR")] = None,
        attacks: Attacks = "syn,arp,nmap",
        variants: Annotated[str, opt(
            "--variants", "unprotected, protected or both (default both)", "LIST")] = (
            "unprotected,protected"),
        phase_seconds: Annotated[float | None, opt(
            "--phase-seconds", "length of each phase, 1-120 (default: the flood flow's "
            "step_every in the scenario)", "S")] = None,
        break_seconds: Annotated[float, opt(
            "--break-seconds", "break between phases (default 1)", "S")] = 1.0,
        stock_priority: Annotated[int, opt(
            "--stock-priority", "the network task's priority in the unprotected (stock) variant "
            "(default 6: FreeRTOS-Plus-TCP's default IP task priority, "
            "configMAX_PRIORITIES - 2; lwIP: the stock input task's)", "P")] = 6,
        rates: Annotated[str | None, opt(
            "--rates", "each attack at each of these rates, packets/s, or max (full rate, "
            "the default); at a rate the same tools run, a flood's frames let out evenly "
            "at the rate by the attacker's interface (tc), the scan held at it by nmap; "
            "the runs are named VARIANT-ATTACK-Npps", "LIST")] = None,
        calibrate: Annotated[bool, opt(
            "--calibrate", "calibrate the board's model from this run: the "
            "load points that tell per-frame from per-wake-up costs apart (unprotected and "
            "protected under the SYN and the ARP flood; --attacks defaults to syn,arp, "
            "--phase-seconds to 3, --rates to max on Plus-TCP and 2000,5000,max on lwIP, "
            "whose stack takes at most ~7 000 frames/s), then DIR/board.toml as 'rig fit' "
            "writes it")] = False,
    ) -> None:
        from rtshield.rig.freertos.target import BOARDS

        check_choice(board, "--board", tuple(BOARDS))

    verb(rig, "freertos-tcp", handle_freertos, group="rig", help=FREERTOS_HELP,
         short_help=FREERTOS_TCP_SHORT_HELP, epilog=FREERTOS_TCP_EPILOG)(target_options)
    verb(rig, "lwip", handle_lwip, group="rig", help=LWIP_HELP,
         short_help=LWIP_SHORT_HELP, epilog=LWIP_EPILOG)(target_options)

    @verb(rig, "report", handle_report, group="rig", help=REPORT_HELP,
          short_help=REPORT_SHORT_HELP, epilog=REPORT_EPILOG)
    def report(
        dir: Annotated[str, arg("DIR", "the folder of a rig run")],
        fitted: Annotated[str | None, opt(
            "--fitted", "freertos-tcp/lwip: simulate DIR's scenarios again with the costs of "
            "a fit (rtshield calibrate's best.toml, e.g. of DIR/calibrate/RUN.toml) and hold "
            "every run against that model too (twin.json)", "BEST.toml")] = None,
        board: Annotated[str | None, opt(
            "--board", "freertos-tcp/lwip: the same with a board preset of DIR's board "
            "(e.g. the board.toml 'rig fit' or '--calibrate' wrote): its costs", "FILE")] = None,
    ) -> None:
        ...

    @verb(rig, "fit", handle_fit, group="rig", help=FIT_HELP, short_help=FIT_SHORT_HELP,
          epilog=FIT_EPILOG)
    def fit(
        runs: Annotated[list[str], arg("RUN...", "run folders (DIR/runs/NAME) or rig folders")],
        out: Out,
    ) -> None:
        ...

    @verb(rig, "clean", handle_clean, group="rig", help=CLEAN_HELP,
          short_help=CLEAN_SHORT_HELP, epilog=CLEAN_EPILOG)
    def clean(
        force: Annotated[bool, opt(
            "--force", "also remove the runs whose owner still runs (stops them)")] = False,
    ) -> None:
        ...

    add_verbs(rig)
    app.add_typer(rig)


def _no_target(args) -> int:  # noqa: ARG001
    raise UsageError(
        "rig: a target is required: linux, freertos-tcp, lwip, device, serve, report, fit or "
        "clean ('rtshield rig --help' explains them)"
    )


def _csv(value: str, allowed: tuple[str, ...] | None, option: str) -> list[str]:
    items = [v.strip() for v in value.split(",") if v.strip()]
    if allowed is not None:
        bad = [v for v in items if v not in allowed]
        if bad:
            raise UsageError(
                f"rig: {option}: unknown {', '.join(bad)} (choose from {', '.join(allowed)})"
            )
    return items


def _within(verb: str, option: str, value: float, lo: float, hi: float) -> None:
    """The usage error of ``verb`` when ``option``'s ``value`` is outside ``[lo, hi]``."""
    if not lo <= value <= hi:
        raise UsageError(f"{verb}: {option} must be between {lo} and {hi}")


def _on_signal(signum, frame):  # noqa: ARG001
    """SIGTERM or SIGHUP arrived: unwind like Ctrl-C so every ``finally`` cleans up."""
    raise Terminated(signum)


def options_from_args(args):
    from rtshield.rig.linux import ATTACKS, PROTECTIONS, Options, SchedDeadline

    _within("rig", "--phase-seconds", args.phase_seconds, 0.5, 3600)
    _within("rig", "--break-seconds", args.break_seconds, 0, 600)
    _within("rig", "--cycle-us", args.cycle_us, 50, 1_000_000)
    online = sorted(os.sched_getaffinity(0))
    for flag, cpu in (("--control-cpu", args.control_cpu), ("--network-cpu", args.network_cpu)):
        if cpu not in online:
            raise UsageError(f"rig: {flag} {cpu} is not an available CPU ({online})")
    dl = SchedDeadline.parse(args.dl)
    for flag, v in (("--syn-limit", args.syn_limit), ("--arp-limit", args.arp_limit)):
        if v < 1:
            raise UsageError(f"rig: {flag} must be at least 1")
    loads = {"off": [False], "on": [True], "both": [False, True]}[args.load]
    return Options(
        phase_s=args.phase_seconds,
        break_s=args.break_seconds,
        cycle_us=args.cycle_us,
        control_cpu=args.control_cpu,
        network_cpu=args.network_cpu,
        attacker_cpu=args.network_cpu,
        dl=dl,
        syn_limit_pps=args.syn_limit,
        arp_limit_pps=args.arp_limit,
        select=_csv(args.select, None, "--select") or ["*"],
        attacks=_csv(args.attacks, ATTACKS, "--attacks"),
        loads=loads,
        protect=_csv(args.protect, PROTECTIONS, "--protect"),
    )


def handle_linux(args) -> int:
    from rtshield.outputs import atomic_write, format_summary_json, prepare_out_dir, prune_stale
    from rtshield.rig import campaign, harness, host, linux, results

    opts = options_from_args(args)
    cells = linux.plan(opts)
    if not opts.attacks:
        raise UsageError("rig: --attacks is empty")
    if any(c.arch == "D" or c.protect == "steer" for c, _, _ in cells) and (
        opts.control_cpu == opts.network_cpu
    ):
        raise UsageError(
            "rig: D configurations and --protect steer need two CPUs: --control-cpu and "
            "--network-cpu are the same"
        )
    harness.require_root()
    tools = ["ip", "nft", "taskset", "timeout", "cc"]
    tools += sorted({linux.ATTACK_TOOL[a] for a in opts.attacks})
    if True in opts.loads:
        tools.append("stress-ng")
    harness.require_tools(tools)
    exe = linux.build_program()
    since = time.time_ns()
    out = prepare_out_dir(args.out, resumable=True, kind="rig linux")
    names = [linux.cell_name(c, a, ld) for c, a, ld in cells]
    camp = campaign.Campaign(out, "rig linux", names, _argv(), lambda m: print(m, flush=True))
    per_run = {k: v for k, v in opts.as_dict().items()
               if k not in ("select", "attacks", "loads", "protect")}  # the plan's, not a run's
    per_run.update(dl_admission=args.dl_admission, program=campaign.file_sha256(exe),
                   kernel=platform.release())  # fmt: skip

    per_cell = harness.procedure_s(opts.phase_s, opts.break_s) + 1
    print(
        f"rig linux: {len(cells)} cells x {per_cell:.0f} s ≈ {len(cells) * per_cell / 60:.1f} min; "
        f"control task on CPU {opts.control_cpu}, network/attacker CPU {opts.network_cpu}",
        flush=True,
    )
    system = results.system_info()
    old = {s: signal.signal(s, _on_signal) for s in (signal.SIGTERM, signal.SIGHUP)}
    done: list[dict] = []
    t_start = time.monotonic()
    bar = ProgressBar(
        "rig linux",
        phases=[("flooding", len(cells), "cells done"), ("tables, figures and report", 1)],
        enabled=False if args.quiet else None,
    )
    sysctl = (
        harness.SysctlOverride("kernel.sched_rt_runtime_us", "-1")
        if args.dl_admission == "off" and any(c.policy == "deadline" for c, _, _ in cells)
        else contextlib.nullcontext()
    )
    try:
        with bar, _kept_if_stopped(camp, args.out):
            with sysctl, harness.Harness(log_dir=out / "logs") as h:
                h.listener(limit_s=len(cells) * (per_cell + 15) + 60)
                for i, (cfg, attack, load) in enumerate(cells, 1):
                    name = linux.cell_name(cfg, attack, load)
                    params = {**per_run, "cell": name}
                    kept = camp.resume(name, params)
                    if kept is not None:
                        done.append(kept)
                        print(f"[{i}/{len(cells)}] {name}: {_KEPT}", flush=True)
                        bar(i, len(cells))
                        continue
                    cell_dir = out / "runs" / name
                    s = linux.run_cell(
                        h,
                        exe,
                        cfg,
                        attack,
                        load,
                        opts,
                        cell_dir,
                        say=lambda m, i=i: print(f"[{i}/{len(cells)}] {m}", flush=True),
                    )
                    try:
                        linux.analyse_cell(s, cell_dir)
                    except ValueError as e:  # an unreadable cycle file
                        raise harness.RigError(f"rig: {name}: {e}") from None
                    atomic_write(cell_dir / "summary.json", format_summary_json(s))
                    camp.finished(name, params)
                    done.append(s)
                    print(f"[{i}/{len(cells)}] {_one_line(s)}", flush=True)
                    bar(i, len(cells))
            # the results: the bar's last phase
            system["loadavg_end"] = host.read_text("/proc/loadavg")
            options = {**opts.as_dict(), "dl_admission": args.dl_admission}
            results.write_results(out, done, system, options, figures=not args.no_figures)
            camp.complete()
            bar.finish()
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
    prune_stale(out, since)  # files of an earlier run into the same DIR
    for load in opts.loads:
        print(
            f"maximum cycle time, {'with' if load else 'without'} CPU load (Table "
            f"{2 if load else 1} layout; p99 tables and histograms in the report):"
        )
        print(results.text_table(*results.paper_table(done, load)))
    _say_resumed(camp, print)
    print(
        f"rig linux: {len(done)} cells in {time.monotonic() - t_start:.0f} s; "
        f"results: {out}/ (report: {out / 'report.html'})"
    )
    return 0


#: The progress line of a run an earlier, interrupted attempt finished with the same options.
_KEPT = "finished by an earlier attempt with the same parameters: kept, not run again"


def _digest(table: dict) -> str:
    """SHA-256 of a scenario's TOML data (a run's device, every value)."""
    import hashlib

    return hashlib.sha256(json.dumps(table, sort_keys=True, default=str).encode()).hexdigest()


def _argv() -> list[str]:
    """This command's words after ``rtshield`` (for the campaign's record)."""
    import sys

    return sys.argv[1:]


def _say_resumed(camp, say) -> None:
    if camp.resumed:
        say(f"{camp.who}: {len(camp.resumed)} of {len(camp.plan)} runs were finished by an "
            "earlier attempt into this --out and not run again: "
            + ", ".join(camp.resumed))


@contextlib.contextmanager
def _kept_if_stopped(camp, out_arg: str):
    """A campaign that stops early (an error, Ctrl-C, SIGTERM) says so in its
    campaign.json and in one line on stderr; its finished runs stay for the same
    command into ``out_arg`` (the error then ends the command, exit status non-zero)."""
    import sys

    from rtshield.errors import OutputError, one_line

    try:
        yield
    except BaseException as e:
        why = "interrupted" if isinstance(e, KeyboardInterrupt) else one_line(e)
        try:
            print(camp.stopped(why, out_arg), file=sys.stderr, flush=True)
        except (OSError, OutputError) as w:  # no campaign.json: said, then the error raised
            print(f"{camp.who}: the campaign is incomplete and its record could not be "
                  f"written: {one_line(w)}", file=sys.stderr, flush=True)
        raise


def _one_line(s: dict) -> str:
    if s.get("status") != "ok":
        return f"{s['cell']}: refused ({s.get('reason', '')})"
    tr = s.get("traffic", {})
    ratio = s.get("attack_over_idle_max")
    return (
        f"{s['cell']}: idle max {_ms(s.get('idle_max_ms'))} ms, attack max "
        f"{_ms(s.get('attack_max_ms'))} ms (x{_ms(ratio, 2)}), p99.9 {_p999(s, 'idle_before')} "
        f"-> {_p999(s, 'attack')} ms; "
        f"{tr.get('flood_in_pps', 0):.0f} flood pkt/s reached the device"
    )


def _ms(v: float | None, digits: int = 3) -> str:
    return "—" if v is None else f"{v:.{digits}f}"


def _p999(s: dict, phase: str) -> str:
    cm = s.get("phases", {}).get(phase, {}).get("cycle_ms")
    return f"{cm['p99_9']:.3f}" if cm else "—"


def handle_freertos(args) -> int:
    return _handle_target(args, "plustcp")


def handle_lwip(args) -> int:
    return _handle_target(args, "lwip")


def _handle_target(args, stack: str) -> int:
    """``rig freertos-tcp`` / ``rig lwip``: ``stack`` on ``--board``, unprotected and
    protected per attack, the simulation beside them."""
    from rtshield.outputs import atomic_write, format_summary_json, prepare_out_dir, prune_stale
    from rtshield.rig import campaign, freertos, harness

    target = freertos.Target(stack, args.board)
    who = f"rig {target.verb}"
    calibrate = getattr(args, "calibrate", False)
    if calibrate:
        if freertos.BOARD_PRESETS.get((stack, args.board)) is None:
            raise UsageError(f"{who}: --calibrate: {stack} on the {args.board} board has no "
                             "board model to fit")  # fmt: skip
        if args.attacks == "syn,arp,nmap":  # the default: the scan is not a load point
            args.attacks = "syn,arp"
        if args.phase_seconds is None:
            args.phase_seconds = 3.0
        if args.rates is None:
            args.rates = ",".join(
                "max" if r is None else f"{r:g}" for r in freertos.CALIBRATE_RATES[stack]
            )
    attacks = _csv(args.attacks, freertos.ATTACKS, "--attacks")
    rates = freertos.parse_rates(args.rates or "max", f"{who}: --rates")
    variants = _csv(args.variants, freertos.VARIANTS, "--variants")
    if not attacks or not variants:
        raise UsageError(f"{who}: --attacks and --variants must name at least one")
    if calibrate and set(variants) != set(freertos.VARIANTS):
        raise UsageError(f"{who}: --calibrate needs both --variants (unprotected and protected "
                         "runs tell the stack's per-frame from its per-wake-up cost)")  # fmt: skip
    if args.phase_seconds is not None:
        _within(who, "--phase-seconds", args.phase_seconds, 1, 120)
    _within(who, "--break-seconds", args.break_seconds, 0, 60)
    say = (lambda m: None) if args.quiet else (lambda m: print(m, flush=True))
    scen = Path(args.scenario) if args.scenario else freertos.default_scenario(target)
    dev = freertos.load_device(scen, args.stock_priority, args.phase_seconds)
    harness.require_root()
    tools = ["ip", "nft", "timeout", "taskset", "ping", *target.run_tools, *target.build_tools]
    tools += sorted({freertos.ATTACK_TOOL[a] for a in attacks})
    tools += ["tc"] if any(r is not None for r in rates) else []
    for t, pkg in (("ethtool", "ethtool"), ("gcc", "gcc"), ("patch", "patch"),
                   ("ping", "iputils-ping"), ("arm-none-eabi-gcc", "gcc-arm-none-eabi"),
                   ("qemu-system-arm", "qemu-system-arm")):  # fmt: skip
        harness.TOOLS.setdefault(t, pkg)
    harness.require_tools(tools)
    tree = freertos.find_tree(args.freertos_tree, target)
    images = freertos.build_images(target, tree, say=say)
    since = time.time_ns()
    out = prepare_out_dir(args.out, resumable=True, kind=who)
    cpus = sorted(os.sched_getaffinity(0))
    opts = freertos.Options(
        phase_s=dev.phase_s,
        break_s=args.break_seconds,
        attacks=attacks,
        variants=variants,
        stock_priority=args.stock_priority,
        rx_cpu=_CPUS[0] if len(cpus) > 1 else None,
        attacker_cpu=_CPUS[0] if len(cpus) > 1 else None,
    )
    plan = [(v, a, r) for a in attacks for r in rates for v in variants]
    camp = campaign.Campaign(out, who, [freertos.run_name(v, a, r) for v, a, r in plan],
                             _argv(), say)  # fmt: skip
    per_run = {"target": who, "board": target.board, "phase_s": opts.phase_s,
               "break_s": opts.break_s, "stock_priority": opts.stock_priority,
               "rx_cpu": opts.rx_cpu, "attacker_cpu": opts.attacker_cpu,
               "kernel": platform.release()}  # fmt: skip
    per = harness.procedure_s(opts.phase_s, opts.break_s) + (8 if target.emulated else 3)
    say(f"{who}: {len(plan)} runs x ~{per:.0f} s on the {target.board} board; scenario {scen}")
    old = {s: signal.signal(s, _on_signal) for s in (signal.SIGTERM, signal.SIGHUP)}
    runs: list[dict] = []
    bar = ProgressBar(
        who,
        phases=[("flooding", len(plan), "runs done"), ("simulating, report", 1)],
        enabled=False if args.quiet else None,
    )
    with bar, _kept_if_stopped(camp, args.out):
        try:
            with harness.Harness(log_dir=out / "logs") as h:
                bench = freertos.wire(h, target, images)
                for i, (v, a, r) in enumerate(plan, 1):
                    name = freertos.run_name(v, a, r)
                    params = {**per_run, "run": name, "variant": v, "attack": a, "rate": r,
                              "image": f"{images[v].parent.name}/{images[v].name}",
                              "scenario": _digest(dev.tables[v])}  # fmt: skip
                    kept = camp.resume(name, params)
                    if kept is not None:
                        runs.append(kept)
                        say(f"[{i}/{len(plan)}] {name}: {_KEPT}")
                        bar(i, len(plan))
                        continue
                    d = out / "runs" / name
                    raw = freertos.run_variant(
                        h,
                        bench,
                        dev,
                        v,
                        a,
                        opts,
                        d,
                        say=lambda m, i=i, name=name: say(f"[{i}/{len(plan)}] {name}: {m}"),
                        rate=r,
                    )
                    s = freertos.summarize(raw, dev, d)
                    atomic_write(d / "summary.json", format_summary_json(s))
                    camp.finished(name, params)
                    runs.append(s)
                    say(f"[{i}/{len(plan)}] {name}: " + _target_line(s))
                    bar(i, len(plan))
        finally:
            for sg, handler in old.items():
                signal.signal(sg, handler)
        say(f"{who}: simulating the same scenario")
        sim = freertos.simulate_variants(dev, out)
        syn_pps = freertos.measured_syn_rate(runs)
        sim_syn = None
        if syn_pps:
            say(f"{who}: simulating it with the SYN flood at {syn_pps:.0f} pkt/s (the rig's)")
            sim_syn = freertos.simulate_variants(dev.at_flood_rate(syn_pps), out, "-rig-rate")
        own = freertos.simulate_own_rates(out)  # each SYN run's flood at its own rate
        comp = freertos.comparison(runs, sim, dev, sim_syn, syn_pps, own)
        atomic_write(out / "comparison.json", json.dumps(comp, indent=1) + "\n")
        twin = json.loads(freertos.write_twin(out).read_text())
        report = freertos.write_report(out, comp, runs, twin)
        unfit = None
        if calibrate:
            try:
                name, text = freertos.board_from_runs(
                    sorted(p.parent for p in (out / "runs").glob("*/device.json")),
                    _made_by([
                        "rig", target.verb, "--calibrate", "--board", args.board,
                        "--attacks", ",".join(attacks), "--variants", ",".join(variants),
                        "--rates", ",".join("max" if r is None else f"{r:g}" for r in rates),
                        "--phase-seconds", f"{dev.phase_s:g}",
                        "--break-seconds", f"{args.break_seconds:g}",
                        *(["--scenario", str(args.scenario)] if args.scenario else []),
                        "--out", str(args.out),
                    ]),  # fmt: skip
                )
                atomic_write(out / "board.toml", text)
            except UsageError as e:
                unfit = e  # said after the runs are kept
        camp.complete()
        prune_stale(out, since)
        bar.finish()
    for c in comp["claims"]:
        say(f"  {'confirmed' if c['confirmed'] else 'NOT confirmed'}: {c['claim']}")
    n = len(twin["quantities"])
    say(f"  simulation against the real target: {n - len(twin['disagree'])} of {n} quantities "
        "agree (twin.json)")  # fmt: skip
    _say_resumed(camp, say)
    print(f"{who}: {len(runs)} runs; results: {out}/ (report: {report})")
    if unfit is not None:
        raise unfit
    if calibrate:
        print(f"{who}: the board's model fitted to these runs: {out / 'board.toml'} (a "
              f"preset of {name}; hold runs against it: rig report DIR --board FILE)")  # fmt: skip
    return 0


def _made_by(argv: list[str]) -> str:
    """The command that fits a preset (``argv``: its words after ``rtshield``) and the
    code it ran, for the preset's provenance."""
    import shlex
    import subprocess

    from rtshield._version import __version__

    try:
        commit = subprocess.run(
            ["git", "-C", str(Path(__file__).parent), "describe", "--always", "--dirty"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout.strip()  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        commit = "unknown (not a git checkout)"
    cmd = shlex.join(["rtshield", *argv])
    return f"`{cmd}` at rtshield {__version__}, commit {commit}"


def handle_fit(args) -> int:
    from rtshield.outputs import atomic_write, prepare_out_dir, prune_stale
    from rtshield.rig import freertos

    dirs: list[Path] = []
    for r in args.runs:
        p = Path(r)
        found = sorted(q.parent for q in (p / "runs").glob("*/device.json")) or sorted(
            q.parent for q in p.glob("*/device.json")  # a folder of kept runs
        )
        if (p / "device.json").is_file():
            dirs.append(p)
        elif found:
            dirs += found
        else:
            raise UsageError(f"rig fit: {r}: neither a run's folder (device.json) nor a rig "
                             "folder (runs/*/device.json)")  # fmt: skip
    target = Path(args.out).resolve()
    held = next((d for d in dirs if target in (d.resolve(), *d.resolve().parents)), None)
    if held is not None:
        raise UsageError(
            f"rig fit: --out {args.out} holds the run {held} it reads (a command's output "
            "folder is rewritten whole): write the preset elsewhere"
        )
    name, text = freertos.board_from_runs(
        dirs, _made_by(["rig", "fit", *args.runs, "--out", args.out])
    )
    out = prepare_out_dir(args.out)
    atomic_write(out / "board.toml", text)
    prune_stale(out)
    print(f"rig fit: {len(dirs)} runs; the board's model: {Path(args.out) / 'board.toml'} "
          f"(a preset of {name})")  # fmt: skip
    return 0


def _target_line(s: dict) -> str:
    """One run of ``rig freertos-tcp``/``rig lwip`` in one progress line."""
    from rtshield.rig import freertos

    att = s["phases"]["attack"]
    late = ""
    if s.get("clock") == "guest":
        late = " (late on the guest clock " + "/".join(
            str(s["phases"][p]["critical"]["late_on_clock"]) for p in freertos.PHASES) + ")"
    return (
        f"{s['traffic'].get('flood_in_pps', 0):.0f} flood pkt/s reached the device; misses "
        "idle/attack/idle "
        + "/".join(str(s["phases"][p]["critical"]["misses"]) for p in freertos.PHASES)
        + late
        + "; "
        + ", ".join(
            f"{n} {f['delivered']}/{f['offered']}"
            for n, f in att["flows"].items()
            if f["offered"] is not None
        )
        + " delivered in the attack"
    )


def handle_report(args) -> int:
    from rtshield.rig import results

    out = Path(args.dir)
    comp_file = out / "comparison.json"
    if comp_file.is_file():  # a freertos-tcp or lwip run: its report from its comparison
        from rtshield.rig import freertos

        twin = None
        if getattr(args, "fitted", None) and getattr(args, "board", None):
            raise UsageError("rig report: --fitted and --board: give one (both are the costs "
                             "the runs are simulated again with)")  # fmt: skip
        if getattr(args, "board", None):
            fit = freertos.simulate_board(out, Path(args.board))
            print(f"rig report: the scenarios simulated again on the board preset {args.board}")
        elif getattr(args, "fitted", None):
            fit = freertos.simulate_fitted(out, Path(args.fitted))
            print(f"rig report: the scenarios simulated again with the fitted costs {fit['costs']}")
        if (out / "sim").is_dir() and any((out / "runs").glob("*/summary.json")):
            twin = json.loads(freertos.write_twin(out).read_text())  # rebuilt from the runs
        try:
            comp = json.loads(comp_file.read_text())
            report = freertos.write_report(out, comp, [], twin)
        except (ValueError, KeyError, TypeError) as e:
            raise UsageError(
                f"rig report: {comp_file}: not a freertos-tcp or lwip comparison ({e})"
            ) from None
        print(f"rig report: {len(comp.get('runs', []))} runs; report: {report}")
        return 0
    summ = out / "summary.json"
    cell_files = sorted((out / "runs").glob("*/summary.json"))
    if not cell_files:
        raise UsageError(f"rig report: no {out}/runs/*/summary.json (not a rig run directory)")
    try:
        # A run that was interrupted has its cells but no top-level summary yet.
        top = json.loads(summ.read_text()) if summ.is_file() else {}
        cells = [json.loads(p.read_text()) for p in cell_files]
    except ValueError as e:
        raise UsageError(f"rig report: {summ}: not valid JSON ({e})") from None
    order = {c["cell"]: i for i, c in enumerate(top.get("cells", []))}
    if order:  # the run's own cells, not those an earlier run left in DIR/runs
        cells = [c for c in cells if c.get("cell") in order]
    cells.sort(key=lambda c: order.get(c.get("cell"), len(order)))
    try:
        system = top.get("system") or results.system_info()
        results.write_results(out, cells, system, top.get("options", {}))
    except (ValueError, OSError) as e:
        raise UsageError(f"rig report: {e}") from None
    print(f"rig report: {len(cells)} cells; report: {out / 'report.html'}")
    return 0


def handle_clean(args) -> int:
    from rtshield.rig import harness

    harness.require_root()
    harness.require_tools(["ip"])
    removed = harness.clean(force=bool(getattr(args, "force", False)))
    if restored := removed["sysctl"] + removed["qdisc"]:
        print("rig clean: restored " + ", ".join(restored))
    if removed["procs"]:
        print(f"rig clean: killed {len(removed['procs'])} processes the rig had started")
    gone = removed["netns"] + removed["links"] + removed["paths"]
    if gone:
        print("rig clean: removed " + ", ".join(gone))
    for line in removed["spared"]:
        print(f"rig clean: {line}")
    if not (gone or restored or removed["procs"] or removed["spared"]):
        print("rig clean: nothing to remove")
    return 0
