"""Figures of a run and of a comparison, in the style of Danicki et al. Figures 6–8.

* *packets*: sent (offered), received (by the ISR) and processed (by the
  driver) packets per second over time — Danicki et al. Figures 6a, 6c, 7a,
  7c, 8;
* *critical*: completed critical cycles per second and the accumulated
  lateness per second over time — Danicki et al. Figures 6b, 6d, 7b, 7d;
* *cycle time*: a histogram of the critical task's cycle times
  (cyclictest-style, as in the paper on industrial device architectures);
* *latency*: per-flow histograms of packet latency, arrival to delivery;
* with Behnke et al.'s receive path (``[rx]``): *rx drops*, each flow's
  dropped packets stacked by reason, and *rx priority*, the network task's
  highest priority per bin (priority inheritance) with the share of the bin
  spent in polling mode (the global limit).

Figures are drawn with matplotlib's object API on the Agg canvas (no pyplot
state, safe in worker processes) and written as PNG atomically, without a
timestamp in the metadata so the same data give the same bytes. Every figure
has a fixed layout (margins set in inches, no tight or constrained layout
pass), its legend outside the data (in the top margin or to the right), and
matplotlib is imported only by the functions that draw, so importing this
module is cheap (:mod:`~rtshield.figures.layout`: the shared layout and panels;
:mod:`~rtshield.figures.run`: a run's figures; :mod:`~rtshield.figures.compare`:
a comparison's). Comparisons are small multiples: one panel per
configuration on shared axes. :func:`render` draws one figure by name from
plain data and writes it, the picklable entry point for worker processes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rtshield.figures.compare import (
    compare_figures,
    flows_grid_figure,
    grid_figure,
    overlay_figure,
)
from rtshield.figures.layout import png_bytes, save_png
from rtshield.figures.run import (
    critical_figure,
    cycle_time_figure,
    detection_figure,
    flows_figure,
    hist_arrays,
    latency_figure,
    log_rebin,
    packets_figure,
    run_figure_jobs,
    run_figures,
    rx_drops_figure,
    rx_priority_figure,
    stock_run_figures,
    submit_run_figures,
)

if TYPE_CHECKING:  # matplotlib is imported by the functions that draw
    from matplotlib.figure import Figure

__all__ = [
    "compare_figures",
    "critical_figure",
    "cycle_time_figure",
    "detection_figure",
    "flows_figure",
    "flows_grid_figure",
    "grid_figure",
    "hist_arrays",
    "latency_figure",
    "log_rebin",
    "overlay_figure",
    "packets_figure",
    "png_bytes",
    "render",
    "run_figure_jobs",
    "run_figures",
    "rx_drops_figure",
    "rx_priority_figure",
    "stock_run_figures",
    "submit_run_figures",
]

#: The figures :func:`render` can draw, by name.
_FIGURES: dict[str, Callable[..., Figure | None]] = {
    "packets": packets_figure,
    "critical": critical_figure,
    "cycle_time": cycle_time_figure,
    "latency": latency_figure,
    "rx_drops": rx_drops_figure,
    "rx_priority": rx_priority_figure,
    "detection": detection_figure,
    "flows": flows_figure,
    "flows_grid": flows_grid_figure,
    "grid": grid_figure,
    "overlay": overlay_figure,
}


def render(name: str, path: str | Path, *args: Any, **kwargs: Any) -> Path | None:
    """Draw the figure ``name`` from plain data (arrays, mappings, strings) and write it
    to ``path`` as PNG; ``None`` (and no file) when the figure has nothing to show.

    Everything it takes and returns pickles, so a process pool can call it.
    """
    try:
        fn = _FIGURES[name]
    except KeyError:
        raise ValueError(f"unknown figure {name!r}; known: {', '.join(sorted(_FIGURES))}") from None
    fig = fn(*args, **kwargs)
    return None if fig is None else save_png(fig, Path(path))
