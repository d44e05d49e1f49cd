"""The training loss against the step, with predicted and observed phase transitions marked.

Left: the loss on log–log axes (a log step axis keeps early transitions apart); each predicted step
a dashed line and each observed one a solid line in its chart's colour (colour-blind-safe palette),
labelled by chart; the onset–end band of every observed drop shaded.  Right (when there are
matches): predicted against observed step on a parity diagram, each point labelled with its chart
and relative error.
"""

from __future__ import annotations

import numpy as np

from shockflow.figures.canvas import PALETTE, new_figure, panel_title, thin_log_ticks

__all__ = ["loss_figure"]


def _colour(chart, charts) -> str:
    return PALETTE[charts.index(chart) % len(PALETTE)] if chart in charts else "0.4"


def loss_figure(steps, loss, *, predicted=(), observed=(), charts=(), bands=(), matches=None,
                staircase=None, title: str = "", fig=None):
    """Draw the loss figure and return the Figure.

    ``predicted``: predicted steps, with ``charts`` (one label per predicted step, optional);
    ``observed``: observed midpoint steps, with ``bands`` ((onset, end) per observed step, optional);
    ``matches``: ``{"chart", "predicted_step", "observed_step", "relative_error"}`` columns (adds the
    parity panel); ``staircase``: ``(steps, levels)`` of the predicted loss, the level of each saddle of the
    chain from the step the chain reaches it (drawn as a step line).  ``fig``: draw into this Figure
    instead of a new one.
    """
    steps = np.asarray(steps, dtype=np.float64)
    loss = np.asarray(loss, dtype=np.float64)
    if steps.shape != loss.shape or steps.ndim != 1:
        raise ValueError(f"loss_figure: expected steps and loss of equal 1-D shape, found {steps.shape} and {loss.shape}")
    predicted = [float(s) for s in predicted]
    charts = [str(c) for c in charts] if len(charts) else [""] * len(predicted)
    if len(charts) != len(predicted):
        raise ValueError(f"loss_figure: {len(charts)} chart labels for {len(predicted)} predicted steps")
    order = list(dict.fromkeys(c for c in charts if c))
    parity = matches is not None and len(matches.get("predicted_step", ())) > 0
    own = fig is None
    if own:
        # fixed margins in inches (tick labels, axis labels, title) instead of a constrained-layout
        # pass at every draw, which cost about as much as drawing the figure
        width, height = (11.0 if parity else 7.5), 4.3
        fig = new_figure(width, height, layout=None)
        fig.subplots_adjust(left=0.8 / width, right=1.0 - 0.2 / width, bottom=0.6 / height,
                            top=1.0 - (0.45 if title else 0.2) / height, wspace=0.9 / (width / 2))
    axes = fig.subplots(1, 2, width_ratios=(1.9, 1.0)) if parity else [fig.subplots()]
    ax = axes[0]
    ok = (steps > 0) & (loss > 0)
    ax.loglog(steps[ok], loss[ok], lw=1.3, color="0.15", label="loss", zorder=3)
    if staircase is not None and len(staircase[0]):
        at, level = (np.asarray(v, dtype=np.float64) for v in staircase)
        end = max(float(steps.max()) if steps.size else 0.0, float(np.nanmax(at)) * 1.5)
        at = np.maximum(np.append(at, end), steps[ok].min() if ok.any() else 1.0)
        ax.step(at, np.append(level, level[-1]), where="post", color="#c0392b", lw=1.6, alpha=0.85, zorder=4,
                label="predicted loss (saddle chain)")
    # observed drops: which chart each belongs to, through the matches
    obs_chart = {}
    if matches is not None:
        for c, o in zip(matches.get("chart", [""] * len(matches.get("observed_step", ()))), matches.get("observed_step", ())):
            obs_chart[float(o)] = str(c)
    from matplotlib.ticker import NullFormatter
    from matplotlib.transforms import blended_transform_factory

    label_at = blended_transform_factory(ax.transData, ax.transAxes)   # x: the step, y: the top of the axes
    for k, s in enumerate(observed):
        colour = _colour(obs_chart.get(float(s)), order)
        if k < len(bands):
            lo, hi = bands[k]
            ax.axvspan(max(float(lo), 1.0), max(float(hi), 1.0), color=colour, alpha=0.13, lw=0,
                       label="observed onset–end" if k == 0 else None)
        # wide and translucent: a predicted (dashed) line on top of it stays visible when they coincide
        ax.axvline(float(s), color=colour, ls="-", lw=3.2, alpha=0.45, label="observed" if k == 0 else None)
    for k, (s, c) in enumerate(zip(predicted, charts)):
        if s <= 0 or not np.isfinite(s):
            continue
        colour = _colour(c, order)
        ax.axvline(s, color=colour, ls=(0, (4, 2)), lw=1.3, label="predicted" if k == 0 else None)
        if c:
            ax.text(s, 0.97, c, transform=label_at, color=colour, rotation=90, va="top", ha="right", fontsize=8,
                    bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8})
    thin_log_ticks(ax)
    ax.set_xlabel("training step (log)")
    ax.set_ylabel("loss")
    ax.legend(fontsize=8, loc="lower left")
    if parity:
        px = axes[1]
        p = np.asarray(matches["predicted_step"], dtype=float)
        o = np.asarray(matches["observed_step"], dtype=float)
        e = np.asarray(matches["relative_error"], dtype=float)
        mc = [str(c) for c in matches.get("chart", [""] * p.size)]
        lo, hi = min(p.min(), o.min()) / 3.3, max(p.max(), o.max()) * 3.3     # at least a decade: a labelled tick
        px.loglog([lo, hi], [lo, hi], color="0.5", lw=0.8, label="predicted = observed")
        px.fill_between([lo, hi], [lo / 1.1, hi / 1.1], [lo * 1.1, hi * 1.1], color="0.85", lw=0, label="±10 %")
        for pi, oi, ci in zip(p, o, mc):
            colour = _colour(ci, order)
            signed = 100 * (pi - oi) / oi
            px.plot(oi, pi, "o", color=colour, ms=7, mec="k", mew=0.5)
            px.annotate(f"{ci} {signed:+.1f} %" if ci else f"{signed:+.1f} %", (oi, pi), textcoords="offset points",
                        xytext=(6, -10), fontsize=8, color=colour)
        px.set_xlim(lo, hi)
        px.set_ylim(lo, hi)
        px.set_aspect("equal")
        for axis in (px.xaxis, px.yaxis):       # minor labels of a short log range overprint each other
            axis.set_minor_formatter(NullFormatter())
        thin_log_ticks(px)
        px.set_xlabel("observed step")
        px.set_ylabel("predicted step")
        panel_title(px, f"median |error| {100 * float(np.median(np.abs(e))):.1f} %")
        px.legend(fontsize=7, loc="upper left")
    if title:
        fig.suptitle(title, fontsize=10)
    return fig
