"""The prediction half of ``shockflow run``: a network at its initial parameters -> predicted transitions.

    extract (shockflow.prediction.extraction)      -> one 1-D HJ problem per chart, from the INITIAL parameters
    solve inviscid and viscous (solvers.charts)    -> shocks per chart (shockflow.prediction.shock_report.report_line)
    map (shockflow.prediction.mapping)             -> predicted steps

:func:`predict_case` receives the model at its initial parameters, the data, the optimiser settings
and the parameter snapshots — never the loss series (THE RULE of issue 6;
``tests/prediction/test_prediction_runs.py`` replaces the loss and checks the prediction is
unchanged).  The runner that trains, observes and compares is :mod:`shockflow.runners.prediction`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from shockflow.cases.errors import CaseError

__all__ = ["ChartFailure", "ChartSolution", "PredictionStage", "formation_time", "hessian_g", "initial_gamma", "predict_case",
           "shock_records"]

#: shocks within this fraction of the chart width from a wall are wall effects, not ridges
WALL = 0.05



@dataclass(frozen=True, eq=False)
class ChartSolution:
    times: np.ndarray
    u: np.ndarray
    report: object          # ShockReport of the inviscid solve
    viscous_u: np.ndarray | None
    viscous_report: object | None
    steps: int
    seconds: float


@dataclass(frozen=True, eq=False)
class PredictionStage:
    extraction: object
    solutions: tuple[ChartSolution, ...]
    shocks: tuple            # ChartShock per chart
    predicted: tuple         # PredictedTransition, sorted by step


def hessian_g(u, chart):
    """The quotient Hessian of 1-D data ``u (…, n)``: ``sqrt(a) ∂_x (sqrt(a) ∂_x u)`` = ``u_ρρ`` in the flat
    coordinate ``dρ = dx/sqrt(a)`` (``a u''`` for constant mobility)."""
    r = np.sqrt(chart.mobility)
    return r * np.gradient(r * np.gradient(u, chart.dx, axis=-1), chart.dx, axis=-1)


def initial_gamma(chart) -> float:
    """``γ* = −1/min Hess_g u0`` from the initial data (interior cells; inf if nowhere negative)."""
    d2 = hessian_g(chart.u0, chart)[1:-1]
    n = d2.size
    cut = max(int(WALL * n), 1)
    m = float(np.min(d2[cut:-cut]))
    return -1.0 / m if m < 0 else math.inf


def _solve(chart, times, nu: float, cfl: float):
    from solvers.charts import solve_chart_hj
    from solvers.grid import Grid

    grid = Grid((chart.lower,), (chart.upper,), (chart.x.size,), 3)
    xs, a = chart.x, chart.mobility

    def mobility(x):
        return np.interp(x, xs, a)

    return solve_chart_hj(grid, chart.u0, times, mobility=mobility, nu=nu, boundary="outflow", cfl=cfl)


def _report(chart, times, u, nu: float):
    from shockflow.prediction.shock_report import report_line

    cut = max(int(WALL * chart.x.size), 2)
    keep = slice(cut, chart.x.size - cut)
    p = np.gradient(u, chart.dx, axis=1) * chart.mobility[None, :]   # characteristic speed a u_x
    a_ref = float(np.median(chart.mobility))
    return report_line(times, p[:, keep], chart.x[keep], a=1.0, nu=nu * a_ref)


def formation_time(times, u, chart) -> tuple[float, float]:
    """``(γ*, x*)`` measured on the solution: the steepest compression ``s(t) = −min_x Hess_g u``
    obeys ``1/s(t) = γ* − t`` before the shock (docs/theory.md §1: along the focusing characteristic
    ``p_x = p0'/(1 + t p0')``).  A line through the snapshots with ``s(t) ≤ 4 s(0)`` (resolved, before
    numerical diffusion bends it) is extrapolated to zero.  Unlike the global ``‖p_x‖∞`` of
    :func:`solvers.shocks.track_shocks` this ignores expansive (convex) parts of ``L̄``, whose slopes
    exceed the ridge's for a double well.  ``inf`` if nothing compresses."""
    cut = max(int(WALL * chart.x.size), 2)
    cx = hessian_g(np.asarray(u), chart)[:, cut:-cut]
    s = -cx.min(axis=1)
    if not s[0] > 0:
        return math.inf, math.nan
    use = (s > 0) & (s <= 4.0 * s[0])
    use &= np.cumprod(use).astype(bool)   # the leading run only
    t, inv = np.asarray(times)[use], 1.0 / s[use]
    if t.size >= 3:
        slope, icpt = np.polyfit(t, inv, 1)
        gamma = -icpt / slope if slope < 0 else math.inf
    else:
        gamma = float(times[0] + 1.0 / s[0])
    x_star = float(chart.x[cut + int(np.argmin(cx[0]))])
    return float(gamma), x_star


