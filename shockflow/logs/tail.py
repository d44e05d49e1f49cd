"""Reading a loss log that another program is still writing (issue 20, ``shockflow monitor``).

:class:`LogTail` keeps its place in the file and, on each :meth:`LogTail.read`, takes in only what
was appended since — and of that only the **complete rows**: the bytes after the last newline are a
row still being written and are left for the next read, never parsed.  A complete row that does not
parse is an error naming the file and the data row (counted from 1 after the header); so is a step
that does not increase.  The formats:

- CSV (``.csv``, ``.tsv``, ``.txt``, ``.dat``): the header and column rules of
  :mod:`shockflow.logs.foreign` (``step``/``loss`` aliases, ``step_column``/``loss_column``);
- JSON lines (``.jsonl``, ``.ndjson``, or ``.json`` holding one ``{"step": s, "loss": l}`` object per
  line): one record per complete line; a ``.json`` that is one document (a list of such records, or
  ``{"step": [...], "loss": [...]}``) is read whole once it parses;
- a shockflow training log (``.h5``): written whole by :func:`shockflow.training.train` (atomically) at the
  end, so it is read whole once it exists; until then the rows come from the run's live file beside it
  (:mod:`shockflow.logs.live`), held open so that its last rows and the run's status are read even when the
  log is committed between two reads; a live file newer than the log (a new run where an earlier one left its
  log) is the one read.  :attr:`LogTail.status` says whether the run is ``"training"``, ``"finished"`` (the log,
  or the live file once the log is committed), ``"stopped"`` (it ended without its log: failed, interrupted or
  killed) or ``"diverged"``.

A complete row whose loss is not finite (in any format) is where the run diverged: :attr:`LogTail.diverged` holds
its step and loss, the status is ``"diverged"``, and nothing after it is read.

A log rewritten from its start (a new run in its place) is read again from its start and counted in ``restarted``:
one that shrank, or whose bytes before the place reached have changed (the last row read is checked on each read,
so a new run that has already written past it is caught too); a JSON document or a training log that is read whole
and no longer begins with the rows read before.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .foreign import JSON_LINES as _LINES
from .foreign import LOSS_NAMES, OPTION_NAMES, _columns, _is_number, _pick, check_loss_series

__all__ = ["LogTail"]

_CSV = (".csv", ".tsv", ".txt", ".dat")


#: bytes before the place reached that each read checks are unchanged (a log rewritten from its start is not)
_CHECKED = 256

#: a ``.json`` log that is a JSON list not yet complete (:func:`_document`)
_INCOMPLETE = object()


def _document(chunk: bytes):
    """A ``.json`` log's whole content as one JSON document, not JSON lines: the parsed list (of records) or object
    whose values are lists (``{"step": [...], "loss": [...]}``); :data:`_INCOMPLETE` for a list still being written;
    None for JSON lines (an object of one record is a line)."""
    text = chunk.decode("utf-8-sig", errors="replace").strip()
    if not text.startswith(("[", "{")):
        return None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError:
        return _INCOMPLETE if text.startswith("[") else None   # (several objects: JSON lines)
    if isinstance(obj, list) or (isinstance(obj, dict) and any(isinstance(v, list) for v in obj.values())):
        return obj
    return None


class LogTail:
    """The complete rows of a growing loss log (module docstring)."""

    def __init__(self, path, *, step_column: str | None = None, loss_column: str | None = None):
        self.path = Path(path)
        suffix = self.path.suffix.lower()
        if suffix not in (*_CSV, *_LINES, ".json", ".h5", ".hdf5"):
            raise ValueError(f"log {str(self.path)!r}: unknown extension {suffix!r}; expected .csv/.tsv/.txt/.dat, "
                             f".jsonl/.ndjson/.json (one record per line) or .h5 (a shockflow training log)")
        self.kind = "hdf5" if suffix in (".h5", ".hdf5") else "csv" if suffix in _CSV else "lines"
        self.step_column, self.loss_column = step_column, loss_column
        self.restarted = 0
        self._document = False     # a .json that is one JSON document (_document), read again whole
        self.status = "training"   # "finished", "stopped" or "diverged" once known (module docstring)
        self._live = None          # the live file being read (shockflow.logs.live.LiveReader)
        self._reset()

    def _reset(self):
        self._offset = 0
        self._last = b""           # the bytes just before _offset (up to _CHECKED): unchanged while the log grows
        self._header = None        # (step index or None, loss index, delimiter) once the first row is read
        self._rows = 0
        self._steps: list[float] = []
        self._loss: list[float] = []
        self._stamp = None
        self.diverged = None       # (step, loss) of the first complete row whose loss is not finite
        if self.status == "diverged":
            self.status = "training"

    @property
    def rows(self) -> int:
        return len(self._loss)

    def modified(self) -> int | None:
        """The latest modification time (ns) of the log and, for a shockflow log, the live file beside it (the
        one being read, or the newest of a run training there now), None while there is none."""
        paths = [self.path]
        if self.kind == "hdf5":
            paths += self._live_paths()
        stamps = []
        for path in paths:
            try:
                stamps.append(path.stat().st_mtime_ns)
            except FileNotFoundError:
                continue
        return max(stamps) if stamps else None

    def writing(self) -> bool:
        """Whether a shockflow run is training into this log now (its live file read, its writer alive and still
        training): a follow does not end for want of new rows while it does."""
        from .live import writer_alive

        return self._live is not None and self.status == "training" and writer_alive(self._live.path)

    @property
    def source(self) -> Path:
        """The file the rows come from now: the run's live file while it is read, else the log."""
        return self._live.path if self._live is not None else self.path

    def size(self) -> int:
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return -1

    def read(self) -> bool:
        """Take in what was appended; True if there are new complete rows."""
        if self.kind == "hdf5":
            return self._read_hdf5()
        size = self.size()
        if size < 0:
            return False
        if size < self._offset or not self._same_before():   # a new run's log in its place: read it from its start
            self.restarted += 1
            self._reset()
        if size == self._offset or self.diverged is not None:
            return False
        if self._document:                    # a JSON document is written again whole: read again whole
            self._offset = 0
        with open(self.path, "rb") as fh:
            fh.seek(self._offset)
            chunk = fh.read(size - self._offset)
        if self.kind == "lines" and self._offset == 0:
            document = _document(chunk)
            if document is not None:
                self._document = True
                return document is not _INCOMPLETE and self._take_document(document, size)
        end = chunk.rfind(b"\n")
        if end < 0:
            return False                      # no complete row yet
        before = self.rows
        for line in chunk[:end].split(b"\n"):
            self._line(line.decode("utf-8", errors="replace"))
        self._offset += end + 1
        self._last = (self._last + chunk[:end + 1])[-_CHECKED:]
        return self.rows > before

    def _same_before(self) -> bool:
        """Whether the bytes before the place reached are those read there (a log appended to, not rewritten)."""
        if self._document or not self._last:
            return True
        try:
            with open(self.path, "rb") as fh:
                fh.seek(self._offset - len(self._last))
                return fh.read(len(self._last)) == self._last
        except OSError:
            return True

    def _take_document(self, document, size: int) -> bool:
        """A ``.json`` log that is one JSON document (:func:`_document`, as :func:`shockflow.logs.foreign
        .read_loss_curve` reads it), complete: its rows replace those read before (it is written again whole)."""
        from .foreign import json_series

        steps, loss = json_series(document, self.path, self.step_column, self.loss_column)
        before = self.rows
        old = self._loss
        if before and (len(loss) < before or any(float(a) != b for a, b in zip(loss[:before], old))):
            self.restarted += 1     # no longer begins with the rows read before: a new run's document
            before = 0
        self._reset()
        for i, value in enumerate(loss):
            self._rows += 1
            self._append(None if steps is None else float(steps[i]), float(value))
        self._offset = size
        return self.rows > before

    def series(self) -> tuple[np.ndarray, np.ndarray]:
        """``(steps, loss)`` of the complete rows read so far."""
        return np.asarray(self._steps, dtype=np.float64), np.asarray(self._loss, dtype=np.float64)

    def _diverge(self, step: float, loss: float) -> None:
        """A complete row whose loss is not finite: the run diverged there; the rows after it are not read."""
        self.diverged = (float(step), float(loss))
        self.status = "diverged"

    # -- one complete line -------------------------------------------------------------------------
    def _fail(self, what: str):
        raise ValueError(f"log {str(self.path)!r}, data row {self._rows}: {what}")

    def _append(self, step, loss):
        if self.diverged is not None:
            return
        if step is None:
            step = float(len(self._steps))
        if not (np.isfinite(step) and step >= 0 and step == round(step)):
            self._fail(f"steps must be non-negative integers, found {step}")
        if self._steps and step <= self._steps[-1]:
            self._fail(f"steps must be strictly increasing: {step:g} after {self._steps[-1]:g}")
        if not np.isfinite(loss):
            self._diverge(step, loss)
            return
        self._steps.append(float(step))
        self._loss.append(float(loss))

    def _line(self, line: str):
        text = line.strip().removeprefix("\ufeff")   # a byte order mark at the file's start is not data
        if not text or text.startswith("#"):
            return
        if self.kind == "lines":
            self._rows += 1
            try:
                record = json.loads(text)
            except json.JSONDecodeError as exc:
                hint = ("; a log being followed is read as JSON lines, one record a line: this looks like one JSON "
                        "document (`shockflow compare` reads those)") if self._rows == 1 and text[:1] in "[{" else ""
                self._fail(f"not a JSON record ({exc.msg}){hint}")
            if not isinstance(record, dict):
                self._fail(f'expected a record {{"step": s, "loss": l}}, found {text[:60]!r}')
            if self._header is None:
                keys = list(record)
                if self.loss_column is None and _pick(keys, LOSS_NAMES) is None:
                    self._fail(f"no loss key among {keys}")
                si, li = _columns(keys, f"log {str(self.path)!r}", self.step_column, self.loss_column, "record keys")
                self._header = (None if si is None else keys[si], keys[li], None)
            skey, lkey, _ = self._header
            try:
                self._append(None if skey is None else float(record[skey]), float(record[lkey]))
            except (KeyError, TypeError, ValueError) as exc:
                if isinstance(exc, ValueError) and str(exc).startswith("log "):
                    raise
                self._fail(f"cannot read step and loss from {text[:60]!r}")
            return
        if self._header is None:
            delim = next((d for d in (",", "\t", ";") if d in text), None)
            cells = [c.strip() for c in (text.split(delim) if delim else text.split())]
            if not all(_is_number(c) for c in cells if c):
                si, li = _columns(cells, f"log {str(self.path)!r}", self.step_column, self.loss_column,
                                  "columns of the header")
                self._header = (si, li, delim)
                return
            if self.step_column is not None or self.loss_column is not None:
                raise ValueError(f"log {str(self.path)!r} has no header; {OPTION_NAMES['both']} need named "
                                 f"columns")
            if len(cells) > 2:
                raise ValueError(f"log {str(self.path)!r} has {len(cells)} columns and no header; expected one "
                                 f"column (loss) or two (step, loss), or a header naming them")
            self._header = ((None, 0) if len(cells) == 1 else (0, 1)) + (delim,)
        si, li, delim = self._header
        self._rows += 1
        cells = [c.strip() for c in (text.split(delim) if delim else text.split())]
        try:
            loss = float(cells[li])
            step = None if si is None else float(cells[si])
        except (ValueError, IndexError):
            self._fail(f"cannot read numbers from {cells}")
        self._append(step, loss)

    # -- a shockflow training log ------------------------------------------------------------------
    def _read_hdf5(self) -> bool:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return self._read_live()
        if self._live_is_newer(st.st_mtime_ns):     # a new run training where an earlier one left its log
            return self._read_live()
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp == self._stamp:
            return False
        from .hdf5 import read_training_log

        try:
            record = read_training_log(self.path)
        except OSError:
            return False                       # not readable yet
        self._stamp = stamp
        self._close_live()
        self.status = "finished"
        return self._take_series(np.asarray(record.series["step"], dtype=np.float64),
                                 np.asarray(record.series["loss"], dtype=np.float64))

    def _take_series(self, steps, loss) -> bool:
        bad = np.flatnonzero(~np.isfinite(loss))
        diverged = None
        if bad.size:                 # (a log another program wrote: shockflow's stop before a non-finite loss)
            diverged = (steps[bad[0]], loss[bad[0]])
            steps, loss = steps[:bad[0]], loss[:bad[0]]
        check_loss_series(steps, loss, f"log {str(self.path)!r}")
        if self.rows and (loss.size < self.rows or loss[:self.rows].tolist() != self._loss):
            self.restarted += 1     # another run's log in its place
            self._steps, self._loss = [], []
        grew = loss.size > self.rows
        self._steps, self._loss = steps.tolist(), loss.tolist()
        if diverged is not None:
            self._diverge(*diverged)
        return grew

    def _read_live(self) -> bool:
        """The complete rows of the run's live file (module docstring); False while there is none."""
        from .live import DIVERGED, FINISHED, STOPPED, LiveReader, live_logs_of

        if self._live is None:
            for path in live_logs_of(self.path):
                try:
                    self._live = LiveReader(path)
                    break
                except (OSError, KeyError):   # the writer is still setting it up, or it was removed just now
                    continue
            else:
                return False
        try:
            steps, loss, status = self._live.read()
            diverged = self._live.diverged() if status == DIVERGED else None
        except (OSError, KeyError):
            return False
        if status in (FINISHED, STOPPED, DIVERGED):
            self.status = {FINISHED: "finished", STOPPED: "stopped", DIVERGED: "diverged"}[status]
        grew = self._take_series(steps, loss)
        if diverged is not None:
            self._diverge(*diverged)
        return grew

    def _live_is_newer(self, log_mtime: int) -> bool:
        """Whether the live file being read, or else the newest beside the log, was written after the log."""
        for path in self._live_paths():
            try:
                return path.stat().st_mtime_ns > log_mtime
            except FileNotFoundError:
                return False
        return False

    def _live_paths(self) -> list:
        """The live file being read, or else the newest of a run training into this log now (none: empty)."""
        from .live import live_logs_of

        return [self._live.path] if self._live is not None else live_logs_of(self.path)[:1]

    def _close_live(self) -> None:
        if self._live is not None:
            self._live.close()
            self._live = None
