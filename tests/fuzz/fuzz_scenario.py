"""Coverage-guided fuzz target (atheris) of the scenario loader, the front door of
``run``, ``compare`` and ``sweep``: arbitrary bytes through the input door's
decoder (:func:`rtshield.inputs.decode_text`), the TOML reader with its guards
(:func:`rtshield.tomlfile.parse_toml`) and the scenario's validation
(:func:`rtshield.scenario.parse_scenario`: the schema, the typed scenario and
the simulator's own configuration check).

A finding: any exception but :class:`~rtshield.errors.UsageError` (a traceback
for the user), or a refusal that is not one line naming the file (or the
platform preset whose default clashes), or an accepted scenario whose
duration, bin or times do not fit the 64-bit clock.

    nice -n 19 python tests/fuzz/fuzz_scenario.py -runs=1000000 -seed=1 \
        build/fuzz-py/corpus-scenario tests/fuzz/seeds/scenario

docs/fuzzing.md, "The front end's front door", records the campaigns.
"""

from __future__ import annotations

import os
import sys
import tempfile

import atheris

with atheris.instrument_imports(include=["rtshield"]):
    from rtshield.errors import UsageError
    from rtshield.inputs import decode_text
    from rtshield.scenario import parse_scenario
    from rtshield.tomlfile import parse_toml

# A pcap flow's file is read relative to the scenario's folder: an empty one.
ORIGIN = os.path.join(tempfile.mkdtemp(prefix="rtshield-fuzz-scenario-"), "fuzz.toml")
CLOCK_END = 2**63 - 1


def TestOneInput(data: bytes) -> None:  # noqa: N802 - atheris' name
    try:
        text = decode_text(data, ORIGIN, "scenario file")
        doc = parse_toml(text, ORIGIN)
        sc = parse_scenario(doc, ORIGIN, text=text)
    except UsageError as e:
        msg = str(e)
        head = msg.split(":")[0]
        if "\n" in msg or len(msg) > 1100 or not (
            msg.startswith(ORIGIN) or "platforms" in head
        ):
            raise AssertionError(f"not one line naming the file: {msg!r}") from None
        return
    assert 0 < sc.bin_ns <= sc.duration_ns <= CLOCK_END, (sc.bin_ns, sc.duration_ns)
    assert sc.duration_ns % sc.bin_ns == 0
    for f in sc.flows:
        for t, pps in f.schedule(sc.duration_ns):
            assert 0 <= t <= sc.duration_ns and pps >= 0


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