def _chart_shock(chart, report, times, u):
    from shockflow.prediction.mapping import ChartShock

    rows = [r for r in report.shocks if math.isfinite(r.time)]
    speed = 0.0
    if rows:
        first = min(rows, key=lambda r: r.time)
        loc, strength = float(first.location[0]), float(first.strength)
        gamma, _ = formation_time(times, u, chart)
        if math.isfinite(chart.ridge) and abs(loc - chart.ridge) <= 3 * chart.dx:
            loc, speed = chart.ridge, chart.ridge_speed   # the same place, refined on the landscape
    else:
        gamma, strength = math.inf, 0.0
        loc = 0.0 if chart.mirrored else float(chart.x0)
    a_ridge = float(np.interp(loc, chart.x, chart.mobility))
    return ChartShock(label=chart.label, x0=chart.x0, x_min=chart.x_min, nu=chart.nu, mobility_at_ridge=a_ridge,
                      gamma_star=gamma, location=loc, strength=strength, escape_x=chart.escape_x,
                      escape_rate=chart.escape_rate, mirrored=chart.mirrored, metric_x=chart.metric_x,
                      metric_a=chart.metric_a, ridge_speed=speed, rank=chart.rank,
                      initial_escape_x=chart.initial_escape_x, initial_escape_rate=chart.initial_escape_rate)


class ChartFailure(RuntimeError):
    """The PDE of one chart could not be solved (a failure of the run, exit 1): names the chart and why."""


def predict_case(case, model, data, train_settings, snapshots=None, *, log_temperature=float("nan"),
                 progress: bool = False) -> PredictionStage:
    """The prediction half of ``shockflow run`` (module docstring).  ``model``: at its initial parameters."""
    from shockflow.prediction.extraction import ExtractionError, extract
    from shockflow.geometry import GeometryError
    from shockflow.prediction.mapping import Optimiser, PredictionError, predict_transitions
    from shockflow.progress import progress as _progress, step_callback
    from shockflow.training.schedules import learning_rate

    s = case.settings
    # no [geometry] table: the automatic charts (shockflow.geometry.auto) find the modes themselves
    name, kwargs = (s.geometry.name, s.geometry.kwargs()) if s.geometry is not None else ("auto", {})
    ex = s.extraction
    B = train_settings.effective_batch_size(data.n)
    try:
        with _progress(None, f"extract the charts ({name})", enabled=progress, unit="chart", each=True) as bar:
            extraction = extract(model, name, data.X, data.y, geometry_kwargs=kwargs,
                                 charts=ex.charts or (None,), chart_key=ex.chart_key, snapshots=snapshots,
                                 lr=train_settings.lr, batch_size=B, cells=ex.cells, margin=ex.margin,
                                 noise_samples=ex.noise_samples, seed=train_settings.seed,
                                 log_temperature=log_temperature, sequential=ex.sequential,
                                 on_chart=step_callback(bar))
    except (GeometryError, TypeError) as exc:
        raise CaseError.at(case, "geometry", str(exc)) from None
    except ExtractionError as exc:
        raise CaseError.at(case, "extraction", str(exc)) from None
    pr = s.prediction
    solutions, shocks = [], []
    with _progress(len(extraction.charts), f"solve the charts of {case.name}", enabled=progress, unit="chart",
                   each=True) as bar:
        for k, chart in enumerate(extraction.charts):
            g0 = initial_gamma(chart)
            if not math.isfinite(g0):
                g0 = float(np.trapezoid(1.0 / np.maximum(chart.escape_rate, 1e-300), np.abs(chart.escape_x)))
            where = f"chart {chart.label} ({k + 1} of {len(extraction.charts)})"
            if not (math.isfinite(g0) and g0 > 0):
                raise ChartFailure(f"{where}: the initial-data formation time is {g0:.6g}, not a positive time; "
                                   "the chart's data do not focus, there is no shock to solve for")
            times = np.linspace(0.0, pr.horizon * g0, pr.times)
            start = time.perf_counter()
            try:
                sol = _solve(chart, times, 0.0, pr.cfl)
                report = _report(chart, times, sol.u, 0.0)
                vu = vrep = None
                steps = sol.steps
                if chart.nu > 0:
                    vsol = _solve(chart, times, chart.nu, pr.cfl)
                    vu, vrep, steps = vsol.u, _report(chart, times, vsol.u, chart.nu), steps + vsol.steps
            except (ValueError, FloatingPointError) as exc:  # the solver's input and blow-up errors
                raise ChartFailure(f"{where}, the chart's HJ solve to t = {pr.horizon * g0:.6g}: {exc}") from None
            solutions.append(ChartSolution(times, np.asarray(sol.u), report, vu, vrep, steps, time.perf_counter() - start))
            shocks.append(_chart_shock(chart, report, times, sol.u))
            bar.set_postfix_str(f"chart {chart.label}: γ* = {shocks[-1].gamma_star:.4g}", refresh=False)
            bar.update(1)
    rates = np.array([learning_rate(train_settings, i) for i in range(train_settings.steps)])
    optimiser = Optimiser(rates, train_settings.optimizer, train_settings.momentum)
    try:
        predicted = predict_transitions(shocks, optimiser)
    except PredictionError as exc:
        raise CaseError.at(case, "training", str(exc)) from None
    return PredictionStage(extraction, tuple(solutions), tuple(shocks), tuple(predicted))


def shock_records(stage: PredictionStage) -> list:
    """``(chart index, ShockRecord)`` of every chart; the first shock of a chart carries the formation
    time measured by :func:`formation_time` (the γ* the prediction used)."""
    from dataclasses import replace

    out = []
    for k, (sol, sh) in enumerate(zip(stage.solutions, stage.shocks)):
        rows = sorted(sol.report.shocks, key=lambda r: r.time)
        for i, r in enumerate(rows):
            out.append((k, replace(r, time=sh.gamma_star) if i == 0 and math.isfinite(sh.gamma_star) else r))
    return out
