import pytest

from rtshield.errors import UsageError
from rtshield.units import duration_ns, format_ns, rate_hz


@pytest.mark.parametrize(
    "text,ns",
    [
        ("10ms", 10_000_000),
        ("250us", 250_000),
        ("1.5s", 1_500_000_000),
        ("7ns", 7),
        ("2 ms", 2_000_000),
    ],
)
def test_durations(text, ns):
    assert duration_ns(text, "k") == ns


def test_cycles_need_a_clock():
    assert duration_ns("79cyc", "t_int", clock_hz=4e6) == 19750
    with pytest.raises(UsageError, match="t_int"):
        duration_ns("79cyc", "t_int")


@pytest.mark.parametrize("bad", [10, "10", "10 parsecs", True, None, "-5ms"])
def test_bad_durations_name_the_key(bad):
    with pytest.raises(UsageError, match="critical.period"):
        duration_ns(bad, "critical.period")


@pytest.mark.parametrize(
    "text,hz", [("4kHz", 4000.0), ("30000pps", 30000.0), ("600/20ms", 30000.0), ("110 Hz", 110.0)]
)
def test_rates(text, hz):
    assert rate_hz(text, "k") == pytest.approx(hz)


def test_bad_rate():
    with pytest.raises(UsageError, match="flows.rate"):
        rate_hz("fast", "flows.rate")


def test_format():
    assert format_ns(1_500_000) == "1.5ms"
    assert format_ns(250) == "250ns"
