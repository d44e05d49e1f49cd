"""Grids over n, p, λ and d: one pure function per grid point, a plain loop (or 2 processes) over them.

The unit of work is a λ path at fixed (d, n, p, γ, Δ, seed): :func:`run_path` draws the target
and the data from the seed, builds one :class:`QuadraticDesign` (its λ_max(A*A) is computed
once), solves the λ values from the largest down with warm starts, and returns a dict with
stable JSON keys (:data:`PATH_KEYS`). It is a pure function params → dict, so a sweep engine can
distribute it as it is.

λ is given either in absolute units of Φ(S) = Σ_μ (y_μ − Tr[S Z_μ])² + λ‖S‖_* (``lam_units =
"absolute"``) or relative to λ_0 = 2 max(0, λ_max(A*y)), the smallest λ whose solution is 0
(``lam_units = "lambda_zero"``), which keeps a λ grid meaningful across n and d.

Threads: every fit is a chain of small BLAS/LAPACK calls; on a shared 2-core machine
multi-threaded OpenBLAS slows them down by a large factor. Run sweeps with
``OPENBLAS_NUM_THREADS=1`` (and ``workers=2`` for two processes).
"""

from __future__ import annotations

import math
import numbers
import time
from dataclasses import asdict, dataclass, field, fields
from typing import Iterable, Sequence

import numpy as np

from shockflow.scaling.convex_erm import ConvergenceError, ConvexERMSettings, fit_lambda_path, lambda_zero
from shockflow.scaling.design import QuadraticDesign
from shockflow.scaling.target import make_target, rank_floor, sample_data
from shockflow.scaling.exact_error import excess_error

__all__ = ["PathParams", "run_path", "run_grid", "grid", "PATH_KEYS", "error_table", "optimal_lambda"]

#: keys of the dict returned by :func:`run_path` (stable JSON schema)
PATH_KEYS = ("d", "n", "n_eff", "p", "gamma", "noise", "seed", "lam_units", "lam_input", "lam", "lambda_zero",
             "excess_error", "test_mse", "train_loss", "rank", "iterations", "residual", "converged",
             "rank_floor", "seconds")


def _int(name, v, lo=1):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < lo:
        raise ValueError(f"{name}: expected an integer >= {lo}, found {v!r}")
    return int(v)


@dataclass(frozen=True)
class PathParams:
    """One grid point: a λ path at fixed (d, n, p, γ, Δ, seed). ``p=None`` means p = d."""

    d: int
    n: int
    lams: tuple[float, ...]
    gamma: float = 1.0
    p: int | None = None
    noise: float = 0.0
    seed: int = 0
    lam_units: str = "lambda_zero"
    tol: float = 1e-6
    tol_objective: float = 1e-10
    max_iter: int = 20000

    def __post_init__(self):
        _int("d", self.d)
        _int("n", self.n)
        if self.p is not None:
            _int("p", self.p)
        _int("seed", self.seed, 0)
        lams = tuple(float(v) for v in np.atleast_1d(self.lams))
        if not lams or any(not math.isfinite(v) or v < 0 for v in lams):
            raise ValueError(f"lams: expected one or more finite λ >= 0, found {self.lams!r}")
        object.__setattr__(self, "lams", lams)
        if self.lam_units not in ("absolute", "lambda_zero"):
            raise ValueError(f"lam_units: unknown value {self.lam_units!r}; valid values: absolute, lambda_zero")
        make_target(self.d, self.gamma, noise=self.noise)     # validates γ > 1/2 and Δ >= 0
        ConvexERMSettings(tol=self.tol, tol_objective=self.tol_objective, max_iter=self.max_iter)

    def as_dict(self) -> dict:
        out = asdict(self)
        out["lams"] = list(self.lams)
        return out


def run_path(params: PathParams | dict) -> dict:
    """Solve the λ path of one grid point; return the dict of :data:`PATH_KEYS` (lists over λ).

    A fit that does not converge is recorded with ``converged = False`` and its residual (the
    sweep goes on); callers that fit exponents must check ``converged``.
    """
    if isinstance(params, dict):
        params = PathParams(**params)
    t0 = time.perf_counter()
    target = make_target(params.d, params.gamma, noise=params.noise, seed=params.seed)
    X, y = sample_data(target, params.n, seed=params.seed)
    design = QuadraticDesign(X)
    lz = lambda_zero(design, y)
    scale = lz if params.lam_units == "lambda_zero" else 1.0
    lams = [v * scale for v in params.lams]
    settings = ConvexERMSettings(tol=params.tol, tol_objective=params.tol_objective, max_iter=params.max_iter,
                                 on_fail="return")
    p = params.d if params.p is None else min(params.p, params.d)
    fits = fit_lambda_path(design, y, lams, p, settings)
    S_star = target.matrix
    ex = [excess_error(f.S, S_star) for f in fits]
    return {
        "d": params.d, "n": params.n, "n_eff": params.n / params.d, "p": p, "gamma": params.gamma,
        "noise": params.noise, "seed": params.seed, "lam_units": params.lam_units,
        "lam_input": list(params.lams), "lam": lams, "lambda_zero": lz,
        "excess_error": ex, "test_mse": [e + params.noise for e in ex],
        "train_loss": [f.train_loss for f in fits], "rank": [f.rank for f in fits],
        "iterations": [f.iterations for f in fits], "residual": [f.residual for f in fits],
        "converged": [bool(f.converged) for f in fits], "rank_floor": rank_floor(target, p),
        "seconds": time.perf_counter() - t0,
    }


