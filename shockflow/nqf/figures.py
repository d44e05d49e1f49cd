"""Figures of the NQF experiments (matplotlib is imported inside each function).

* :func:`mode_strengths_figure` — z_k(t)/z_k∞ of the network against time, with the predicted switch-on
  times marked (solid: exact t*, dotted: ln(1/ε)/ζ);
* :func:`power_law_figure` — loss against time on log-log axes with the fitted and predicted exponents.

Both take an optional ``ax`` (or ``fig``) and return the Figure (matplotlib's object API, no
pyplot state); :func:`shockflow.figures.save_figure` writes it.
"""

from __future__ import annotations

import numpy as np

from shockflow.figures import PALETTE, figure_of, new_figure

__all__ = ["mode_strengths_figure", "power_law_figure"]


def mode_strengths_figure(result: dict, *, fig=None):
    """Figure of :func:`shockflow.nqf.experiments.five_mode_switch_on`'s result (returns the Figure):
    each mode's strength over time with its closed-form switch-on time (solid), the leading term
    ln(1/ε)/ζ (dotted) and the measured crossing of ρ (dot); below, the loss with the same times."""
    from matplotlib.lines import Line2D

    curves = result["curves"]
    t, z = np.asarray(curves["t"]), np.asarray(curves["z"])
    z_inf = np.asarray(result["z_inf"])
    if fig is None:
        fig = new_figure(7, 6)
    ax, axl = fig.subplots(2, 1, sharex=True)
    measured = np.asarray(result.get("t_measured", [np.nan] * z.shape[1]), dtype=float)
    for k in range(z.shape[1]):
        line, = ax.plot(t, z[:, k] / z_inf[k], lw=1.4, color=PALETTE[k % len(PALETTE)], label=f"mode {k + 1}")
        for a in (ax, axl):
            a.axvline(result["t_predicted"][k], color=line.get_color(), lw=0.8)
            a.axvline(result["t_leading"][k], color=line.get_color(), lw=0.8, ls=":")
        ax.plot([measured[k]], [result["rho"]], "o", color=line.get_color(), ms=5, mec="k", mew=0.5)
    ax.axhline(result["rho"], color="0.6", lw=0.6)
    ax.set_ylabel("mode strength z_k / z_k(∞)")
    ax.set_title(f"{result['network']} network, {result['optimizer']}, ε = {result['eps']:g}: switch-on times "
                 f"(max |rel. error| {result['max_abs_relative_error']:.2%})", fontsize=10)
    keys = [Line2D([], [], color="0.3", lw=0.8), Line2D([], [], color="0.3", lw=0.8, ls=":"),
            Line2D([], [], color="0.3", ls="", marker="o", mec="k", mew=0.5)]
    ax.legend(fontsize=8, loc="lower right")
    axl.semilogy(np.asarray(curves["loss_t"]), np.asarray(curves["loss"]), color="k", lw=1)
    axl.legend(keys, ["closed form t*_k", "leading term ln(1/ε)/ζ_k", f"measured (z_k = {result['rho']:g} z_k(∞))"],
               fontsize=7.5, loc="lower left")
    axl.set_xlabel("gradient-flow time t = η × step")
    axl.set_ylabel("loss")
    return fig


def power_law_figure(t, loss, fit: dict, predicted: dict, title: str = "", extra: dict | None = None, *, ax=None,
                     label: str = "loss, NQF closed form"):
    """Loss against time (log-log), the fitted law over its shaded window and, offset below it, the
    slopes of the ``predicted`` exponents (returns the Figure)."""
    t, loss = np.asarray(t, float), np.asarray(loss, float)
    ok = (t > 0) & (loss > 0)
    fig, ax = figure_of(ax, 7, 4.5)
    t_lo, t_hi = fit["t_lo"], fit["t_hi"]
    ax.axvspan(t_lo, t_hi, color="0.93", zorder=0, label="fit window")
    ax.loglog(t[ok], loss[ok], color="k", lw=1.2, label=label)
    for i, (name, (tt, ll)) in enumerate((extra or {}).items()):
        tt, ll = np.asarray(tt), np.asarray(ll)
        sel = (tt > 0) & (ll > 0)
        ax.loglog(tt[sel], ll[sel], lw=1.1, ls="--", color=PALETTE[5 + i % 2], label=name)
    tw = np.geomspace(t_lo, t_hi, 50)
    L0 = np.interp(np.log(t_lo), np.log(t[ok]), loss[ok])
    ax.loglog(tw, L0 * (tw / t_lo) ** (-fit["exponent"]), color=PALETTE[3], lw=2.5, alpha=0.8,
              label=f"fit: loss ∝ t^−{fit['exponent']:.3f} (± {fit['spread']:.3f} over sub-windows)")
    for i, (name, p) in enumerate(predicted.items()):
        ax.loglog(tw, 0.5 * L0 * (tw / t_lo) ** (-p), color=PALETTE[i % 3], lw=1.4, ls=(0, (4, 2)) if i else "-.",
                  label=f"theory {name}: t^−{p:.3f} (offset ×0.5)")
    ax.set_xlabel("gradient-flow time t = η × step")
    ax.set_ylabel("excess loss")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7.5, loc="lower left")
    return fig
