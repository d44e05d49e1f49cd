"""A matplotlib figure drawn off-screen (Agg canvas, no pyplot state) and saved atomically as PNG."""

from __future__ import annotations

from pathlib import Path

from shockflow.storage import atomic_path

__all__ = ["new_figure", "save_png", "can_draw"]


def can_draw() -> bool:
    """True when matplotlib is installed (figures are optional: a run without it still writes its files)."""
    import importlib.util
    import warnings

    if importlib.util.find_spec("matplotlib") is None:
        warnings.warn("matplotlib is not installed: no figure is drawn (pip install matplotlib)", stacklevel=2)
        return False
    return True


def new_figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=110, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def save_png(fig, path) -> Path:
    path = Path(path)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png")
    return path
