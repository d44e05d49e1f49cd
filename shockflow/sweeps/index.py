"""The merged index of a sweep: one HDF5 table, a row per task, in task order.

``<out>/index.h5``::

    /tasks   a compound dataset (one row per task) with the columns
             index (int64), key (str), status (str: done | reused | failed | missing), seed (int64),
             seconds (float64, NaN when unknown), error (str, "" unless failed),
             then one column per swept key (its dotted name), then one per key figure
    attrs    sweep, kind, version, created, columns (JSON), param_columns (JSON),
             figure_columns (JSON), and the count of each status

Column types: int64 when every value is a whole number, float64 when every value is a number
(missing figures of failed tasks are NaN), bool when every value is a boolean, else UTF-8 text
(the TOML text of the value).  Key figures a task did not report are NaN / "" (a bool column
becomes float with NaN).  Written atomically; :func:`read_index` returns ``{column: array}``.
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from pathlib import Path

import h5py
import numpy as np

from shockflow import __version__
from shockflow.storage import atomic_path
from shockflow.storage.hdf5 import open_hdf5
from shockflow.cases.sweep_axes import toml_value

__all__ = ["write_index", "read_index", "BASE_COLUMNS"]

BASE_COLUMNS = ("index", "key", "status", "seed", "seconds", "error")
_MISSING = object()


def _column(values: list):
    """A typed NumPy column for ``values`` (``_MISSING`` where a row has none)."""
    present = [v for v in values if v is not _MISSING]
    text = h5py.string_dtype("utf-8")
    if present and all(isinstance(v, (bool, np.bool_)) for v in present) and len(present) == len(values):
        return np.array(present, dtype=bool)
    if present and all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in present) \
            and len(present) == len(values):
        return np.array(present, dtype=np.int64)
    if present and all(isinstance(v, (int, float, np.integer, np.floating, bool, np.bool_)) for v in present):
        return np.array([math.nan if v is _MISSING else float(v) for v in values], dtype=np.float64)
    strings = ["" if v is _MISSING else (v if isinstance(v, str) else toml_value(v)) for v in values]
    return np.array(strings, dtype=object).astype(text)


def write_index(path, sweep, reports) -> Path:
    """Write the index of ``sweep`` from its task ``reports`` (one per task, in task order)."""
    path = Path(path)
    reports = list(reports)
    param_keys = list(sweep.param_keys)
    figure_keys: list[str] = []
    for r in reports:
        for k in r.figures:
            if k not in figure_keys and k not in param_keys and k not in BASE_COLUMNS:
                figure_keys.append(k)
    columns: dict[str, np.ndarray] = {
        "index": np.array([r.index for r in reports], dtype=np.int64),
        "key": _column([r.key for r in reports]),
        "status": _column([r.status for r in reports]),
        "seed": np.array([r.seed for r in reports], dtype=np.int64),
        "seconds": np.array([r.seconds for r in reports], dtype=np.float64),
        "error": _column([r.error for r in reports]),
    }
    for k in param_keys:
        name = k if k not in BASE_COLUMNS else f"param_{k}"
        columns[name] = _column([r.params.get(k, _MISSING) for r in reports])
    for k in figure_keys:
        columns[k] = _column([r.figures.get(k, _MISSING) for r in reports])
    dtype = np.dtype([(name, a.dtype) for name, a in columns.items()])
    table = np.empty(len(reports), dtype=dtype)
    for name, a in columns.items():
        table[name] = a
    with atomic_path(path) as tmp:
        with h5py.File(tmp, "w") as f:
            f.create_dataset("tasks", data=table)
            f.attrs["format"] = "shockflow-sweep-index"
            f.attrs["format_version"] = 1
            f.attrs["sweep"] = sweep.name
            f.attrs["kind"] = sweep.kind
            f.attrs["version"] = __version__
            f.attrs["created"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
            f.attrs["columns"] = json.dumps(list(columns))
            f.attrs["param_columns"] = json.dumps([k if k not in BASE_COLUMNS else f"param_{k}" for k in param_keys])
            f.attrs["figure_columns"] = json.dumps(figure_keys)
            for status in ("done", "reused", "failed", "missing"):
                f.attrs[status] = sum(r.status == status for r in reports)
    return path


def read_index(path) -> dict[str, np.ndarray]:
    """The index table of ``path`` as ``{column: array}`` (text columns as ``str`` arrays)."""
    with open_hdf5(path, format="shockflow-sweep-index", kind="a sweep index", error=ValueError,
                   missing=FileNotFoundError) as f:
        names = json.loads(f.attrs["columns"])
        data = f["tasks"][()]
    out = {}
    for name in names:
        col = data[name]
        if col.dtype.kind == "O":
            col = np.array([v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in col])
        out[name] = col
    return out
