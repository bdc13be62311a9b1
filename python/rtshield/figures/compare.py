"""The figures of a comparison: small multiples, one panel per configuration on
shared axes (:func:`compare_figures`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rtshield.outputs import remove_ours

if TYPE_CHECKING:  # matplotlib is imported by the functions that draw
    from matplotlib.figure import Figure
from rtshield.figures import layout

__all__ = ["compare_figures", "flows_grid_figure", "grid_figure", "overlay_figure"]


def _grid_shape(n: int) -> tuple[int, int]:
    cols = 1 if n <= 1 else 2 if n <= 8 else 3
    return math.ceil(n / cols), cols


def grid_figure(runs: Sequence[tuple[str, Mapping[str, Any]]], kind: str) -> Figure:
    """Small multiples, one panel per run on shared axes: ``kind`` is ``"packets"`` or
    ``"critical"``. Axis labels on the outer panels only, one legend above them all."""
    n = max(1, len(runs))
    rows, cols = _grid_shape(n)
    twin = kind != "packets"
    panel_w, panel_h = (3.4, 2.1) if cols > 2 else (4.8, 2.1)
    left, right = (0.85, 0.85 if twin else 0.25)
    wgap = 0.75 if twin else 0.25
    width = left + right + cols * panel_w + (cols - 1) * wgap
    top = layout.TITLE_IN + layout.LEGEND_IN + layout.PANEL_TITLE_IN
    height = top + 0.55 + rows * panel_h + (rows - 1) * 0.45
    fig = layout.new_figure(width, height, left=left, right=right, top=top, bottom=0.55, rows=rows,
                            cols=cols, hgap=0.45, wgap=wgap)
    axes = fig.subplots(rows, cols, squeeze=False, sharex=True, sharey=True)
    artists: list = []
    if kind == "packets":
        for i, (name, ts) in enumerate(runs):
            ax = axes[i // cols][i % cols]
            drawn = layout.packets_axes(ax, ts)
            artists = artists or drawn
            ax.set_title(name, fontsize="medium")
        layout.suptitle(fig, "Sent, received and processed packets per second")
        ylabel = "packets per second"
    else:
        late_top = layout.finite_max(*(layout.column(ts, "lateness_pct") for _, ts in runs))
        cyc_top = layout.finite_max(*(layout.per_second(ts, "cycles") for _, ts in runs))
        first_twin = None
        for i, (name, ts) in enumerate(runs):
            r, c = divmod(i, cols)
            ax = axes[r][c]
            ax2, drawn = layout.critical_axes(ax, ts, late_top=late_top, cycles_top=cyc_top)
            if first_twin is None:
                first_twin = ax2
            else:
                ax2.sharey(first_twin)
            if c != cols - 1 and i != len(runs) - 1:
                ax2.tick_params(axis="y", labelright=False)
            else:
                ax2.set_ylabel("lateness [%]", color="tab:red")
            artists = artists or drawn
            ax.set_title(name, fontsize="medium")
        layout.suptitle(
            fig, "Completed critical cycles per second and accumulated lateness per bin"
        )
        ylabel = "cycles per second"
    _label_grid(axes, n, len(runs), ylabel)
    layout.legend_top(fig, artists)
    return fig


def _label_grid(axes, n: int, used: int, ylabel: str) -> None:
    """Label a grid of ``n`` time panels: ``ylabel`` on the first column, the time axis
    under the lowest panel of each column; the panels past ``used`` are hidden."""
    rows, cols = len(axes), len(axes[0])
    for r in range(rows):
        axes[r][0].set_ylabel(ylabel)
    for j in range(n):
        r, c = divmod(j, cols)
        if r == rows - 1 or j + cols >= n:
            axes[r][c].set_xlabel("time [s]")
            axes[r][c].xaxis.set_tick_params(labelbottom=True)
    for j in range(used, rows * cols):
        axes[j // cols][j % cols].set_visible(False)


def overlay_figure(
    runs: Sequence[tuple[str, Mapping[str, Any]]],
    column: str,
    ylabel: str,
    title: str,
    *,
    per_second: bool = True,
    reference: str | None = None,
) -> Figure:
    """``column`` (e.g. processed packets, lateness) as small multiples: one panel per run,
    shared axes; ``reference`` (e.g. ``"offered"``) drawn dotted grey in every panel."""
    n = max(1, len(runs))
    rows, cols = _grid_shape(n)
    panel_w, panel_h = (3.4, 1.9) if cols > 2 else (4.8, 1.9)
    width = 0.85 + 0.25 + cols * panel_w + (cols - 1) * 0.25
    top = layout.TITLE_IN + layout.LEGEND_IN + layout.PANEL_TITLE_IN
    height = top + 0.55 + rows * panel_h + (rows - 1) * 0.45
    fig = layout.new_figure(width, height, left=0.85, right=0.25, top=top, bottom=0.55,
                            rows=rows, cols=cols, hgap=0.45, wgap=0.25)
    axes = fig.subplots(rows, cols, squeeze=False, sharex=True, sharey=True)
    artists: list = []
    for i, (name, ts) in enumerate(runs):
        ax = axes[i // cols][i % cols]
        drawn = []
        if reference:
            ref = layout.per_second(ts, reference)
            if ref is not None:
                drawn += layout.stairs(ax, ts, ref, color="0.6", lw=2.0, ls=":", label=reference)
        y = layout.per_second(ts, column) if per_second else layout.column(ts, column)
        if y is not None:
            drawn += layout.stairs(ax, ts, y, lw=1.3, color="tab:green", label=ylabel)
        artists = artists or drawn
        ax.set_title(name, fontsize="medium")
        ax.grid(True, alpha=0.3)
        ax.set_ylim(bottom=0)
    _label_grid(axes, n, len(runs), ylabel)
    layout.legend_top(fig, artists)
    layout.suptitle(fig, title)
    return fig


def flows_grid_figure(runs: Sequence[tuple[str, Mapping[str, Any]]]) -> Figure | None:
    """Each flow's offered and delivered packets per second: one row per flow, one column
    per run; a row shares its scale across the runs, each flow has its own (a 500 pkt/s
    flow stays visible beside a 200 000 pkt/s flood). None unless some run has two
    flows or more."""
    names: list[str] = []
    for _, ts in runs:
        names += [f for f in layout.flow_names(ts) if f not in names]
    if len(names) < 2 or not runs:
        return None
    rows, cols = len(names), len(runs)
    panel_w = 3.4 if cols > 2 else 4.8
    top = layout.TITLE_IN + layout.LEGEND_IN + layout.PANEL_TITLE_IN
    width = 0.85 + 0.25 + cols * panel_w + (cols - 1) * 0.25
    height = top + 0.55 + rows * 1.7 + (rows - 1) * 0.45
    fig = layout.new_figure(width, height, left=0.85, right=0.25, top=top, bottom=0.55,
                            rows=rows, cols=cols, hgap=0.45, wgap=0.25)
    axes = fig.subplots(rows, cols, squeeze=False, sharex=True, sharey="row")
    artists: list = []
    for r, flow in enumerate(names):
        hi = layout.finite_max(*(layout.per_second(ts, f"flow_{flow}_{k}") for _, ts in runs
                                 for k in ("offered", "delivered")))
        for c, (run, ts) in enumerate(runs):
            ax = axes[r][c]
            drawn = layout.flow_axes(ax, ts, flow, top=hi)
            artists = artists or drawn
            ax.set_title(f"{run}: flow {flow}", fontsize="small")
            if c == 0:
                ax.set_ylabel("packets / s", fontsize="small")
            if r == rows - 1:
                ax.set_xlabel("time [s]")
    layout.legend_top(fig, artists)
    layout.suptitle(fig, "Each flow's offered and delivered packets per second (one scale "
                         "per flow)")
    return fig


def compare_figures(
    runs: Sequence[tuple[str, Mapping[str, Any]]], out_dir: str | Path
) -> dict[str, Path]:
    """Write the comparative figures; returns ``{"packets_grid": path, ...}``.

    Both are small multiples, one panel per configuration on shared axes, in
    the style of Danicki et al. Figures 6–8 (packets) and 6b/d, 7b/d
    (critical cycles and lateness); with two flows or more also
    ``compare_flows.png`` (:func:`flows_grid_figure`).
    """
    out = Path(out_dir)
    for stale in ("compare_processed.png", "compare_lateness.png"):  # earlier versions' overlays
        remove_ours(out / stale)
    paths = {
        "packets_grid": layout.save_png(
            grid_figure(runs, "packets"), out / "compare_packets.png"
        ),
        "critical_grid": layout.save_png(
            grid_figure(runs, "critical"), out / "compare_critical.png"
        ),
    }
    fig = flows_grid_figure(runs)
    if fig is not None:
        paths["flows_grid"] = layout.save_png(fig, out / "compare_flows.png")
    else:  # an earlier comparison's figure: only if rtshield wrote it
        remove_ours(out / "compare_flows.png")
    return paths
