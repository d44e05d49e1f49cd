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
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from shockflow.figures.canvas import save_figure

__all__ = ["draw_result"]

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


def draw_result(result, out, *, loss=None, format: str | None = None, dpi: float | None = None,
                progress=None, stem: str | None = None, chain=()) -> tuple[Path, ...]:
    """Draw and save every figure of ``result`` into the directory ``out``; returns the paths.

    ``loss``: ``(steps, loss)`` of a network run (default: read from the training log it names);
    ``progress(name)``: called before each figure is drawn; ``stem``: the file names' stem (default:
    the case name); ``chain``: the saddles of the prediction (:class:`shockflow.prediction.saddle_chain.Saddle`),
    drawn as the predicted loss staircase."""
    from shockflow.figures.solution import solution_figure

    out = Path(out)
    name = result.case_name if stem is None else stem
    tick = progress or (lambda _: None)
    paths = []
    if result.charts:
        from shockflow.figures.landscape import landscape_figure
        from shockflow.figures.training import loss_figure

        tr = result.transitions
        pred, obs = tr.get("predicted", {}), tr.get("observed", {})
        curve = loss if loss is not None else _loss_curve(result)
        steps, values = curve if curve is not None else (np.zeros(0), np.zeros(0))
        tick("loss figure")
        bands = list(zip(obs.get("onset", ()), obs.get("end", ())))
        fig = loss_figure(steps, values, predicted=pred.get("step", ()), charts=pred.get("chart", ()),
                          observed=obs.get("step", ()), bands=bands, matches=tr.get("matches"),
                          staircase=([s.step for s in chain], [s.loss for s in chain]) if chain else None,
                          title=f"{name}: predicted (dashed) and observed (solid) transitions, by chart")
        paths.append(save_figure(fig, out / f"{name}-loss.png", format=format, dpi=dpi))
        tick("chart figure")
        paths.append(save_figure(solution_figure(result), out / f"{name}.png", format=format, dpi=dpi))
        tick("landscape figure")
        ridges = [float(c["attrs"].get("shock_location", math.nan))
                  if math.isfinite(float(c["attrs"].get("gamma_star", math.nan))) else math.nan
                  for c in result.extraction["charts"].values()]
        paths.append(save_figure(landscape_figure(_charts(result), ridges=ridges), out / f"{name}-landscape.png",
                                 format=format, dpi=dpi))
        return tuple(paths)
    tick("solution figure")
    paths.append(save_figure(solution_figure(result), out / f"{name}.png", format=format, dpi=dpi))
    return tuple(paths)
