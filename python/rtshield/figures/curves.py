"""The analysis report's figure: each interrupt line's arrival curves (the traffic's,
what its protection admits, what reaches the CPU) and, beside them, the demand
each analysed task meets in a window after a critical instant against the time
the window offers, with the task's worst-case response time where the two meet.

The caller (``rtshield.analysis.page``) evaluates the curves; this module only
draws arrays, so it knows nothing of the analysis."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rtshield.figures import layout

if TYPE_CHECKING:  # matplotlib is imported by the functions that draw
    from matplotlib.figure import Figure

__all__ = ["ArrivalLine", "DemandLine", "curves_figure"]

#: How each kind of arrival curve is drawn: (line style, width, legend words).
_STYLE = {
    "traffic": ("-", 1.0, "traffic"),
    "admitted": ("--", 1.2, "admitted by the protection"),
    "seen": ("-", 2.2, "reaching the CPU"),
}


@dataclass(frozen=True)
class ArrivalLine:
    """η⁺(Δ) of one curve at the figure's windows (``y`` None: no finite curve)."""

    source: str
    kind: str  # "traffic", "admitted" or "seen"
    y: np.ndarray | None


@dataclass(frozen=True)
class DemandLine:
    """The CPU time (ns) a task's first job meets in each window, and its WCRT (ns)."""

    task: str
    y: np.ndarray
    wcrt: int | None


def curves_figure(window_ns: np.ndarray, arrivals: Sequence[ArrivalLine],
                  demands: Sequence[DemandLine], title: str) -> Figure:
    """Left: events in any window Δ; right: demand in a window Δ against Δ itself."""
    import matplotlib.lines as mlines

    x = np.asarray(window_ns, dtype=float) / 1e6  # ms
    handles = []
    colors = [f"C{k}" for k in range(10)]
    sources = list(dict.fromkeys(a.source for a in arrivals))
    n_legend = len(arrivals) + len(demands) + 1
    ncol = 3
    rows = max(1, math.ceil(n_legend / ncol))
    fig = layout.new_figure(10.0, 4.2 + 0.22 * rows, left=0.8, right=0.3, cols=2, wgap=0.9,
                            top=layout.TITLE_IN + 0.22 * rows + layout.PANEL_TITLE_IN + 0.1)
    ax_a = fig.add_subplot(1, 2, 1)
    ax_d = fig.add_subplot(1, 2, 2)
    top = 1.0
    for a in arrivals:
        color = colors[sources.index(a.source) % len(colors)]
        ls, lw, words = _STYLE[a.kind]
        if a.y is None:
            h = mlines.Line2D([], [], color=color, ls=":", lw=lw,
                              label=f"{a.source}: {words}: unbounded")
        else:
            (h,) = ax_a.step(x, a.y, where="post", color=color, ls=ls, lw=lw,
                             label=f"{a.source}: {words}")
            top = max(top, float(np.max(a.y)))
        handles.append(h)
    ax_a.set_xlim(0, x[-1])
    ax_a.set_ylim(0, top * 1.08)
    ax_a.set_xlabel("window Δ [ms]")
    ax_a.set_ylabel("most interrupts or packets in Δ")
    ax_a.set_title("arrival curves η⁺(Δ)", fontsize="small")

    (h,) = ax_d.plot(x, x, color="0.4", lw=1.0, ls=":", label="time in the window (Δ)")
    handles.append(h)
    dtop = float(x[-1])
    for k, d in enumerate(demands):
        color = colors[(len(sources) + k) % len(colors)]
        y = np.asarray(d.y, dtype=float) / 1e6
        (h,) = ax_d.step(x, y, where="post", color=color, lw=1.6,
                         label=f"{d.task}: demand" + ("" if d.wcrt is None else
                                                      f", WCRT {d.wcrt / 1e6:.4g} ms"))
        handles.append(h)
        dtop = max(dtop, float(np.max(y)))
        if d.wcrt is not None and d.wcrt / 1e6 <= x[-1]:
            ax_d.axvline(d.wcrt / 1e6, color=color, lw=0.8, ls="--")
    ax_d.set_xlim(0, x[-1])
    ax_d.set_ylim(0, dtop * 1.08)
    ax_d.set_xlabel("window Δ after a critical instant [ms]")
    ax_d.set_ylabel("CPU time demanded [ms]")
    ax_d.set_title("demand against time: the WCRT is where they meet", fontsize="small")
    h = fig.get_figheight()
    fig.legend(handles, [a.get_label() for a in handles], loc="upper center",
               bbox_to_anchor=(0.5, 1.0 - (layout.TITLE_IN + 0.02) / h), ncol=ncol,
               frameon=False, fontsize="small")
    layout.suptitle(fig, title)
    return fig
