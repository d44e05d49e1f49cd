"""The figure of a ``bbp`` case: the BBP transition against the step size, measured beside theory.

:func:`plot_transition` draws, from the case's summary (``shockflow.spectra.case``), (a) the top
eigenvalue of W Wᵀ against ε with the theory's λ_top and the Marchenko–Pastur edge λ₊, (b) the
teacher overlap q² of the top eigenvector against the theory's q², both with the critical step
ε_c(t) (docs/theory.md §3), and (c) when the finite-size study ran, the Binder cumulants U4(ε) of
each size with their crossings beside ε_c.  Object API only; returns the Figure.
"""

from __future__ import annotations

import numpy as np

from shockflow.figures import PALETTE, new_figure

__all__ = ["plot_transition"]


def plot_transition(summary: dict, *, fig=None):
    from .teacher_student import population_theory

    ts = summary["teacher_student"]
    fs = summary.get("finite_size")
    rows = ts["rows"]
    eps = np.array([r["eps"] for r in rows], dtype=float)
    ratio = ts["N"] / ts["M"]
    ec = float(ts["eps_c"])
    if fig is None:
        fig = new_figure(12.5 if fs else 9.0, 4.0)
    axes = fig.subplots(1, 3 if fs else 2)
    top, q2 = axes[0], axes[1]
    lo, hi = min(eps.min(), ec) * 0.7, max(eps.max(), ec) * 1.1
    fine = np.linspace(lo, hi, 400)
    fine = fine[np.abs(fine - 1.0) > 1e-9]
    th = [population_theory(float(e), ts["t"], ts["sigma_w"], ratio) for e in fine]
    top.plot(fine, [x["lambda_top"] for x in th], color="k", lw=1.4, label="theory λ_top")
    top.plot(fine, [x["lambda_plus"] for x in th], color="0.5", lw=1.0, ls="--", label="bulk edge λ₊ (theory)")
    top.plot(eps, [r["top_eigenvalue"] for r in rows], "o", color=PALETTE[0], mec="k", mew=0.5,
             label=f"measured, mean of {ts['seeds']} seeds")
    top.set_ylabel("top eigenvalue of W Wᵀ")
    q2.plot(fine, [x["q2"] for x in th], color="k", lw=1.4, label="theory q²")
    q2.plot(eps, [r["q2"] for r in rows], "o", color=PALETTE[1], mec="k", mew=0.5,
            label=f"measured, mean of {ts['seeds']} seeds")
    q2.set_ylabel("teacher overlap q² = (u_top · u)²")
    q2.set_ylim(-0.03, 1.03)
    for ax in (top, q2):
        ax.axvline(ec, color=PALETTE[3], lw=1.0, ls=":", label=f"ε_c(t) = {ec:.4f}")
        ax.set_xlabel("gradient step ε")
        ax.legend(fontsize=7.5, loc="upper right" if ax is top else "upper left")
    top.set_title(f"outlier: N × M = {ts['N']} × {ts['M']}, σ_W = {ts['sigma_w']:g}, t = {ts['t']}", fontsize=9.5)
    q2.set_title("overlap of the top eigenvector with the teacher", fontsize=9.5)
    if fs:
        b = axes[2]
        e = np.asarray(fs["eps"], dtype=float)
        for k, (n, u, err) in enumerate(zip(fs["sizes"], fs["U4"], fs["U4_err"])):
            b.errorbar(e, u, yerr=err, fmt="o-", ms=3.5, lw=1.1, capsize=2, color=PALETTE[k % len(PALETTE)],
                       label=f"N = {n}")
        for j, x in enumerate(fs["crossings"]):
            b.axvline(x, color="0.4", lw=0.8, ls="--", label="crossings" if j == 0 else None)
        b.axvline(fs["eps_c"], color=PALETTE[3], lw=1.0, ls=":", label=f"ε_c = {fs['eps_c']:.4f}")
        b.set_xlabel("gradient step ε")
        b.set_ylabel("Binder cumulant U4 of q²")
        b.set_title(f"finite size: crossing {fs['crossing_mean']:.4f} ({fs['crossing_rel_error']:+.1%} from ε_c)",
                    fontsize=9.5)
        b.legend(fontsize=7.5)
    return fig
