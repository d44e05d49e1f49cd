"""The solution of a result file with its shocks, and the formation-time fit.

PDE results.  Left: on an interval, the gradient field p (the solution for Burgers, ∂u/∂x for HJ)
over (x, t), in a diverging map centred on zero (sequential when p keeps one sign), with every
shock track and the formation points; on a box, the final snapshot with the first shock's place;
on a surface, u against the polar angle θ at several times (a shock's kink is a corner).  Right:
1/steepness against t with the straight line fitted to its early points and extrapolated to zero:
that zero is the reported t* (docs/theory.md §1), so the extrapolation behind the number is drawn.

Network results (``shockflow run``).  One facet per chart, in the chart's own coordinate and γ:
p = ∂u/∂x of the chart's HJ solution, the measured γ* (dashed) and the γ* of the initial data
from the characteristics, −1/min u0'' (dotted), and the shock's place.
"""

from __future__ import annotations

import math

import numpy as np

from shockflow.figures.canvas import PALETTE, facet_figure, field_colours, new_figure, panel_title

__all__ = ["solution_figure", "steepness_panel"]


def _interval_panel(ax, result) -> None:
    x = result.coordinates["x"]
    t = result.times
    values = result.values
    label = "p"
    if result.problem.get("quantity") == "u":
        values = np.gradient(values, x, axis=1)
        label = "p = ∂u/∂x"
    cmap, norm = field_colours(values)
    mesh = ax.pcolormesh(x, t, values, shading="auto", cmap=cmap, norm=norm, rasterized=True)
    ax.figure.colorbar(mesh, ax=ax, label=label)
    tracks = result.tracks
    if tracks.get("track") is not None and np.asarray(tracks["track"]).size:
        lo, hi = float(x[0]), float(x[-1])
        for k in np.unique(tracks["track"]):
            sel = tracks["track"] == k
            pos = tracks["position"][sel]
            breaks = np.flatnonzero(np.abs(np.diff(pos)) > 0.5 * (hi - lo)) + 1   # a periodic track wraps
            for seg_t, seg_x in zip(np.split(tracks["time"][sel], breaks), np.split(pos, breaks)):
                ax.plot(seg_x, seg_t, color="k", lw=1.2)
    if result.shock_count:
        ax.plot(result.shocks["location"][:, 0], result.shocks["time"], "o", mfc="none", mec="k", ms=7,
                label="shock formed")
        ax.legend(loc="upper right", fontsize=8)
    ax.set_xlabel("x")
    ax.set_ylabel("t")


