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

_EXPORTS = {
    "shockflow.cases.sweep_axes": ("Axis", "SweepAxes", "SweepSpecError", "build_axes", "parse_values"),
    "shockflow.sweeps.engine": ("SweepSummary", "TaskReport", "local_cluster", "run_sweep"),
    "shockflow.sweeps.grid": ("grid_map",),
    "shockflow.sweeps.index": ("read_index",),
    "shockflow.sweeps.sweep": ("Sweep", "case_sweep", "function_sweep"),
    "shockflow.sweeps.tasks": ("Task", "task_hash", "task_seed"),
}
_LAZY = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted(_LAZY)


def __getattr__(name):
    """Imported on first use, so that ``shockflow sweep --help`` (and the command line's start-up,
    which builds the sweep parser) does not import numpy."""
    try:
        module = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'shockflow.sweeps' has no attribute {name!r}") from None
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
