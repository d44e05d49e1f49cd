"""One figure style: matplotlib's object API on an off-screen Agg canvas (no pyplot state, never
``matplotlib.use``, so a notebook's backend is left alone), a colour-blind-safe palette, colour
maps centred on zero for signed fields, and one atomic writer for PNG, SVG and PDF.

Every drawing function of shockflow takes an optional ``ax`` (or ``fig``) and returns the
:class:`matplotlib.figure.Figure`; the caller (the command line, a notebook) saves or shows it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from shockflow.storage import atomic_path

__all__ = ["new_figure", "facet_figure", "save_figure", "figure_target", "write_figure", "can_draw", "figure_of", "PALETTE", "field_colours",
           "FIGURE_FORMATS", "DEFAULT_DPI", "thin_log_ticks", "panel_title"]

#: Okabe & Ito (2008), safe for the common colour-vision deficiencies
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
FIGURE_FORMATS = ("png", "svg", "pdf")
DEFAULT_DPI = 150


def can_draw() -> bool:
    """True when matplotlib is installed (figures are optional: a run without it still writes its files)."""
    import importlib.util
    import warnings

    if importlib.util.find_spec("matplotlib") is None:
        warnings.warn("matplotlib is not installed: no figure is drawn (pip install matplotlib)", stacklevel=2)
        return False
    return True


def new_figure(width: float, height: float, *, layout: str | None = "constrained"):
    """A Figure on its own Agg canvas (nothing global is touched); constrained layout unless
    ``layout=None`` (the caller places its axes: no layout pass at every draw)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=DEFAULT_DPI, layout=layout)
    FigureCanvasAgg(fig)
    return fig


#: room in inches around a facet: y tick labels and label (left), x tick labels and label (below), the
#: facet title (above); a colour bar's width, its gap to the axes, and its tick labels and label
_FACET_LEFT, _FACET_BELOW, _FACET_ABOVE, _FIGURE_RIGHT = 0.72, 0.55, 0.3, 0.3
_BAR_WIDTH, _BAR_PAD, _BAR_LABELS = 0.12, 0.08, 0.85


def facet_figure(n: int, *, cols: int = 4, panel: tuple[float, float] = (2.6, 2.3), colorbar: str | None = None,
                 title: bool = False):
    """A new figure of ``n`` panels of ``panel`` inches, in rows of at most ``cols``, placed with fixed
    margins (no layout pass: constrained layout cost as much as drawing the figure).

    ``colorbar``: ``"each"`` gives every panel a colour-bar axes at its right, ``"shared"`` one for the
    figure at the right end, ``None`` none; ``title``: room for a suptitle.  Returns ``(fig, axes,
    bars)``: ``n`` axes, and the colour-bar axes (``n`` of them, one, or none).
    """
    cols = max(1, min(int(cols), n))
    rows = (n + cols - 1) // cols
    w, h = panel
    bar = _BAR_PAD + _BAR_WIDTH + _BAR_LABELS
    cell_w = _FACET_LEFT + w + (bar if colorbar == "each" else 0.0)
    cell_h = _FACET_ABOVE + h + _FACET_BELOW
    shared_gap = 0.25          # the last panel's rightmost tick label reaches past its axes
    width = cols * cell_w + (shared_gap + bar if colorbar == "shared" else 0.0) + _FIGURE_RIGHT
    top = 0.35 if title else 0.0
    height = rows * cell_h + top
    fig = new_figure(width, height, layout=None)
    axes, bars = [], []
    for k in range(n):
        row, col = divmod(k, cols)
        x0 = col * cell_w + _FACET_LEFT
        y0 = height - top - (row + 1) * cell_h + _FACET_BELOW
        axes.append(fig.add_axes((x0 / width, y0 / height, w / width, h / height)))
        if colorbar == "each":
            bars.append(fig.add_axes(((x0 + w + _BAR_PAD) / width, y0 / height, _BAR_WIDTH / width, h / height)))
    if colorbar == "shared":
        x0 = cols * cell_w + shared_gap + _BAR_PAD
        y_lo = height - top - rows * cell_h + _FACET_BELOW
        bars.append(fig.add_axes((x0 / width, y_lo / height, _BAR_WIDTH / width,
                                  (rows * cell_h - _FACET_BELOW - _FACET_ABOVE) / height)))
    return fig, axes, bars


