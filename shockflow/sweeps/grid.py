"""A pure per-point function mapped over a product grid, results back as arrays of the grid's shape.

This is the replacement for the plain double loops of the theory modules (phase diagrams,
scaling grids, learning-rate scans)::

    from shockflow.sweeps import grid_map
    res = grid_map(phase_point, {"sigma_w": sigmas, "eps": epsilons}, fixed={"N": 200, "M": 400},
                   seed=0, scheduler=None)            # None: a LocalCluster, one worker per core
    res["q2"].shape == (len(sigmas), len(epsilons))

``res`` holds one array per key figure (NaN / False / "" where a point failed), the axis values
under their keys as 1-D arrays, ``"status"`` and ``"seed"`` arrays of the grid's shape, and
``"summary"``: the :class:`~shockflow.sweeps.engine.SweepSummary` (its ``failed`` lists the
points that raised, with their tracebacks in failure records).  Each point's seed derives from
``seed`` and the point's values (:func:`~shockflow.sweeps.tasks.task_seed`); a ``seed`` axis
gives seeds explicitly (for bootstraps over seeds).

``out``: the sweep directory (resumable; default a temporary directory removed afterwards);
``scheduler``/``workers``/``client`` as in :func:`~shockflow.sweeps.engine.run_sweep`, with
``"serial"`` as the default so that a library call never starts processes unasked.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np

from shockflow.sweeps.engine import run_sweep
from shockflow.sweeps.index import read_index
from shockflow.sweeps.sweep import function_sweep

__all__ = ["grid_map"]


def grid_map(function: Callable[[dict], Mapping[str, Any]], axes: Mapping[str, Any], *,
             fixed: Mapping[str, Any] | None = None, seed: int = 0, out=None, scheduler: str | None = "serial",
             workers: int | None = None, client=None, name: str | None = None, progress: bool = False) -> dict:
    """Run ``function`` at every point of the product of ``axes`` (first key slowest); see the module docstring."""
    if not isinstance(axes, Mapping) or not axes:
        raise ValueError(f"grid_map: axes must be a non-empty dict of key -> values, found {axes!r}")
    values = {str(k): list(np.asarray(v).tolist()) if isinstance(v, np.ndarray) else list(v) for k, v in axes.items()}
    for key, vals in values.items():
        if not vals:
            raise ValueError(f"grid_map: axis {key!r} has no values")
    shape = tuple(len(v) for v in values.values())
    sweep = function_sweep(function, values, fixed=fixed, seed=seed, name=name)
    from shockflow.storage.atomic import scratch_directory

    with scratch_directory(prefix="shockflow-grid-") as scratch:
        directory = out if out is not None else scratch
        summary = run_sweep(sweep, directory, scheduler=scheduler, workers=workers, client=client, progress=progress)
        table = read_index(summary.index_path)
    result: dict[str, Any] = {key: np.asarray(vals) for key, vals in values.items()}
    skip = set(values) | {f"param_{k}" for k in values} | {"index", "key", "error", "seconds"}
    for column, a in table.items():
        if column not in skip:
            result[column] = a.reshape(shape)
    result["summary"] = summary
    return result
