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
    """Figure of :func:`shockflow.nqf.experiments.five_mode_switch_on`'s result (returns the Figure)."""
    curves = result["curves"]
    t, z = np.asarray(curves["t"]), np.asarray(curves["z"])
    z_inf = np.asarray(result["z_inf"])
    if fig is None:
        fig = new_figure(7, 6)
    ax, axl = fig.subplots(2, 1, sharex=True)
    for k in range(z.shape[1]):
        line, = ax.plot(t, z[:, k] / z_inf[k], lw=1.4, color=PALETTE[k % len(PALETTE)], label=f"mode {k + 1}")
        ax.axvline(result["t_predicted"][k], color=line.get_color(), lw=0.8)
        ax.axvline(result["t_leading"][k], color=line.get_color(), lw=0.8, ls=":")
    ax.axhline(result["rho"], color="0.6", lw=0.6)
    ax.set_ylabel("z_k / z_k(∞)")
    ax.set_title(f"{result['network']} network, {result['optimizer']}: switch-on "
                 f"(max |rel. error| {result['max_abs_relative_error']:.2%})")
    ax.legend(fontsize=8, loc="lower right")
    axl.semilogy(np.asarray(curves["loss_t"]), np.asarray(curves["loss"]), color="k", lw=1)
    axl.set_xlabel("gradient-flow time t = η × step")
    axl.set_ylabel("loss")
    return fig


def power_law_figure(t, loss, fit: dict, predicted: dict, title: str = "", extra: dict | None = None, *, ax=None):
    """Loss against time (log-log), the fitted law over its window and lines of the ``predicted``
    exponents (returns the Figure)."""
    t, loss = np.asarray(t, float), np.asarray(loss, float)
    ok = (t > 0) & (loss > 0)
    fig, ax = figure_of(ax, 7, 4.5)
    ax.loglog(t[ok], loss[ok], color="k", lw=1.2, label="loss")
    for name, (tt, ll) in (extra or {}).items():
        tt, ll = np.asarray(tt), np.asarray(ll)
        sel = (tt > 0) & (ll > 0)
        ax.loglog(tt[sel], ll[sel], lw=1, ls="--", label=name)
    t_lo, t_hi = fit["t_lo"], fit["t_hi"]
    tw = np.geomspace(t_lo, t_hi, 50)
    L0 = np.interp(np.log(t_lo), np.log(t[ok]), loss[ok])
    ax.loglog(tw, L0 * (tw / t_lo) ** (-fit["exponent"]), color="C3", lw=2.5, alpha=0.7,
              label=f"fit {fit['exponent']:.3f} ± {fit['spread']:.3f}")
    for i, (name, p) in enumerate(predicted.items()):
        ax.loglog(tw, 0.5 * L0 * (tw / t_lo) ** (-p), color=PALETTE[i % len(PALETTE)], lw=1, ls=":",
                  label=f"{name} {p:.3f}")
    ax.axvline(t_lo, color="0.7", lw=0.6)
    ax.axvline(t_hi, color="0.7", lw=0.6)
    ax.set_xlabel("gradient-flow time t")
    ax.set_ylabel("loss")
    ax.set_title(title)
    ax.legend(fontsize=8)
    return fig