def _box_panel(ax, result) -> None:
    x, y = result.coordinates["axis0"], result.coordinates["axis1"]
    final = result.values[-1]
    if final.ndim == 3:
        final = final[:, :, final.shape[2] // 2]
    cmap, norm = field_colours(final)
    mesh = ax.pcolormesh(x, y, final.T, shading="auto", cmap=cmap, norm=norm, rasterized=True)
    ax.figure.colorbar(mesh, ax=ax, label=f"u at t = {result.times[-1]:g}")
    if result.shock_count:
        loc = result.shocks["location"][0]
        ax.plot(loc[0], loc[1], "*", color=PALETTE[3], mec="k", ms=13, label="first shock")
        ax.legend(fontsize=8)
    ax.set_xlabel("axis0")
    ax.set_ylabel("axis1")
    ax.set_aspect("equal")


def _surface_panel(ax, result) -> None:
    v = result.coordinates["vertices"]
    theta = np.arccos(np.clip(v[:, 2] / np.linalg.norm(v, axis=1), -1.0, 1.0))
    order = np.argsort(theta)
    picks = np.unique(np.linspace(0, result.times.size - 1, 5).round().astype(int))
    for i, k in enumerate(picks):
        ax.plot(theta[order], result.values[k][order], ".", ms=2, color=PALETTE[i % len(PALETTE)],
                label=f"t = {result.times[k]:.3g}")
    if result.shock_count:
        loc = np.asarray(result.shocks["location"][0], dtype=float)
        th = float(np.arccos(np.clip(loc[2] / np.linalg.norm(loc), -1, 1)))
        ax.axvline(th, color="k", lw=0.8, ls=":", label=f"shock θ = {th:.3g}")
    ax.set_xlabel("polar angle θ")
    ax.set_ylabel("u (every vertex)")
    ax.legend(fontsize=8, markerscale=4)


def steepness_panel(ax, times, steepness, formation_time, fit_points: int, *, time_label: str = "t",
                    from_data: float | None = None) -> None:
    """1/steepness against time, the straight line through its first ``fit_points`` resolved points
    and its zero, the formation time; ``from_data``: the formation time the characteristics give
    from the initial data alone (exact for ν = 0), drawn dotted."""
    t, s = np.asarray(times, dtype=float), np.asarray(steepness, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = np.where(s > 0, 1.0 / s, np.nan)
    ax.plot(t, inv, "o", ms=3, color=PALETTE[0], label="1 / steepness (snapshots)")
    tf = formation_time
    finite = isinstance(tf, (int, float)) and math.isfinite(tf)
    use = np.flatnonzero(np.isfinite(inv))[:max(int(fit_points), 0)]
    if finite and use.size >= 2:
        slope, intercept = np.polyfit(t[use], inv[use], 1)
        ax.plot(t[use], inv[use], "o", ms=5, mfc="none", mec=PALETTE[3], label=f"fitted points ({use.size})")
        if slope < 0:
            zero = -intercept / slope
            tt = np.linspace(t[use[0]], max(zero, t[use[-1]]), 50)
            ax.plot(tt, slope * tt + intercept, "-", color=PALETTE[3], lw=1.2, label="linear fit, extrapolated")
    if isinstance(from_data, (int, float)) and math.isfinite(from_data):
        ax.axvline(from_data, color="k", ls=":", lw=1, label=f"{time_label}* from the initial data = {from_data:.4g}")
    if finite:
        ax.axvline(tf, color=PALETTE[3], ls="--", lw=1, label=f"{time_label}* = {tf:.4g} (fit)")
        ax.plot([tf], [0.0], "x", color=PALETTE[3], ms=8, mew=2)
    ax.set_ylim(bottom=0)
    ax.set_xlabel(time_label)
    ax.set_ylabel("1 / max steepness")
    ax.legend(fontsize=8)


def _chart_facets(fig, result, axes=None, bars=None) -> None:
    labels = result.charts
    if axes is None:
        cols = min(len(labels), 4)
        rows = (len(labels) + cols - 1) // cols
        axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).reshape(-1)
    for k, (ax, label) in enumerate(zip(axes, labels)):
        c = result.extraction["charts"][label]
        a = c["attrs"]
        x, g, u = np.asarray(c["x"]), np.asarray(c["times"]), np.asarray(c["values"])
        p = np.gradient(u, x, axis=1)
        if a.get("mirrored"):
            keep = x >= 0
            x, p = x[keep], p[:, keep]
        cmap, norm = field_colours(p)
        mesh = ax.pcolormesh(x, g, p, shading="auto", cmap=cmap, norm=norm, rasterized=True)
        fig.colorbar(mesh, **({"cax": bars[k]} if bars else {"ax": ax}), label="p = ∂u/∂" + str(a.get("coordinate", "x")))
        gs, g0 = a.get("gamma_star"), a.get("gamma_star_initial_data")
        if isinstance(gs, float) and math.isfinite(gs):
            ax.axhline(gs, color="k", ls="--", lw=1.2, label=f"γ* = {gs:.4g} (measured)")
        if isinstance(g0, float) and math.isfinite(g0):
            ax.axhline(g0, color="k", ls=":", lw=1.2, label=f"γ* = {g0:.4g} (initial data)")
        loc = a.get("shock_location")
        if isinstance(loc, float) and math.isfinite(loc) and isinstance(gs, float) and math.isfinite(gs):
            ax.plot([abs(loc) if a.get("mirrored") else loc], [gs], "o", mfc="none", mec="k", ms=8)
        ax.set_xlabel(str(a.get("coordinate", label)))
        ax.set_ylabel("γ")
        panel_title(ax, f"chart {label}")
        if ax.get_legend_handles_labels()[0]:   # a chart without a measured γ* (it abstains) has no lines to name
            ax.legend(fontsize=7, loc="upper right")
    for ax in axes[len(labels):]:
        ax.set_visible(False)


def solution_figure(result, *, fig=None):
    """Draw the figure of a result (:class:`shockflow.storage.Result`) and return the Figure."""
    p = result.problem
    if result.charts:
        if fig is None:
            fig, axes, bars = facet_figure(len(result.charts), panel=(2.5, 2.3), colorbar="each", title=True)
            _chart_facets(fig, result, axes, bars)
        else:
            _chart_facets(fig, result)
        fig.suptitle(f"{result.case_name}: the HJ equation of each chart (geometry {p.get('geometry')})", fontsize=10)
        return fig
    if fig is None:
        fig = new_figure(11.0, 4.3)
    left, right = fig.subplots(1, 2, width_ratios=(1.4, 1.0))
    if "x" in result.coordinates:
        _interval_panel(left, result)
    elif "vertices" in result.coordinates:
        _surface_panel(left, result)
    else:
        _box_panel(left, result)
    if result.steepness is None:
        right.set_visible(False)
    else:
        info = result.shock_info
        steepness_panel(right, *result.steepness, info.get("formation_time"), int(info.get("fit_points", 0) or 0),
                        from_data=info.get("formation_time_from_data"))
    fig.suptitle(f"{result.case_name}: {p.get('equation')} on {p.get('domain')}, ν = {p.get('nu'):g}, "
                 f"{result.shock_count} shock(s)", fontsize=10)
    return fig
