"""The report's formatting, page frame and figures (rtshield.report, rtshield.figures)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from rtshield import figures, report


def test_numbers_read_as_numbers_with_units():
    nb = "\u202f"
    assert report.fmt_number(2_250_000) == f"2{nb}250{nb}000"
    assert report.fmt_number(84060.1, "%") == f"84{nb}060.1\u00a0%"
    assert report.fmt_number(2.489425, "s") == "2.489\u00a0s"
    assert report.fmt_number(0.004263) == "0.0043"
    assert report.fmt_number(True) == "yes" and report.fmt_number(False) == "no"
    assert report.fmt_number(None) == "—" and report.fmt_number(float("nan")) == "—"
    assert report.fmt_named("rx_disabled_s", 13.93802) == "13.94\u00a0s"
    assert report.fmt_named("sleep", "1ms") == "1ms"
    assert report.fmt_named("period_ns", 20_000_000) == "20ms"
    assert report.fmt_named("enabled", True) == "yes"


def test_page_has_a_table_of_contents_with_unique_ids():
    body = ("<h1>Title</h1><h2>Key numbers</h2><h2>Key numbers</h2>"
            '<h2 id="mine">Claims <a href="x">(own report)</a></h2><h3>Sub &amp; part</h3>'
            "<h2>Contents</h2>")
    page = report.page("T <b>", body)
    ids = re.findall(r'id="([^"]+)"></a><h[1-3]', page) + re.findall(r'<h[1-3] id="([^"]+)"', page)
    assert len(ids) == len(set(ids)) == 6
    assert "mine" in ids and "key-numbers" in ids and "key-numbers-2" in ids
    # Headings keep their markup (callers find them by it); the anchor goes before.
    assert '<a class="anchor" id="key-numbers"></a><h2>Key numbers</h2>' in page
    # A body that passes through twice (a study's page inside the demo's) keeps its anchors.
    inner = page[page.index("<body>\n") + 7 : page.index('<p class="note">')]
    again = report.page("outer", "<h1>Outer</h1>" + inner.replace(
        "<h2>Key numbers</h2>", '<h2 id="km">Key numbers</h2>', 1))
    again_ids = re.findall(r'id="([^"]+)"', again)
    assert len(again_ids) == len(set(again_ids))
    assert set(ids) <= set(again_ids) and "km" in again_ids
    assert 'href="#km"' in again
    nav = page[page.index('<nav class="toc"'):]
    hrefs = re.findall(r'href="#([^"]+)"', nav)
    assert hrefs == ["key-numbers", "key-numbers-2", "mine", "sub-part"]  # title, Contents left out
    assert ">Claims</a>" in nav and "Sub &amp; part" in nav
    assert "<title>T &lt;b&gt;</title>" in page  # the title is escaped
    # The frame demo.py cuts a study's body out of: the body, then the closing note.
    assert "<body>\n" in page and page.index("<body>") < page.index('<p class="note">')


def test_python_literals_in_cells_read_as_words():
    page = report.page("t", "<table><tr><td>None</td><td>True</td><td>False</td>"
                            "<td>nan</td><td>None of them</td></tr></table>")
    assert "<td>—</td><td>yes</td><td>no</td><td>—</td><td>None of them</td>" in page


def test_short_pages_have_no_contents_sidebar():
    assert "<nav" not in report.page("t", "<h1>t</h1><h2>a</h2>")


def test_verdict_table_marks_and_escapes():
    html = report.verdict_table(
        [(["<b>claim</b>", "1"], True), (["c2", "2"], False), (["c3", "3"], None)],
        ["claim", "value", "verdict"],
    )
    assert "&lt;b&gt;claim&lt;/b&gt;" in html
    assert 'class="verdict ok">holds' in html and 'class="verdict no">does not hold' in html
    assert ">not run<" in html and "True" not in html and "None" not in html


def test_templates_escape_scenario_text(tmp_path):
    from rtshield.report import RunEntry, run_report
    from rtshield.scenario import loads_scenario

    sc = loads_scenario(
        '[scenario]\nname = "x"\ndescription = "<script>alert(1)</script>"\n'
        'platform = "esp32-freertos"\nduration = "2s"\n', "x.toml")
    summary = {"critical": {"cycles": 3}, "mitigation": {"name": "none", "flag": True,
                                                         "parameters": {"hold": None}}}
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = run_report(tmp_path / "a", RunEntry(sc, summary, {}))
    b = run_report(tmp_path / "b", RunEntry(sc, summary, {}))
    text = a.read_text()
    assert "<script>" not in text and "&lt;script&gt;" in text
    assert a.read_bytes() == b.read_bytes()  # deterministic
    mit = text[text.index(">Mitigation<"):]
    assert ">yes<" in mit and "—" in mit and ">True<" not in text and ">None<" not in text


def _report_with_cache(tmp_path, monkeypatch, cache_home, name):
    """run_report in a fresh template environment, the cache under ``cache_home``."""
    from rtshield.report import RunEntry, run_report
    from rtshield.scenario import loads_scenario

    monkeypatch.setenv("XDG_CACHE_HOME", str(cache_home))
    report._env.cache_clear()
    sc = loads_scenario('[scenario]\nname = "x"\nplatform = "esp32-freertos"\n'
                        'duration = "2s"\n', "x.toml")
    summary = {"critical": {"cycles": 3}, "mitigation": {"name": "none", "parameters": {}}}
    (tmp_path / name).mkdir()
    try:
        return run_report(tmp_path / name, RunEntry(sc, summary, {})).read_bytes()
    finally:
        report._env.cache_clear()


def test_compiled_templates_are_cached_and_pages_unchanged(tmp_path, monkeypatch):
    # no cache possible (XDG_CACHE_HOME is a file): compiled on every run
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))
    assert report.template_cache_dir() is None
    plain = _report_with_cache(tmp_path, monkeypatch, tmp_path / "file", "plain")
    cache = tmp_path / "cache"
    first = _report_with_cache(tmp_path, monkeypatch, cache, "first")
    stored = sorted((cache / "rtshield" / "templates").iterdir())
    assert len(stored) >= 2  # run.html.j2 and page.html.j2 at least
    mtimes = [p.stat().st_mtime_ns for p in stored]
    second = _report_with_cache(tmp_path, monkeypatch, cache, "second")  # read from the cache
    assert [p.stat().st_mtime_ns for p in stored] == mtimes
    assert plain == first == second


def test_template_cache_only_in_a_folder_of_this_user(tmp_path, monkeypatch):
    import os

    d = tmp_path / "rtshield" / "templates"
    d.mkdir(parents=True)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert report.template_cache_dir() == d
    monkeypatch.setenv("XDG_CACHE_HOME", "relative")  # XDG: relative paths are ignored
    assert report.template_cache_dir() == Path.home() / ".cache" / "rtshield" / "templates"
    try:
        os.chown(d, os.getuid() + 1, -1)
    except PermissionError:
        pytest.skip("needs root to give a folder to another user")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert report.template_cache_dir() is None


def test_figure_module_imports_without_matplotlib():
    """Importing rtshield.figures (and the report) must not import matplotlib."""
    import subprocess

    code = ("import sys, rtshield.figures, rtshield.report; "
            "print('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _ts(n, late):
    t = np.arange(n, dtype=float)
    return {"t_s": t, "offered": t * 1000, "received": t * 900, "processed": t * 800,
            "cycles": np.full(n, 100.0), "lateness_pct": np.asarray(late, dtype=float)}


def test_grid_shares_axes_and_keeps_legends_outside():
    runs = [(f"r{i}", _ts(5, [0, 0, 10.0 ** i, 0, 0])) for i in range(5)]
    for kind in ("packets", "critical"):
        fig = figures.grid_figure(runs, kind)
        assert fig.get_layout_engine() is None  # a fixed layout
        axes = [ax for ax in fig.axes if ax.get_visible() and ax.get_title()]
        assert [ax.get_title() for ax in axes] == [r for r, _ in runs]
        assert all(ax.get_legend() is None for ax in fig.axes)
        assert len(fig.legends) == 1
        assert len({ax.get_ylim() for ax in axes}) == 1 and len({ax.get_xlim() for ax in axes}) == 1
    # Lateness spanning decades: one symlog axis shared by every panel.
    twins = [ax for ax in fig.axes if ax.get_yscale() == "symlog"]
    assert len(twins) == len(runs) and len({ax.get_ylim() for ax in twins}) == 1


def test_log_rebin_keeps_every_cycle_and_spans_the_range():
    edges = np.arange(0, 10_000_001, 100, dtype=float)
    counts = np.zeros(len(edges) - 1)
    counts[100] = 3000  # 10 ms cycles
    counts[-1] = 2      # two cycles of 10 s
    e, c = figures.log_rebin(edges, counts)
    assert c.sum() == 3002 and len(c) == 60
    assert e[0] == pytest.approx(10_000) and e[-1] == pytest.approx(10_000_000)
    narrow_e, narrow_c = figures.log_rebin(edges[:5], np.array([0, 4, 5, 0.0]))
    assert list(narrow_c) == [4, 5] and list(narrow_e) == [100, 200, 300]


def test_cycle_time_figure_of_a_late_run_has_visible_bars():
    edges = np.arange(0, 10_000_001, 100, dtype=float)
    counts = np.zeros(len(edges) - 1)
    counts[100] = 3000
    counts[-1] = 2
    fig = figures.cycle_time_figure((edges, counts), "late", period_us=10_000)
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert "ms" in ax.get_xlabel() and len(fig.legends) == 1
    text = fig.legends[0].get_texts()[0].get_text()
    assert "3\u2009002 in all" in text and "longer than the period" in text


def test_render_writes_a_png_or_nothing(tmp_path):
    p = figures.render("packets", tmp_path / "p.png", _ts(3, [0, 0, 0]), "t")
    assert p.read_bytes()[:4] == b"\x89PNG"
    assert figures.render("cycle_time", tmp_path / "c.png", None, "t") is None
    assert not (tmp_path / "c.png").exists()
    with pytest.raises(ValueError, match="unknown figure"):
        figures.render("nope", tmp_path / "n.png")


def test_comparison_drops_the_old_overlays_it_wrote(tmp_path):
    from rtshield.outputs import atomic_write

    atomic_write(tmp_path / "compare_processed.png", b"old overlay")
    (tmp_path / "compare_lateness.png").write_bytes(b"the user's own file")
    runs = [("a", _ts(3, [0, 1, 0])), ("b", _ts(3, [0, 0, 0]))]
    paths = figures.compare_figures(runs, tmp_path)
    assert set(paths) == {"packets_grid", "critical_grid"}
    assert not (tmp_path / "compare_processed.png").exists()
    assert (tmp_path / "compare_lateness.png").read_bytes() == b"the user's own file"


def test_reports_name_the_scenario_file_the_user_can_edit(tmp_path):
    """A file the user gave is named as given; a shipped study's file (inside the
    installed package) as scenarios/FOLDER/FILE, with how to run an edited copy."""
    from rtshield.report import RunEntry, run_report, scenario_file
    from rtshield.scenario import load_scenario

    shipped = report._SHIPPED / "danicki2021" / "burst.toml"
    name, hint = scenario_file(shipped)
    assert name == "scenarios/danicki2021/burst.toml"
    assert "cp -r scenarios/danicki2021 mine" in hint and "--scenarios mine" in hint
    assert scenario_file("mine/burst.toml") == ("mine/burst.toml", "")
    assert scenario_file("scenarios/examples/constant_flood.toml")[1] == ""
    if shipped.is_file():  # the package carries the studies (tools/dev.sh links them)
        sc = load_scenario(shipped)
        text = run_report(tmp_path, RunEntry(sc, {"critical": {"cycles": 1}}, {})).read_text()
        assert "<code>scenarios/danicki2021/burst.toml</code>" in text
        assert str(report._SHIPPED) not in text and "site-packages" not in text


def test_flows_figure_shows_a_small_flow_on_its_own_scale():
    """A 500 pkt/s flow beside a 200 000 pkt/s flood: one panel per flow, each scaled to
    its flow, so the small flow fills its panel."""
    n = 6
    ts = {"t_s": np.arange(n, dtype=float),
          "flow_hp_offered": np.full(n, 500), "flow_hp_delivered": np.full(n, 400),
          "flow_flood_offered": np.full(n, 200_000), "flow_flood_delivered": np.zeros(n)}
    fig = figures.flows_figure(ts, "t")
    hp, flood = (ax for ax in fig.axes if ax.get_title(loc="left"))
    assert hp.get_title(loc="left") == "flow hp" and 500 <= hp.get_ylim()[1] < 1000
    assert flood.get_ylim()[1] >= 200_000
    assert figures.flows_figure({k: v for k, v in ts.items() if "flood" not in k}, "t") is None
    grid = figures.flows_grid_figure([("a", ts), ("b", ts)])
    tops = {ax.get_title(): ax.get_ylim()[1] for ax in grid.axes if ax.get_title()}
    assert tops["a: flow hp"] == tops["b: flow hp"] < 1000 < tops["a: flow flood"]


def test_a_page_sets_its_figures_aside_and_is_the_page_without(monkeypatch):
    """The page's passes (contents, anchors, literal cells) skip the embedded
    figures' base64 and give the same page as when they scan it; a body whose text
    holds the mark is left as it is."""
    import re

    from rtshield import report

    png = "data:image/png;base64," + "iVBORw0KGgo+/=" * 5000
    other = "data:image/png;base64," + "QUJD" * 100
    body = (f"<h1>Run</h1><h2>Packets</h2><img src=\"{png}\"><h2>Cells</h2>"
            f"<table><tr><td>None</td></tr></table><h3>More</h3><img src=\"{other}\">")
    fast = report.page("t", body)
    marked = report.page("t", body + "<p>" + report._IMAGE_ASIDE + "0:</p>")
    monkeypatch.setattr(report, "_DATA_URI", re.compile(r"(?!)"))  # never sets aside
    assert fast == report.page("t", body)
    assert marked == report.page("t", body + "<p>" + report._IMAGE_ASIDE + "0:</p>")
    assert fast.count(png) == 1 and fast.count(other) == 1 and "<td>—</td>" in fast
    assert report._IMAGE_ASIDE not in fast
    assert 'id="packets"' in fast
