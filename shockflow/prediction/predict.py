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
from dataclasses import dataclass, replace

import numpy as np

from shockflow.blas_threads import blas_threads
from shockflow.cases.errors import CaseError

__all__ = ["ChartFailure", "ChartSolution", "FirstShock", "PredictionStage", "first_shock", "formation_time", "hessian_g",
           "initial_gamma", "predict_case", "shock_records"]

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
    saddles: tuple = ()      # the saddles the chain visits (shockflow.prediction.saddle_chain.Saddle)
    abstained: tuple = ()    # Abstention per chart that predicts nothing (shockflow.prediction.mapping)
    blocks: tuple = ()       # groups of coupled charts (shockflow.prediction.coupled.CoupledBlock)
    # how the transitions were timed from the charts, so that they can be re-timed at another learning rate
    # (``shockflow forecast --lr-scan``): "charts" (each chart's escape), "plateau" or "mixture" (the update rule
    # ran inside the extraction: the charts themselves move with the rate)
    source: str = "charts"
    chain_start: object = None   # the extraction the saddle chain started from (None: no chain ran)
    landscape: object = None     # the chain's Landscape (None: no chain ran): the run's truth reads its learned strengths


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

    # the volume density (default det(A)^(-1/2)) enters only the viscous term: an inviscid solve never evaluates it
    return solve_chart_hj(grid, chart.u0, times, mobility=mobility, nu=nu, boundary="outflow", cfl=cfl)


#: the chart solve's accuracy rule (docs/benchmarks.md, "Chart resolution"): the grid is refined from a quarter
#: of the chart's cells (not below COARSEST_CELLS), doubling, and the first grid is accepted whose formation time γ*
#: and shock location agree to RESOLUTION_TOLERANCE (γ* relative, the location relative to the chart's width) with
#: the closed form of the first shock (:func:`first_shock`, exact for the inviscid 1-D chart: docs/theory.md §1), or
#: with the previous grid's (where no closed form exists; the finer of the two is used: for a scheme converging at
#: first order or better its error is at most that change; ENO2 is second order where smooth).  Never finer than
#: the chart's own grid (the extraction's).
RESOLUTION_TOLERANCE = 1e-3
COARSEST_CELLS = 64


