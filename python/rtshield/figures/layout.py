"""What every figure of rtshield shares: the fixed margins (in inches) and the title
and legend placed in them, the time-series helpers, the packets and critical-task
panels that a run's figures and a comparison's small multiples both draw, and the
PNG writer (deterministic metadata), for :mod:`~rtshield.figures.run` and
:mod:`~rtshield.figures.compare`, which call them as ``layout.NAME``; matplotlib
is imported by the functions that draw.
"""

from __future__ import annotations

import dataclasses
import functools
import io
import logging
import math
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rtshield.figures import check
from rtshield.outputs import atomic_write

if TYPE_CHECKING:  # matplotlib is imported by the functions that draw
    from matplotlib.figure import Figure

__all__ = [
    "BOTTOM_IN",
    "LATE_LINEAR_PCT",
    "LEFT_IN",
    "LEGEND_IN",
    "MAJOR_AHEAD",
    "MINOR_AHEAD",
    "PANEL_TITLE_IN",
    "RIGHT_IN",
    "TITLE_IN",
    "Shape",
    "bin_edges",
    "bin_width",
    "column",
    "critical_axes",
    "drawable",
    "finite_max",
    "flow_axes",
    "flow_names",
    "late_scale",
    "legend_top",
    "new_figure",
    "packets_axes",
    "per_second",
    "plain_log_labels",
    "png_bytes",
    "save_png",
    "stairs",
    "step_patch",
    "suptitle",
    "single_axes",
    "stock",
    "times",
    "twin_of",
    "unstock",
]

_SERIES = (
    ("offered", "sent", "tab:blue"),
    ("received", "received", "tab:orange"),
    ("processed", "processed", "tab:green"),
)
#: Lateness above this many percent is drawn on a logarithmic scale (symlog), so
#: a run that is 100 % late and one that is 80 000 % late both stay readable.
LATE_LINEAR_PCT = 100.0

# Fixed margins, in inches: room for a title line and a legend row above the axes,
# and for the panel titles of small multiples.
TITLE_IN = 0.32
LEGEND_IN = 0.30
PANEL_TITLE_IN = 0.25
#: The other default margins, in inches: room for the y axis's ticks and label on
#: the left, for the x axis's below, and a little on the right.
LEFT_IN = 0.8
RIGHT_IN = 0.25
BOTTOM_IN = 0.5


#: The fonts a figure's text is drawn with, in order: for each character the first
#: that has it (matplotlib's font fallback). DejaVu Sans ships with matplotlib; the
#: others are used where the system has them (CJK, symbols, emoji).
FONT_FAMILIES = (
    "DejaVu Sans", "Noto Sans", "Noto Sans CJK JP", "Noto Sans Symbols", "Noto Sans Symbols 2",
    "Noto Emoji", "Symbola", "Liberation Sans",
)
#: Drawn instead of a character that none of the fonts has (it is in DejaVu Sans).
MISSING_GLYPH = "\N{WHITE SQUARE}"


@functools.lru_cache(maxsize=1)
def _fonts() -> tuple[tuple[str, ...], frozenset[int]]:
    """The families of :data:`FONT_FAMILIES` this system has, and every character
    they cover together. Looked up in matplotlib's font list (no warning for the
    ones missing)."""
    from matplotlib import font_manager, ft2font

    files: dict[str, str] = {}
    for f in font_manager.fontManager.ttflist:
        if f.style == "normal" and f.name in FONT_FAMILIES:
            files.setdefault(f.name, f.fname)
    families = tuple(n for n in FONT_FAMILIES if n in files)
    cover: set[int] = set()
    for name in families:
        try:
            cover.update(ft2font.FT2Font(files[name]).get_charmap())
        except (OSError, RuntimeError, ValueError):  # an unreadable font file: without it
            continue
    return families, frozenset(cover)


def drawable(text: str) -> str:
    """``text`` with every character that no font of :data:`FONT_FAMILIES` has (on this
    system) replaced by :data:`MISSING_GLYPH`: a scenario or flow named with any
    Unicode characters draws without matplotlib's "Glyph missing" warnings."""
    _, cover = _fonts()
    if all(ord(c) in cover or c in "\n\t" for c in text):
        return text
    return "".join(c if ord(c) in cover or c in "\n\t" else MISSING_GLYPH for c in text)


