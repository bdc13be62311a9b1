"""`rtshield rig device` and `rtshield rig serve`: every refusal is one line and exit 2,
before anything is sent or created. No root needed (root is pretended where the check
comes after it)."""

from __future__ import annotations

import shutil

import pytest
from rig_checks import rig_error

from rtshield.rig import harness


def _device(tmp_path, *extra: str) -> list[str]:
    return ["rig", "device", "--out", str(tmp_path / "o"), *extra]


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--iface", "lo"], "missing option '--target'"),
        (["--target", "10.0.0.1"], "missing option '--iface'"),
        (["--target", "300.1.1.1", "--iface", "lo"], "--target '300.1.1.1' is not an IPv4"),
        (["--target", "224.0.0.1", "--iface", "lo"], "not a device's unicast address"),
        (["--target", "10.0.0.1", "--iface", "a/b"], "--iface: 'a/b' is not an interface"),
        (["--target", "10.0.0.1", "--iface", "lo", "--max-rate", "fast"],
         "--max-rate 'fast' is not a number"),
        (["--target", "10.0.0.1", "--iface", "lo", "--max-rate", "0"],
         "--max-rate must be between 1"),
        (["--target", "10.0.0.1", "--iface", "lo", "--profile", "/nonexistent.toml"],
         "/nonexistent.toml"),
        (["--target", "10.0.0.1", "--iface", "lo", "--storms", "smurf"],
         "no storm named smurf in the profile"),
        (["--target", "10.0.0.1", "--iface", "lo", "--monitors", ","], "--monitors is empty"),
    ],
)
def test_device_usage_errors(capsys, tmp_path, args, needle):
    msg = rig_error(capsys, _device(tmp_path, *args))
    assert needle in msg
    assert not (tmp_path / "o").exists()


def test_device_needs_root(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(harness.os, "geteuid", lambda: 1000)
    msg = rig_error(capsys, _device(tmp_path, "--target", "10.0.0.1", "--iface", "lo"))
    assert "needs root" in msg and not (tmp_path / "o").exists()


@pytest.mark.skipif(shutil.which("trafgen") is None or shutil.which("nmap") is None,
                    reason="the storms' tools are checked first (tools/install.sh --rig)")
def test_device_refuses_an_interface_that_does_not_lead_to_the_target(capsys, monkeypatch,
                                                                     tmp_path):
    monkeypatch.setattr(harness.os, "geteuid", lambda: 0)
    msg = rig_error(capsys, _device(tmp_path, "--target", "10.0.0.1", "--iface", "rtsnone0"))
    assert "--iface rtsnone0: no such interface" in msg
    msg = rig_error(capsys, _device(tmp_path, "--target", "192.0.2.1", "--iface", "lo"))
    assert "the route to 192.0.2.1 goes through" in msg and "not --iface lo" in msg
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "args, needle",
    [
        (["vxworks"], "'vxworks' is not a target: freertos-tcp, linux"),
        (["linux", "--protect", "maybe"], "--protect must be on or off"),
        (["freertos-tcp", "--board", "mps9"], "--board 'mps9' is not one of posix"),
        (["linux", "--scenario", "x.toml"], "--scenario is an option of freertos-tcp"),
        (["linux", "--iface", "waytoolonginterfacename"], "is not an interface name"),
    ],
)
def test_serve_usage_errors(capsys, args, needle):
    assert needle in rig_error(capsys, ["rig", "serve", *args])
