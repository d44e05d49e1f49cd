"""Figures of the scaling study (matplotlib is imported inside each function).

- :func:`plot_error_vs_n`   excess error against n_eff for several widths p (log-log), with the
  rank floors 2 Σ_{i>p} s_i²/d dashed and the degrees-of-freedom onsets n/d = k(p, d)/d dotted;
- :func:`plot_regime_map`   the regime label of every (n_eff, p) grid point (rule in regimes.py);
- :func:`plot_optimal_lambda`  the optimal λ against n.
Each takes an optional ``ax`` and returns the Figure (matplotlib's object API, no pyplot state);
:func:`shockflow.figures.save_figure` writes it.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from shockflow.figures import PALETTE, figure_of
from shockflow.scaling.interpolation import dof_count

__all__ = ["plot_error_vs_n", "plot_regime_map", "plot_optimal_lambda"]

_COLOURS = {"data": PALETTE[0], "width": PALETTE[1], "large_sample": PALETTE[2]}


def plot_error_vs_n(results: Sequence[dict], lam_index: int | str = "best", fits: dict | None = None, *, ax=None):
    """Seed-mean excess error vs n_eff, one line per p; ``fits``: optional {p: PowerLawFit} drawn on top."""
    fig, ax = figure_of(ax, 6, 4.2)
    for i, p in enumerate(sorted({r["p"] for r in results})):
        rows = [r for r in results if r["p"] == p]
        ns = sorted({r["n"] for r in rows})
        d = rows[0]["d"]
        errs = []
        for n in ns:
            M = np.array([r["excess_error"] for r in rows if r["n"] == n]).mean(axis=0)
            errs.append(M.min() if lam_index == "best" else M[int(lam_index)])
        line, = ax.loglog(np.array(ns) / d, errs, "o-", color=PALETTE[i % len(PALETTE)], label=f"p = {p}")
        ax.axhline(rows[0]["rank_floor"], color=line.get_color(), ls="--", lw=0.8)
        ax.axvline(dof_count(p, d) / d, color=line.get_color(), ls=":", lw=0.8)
        if fits and p in fits:
            f = fits[p]
            x = np.geomspace(*f.window, 20)
            ax.loglog(x, f.prefactor * x**f.exponent, "k-", lw=0.8)
            ax.text(x[-1], f.prefactor * x[-1] ** f.exponent, f" {f.exponent:.2f}", fontsize=8)
    ax.set_xlabel("n_eff = n / d")
    ax.set_ylabel("excess test error 2‖Ŝ − S*‖²_F / d")
    ax.set_title(f"d = {results[0]['d']}, γ = {results[0]['gamma']}, Δ = {results[0]['noise']}")
    ax.legend(fontsize=8)
    return fig


def plot_regime_map(regmap: dict, *, ax=None):
    """Scatter of (n_eff, p) coloured by regime, sized by the floor fraction."""
    fig, ax = figure_of(ax, 6, 4.2)
    for name, colour in _COLOURS.items():
        idx = [i for i, g in enumerate(regmap["regime"]) if g == name]
        if idx:
            ax.scatter([regmap["n_eff"][i] for i in idx], [regmap["p"][i] for i in idx], c=colour, s=60,
                       label=name, edgecolors="k", linewidths=0.4)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("n_eff = n / d")
    ax.set_ylabel("width p")
    ax.set_title("dominant term of the excess error")
    ax.legend(fontsize=8)
    return fig


def plot_optimal_lambda(opt: dict, d: int | None = None, *, ax=None):
    fig, ax = figure_of(ax, 5, 3.6)
    n = np.asarray(opt["n"], dtype=float)
    ax.loglog(n / (d or 1), opt["lam"], "o-")
    ax.set_xlabel("n_eff = n / d" if d else "n")
    ax.set_ylabel("optimal λ (absolute units of Φ)")
    return fig
