"""``shockflow forecast``: the transitions of a network case predicted before (instead of) training it.

    build the network and data of the case        (shockflow.runners.training.build_model_and_data)
    predict from the start                        (shockflow.runners.prediction.predict_from_start:
                                                   the same function as ``shockflow run``; no training)
    read the forecast                             every transition's step, chart, γ*, critical learning
                                                  rate, the loss level after it, whether it lies beyond
                                                  the planned steps
    write <out>/<name>-forecast.h5 (atomically)   a result file holding /transitions/predicted, which
                                                  ``compare`` and ``monitor`` accept as --prediction
    figure <out>/<name>-forecast.png               the forecast loss staircase

**The loss after a transition** is the chart's landscape minimum ``L̄(x_min)`` with the staircase
reference (the charts ranked before it at their own minima: docs/theory.md §6): the plateau the loss
is forecast to sit on once that mode is learned.

**Control** (docs/theory.md §6, "Control").  ``lr_scan`` re-times the forecast at other learning rates
(:class:`AtRate`: the charts' landscapes do not depend on the rate, their viscosity ``ν = T/2`` is
proportional to it, the schedule is scaled with it; each chart's escape and the saddle chain are re-run
at the rate, and where the update rule ran inside the extraction, the plateau's approach or the
mixture's chain, the whole prediction) and flags a rate *critical* where the forecast stops being
a forecast: ``η ≥ γ*`` of a chart (the proximal step of docs/theory.md §1 is no longer single-valued), or
the discrete escape overshoots the minimum it escapes to: the update rule's linear map at the
largest quotient curvature ``κ_max`` of the charts' landscape minima leaves its stable region
(``ηκ_max ≥ 2`` for gradient descent, ``2(1 + μ)`` for heavy ball, ``2(1 + μ)/(1 + 2μ)`` for Nesterov),
or — earlier, for momentum, whose escape arrives with speed and overshoots to steeper curvature — the
update rule run on the charts' landscapes leaves a basin (:mod:`shockflow.prediction.stability`).
``target_step`` bisects the rate (log scale, below the stability limit) for the smallest one at
which a chosen transition is forecast by a given step.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from shockflow.blas_threads import blas_threads
from shockflow.cases.errors import ArgumentError, CaseError
from shockflow.storage.atomic import committed_together

__all__ = ["AtRate", "ForecastOptionError", "ForecastOutcome", "ScanRow", "control_options", "forecast_case",
           "forecast_stage", "lr_scan", "target_rate", "stability_limit", "sharpest_curvature", "read_forecast"]

#: solution snapshots kept per chart in the forecast file (the file stays small; ``run`` keeps all)
FILE_TIMES = 9


@dataclass(frozen=True)
class ScanRow:
    """One learning rate of a scan: the forecast step of every chart, and whether the rate is critical."""

    lr: float
    steps: dict                 # chart -> forecast step
    order: tuple                # charts in forecast order
    critical: bool
    reason: str                 # why critical ("" if not)

    def as_dict(self) -> dict:
        return {"lr": self.lr, "steps": dict(self.steps), "order": list(self.order), "critical": self.critical,
                "reason": self.reason}


@dataclass(frozen=True, eq=False)
class ForecastOutcome:
    case: str
    stage: object                     # PredictionStage
    horizon: int                      # the planned training steps
    initial_loss: float
    lr: float
    optimizer: str
    momentum: float
    stability_lr: float               # the rate where the update rule is unstable: the discrete escape overshoots, or
    #                                   it circles on the symmetric plateau (inf: none)
    seconds: float
    forecast_file: Path | None = None
    figures: tuple[Path, ...] = field(default=())
    scan: tuple = ()                  # ScanRow per scanned rate
    target: dict | None = None        # {"step", "transition", "chart", "lr"} of --target-step
    start: str = ""                   # digest of the initial parameters (shockflow.logs.agreement.start_digest)

    @property
    def predicted(self) -> list[dict]:
        charts = {c.label: c for c in self.stage.extraction.charts}
        # with the saddle chain the loss after a transition is that of the saddle it leads to (the learned
        # charts re-minimised); without it, the chart's own minimum with the others at their initial values
        after = {}
        for before, reached in zip(self.stage.saddles, self.stage.saddles[1:]):
            after.update({c: reached.loss for c in reached.active if c not in before.active})
        rows = []
        for p in self.stage.predicted:
            rows.append({"step": p.step, "chart": p.chart, "gamma_star": p.gamma_star, "critical_lr": p.critical_lr,
                         "loss_after": float(after.get(p.chart, charts[p.chart].loss_at_min)),
                         "beyond_horizon": bool(not (p.step <= self.horizon)), "method": p.method})
        return rows

    @property
    def critical(self) -> str:
        """Why the planned learning rate is critical (:func:`critical_reasons`; "" where it is not): training at it
        is expected to be unstable or to learn out of the order forecast, as in the ``--lr-scan`` rows."""
        return "; ".join(critical_reasons(self.stage, self.lr, self.stability_lr))

    def as_dict(self) -> dict:
        out = {"case": self.case, "predicted": self.predicted, "critical": bool(self.critical),
               "critical_reason": self.critical,
               "abstained": [a.as_dict() for a in self.stage.abstained],
               "blocks": [b.as_dict() for b in self.stage.blocks], "initial_loss": self.initial_loss,
               "horizon": self.horizon, "lr": self.lr, "optimizer": self.optimizer,
               "stability_lr": self.stability_lr, "seconds": self.seconds,
               "forecast_file": str(self.forecast_file) if self.forecast_file is not None else None,
               "figures": [str(p) for p in self.figures]}
        if self.scan:
            out["lr_scan"] = [r.as_dict() for r in self.scan]
        if self.target is not None:
            out["target"] = dict(self.target)
        return out

    def table(self) -> str:
        lines = [f"forecast {self.case}: {self.optimizer}, lr {self.lr:g}, {self.horizon} planned steps, initial loss "
                 f"{self.initial_loss:.4g} ({self.seconds:.1f} s, no training)"]
        lines.append(f"{'chart':>8}  {'step':>10}  {'gamma*':>10}  {'crit. lr':>9}  {'loss after':>10}  {'':>14}")
        for r in self.predicted:
            note = "beyond horizon" if r["beyond_horizon"] else ""
            lines.append(f"{r['chart']:>8}  {r['step']:10.1f}  {r['gamma_star']:10.4g}  {r['critical_lr']:9.3g}  "
                         f"{r['loss_after']:10.4g}  {note:>14}")
        for a in self.stage.abstained:
            lines.append(f"{a.chart:>8}  abstains (predicts nothing): {a.reason}")
        lines += [f"coupled modes: {b.describe()}" for b in self.stage.blocks]
        lines.append(f"the update rule is unstable (the discrete escape overshoots, or circles on a plateau) from lr "
                     f"{self.stability_lr:.4g} on "
                     f"({self.optimizer}{f', momentum {self.momentum:g}' if self.optimizer in ('momentum', 'nesterov') else ''})")
        if self.critical:
            lines.append(f"the planned lr {self.lr:g} is critical: {self.critical}; a training at it is expected to be "
                         f"unstable or to learn out of this order")
        if self.scan:
            charts = [p.chart for p in self.stage.predicted]
            lines.append("learning-rate scan (forecast step of each chart; * critical):")
            lines.append(f"{'lr':>10}  " + "  ".join(f"{c:>9}" for c in charts) + "  order")
            for r in self.scan:
                lines.append(f"{r.lr:10.4g}  " + "  ".join(f"{r.steps.get(c, math.nan):9.1f}" for c in charts) + "  "
                             + " ".join(r.order) + (f"  * {r.reason}" if r.critical else ""))
        if self.target is not None:
            t = self.target
            got = "no stable learning rate reaches it" if t["lr"] is None else f"smallest lr {t['lr']:.4g}"
            lines.append(f"transition {t['transition']} (chart {t['chart']}) by step {t['step']:g}: {got}")
        if self.forecast_file is not None:
            lines.append(f"forecast file: {self.forecast_file}")
        lines += [f"figure: {p}" for p in self.figures]
        return "\n".join(lines)


# -- stability and the scan -------------------------------------------------------------------------
def sharpest_curvature(chart) -> float:
    """The quotient curvature ``sqrt(a) ∂_x(sqrt(a) ∂_x L̄)`` of a chart's initial data at its landscape minimum
    ``x_min`` (0 if not positive): the curvature of the basin the escape ends in, where the iterates must settle."""
    from shockflow.prediction.predict import hessian_g

    kappa = hessian_g(np.asarray(chart.u0), chart)
    x = np.asarray(chart.x)
    keep = slice(1, -1)                       # one-sided differences at the walls
    xm = abs(chart.x_min) if chart.mirrored else chart.x_min
    value = float(np.interp(xm, x[keep], kappa[keep]))
    return max(value, 0.0)


def _spectral_radius(x: float, name: str, mu: float) -> float:
    """Largest |root| of the update rule's map at a minimum of curvature κ, ``x = ηκ``."""
    if name in ("momentum", "nesterov") and mu > 0:
        b, c = ((1.0 + mu - x), mu) if name == "momentum" else ((1.0 + mu) * (1.0 - x), mu * (1.0 - x))
        return float(np.max(np.abs(np.roots([1.0, -b, c]))))
    return abs(1.0 - x)