def _resolution_levels(cells: int) -> list[int]:
    """The cell counts tried, coarsest first: ``cells/4, cells/2`` (those ≥ COARSEST_CELLS), ``cells``."""
    sizes = [cells]
    while len(sizes) < 3 and (sizes[-1] + 1) // 2 >= COARSEST_CELLS:
        sizes.append((sizes[-1] + 1) // 2)
    return sizes[::-1]


def _on_grid(chart, cells: int):
    """The chart on ``cells`` uniform cells of its box, ``u0`` and the mobility interpolated (itself at its size)."""
    from dataclasses import replace

    if cells == chart.x.size:
        return chart
    h = (chart.upper - chart.lower) / cells
    x = chart.lower + h * (np.arange(cells) + 0.5)
    return replace(chart, x=x, u0=np.interp(x, chart.x, chart.u0), mobility=np.interp(x, chart.x, chart.mobility))


@dataclass(frozen=True)
class FirstShock:
    """Where and when the first shock of a chart's inviscid HJ forms, from its initial data (:func:`first_shock`)."""

    gamma_star: float
    location: float


def first_shock(chart) -> FirstShock | None:
    """The first shock of ``u_t + ½ a u_x² = 0`` from the chart's initial data, in closed form (docs/theory.md §1): in
    the flat coordinate ``dρ = dx/sqrt(a)`` the equation is ``u_t + ½ u_ρ² = 0``, so ``p = u_ρ`` is carried along
    straight characteristics ``ρ0 + t p0(ρ0)`` and the first to cross is the one of the most negative ``p0'``
    (= Hess_g u0): at ``γ* = −1/min Hess_g u0`` (:func:`initial_gamma`, interior cells), at ``ρ0 + γ* p0(ρ0)``.
    The location as :func:`_chart_shock` reports it (the chart's ridge where within 3 cells of it, ``|x|`` on a
    mirrored chart).  None where nothing focuses (no negative curvature inside)."""
    d2 = hessian_g(chart.u0, chart)[1:-1]   # initial_gamma's minimum, read once for γ* and where it is
    cut = max(int(WALL * d2.size), 1)
    k = int(np.argmin(d2[cut:-cut]))
    m = float(d2[cut + k])
    gamma = -1.0 / m if m < 0 else math.inf
    if not (math.isfinite(gamma) and gamma > 0):
        return None
    i0 = 1 + cut + k
    root = np.sqrt(np.asarray(chart.mobility, dtype=np.float64))
    if not np.all(root > 0):
        return None   # a degenerate metric inside: no flat coordinate to carry the characteristic in
    p0 = float(root[i0] * np.gradient(np.asarray(chart.u0), chart.dx)[i0])
    rho = np.concatenate([[0.0], np.cumsum(0.5 * (1.0 / root[1:] + 1.0 / root[:-1]) * np.diff(chart.x))])
    loc = float(np.interp(rho[i0] + gamma * p0, rho, chart.x))
    if math.isfinite(chart.ridge) and abs(loc - chart.ridge) <= 3 * chart.dx:
        loc = chart.ridge
    return FirstShock(gamma, abs(loc) if chart.mirrored else loc)


def _agree(a, b, chart) -> bool:
    """Two shocks agree to RESOLUTION_TOLERANCE (γ* relative, location relative to the chart width)."""
    tol = RESOLUTION_TOLERANCE
    same_gamma = a.gamma_star == b.gamma_star or abs(a.gamma_star - b.gamma_star) <= tol * abs(b.gamma_star)
    return bool(same_gamma and abs(a.location - b.location) <= tol * (chart.upper - chart.lower))


def _solve_resolved(chart, times, cfl: float, *, closed_form: bool = True):
    """The inviscid solve on the grid the accuracy rule accepts: ``(chart on that grid, solution, report, ChartShock)``.
    A viscous solve (ν > 0) is made on the same grid; its snapshots are stored, the mapping does not read them.
    ``closed_form=False``: the rule without the closed form (two successive grids must agree), for comparison."""
    previous = None
    for cells in _resolution_levels(chart.x.size):
        here = _on_grid(chart, cells)
        sol = _solve(here, times, 0.0, cfl)
        report = _report(here, times, sol.u, 0.0)
        shock = _chart_shock(here, report, times, sol.u)
        exact = first_shock(here) if closed_form else None
        if exact is not None and math.isfinite(shock.gamma_star) and _agree(shock, exact, chart):
            break
        if previous is not None and _agree(previous, shock, chart):
            break
        previous = shock
    return here, sol, report, shock


def _to_chart(u, grid_chart, chart):
    """Snapshots ``u`` on ``grid_chart``'s cells, linearly interpolated to the chart's own cells (for storage); the
    chart's cells within half a coarse cell of a wall, beyond the coarse centres, are extrapolated linearly from the
    two nearest (held constant they were the largest error of the stored data: 1.3 % of its range at 201 cells, in
    the steep walls of the initial data, against 0.3 % inside)."""
    if grid_chart is chart:
        return np.asarray(u)
    u = np.asarray(u)
    xc, x = grid_chart.x, chart.x
    out = np.array([np.interp(x, xc, row) for row in u])
    left, right = x < xc[0], x > xc[-1]
    if xc.size >= 2:
        out[:, left] = u[:, :1] + (u[:, 1:2] - u[:, :1]) * ((x[left] - xc[0]) / (xc[1] - xc[0]))[None, :]
        out[:, right] = u[:, -1:] + (u[:, -1:] - u[:, -2:-1]) * ((x[right] - xc[-1]) / (xc[-1] - xc[-2]))[None, :]
    return out


def _escape_scale(chart, where: str) -> float:
    """The time scale of a chart without negative curvature: its escape integral ``∫ dx/|a ∂_x L̄|`` from x0.  A rate
    that vanishes on the path makes it infinite (the flow stops there): a :class:`ChartFailure` naming the point, not a
    floored rate turned into an overflowing time (issue 21: t = 2.9e283)."""
    rate = np.asarray(chart.escape_rate, dtype=np.float64)
    x = np.abs(np.asarray(chart.escape_x, dtype=np.float64)) if chart.mirrored else np.asarray(chart.escape_x)
    if rate.size < 2 or not np.all(np.isfinite(rate)):
        raise ChartFailure(f"{where}: no escape path from x0 = {chart.x0:.6g} (its flow rate is not known along it)")
    if not np.all(rate > 0):
        i = int(np.argmin(rate))
        raise ChartFailure(f"{where}: the flow stops on the way from x0 = {chart.x0:.6g} to the minimum "
                           f"{chart.x_min:.6g} (rate |a dL/dx| = {rate[i]:.3g} at x = {x[i]:.6g}): no escape to predict")
    with np.errstate(over="ignore"):
        return float(abs(np.trapezoid(1.0 / rate, x)))


def _check_solve_length(chart, t_end: float, cfl: float, where: str) -> None:
    """Refuse, before it starts, a chart solve that would exhaust the solver's step budget: at the initial data's
    CFL step ``cfl dx / max|a ∂_x L̄|`` (docs/theory.md §1: the characteristic speed of ½ a p² is a p) it needs
    ``t_end / dt`` steps.  A time that overflows (an escape rate of 1e-280 somewhere on the path) ends here at once,
    naming the chart, instead of after a million steps."""
    import inspect

    from solvers.charts import solve_chart_hj

    budget = inspect.signature(solve_chart_hj).parameters["max_steps"].default
    speed = float(np.max(np.abs(np.asarray(chart.mobility) * np.gradient(np.asarray(chart.u0), chart.dx))))
    with np.errstate(over="ignore", invalid="ignore"):
        need = t_end * speed / (cfl * chart.dx)
    if not math.isfinite(t_end) or (math.isfinite(need) and need > budget) or math.isnan(need) or math.isinf(need):
        raise ChartFailure(f"{where}: its HJ solve to t = {t_end:.4g} would take about {need:.3g} steps at the initial "
                           f"CFL step (the solver allows {budget}); the chart's escape time overflows what it can be "
                           "solved to (its flow is far too slow on the path from x0)")


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
    from solvers.shocks import line_fit

    cut = max(int(WALL * chart.x.size), 2)
    cx = hessian_g(np.asarray(u), chart)[:, cut:-cut]
    s = -cx.min(axis=1)
    if not s[0] > 0:
        return math.inf, math.nan
    use = (s > 0) & (s <= 4.0 * s[0])
    use &= np.cumprod(use).astype(bool)   # the leading run only
    t, inv = np.asarray(times)[use], 1.0 / s[use]
    if t.size >= 3:
        slope, icpt = line_fit(t, inv)
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
    if chart.mirrored:   # L̄ is even on a mirrored chart: the ridges at ±x_s are one, taken on the side of the start
        loc = abs(loc)
    a_ridge = float(np.interp(loc, chart.x, chart.mobility))
    return ChartShock(label=chart.label, x0=chart.x0, x_min=chart.x_min, nu=chart.nu, mobility_at_ridge=a_ridge,
                      gamma_star=gamma, location=loc, strength=strength, escape_x=chart.escape_x,
                      escape_rate=chart.escape_rate, mirrored=chart.mirrored, metric_x=chart.metric_x,
                      metric_a=chart.metric_a, ridge_speed=speed)


class ChartFailure(RuntimeError):
    """The PDE of one chart could not be solved (a failure of the run, exit 1): names the chart and why."""


def _solve_charts(charts, pr, title: str, progress: bool = False):
    """``(solutions, shocks)``: every chart's inviscid (and viscous) HJ solve on the grid the accuracy rule accepts,
    its first shock (a :class:`ChartFailure` names the chart that cannot be solved)."""
    from shockflow.progress import progress as _progress

    solutions, shocks = [], []
    with _progress(len(charts), title, enabled=progress, unit="chart", each=True) as bar:
        for k, chart in enumerate(charts):
            g0 = initial_gamma(chart)
            where = f"chart {chart.label} ({k + 1} of {len(charts)})"
            if not math.isfinite(g0):
                g0 = _escape_scale(chart, where)
            if not (math.isfinite(g0) and g0 > 0):
                raise ChartFailure(f"{where}: the initial-data formation time is {g0:.6g}, not a positive time; "
                                   "the chart's data do not focus, there is no shock to solve for")
            times = np.linspace(0.0, pr.horizon * g0, pr.times)
            _check_solve_length(chart, times[-1], pr.cfl, where)
            start = time.perf_counter()
            try:
                on_grid, sol, report, shock = _solve_resolved(chart, times, pr.cfl)
                vu = vrep = None
                steps = sol.steps
                if chart.nu > 0:
                    vsol = _solve(on_grid, times, chart.nu, pr.cfl)
                    vu, vrep = _to_chart(vsol.u, on_grid, chart), _report(on_grid, times, vsol.u, chart.nu)
                    steps += vsol.steps
            except (ValueError, FloatingPointError) as exc:  # the solver's input and blow-up errors
                raise ChartFailure(f"{where}, the chart's HJ solve to t = {pr.horizon * g0:.6g}: {exc}") from None
            solutions.append(ChartSolution(times, _to_chart(sol.u, on_grid, chart), report, vu, vrep, steps,
                                           time.perf_counter() - start))
            shocks.append(shock)
            bar.set_postfix_str(f"chart {chart.label}: γ* = {shocks[-1].gamma_star:.4g}", refresh=False)
            bar.update(1)
    return solutions, shocks


@blas_threads(interleaved=True)
def predict_case(case, model, data, train_settings, snapshots=None, *, log_temperature=float("nan"),
                 progress: bool = False, checkpoint=None) -> PredictionStage:
    """The prediction half of ``shockflow run`` (module docstring).  ``model``: at its initial parameters.
    ``checkpoint``: called between the prediction's phases (``shockflow run`` checks there whether the training
    beside it has failed: :meth:`shockflow.forking.Beside.check`)."""
    checkpoint = checkpoint or (lambda: None)
    from shockflow.prediction.extraction import ExtractionError, extract
    from shockflow.geometry import GeometryError
    from shockflow.prediction.mapping import (Abstention, InvalidPrediction, Optimiser, PredictionError,
                                              predict_or_abstain)
    from shockflow.prediction.gate import MixtureError, is_mixture, mixture_extraction, mixture_saddles, mixture_transitions
    from shockflow.prediction.plateau import PlateauError, PlateauUnstable, plateau_extraction, plateau_transition, sloped_origin
    from shockflow.progress import progress as _progress, status, step_callback
    from shockflow.training.schedules import learning_rate

    s = case.settings
    # no [geometry] table: the automatic charts (shockflow.geometry.auto) find the modes themselves
    name, kwargs = (s.geometry.name, s.geometry.kwargs()) if s.geometry is not None else ("auto", {})
    ex = s.extraction
    B = train_settings.effective_batch_size(data.n)
    rates = np.array([learning_rate(train_settings, i) for i in range(train_settings.steps)])
    optimiser = Optimiser(rates, train_settings.optimizer, train_settings.momentum)
    plateau = mixture = None
    try:
        with _progress(None, f"extract the charts ({name})", enabled=progress, unit="chart", each=True) as bar:
            common = dict(snapshots=snapshots, lr=train_settings.lr, batch_size=B, cells=ex.cells, margin=ex.margin,
                          noise_samples=ex.noise_samples, seed=train_settings.seed, log_temperature=log_temperature,
                          on_chart=step_callback(bar), frozen=train_settings.frozen)
            if s.geometry is None and is_mixture(model):
                # the mixture of experts: the averaged expert, then the gate's splits (shockflow.prediction.gate)
                extraction, mixture = mixture_extraction(model, data.X, data.y, optimiser, **common)
            elif s.geometry is None and sloped_origin(model, data.X, data.y, train_settings.frozen):
                # no saddle at the origin: the symmetric plateau is the start (docs/theory.md §6)
                extraction, plateau = plateau_extraction(model, data.X, data.y, optimiser, **common)
            else:
                extraction = extract(model, name, data.X, data.y, geometry_kwargs=kwargs,
                                     charts=ex.charts or (None,), chart_key=ex.chart_key, **common)
    except (MixtureError, PlateauError) as exc:
        if isinstance(exc, PlateauUnstable):   # the learning rate the case chose: its key, exit 2
            raise CaseError.at(case, "training.lr", f"the forecast cannot follow this run: {exc}") from exc
        if mixture is None and is_mixture(model):   # the chain of the mixture: no split to predict (exit 1)
            raise InvalidPrediction(f"the mixture of experts' chain (shockflow.prediction.gate): {exc}") from None
        # what the initial parameters decide was refused before any work (verify_geometry, exit 2); what the
        # landscape decides is known only here: a failure of the prediction, naming its chart (exit 1)
        raise InvalidPrediction(f"chart plateau: the loss is sloped at the origin of the free parameters and the "
                                f"symmetric plateau cannot be predicted: {exc}") from None
    except (GeometryError, TypeError, ExtractionError) as exc:
        frozen = str(exc).startswith("frozen:")
        key = "training.frozen" if frozen else "extraction" if isinstance(exc, ExtractionError) else "geometry"
        raise CaseError.at(case, key, str(exc).removeprefix("frozen: ") if frozen else str(exc)) from None
    pr = s.prediction
    checkpoint()
    solutions, shocks = _solve_charts(extraction.charts, pr, f"solve the charts of {case.name}", progress)
    checkpoint()
    try:
        predicted, abstained = ([plateau_transition(plateau, shocks[0], optimiser)], []) if plateau is not None else \
            mixture_transitions(mixture, shocks, optimiser) if mixture is not None else \
            predict_or_abstain(shocks, optimiser)
    except PredictionError as exc:
        raise CaseError.at(case, "training", str(exc)) from None
    abstained = list(abstained) + uncharted_modes(extraction)
    # every chart may abstain: the prediction is then that no transition happens (each chart's reason reported)
    saddles = mixture_saddles(mixture) if mixture is not None else ()
    chain_start = None
    if ex.sequential and len(predicted) > 1 and mixture is None:   # the mixture's chain is its own
        chain_start = extraction
        with status("follow the saddle chain", enabled=progress):
            predicted, saddles, extraction, landscape = follow_chain(model, name, extraction, shocks, predicted,
                                                                     optimiser, data.X, data.y)
    else:
        landscape = None
    checkpoint()
    blocks = ()
    if plateau is None and mixture is None and len(extraction.charts) > 1:   # charts of the origin
        with status("coupled modes", enabled=progress):
            blocks = _coupled_blocks(model, name, extraction, shocks, data.X, data.y)
    source = "plateau" if plateau is not None else "mixture" if mixture is not None else "charts"
    if plateau is None and mixture is None and predicted and not ex.charts:
        # the chain's last saddle: its own unstable directions, charted (shockflow.prediction.saddle_plateau).  Not
        # where the case names its charts: its last saddle is then not the network's (the modes left out wait
        # there, unstable), and the prediction is of the charts asked for
        with status("the chain's last saddle", enabled=progress):
            later = _last_saddle(model, name, chain_start or extraction, shocks, predicted, saddles, landscape,
                                 optimiser, data.X, data.y, train_settings.frozen, common, pr, progress)
        if isinstance(later, Abstention):   # the last saddle's escape cannot be charted: it abstains
            abstained = list(abstained) + [later]
        elif later is not None:
            chart, solution, shock, transition, abstention, saddle = later
            extraction = replace(extraction, charts=tuple(extraction.charts) + (chart,))
            solutions, shocks = list(solutions) + [solution], list(shocks) + [shock]
            predicted = sorted(list(predicted) + ([transition] if transition is not None else []),
                               key=lambda p: p.step)
            abstained = list(abstained) + ([abstention] if abstention is not None else [])
            saddles = tuple(saddles) + (saddle,)
            source = "saddle"   # the update rule ran in the approach: the chart moves with the rate
    return PredictionStage(extraction, tuple(solutions), tuple(shocks), tuple(predicted), tuple(saddles),
                           tuple(abstained), blocks, source, chain_start, landscape)


def uncharted_modes(extraction) -> list:
    """An abstention per unstable mode the geometry found but did not chart (the automatic charts' ``max_modes``:
    ``uncharted`` holds their rates), so that a mode left out is reported, never silently dropped."""
    from shockflow.geometry.auto import MAX_MODES
    from shockflow.prediction.mapping import Abstention

    rates = tuple(extraction.geometry_kwargs.get("uncharted", ()) or ())
    charted = len(extraction.charts)
    limit = extraction.geometry_kwargs.get("max_modes", MAX_MODES)
    if isinstance(limit, int) and charted < limit:   # not max_modes: a chain's narrowest layer holds no more modes
        why = (f"a chain carries at most its narrowest layer's width of modes ({charted} here); widen that layer to "
               "chart it", "past the narrowest layer")
    else:
        why = ("[geometry] max_modes; raise it to chart it", "past max_modes")
    out = []
    for i, rate in enumerate(rates):
        label = f"r{charted + i}"
        out.append(Abstention(label, f"chart {label}: not charted: an unstable mode of rate {rate:.4g} past the "
                                     f"{charted} charted ones ({why[0]})", why[1]))
    return out


def _last_saddle(model, geometry, start, shocks, predicted, saddles, landscape, optimiser, X, y, frozen, common,
                 pr, progress):
    """The chart of the chain's last saddle (:mod:`shockflow.prediction.saddle_plateau`): ``(chart, solution, shock,
    transition or None, Abstention or None, Saddle)``; an :class:`~shockflow.prediction.mapping.Abstention` where
    the model predicts no later transition from it (a minimum, or a network that does not wait there: the reason
    reported, kind "no later transition"), where no stationary point is found next to it or its escape cannot be
    followed; None where a chart abstained or the chain does not reach its last saddle within the run.  ``start``: the extraction of the origin's charts; ``landscape``: the chain's
    (:class:`~shockflow.prediction.saddle_chain.Landscape`; None: no chain ran, one is made here)."""
    from shockflow.prediction.mapping import Abstention, InvalidPrediction
    from shockflow.prediction.saddle_chain import RIDGE, Landscape, Saddle, SaddleFailure
    from shockflow.prediction.saddle_plateau import LABEL, SaddlePlateauError, saddle_escape, saddle_extraction, \
        saddle_transition

    by_label = {p.chart: p for p in predicted}
    keep = [k for k, c in enumerate(start.charts) if c.label in by_label]
    if len(keep) < len(start.charts):
        return None   # a chart abstained: its mode waits at the chain's last saddle, which is not the network's last
    horizon = float(np.asarray(optimiser.learning_rates).size)
    order = tuple(sorted(range(len(keep)), key=lambda i: by_label[start.charts[keep[i]].label].step))
    steps = [by_label[start.charts[keep[i]].label].step for i in order]
    if not steps[-1] < horizon:
        return None   # the chain does not reach its last saddle within the run
    after = ", ".join(start.charts[keep[i]].label for i in order)
    try:
        if landscape is None:
            sub = replace(start, charts=tuple(start.charts[k] for k in keep))
            landscape = Landscape(model, geometry, start.geometry_kwargs, start.chart_key, sub,
                                  [shocks[k] for k in keep], X, y,
                                  descent_rate=float(np.max(optimiser.effective_rates())))
        last = landscape.saddle(order)
        at = last.params if last.block is None else last.block   # searched from the block saddle, as validated
    except (SaddleFailure, ValueError, FloatingPointError) as exc:
        raise ChartFailure(f"the chain's last saddle (after {after}): {exc}") from None
    theta_s = np.concatenate([np.ravel(at[key]) for key in model.params])
    why = []
    try:
        escape = saddle_escape(model, theta_s, steps[-1], optimiser, X, y, frozen=frozen, why=why)
    except (SaddlePlateauError, ValueError, FloatingPointError) as exc:
        # the saddle is found but its escape cannot be followed (a line of its unstable direction without a minimum,
        # a search that diverges): no chart there, and the chart abstains with the reason; the charts before it keep
        # their predictions (a true transition after it is a miss of the score, not hidden)
        return Abstention(LABEL, f"chart {LABEL} (the chain's last saddle, after {after}): {exc}", "no escape to chart")
    if escape is None:   # the model's answer: no later transition, reported with its reason (a true one is a miss)
        return Abstention(LABEL, f"chart {LABEL} (the chain's last saddle, after {after}): {why[0]}",
                          "no later transition") if why else None
    kwargs = {k: v for k, v in common.items() if k != "snapshots"}
    try:
        chart = saddle_extraction(model, escape, X, y, **kwargs)
    except Exception as exc:   # the extraction's own errors, named (a run failure: exit 1)
        raise ChartFailure(f"chart {LABEL} of the chain's last saddle: {exc}") from None
    if abs(chart.x_min - chart.x0) <= RIDGE * abs(chart.x0):
        # the network at the chain's last saddle already sits at the minimum of the line it would escape along (within
        # the minimum search's resolution): nothing is left to learn from it, and its chart box has no width to solve
        return Abstention(LABEL, f"chart {LABEL} (the chain's last saddle, after {after}): its start, "
                                 f"{chart.x0:.6g} from the stationary point next to it, is the minimum of its line "
                                 f"({chart.x_min:.6g}): no transition is left from it", "start at the minimum")
    (solution,), (shock,) = _solve_charts((chart,), pr, "solve the chart of the last saddle", progress)
    transition = abstention = None
    try:
        transition = saddle_transition(escape, shock, optimiser, len(saddles))
    except InvalidPrediction as exc:
        abstention = Abstention(LABEL, str(exc), exc.figure)
    saddle = Saddle(tuple(start.charts[keep[i]].label for i in order), escape.loss, steps[-1],
                    {LABEL: float(escape.rates.max())},
                    {LABEL: math.log(transition.d_exit) if transition is not None and transition.d_exit > 0
                     else math.nan})
    return chart, solution, shock, transition, abstention, saddle


def _coupled_blocks(model, geometry, extraction, shocks, X, y) -> tuple:
    """The blocks of coupled charts (:mod:`shockflow.prediction.coupled`); a failure is the run's (exit 1), named."""
    from shockflow.geometry import GeometryError
    from shockflow.prediction.coupled import coupled_blocks

    try:
        return coupled_blocks(model, geometry, extraction, shocks, X, y)
    except (ValueError, FloatingPointError, GeometryError) as exc:
        raise ChartFailure(f"the block chart of the coupled charts {', '.join(c.label for c in extraction.charts)}: "
                           f"{exc}") from None


def follow_chain(model, geometry, extraction, shocks, predicted, optimiser, X, y):
    """The single-escape predictions ``predicted`` re-timed by the saddle chain
    (:mod:`shockflow.prediction.saddle_chain`); ``(predictions sorted by step, saddles visited, the
    extraction with each chart's minimum at the saddle it escapes from, the chain's Landscape)``."""
    from dataclasses import replace

    from shockflow.geometry.batched_loss import remembered_losses
    from shockflow.prediction.mapping import escape_integral
    from shockflow.prediction.saddle_chain import Landscape, chain_transitions

    by_label = {p.chart: p for p in predicted}
    # the chain runs over the charts that predict (an abstaining chart has no plateau: it is not a saddle's mode)
    keep = [k for k, c in enumerate(extraction.charts) if c.label in by_label]
    whole, extraction = extraction, replace(extraction, charts=tuple(extraction.charts[k] for k in keep))
    first = [by_label[c.label] for c in extraction.charts]
    escape = [k for k, p in enumerate(first) if p.method != "shock"]
    landscape = Landscape(model, geometry, extraction.geometry_kwargs, extraction.chart_key, extraction,
                          [shocks[k] for k in keep], X, y, escape_charts=escape,
                          descent_rate=float(np.max(optimiser.effective_rates())))
    with remembered_losses():   # the chain re-reads parameter sets it evaluated (shockflow.geometry.batched_loss)
        steps, saddle_of, saddles, escaped_from = chain_transitions(landscape, first, optimiser)
    rates = optimiser.effective_rates()
    cum = np.concatenate([[0.0], np.cumsum(rates)])
    out = []
    for i, (p, step, k) in enumerate(zip(first, steps, saddle_of)):
        t = float(np.interp(step, np.arange(cum.size), cum)) if step <= rates.size else \
            float(cum[-1] + (step - rates.size) * rates[-1]) if math.isfinite(step) else math.inf
        escape = p.escape_time
        if i in escaped_from[i].profiles:   # the escape integral on the chart at the saddle it escapes from
            escape = escape_integral(*escaped_from[i].profiles[i], extraction.charts[i].mirrored)
        out.append(replace(p, step=float(step), flow_step=float(step), time=t, saddle=int(k), escape_time=escape))
    out.sort(key=lambda p: p.step)
    # each chart's landscape minimum is the one at the saddle it escapes from (reported with the chain; the parameter
    # truth reads the origin's and the landscape's learned strengths, which do not depend on the chain)
    charts = list(whole.charts)
    for k, here in enumerate(escaped_from):
        if here.active and k in here.minimum:
            x_min, L_min, _ = here.minimum[k]
            charts[keep[k]] = replace(charts[keep[k]], x_min=x_min, loss_at_min=L_min)
    return out, saddles, replace(whole, charts=tuple(charts)), landscape



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
