"""``rtshield rig fit`` (and ``--calibrate``'s last step): a board's preset from a target's
recorded runs, every fitted number with its provenance and within physical bounds, and
``rig report --board`` holding runs against it (docs/rig.md, "Calibrating a board's
model"; docs/decisions/twin.md, "A target's model from the target"). The runs are the
ones the shipped board presets were measured on (tests/data/rig/board/)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from rig_checks import rig_error
from test_board_presets import _MEASURED
from test_rig_twin import _folder

from rtshield import cli
from rtshield.errors import UsageError
from rtshield.rig import freertos
from rtshield.rig.freertos.fit import (
    BOARD_BOUNDS,
    BOARD_FITTED,
    BOARD_FITTED_EMULATED,
    EMULATED_NIC,
    _folder_id,
    board_from_runs,
)
from rtshield.scenario import parse_preset, platforms_dir
from rtshield.tomlfile import parse_toml

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "rig" / "board"
TCP, LWIP = "posix-freertos-tcp", "posix-freertos-lwip"


def _runs(name: str) -> list[Path]:
    return sorted(d for d in (DATA / name).iterdir() if d.is_dir())


def _measured(text: str) -> dict[str, tuple[float, str, str, int]]:
    """Each value marked "measured: RUN KEY": its µs, run, key and the digits written."""
    got = {}
    for line in text.splitlines():
        m = _MEASURED.match(line)
        if m:
            key, value, unit, run, what = m.groups()
            us = float(value) * (1000.0 if unit == "ms" else 1.0)
            got[key] = (us, run, what, len(value.partition(".")[2]))
    return got


def _fitted(name: str) -> tuple[str, str, dict[str, float]]:
    """``rig fit`` on the kept runs ``name``: the preset's name, its text and each
    measured number in µs, by what was measured (the key a preset writes it under may
    differ: Plus-TCP's ``driver_wake`` is its ``driver_wake_input``)."""
    preset, text = board_from_runs(_runs(name), "a test")
    return preset, text, {what: us for us, _, what, _ in _measured(text).values()}


def _differs(shipped: dict, fitted: dict) -> set[str]:
    """The keys whose fitted value is not the shipped one at the shipped one's precision."""
    bad = set()
    for key, (us, _, _, digits) in shipped.items():
        scale = 1000.0 if key == "tick_real" else 1.0
        if abs(fitted[key][0] - us) > 0.5 * 10.0**-digits * scale + 1e-9:
            bad.add(key)
    return bad


@pytest.mark.parametrize("name", [TCP, LWIP])
def test_the_fit_is_a_preset_of_the_shipped_ones_schema(name):
    preset, text = board_from_runs(_runs(name), "a test")
    assert preset == name
    plat, costs, defaults = parse_preset(text, "fitted")
    assert plat.name == name
    shipped = parse_toml((platforms_dir() / f"{name}.toml").read_text(), name)
    fitted = parse_toml(text, "fitted")
    # the same tables and keys; only the measured numbers (and the source) are new
    assert {k: set(v) for k, v in fitted.items()} == {k: set(v) for k, v in shipped.items()}
    assert fitted["defaults"] == shipped["defaults"]
    marks = _measured(text)
    for table in ("platform", "costs"):
        for key, value in shipped[table].items():
            if key not in marks and key != "source" and not key.startswith("rx_path"):
                assert fitted[table][key] == value, key
    # every fitted number says where it came from, and the file the command and commit
    assert {what for _, _, what, _ in marks.values()} == set(BOARD_FITTED)
    assert "a test" in fitted["platform"]["source"] and "# fitted on: " in text


def test_the_fit_reproduces_the_lwip_presets_numbers():
    """The shipped lwIP preset was made by hand from these runs by the same rules: the
    fit gives back every number it marks measured, from the same run and key."""
    shipped = _measured((platforms_dir() / f"{LWIP}.toml").read_text())
    fitted = _measured(board_from_runs(_runs(LWIP), "a test")[1])
    assert set(shipped) == set(BOARD_FITTED)
    assert _differs(shipped, fitted) == set()
    for key, (_, run, what, _) in shipped.items():
        if key != "tick_real":  # the shipped one names the run at the median's digits
            assert fitted[key][1:3] == (run, what), key


@pytest.mark.parametrize("name", sorted(EMULATED_NIC))
def test_the_fit_reproduces_the_mps2_presets_numbers(name):
    """The MPS2 presets were made by hand from these runs by twin-mps2.md's rules
    (instruction counts, each number one run's, no split): ``rig fit`` (and so
    ``--calibrate``) gives back every number they mark measured, from the same run and
    key, and writes a preset of the shipped one's schema."""
    shipped = _measured((platforms_dir() / f"{name}.toml").read_text())
    preset, text = board_from_runs(_runs(name), "a test")
    assert preset == name
    parse_preset(text, "fitted")
    fitted = _measured(text)
    assert set(shipped) == set(fitted) and len(shipped) == len(BOARD_FITTED_EMULATED)
    assert {what for _, _, what, _ in fitted.values()} == set(BOARD_FITTED_EMULATED)
    assert _differs(shipped, fitted) == set()
    for key, (_, run, what, _) in shipped.items():
        if key != "tick_real":  # the shipped one names a run, the fit the median of all
            assert fitted[key][1:3] == (run, what), key


def test_the_fit_reproduces_the_plustcp_presets_numbers_but_the_stacks_split():
    """The shipped Plus-TCP preset splits the IP task's costs over the runs that counted its
    drains (tests/data/rig/board/posix-freertos-tcp-drains); the fit of the 16:46 runs,
    which did not, splits over their RX interrupts, SYN and ARP frames together. Its
    wake-up goes where the preset's note says it measured ``driver_wake``
    (``driver_wake_input``: the IP task's drain, the model having an input task); the
    preset's ``driver_wake``, measured by hand, is kept. Every other measured number is
    the shipped one."""
    shipped = _measured((platforms_dir() / f"{TCP}.toml").read_text())
    text = board_from_runs(_runs(TCP), "a test")[1]
    fitted = _measured(text)
    assert _differs(shipped, fitted) == {"driver_per_packet", "driver_wake_input"}
    assert fitted["driver_per_packet"][1] == fitted["driver_wake_input"][1] == "all-runs"
    assert fitted["driver_wake_input"][2] == "driver_wake" and "driver_wake" not in fitted
    keep = parse_toml((platforms_dir() / f"{TCP}.toml").read_text(), TCP)["costs"]
    assert parse_toml(text, "fitted")["costs"]["driver_wake"] == keep["driver_wake"]
    # the numbers docs/decisions/twin.md gives, and each fit's worst run off the line
    assert (fitted["driver_per_packet"][0], fitted["driver_wake_input"][0]) == (6.16, 35.4)
    assert "each run within 23 %" in board_from_runs(_runs(TCP), "a test")[1]
    assert "each run within 7 %" in board_from_runs(_runs(LWIP), "a test")[1]


def _copy_runs(tmp_path: Path, name: str) -> Path:
    runs = tmp_path / "runs"
    shutil.copytree(DATA / name, runs, ignore=shutil.ignore_patterns("*.md"))
    return runs


def test_rig_fit_writes_board_toml(tmp_path, capsys):
    out = tmp_path / "cal"
    assert cli.main(["rig", "fit", str(DATA / LWIP), "--out", str(out)]) == 0
    text = (out / "board.toml").read_text()
    assert text == board_from_runs(_runs(LWIP), _made_by_in(text))[1]
    assert "rtshield rig fit" in text and "commit " in text
    assert "board.toml" in capsys.readouterr().out


def _made_by_in(text: str) -> str:
    m = re.search(r'^source = "measured: (.*); ', text, re.M)
    assert m
    return m.group(1)


def test_a_cost_out_of_its_physical_bounds_is_refused(tmp_path, capsys):
    runs = _copy_runs(tmp_path, LWIP)
    dev_file = runs / "unprotected-syn" / "device.json"
    dev = json.loads(dev_file.read_text())
    # the input task's CPU time a hundred times over: 700 us a frame
    dev["threads_cpu_ns"] = {
        k: v * 100 if k.startswith("ethif#") else v for k, v in dev["threads_cpu_ns"].items()
    }
    dev_file.write_text(json.dumps(dev))
    msg = rig_error(capsys, ["rig", "fit", str(runs), "--out", str(tmp_path / "cal")])
    lo, hi, _ = BOARD_BOUNDS["isr_per_packet"]
    assert "isr_per_packet" in msg and "not physical" in msg and f"{lo:g}-{hi:g} us" in msg
    assert not (tmp_path / "cal" / "board.toml").exists()


def test_runs_that_cannot_separate_the_costs_are_refused(tmp_path, capsys):
    runs = _copy_runs(tmp_path, LWIP)
    only_unprotected = [str(runs / "unprotected-syn"), str(runs / "unprotected-arp")]
    msg = rig_error(capsys, ["rig", "fit", *only_unprotected, "--out", str(tmp_path / "a")])
    assert "rx_path_regular" in msg and "protected run" in msg
    elsewhere = str(tmp_path / "cal")
    msg = rig_error(capsys, ["rig", "fit", str(runs / "protected-syn"), "--out", elsewhere])
    assert "two runs" in msg
    msg = rig_error(capsys, ["rig", "fit", str(tmp_path / "nothing"), "--out", elsewhere])
    assert "neither a run's folder" in msg
    # the preset into the folder of the runs it reads: refused (the folder would be rewritten)
    msg = rig_error(capsys, ["rig", "fit", str(runs), "--out", str(runs)])
    assert "holds the run" in msg
    assert (runs / "protected-syn" / "device.json").is_file()
    # two targets' runs in one fit
    two = [str(DATA / LWIP / "protected-syn"), str(DATA / TCP / "unprotected-syn")]
    msg = rig_error(capsys, ["rig", "fit", *two, "--out", elsewhere])
    assert "more than one target" in msg


def test_rig_report_holds_the_runs_against_a_fitted_board(tmp_path, capsys):
    folder = _folder(tmp_path / "rig")  # fake Plus-TCP runs on the POSIX board
    cal = tmp_path / "cal"
    assert cli.main(["rig", "fit", str(DATA / TCP), "--out", str(cal)]) == 0
    board = cal / "board.toml"
    assert cli.main(["rig", "report", str(folder), "--board", str(board)]) == 0
    twin = json.loads((folder / "twin.json").read_text())
    assert twin["fit"]["best"] == str(board.resolve())
    fitted = parse_toml(board.read_text(), "board")["costs"]
    assert twin["fit"]["costs"] == fitted
    scen = (folder / "sim" / "protected-syn-own-rate-board-fitted" / "scenario.toml").read_text()
    assert f'driver_wake = "{fitted["driver_wake"]}"' in scen
    # fitted on another folder's runs: every run here is held out
    assert twin["fit"]["fitted_on"] == []
    assert {r["held_out"] for r in twin["runs"] if r["model"] == "fitted"} == {True}
    # the same preset said to be fitted on this folder's unprotected-syn: not held out
    text = re.sub(r"^# fitted on: .*$", f"# fitted on: unprotected-syn@{_folder_id(folder)}",
                  board.read_text(), flags=re.M)  # fmt: skip
    own = tmp_path / "own.toml"
    own.write_text(text)
    assert cli.main(["rig", "report", str(folder), "--board", str(own)]) == 0
    held = {r["run"]: r["held_out"] for r in json.loads((folder / "twin.json").read_text())[
        "runs"] if r["model"] == "fitted"}  # fmt: skip
    assert held == {"unprotected-syn": False, "protected-syn": True}


def test_rig_report_refuses_another_boards_preset(tmp_path, capsys):
    folder = _folder(tmp_path / "rig")
    cal = tmp_path / "cal"
    assert cli.main(["rig", "fit", str(DATA / LWIP), "--out", str(cal)]) == 0
    msg = rig_error(capsys, ["rig", "report", str(folder), "--board", str(cal / "board.toml")])
    assert LWIP in msg and TCP in msg
    bad = tmp_path / "bad.toml"
    bad.write_text('[platform]\nname = "x"\n')
    msg = rig_error(capsys, ["rig", "report", str(folder), "--board", str(bad)])
    assert str(bad) in msg
    msg = rig_error(capsys, ["rig", "report", str(folder), "--board", str(cal / "board.toml"),
                             "--fitted", str(cal / "board.toml")])  # fmt: skip
    assert "--fitted and --board" in msg


def test_calibrate_is_refused_where_the_board_has_no_model(capsys, monkeypatch):
    # every target has a board model today: one taken away (a new board's) is refused
    # before anything runs
    monkeypatch.delitem(freertos.BOARD_PRESETS, ("plustcp", "mps2-an385"))
    msg = rig_error(capsys, ["rig", "freertos-tcp", "--calibrate", "--board", "mps2-an385",
                             "--out", "/nonexistent/x"])  # fmt: skip
    assert "--calibrate" in msg and "mps2-an385" in msg and "no board model" in msg
    msg = rig_error(capsys, ["rig", "lwip", "--calibrate", "--variants", "protected",
                             "--out", "/nonexistent/x"])  # fmt: skip
    assert "--calibrate needs both --variants" in msg


def test_freertos_package_exports_the_fit(tmp_path):
    assert freertos.board_from_runs is board_from_runs


def test_a_fit_in_a_staged_rig_folder_names_the_folder_as_given(tmp_path):
    """``--calibrate`` fits the runs while its ``--out`` is still being written (a staging
    folder beside it): the preset names the folder the user gave, and its id."""
    from rtshield.outputs import abort_out_dirs, prepare_out_dir

    final = tmp_path / "ftcal"
    staging = prepare_out_dir(final)
    try:
        assert staging != final
        shutil.copytree(DATA / LWIP, staging / "runs", ignore=shutil.ignore_patterns("*.md"))
        runs = sorted(p.parent for p in (staging / "runs").glob("*/device.json"))
        _, text = board_from_runs(runs, "a test")
    finally:
        abort_out_dirs()
    assert str(staging) not in text and f"{final / 'runs'}/ (protected-arp" in text
    assert text.count(f"@{_folder_id(final)}\n") == 1


#: Kept `--calibrate` runs and the preset the docs quote from each: the first Plus-TCP one
#: (23:43 UTC, docs/decisions/twin.md) and lwIP's at 2 000, 5 000 pkt/s and full rate
#: (01:40 UTC, docs/decisions/twin-rates.md).
_QUOTED = {
    "posix-freertos-tcp-calibrated": (TCP, "4 runs", 29, {
        "tick_real": 1090.0, "isr_per_packet": 6.12, "driver_per_packet": 4.98,
        "driver_wake": 39.5, "rx_path_regular": 2.2, "rx_path_prio_raise": 3.9,
        "rx_path_rejected": 1.03}),
    "posix-freertos-lwip-rates": (LWIP, "12 runs", 10, {
        "tick_real": 1130.0, "isr_per_packet": 7.49, "driver_per_packet": 0.708,
        "driver_wake": 39.3, "rx_path_regular": 2.26, "rx_path_prio_raise": 4.06,
        "rx_path_rejected": 1.28}),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(_QUOTED))
def test_kept_calibrate_runs_give_the_numbers_the_docs_quote(name):
    """A real `--calibrate`'s kept records (tests/data/rig/board/NAME/): the preset the
    docs quote, within physical bounds, each number from the full-rate SYN runs (or
    all runs) as the fit's rules say."""
    preset, text, got = _fitted(name)
    want, runs, within, numbers = _QUOTED[name]
    assert preset == want and got == numbers
    assert f"least squares over {runs}" in text and f"each run within {within} %" in text
    assert _measured(text)["isr_per_packet"][1] == "unprotected-syn"
    assert _measured(text)["rx_path_regular"][1] == "protected-syn"
    # the paths no frame took are "chosen: as enqueue": the fitted enqueue's cost
    fitted = parse_toml(text, "fitted")["costs"]
    assert fitted["rx_path_short_circuit"] == fitted["rx_path_recycle"] == (
        f"{numbers['rx_path_regular']:g}us"
    )


def test_a_folder_id_written_while_staged_is_the_folders(tmp_path):
    """A rig run writes its calibration files (``rig-<run>@<folder id>``) and --calibrate's
    board.toml while its --out is a staging folder: the id is the folder's as given, the
    one ``rig report DIR --fitted/--board`` compares it with."""
    from rtshield.outputs import abort_out_dirs, prepare_out_dir

    final = tmp_path / "ft"
    staging = prepare_out_dir(final)
    try:
        assert staging != final and _folder_id(staging) == _folder_id(final)
    finally:
        abort_out_dirs()


def test_lwips_calibrate_needs_its_rates_below_the_ceiling():
    """lwIP's `--calibrate` at 2 000, 5 000 pkt/s and full rate (above): its four
    full-rate runs alone hand the stack the same frames a wake-up and the fit is refused
    (a negative cost per frame), as the first lwIP `--calibrate` run was."""
    full = [d for d in _runs("posix-freertos-lwip-rates") if not d.name.endswith("pps")]
    assert len(full) == 4
    with pytest.raises(UsageError, match=r"driver_per_packet = -2\.\d+ us .* not physical"):
        board_from_runs(full, "a test")