def stability_limit(kappa: float, name: str, mu: float) -> float:
    """The learning rate from which the update rule's linear map at curvature ``κ`` is unstable (inf for κ = 0):
    ``2/κ`` (gd, sgd), ``2(1 + μ)/κ`` (heavy ball), ``2(1 + μ)/((1 + 2μ)κ)`` (Nesterov), found from the
    spectral radius (checked against those forms in the tests)."""
    if not kappa > 0:
        return math.inf
    lo, hi = 0.0, 1.0
    while _spectral_radius(hi, name, mu) < 1.0:
        lo, hi = hi, 2.0 * hi
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _spectral_radius(mid, name, mu) < 1.0 else (lo, mid)
    return hi / kappa


class AtRate:
    """The forecast's transitions at other learning rates: the same prediction, re-timed.  The charts' landscapes
    do not depend on the rate, their viscosity ``ν = T/2`` is proportional to it and the schedule is scaled with
    it; what follows the charts is re-run at the rate: each chart's escape, then (where the forecast followed it)
    the saddle chain from the same start.  Where the update rule ran inside the extraction (the plateau's approach,
    the mixture's chain: ``stage.source``) the charts move with the rate, and the whole prediction is re-run.
    At the case's own rate the answer is the forecast's (a test).  Results are remembered per rate; a re-run that
    cannot be followed at a rate (the plateau's update rule circling above its stability limit) predicts nothing
    there, and :attr:`failed` holds why."""

    def __init__(self, stage, settings, *, case=None, model=None, data=None):
        self.stage, self.settings, self.case, self.model, self.data = stage, settings, case, model, data
        self._seen = {}
        self.failed: dict[float, str] = {}

    def settings_at(self, lr: float):
        scale = lr / self.settings.lr
        return replace(self.settings, lr=lr, lr_min=self.settings.lr_min * scale)

    def predicted(self, lr: float) -> tuple:
        """The :class:`shockflow.prediction.mapping.PredictedTransition` of every chart that predicts, at ``lr``."""
        lr = float(lr)
        if lr not in self._seen:
            self._seen[lr] = self._predict(lr)
        return self._seen[lr]

    def steps(self, lr: float) -> dict:
        return {p.chart: p.step for p in self.predicted(lr)}

    def _predict(self, lr: float) -> tuple:
        from shockflow.prediction.mapping import Optimiser, predict_or_abstain
        from shockflow.prediction.predict import follow_chain
        from shockflow.training.schedules import learning_rate

        stage, s = self.stage, self.settings_at(lr)
        rerun = stage.source != "charts"
        if (rerun or stage.chain_start is not None) and self.model is None:
            raise ValueError("re-timing this forecast needs its network (AtRate(..., case=, model=, data=))")
        if rerun:
            from shockflow.cases import CaseError
            from shockflow.prediction.plateau import PlateauUnstable
            from shockflow.runners.prediction import predict_from_start

            try:
                return tuple(predict_from_start(self.case, self.model.copy(), self.data, s).predicted)
            except CaseError as exc:
                if not isinstance(exc.__cause__, PlateauUnstable):    # only what the rate decides
                    raise
                self.failed[lr] = f"the forecast cannot follow this run: {exc.__cause__}"
                return ()
        scale = lr / self.settings.lr
        rates = np.array([learning_rate(s, i) for i in range(s.steps)])
        optimiser = Optimiser(rates, s.optimizer, s.momentum)
        shocks = [replace(c, nu=c.nu * scale) for c in stage.shocks]
        predicted = predict_or_abstain(shocks, optimiser)[0]   # the abstaining charts: none
        if stage.chain_start is not None and len(predicted) > 1:
            start = stage.chain_start
            predicted = follow_chain(self.model.copy(), start.geometry, start, shocks, predicted, optimiser,
                                     self.data.X, self.data.y)[0]
        return tuple(sorted(predicted, key=lambda p: p.step))


