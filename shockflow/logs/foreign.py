"""Import loss curves produced elsewhere (CSV or JSON) as a ``TrainingRecord``.

CSV (``.csv``, ``.tsv``, ``.txt``): delimiter sniffed among , ; tab and whitespace; lines
starting with '#' are skipped. A first row that is not all numbers is a header; the step
column is the first named one of ``STEP_NAMES`` and the loss column the first of
``LOSS_NAMES`` (case-insensitive). Without a header: one column = loss (steps 0, 1, 2, …),
two columns = step, loss.
JSON (``.json``): {"step": [...], "loss": [...]}, {"loss": [...]}, or a list of records
[{"step": s, "loss": l}, ...] (the same name aliases apply).
Steps must be strictly increasing integers ≥ 0 and losses finite; every error names the file
(and the data row, counted from 1 after any header and comment lines).
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import numpy as np

from .record import TrainingRecord

__all__ = ["read_loss_curve", "STEP_NAMES", "LOSS_NAMES"]

STEP_NAMES = ("step", "steps", "iteration", "iter", "it", "global_step", "t")
LOSS_NAMES = ("loss", "train_loss", "training_loss", "train/loss", "value")


def _is_number(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def _pick(names: list[str], aliases: tuple[str, ...]) -> int | None:
    low = [n.strip().lower() for n in names]
    for a in aliases:
        if a in low:
            return low.index(a)
    return None


def _rows(text: str, path: Path) -> list[list[str]]:
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if not lines:
        raise ValueError(f"read_loss_curve: {str(path)!r} holds no data rows")
    sample = "\n".join(lines[:20])
    delim = None
    for d in (",", "\t", ";"):
        if d in sample:
            delim = d
            break
    if delim is None:
        return [ln.split() for ln in lines]
    return [[c.strip() for c in row] for row in csv.reader(io.StringIO("\n".join(lines)), delimiter=delim)]


def _from_csv(path: Path) -> tuple[np.ndarray | None, np.ndarray]:
    rows = _rows(path.read_text(), path)
    header = None
    if not all(_is_number(c) for c in rows[0] if c != ""):
        header, rows = rows[0], rows[1:]
    if not rows:
        raise ValueError(f"read_loss_curve: {str(path)!r} has a header but no data rows")
    width = len(rows[0])
    if header is not None:
        li = _pick(header, LOSS_NAMES)
        si = _pick(header, STEP_NAMES)
        if li is None:
            if len(header) == 1:
                li = 0
            else:
                raise ValueError(f"read_loss_curve: {str(path)!r}: no loss column in header {header}; "
                                 f"expected one of {list(LOSS_NAMES)}")
    elif width == 1:
        si, li = None, 0
    elif width == 2:
        si, li = 0, 1
    else:
        raise ValueError(f"read_loss_curve: {str(path)!r} has {width} columns and no header; expected "
                         f"one column (loss) or two (step, loss), or a header naming them")
    steps, loss = [], []
    for r, row in enumerate(rows, start=1):
        try:
            loss.append(float(row[li]))
            if si is not None:
                steps.append(float(row[si]))
        except (ValueError, IndexError):
            raise ValueError(f"read_loss_curve: {str(path)!r}, data row {r}: cannot read numbers from "
                             f"{row}") from None
    return (np.array(steps) if si is not None else None), np.array(loss)


def _from_json(path: Path) -> tuple[np.ndarray | None, np.ndarray]:
    try:
        obj = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"read_loss_curve: {str(path)!r} is not valid JSON ({exc})") from None
    expected = ('expected {"step": [...], "loss": [...]}, {"loss": [...]} or a list of '
                '{"step": s, "loss": l} records')
    if isinstance(obj, dict):
        li = _pick(list(obj), LOSS_NAMES)
        if li is None:
            raise ValueError(f"read_loss_curve: {str(path)!r} has keys {list(obj)} but no loss key; {expected}")
        si = _pick(list(obj), STEP_NAMES)
        keys = list(obj)
        loss = obj[keys[li]]
        steps = obj[keys[si]] if si is not None else None
    elif isinstance(obj, list) and obj and all(isinstance(r, dict) for r in obj):
        keys = list(obj[0])
        li, si = _pick(keys, LOSS_NAMES), _pick(keys, STEP_NAMES)
        if li is None:
            raise ValueError(f"read_loss_curve: {str(path)!r}: records have keys {keys} but no loss key; {expected}")
        try:
            loss = [r[keys[li]] for r in obj]
            steps = [r[keys[si]] for r in obj] if si is not None else None
        except KeyError as exc:
            raise ValueError(f"read_loss_curve: {str(path)!r}: a record lacks key {exc}") from None
    else:
        raise ValueError(f"read_loss_curve: {str(path)!r}: {expected}")
    try:
        loss = np.asarray(loss, dtype=np.float64)
        steps = None if steps is None else np.asarray(steps, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"read_loss_curve: {str(path)!r}: step and loss must be lists of numbers") from None
    if loss.ndim != 1 or (steps is not None and steps.shape != loss.shape):
        raise ValueError(f"read_loss_curve: {str(path)!r}: step and loss must be flat lists of equal length, "
                         f"got {None if steps is None else steps.shape} and {loss.shape}")
    return steps, loss


def read_loss_curve(path: str | os.PathLike) -> TrainingRecord:
    """A ``TrainingRecord`` holding only /series/step and /series/loss from a CSV or JSON file."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"read_loss_curve: file {str(path)!r} does not exist")
    suffix = path.suffix.lower()
    if suffix == ".json":
        steps, loss = _from_json(path)
    elif suffix in (".csv", ".tsv", ".txt", ".dat"):
        steps, loss = _from_csv(path)
    else:
        raise ValueError(f"read_loss_curve: {str(path)!r}: unknown extension {suffix!r}; "
                         f"expected .csv/.tsv/.txt/.dat or .json")
    if loss.size < 2:
        raise ValueError(f"read_loss_curve: {str(path)!r} holds {loss.size} loss value(s); need at least 2")
    if steps is None:
        steps = np.arange(loss.size, dtype=np.float64)
    bad = ~np.isfinite(loss)
    if bad.any():
        raise ValueError(f"read_loss_curve: {str(path)!r}: loss is not finite at data row {int(np.argmax(bad)) + 1}")
    if not np.all(np.isfinite(steps)) or np.any(steps != np.round(steps)) or np.any(steps < 0):
        raise ValueError(f"read_loss_curve: {str(path)!r}: steps must be non-negative integers")
    if np.any(np.diff(steps) <= 0):
        i = int(np.argmax(np.diff(steps) <= 0))
        raise ValueError(f"read_loss_curve: {str(path)!r}: steps must be strictly increasing "
                         f"(data row {i + 2}: {steps[i + 1]:g} after {steps[i]:g})")
    return TrainingRecord(series={"step": steps.astype(np.int64), "loss": loss},
                          source=str(path), data_spec={"name": "imported", "path": str(path)})
