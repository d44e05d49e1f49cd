"""The ``scaling`` case kind: a grid of ERM fits, the error surface, optimal λ and exponent fits.

A case file::

    kind = "scaling"
    [scaling.target]
    gamma = 1.0            # s_i ∝ i^-γ, γ > 1/2
    noise = 1.0            # label-noise variance Δ
    [scaling.grid]
    d = [100]
    n = [400, 800, 1600]
    p = [0]                # 0 = full width p = d
    lam = [0.3, 0.1, 0.03] # in units of λ_0 (lam_units = "lambda_zero") or absolute
    seeds = 4
    [scaling.fit]
    regime = "data"        # fit the exponent over n with the window of that regime ("none": no fit)

The runner evaluates every grid point with :func:`shockflow.scaling.sweeps.run_path` (a pure
function params → dict), writes ``scaling.h5`` atomically in ``options.out`` (a netCDF-4/CF theory
result file, :mod:`shockflow.storage.theory_results`: the table ``points`` over ``(point, lambda)``,
``optimal_lambda`` and ``regime_map`` over ``grid_point``, the ``fit``) and, with figures on,
``scaling_error.png`` and ``scaling_regimes.png``; ``--json`` prints every key of :data:`RESULT_KEYS`. Registering needs
``shockflow.scaling.case`` in :data:`shockflow.cases.kinds.BUILTIN_KIND_MODULES`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from shockflow.storage.atomic import committed_together
from shockflow.cases.kinds import CaseKind, register_kind
from shockflow.cases.schema import at_least, greater_than, interval, setting

__all__ = ["ScalingCaseFile", "ScalingCase", "ScalingTarget", "ScalingGrid", "ScalingSolver", "ScalingFit", "ScalingOutcome",
           "run_scaling_case", "RESULT_KEYS"]

#: top-level keys of ``ScalingOutcome.as_dict()`` (``--json``); the file holds the results among them
#: (points, optimal_lambda, regime_map, fit, predicted_exponents; the settings as its ``settings``)
RESULT_KEYS = ("case", "settings", "points", "optimal_lambda", "regime_map", "fit", "predicted_exponents",
               "seconds", "figures", "result_file")


@dataclass(frozen=True)
class ScalingTarget:
    """The teacher S* (docs/theory.md §4)."""

    gamma: float = setting(1.0, doc="Power-law exponent γ of the target spectrum s_i ∝ i^-γ.",
                           bounds=greater_than(0.5))
    noise: float = setting(0.0, doc="Label-noise variance Δ.", bounds=at_least(0))


@dataclass(frozen=True)
class ScalingGrid:
    """The grid d × n × p × seeds; each point solves the λ list as one warm-started path."""

    d: tuple[int, ...] = setting(doc="Input dimensions.", bounds=at_least(1))
    n: tuple[int, ...] = setting(doc="Sample sizes.", bounds=at_least(1))
    p: tuple[int, ...] = setting((0,), doc="Widths (0 = full width p = d).", bounds=at_least(0))
    lam: tuple[float, ...] = setting((0.1, 0.03, 0.01), doc="Regularisation strengths λ.", bounds=at_least(0))
    lam_units: str = setting("lambda_zero", doc="λ in units of λ_0 (the least λ with Ŝ = 0) or absolute.",
                             choices=("lambda_zero", "absolute"))
    seeds: int = setting(3, doc="Number of seeds per point (data and target seeds 0..seeds-1).", bounds=at_least(1))


@dataclass(frozen=True)
class ScalingSolver:
    """FISTA stopping rule and parallelism."""

    tol: float = setting(1e-6, doc="Relative prox-gradient residual at convergence.", bounds=interval(0, 1, "neither"))
    tol_objective: float = setting(1e-10, doc="Relative objective change at convergence.",
                                   bounds=interval(0, 1, "neither"))
    max_iter: int = setting(20000, doc="Iteration cap (a fit that reaches it is recorded as unconverged).",
                            bounds=at_least(1))
    workers: int = setting(1, doc="Processes (1 = plain loop).", bounds=interval(1, 2))


@dataclass(frozen=True)
class ScalingFit:
    """Exponent fit over n (regimes data, large_sample) or p (width), with the stated window rule."""

    regime: str = setting("none", doc="Regime whose window is fitted.",
                          choices=("none", "data", "large_sample", "width"))
    margin: float = setting(4.0, doc="Window margin m of the rule in shockflow.scaling.fits.", bounds=at_least(1))
    lam: str = setting("best", doc='"best" (optimal λ per point) or "smallest" λ of the list.',
                       choices=("best", "smallest"))


@dataclass(frozen=True)
class ScalingCase:
    """A scaling study of the quadratic network (docs/theory.md §4)."""

    target: ScalingTarget = setting(doc="The target.", factory=ScalingTarget)
    grid: ScalingGrid = setting(doc="The grid.")
    solver: ScalingSolver = setting(doc="Solver settings.", factory=ScalingSolver)
    fit: ScalingFit = setting(doc="Exponent fit.", factory=ScalingFit)

    def check(self):
        g = self.grid
        for key in ("d", "n", "p"):
            if len(getattr(g, key)) == 0:
                yield f"grid.{key}", "expected at least one value, found an empty list"
        if self.fit.regime != "none" and g.seeds < 2:
            yield "grid.seeds", "an exponent fit bootstraps over seeds: expected at least 2"
        if self.fit.regime in ("data", "large_sample") and len(g.d) != 1:
            yield "grid.d", f"a fit over n needs one d, found {len(g.d)}"
        if self.fit.regime in ("data", "large_sample") and len(g.p) != 1:
            yield "grid.p", f"a fit over n needs one width, found {len(g.p)}"
        if self.fit.regime == "width" and (len(g.n) != 1 or len(g.d) != 1):
            yield "grid.n", "a fit over p needs one n and one d"
        if self.fit.regime == "width" and len(g.p) < 3:
            yield "grid.p", f"a fit over p needs at least 3 widths, found {len(g.p)}"
        if self.fit.regime in ("data", "large_sample") and len(g.d) == 1:
            from shockflow.scaling.fits import regime_window

            lo, hi = regime_window(self.fit.regime, g.d[0], margin=self.fit.margin)
            inside = [n for n in g.n if lo <= n / g.d[0] <= hi]
            if len(inside) < 3:
                yield "grid.n", (f"the {self.fit.regime} window n/d in [{lo:g}, {hi:g}] (d = {g.d[0]}, margin "
                                 f"{self.fit.margin:g}) holds {len(inside)} of the sample sizes; a fit needs at least 3")


@dataclass(frozen=True)
class ScalingCaseFile:
    """The tables of a ``kind = "scaling"`` file: one ``[scaling]`` section with sub-tables."""

    scaling: ScalingCase = setting(doc="The scaling study.")


@dataclass(frozen=True)
class ScalingOutcome:
    data: dict = field(repr=False)

    def as_dict(self) -> dict:
        return self.data

    def table(self) -> str:
        d = self.data
        lines = [f"scaling case {d['case']}: {len(d['points'])} λ paths in {d['seconds']:.1f} s -> {d['result_file']}"]
        m = d["regime_map"]
        lines.append(f"{'n_eff':>9} {'p':>5} {'error':>10} {'floor':>10}  regime")
        for i in range(len(m["n"])):
            lines.append(f"{m['n_eff'][i]:9.3g} {m['p'][i]:5d} {m['excess_error'][i]:10.4g} "
                         f"{m['rank_floor'][i]:10.4g}  {m['regime'][i]}")
        if d["fit"]:
            f = d["fit"]
            lines.append(f"exponent ({f['regime']}): {f['exponent']:.3f} ± {f['exponent_std']:.3f} "
                         f"(predicted {f['predicted']:.3f}) on {f['window']}")
        return "\n".join(lines)


_LAMBDA = ("lam_input", "lam", "excess_error", "test_mse", "train_loss", "rank", "iterations", "residual", "converged")
#: dimensions and descriptions of a scaling result file (shockflow.storage.theory_results)
SCALING_DIMS = {"points": ("point",), **{f"points/{k}": ("point", "lambda") for k in _LAMBDA},
                **{f"optimal_lambda/{k}": ("grid_point",) for k in ("n", "lam_input", "lam", "excess_error")},
                **{f"regime_map/{k}": ("grid_point",) for k in ("n", "n_eff", "p", "d", "excess_error", "rank_floor",
                                                                "floor_fraction", "regime")},
                "fit/window": ("bound",)}
SCALING_DESCRIPTIONS = {
    "d": ("input dimension d", "1"), "n": ("sample size n", "1"), "n_eff": ("samples per dimension n / d", "1"),
    "p": ("width p", "1"), "gamma": ("target spectrum exponent gamma", "1"), "noise": ("label-noise variance", "1"),
    "lam_input": ("regularisation lambda as given (units of lambda_units)", "1"),
    "lam": ("regularisation lambda (absolute)", "1"), "lambda_zero": ("least lambda with S = 0", "1"),
    "excess_error": ("excess test error", "1"), "test_mse": ("test mean squared error", "1"),
    "train_loss": ("training loss", "1"), "rank": ("rank of the fitted S", "1"),
    "iterations": ("FISTA iterations", "1"), "residual": ("relative prox-gradient residual", "1"),
    "converged": ("FISTA converged", "1"), "rank_floor": ("error floor of the width", "1"),
    "floor_fraction": ("floor / error", "1"), "regime": ("scaling regime", "1"), "seconds": ("wall time", "s"),
    "fit/window": ("fitting window (n / d, or p)", "1"),
}


def scaling_layout():
    from shockflow.storage.theory_results import Layout

    return Layout(dims=SCALING_DIMS, describe=SCALING_DESCRIPTIONS, labels={"bound": ("lower", "upper")})


@committed_together
def run_scaling_case(case, options) -> ScalingOutcome:
    """Run a ``scaling`` case (``case.settings`` is a :class:`ScalingCaseFile`)."""
    import numpy as np

    from shockflow.cases.schema import to_plain
    from shockflow.scaling.fits import bootstrap_exponent, regime_window
    from shockflow.scaling.regimes import predicted_exponents, regime_map
    from shockflow.scaling.sweeps import error_table, grid, optimal_lambda, run_grid

    s: ScalingCase = case.settings.scaling
    t0 = time.perf_counter()
    seed0 = options.seed if options.seed is not None else (case.seed or 0)
    points = []
    for d in s.grid.d:
        points += grid(d=[d], n=list(s.grid.n), p=[None if p == 0 else p for p in s.grid.p],
                       seeds=range(seed0, seed0 + s.grid.seeds), lams=s.grid.lam, gamma=s.target.gamma,
                       noise=s.target.noise, lam_units=s.grid.lam_units, tol=s.solver.tol,
                       tol_objective=s.solver.tol_objective, max_iter=s.solver.max_iter)
    from shockflow.progress import progress, status

    show = options.progress and not options.quiet
    from shockflow.blas_threads import blas_threads

    # the paths' FISTA steps (d x d eigendecompositions, n x d products) take one BLAS thread per idle core: on 2
    # cores at load 2 a path at d = 100, n = 1131 took 1.85 s with one thread and 4.9-6.7 s with two
    with progress(len(points), f"λ paths of {case.name}", enabled=show, unit="path") as bar, blas_threads():
        results = run_grid(points, workers=s.solver.workers, progress=lambda done, total: bar.update(done - bar.n))
        bar.update(len(points) - bar.n)
    fit = None
    if s.fit.regime != "none":
        d = s.grid.d[0]
        lam_index = "best" if s.fit.lam == "best" else int(np.argmin(s.grid.lam))
        pred = predicted_exponents(s.target.gamma)[s.fit.regime]
        if s.fit.regime == "width":
            xs, _, E = error_table(results, x="p", lam_index=lam_index)
            window = (2.0, float(xs.max()))
        else:
            xs, _, E = error_table(results, x="n", lam_index=lam_index)
            xs = xs / d
            window = regime_window(s.fit.regime, d, margin=s.fit.margin)
        f = bootstrap_exponent(xs, E, window)
        fit = {"regime": s.fit.regime, "predicted": pred, **f.as_dict()}
        fit["window"] = [float(v) for v in fit["window"]]
    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    figures = []
    rmap = regime_map(results)
    if options.figures:
        from shockflow.figures import save_figure
        from shockflow.scaling.figures import plot_error_vs_n, plot_regime_map

        fmt, dpi = getattr(options, "figure_format", None), getattr(options, "dpi", None)
        with status("figures", enabled=show):
            figures = [save_figure(plot_error_vs_n(results, fit=fit), out / "scaling_error.png", format=fmt, dpi=dpi),
                       save_figure(plot_regime_map(rmap), out / "scaling_regimes.png", format=fmt, dpi=dpi)]
    from shockflow.logs import package_versions
    from shockflow.storage.theory_results import write_theory_result

    result_file = out / "scaling.h5"
    data = {"case": case.name, "settings": to_plain(s), "points": results, "optimal_lambda": optimal_lambda(results),
            "regime_map": rmap, "fit": fit, "predicted_exponents": predicted_exponents(s.target.gamma),
            "seconds": time.perf_counter() - t0, "figures": [str(p) for p in figures],
            "result_file": str(result_file)}
    document = {k: data[k] for k in ("points", "optimal_lambda", "regime_map", "fit", "predicted_exponents")}
    with status(f"write {result_file}", enabled=show):
        write_theory_result(result_file, document, scaling_layout(), case=case, seed=seed0, settings=data["settings"],
                            versions=package_versions(), wall_time=data["seconds"])
    return ScalingOutcome(data)


def reopen(result, path: Path) -> ScalingOutcome:
    """The outcome of a run, from its result file (:mod:`shockflow.runners.theories`)."""
    doc = result.document
    return ScalingOutcome({"case": result.case_name, "settings": result.settings, **doc, "seconds": result.wall_time,
                           "figures": [], "result_file": str(path)})


def redraw(result, out: Path, stem: str, options) -> tuple[Path, ...]:
    """The run's figures from its result file (error against n with the fit; the regime map)."""
    from shockflow.figures import save_figure
    from shockflow.scaling.figures import plot_error_vs_n, plot_regime_map

    doc, fmt, dpi = result.document, options.figure_format, options.dpi
    return (save_figure(plot_error_vs_n(doc["points"], fit=doc["fit"]), out / f"{stem}_error.png", format=fmt, dpi=dpi),
            save_figure(plot_regime_map(doc["regime_map"]), out / f"{stem}_regimes.png", format=fmt, dpi=dpi))


SCALING_KIND = register_kind(CaseKind(
    name="scaling", settings=ScalingCaseFile, run=run_scaling_case, command="run",
    description="quadratic-network scaling: ERM error surface over n, p, λ, d and power-law exponents",
))