class ForecastOptionError(ArgumentError):
    """A control option of a forecast refused (``transition`` without ``target_step``, or past the number of
    forecast transitions): bad input (exit 2), named as the Python API spells it; the command line names its flag
    (:meth:`~shockflow.cases.errors.ArgumentError.spelled`)."""


#: the most learning rates a scan takes (``--lr-scan``, ``lr_scan``): each costs the chart solves of a forecast at that
#: rate (43 ms on the default case: 10 000 rates about 7 minutes); a typo in N (1e8) had filled 4.8 GB before any output
MAX_SCAN_RATES = 10_000


def control_options(lr_scan=None, target_step=None, transition=None) -> tuple[list[float] | None, float | None,
                                                                            int | None]:
    """The control options of a forecast, checked before any work, for the Python API and the command line alike:
    ``lr_scan`` learning rates (finite, positive), ``target_step`` a finite positive number, ``transition`` a
    positive whole number, given only with ``target_step`` (it says which transition that is about; None: the
    first).  Returns ``(rates or None, target step or None, transition or None)``, a transition (1 by default)
    exactly when there is a target step: the same again when checked again."""
    from shockflow.cases import arguments

    if lr_scan is not None and hasattr(lr_scan, "__len__") and not isinstance(lr_scan, (str, bytes)) \
            and len(lr_scan) > MAX_SCAN_RATES:
        raise ForecastOptionError("lr_scan", f"expected at most {MAX_SCAN_RATES} learning rates (each costs a forecast's "
                                             f"chart solves), found {len(lr_scan)}")
    rates = None if lr_scan is None else arguments.learning_rates(lr_scan, "lr_scan")
    step = None if target_step is None else arguments.positive_number(target_step, "target_step")
    if transition is not None and step is None:
        raise ForecastOptionError("transition", f"given ({transition!r}) without a target step: it says which "
                                                f"transition the target step is about (give both, or neither)")
    if step is not None:
        transition = 1 if transition is None else arguments.positive_whole(transition, "transition")
    return rates, step, transition


