"""libshield's test vectors (libshield/tests/vectors/*.toml) run through the
Python binding: the native library the simulator runs (link-time optimised,
-O2, hidden visibility) gives, row by row, the outcomes the C unit tests
check on their own build. The files are read and checked by the generator
the C build uses (gen_vectors.load); flag and enumerator values come from
the binding (lib.RTS_ACT_DROP), never from here."""

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from rtshield import _native

pytest.importorskip("tomllib", reason="the vectors' generator reads TOML with tomllib")

ROOT = Path(__file__).resolve().parents[1]
VECTORS = ROOT / "libshield" / "tests" / "vectors"
INCLUDE = ROOT / "libshield" / "include"


def _gen():
    spec = importlib.util.spec_from_file_location("gen_vectors", VECTORS / "gen_vectors.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


gen = _gen()
ffi, lib = _native.load()
NEVER = int(ffi.cast("uint64_t", -1))  # rts_countdown_next_event_at() when idle


def flags(names):
    """The rts_action flags named `names` (RTS_ACT_*), from the binding."""
    value = lib.RTS_ACT_NONE
    for name in names:
        value |= getattr(lib, name)
    return value


def check(got, want, what, row):
    assert got == want, f"{row['name']}: {what} == {got}, expected {want}"


def field(state, path):
    """`state`'s field at `path` (a C-like path: count, src[0].count)."""
    for part in re.findall(r"[a-z_][a-z0-9_]*|\[[0-9]+\]", path):
        state = state[int(part[1:-1])] if part.startswith("[") else getattr(state, part)
    return state


def check_after(state, table):
    """The table's expectations on the state after its last row."""
    for path, want in table.after.items():
        value = field(state, path)
        assert value == want, f"{table.name}: after the last row: {path} == {value}, want {want}"


def play(t, state, events, fields, key="ev"):
    """Each row of `t`: events[row[key]](row, i) (i counts rows from 1) runs the
    row's event and returns its rts_action, checked against the row's `action`
    (and `timer_at` where the table has it); then each column of `fields`
    against the state's field at that path (or the value of that function)."""
    for i, row in enumerate(t.rows, 1):
        a = events[row[key]](row, i)
        check(a.flags, flags(row["action"]), "flags", row)
        if "timer_at" in row:
            check(a.timer_at, row["timer_at"], "timer_at", row)
        for column, path in fields.items():
            got = path() if callable(path) else field(state, path)
            check(got, row[column], column, row)
    return state


NO_ACTION = ffi.new("rts_action *")[0]  # RTS_ACT_NONE, timer 0


# ------------------------------------------------------------ components
def run_strict(t):
    s = ffi.new("rts_strict *")
    assert lib.rts_strict_init(s, t.config["t_min"]) == lib.RTS_OK
    events = {"irq": lambda row, _: lib.rts_strict_on_irq_isr(s, row["now"]),
              "timer": lambda row, _: lib.rts_strict_on_timer_isr(s, row["now"])}
    fields = {k: k for k in ("admitted", "expiries", "port_errors")}
    return play(t, s, events, fields)


def run_bursty(t):
    b = ffi.new("rts_bursty *")
    c = t.config
    assert lib.rts_bursty_init(b, c["period"], getattr(lib, c["mode"])) == lib.RTS_OK
    sid = ffi.new("uint32_t *")
    for i, n in enumerate(c["burst"]):
        assert lib.rts_bursty_add_source(b, n, sid) == lib.RTS_OK
        assert sid[0] == i
    a = lib.rts_bursty_start(b, c["t0"])
    assert a.timer_at == c["t0"] + c["period"]

    def tick(row, _):
        mask = ffi.new("uint32_t *", 0xDEAD)
        a = lib.rts_bursty_on_tick_isr(b, row["now"], mask)
        check(mask[0], row["reenable"], "re-enabled mask", row)
        return a

    events = {"tick": tick}
    for src in range(len(c["burst"])):
        events[f"irq{src}"] = lambda row, _, src=src: lib.rts_bursty_on_irq_isr(b, src, row["now"])
    return play(t, b, events, {"count0": "src[0].count", "disabled": "disabled_mask"})


def run_countdown(t):
    c = ffi.new("rts_countdown *")
    assert lib.rts_countdown_init(c, t.config["tick_ns"], t.config["initial"]) == lib.RTS_OK
    assert lib.rts_countdown_next_event_at(c) == NEVER

    def configure(row, _):
        got = lib.rts_countdown_configure(c, row["tick_ns"], row["initial"], row["now"])
        check(got, lib.RTS_OK, "configure", row)
        return NO_ACTION

    events = {"arrival": lambda row, _: lib.rts_countdown_on_arrival_isr(c, row["now"]),
              "zero": lambda row, _: lib.rts_countdown_on_zero_isr(c, row["now"]),
              "configure": configure}
    def next_event():  # as the table writes it: "never" for an idle counter
        at = lib.rts_countdown_next_event_at(c)
        return "never" if at == NEVER else at

    fields = {k: k for k in ("delivered", "latches", "lost")}
    fields["next"] = next_event
    play(t, c, events, fields)
    arrivals = sum(row["ev"] == "arrival" for row in t.rows)
    assert c.arrivals == arrivals, f"{t.name}: arrivals == {c.arrivals}, expected {arrivals}"
    return c


def run_burst_mit(t):
    m = ffi.new("rts_burst_mit *")
    cfg = ffi.new("rts_burst_mit_cfg *", t.config)  # the keys are the fields
    assert lib.rts_burst_mit_init(m, cfg) == lib.RTS_OK
    events = {"rx": lambda row, _: lib.rts_burst_mit_on_rx_isr(m, row["now"]),
              "timer": lambda row, _: lib.rts_burst_mit_on_timer_isr(m, row["now"])}
    return play(t, m, events, {"count_after": "count", "slice_start_after": "slice_start"})


def run_budget_mit(t):
    cfg = ffi.new("rts_budget_mit_cfg *")
    lib.rts_budget_mit_cfg_default(cfg)
    for key, value in t.config.items():  # overrides of the defaults
        setattr(cfg, key, value)
    m = ffi.new("rts_budget_mit *")
    assert lib.rts_budget_mit_init(m, cfg) == lib.RTS_OK

    def poll(row, i):
        p = lib.rts_budget_mit_driver_poll(m, 100 * i)
        check(p.run, not row["suspended"], "poll run", row)
        check(p.sleep_ns, 0, "poll sleep_ns", row)
        return p.act

    # rows 100 ns apart; `arg` is the earliness or the work
    events = {"report": lambda row, i: lib.rts_budget_mit_on_cycle_end(m, 100 * i, row["arg"]),
              "packet": lambda row, i: lib.rts_budget_mit_on_packet_done(m, 100 * i, row["arg"], 7),
              "isr": lambda row, i: lib.rts_budget_mit_on_isr_work_isr(m, 100 * i, row["arg"]),
              "poll": poll}
    return play(t, m, events, {"budget": "budget_ns", "suspended": "suspended"}, key="op")


def run_nic_moderation(t):
    nic = ffi.new("rts_nic_moderation *")
    lib.rts_nic_moderation_init(nic)
    c = t.config
    q = ffi.new("uint8_t *")
    got = lib.rts_nic_moderation_bind(nic, lib.RTS_PROTO_UDP, 502, c["size"], c["t_abs"],
                                      c["t_pack"], c["frames"], 5, 3, q)
    assert got == lib.RTS_OK
    q = q[0]
    rx = ffi.new("rts_nic_moderation_rx_result *")
    for row in t.rows:
        if row["op"] == "rx":
            lib.rts_nic_moderation_rx(nic, lib.RTS_PROTO_UDP, 502, row["t"], rx)
            check(rx.outcome, lib.RTS_NIC_STORED, "outcome", row)
            check(rx.queue, q, "queue", row)
            check(rx.irq, row["irq"], "irq", row)
            if rx.irq:
                check(rx.announced, row["announced"], "announced", row)
        else:
            due = lib.rts_nic_moderation_next_expiry(nic) <= row["t"]
            check(due, row["irq"] != 0, "next_expiry <= t", row)
            mask = lib.rts_nic_moderation_expire(nic, row["t"])
            check(mask, row["irq"] << q, "expire mask", row)
            if mask:
                check(nic.q[q].announced, row["announced"], "announced", row)
        check(lib.rts_nic_moderation_next_expiry(nic), row["next"], "next_expiry", row)
    return nic


def run_detect(t):
    w = ffi.new("rts_detect_fill_wm *")
    assert lib.rts_detect_fill_wm_init(w, t.config["high"], t.config["low"]) == lib.RTS_OK
    for row in t.rows:
        change = lib.rts_detect_fill_wm_update(w, row["fill"])
        check(change, getattr(lib, row["change"]), "change", row)
        check(w.overload, row["overload"], "overload", row)
    return w


def run_flow_table(t):
    ft = ffi.new("rts_flow_table *")
    at, cfg = t.config["setup_at"], t.config
    lib.rts_flow_table_init(ft, at)
    fid = ffi.new("uint8_t *")
    assert lib.rts_flow_table_bind(ft, lib.RTS_PROTO_UDP, 502, 0, fid) == lib.RTS_OK
    fid = fid[0]
    assert lib.rts_flow_table_admit_isr(ft, fid, at)  # no server yet: unlimited
    cap = lib.rts_flow_table_setopt(ft, fid, lib.RTS_FLOWOPT_CAPACITY, cfg["capacity"], at)
    assert cap == lib.RTS_OK
    assert lib.rts_flow_table_admit_isr(ft, fid, at)  # still unlimited: no period
    period = lib.rts_flow_table_setopt(ft, fid, lib.RTS_FLOWOPT_PERIOD_NS, cfg["period_ns"], at)
    assert period == lib.RTS_OK
    for row in t.rows:
        check(lib.rts_flow_table_admit_isr(ft, fid, row["t"]), row["admitted"], "admitted", row)
    return ft


RUNNERS = {
    "strict": run_strict,
    "bursty": run_bursty,
    "countdown": run_countdown,
    "burst_mit": run_burst_mit,
    "budget_mit": run_budget_mit,
    "nic_moderation": run_nic_moderation,
    "detect": run_detect,
    "flow_table": run_flow_table,
}


def _cases():
    for path in sorted(VECTORS.glob("*.toml")):
        vectors = gen.load(path, INCLUDE)
        for table in vectors.tables:
            yield pytest.param(vectors.component, table, id=f"{vectors.component}.{table.name}")


@pytest.mark.parametrize(("component", "table"), list(_cases()))
def test_vectors_through_binding(component, table):
    state = RUNNERS[component](table)
    check_after(state, table)


def test_every_vectors_file_has_a_runner():
    files = {p.stem for p in VECTORS.glob("*.toml")}
    assert files, "no vectors files"
    assert files <= set(RUNNERS), f"no runner for {sorted(files - set(RUNNERS))}"


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('action = ["enable_line"]', 'action = ["enable_lines"]',
         "strict.toml: table sequence, row 2 ('timer expiry re-enables'), key action: "
         "unknown action flag 'enable_lines' (no RTS_ACT_ENABLE_LINES in rts_types.h)"),
        ("admitted = 1,", "admited = 1,",
         "strict.toml: table sequence, row 1 ('first irq admitted, timer at now+t_min'), "
         "key admited: unknown key"),
        ('ev = "timer"', 'ev = "tick"',
         "strict.toml: table sequence, row 2 ('timer expiry re-enables'), key ev: "
         "unknown event 'tick'"),
        ("t_min = 1000", "t_mn = 1000", "strict.toml: table sequence, key t_mn: unknown key"),
    ],
)
def test_generator_names_the_mistake(tmp_path, capsys, old, new, message):
    bad = tmp_path / "strict.toml"
    bad.write_text((VECTORS / "strict.toml").read_text().replace(old, new, 1))
    out = tmp_path / "vectors_strict.h"
    assert gen.main(["gen_vectors.py", str(INCLUDE), str(bad), str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"gen_vectors: {message}"), err
    assert err.count("\n") == 1
    assert not out.exists()
