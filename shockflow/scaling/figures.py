"""Figures of the scaling study (matplotlib is imported inside each function).

- :func:`plot_error_vs_n`   excess error against n_eff for several widths p (log-log, standard
  errors over seeds), with the rank floors 2 Σ_{i>p} s_i²/d dashed, the degrees-of-freedom onsets
  n/d = k(p, d)/d dotted, and the case's exponent fit beside the predicted power law;
- :func:`plot_regime_map`   the regime label of every (n_eff, p) grid point (rule in regimes.py),
  sized by the rank floor's share of the error;
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
_NAMES = {"data": "data-limited", "width": "width-limited", "large_sample": "large-sample"}


def _plain_ticks(axis) -> None:
    """Log-axis ticks as plain numbers (2, 3, 4, 6, 10), not 2 × 10⁰."""
    from matplotlib.ticker import FuncFormatter

    def minor(v, _):  # 2, 3, 5 of each decade: more would crowd the labels
        m = v / 10 ** np.floor(np.log10(v)) if v > 0 else 0
        return f"{v:g}" if any(abs(m - k) < 1e-6 for k in (2, 3, 5)) else ""

    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(FuncFormatter(minor))


def plot_error_vs_n(results: Sequence[dict], lam_index: int | str = "best", fits: dict | None = None, *,
                    fit: dict | None = None, ax=None):
    """Seed-mean excess error vs n_eff (log-log), one line per p, with the standard error over seeds.

    ``fit``: the case's exponent fit (``shockflow run``'s ``fit``: ``exponent``, ``exponent_std``,
    ``prefactor``, ``window``, ``predicted``, ``regime``): its window shaded, the fitted law drawn
    over it and, beside it, the predicted power law through the fit's middle, so the two slopes
    compare by eye.  ``fits``: optional ``{p: PowerLawFit}`` drawn on top as well."""
    fig, ax = figure_of(ax, 6.4, 4.6)
    floors = onsets = False
    for i, p in enumerate(sorted({r["p"] for r in results})):
        rows = [r for r in results if r["p"] == p]
        ns = sorted({r["n"] for r in rows})
        d = rows[0]["d"]
        errs, bars = [], []
        for n in ns:
            E = np.array([r["excess_error"] for r in rows if r["n"] == n], dtype=float)   # (seeds, lambdas)
            M = E.mean(axis=0)
            k = int(np.argmin(M)) if lam_index == "best" else int(lam_index)
            errs.append(M[k])
            bars.append(E[:, k].std(ddof=1) / np.sqrt(E.shape[0]) if E.shape[0] > 1 else 0.0)
        colour = PALETTE[i % len(PALETTE)]
        x = np.array(ns, dtype=float) / d
        ax.errorbar(x, errs, yerr=bars, fmt="o-", color=colour, ms=4.5, lw=1.2, capsize=2.5,
                    label=f"measured, p = {p}" + (" (best λ per n)" if lam_index == "best" else ""))
        if rows[0]["rank_floor"] > 0:
            ax.axhline(rows[0]["rank_floor"], color=colour, ls="--", lw=0.8,
                       label=None if floors else "rank floor 2 Σ_{i>p} s_i² / d")
            floors = True
        onset = dof_count(p, d) / d
        if x.min() / 1.5 <= onset <= x.max() * 1.5:
            ax.axvline(onset, color=colour, ls=":", lw=0.8, label=None if onsets else "degrees of freedom k(p, d) / d")
            onsets = True
        if fits and p in fits:
            f = fits[p]
            xs = np.geomspace(*f.window, 20)
            ax.loglog(xs, f.prefactor * xs**f.exponent, "k-", lw=0.8)
            ax.text(xs[-1], f.prefactor * xs[-1] ** f.exponent, f" {f.exponent:.2f}", fontsize=8)
    n_eff = np.array([r["n"] / r["d"] for r in results], dtype=float)
    if fit and fit.get("regime") in ("data", "large_sample") and np.isfinite(fit.get("exponent", np.nan)):
        # the window as far as there are points in it (the rule's window may reach beyond the grid)
        lo, hi = (float(v) for v in fit["window"])
        inside = n_eff[(n_eff >= lo) & (n_eff <= hi)]
        lo, hi = (float(inside.min()), float(inside.max())) if inside.size else (lo, hi)
        ax.axvspan(lo, hi, color="0.92", zorder=0, label=f"fit window ({fit['regime']} regime)")
        xs = np.geomspace(lo, hi, 40)
        ax.plot(xs, fit["prefactor"] * xs ** fit["exponent"], color="k", lw=1.6,
                label=f"fit: n_eff^({fit['exponent']:.3f} ± {fit.get('exponent_std', float('nan')):.3f})")
        mid = np.sqrt(lo * hi)
        anchor = fit["prefactor"] * mid ** fit["exponent"]
        ax.plot(xs, anchor * (xs / mid) ** fit["predicted"], color=PALETTE[3], ls="--", lw=1.6,
                label=f"theory: n_eff^({fit['predicted']:.3f})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    if n_eff.max() / n_eff.min() < 100:
        _plain_ticks(ax.xaxis)
    _plain_ticks(ax.yaxis)
    ax.set_xlabel("samples per dimension n_eff = n / d")
    ax.set_ylabel("excess test error 2‖Ŝ − S*‖²_F / d")
    r0 = results[0]
    ax.set_title(f"quadratic network: d = {r0['d']}, γ = {r0['gamma']:g}, noise Δ = {r0['noise']:g}")
    ax.legend(fontsize=7.5, loc="best")
    return fig


def plot_regime_map(regmap: dict, *, ax=None):
    """The (n_eff, p) grid coloured by the term that dominates the excess error (rule in regimes.py),
    each point sized by the share of the rank floor in its error."""
    fig, ax = figure_of(ax, 6.4, 4.2)
    frac = np.nan_to_num(np.asarray(regmap.get("floor_fraction", np.zeros(len(regmap["p"]))), dtype=float))
    for name, colour in _COLOURS.items():
        idx = [i for i, g in enumerate(regmap["regime"]) if g == name]
        if idx:
            ax.scatter([regmap["n_eff"][i] for i in idx], [regmap["p"][i] for i in idx], c=colour,
                       s=[40 + 120 * min(max(frac[i], 0.0), 1.0) for i in idx], label=_NAMES[name],
                       edgecolors="k", linewidths=0.4, zorder=3)
    ax.set_xscale("log")
    widths = sorted(set(int(v) for v in regmap["p"]))
    if len(widths) > 2 and widths[-1] / max(widths[0], 1) > 4:
        ax.set_yscale("log")
    _plain_ticks(ax.xaxis)
    ax.set_yticks(widths)
    ax.set_yticklabels([str(w) for w in widths])
    if len(widths) == 1:
        ax.set_ylim(widths[0] * 0.5, widths[0] * 1.5)
    ax.set_xlabel("samples per dimension n_eff = n / d")
    ax.set_ylabel("width p")
    ax.set_title("regime of each grid point (dominant term of the excess error)")
    ax.legend(fontsize=8, title="regime (size: rank-floor share)", title_fontsize=7.5)
    return fig


def plot_optimal_lambda(opt: dict, d: int | None = None, *, ax=None):
    fig, ax = figure_of(ax, 5, 3.6)
    n = np.asarray(opt["n"], dtype=float)
    ax.loglog(n / (d or 1), opt["lam"], "o-")
    ax.set_xlabel("n_eff = n / d" if d else "n")
    ax.set_ylabel("optimal λ (absolute units of Φ)")
    return fig
