"""The quotient trajectory of a run on the charts of a prediction made without it (issue 20).

The prediction (:func:`shockflow.prediction.predict.predict_case` without snapshots) is made from the
initial parameters, the data and the optimiser settings alone, so that ``shockflow forecast`` (no
training) and ``shockflow run`` give the same numbers.  After training, :func:`with_trajectory` adds
each chart's coordinates of the logged parameter snapshots (``ChartData.trajectory``) and the
geometry's mode strength along them (``trajectory_strength``, :func:`shockflow.prediction.truth.strength_of`:
the strength in the network's function where the geometry reads it there): what the parameter truth
(:mod:`shockflow.prediction.truth`) and the landscape figure read.  The chart's box, initial data and
shock are not touched.  A periodic chart's coordinates are unwrapped continuously from ``x0``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping

import numpy as np

__all__ = ["with_trajectory", "chart_key_of"]


def chart_key_of(extraction, model, X, y, chart_key: str) -> str:
    """The geometry keyword that selects a chart: the geometry's own when it found its charts itself
    (the automatic charts' ``mode``), else ``chart_key`` (``[extraction] chart_key``)."""
    from shockflow.geometry import geometry_class

    found = geometry_class(extraction.geometry).discover_charts(model, X, y, dict(extraction.geometry_kwargs))
    return found[2] if found is not None else chart_key


def with_trajectory(stage, model, snapshots: Mapping | None, *, chart_key: str, X, y):
    """``stage`` with every chart's quotient trajectory from ``snapshots`` (``{"step": (k,), name: (k, …)}``).

    ``model``: the network at its initial parameters (the geometry is bound to it, as the extraction's
    first pass is).  No snapshots: ``stage`` unchanged."""
    from shockflow import geometry
    from shockflow.prediction.extraction import chart_geometry
    from shockflow.prediction.truth import strength_of

    if not snapshots or "step" not in snapshots:
        return stage
    ex = stage.extraction
    key = chart_key_of(ex, model, X, y, chart_key)
    steps = np.asarray(snapshots["step"], dtype=np.int64)
    names = list(model.params)
    geos = []
    for c in ex.charts:
        name, kwargs = chart_geometry(ex, c, key)
        geos.append(geometry.build(name, model=model, **kwargs))
    shared = _shared_strengths(geos, snapshots, names, steps.size, X)
    charts = []
    for c, geo in zip(ex.charts, geos):
        traj = np.array([geo.coordinates({k: snapshots[k][i] for k in names})[0] for i in range(steps.size)],
                        dtype=np.float64)
        if geo.chart.periodic[0] and traj.size:
            period = geo.chart.upper[0] - geo.chart.lower[0]
            previous = np.concatenate([[c.x0], traj[:-1]])
            jumps = np.round((traj - previous) / period)
            traj = traj - period * np.cumsum(jumps)
        if id(geo) in shared:                                      # every mode of its set at once
            strength = shared[id(geo)]
        elif getattr(geo, "function_strength", None) is not None:  # read from the network's function
            strength = np.array([strength_of(geo, {k: snapshots[k][i] for k in names}, X)
                                 for i in range(steps.size)], dtype=np.float64)
        else:                                                     # of the (unwrapped) coordinates
            strength = np.asarray(geo.strength(traj.reshape(-1, 1)), dtype=np.float64)[:, 0]
        charts.append(replace(c, trajectory_steps=steps, trajectory=traj, trajectory_strength=strength))
    return replace(stage, extraction=replace(ex, charts=tuple(charts)))


def _shared_strengths(geos, snapshots, names, count: int, X) -> dict:
    """``{id(geo): strengths (count,)}`` for the charts whose geometry reads every mode of its set at once
    (``function_strengths``, ``same_modes``: the automatic charts), one pass over the snapshots per set of modes
    instead of one per chart; the others are left to :func:`~shockflow.prediction.truth.strength_of`."""
    groups = []
    for geo in geos:
        if getattr(geo, "function_strengths", None) is None:
            continue
        for group in groups:
            if group[0].same_modes(geo):
                group.append(geo)
                break
        else:
            groups.append([geo])
    out = {}
    for group in groups:
        if len(group) < 2:
            continue
        head = group[0]
        table = np.array([head.function_strengths({k: snapshots[k][i] for k in names}, X) for i in range(count)],
                         dtype=np.float64).reshape(count, -1)
        for geo in group:
            out[id(geo)] = table[:, int(geo.mode)]
    return out