def panel_title(ax, text: str, fontsize: float = 9) -> None:
    """The title of a panel whose x tick labels are below it, at its fixed place (``y=1``, the default pad).
    matplotlib's automatic placement measures every y tick label of the panel at each render to move the title
    over anything drawn above the axes (0.3 s CPU of the chart and landscape figures, issue 23), and finds
    nothing there: the figures are pixel for pixel the same.  The one thing above a panel's top, a y-axis
    offset text (``1e-7``), stays at its top left, where a short centred title (``chart r0``) does not reach
    on a panel of the facet figures (tested); a title wide enough to reach it would overlap it."""
    ax.set_title(text, fontsize=fontsize, y=1.0)


def thin_log_ticks(ax, decades: float = 2.0) -> None:
    """No minor ticks on a log axis of ``ax`` that spans at least ``decades`` decades (its labelled decades are
    there to read it by): every tick is a few artists built and drawn at each render, and the eight minor ticks
    per decade were most of a log-log panel's ticks (the loss figure: 166 tick places, 22 without them; its
    render about 40 % cheaper).  A shorter log axis keeps them (they may be all it has)."""
    import math

    for axis, limits in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
        lo, hi = sorted(limits)
        if axis.get_scale() == "log" and lo > 0 and math.log10(hi / lo) >= decades:
            axis.set_minor_locator(_null_locator())


def _null_locator():
    from matplotlib.ticker import NullLocator

    return NullLocator()


def figure_of(ax, width: float, height: float):
    """``(fig, ax)``: the caller's axes and their figure, or a new figure with one axes."""
    if ax is not None:
        return ax.figure, ax
    fig = new_figure(width, height)
    return fig, fig.subplots()


def figure_target(path, format: str | None = None) -> tuple[Path, str]:
    """The file a figure is written to and its format: ``format`` png|svg|pdf (default: the suffix of
    ``path``, else png), the suffix made to match it."""
    path = Path(path)
    fmt = (format or path.suffix.lstrip(".") or "png").lower()
    if fmt not in FIGURE_FORMATS:
        raise ValueError(f"figure {str(path)!r}: format {fmt!r} is not one of {', '.join(FIGURE_FORMATS)}")
    if path.suffix.lstrip(".").lower() != fmt:
        path = path.with_suffix("." + fmt)
    return path, fmt


#: zlib level of the PNG files: level 1 compresses the same pixels in two thirds of the time of PIL's
#: default 6 (0.022 s against 0.032 s for the loss figure of the default case) for files 20 % larger
PNG_COMPRESS_LEVEL = 1


def write_figure(fig, file, fmt: str, dpi: float | None = None) -> None:
    """Render ``fig`` into ``file`` (a path or a binary file object) as ``fmt``, not atomically: the caller's
    :func:`~shockflow.storage.atomic_path` makes it so."""
    extra = {"pil_kwargs": {"compress_level": PNG_COMPRESS_LEVEL}} if fmt == "png" else {}
    fig.savefig(file, format=fmt, dpi=dpi or DEFAULT_DPI, **extra)


def save_figure(fig, path, *, format: str | None = None, dpi: float | None = None) -> Path:
    """Write ``fig`` atomically to ``path``; ``format`` png|svg|pdf (default: the suffix, else png)."""
    path, fmt = figure_target(path, format)
    with atomic_path(path) as tmp:
        write_figure(fig, tmp, fmt, dpi)
    return path


def field_colours(values, *, signed_cmap: str = "RdBu_r", one_signed_cmap: str = "viridis"):
    """``(cmap, norm)`` for a field: a diverging map centred on zero when it takes both signs, a
    sequential one when it keeps one sign."""
    from matplotlib import colors

    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    lo, hi = (float(v.min()), float(v.max())) if v.size else (0.0, 1.0)
    if lo < 0 < hi:
        half = max(-lo, hi)
        return signed_cmap, colors.TwoSlopeNorm(0.0, -half, half)
    return one_signed_cmap, colors.Normalize(lo, hi if hi > lo else lo + 1.0)
