"""Bad input the fuzz target of the scenario → C configuration path found
(libshield/tests/fuzz/fuzz_sim_config.c, docs/fuzzing.md): scenarios the
front end accepted but the simulator could not create, which ended in
"rtsim_create failed (out of memory)" and a traceback. Each is now refused
by every verb that runs it with exit status 2 and one line naming the key,
before anything is written.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rtshield import cli

REPO = Path(__file__).resolve().parent.parent
OTHER = REPO / "scenarios" / "examples" / "multiqueue_table2.toml"
MULTIQUEUE = OTHER.read_text().replace('name = "multiqueue_table2"', 'name = "edited"', 1)
SHORT = ["--set", "scenario.duration=10ms", "--set", "scenario.bin=10ms"]


def _sub(old: str, new: str) -> str:
    assert old in MULTIQUEUE, old
    return MULTIQUEUE.replace(old, new, 1)


CASES = [
    # a frame threshold above the queue's size (rts_nic_moderation_queue_add() refuses it)
    ("nic-frames-above-size",
     _sub('name = "q0"\nsize = 128', 'name = "q0"\nsize = 128\nframes = 129'),
     ["nic.queues.frames: at most the queue's size"]),
    # an unbound UDP flow on port 0 mapped to a NIC queue: no distribution-map key
    ("nic-mapped-port-0", _sub("dst_port = 9999", 'nic_queue = "q1"\ndst_port = 0'),
     ["flows.dst_port: 1..65535 for a flow mapped to a NIC queue"]),
]


def _verbs(path: Path, out: Path) -> list[list]:
    return [
        ["run", path, "--out", out, *SHORT],
        ["compare", OTHER, path, "--out", out, *SHORT],
        ["sweep", path, "--set", "scenario.seed=1,2", "--out", out, *SHORT],
    ]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("verb", range(3))
def test_refused_in_one_line_before_anything_is_written(tmp_path, capsys, case, verb):
    name, text, needles = case
    f = tmp_path / "bad.toml"
    f.write_text(text)
    out = tmp_path / "o"
    rc = cli.main([str(a) for a in _verbs(f, out)[verb]])
    err = capsys.readouterr().err
    assert rc == 2, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("rtshield: error: "), err
    assert "Traceback" not in err and "out of memory" not in err
    assert "bad.toml" in lines[0]
    for n in needles:
        assert n in lines[0], lines[0]
    assert not out.exists()


def test_the_limits_leave_valid_multiqueue_scenarios_alone(tmp_path, capsys):
    """The threshold at the size and a portless mapped flow are accepted."""
    f = tmp_path / "ok.toml"
    f.write_text(_sub('name = "q0"\nsize = 128', 'name = "q0"\nsize = 128\nframes = 128'))
    rc = cli.main(["run", str(f), "--out", str(tmp_path / "o"), *SHORT])
    assert rc == 0, capsys.readouterr().err
    assert (tmp_path / "o" / "summary.json").exists()
