"""The learning rate from which the discrete escape overshoots out of its basin (docs/theory.md §6, "Control").

The linear bound at a minimum of curvature ``κ`` — ``ηκ < 2`` (gd), ``2(1 + μ)`` (heavy ball),
``2(1 + μ)/(1 + 2μ)`` (Nesterov) — is necessary, not sufficient.  An escape arrives at the minimum
with the speed it gathered on the way down (heavy ball carries it over ``1/(1 − μ)`` steps) and
overshoots past it, to where the loss is steeper: on a mode's chart ``L̄(r) = ½(s − r²/2)²`` the
curvature is ``3r²/2 − s``, twice its value at the minimum already at ``r = 1.29 r_min``.  The
critical rate is set by the largest curvature the discrete path meets, which only the path itself
tells (measured: ``linear2-momentum``, heavy ball μ = 0.9: the linear bound at the top mode's minimum
is 0.364, the overshoot reaches 1.4–1.8 ``r_min`` and training diverges from 0.148).

:func:`overshoot_rate` runs the update rule itself (:func:`solvers.charts.descent.descent_paths`, compiled) — gd/sgd, heavy ball, Nesterov, with the case's
learning-rate schedule, over the planned steps — on each chart's landscape ``L̄`` in the chart
coordinate (``x ← x − η a ∂_x L̄``, the rule's velocity in between), for a geometric ladder of rates
(ratio 1.01) below the linear bound, all at once.  ``L̄`` is evaluated by the chart's geometry on a box
``OVERSHOOT_BOX`` times wider than the chart's (the escape overshoots beyond the chart box, which
only reaches 1 + margin past the minimum).  A rate is unstable when its iterate leaves that box.  The
smallest unstable rate of any chart is the flag; the ladder's spacing is its resolution (1 %).  The ladder is
run in increasing order up to the first rate that leaves (:func:`solvers.charts.descent.first_departure`), on
each later chart only below the flag found so far, and a path stops early on an exact cycle (a fixed point included)
of a constant schedule, or once it is inside a set around a minimum that the iteration provably never leaves
(trapping sets, :mod:`solvers.charts.descent`): the flag is that of the whole ladder on every chart, at a fraction
of its cost (measured: 30-90x fewer kernel seconds on the default case, ``linear2-momentum`` and
``mlp-tanh-teacher``, the same flag).

What it leaves out: gradient noise (sgd is run as gd), the other modes (each chart's landscape is the
one at the initial parameters, not at the saddle of the chain it escapes from), rates below
``1/LADDER_SPAN`` of the linear bound, and directions off the chart (a path that stays in its basin
along the chart while the curvature across it exceeds the bound is not seen; the linear bound at the
chart minima, which the flag never exceeds, covers the sharpest of them in the cases measured: the
Hessian's largest eigenvalue at the trained minimum was within 1.5 % of the sharpest chart's κ on
the default case, ``linear2-momentum``, ``deep-linear-3`` and ``saxe-linear``).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["OVERSHOOT_BOX", "overshoot_rate"]

#: the landscape the discrete escape is followed on: this many times the chart box's reach from x0
OVERSHOOT_BOX = 4.0
#: the force table is this many times finer than the landscape's samples
TABLE = 16
#: the ladder of rates: from the linear bound down by this factor, in steps of 1 %
LADDER_SPAN, LADDER_RATIO = 100.0, 1.01


def _landscape(extraction, chart, model, X, y, cells: int):
    """``(nodes, table, lo, hi)``: ``a ∂_x L̄`` tabulated on uniform nodes of the widened box ``[lo, hi]``
    (cubic splines through ``cells`` values of ``L̄`` and ``a``; mirrored charts: ``x ≥ 0``, ``L̄`` even)."""
    from scipy.interpolate import CubicSpline

    from shockflow.geometry.chart_interpolant import MAX_DEGREE, chart_loss_at, interpolable, interpolated_reader
    from shockflow.prediction.extraction import bind_geometry, chart_geometry

    name, kw = chart_geometry(extraction, chart)
    geo = bind_geometry(name, model, kw, X, y)
    x0 = abs(chart.x0) if chart.mirrored else chart.x0
    if chart.mirrored:
        want_lo, want_hi = 0.0, OVERSHOOT_BOX * max(abs(chart.lower), abs(chart.upper))
    else:
        reach = max(chart.upper - x0, x0 - chart.lower)
        want_lo, want_hi = x0 - OVERSHOOT_BOX * reach, x0 + OVERSHOOT_BOX * reach
    for _ in range(8):   # widen a geometry with an `extent` until its box holds the wanted one
        lo, hi = geo.chart.lower[0], geo.chart.upper[0]
        if (lo <= want_lo and hi >= want_hi) or not hasattr(geo, "extent"):
            break
        kw["extent"] = 4.0 * float(geo.extent)
        geo = bind_geometry(name, model, kw, X, y)
    lo, hi = max(want_lo, geo.chart.lower[0]), min(want_hi, geo.chart.upper[0])
    xs = np.linspace(lo, hi, cells)
    # L̄ on [lo, hi] from an interpolant of that range (of the stated accuracy: chart_interpolant), not of the
    # widened geometry's whole box, up to 4x longer (its fit cost twice the points)
    read = (interpolated_reader(lambda p: geo.chart_loss(p, X, y), lo, hi, start=16, max_degree=MAX_DEGREE)
            if interpolable(geo) else None)
    L = read(xs) if read is not None else chart_loss_at(geo, xs[:, None], X, y)
    # the force from cubic splines (a difference quotient of the samples is not accurate enough: the first
    # unstable rate moved by 7 % between 1600 and 16000 samples), tabulated TABLE times finer for the loop
    fine = np.linspace(lo, hi, TABLE * cells)
    table = CubicSpline(xs, geo.mobility(xs[:, None])[:, 0, 0])(fine) * CubicSpline(xs, L).derivative()(fine)
    return fine, table, lo, hi


def overshoot_rate(extraction, model, X, y, settings, ceiling: float) -> tuple[float, str]:
    """``(rate, chart)``: the smallest rate below ``ceiling`` (the linear bound) at which the discrete
    escape of some chart leaves its basin (module docstring); ``(inf, "")`` if none does."""
    from dataclasses import replace

    from shockflow.training.schedules import learning_rate
    from solvers.charts.descent import first_departure

    if not (math.isfinite(ceiling) and ceiling > 0):
        return math.inf, ""
    n = int(math.ceil(math.log(LADDER_SPAN) / math.log(LADDER_RATIO)))
    rates = ceiling * LADDER_RATIO ** -np.arange(n, 0, -1, dtype=np.float64)
    s = replace(settings, lr=1.0, lr_min=settings.lr_min / settings.lr)   # the schedule's shape, η = 1
    profile = np.array([learning_rate(s, i) for i in range(s.steps)])
    best, where = rates.size, ""
    for chart in extraction.charts:
        if best == 0:
            break
        nodes, table, lo, hi = _landscape(extraction, chart, model, X, y, cells=2 * chart.x.size)
        x0 = abs(chart.x0) if chart.mirrored else chart.x0
        # only the rates below the smallest unstable one found so far can lower the flag, in order, up to the first
        # that leaves: the same flag as every rate on every chart (a later chart at the same rate does not replace)
        first = first_departure(nodes, table, x0, rates, profile, settings.optimizer, settings.momentum, lo, hi,
                                chart.mirrored, stop=best)
        if first < best:
            best, where = first, chart.label
    return (float(rates[best]), where) if best < rates.size else (math.inf, "")
