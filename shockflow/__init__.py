"""shockflow: shock waves on symmetry quotients, and the training runs they predict.

The Python API (``docs/api.md``), imported on first use so that ``import shockflow`` stays cheap:

- :func:`load_case` — a built-in case name or a TOML path → a validated :class:`~shockflow.cases.Case`;
- :func:`run` — ``shockflow run``: train, predict the transitions from the shocks, compare;
- :func:`solve` — ``shockflow solve``: a PDE case, its solution and shocks;
- :func:`train` — ``shockflow train``: a network case's training log;
- :func:`forecast` — ``shockflow forecast``: the transitions of a network case before training it;
- :func:`monitor` — ``shockflow monitor`` (one read): a log being written against a forecast;
- :func:`compare` — ``shockflow compare``: a finished log's transitions against a forecast or run's predictions;
- :func:`read_result` — a result file (HDF5) back as a :class:`~shockflow.storage.Result`.
"""

__version__ = "0.1.0"

_LAZY = {
    "load_case": ("shockflow.cases", "load_case"),
    "run": ("shockflow.runners.api", "run"),
    "solve": ("shockflow.runners.api", "solve"),
    "train": ("shockflow.runners.api", "train"),
    "forecast": ("shockflow.runners.api", "forecast"),
    "monitor": ("shockflow.runners.api", "monitor"),
    "compare": ("shockflow.runners.api", "compare"),
    "read_result": ("shockflow.storage", "read_result"),
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name):
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'shockflow' has no attribute {name!r}") from None
    import importlib

    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
