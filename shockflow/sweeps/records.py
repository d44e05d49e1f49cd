"""What a sweep task leaves on disk: its result file (with a ``/sweep`` group) or a failure record.

Result file ``tasks/<key>.h5``.  For a case task it is the case runner's own result file
(:mod:`shockflow.storage`; ``shockflow show`` reads it) with one group added; for a function
task it is a small HDF5 file with ``format = "shockflow-sweep-task"`` and the non-scalar outputs
under ``/values``.  Either way::

    /sweep   attrs: task_hash, task_key, index, seed, params (JSON, swept), fixed (JSON),
                    overrides (JSON list of KEY=VALUE), figures (JSON: the key figures),
                    summary (JSON: the runner's as_dict()), seconds, version, host, pid, finished

The file appears only when complete: the group is added while the file is still in the task's
scratch directory beside the final path, then the file is renamed onto it (``os.replace``,
atomic on one file system).  A task is *complete* when the file exists, opens, and its
``/sweep`` attribute ``task_hash`` equals the task's hash.

Failure record ``tasks/<key>.failed.json`` (written atomically, removed when the task later
succeeds): ``{"key", "index", "params", "fixed", "seed", "hash", "error", "type", "traceback",
"seconds", "host", "pid", "finished"}``.
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import h5py
import numpy as np

from shockflow.storage import atomic_open, atomic_path, commit_file
from shockflow.storage.hdf5 import open_hdf5

__all__ = ["TaskOutput", "TaskRecord", "TASK_FORMAT", "write_task_file", "read_task_record", "task_is_complete",
           "write_failure", "read_failure", "scalar_figures", "read_task_values"]

TASK_FORMAT = "shockflow-sweep-task"
GROUP = "sweep"


@dataclass(frozen=True, eq=False)
class TaskOutput:
    """What a task's runner hands back: key figures (numbers, booleans or short strings), the
    HDF5 result file it wrote in its scratch directory (or None), arrays to store (function
    tasks) and the runner's JSON summary."""

    figures: dict
    result_file: Path | None = None
    arrays: dict = field(default_factory=dict)
    summary: dict = field(default_factory=dict)


@dataclass(frozen=True)
class TaskRecord:
    """The ``/sweep`` attributes of a finished task's file."""

    path: Path
    hash: str
    key: str
    index: int
    seed: int
    params: dict
    figures: dict
    seconds: float


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def scalar_figures(summary: dict, *, depth: int = 3) -> dict:
    """Key figures from a runner's ``as_dict()``: its numbers and booleans (None -> NaN), and ``<name>_count`` for
    each list, at the top level and in the tables nested in it down to ``depth`` levels, named by their path
    (``result.max_abs_relative_error``: a theory case's figures sit in its ``result`` table; before, a theory sweep's
    index held ``figures_count`` alone)."""
    out = {}

    def walk(table: dict, prefix: str, level: int) -> None:
        for k, v in table.items():
            name = f"{prefix}{k}"
            if isinstance(v, (bool, np.bool_)):
                out[name] = bool(v)
            elif isinstance(v, (int, float, np.integer, np.floating)):
                out[name] = v.item() if isinstance(v, np.generic) else v
            elif v is None:
                out[name] = float("nan")
            elif isinstance(v, (list, tuple)):
                out[f"{name}_count"] = len(v)
            elif isinstance(v, dict) and level < depth:
                walk(v, f"{name}.", level + 1)

    walk(summary, "", 1)
    return out


def _stamp(f: h5py.File, task, output: TaskOutput, seconds: float, version: str) -> None:
    g = f.require_group(GROUP)
    g.attrs["task_hash"] = task.hash
    g.attrs["task_key"] = task.key
    g.attrs["index"] = int(task.index)
    g.attrs["seed"] = int(task.seed)
    g.attrs["params"] = json.dumps(task.params_dict)
    g.attrs["fixed"] = json.dumps(dict(task.fixed))
    g.attrs["overrides"] = json.dumps(list(task.overrides))
    g.attrs["figures"] = json.dumps(output.figures)
    g.attrs["summary"] = json.dumps(output.summary, default=str)
    g.attrs["seconds"] = float(seconds)
    g.attrs["version"] = version
    g.attrs["host"] = socket.gethostname()
    g.attrs["pid"] = os.getpid()
    g.attrs["finished"] = _now()


def write_task_file(task, output: TaskOutput, path: Path, *, seconds: float, version: str) -> Path:
    """Write the task's result file at ``path`` atomically (module docstring)."""
    path = Path(path)
    if output.result_file is not None:
        src = Path(output.result_file)
        with h5py.File(src, "r+") as f:
            _stamp(f, task, output, seconds, version)
        return commit_file(src, path)
    with atomic_path(path) as tmp:
        with h5py.File(tmp, "w") as f:
            f.attrs["format"] = TASK_FORMAT
            f.attrs["format_version"] = 1
            values = f.create_group("values")
            for name, a in output.arrays.items():
                values.create_dataset(name, data=np.asarray(a))
            _stamp(f, task, output, seconds, version)
    return path


def read_task_record(path: Path) -> TaskRecord | None:
    """The ``/sweep`` attributes of ``path``; None if it is missing, unreadable or has none."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        with h5py.File(path, "r") as f:
            if GROUP not in f:
                return None
            a = f[GROUP].attrs
            return TaskRecord(path=path, hash=str(a["task_hash"]), key=str(a["task_key"]), index=int(a["index"]),
                              seed=int(a["seed"]), params=json.loads(a["params"]), figures=json.loads(a["figures"]),
                              seconds=float(a["seconds"]))
    except (OSError, KeyError, ValueError):
        return None


def read_task_values(path: Path) -> dict:
    """Everything a function task returned, from its result file: the scalars (key figures), the
    arrays (``/values``) and the rest (``summary``), under the function's own (flattened) keys."""
    with open_hdf5(path, format=None, kind="a sweep task file", error=ValueError, missing=FileNotFoundError) as f:
        attrs = f[GROUP].attrs
        out = dict(json.loads(attrs["summary"]))
        out.update(json.loads(attrs["figures"]))
        if "values" in f:
            out.update({name: f["values"][name][()] for name in f["values"]})
    return out


def task_is_complete(path: Path, task_hash: str) -> bool:
    record = read_task_record(path)
    return record is not None and record.hash == task_hash


def write_failure(task, path: Path, *, error: BaseException, traceback_text: str, seconds: float) -> Path:
    """Write the failure record of ``task`` at ``path`` atomically."""
    record = {"key": task.key, "index": task.index, "params": task.params_dict, "fixed": dict(task.fixed),
              "seed": task.seed, "hash": task.hash, "type": type(error).__name__, "error": str(error),
              "traceback": traceback_text, "seconds": float(seconds), "host": socket.gethostname(),
              "pid": os.getpid(), "finished": _now()}
    with atomic_open(path, "w", encoding="utf-8") as fh:
        json.dump(record, fh, indent=1, default=str)
    return Path(path)


def read_failure(path: Path) -> dict | None:
    path = Path(path)
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
