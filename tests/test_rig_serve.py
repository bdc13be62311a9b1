"""`rtshield rig serve`'s FreeRTOS devices without root: the scenario each board serves
and the UDP echo service added to its config (the device itself: the served devices
in tests/test_rig_device_smoke.py)."""

from __future__ import annotations

from rig_checks import target_text

from rtshield.rig import freertos, serve


def test_each_board_serves_its_modbus_device():
    posix = serve.served_scenario(freertos.Target("lwip", "posix"))
    mps2 = serve.served_scenario(freertos.Target("plustcp", "mps2-an385"))
    assert posix.parts[-2:] == ("freertos", "modbus_device.toml")
    assert mps2.parts[-2:] == ("mps2-an385", "modbus_device.toml")
    # the MPS2 board's adds its global limit (the LAN9118 copies in its interrupt)
    text = target_text(mps2)
    assert "global_capacity 40" in text and "global_capacity" not in target_text(posix)


def test_the_echo_flow_takes_the_modbus_flows_values():
    text = target_text(serve.served_scenario(freertos.Target()))
    modbus = next(ln.split() for ln in text.splitlines() if ln.split()[:3][-1:] == ["modbus"])
    echo = serve.echo_flow(text)
    assert echo.endswith("\n")
    f = echo.split()
    assert f[:4] == ["flow", "echo", "echo", str(serve.ECHO_PORT)]
    assert f[4:] == modbus[4:]  # priority, server, queue, worker
    assert serve.echo_flow(text.replace(" modbus 5020 ", " udp 5020 ")) == ""


def test_why_a_device_ended_is_its_last_error_line_or_no_message(tmp_path):
    """What ``rig serve`` says when the device's process ended: the last line the device
    wrote to its error file; "no message" for an empty or missing file (an empty file
    once raised IndexError instead of the one-line error)."""
    err = tmp_path / "device.err"
    err.write_text("")
    assert serve.Served([], errors=err).why() == "no message"
    assert serve.Served([], errors=tmp_path / "none").why() == "no message"
    assert serve.Served([]).why() == "no message"
    err.write_text("starting\nrts_net: the link went down\n\n")
    assert serve.Served([], errors=err).why() == "rts_net: the link went down"