def grid(*, d: Sequence[int], n: Sequence[int], p: Sequence[int | None], seeds: Iterable[int],
         lams: Sequence[float], **common) -> list[PathParams]:
    """The Cartesian grid d × n × p × seeds of λ paths (``common``: gamma, noise, lam_units, tol, …)."""
    return [PathParams(d=dd, n=nn, p=pp, seed=s, lams=tuple(lams), **common)
            for dd in d for nn in n for pp in p for s in seeds]


def run_grid(points: Sequence[PathParams | dict], workers: int = 1, progress=None, *,
             scheduler: str | None = None, out=None, client=None) -> list[dict]:
    """Run :func:`run_path` on every point; results in the order of ``points``.

    ``workers=1`` with no ``scheduler``: a plain loop in this process (``progress``: optional
    callable(done, total)).  Otherwise the points run on the sweep engine (:mod:`shockflow.sweeps`):
    ``scheduler`` ``"local"`` (default when ``workers > 1``: a dask LocalCluster of ``workers``
    processes), ``"serial"``, or a scheduler address; ``client`` an existing dask Client.  With
    ``out`` (a directory) every point keeps its result file there, so an interrupted grid resumes
    and only the missing points run; a point that fails is reported with its parameters.
    """
    workers = _int("workers", workers)
    points = [p if isinstance(p, PathParams) else PathParams(**p) for p in points]
    if workers == 1 and scheduler is None and client is None:
        results: list[dict] = []
        for k, pt in enumerate(points):
            results.append(run_path(pt))
            if progress:
                progress(k + 1, len(points))
        return results
    from pathlib import Path

    from shockflow.sweeps import function_sweep, run_sweep
    from shockflow.sweeps.records import read_task_values

    names = [f.name for f in fields(PathParams)]
    # zipped axes: one task per point (full width p = None travels as p = d, the same constraint)
    axes = {name: [pt.d if name == "p" and pt.p is None else getattr(pt, name) for pt in points] for name in names}
    sweep = function_sweep(run_path, axes, zips=(tuple(names),), name="scaling-grid")
    from shockflow.storage.atomic import scratch_directory

    with scratch_directory(prefix="shockflow-scaling-") as scratch:
        directory = Path(out) if out is not None else Path(scratch)
        summary = run_sweep(sweep, directory, scheduler=scheduler or "local", workers=workers, client=client,
                            progress=bool(progress))
        if summary.failed:
            first = summary.failed[0]
            raise RuntimeError(f"run_grid: {len(summary.failed)} of {len(points)} points failed; first: "
                               f"{first.params} ({first.error})")
        results = []
        for task in sweep.tasks:
            raw = read_task_values(directory / "tasks" / task.filename)
            results.append({k: (raw[k].tolist() if isinstance(raw[k], np.ndarray) else raw[k]) for k in PATH_KEYS})
    return results


def error_table(results: Sequence[dict], x: str = "n", lam_index: int | str = 0, require_converged: bool = True,
                **where) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x values, seeds, errors[seed, x]) of the excess error at one λ (``lam_index``) or at the
    seed-averaged optimal λ (``lam_index="best"``), over the results matching ``where``
    (e.g. ``p=10``). Missing combinations or unconverged fits are errors, not silent gaps."""
    rows = [r for r in results if all(r[k] == v for k, v in where.items())]
    if not rows:
        raise ValueError(f"error_table: no results match {where}")
    xs = np.array(sorted({r[x] for r in rows}), dtype=np.float64)
    seeds = np.array(sorted({r["seed"] for r in rows}))
    E = np.full((seeds.size, xs.size), np.nan)
    for r in rows:
        errs = np.asarray(r["excess_error"])
        if lam_index == "best":
            continue
        if require_converged and not r["converged"][lam_index]:
            raise ValueError(f"error_table: fit at {x} = {r[x]}, seed {r['seed']}, λ = {r['lam'][lam_index]:.4g} did not "
                             f"converge (residual {r['residual'][lam_index]:.3e})")
        E[np.searchsorted(seeds, r["seed"]), np.searchsorted(xs, r[x])] = errs[lam_index]
    if lam_index == "best":
        for j, xv in enumerate(xs):
            sub = [r for r in rows if r[x] == xv]
            M = np.array([r["excess_error"] for r in sub])
            k = int(np.argmin(M.mean(axis=0)))
            for r in sub:
                if require_converged and not r["converged"][k]:
                    raise ValueError(f"error_table: fit at {x} = {xv}, seed {r['seed']} did not converge at the best λ")
                E[np.searchsorted(seeds, r["seed"]), j] = r["excess_error"][k]
    if np.any(np.isnan(E)):
        raise ValueError(f"error_table: the grid is incomplete over {x} × seed for {where}")
    return xs, seeds, E


def optimal_lambda(results: Sequence[dict], **where) -> dict:
    """For each n: the λ (input units and absolute) minimising the seed-mean excess error,
    and that error. Keys: n, lam_input, lam, excess_error."""
    rows = [r for r in results if all(r[k] == v for k, v in where.items())]
    if not rows:
        raise ValueError(f"optimal_lambda: no results match {where}")
    out = {"n": [], "lam_input": [], "lam": [], "excess_error": []}
    for n in sorted({r["n"] for r in rows}):
        sub = [r for r in rows if r["n"] == n]
        M = np.array([r["excess_error"] for r in sub]).mean(axis=0)
        k = int(np.argmin(M))
        out["n"].append(int(n))
        out["lam_input"].append(float(sub[0]["lam_input"][k]))
        out["lam"].append(float(np.mean([r["lam"][k] for r in sub])))
        out["excess_error"].append(float(M[k]))
    return out
