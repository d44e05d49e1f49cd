"""The (ε, σ_W) phase diagram of the linear teacher–student from simulation (docs/theory.md §3).

:func:`phase_point` is pure — a parameter dict in, a result dict out — so that a sweep engine can
map it over a grid; :func:`phase_diagram` is the plain loop used until then. Each point runs t
population-GD steps (``teacher_student.population_gd``) from a seeded W₀, then classifies the
spectrum *without* the theory: the bulk is fitted (:mod:`.bulk_fit`), outliers are detected with
the Tracy–Widom margin (:mod:`.outliers`), and the point is "ordered" when an outlier exists and
its eigenvector overlaps the teacher beyond the random level (q² > ``q2_min``). The theory's
phase (θ² > √r) and boundaries (:func:`teacher_student.critical_steps`) are stored beside it.
"""

from __future__ import annotations

import numpy as np

from .bulk_fit import BulkFitError, fit_bulk
from .outliers import detect_outliers
from .teacher_student import (critical_steps, initial_weights, make_teacher, population_gd,
                              population_theory)

__all__ = ["phase_point", "phase_diagram", "theory_boundaries", "plot_phase_diagram"]


def phase_point(params: dict) -> dict:
    """Simulate one (ε, σ_W) point. ``params``: N, M, eps, sigma_w, t (default 1), seed
    (default 0), level (TW level, default 0.99), q2_min (default 0.1).

    Returns measured ``top_eigenvalue``, ``q2``, ``n_outliers``, ``ordered`` (simulation),
    ``bulk_fit_ok``, and the theory's ``theory_ordered``, ``theory_q2``, ``overshoot``.
    """
    known = {"N", "M", "eps", "sigma_w", "t", "seed", "level", "q2_min"}
    unknown = set(params) - known
    if unknown:
        raise ValueError(f"params: unknown keys {sorted(unknown)}; valid: {sorted(known)}")
    missing = {"N", "M", "eps", "sigma_w"} - set(params)
    if missing:
        raise ValueError(f"params: missing keys {sorted(missing)}")
    N, M, eps, sw = int(params["N"]), int(params["M"]), float(params["eps"]), float(params["sigma_w"])
    t, seed = int(params.get("t", 1)), int(params.get("seed", 0))
    level, q2_min = float(params.get("level", 0.99)), float(params.get("q2_min", 0.1))
    rng = np.random.default_rng(seed)
    u, v = make_teacher(N, M, rng)
    W = population_gd(initial_weights(N, M, sw, rng), u, v, eps, t)
    lam, vec = np.linalg.eigh(W @ W.T)
    q2 = float((vec[:, -1] @ u) ** 2)
    try:
        fit = fit_bulk(lam, ratio=N / M)
        n_out, fit_ok = detect_outliers(lam, fit, level=level).count, True
    except BulkFitError:
        # no bulk to fit (e.g. ε = 1 removes it): the spectrum is the spike alone
        n_out, fit_ok = int(lam[-1] > 0), False
    th = population_theory(eps, t, sw, N / M)
    return {"N": N, "M": M, "eps": eps, "sigma_w": sw, "t": t, "seed": seed,
            "top_eigenvalue": float(lam[-1]), "q2": q2, "n_outliers": int(n_out),
            "bulk_fit_ok": fit_ok, "ordered": bool(n_out > 0 and q2 > q2_min),
            "theory_ordered": th["ordered"], "theory_q2": th["q2"], "overshoot": eps > 1.0}


def phase_diagram(eps_values, sigma_values, N: int, M: int, t: int = 1, seed: int = 0,
                  level: float = 0.99, scheduler: str | None = "serial", workers: int | None = None,
                  client=None, out=None) -> dict:
    """:func:`phase_point` over the (σ_W, ε) grid on the sweep engine; arrays of shape (len(sigma), len(eps)).

    ``scheduler``: ``"serial"`` (in process), ``"local"`` (a dask LocalCluster, one worker per
    core) or the address of a running scheduler; ``out``: a directory that keeps one result file
    per point so an interrupted diagram resumes (see :mod:`shockflow.sweeps`). Each point's seed
    is derived from ``seed`` and its (σ_W, ε), not from its position in the grid.
    """
    from shockflow.sweeps import grid_map

    eps_values = np.asarray(eps_values, dtype=float)
    sigma_values = np.asarray(sigma_values, dtype=float)
    res = grid_map(phase_point, {"sigma_w": sigma_values, "eps": eps_values},
                   fixed={"N": N, "M": M, "t": t, "level": level}, seed=seed, scheduler=scheduler,
                   workers=workers, client=client, out=out, name="bbp-phase-diagram")
    if res["summary"].failed:
        first = res["summary"].failed[0]
        raise RuntimeError(f"phase_diagram: {len(res['summary'].failed)} grid point(s) failed, first {first}")
    result = {k: np.asarray(res[k], dtype=float) for k in ("q2", "top_eigenvalue", "theory_q2")}
    result.update({k: np.asarray(res[k]).astype(bool) for k in ("ordered", "theory_ordered")})
    result.update({"eps": eps_values, "sigma_w": sigma_values, "N": N, "M": M, "t": t})
    result["agreement"] = float(np.mean(result["ordered"] == result["theory_ordered"]))
    return result


def theory_boundaries(sigma_values, t: int, ratio: float) -> dict:
    """ε_c(σ_W) (lower branch) and the overshooting branches for each σ_W (NaN where absent)."""
    sig = np.asarray(sigma_values, dtype=float)
    lower = np.array([critical_steps(t, s, ratio)["lower"] for s in sig])
    ups = [critical_steps(t, s, ratio)["upper"] for s in sig]
    width = max([len(u) for u in ups] + [1])
    upper = np.full((sig.size, width), np.nan)
    for i, u in enumerate(ups):
        upper[i, :len(u)] = u
    return {"sigma_w": sig, "lower": lower, "upper": upper}


def plot_phase_diagram(result: dict, *, ax=None):
    """Simulated q² over (ε, σ_W) with the theory's boundaries overlaid (returns the Figure)."""
    from shockflow.figures import figure_of

    eps, sig = result["eps"], result["sigma_w"]
    fig, ax = figure_of(ax, 6.0, 4.4)
    m = ax.pcolormesh(eps, sig, result["q2"], shading="nearest", vmin=0, vmax=1, cmap="viridis")
    fig.colorbar(m, ax=ax, label="simulated q² = (u_top·u)²")
    fine = np.linspace(sig.min(), sig.max(), 200)
    b = theory_boundaries(fine, result["t"], result["N"] / result["M"])
    ax.plot(b["lower"], fine, "w-", lw=2, label="theory ε_c(σ_W)")
    drawn = False
    for j in range(b["upper"].shape[1]):
        branch = b["upper"][:, j]
        seen = np.isfinite(branch) & (branch >= eps.min()) & (branch <= eps.max())
        if seen.any():   # labelled only where it shows
            ax.plot(branch, fine, "w--", lw=2, label=None if drawn else "overshooting branch")
            drawn = True
    if eps.min() <= 1.0 <= eps.max():
        ax.axvline(1.0, color="w", ls=":", lw=1, label="ε = 1 (the bulk vanishes)")
    ax.set_xlim(eps.min(), eps.max())
    ax.set_xlabel("gradient step ε")
    ax.set_ylabel("initial scale σ_W")
    ax.set_title(f"BBP phase diagram: N × M = {result['N']} × {result['M']}, t = {result['t']}", fontsize=10)
    ax.legend(fontsize=8, loc="upper right")
    return fig
