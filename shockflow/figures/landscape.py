"""The quotient trajectory over the initial-data landscape: one panel per extracted chart.

Each panel draws ``u0 = L̄`` along the chart (the PDE's initial data, :mod:`shockflow.prediction.extraction`)
and, on it, the logged parameter snapshots mapped to the chart (``x(step)``, ``L̄(x(step))``,
coloured by log step), the initial point, the ridge where the shock forms and the landscape
minimum (with the saddle chain, the chart's minimum at the saddle it escapes from).  matplotlib is imported inside the function (DESIGN.md).
"""

from __future__ import annotations

import numpy as np

from shockflow.figures.canvas import facet_figure, panel_title

__all__ = ["landscape_figure"]


def landscape_figure(extraction, *, ridges=None, fig=None):
    """Draw ``extraction.charts`` and return the Figure; ``ridges``: the shock place per chart (optional);
    ``fig``: draw into this Figure."""
    charts = extraction.charts
    if not charts:
        raise ValueError("landscape_figure: the extraction holds no charts")
    cols = min(len(charts), 4)
    rows = (len(charts) + cols - 1) // cols
    bar = None
    if fig is None:
        fig, axes, bars = facet_figure(len(charts), panel=(2.5, 2.1), colorbar="shared")
        bar = bars[0]
    else:
        axes = np.atleast_1d(fig.subplots(rows, cols)).reshape(-1)
    for k, (ax, c) in enumerate(zip(axes, charts)):
        x, u0 = np.asarray(c.x), np.asarray(c.u0)
        if c.mirrored:
            keep = x >= 0
            x, u0 = x[keep], u0[keep]
        ax.plot(x, u0, color="0.3", lw=1.2, label="L̄ (initial data)")
        if c.trajectory.size:
            xt = np.abs(c.trajectory) if c.mirrored else np.asarray(c.trajectory)
            ut = np.interp(xt, x, u0)
            steps = np.maximum(np.asarray(c.trajectory_steps, dtype=float), 1.0)
            sc = ax.scatter(xt, ut, c=np.log10(steps), cmap="viridis", s=12, zorder=3)
            if k == len(charts) - 1:     # the same snapshots on every chart: one colour scale
                fig.colorbar(sc, **({"cax": bar} if bar is not None else {"ax": ax}), label="log10 step")
        x0 = abs(c.x0) if c.mirrored else c.x0
        ax.plot([x0], [np.interp(x0, x, u0)], "o", mfc="none", mec="k", label="start")
        # with the saddle chain, the minimum of the chart at the saddle it escapes from (the curve is the
        # origin's: the two differ where the modes couple)
        ax.axvline(c.x_min, color="g", lw=0.8, ls=":", label="minimum (at its saddle)")
        if ridges is not None and np.isfinite(ridges[k]):
            ax.axvline(ridges[k], color="r", lw=0.8, ls="--", label="shock (ridge)")
        ax.set_xlabel(c.coordinate)
        panel_title(ax, f"chart {c.label}")
        if k == 0:
            ax.set_ylabel("L̄")
            ax.legend(fontsize=7)
    for ax in axes[len(charts):]:
        ax.set_visible(False)
    return fig
