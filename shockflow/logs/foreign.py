"""Import loss curves produced elsewhere (CSV or JSON) as a ``TrainingRecord``.

CSV (``.csv``, ``.tsv``, ``.txt``): delimiter sniffed among , ; tab and whitespace; lines
starting with '#' are skipped. A first row that is not all numbers is a header; the step
column is the first of ``STEP_NAMES`` present (in that order of preference, case-insensitive:
``step``, ``global_step``, ``iteration``, ``iter``, …, ``epoch``) and the loss column the first of
``LOSS_NAMES``; ``step_column=`` / ``loss_column=`` name them explicitly (``step_column="row"``:
the row numbers 0, 1, 2, … are the steps). A header with no recognised step column is an error
that names the columns found (issue 17: row numbers are never used silently in place of a column).
Without a header: one column = loss (steps 0, 1, 2, …), two columns = step, loss.
JSON (``.json``): {"step": [...], "loss": [...]}, or a list of records
[{"step": s, "loss": l}, ...] (the same name aliases and options apply).
At least 2 rows; steps strictly increasing integers ≥ 0 (no repeats) and losses finite; every
error names the file and the data row, counted from 1 after any header and comment lines.
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import numpy as np

from .record import TrainingRecord

__all__ = ["check_loss_series", "read_loss_curve", "JSON_LINES", "STEP_NAMES", "LOSS_NAMES", "ROW_STEPS"]

#: the extensions of a JSON-lines log (one record a line)
JSON_LINES = (".jsonl", ".ndjson")


def check_loss_series(steps, loss, where: str) -> None:
    """ValueError naming ``where`` and the data row (1-based) unless every loss is finite and the steps are
    non-negative integers, strictly increasing: what a loss curve must be to be read (a CSV/JSON curve, or the
    series of a training log written by another program)."""
    steps, loss = np.asarray(steps, dtype=np.float64), np.asarray(loss, dtype=np.float64)
    bad = ~np.isfinite(loss)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{where}: loss is not finite at data row {i + 1} (loss = {loss[i]})")
    bad = ~np.isfinite(steps) | (steps != np.round(steps)) | (steps < 0) | (steps >= 2.0 ** 63)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{where}: steps must be non-negative integers below 2**63; data row {i + 1} has step "
                         f"{steps[i]:.17g}")
    if np.any(np.diff(steps) <= 0):
        i = int(np.argmax(np.diff(steps) <= 0))
        kind = "a repeated step" if steps[i + 1] == steps[i] else "steps going back"
        raise ValueError(f"{where}: steps must be strictly increasing (data row {i + 2}: {steps[i + 1]:g} after "
                         f"{steps[i]:g}): {kind}")

STEP_NAMES = ("step", "global_step", "steps", "iteration", "iter", "it", "t", "epoch")
#: ``step_column=ROW_STEPS``: number the rows 0, 1, 2, … (only on request when a header is present)
ROW_STEPS = "row"
LOSS_NAMES = ("loss", "train_loss", "training_loss", "train/loss", "value")
#: how an error tells the reader of a log which column to read: the argument and the command line's option
OPTION_NAMES = {"step": "step_column=NAME (on the command line --step-column NAME)",
                "loss": "loss_column=NAME (on the command line --loss-column NAME)",
                "both": "step_column/loss_column (--step-column/--loss-column)"}


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


def _columns(names: list[str], where: str, step_column: str | None, loss_column: str | None, what: str):
    """(step index or None for row numbers, loss index) among ``names`` (a header or JSON keys); errors begin
    with ``where`` (the reader and the file).  They name the options in both spellings, the argument
    (``step_column``) and the command line's (``--step-column``): this reader serves both."""
    stripped = [n.strip() for n in names]

    def named(option, value):
        if value in stripped:
            return stripped.index(value)
        low = [n.lower() for n in stripped]
        if value.lower() in low:
            return low.index(value.lower())
        raise ValueError(f"{where}: {option} {value!r} is not among the {what} {stripped}")

    li = named("loss column", loss_column) if loss_column is not None else _pick(names, LOSS_NAMES)
    if li is None:
        if len(names) == 1:
            li = 0
        else:
            raise ValueError(f"{where}: no loss column in header {stripped}; expected one of {list(LOSS_NAMES)}, "
                             f"or name it: {OPTION_NAMES['loss']}")
    if step_column is not None:
        if step_column == ROW_STEPS and ROW_STEPS not in [n.lower() for n in stripped]:
            return None, li
        return named("step column", step_column), li
    si = _pick(names, STEP_NAMES)
    if si is None:
        raise ValueError(f"{where}: no step column among the {what} {stripped}; expected one of {list(STEP_NAMES)}, "
                         f"or name it: {OPTION_NAMES['step']} ({ROW_STEPS!r}: the row numbers are the steps)")
    return si, li


def _rows(text: str, path: Path) -> list[list[str]]:
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if not lines:
        raise ValueError(f"read_loss_curve: {str(path)!r} holds no data rows (data row 1 missing); need at least 2")
    sample = "\n".join(lines[:20])
    delim = None
    for d in (",", "\t", ";"):
        if d in sample:
            delim = d
            break
    if delim is None:
        return [ln.split() for ln in lines]
    return [[c.strip() for c in row] for row in csv.reader(io.StringIO("\n".join(lines)), delimiter=delim)]