def _texts(fig: Figure) -> list[Any]:
    """Every text of ``fig`` that rtshield or its user wrote: titles, axis labels,
    legends, annotations, and the tick labels of an axis with fixed ticks
    (``set_xticks(x, names)``, whose formatter is made to give :func:`drawable`
    labels here, since a tick's text is set from it when the figure is drawn);
    not the tick labels that matplotlib's formatters make from numbers.

    Unlike ``fig.findobj(Text)`` this creates no ticks for numbers: an axis's
    children are its ticks, which matplotlib builds (a Tick with its lines,
    markers and labels, for every major and minor location) when asked for
    them, a fifth of the time a figure took to draw. The ticks made when the
    figure is drawn take the fallback fonts from the ``font.family`` setting
    :func:`png_bytes` draws under.
    """
    from matplotlib.axis import Axis
    from matplotlib.text import Text
    from matplotlib.ticker import FixedLocator

    found: list[Any] = []
    todo: list[Any] = [fig]
    while todo:
        artist = todo.pop()
        if isinstance(artist, Text):
            found.append(artist)
        if not isinstance(artist, Axis):
            todo += artist.get_children()
            continue
        todo += (artist.label, artist.offsetText)
        for minor in (False, True):
            locator = artist.get_minor_locator() if minor else artist.get_major_locator()
            if not isinstance(locator, FixedLocator):
                continue
            formatter = artist.get_minor_formatter() if minor else artist.get_major_formatter()
            mapped = _mapped_formatter()(formatter, drawable)
            if minor:
                artist.set_minor_formatter(mapped)
            else:
                artist.set_major_formatter(mapped)
            ticks = artist.get_minor_ticks() if minor else artist.get_major_ticks()
            todo += [t for tick in ticks for t in (tick.label1, tick.label2)]
    return found


def _drawing_rc(families: Sequence[str]) -> dict[str, Any]:
    """matplotlib's settings a figure is drawn under: the fallback fonts for the ticks
    made while drawing, and glyphs without hinting (FreeType's snapping of each
    glyph's outline to the pixel grid took a tenth of a figure's drawing; at the
    figures' 110 dpi the text looks the same, a shade lighter)."""
    return {"text.hinting": "no_hinting", **({"font.family": list(families)} if families else {})}


def png_bytes(fig: Figure, dpi: int = 110) -> bytes:
    """Render ``fig`` to PNG bytes (deterministic metadata). With
    ``RTSHIELD_CHECK_FIGURES=1`` a figure with a layout problem (text outside the
    canvas, a legend over data, a cut marker) raises instead (:mod:`.check`).

    Every text of the figure is drawn with the fallback fonts and made
    :func:`drawable` first. A warning matplotlib still gives while rendering is
    one line on stderr (the ``rtshield`` logger), not a Python warning.
    """
    import matplotlib as mpl
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if any(ax in _TWINS for ax in fig.axes):
        raise RuntimeError("a figure of a twin shape drawn without taking its twin (twin_of)")
    families, _ = _fonts()
    for t in _texts(fig):
        text = t.get_text()
        if text:
            t.set_text(drawable(text))
        if families:
            t.set_fontfamily(list(families))
    canvas = FigureCanvasAgg(fig)
    with mpl.rc_context(_drawing_rc(families)), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check.check_if_asked(fig, dpi)
        fig.set_dpi(dpi)
        canvas.draw()
    png = _encode(canvas, dpi)
    if caught:
        first = " ".join(str(caught[0].message).split())
        logging.getLogger("rtshield").warning(
            "figure: %d warning(s) from matplotlib while drawing; the first: %s",
            len(caught), first,
        )
    return png


#: zlib's level for the PNGs: 3 writes about a third quicker than matplotlib's 6;
#: without the alpha channel the files come out about as large (13 figures of three
#: runs, 22–36 KB each: at most 2 % larger than before, some up to 9 % smaller).
PNG_COMPRESS_LEVEL = 3


