"""A figure's layout checked with matplotlib's own geometry, after drawing it.

:func:`figure_problems` returns what a reader would stumble over, one sentence
each:

* text outside the canvas: an axes' tick labels, axis labels or title (its
  tight bounding box), a figure-level text (title) or a legend reaching past
  the canvas's edge;
* a legend over plotted data: the legend's box, in display space, crossing a
  line, a step, a bar or a filled area of an axes it lies on (the part of the
  legend inside the axes, where clipped data are drawn), or a marker;
* a marker cut by its axes: a data point of a marked line on (or past) the
  edge of the axes that clips it, so that part of its marker is not drawn.

Every figure rtshield writes goes through :func:`rtshield.figures.layout.png_bytes`;
with the environment variable ``RTSHIELD_CHECK_FIGURES=1`` it raises
:class:`FigureProblem` when a figure it is about to write has a problem, and
with ``RTSHIELD_CHECK_FIGURES=FILE`` it appends what it checked and the
problems to FILE — the
tests run ``rtshield demo``, ``compare`` and ``sweep`` that way
(``tests/test_figure_check.py``). Tests of a single figure call
:func:`figure_problems` directly.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # matplotlib is imported by the functions that draw
    from matplotlib.figure import Figure

__all__ = ["ENV", "FigureProblem", "check_if_asked", "figure_problems"]

#: The environment variable that makes every written figure checked.
ENV = "RTSHIELD_CHECK_FIGURES"
#: Slack, in pixels, for antialiasing and rounding.
_TOL = 1.0


class FigureProblem(RuntimeError):
    """A figure about to be written has a layout problem (``RTSHIELD_CHECK_FIGURES=1``)."""


def _name(fig: Figure) -> str:
    """The figure as a message names it: its title, else its first panel's."""
    if fig.get_suptitle():
        return repr(fig.get_suptitle())
    for ax in fig.axes:
        if ax.get_title():
            return f"with the panel {ax.get_title()!r}"
    return "(untitled)"


def _outside(bb: Any, canvas: Any) -> str | None:
    """Which edge of the canvas the box ``bb`` passes, or None."""
    sides = []
    if bb.x0 < canvas.x0 - _TOL:
        sides.append("left")
    if bb.x1 > canvas.x1 + _TOL:
        sides.append("right")
    if bb.y0 < canvas.y0 - _TOL:
        sides.append("bottom")
    if bb.y1 > canvas.y1 + _TOL:
        sides.append("top")
    return " and ".join(sides) or None


def _axes_name(ax: Any) -> str:
    title = ax.get_title() or ax.get_ylabel() or ax.get_xlabel()
    return f"the axes {title!r}" if title else "an axes"


def _radius(line: Any, dpi: float) -> float:
    """A marked line's marker radius in pixels, its edge included."""
    return (line.get_markersize() + line.get_markeredgewidth()) / 2 * dpi / 72.0


def _data(ax: Any) -> list[tuple[str, Any, bool, Any, float]]:
    """What an axes draws, in display space: ``(what, path, filled, points, radius)`` —
    a line, patch or area as a path (``points`` None), markers as their centres and
    their radius in pixels (``path`` None)."""
    from matplotlib.collections import Collection, LineCollection, PolyCollection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.path import Path

    dpi = ax.figure.dpi
    out: list[tuple[str, Any, bool, Any, float]] = []
    for a in [*ax.lines, *ax.patches, *ax.collections]:
        if not a.get_visible():
            continue
        label = a.get_label() if not str(a.get_label()).startswith("_") else type(a).__name__
        if isinstance(a, Line2D):
            xy = a.get_transform().transform(a.get_xydata())
            if a.get_linestyle() not in ("None", "none", "", " ") and len(xy) > 1:
                out.append((f"line {label!r}", Path(xy), False, None, 0.0))
            if a.get_marker() not in (None, "None", "none", "", " "):
                out.append((f"markers of {label!r}", None, False, xy, _radius(a, dpi)))
        elif isinstance(a, Patch):
            path = a.get_transform().transform_path(a.get_path())
            filled = bool(a.get_fill() and a.get_facecolor()[3] > 0)
            out.append((f"{type(a).__name__.lower()} {label!r}", path, filled, None, 0.0))
        elif isinstance(a, (LineCollection, PolyCollection)):
            tr = a.get_transform()
            filled = isinstance(a, PolyCollection)
            out += [(repr(label), tr.transform_path(p), filled, None, 0.0) for p in a.get_paths()]
        elif isinstance(a, Collection):  # scatter: markers at offsets
            offs = a.get_offset_transform().transform(a.get_offsets())
            sizes = a.get_sizes()
            r = (float(sizes.max()) ** 0.5 / 2 * dpi / 72.0) if len(sizes) else 0.0
            out.append((f"points of {label!r}", None, False, offs, r))
    return out