def _from_csv(path: Path, step_column=None, loss_column=None) -> tuple[np.ndarray | None, np.ndarray]:
    rows = _rows(path.read_text(encoding="utf-8-sig"), path)   # a byte order mark is not part of the header
    header = None
    if not all(_is_number(c) for c in rows[0] if c != ""):
        header, rows = rows[0], rows[1:]
    if not rows:
        raise ValueError(f"read_loss_curve: {str(path)!r} has a header but no data rows (data row 1 missing); need at least 2")
    width = len(rows[0])
    if header is not None:
        si, li = _columns(header, f"read_loss_curve: {str(path)!r}", step_column, loss_column,
                          "columns of the header")
    elif step_column is not None or loss_column is not None:
        raise ValueError(f"read_loss_curve: {str(path)!r} has no header; {OPTION_NAMES['both']} need named "
                         f"columns")
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


def _json_lines(text: str, path: Path) -> list:
    """The records of a JSON-lines text, one JSON object a nonblank line (what ``monitor`` follows)."""
    records = []
    for row, line in enumerate((ln for ln in text.splitlines() if ln.strip()), start=1):
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise ValueError(f"read_loss_curve: {str(path)!r}, data row {row}: not a JSON record ({exc.msg})") from None
    return records


def _from_json(path: Path, step_column=None, loss_column=None) -> tuple[np.ndarray | None, np.ndarray]:
    text = path.read_text(encoding="utf-8-sig")
    if path.suffix.lower() in JSON_LINES:
        obj = _json_lines(text, path)
    else:
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            if exc.msg != "Extra data":
                raise ValueError(f"read_loss_curve: {str(path)!r} is not valid JSON ({exc})") from None
            obj = _json_lines(text, path)   # one record a line: JSON lines under a .json name
    return json_series(obj, path, step_column, loss_column)


def json_series(obj, path: Path, step_column=None, loss_column=None) -> tuple[np.ndarray | None, np.ndarray]:
    """``(steps or None, loss)`` of a parsed JSON log ``obj`` (of the file ``path``, for the messages):
    ``{"step": [...], "loss": [...]}`` or a list of ``{"step": s, "loss": l}`` records."""
    expected = ('expected {"step": [...], "loss": [...]}, {"loss": [...]} or a list of '
                '{"step": s, "loss": l} records')
    if isinstance(obj, dict):
        if loss_column is None and _pick(list(obj), LOSS_NAMES) is None:
            raise ValueError(f"read_loss_curve: {str(path)!r} has keys {list(obj)} but no loss key; {expected}")
        si, li = _columns(list(obj), f"read_loss_curve: {str(path)!r}", step_column, loss_column, "keys")
        keys = list(obj)
        loss = obj[keys[li]]
        steps = obj[keys[si]] if si is not None else None
    elif isinstance(obj, list) and not obj:
        raise ValueError(f"read_loss_curve: {str(path)!r} holds no data rows (an empty list; data row 1 missing)")
    elif isinstance(obj, list) and obj and all(isinstance(r, dict) for r in obj):
        keys = list(obj[0])
        if loss_column is None and _pick(keys, LOSS_NAMES) is None:
            raise ValueError(f"read_loss_curve: {str(path)!r}: records have keys {keys} but no loss key; {expected}")
        si, li = _columns(keys, f"read_loss_curve: {str(path)!r}", step_column, loss_column, "record keys")
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


def read_loss_curve(path: str | os.PathLike, *, step_column: str | None = None,
                    loss_column: str | None = None) -> TrainingRecord:
    """A ``TrainingRecord`` holding only /series/step and /series/loss from a CSV or JSON file.

    ``step_column`` / ``loss_column``: the header column (JSON key) to read; ``step_column="row"``
    numbers the rows.  Errors (``ValueError``) name the file and the data row."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"read_loss_curve: file {str(path)!r} does not exist")
    suffix = path.suffix.lower()
    if suffix == ".json" or suffix in JSON_LINES:
        steps, loss = _from_json(path, step_column, loss_column)
    elif suffix in (".csv", ".tsv", ".txt", ".dat"):
        steps, loss = _from_csv(path, step_column, loss_column)
    else:
        raise ValueError(f"read_loss_curve: {str(path)!r}: unknown extension {suffix!r}; "
                         f"expected .csv/.tsv/.txt/.dat, .json or .jsonl/.ndjson (one record a line)")
    if loss.size == 0:
        raise ValueError(f"read_loss_curve: {str(path)!r} holds no data rows (data row 1 missing); need at least 2")
    if loss.size < 2:
        raise ValueError(f"read_loss_curve: {str(path)!r} holds only data row 1; need at least 2 rows of "
                         f"step and loss")
    if steps is None:
        steps = np.arange(loss.size, dtype=np.float64)
    check_loss_series(steps, loss, f"read_loss_curve: {str(path)!r}")
    return TrainingRecord(series={"step": steps.astype(np.int64), "loss": loss},
                          source=str(path), data_spec={"name": "imported", "path": str(path)})