def _encode(canvas: Any, dpi: int) -> bytes:
    """The drawn canvas as PNG bytes: RGB (every figure of rtshield has an opaque
    background, so its alpha channel is 255 throughout and left out: a quarter
    less to compress), the resolution in its ``pHYs`` chunk, no text chunk (no
    software name, no time), so the same figure gives the same bytes."""
    from PIL import Image

    width, height = canvas.get_width_height(physical=True)
    rgba = Image.frombuffer("RGBA", (width, height), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
    if rgba.getextrema()[3][0] < 255:  # a transparent pixel after all: kept as it is
        image = rgba
    else:
        image = rgba.convert("RGB")
    buf = io.BytesIO()
    image.save(buf, format="png", dpi=(dpi, dpi), compress_level=PNG_COMPRESS_LEVEL)
    return buf.getvalue()


def new_figure(
    width: float,
    height: float,
    *,
    left: float = LEFT_IN,
    right: float = RIGHT_IN,
    top: float = TITLE_IN + LEGEND_IN,
    bottom: float = BOTTOM_IN,
    rows: int = 1,
    cols: int = 1,
    hgap: float = 0.0,
    wgap: float = 0.0,
) -> Figure:
    """A figure whose axes area is fixed by margins and gaps given in inches."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    axes_w = (width - left - right - wgap * (cols - 1)) / cols
    axes_h = (height - top - bottom - hgap * (rows - 1)) / rows
    fig.subplots_adjust(
        left=left / width,
        right=1.0 - right / width,
        top=1.0 - top / height,
        bottom=bottom / height,
        wspace=wgap / axes_w if cols > 1 else 0.2,
        hspace=hgap / axes_h if rows > 1 else 0.2,
    )
    return fig


@dataclasses.dataclass(frozen=True)
class Shape:
    """A figure of one axes (and, with ``twin``, its twin on the right sharing x),
    laid out by :func:`new_figure`'s margins: what :func:`single_axes` makes and
    :func:`stock` makes ahead. ``minor``: the axes (``"x"``, ``"y"``, ``"twin"``)
    that may be drawn on a log scale, whose minor ticks are made ahead too."""

    width: float
    height: float
    left: float = LEFT_IN
    right: float = RIGHT_IN
    top: float = TITLE_IN + LEGEND_IN
    bottom: float = BOTTOM_IN
    twin: bool = False
    minor: tuple[str, ...] = ()


#: Ticks made ahead on each axis of a stocked figure: more than any run figure's
#: axis draws (9 major; 40 minor on a log axis of five decades). A tick made
#: ahead and not needed is not drawn.
MAJOR_AHEAD = 12
MINOR_AHEAD = 48

#: Figures made ahead by :func:`stock` (in a resident server, before it forks a
#: command), each ``(figure, axes, twin or None)``, each taken once.
_STOCK: dict[Shape, list[tuple[Any, Any, Any]]] = {}
#: The stocked twin of axes :func:`single_axes` handed out, until :func:`twin_of`
#: takes it.
_TWINS: dict[Any, Any] = {}


def single_axes(shape: Shape) -> tuple[Figure, Any]:
    """A new figure of ``shape`` and its axes: a stocked one if :func:`stock` made
    one ahead (the same figure, drawn to the same bytes), else made now. A
    ``shape.twin`` figure must take its twin with :func:`twin_of`."""
    ready = _STOCK.get(shape)
    if ready:
        fig, ax, twin = ready.pop()
        if twin is not None:
            _TWINS[ax] = twin
        return fig, ax
    return _made(shape)


def _made(shape: Shape) -> tuple[Figure, Any]:
    fig = new_figure(shape.width, shape.height, left=shape.left, right=shape.right,
                     top=shape.top, bottom=shape.bottom)
    return fig, fig.add_subplot()


def twin_of(ax: Any) -> Any:
    """``ax.twinx()``: the twin :func:`stock` made ahead for ``ax`` if it has one."""
    twin = _TWINS.pop(ax, None)
    return ax.twinx() if twin is None else twin


def stock(shapes: Sequence[Shape]) -> None:
    """Make one figure of each of ``shapes`` ahead, with its axes (and twin) and
    their ticks (:data:`MAJOR_AHEAD`, :data:`MINOR_AHEAD`), for :func:`single_axes`.

    For a process that forks: every process forked afterwards has its own copy of
    the stock for free, so a resident server's commands skip making a figure's
    axes and ticks (a fifth of drawing it). A figure drawn from the stock has
    the same bytes as one made anew (``tests/test_outputs.py``).
    """
    import matplotlib as mpl

    families, _ = _fonts()
    with mpl.rc_context(_drawing_rc(families)):
        for shape in shapes:
            fig, ax = _made(shape)
            twin = ax.twinx() if shape.twin else None
            for name, axis in (("x", ax.xaxis), ("y", ax.yaxis),
                               ("twin", None if twin is None else twin.yaxis)):
                if axis is not None:
                    axis.get_major_ticks(MAJOR_AHEAD)
                    if name in shape.minor:
                        axis.get_minor_ticks(MINOR_AHEAD)
            _STOCK.setdefault(shape, []).append((fig, ax, twin))


def unstock() -> None:
    """Drop every stocked figure (:func:`stock`)."""
    _STOCK.clear()
    _TWINS.clear()


def suptitle(fig: Figure, title: str) -> None:
    h = fig.get_figheight()
    fig.suptitle(title, y=1.0 - 0.06 / h, va="top", fontsize="medium")


def legend_top(fig: Figure, handles: Sequence[Any], labels: Sequence[str] | None = None,
                *, below_title: bool = True) -> None:
    """One legend for the whole figure, in the top margin (outside every panel)."""
    if not handles:
        return
    h = fig.get_figheight()
    y = 1.0 - ((TITLE_IN if below_title else 0.0) + 0.02) / h
    labels = list(labels) if labels is not None else [a.get_label() for a in handles]
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, y),
               ncol=min(len(handles), 5), frameon=False, fontsize="small")


def column(ts: Mapping[str, Any], key: str) -> np.ndarray | None:
    v = ts.get(key)
    return None if v is None else np.asarray(v, dtype=float)


def times(ts: Mapping[str, Any]) -> np.ndarray:
    t = column(ts, "t_s")
    if t is None:
        n = len(next(iter(ts.values()))) if ts else 0
        t = np.arange(n, dtype=float)
    return t


def bin_width(ts: Mapping[str, Any]) -> float:
    t = times(ts)
    return float(t[1] - t[0]) if len(t) > 1 else 1.0


def bin_edges(ts: Mapping[str, Any]) -> np.ndarray:
    """Bin edges: each bin's start, plus the end of the last one."""
    t = times(ts)
    return np.append(t, t[-1] + bin_width(ts)) if len(t) else np.array([0.0])


def step_patch(ax: Any, values: Any, edges: Any, **kw: Any) -> Any:
    """``ax.stairs(values, edges, **kw)``, the same artist and the same data limits,
    without matplotlib walking the path segment by segment for them.

    ``Axes.stairs`` takes its data limits from every segment of the step path
    in Python (a third of a second for a 1 425-bin histogram drawn twice). Every
    vertex of a step path lies within its edges and between its lowest and
    highest value (and the baseline), so the patch is added with a path of the
    same extent (three edges: the first, the second, the last; two values: the
    lowest and the highest) and then given its data: the limits matplotlib
    computes are the same numbers. Anything else (fewer than two bins, edges
    not increasing, values not finite) goes to ``ax.stairs`` as it is.
    """
    v = np.asarray(values, dtype=float)
    e = np.asarray(edges, dtype=float)
    if (kw.get("orientation", "vertical") != "vertical" or v.ndim != 1 or len(v) < 2
            or len(e) != len(v) + 1 or not np.all(np.isfinite(v))
            or not np.all(np.isfinite(e)) or not np.all(np.diff(e) > 0)):
        return ax.stairs(values, edges, **kw)
    patch = ax.stairs([v.min(), v.max()], [e[0], e[1], e[-1]], **kw)
    patch.set_data(values, edges)
    return patch


def stairs(ax: Any, ts: Mapping[str, Any], y: np.ndarray, **kw: Any) -> list:
    """Draw a per-bin series as flat steps over each bin; returns the artists."""
    return [step_patch(ax, y, bin_edges(ts), baseline=None, **kw)]


def per_second(ts: Mapping[str, Any], key: str) -> np.ndarray | None:
    """A per-bin count as a rate per second (bins may be shorter or longer than 1 s)."""
    v = column(ts, key)
    if v is None:
        return None
    width = bin_width(ts)
    return v / width if width > 0 else v


def finite_max(*arrays: np.ndarray | None) -> float:
    vals = [float(np.nanmax(a)) for a in arrays if a is not None and len(a)]
    vals = [v for v in vals if math.isfinite(v)]
    return max(vals) if vals else 0.0


def packets_axes(ax: Any, ts: Mapping[str, Any], *, legend: bool = False) -> list:
    """Sent, received and processed per second; returns the artists for a legend."""
    # received is drawn wide and pale under processed, so it stays visible where they agree
    widths = {"offered": 1.4, "received": 3.2, "processed": 1.2}
    alphas = {"offered": 1.0, "received": 0.55, "processed": 1.0}
    artists = []
    for key, label, color in _SERIES:
        y = per_second(ts, key)
        if y is not None:
            artists += stairs(ax, ts, y, label=label, color=color, lw=widths[key],
                               alpha=alphas[key])
    ax.grid(True, alpha=0.3)
    ax.set_ylim(bottom=0)
    return artists


def flow_names(ts: Mapping[str, Any]) -> list[str]:
    """The scenario flows of a time series (its ``flow_NAME_offered`` columns), in order."""
    pre, post = "flow_", "_offered"
    return [k[len(pre):-len(post)] for k in ts if k.startswith(pre) and k.endswith(post)]


def flow_axes(ax: Any, ts: Mapping[str, Any], name: str, *, top: float | None = None) -> list:
    """Flow ``name``'s offered and delivered packets per second, on an axis scaled to
    this flow (``top``: a shared top); returns the artists for a legend."""
    artists = []
    off = per_second(ts, f"flow_{name}_offered")
    dlv = per_second(ts, f"flow_{name}_delivered")
    if off is not None:
        artists += stairs(ax, ts, off, label="offered", color="tab:blue", lw=3.2, alpha=0.45)
    if dlv is not None:
        artists += stairs(ax, ts, dlv, label="delivered", color="tab:green", lw=1.3)
    hi = top if top is not None else finite_max(off, dlv)
    ax.set_ylim(0, max(1.0, hi * 1.1))
    ax.grid(True, alpha=0.3)
    return artists


_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_MATH_LABEL = re.compile(
    r"\$\\mathdefault\{(-?)([0-9.]+)(?:\\times([0-9.]+))?(?:\^\{(-?[0-9]+)\})?\}\$"
)


def plain_label(label: str) -> str:
    """A tick label of matplotlib's log and symlog axes (mathtext such as
    ``$\\mathdefault{10^{-2}}$`` or ``$\\mathdefault{2\\times10^{1}}$``) as the
    same number in plain text with Unicode superscripts (``10⁻²``, ``2×10¹``, a
    negative one with a minus sign); any other label unchanged."""
    m = _MATH_LABEL.fullmatch(label)
    if m is None:
        return label
    sign, first, base, exp = m.groups()
    text = first if base is None else f"{first}\N{MULTIPLICATION SIGN}{base}"
    if exp is not None:
        text += exp.translate(_SUPERSCRIPT)
    return ("\N{MINUS SIGN}" if sign else "") + text


@functools.lru_cache(maxsize=1)
def _mapped_formatter() -> type:
    """A tick formatter that draws another's labels through a function of the
    label (matplotlib's ticker is imported when a figure is drawn)."""
    from matplotlib.ticker import Formatter

    class MappedLabels(Formatter):
        def __init__(self, inner: Formatter, fn: Callable[[str], str]) -> None:
            self.inner = inner
            self.fn = fn

        def set_axis(self, axis: Any) -> None:
            super().set_axis(axis)
            self.inner.set_axis(axis)

        def set_locs(self, locs: Any) -> None:
            super().set_locs(locs)
            self.inner.set_locs(locs)

        def __call__(self, x: float, pos: int | None = None) -> str:
            return self.fn(self.inner(x, pos))

        def get_offset(self) -> str:
            return self.fn(self.inner.get_offset())

        def format_data(self, value: float) -> str:
            return self.inner.format_data(value)

        def format_data_short(self, value: float) -> str:
            return self.inner.format_data_short(value)

    return MappedLabels


def plain_log_labels(axis: Any) -> None:
    """Label ``axis`` (an x or y axis set to a log or symlog scale) in plain text:
    the same ticks and numbers as matplotlib's own labels, written with Unicode
    superscripts instead of mathtext, so drawing a figure never builds
    matplotlib's mathtext parser (about a tenth of a second per process)."""
    cls = _mapped_formatter()
    axis.set_major_formatter(cls(axis.get_major_formatter(), plain_label))
    axis.set_minor_formatter(cls(axis.get_minor_formatter(), plain_label))


def late_scale(ax: Any, top: float) -> None:
    """The lateness axis: linear up to 100 %, logarithmic above when needed."""
    if top > 2 * LATE_LINEAR_PCT:
        ax.set_yscale("symlog", linthresh=LATE_LINEAR_PCT, linscale=1.0)
        plain_log_labels(ax.yaxis)
        ax.set_ylim(0, top * 1.5)
    else:
        ax.set_ylim(0, max(10.0, top * 1.1))


def critical_axes(ax: Any, ts: Mapping[str, Any], *, late_top: float | None = None,
                   cycles_top: float | None = None) -> tuple[Any, list]:
    """Completed cycles per second (left) and lateness (right twin axis)."""
    cycles = per_second(ts, "cycles")
    late = column(ts, "lateness_pct")
    artists = []
    if cycles is not None:
        artists += stairs(ax, ts, cycles, color="tab:blue", lw=1.4,
                           label="completed critical cycles / s")
    top = cycles_top if cycles_top is not None else finite_max(cycles)
    ax.set_ylim(0, max(1.0, top * 1.08))
    ax.grid(True, alpha=0.3)
    ax2 = twin_of(ax)
    if late is not None:
        artists += stairs(ax2, ts, late, color="tab:red", lw=1.4,
                           label="accumulated lateness per bin [%]")
    late_scale(ax2, late_top if late_top is not None else finite_max(late))
    ax2.tick_params(axis="y", colors="tab:red")
    return ax2, artists


def save_png(fig: Figure, path: Path) -> Path:
    return atomic_write(path, png_bytes(fig))