def critical_reasons(stage, lr: float, stability_lr: float) -> list[str]:
    """Why the learning rate ``lr`` is critical for the forecast ``stage`` (empty: it is not): at or above the
    smallest γ* of its shock charts (the proximal step is not single-valued, docs/theory.md §1) or at or above
    ``stability_lr`` (the discrete escape overshoots, docs/theory.md §6)."""
    gamma_min = min((p.gamma_star for p in stage.predicted if p.method == "shock"), default=math.inf)
    reasons = []
    if lr >= gamma_min:
        reasons.append(f"lr >= gamma* = {gamma_min:.4g} (the proximal step is not single-valued)")
    if lr >= stability_lr:
        reasons.append(f"lr >= {stability_lr:.4g} (the discrete escape overshoots, or the rule circles on a plateau)")
    return reasons


def lr_scan(at: AtRate, rates, stability_lr: float, *, bar=None) -> tuple[ScanRow, ...]:
    """One :class:`ScanRow` per learning rate (module docstring); ``bar``: a progress bar advanced per rate."""
    out = []
    for lr in rates:
        lr = float(lr)
        predicted = at.predicted(lr)
        reasons = critical_reasons(at.stage, lr, stability_lr) + ([at.failed[lr]] if lr in at.failed else [])
        out.append(ScanRow(lr, {p.chart: p.step for p in predicted}, tuple(p.chart for p in predicted),
                           bool(reasons), "; ".join(reasons)))
        if bar is not None:
            bar.update(1)
    return tuple(out)


