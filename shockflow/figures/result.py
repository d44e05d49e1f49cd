"""Every figure of a result file, drawn and saved: what ``shockflow solve``/``run`` write and what
``shockflow show`` redraws from the file alone.

- PDE results: ``<name>.<fmt>`` (:func:`~shockflow.figures.solution.solution_figure`);
- network results: ``<name>-loss.<fmt>`` (the loss with predicted/observed transitions and the
  parity panel; the loss curve is read from the training log the result names, when it is
  there), ``<name>.<fmt>`` (one facet per chart), ``<name>-landscape.<fmt>`` (the quotient
  trajectory over each chart's initial data).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from shockflow.figures.canvas import figure_target, write_figure
from shockflow.storage import atomic_path

__all__ = ["FigureJob", "draw_result", "figure_jobs"]

log = logging.getLogger("shockflow")


def _loss_curve(result):
    from shockflow.logs import read_training_log

    path = result.problem.get("training_log")
    if not path or not Path(path).is_file():
        log.info("%s: training log %r not found: the loss figure shows the transitions only", result.case_name, path)
        return None
    try:
        record = read_training_log(path)
    except (OSError, ValueError) as exc:
        log.warning("%s: training log %r not read (%s): the loss figure shows the transitions only",
                    result.case_name, path, exc)
        return None
    return np.asarray(record.series["step"]), np.asarray(record.series["loss"])


def _charts(result):
    """The stored charts as the objects :func:`landscape_figure` draws."""
    out = []
    for label, c in result.extraction["charts"].items():
        a = c["attrs"]
        out.append(SimpleNamespace(label=label, x=c["x"], u0=c["u0"], mirrored=bool(a.get("mirrored")),
                                   trajectory=np.asarray(c.get("trajectory", np.zeros(0))),
                                   trajectory_steps=np.asarray(c.get("trajectory_steps", np.zeros(0))),
                                   x0=float(a.get("x0", math.nan)), x_min=float(a.get("x_min", math.nan)),
                                   coordinate=str(a.get("coordinate", label))))
    return SimpleNamespace(charts=out)


@dataclass(frozen=True)
class FigureJob:
    """One figure of a result: what the progress line calls it, the file it goes to and its format, and
    ``draw()``, which builds the Figure."""

    label: str
    path: Path
    format: str
    draw: Callable[[], object]


def figure_jobs(result, out, *, loss=None, format: str | None = None, stem: str | None = None,
                chain=()) -> list[FigureJob]:
    """Every figure of ``result`` (the arguments of :func:`draw_result`), not drawn yet, in the order of
    :func:`draw_result`'s paths."""
    from shockflow.figures.solution import solution_figure

    out = Path(out)
    name = result.case_name if stem is None else stem

    def job(label, file, draw):
        return FigureJob(label, *figure_target(out / file, format), draw)

    if not result.charts:
        return [job("solution figure", f"{name}.png", lambda: solution_figure(result))]
    from shockflow.figures.landscape import landscape_figure
    from shockflow.figures.training import loss_figure

    tr = result.transitions
    pred, obs = tr.get("predicted", {}), tr.get("observed", {})

    def loss_fig():
        curve = loss if loss is not None else _loss_curve(result)
        steps, values = curve if curve is not None else (np.zeros(0), np.zeros(0))
        bands = list(zip(obs.get("onset", ()), obs.get("end", ())))
        return loss_figure(steps, values, predicted=pred.get("step", ()), charts=pred.get("chart", ()),
                           observed=obs.get("step", ()), bands=bands, matches=tr.get("matches"),
                           staircase=([s.step for s in chain], [s.loss for s in chain]) if chain else None,
                           title=f"{name}: predicted (dashed) and observed (solid) transitions, by chart")

    def landscape_fig():
        ridges = [float(c["attrs"].get("shock_location", math.nan))
                  if math.isfinite(float(c["attrs"].get("gamma_star", math.nan))) else math.nan
                  for c in result.extraction["charts"].values()]
        return landscape_figure(_charts(result), ridges=ridges)

    return [job("loss figure", f"{name}-loss.png", loss_fig),
            job("chart figure", f"{name}.png", lambda: solution_figure(result)),
            job("landscape figure", f"{name}-landscape.png", landscape_fig)]


def draw_result(result, out, *, loss=None, format: str | None = None, dpi: float | None = None,
                progress=None, stem: str | None = None, chain=()) -> tuple[Path, ...]:
    """Draw and save every figure of ``result`` into the directory ``out``; returns the paths.

    ``loss``: ``(steps, loss)`` of a network run (default: read from the training log it names);
    ``progress(name)``: called before each figure is drawn; ``stem``: the file names' stem (default:
    the case name); ``chain``: the saddles of the prediction (:class:`shockflow.prediction.saddle_chain.Saddle`),
    drawn as the predicted loss staircase.  (:class:`shockflow.figures.worker.FigureWorker` draws the
    same figures in helper processes.)"""
    tick = progress or (lambda _: None)
    paths = []
    for job in figure_jobs(result, out, loss=loss, format=format, stem=stem, chain=chain):
        tick(job.label)
        with atomic_path(job.path) as tmp:
            write_figure(job.draw(), tmp, job.format, dpi)
        paths.append(job.path)
    return tuple(paths)