def _covers(box: Any, path: Any, filled: bool, points: Any, radius: float) -> bool:
    """Whether the data (a path, or markers of ``radius`` pixels) touch ``box``."""
    if path is not None:
        return bool(path.intersects_bbox(box, filled=filled))
    import numpy as np

    p = np.asarray(points, dtype=float)
    if not len(p):
        return False
    inside = ((p[:, 0] + radius > box.x0) & (p[:, 0] - radius < box.x1)
              & (p[:, 1] + radius > box.y0) & (p[:, 1] - radius < box.y1))
    return bool(inside.any())


def _legends(fig: Figure) -> list[Any]:
    legs = list(fig.legends)
    for ax in fig.axes:
        leg = ax.get_legend()
        if leg is not None:
            legs.append(leg)
    return [leg for leg in legs if leg.get_visible()]


def _text_outside(fig: Figure, renderer: Any, name: str) -> list[str]:
    """Axes' labels, figure texts and legends that reach past the canvas."""
    from matplotlib.text import Text

    canvas, out = fig.bbox, []
    for ax in fig.axes:
        if ax.get_visible():
            side = _outside(ax.get_tightbbox(renderer), canvas)
            if side:
                out.append(f"figure {name}: {_axes_name(ax)}'s labels reach past the "
                           f"canvas's {side} edge")
    axes_texts = {id(t) for ax in fig.axes for t in ax.findobj(Text)}
    for t in fig.findobj(Text):
        if id(t) in axes_texts or not t.get_visible() or not t.get_text().strip():
            continue
        side = _outside(t.get_window_extent(renderer), canvas)
        if side:
            out.append(f"figure {name}: the text {t.get_text()!r} reaches past the "
                       f"canvas's {side} edge")
    for leg in _legends(fig):
        side = _outside(leg.get_window_extent(renderer), canvas)
        if side:
            out.append(f"figure {name}: a legend reaches past the canvas's {side} edge")
    return out


def _legends_over_data(fig: Figure, renderer: Any, name: str) -> list[str]:
    """Legends whose box, where it lies on an axes, touches that axes' data."""
    from matplotlib.transforms import Bbox

    out = []
    for leg in _legends(fig):
        box = leg.get_window_extent(renderer)
        inner = Bbox.from_extents(box.x0 + _TOL, box.y0 + _TOL, box.x1 - _TOL, box.y1 - _TOL)
        for ax in fig.axes:
            if not ax.get_visible():
                continue
            over = Bbox.intersection(inner, ax.bbox)
            if over is None or over.width <= 0 or over.height <= 0:
                continue
            for what, path, filled, points, radius in _data(ax):
                if _covers(over, path, filled, points, radius):
                    out.append(f"figure {name}: a legend covers the {what} of "
                               f"{_axes_name(ax)}")
                    break
    return out


def _cut_markers(fig: Figure, name: str) -> list[str]:
    """Marked lines with a point drawn on (or just past) the edge of the axes clipping it."""
    out = []
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        box = ax.bbox
        for line in ax.lines:
            if (not line.get_visible() or not line.get_clip_on()
                    or line.get_marker() in (None, "None", "none", "", " ")):
                continue
            r = _radius(line, fig.dpi)
            for x, y in line.get_transform().transform(line.get_xydata()):
                if not (box.x0 - r < x < box.x1 + r and box.y0 - r < y < box.y1 + r):
                    continue  # outside the view: not drawn at all
                if (x - r < box.x0 - _TOL or x + r > box.x1 + _TOL
                        or y - r < box.y0 - _TOL or y + r > box.y1 + _TOL):
                    out.append(f"figure {name}: a marker of {line.get_label()!r} is "
                               f"cut by the edge of {_axes_name(ax)}")
                    break
    return out


def figure_problems(fig: Figure) -> list[str]:
    """Draw ``fig`` and list its layout problems (empty: none); see the module's text."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    name = _name(fig)
    return (_text_outside(fig, renderer, name) + _legends_over_data(fig, renderer, name)
            + _cut_markers(fig, name))


def check_if_asked(fig: Figure, dpi: float) -> None:
    """With ``RTSHIELD_CHECK_FIGURES`` set: check ``fig`` drawn at ``dpi`` (called by
    ``png_bytes`` before every figure is written). ``1``: raise :class:`FigureProblem`
    listing its problems; a file's path: append one line per figure to that file —
    ``checked NAME`` — and one ``problem: …`` line per problem, and go on (so that one
    run lists every problem, and a test can count the figures checked)."""
    how = os.environ.get(ENV, "")
    if how in ("", "0"):
        return
    fig.set_dpi(dpi)
    problems = figure_problems(fig)
    if how == "1":
        if problems:
            raise FigureProblem("; ".join(problems))
        return
    with open(how, "a", encoding="utf-8") as f:
        f.write(f"checked {_name(fig)}\n")
        f.writelines(f"problem: {p}\n" for p in problems)
