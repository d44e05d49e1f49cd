"""Which term of the test error dominates where: the regime map of docs/theory.md §4.

Predicted rates (docs/theory.md §4, [paper summary]; exponents of the excess error):

    data-limited   1 ≪ n_eff ≪ d, noisy labels:  n_eff^{-1 + 1/(2γ)}
    width-limited  p ≪ p* ~ n_eff^{1/(2γ)}:       p^{-(2γ-1)}   (the rank floor 2 Σ_{i>p} s_i²/d)
    large-sample   n_eff ≫ d:                     d / n_eff

Measured classification rule (stated, ours): at a grid point with excess error E, rank floor
F(p) = 2 Σ_{i>p} s_i²/d (the least error of any rank-p S, :func:`~shockflow.scaling.target.rank_floor`)
and k(p, d) = p d − p(p−1)/2 degrees of freedom:

    "width"         if F(p) ≥ E / 2           (at least half the error is the width floor)
    "data"          else if n < k(p, d)        (fewer samples than parameters: data-limited)
    "large_sample"  otherwise.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from shockflow.scaling.interpolation import dof_count

__all__ = ["predicted_exponents", "classify", "regime_map", "REGIMES"]

REGIMES = ("data", "width", "large_sample")


def predicted_exponents(gamma: float) -> dict:
    """docs/theory.md §4 exponents of the excess error: {"data", "width", "large_sample"}."""
    if not gamma > 0.5:
        raise ValueError(f"gamma: expected gamma > 1/2, found {gamma!r}")
    return {"data": -1.0 + 1.0 / (2.0 * gamma), "width": -(2.0 * gamma - 1.0), "large_sample": -1.0}


def classify(error: float, floor: float, n: int, p: int, d: int) -> str:
    """The regime label of one grid point by the rule of the module docstring."""
    if floor >= 0.5 * error:
        return "width"
    return "data" if n < dof_count(p, d) else "large_sample"


def regime_map(results: Sequence[dict], lam_index: int | str = "best") -> dict:
    """Seed-averaged error per (n, p) and its regime label. ``lam_index``: one λ of the path, or
    "best" (the λ with the least seed-mean error at that (n, p)).

    Keys: n, n_eff, p, d, excess_error, rank_floor, floor_fraction, regime (lists, one entry per (n, p)).
    """
    cells: dict[tuple[int, int], list[dict]] = {}
    for r in results:
        cells.setdefault((r["n"], r["p"]), []).append(r)
    out = {k: [] for k in ("n", "n_eff", "p", "d", "excess_error", "rank_floor", "floor_fraction", "regime")}
    for (n, p), rows in sorted(cells.items()):
        M = np.array([r["excess_error"] for r in rows]).mean(axis=0)
        k = int(np.argmin(M)) if lam_index == "best" else int(lam_index)
        E, F, d = float(M[k]), float(rows[0]["rank_floor"]), int(rows[0]["d"])
        out["n"].append(int(n))
        out["n_eff"].append(n / d)
        out["p"].append(int(p))
        out["d"].append(d)
        out["excess_error"].append(E)
        out["rank_floor"].append(F)
        out["floor_fraction"].append(F / E if E > 0 else 1.0)
        out["regime"].append(classify(E, F, n, p, d))
    return out
