"""Parameter sweeps of cases and pure functions, serially or on Dask (docs/sweeps.md).

    from shockflow.sweeps import case_sweep, function_sweep, run_sweep, read_index

    sweep = case_sweep("burgers-sine", ["initial.amplitude=linspace:0.5:2:4", "domain.cells=200"])
    summary = run_sweep(sweep, "out/amplitudes")          # a LocalCluster, one worker per core
    table = read_index(summary.index_path)                 # {column: array}

Modules: the axis syntax, zip/product and the ``[sweep]`` table are the case files' (:mod:`shockflow.cases.sweep_axes`);
:mod:`~shockflow.sweeps.tasks` (task hash, key and seed), :mod:`~shockflow.sweeps.sweep` (case
and function sweeps), :mod:`~shockflow.sweeps.records` (task result files and failure records),
:mod:`~shockflow.sweeps.engine` (serial / LocalCluster / existing scheduler, resume, failures,
progress), :mod:`~shockflow.sweeps.index` (the merged HDF5 table), :mod:`~shockflow.sweeps.grid`
(a per-point function over a grid, arrays back),
:mod:`~shockflow.sweeps.command` (``shockflow sweep``).  Dask is imported only when a sweep
runs on it.
"""

from shockflow.cases.sweep_axes import Axis, SweepAxes, SweepSpecError, build_axes, parse_values
from shockflow.sweeps.engine import SweepSummary, TaskReport, local_cluster, run_sweep
from shockflow.sweeps.grid import grid_map
from shockflow.sweeps.index import read_index
from shockflow.sweeps.sweep import Sweep, case_sweep, function_sweep
from shockflow.sweeps.tasks import Task, task_hash, task_seed

__all__ = ["Axis", "Sweep", "SweepAxes", "SweepSpecError", "SweepSummary", "Task", "TaskReport", "build_axes",
           "case_sweep", "function_sweep", "grid_map", "local_cluster", "parse_values", "read_index", "run_sweep", "task_hash",
           "task_seed"]
