"""Interpolation onset of the width-p network: counting degrees of freedom (docs/theory.md §4).

The set {S ⪰ 0, rank S = p} is a manifold of dimension

    k(p, d) = p d − p(p − 1)/2     (W ∈ R^{p×d} modulo the orthogonal group O(p)),

so with λ → 0 the width-p network interpolates n < k generic samples and cannot for n > k.
Measurement (ours, **[model]** for the linearisation): labels y = Tr[S* Z] + √Δ ξ with a rank-p
target S* of well-separated eigenvalues. Near Ŝ ≈ S* the least-squares problem is linear
regression on the tangent space of dimension k, so the minimal training residual is

    RSS(n) = 0  (n ≤ k),        E[RSS(n)] ≈ Δ (n − k)  (n > k, small Δ),

and every n > k gives an estimate k̂ = n − RSS/Δ of the onset. The fits are the convex-route
iteration at λ = 0 with rank ≤ p (prox = projection on the top p non-negative eigenvalues),
started at S*: the local minimiser near S* is the one the linearisation describes (training W
from a random start can stop in a spurious local minimum at p = 1, which would measure the
optimiser, not the count).
"""

from __future__ import annotations

import numpy as np

from shockflow.scaling.convex_erm import ConvexERMSettings, fit_convex
from shockflow.scaling.design import QuadraticDesign
from shockflow.scaling.target import make_target, sample_data

__all__ = ["dof_count", "onset_curve"]


def dof_count(p: int, d: int) -> int:
    """k(p, d) = p d − p(p−1)/2 (p ≤ d)."""
    if p < 1 or d < 1:
        raise ValueError(f"p, d: expected p >= 1 and d >= 1, found p = {p}, d = {d}")
    p = min(int(p), int(d))
    return p * d - p * (p - 1) // 2


def onset_curve(d: int, p: int, n_values, seeds=range(3), noise: float = 1e-4, tol: float = 1e-9,
                max_iter: int = 20000) -> dict:
    """Training residual over n for width p at λ = 0 (rank-p target, eigenvalues 2..1 times √d).

    Returns {"d", "p", "dof", "n", "rss_over_noise" [seed][n], "dof_estimate" [n] (seed mean of
    n − RSS/Δ, NaN for n ≤ dof), "dof_estimate_mean" (over n > dof)}.
    """
    n_values = [int(n) for n in n_values]
    k = dof_count(p, d)
    spectrum = np.sqrt(d) * np.linspace(2.0, 1.0, min(p, d))
    rss = np.zeros((len(list(seeds)), len(n_values)))
    for i, s in enumerate(seeds):
        target = make_target(d, spectrum=spectrum, noise=noise, seed=s)
        for j, n in enumerate(n_values):
            X, y = sample_data(target, n, seed=1000 + s)
            res = fit_convex(QuadraticDesign(X), y, 0.0, p,
                             ConvexERMSettings(tol=tol, tol_objective=1e-14, max_iter=max_iter, on_fail="return"),
                             S0=target.matrix)
            rss[i, j] = res.train_loss * n / noise
    est = [float(n - m) if n > k else float("nan") for n, m in zip(n_values, rss.mean(axis=0))]
    above = [e for e in est if e == e]
    return {"d": int(d), "p": int(p), "dof": k, "n": n_values, "rss_over_noise": rss.tolist(),
            "dof_estimate": est, "dof_estimate_mean": float(np.mean(above)) if above else float("nan")}