def target_rate(at: AtRate, step: float, transition: int, stability_lr: float) -> dict:
    """The smallest learning rate at which the ``transition``-th forecast transition (1-based, in the order
    at the case's own rate; the chart is held fixed) happens by ``step``: bisection in log rate between
    ``lr/10⁶`` and the stability limit (or ``10⁶ lr``) to a relative width of 1e-4.  ``lr`` None when even the
    limit is too slow."""
    predicted, settings = at.stage.predicted, at.settings
    if not 1 <= transition <= len(predicted):
        raise ForecastOptionError.expected("transition", f"a number from 1 to {len(predicted)} (the forecast "
                                                         f"transitions)", transition)
    chart = predicted[transition - 1].chart

    def when(lr):
        return at.steps(lr).get(chart, math.inf)

    hi = min(stability_lr * (1.0 - 1e-9), settings.lr * 1e6)
    lo = settings.lr * 1e-6
    out = {"step": float(step), "transition": int(transition), "chart": chart, "lr": None}
    if not when(hi) <= step:
        return out
    if when(lo) <= step:
        out["lr"] = lo
        return out
    for _ in range(80):
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if when(mid) <= step else (mid, hi)
        if hi / lo - 1.0 < 1e-4:
            break
    out["lr"] = hi
    return out


# -- the command --------------------------------------------------------------------------------------
@blas_threads(interleaved=True)
def forecast_stage(case, seed: int, *, progress: bool = False, network=None):
    """``(stage, model, data, settings)``: the prediction of ``shockflow run`` for ``case``, without training, with one
    BLAS thread (as :func:`forecast_case`; the geometry's checks before the prediction included).
    ``network``: ``(model, dataset)`` built already (a user's own network from Python), else the case's."""
    from shockflow.runners.prediction import predict_from_start
    from shockflow.runners.training import build_model_and_data, refuse_unmodelled, verify_geometry

    refuse_unmodelled(case)
    model, data = network if network is not None else build_model_and_data(case, seed)[::2]
    verify_geometry(case, model, data)
    settings = case.settings.training.train_settings(seed)
    stage = predict_from_start(case, model.copy(), data, settings, progress=progress)
    return stage, model, data, settings


def _thinned(stage):

    sols = []
    for s in stage.solutions:
        keep = np.unique(np.linspace(0, len(s.times) - 1, min(FILE_TIMES, len(s.times))).round().astype(int))
        sols.append(replace(s, times=np.asarray(s.times)[keep], u=np.asarray(s.u)[keep],
                            viscous_u=None if s.viscous_u is None else np.asarray(s.viscous_u)[keep]))
    return replace(stage, solutions=tuple(sols))


def _write(case, outcome: ForecastOutcome, path: Path, seed: int) -> Path:
    import json

    from shockflow.prediction import match_transitions
    from shockflow.runners.prediction import prediction_result
    from shockflow.storage import write_result

    stage = _thinned(outcome.stage)
    empty = match_transitions([p.step for p in stage.predicted], [], truth="loss", horizon=float(outcome.horizon))
    result = prediction_result(case, stage, empty, (), seed=seed, wall_time=outcome.seconds, log_path="",
                               start=outcome.start)

    def extend(f):
        g = f.create_group("forecast")
        g.attrs["horizon"] = int(outcome.horizon)
        g.attrs["initial_loss"] = float(outcome.initial_loss)
        g.attrs["stability_lr"] = float(outcome.stability_lr)
        g.attrs["lr"] = float(outcome.lr)
        g.attrs["optimizer"] = str(outcome.optimizer)
        g.attrs["predicted"] = json.dumps(outcome.predicted)
        if outcome.scan:
            g.attrs["lr_scan"] = json.dumps([r.as_dict() for r in outcome.scan])
        if outcome.target is not None:
            g.attrs["target"] = json.dumps(outcome.target)
        if stage.blocks:
            from shockflow.prediction.coupled import write_blocks

            write_blocks(f, stage.blocks)

    return write_result(result, path, extend=extend)


