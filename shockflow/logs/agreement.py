"""Whether a shockflow training log was trained as a forecast assumed: the same network, data, optimiser and seed.

``compare`` and ``monitor`` score a log against a forecast (or a ``run`` result) file.  A shockflow log records the
model, data and training settings it was trained with (:mod:`shockflow.logs.hdf5`; its live file while it trains,
:mod:`shockflow.logs.live`), the forecast file its case's settings and seed; where they differ the scoring compares two
different runs, so the commands warn, naming each key that differs (a log of one case against another case's
forecast, or ``train --seed 3`` against a forecast made with the case's seed).  Only keys that both files record are
compared; a CSV or JSON log records none, so nothing is said of it.

The start is compared too: both files record a digest of the network's initial parameters (:func:`start_digest`),
so a log whose run began elsewhere — another ``[training] initial`` file under the same name, a file edited since the
forecast, another initialisation — is named even where every key agrees.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import numpy as np

__all__ = ["log_settings", "disagreements", "check_log_against", "start_digest"]

#: the training settings a forecast depends on (the rest: logging, snapshots, Adam's constants for other rules)
TRAINING_KEYS = ("optimizer", "lr", "steps", "batch_size", "momentum", "schedule", "step_every", "gamma", "lr_min",
                 "weight_decay", "frozen", "initial")
_MOMENTUM = ("momentum", "nesterov")


def start_digest(params) -> str:
    """A digest of a network's parameters ``{name: array}`` (its start, recorded by a training log and by a forecast
    file): SHA-256 of each name, shape and float64 value in the given order, as hex.  Equal only for the same
    parameters, bit for bit."""
    h = hashlib.sha256()
    for name, value in params.items():
        a = np.ascontiguousarray(value, dtype="<f8")
        h.update(f"{name}{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def log_settings(path) -> dict | None:
    """``{"model", "data", "training", "seed", "start"}`` recorded by a shockflow training log at ``path`` (or, while
    its run trains, by the run's live file beside it); None for another kind of log or where nothing is readable
    yet."""
    import h5py

    from .hdf5 import FORMAT
    from .live import LIVE_FORMAT, live_logs_of, writer_pid

    path = Path(path)
    live = writer_pid(path) is not None          # a live file itself (what a monitor reads while a run trains)
    if not live and path.suffix.lower() not in (".h5", ".hdf5"):
        return None
    candidates = [path] if live or path.is_file() else live_logs_of(path)
    for candidate in candidates:
        try:
            with h5py.File(candidate, "r", libver="latest", swmr=writer_pid(candidate) is not None) as f:
                if f.attrs.get("format") not in (FORMAT, LIVE_FORMAT) or "settings" not in f.attrs:
                    continue
                data = json.loads(f.attrs["data_spec"])
                return {"model": json.loads(f.attrs["model_spec"]), "data": data.get("train") or {},
                        "training": json.loads(f.attrs["settings"]), "seed": int(f.attrs.get("seed", -1)),
                        "start": str(f.attrs.get("start", ""))}
        except (OSError, KeyError, ValueError, TypeError):
            continue
    return None


def _same_file(a, b) -> bool:
    """Two paths of a data or initial-parameter file, as the forecast's case file wrote it (relative to the case
    file) and as the log recorded it (as opened): the same where their file names are."""
    return isinstance(a, str) and isinstance(b, str) and Path(a).name == Path(b).name


def _same(a, b) -> bool:
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None or isinstance(a, str) or isinstance(b, str):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=0.0) or (math.isnan(a) and math.isnan(b))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return all(_same(a[k], b[k]) for k in a.keys() & b.keys())
    return a == b


def _show(value) -> str:
    text = json.dumps(value) if not isinstance(value, str) else value
    return text if len(text) <= 60 else text[:57] + "..."


def disagreements(log: dict, settings: dict, seed: int | None, start: str = "") -> list[str]:
    """The keys on which a log's record (:func:`log_settings`) and a forecast's case settings, seed and start (its
    :func:`start_digest`; empty: not recorded) differ, each as ``"training.lr: the log 0.05, the forecast 0.02"``."""
    found = []
    for table, keys in (("model", None), ("data", None), ("training", TRAINING_KEYS)):
        ours, theirs = settings.get(table) or {}, log.get(table) or {}
        for key in (keys if keys is not None else ours.keys()):
            if key == "seed" or key not in ours or key not in theirs:
                continue
            if key == "momentum" and str(ours.get("optimizer")) not in _MOMENTUM:
                continue
            if not (_same_file(ours[key], theirs[key]) if key == "path" else _same(ours[key], theirs[key])):
                found.append(f"{table}.{key}: the log {_show(theirs[key])}, the forecast {_show(ours[key])}")
    if seed is not None and seed >= 0 and log.get("seed", -1) >= 0 and int(seed) != int(log["seed"]):
        found.append(f"seed: the log {log['seed']}, the forecast {seed}")
    theirs = log.get("start") or ""
    if start and theirs and start != theirs:
        found.append(f"start (a digest of the initial parameters): the log {theirs[:12]}, the forecast {start[:12]}")
    return found


def check_log_against(log_path, prediction_path) -> list[str]:
    """:func:`disagreements` of the log at ``log_path`` and the forecast or ``run`` result file at ``prediction_path``
    (empty where either records nothing to compare)."""
    from shockflow.storage import read_result

    log = log_settings(log_path)
    if log is None:
        return []
    try:
        result = read_result(prediction_path)
    except Exception:            # the prediction file's own errors are the commands' to report
        return []
    if getattr(result, "case_kind", "network") != "network":
        return []
    return disagreements(log, result.settings or {}, result.seed, str(result.problem.get("start", "") or ""))
