"""The solution of a PDE case over (time, space) with its shocks, and the formation-time fit.

Left panel: on an interval, the gradient field p (the solution for Burgers, ∂u/∂x for HJ) as a
colour map over (x, t) with every shock track drawn and the formation points marked; on a box,
the final snapshot with the first shock's place marked; on a surface, u against the polar angle
θ at several times (the kink of a shock shows as a corner).  Right panel: the steepness series
1/max|p_x| (or −1/λ_min) against t, whose linear fall to zero gives the formation time (docs/theory.md §1).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from shockflow.figures.canvas import new_figure, save_png

__all__ = ["solution_figure"]


def _interval_panel(ax, result) -> None:
    x = result.coordinates["x"]
    t = result.times
    values = result.values
    label = "p"
    if result.problem.get("quantity") == "u":
        values = np.gradient(values, x, axis=1)
        label = "p = ∂u/∂x"
    mesh = ax.pcolormesh(x, t, values, shading="auto", cmap="RdBu_r")
    ax.figure.colorbar(mesh, ax=ax, label=label)
    tracks = result.tracks
    if tracks.get("track") is not None and tracks["track"].size:
        lo, hi = float(x[0]), float(x[-1])
        for k in np.unique(tracks["track"]):
            sel = tracks["track"] == k
            pos = tracks["position"][sel]
            # break the line where a periodic track wraps
            breaks = np.flatnonzero(np.abs(np.diff(pos)) > 0.5 * (hi - lo)) + 1
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
    mesh = ax.pcolormesh(x, y, final.T, shading="auto", cmap="viridis")
    ax.figure.colorbar(mesh, ax=ax, label=f"u at t = {result.times[-1]:g}")
    if result.shock_count:
        loc = result.shocks["location"][0]
        ax.plot(loc[0], loc[1], "r*", ms=12, label="first shock")
        ax.legend(fontsize=8)
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_aspect("equal")


def _surface_panel(ax, result) -> None:
    v = result.coordinates["vertices"]
    theta = np.arccos(np.clip(v[:, 2] / np.linalg.norm(v, axis=1), -1.0, 1.0))
    order = np.argsort(theta)
    picks = np.unique(np.linspace(0, result.times.size - 1, 5).round().astype(int))
    for k in picks:
        ax.plot(theta[order], result.values[k][order], ".", ms=2, label=f"t = {result.times[k]:.3g}")
    ax.set_xlabel("polar angle θ")
    ax.set_ylabel("u (every vertex)")
    ax.legend(fontsize=8, markerscale=4)


def _steepness_panel(ax, result) -> None:
    if result.steepness is None:
        ax.set_visible(False)
        return
    t, s = result.steepness
    with np.errstate(divide="ignore"):
        inv = np.where(s > 0, 1.0 / s, np.nan)
    ax.plot(t, inv, ".-", ms=3, label="1 / steepness")
    tf = result.shock_info.get("formation_time")
    if isinstance(tf, float) and math.isfinite(tf):
        ax.axvline(tf, color="r", ls="--", lw=1, label=f"t* = {tf:.4g}")
    ax.set_ylim(bottom=0)
    ax.set_xlabel("t")
    ax.set_ylabel("1 / max steepness")
    ax.legend(fontsize=8)


def solution_figure(result, path) -> Path:
    """Draw the figure of a PDE result (:class:`shockflow.storage.Result`) into ``path`` (PNG)."""
    fig = new_figure(10.0, 4.0)
    left, right = fig.subplots(1, 2, width_ratios=(1.4, 1.0))
    if "x" in result.coordinates:
        _interval_panel(left, result)
    elif "vertices" in result.coordinates:
        _surface_panel(left, result)
    else:
        _box_panel(left, result)
    _steepness_panel(right, result)
    p = result.problem
    fig.suptitle(f"{result.case_name}: {p.get('equation')} on {p.get('domain')}, ν = {p.get('nu'):g}, "
                 f"{result.shock_count} shock(s)", fontsize=10)
    return save_png(fig, path)