def read_forecast(path) -> dict:
    """The ``/forecast`` group of a forecast file: ``horizon``, ``initial_loss``, ``stability_lr``, ``lr``,
    ``predicted`` (the rows of ``--json``); ``{}`` for a result file of ``shockflow run``."""
    import json

    from shockflow.storage import ResultFileError, open_hdf5
    from shockflow.storage.results import FORMAT, FORMAT_VERSION

    with open_hdf5(path, format=FORMAT, kind="a shockflow result file", error=ResultFileError,
                   max_version=FORMAT_VERSION) as f:
        if "forecast" not in f:
            return {}
        g = f["forecast"]
        out = {k: (json.loads(v) if k in ("predicted", "lr_scan", "target") else v.item() if hasattr(v, "item") else v)
               for k, v in g.attrs.items()}
    return out


def _figure(outcome: ForecastOutcome, out: Path, options) -> tuple[Path, ...]:
    from shockflow.figures import can_draw

    if not (options.figures and can_draw()):
        return ()
    return (staircase_figure(outcome.case, outcome.predicted, outcome.horizon, outcome.initial_loss, outcome.optimizer,
                             outcome.lr, out, figure_format=options.figure_format, dpi=options.dpi),)


def staircase_figure(case: str, predicted, horizon: float, initial_loss: float, optimizer: str, lr: float, out,
                     *, figure_format: str | None = None, dpi: float | None = None) -> Path:
    """The forecast loss staircase, ``<out>/<case>-forecast.<format>``: the initial loss, then each forecast
    transition's ``loss_after`` from its step on (``predicted``: the rows of ``--json``, as :func:`read_forecast`
    returns them too, so ``show`` draws it again from the file).  Only where :func:`shockflow.figures.can_draw`."""
    from shockflow.figures import loss_figure, save_figure

    rows = [r for r in predicted if r["step"] is not None and math.isfinite(r["step"])]
    last = max([horizon] + [r["step"] for r in rows])
    steps = np.unique(np.concatenate([np.geomspace(1.0, 1.5 * last, 600), [r["step"] for r in rows]]))
    level = np.full(steps.shape, initial_loss)
    for r in sorted(rows, key=lambda r: r["step"]):   # each plateau from its transition on
        level[steps >= r["step"]] = np.minimum(level[steps >= r["step"]], r["loss_after"])
    fig = loss_figure(steps, level, predicted=[r["step"] for r in rows], charts=[r["chart"] for r in rows],
                      title=f"{case}: forecast loss staircase ({optimizer}, lr {lr:g}; no training)")
    return save_figure(fig, Path(out) / f"{case}-forecast.png", format=figure_format, dpi=dpi)


