"""Training logs as HDF5 files (layout documented in docs/training-log.md).

    /                     attrs: format="shockflow-training-log", format_version=1,
                                 model_spec, data_spec, settings, versions (JSON strings),
                                 seed (int, -1 if none), source, wall_time
    /series/step          int64 (k,)         /series/loss, /series/test_loss, /series/lr, ...
    /snapshots/step       int64 (s,)         /snapshots/<param>   (s, *shape)
    /observables/step     int64 (o,)         /observables/<name>  (o,) or (o, *shape)
    /noise/step           int64 (q,)         /noise/trace, sigma2, temperature, ...

Series and stacked arrays are chunked along the step axis and gzip-compressed (level 4,
with shuffle) once they exceed a few kilobytes; small arrays are stored contiguously.
Files are written atomically (shockflow.storage.atomic): an interrupted write leaves no file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import h5py
import numpy as np

from shockflow.storage import atomic_path
from shockflow.storage.hdf5 import open_hdf5

from .record import TrainingRecord

__all__ = ["write_training_log", "read_training_log", "run_attributes", "FORMAT", "FORMAT_VERSION"]

FORMAT = "shockflow-training-log"
FORMAT_VERSION = 1
_GROUPS = ("series", "snapshots", "observables", "noise")
_COMPRESS_BYTES = 4096


def _write_array(group: h5py.Group, name: str, a: np.ndarray) -> None:
    a = np.asarray(a)
    if a.nbytes >= _COMPRESS_BYTES and a.ndim >= 1 and a.shape[0] > 1:
        row = max(1, int(np.prod(a.shape[1:])) * a.itemsize)
        rows = int(min(a.shape[0], max(1, (256 * 1024) // row)))
        group.create_dataset(name, data=a, chunks=(rows, *a.shape[1:]), compression="gzip",
                             compression_opts=4, shuffle=True)
    else:
        group.create_dataset(name, data=a)


def run_attributes(model_spec: dict, data_spec: dict, settings: dict, seed: int | None, start: str = "") -> dict:
    """The attributes that describe a run (model, data, settings, seed and ``start``, the digest of its initial
    parameters: :func:`shockflow.logs.agreement.start_digest`) as its log records them: written by
    :func:`write_training_log`, and by the live file while the run trains (:mod:`shockflow.logs.live`)."""
    return {"model_spec": json.dumps(model_spec), "data_spec": json.dumps(data_spec), "settings": json.dumps(settings),
            "seed": -1 if seed is None else int(seed), "start": str(start)}


def write_training_log(record: TrainingRecord, path: str | os.PathLike) -> Path:
    """Write ``record`` to ``path`` (HDF5) atomically; returns the path."""
    path = Path(path)
    with atomic_path(path) as tmp:
        with h5py.File(tmp, "w") as f:
            f.attrs["format"] = FORMAT
            f.attrs["format_version"] = FORMAT_VERSION
            f.attrs.update(run_attributes(record.model_spec, record.data_spec, record.settings, record.seed,
                                          record.start))
            f.attrs["versions"] = json.dumps(record.versions)
            f.attrs["source"] = record.source
            f.attrs["wall_time"] = float(record.wall_time)
            for gname in _GROUPS:
                g = f.create_group(gname)
                content = getattr(record, gname)
                g.attrs["order"] = json.dumps(list(content))
                for name, a in content.items():
                    _write_array(g, name, a)
    return path


def read_training_log(path: str | os.PathLike) -> TrainingRecord:
    """Read a file written by ``write_training_log`` back into a ``TrainingRecord``."""
    path = Path(path)
    with open_hdf5(path, format=FORMAT, kind="a shockflow training log", error=ValueError,
                   missing=FileNotFoundError) as f:
        try:
            return _read_record(f, path)
        except KeyError as exc:   # an attribute or object the layout has and this file lacks (a damaged file)
            raise ValueError(f"read_training_log: {str(path)!r} lacks {exc.args[0] if exc.args else exc!s} of the "
                             f"training-log layout (damaged, or written by another program)") from None


def _read_record(f, path: Path) -> TrainingRecord:
    """The record in the open training log ``f`` (a KeyError where the file lacks an attribute or object of the
    layout: :func:`read_training_log` names it)."""
    groups = {}
    for gname in _GROUPS:
        if gname not in f:
            raise ValueError(f"read_training_log: {str(path)!r} lacks group /{gname}")
        g = f[gname]
        order = json.loads(g.attrs["order"])
        lacking = [name for name in order if name not in g]
        if lacking:   # a damaged file, or one another program wrote: name what is missing, not h5py's words
            raise ValueError(f"read_training_log: {str(path)!r} lacks /{gname}/{lacking[0]} (its 'order' "
                             f"attribute lists {order})")
        groups[gname] = {name: g[name][()] for name in order}
    seed = int(f.attrs["seed"])
    return TrainingRecord(
        **groups,
        model_spec=json.loads(f.attrs["model_spec"]),
        data_spec=json.loads(f.attrs["data_spec"]),
        settings=json.loads(f.attrs["settings"]),
        seed=None if seed < 0 else seed,
        versions=json.loads(f.attrs["versions"]),
        source=str(f.attrs["source"]),
        wall_time=float(f.attrs["wall_time"]),
        start=str(f.attrs.get("start", "")),     # logs written before it was recorded: ""
    )