@committed_together
@blas_threads(interleaved=True)
def forecast_case(case, options, *, scan_rates=None, target_step: float | None = None,
                  transition: int | None = None, network=None) -> ForecastOutcome:
    """Forecast, write the forecast file and the figure (module docstring).  ``scan_rates``: learning rates
    for the scan; ``target_step``/``transition``: the smallest rate for that transition (None: the first) by that
    step; checked first (:func:`control_options`, an error naming ``lr_scan``, ``target_step`` or ``transition``)."""
    from shockflow.prediction.stability import overshoot_rate
    from shockflow.progress import progress, status

    scan_rates, target_step, transition = control_options(scan_rates, target_step, transition)
    if case.kind != "network":
        raise CaseError.at(case, "kind", f"a forecast is made for a network case, found a {case.kind!r} case")
    from shockflow.storage.outdir import refuse_other_kind
    from shockflow.storage.results import FORMAT as RESULT_FORMAT

    refuse_other_kind(Path(options.out) / f"{case.name}-forecast.h5", RESULT_FORMAT, "forecast", case)   # before any
    # work: another case's result of that name stays
    start = time.perf_counter()
    seed = options.seed if options.seed is not None else (case.seed or 0)
    show = options.progress and not options.quiet
    stage, model, data, settings = forecast_stage(case, seed, progress=show, network=network)
    from shockflow.logs.agreement import start_digest

    begins = start_digest(model.params)   # the log of a run from these parameters records the same (compare, monitor)
    initial_loss = float(model.copy().loss_and_grad(data.X, data.y)[0])
    kappa = max((sharpest_curvature(c) for c in stage.extraction.charts), default=0.0)
    linear = stability_limit(kappa, settings.optimizer, settings.momentum)
    # the escape's overshoot past the minimum meets steeper curvature than κ_max: the update rule run on
    # the charts (shockflow.prediction.stability) flags from the first rate whose iterate leaves its basin
    # over the charts that predict an escape: an abstaining chart has no escape to overshoot (its box is the hull of a
    # start next to its minimum, which a path leaves at any rate)
    from dataclasses import replace

    escaping = {p.chart for p in stage.predicted}
    charts = tuple(c for c in stage.extraction.charts if c.label in escaping)
    limit = min(linear, overshoot_rate(replace(stage.extraction, charts=charts), model.copy(), data.X, data.y,
                                       settings, linear)[0])
    if stage.source == "plateau":   # the approach settles on the symmetric plateau only below its stability limit
        from shockflow.prediction.mapping import Optimiser
        from shockflow.prediction.plateau import plateau_stability_rate

        rule = Optimiser(np.array([settings.lr]), settings.optimizer, settings.momentum)
        limit = min(limit, plateau_stability_rate(model.copy(), data.X, data.y, rule, settings.frozen))
    from shockflow.geometry.batched_loss import remembered_losses

    at = AtRate(stage, settings, case=case, model=model, data=data)
    scan, target = (), None
    with remembered_losses():   # the chain visits the same saddles at every rate: their losses are read once
        if scan_rates is not None:
            with progress(len(scan_rates), "scan the learning rates", enabled=show, unit="rate") as bar:
                scan = lr_scan(at, scan_rates, limit, bar=bar)
        if target_step is not None:
            try:
                with status("find the target rate", enabled=show):
                    target = target_rate(at, target_step, transition, limit)
            except ForecastOptionError as exc:   # an option of the call, not a key of the case file
                raise ForecastOptionError(exc.parameter, f"{exc.detail} (the forecast of {case.name})") from None
    outcome = ForecastOutcome(case.name, stage, settings.steps, initial_loss, settings.lr, settings.optimizer,
                              settings.momentum, limit, time.perf_counter() - start, scan=scan, target=target,
                              start=begins)
    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{case.name}-forecast.h5"
    with status(f"write {path}", enabled=show):
        _write(case, outcome, path, seed)
    figures = _figure(outcome, out, options)
    return replace(outcome, forecast_file=path, figures=figures, seconds=time.perf_counter() - start)


def python_case(label: str, optimiser) -> object:
    """The case of a network forecast from Python: ``optimiser`` (a dict of ``[training]`` keys, e.g.
    ``{"optimizer": "gd", "lr": 0.05, "steps": 2000}``; None: the defaults) validated as a case file's
    ``[training]`` table; automatic charts, default extraction and prediction settings.  Its errors name the network
    ``label`` and the argument (``network 'Net': optimiser.lr: ...``), never a case file."""
    from collections.abc import Mapping

    from shockflow.cases.errors import ArgumentTypeError, Problem
    from shockflow.cases.loading import Case
    from shockflow.cases.network import Extraction, NetworkCase, Prediction, Training
    from shockflow.cases.schema import Call, parse_settings

    if optimiser is not None and not isinstance(optimiser, Mapping):
        raise ArgumentTypeError.expected("optimiser", "a dict of the keys of a case's [training] table, e.g. "
                                                      "{'optimizer': 'gd', 'lr': 0.05, 'steps': 2000}", optimiser)
    try:
        training = parse_settings(Training, dict(optimiser or {}), file=label)
    except CaseError as exc:
        raise CaseError(label, [Problem(f"optimiser.{p.key}" if p.key else "optimiser", p.message) for p in exc.problems],
                        [f"optimiser.{k}" for k in exc.missing], source="network") from None
    settings = NetworkCase(model=Call("protocol"), data=Call("arrays"), training=training, geometry=None,
                           extraction=Extraction(), prediction=Prediction())
    return Case(name=label, kind="network", description="a network forecast from Python", seed=0, settings=settings,
                text="", origin="network", arguments=(("training", "optimiser"),))
