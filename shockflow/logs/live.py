"""The loss series of a training run while it runs: a live HDF5 file that ``shockflow monitor`` follows.

A shockflow training log (:mod:`shockflow.logs.hdf5`) is written whole, atomically, when training ends
(with ``run``, when the prediction and figures are done too).  While it trains, :func:`shockflow.training.train`
appends its logged rows to a second, *live* file beside the log:

    <out>/.<log name>.pid<pid>.live.tmp      HDF5 in single-writer/multiple-reader (SWMR) mode
        /                 attrs: format="shockflow-live-training-log", format_version=1, planned_steps, log,
                                 model_spec, data_spec, settings (JSON), seed: as the log will record them
        /series/<column>  (k,)   step (int64), loss, batch_loss, lr[, test_loss] (float64), growing
        /rows             ()     how many rows of the series are complete (written after them)
        /status           ()     0 training, 1 finished, 2 stopped (diverged, interrupted, failed)

A reader opens it with ``swmr=True`` and reads ``rows`` first, then that many rows of each column, so a
row being appended is never read half written.  Rows are flushed to the file at most every
:data:`FLUSH_SECONDS` (0.5 ms a flush) and always at the end.  The file is a temporary of the writing
process (:mod:`shockflow.storage.atomic`'s pattern ``.<name>.pid<N>.<...>.tmp``): it is removed when the
log is committed, or when the run fails, and one left by a killed process is removed by the next command
that writes there.  A reader that holds it open keeps reading it after its removal (POSIX), so a monitor
sees the last rows and the status even when the log is committed between two of its reads.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

import h5py
import numpy as np

__all__ = ["LiveLog", "live_log", "live_logs_of", "LiveReader", "LIVE_FORMAT", "FLUSH_SECONDS",
           "TRAINING", "FINISHED", "STOPPED"]

LIVE_FORMAT = "shockflow-live-training-log"
LIVE_FORMAT_VERSION = 1
#: the longest a logged row waits in memory before it is flushed to the live file
FLUSH_SECONDS = 0.25
TRAINING, FINISHED, STOPPED = 0, 1, 2
_SUFFIX = ".live.tmp"


def _live_name(log_path: Path) -> str:
    return f".{log_path.name}.pid{os.getpid()}{_SUFFIX}"


def live_logs_of(log_path) -> list[Path]:
    """The live files of the training runs writing ``log_path`` now, newest first (normally at most one)."""
    log_path = Path(log_path)
    directory = log_path.parent if str(log_path.parent) else Path(".")
    prefix = f".{log_path.name}.pid"
    found = []
    try:
        entries = list(directory.iterdir())
    except OSError:
        return []
    for entry in entries:
        name = entry.name
        if name.startswith(prefix) and name.endswith(_SUFFIX) and name[len(prefix):-len(_SUFFIX)].isdigit():
            try:
                found.append((entry.stat().st_mtime_ns, entry))
            except FileNotFoundError:
                continue
    return [p for _, p in sorted(found, key=lambda t: t[0], reverse=True)]


class LiveLog:
    """The writer (module docstring): ``append`` each logged row, ``close`` with the run's status."""

    def __init__(self, log_path, columns, planned_steps: int, *, attrs=None, clock=time.monotonic):
        from shockflow.storage.atomic import ensure_inside

        log_path = Path(log_path)
        self.path = log_path.parent / _live_name(log_path)
        ensure_inside(self.path)
        self.columns = list(columns)
        self._clock = clock
        self._rows: list[tuple] = []
        self._written = 0
        self._last_flush = clock()
        self._file = h5py.File(self.path, "w", libver="latest")
        try:
            f = self._file
            f.attrs["format"] = LIVE_FORMAT
            f.attrs["format_version"] = LIVE_FORMAT_VERSION
            f.attrs["planned_steps"] = int(planned_steps)
            f.attrs["log"] = log_path.name
            for key, value in (attrs or {}).items():    # what the log will record of the run (shockflow.logs.agreement)
                f.attrs[key] = value
            self._series = {c: f.create_dataset(f"series/{c}", shape=(0,), maxshape=(None,), chunks=(4096,),
                                                dtype=np.int64 if c == "step" else np.float64)
                            for c in self.columns}
            self._count = f.create_dataset("rows", data=np.int64(0))
            self._status = f.create_dataset("status", data=np.int8(TRAINING))
            f.swmr_mode = True
        except BaseException:
            self._file.close()
            self.path.unlink(missing_ok=True)
            raise

    def append(self, row) -> None:
        """One logged row, its values in the order of ``columns``."""
        self._rows.append(tuple(row))
        if self._clock() - self._last_flush >= FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        if self._rows:
            k, n = len(self._rows), self._written
            values = np.array(self._rows, dtype=np.float64)
            for j, c in enumerate(self.columns):
                ds = self._series[c]
                ds.resize((n + k,))
                ds[n:] = values[:, j]
                ds.flush()
            self._written = n + k
            self._rows.clear()
            self._count[()] = self._written       # after the rows it counts: a reader never sees a row half written
            self._count.flush()
        self._last_flush = self._clock()

    def close(self, status: int = FINISHED) -> None:
        if self._file is None:
            return
        try:
            self.flush()
            self._status[()] = status
            self._status.flush()
        finally:
            self._file.close()
            self._file = None


class LiveReader:
    """A live file opened for reading (module docstring); ``read`` gives the complete rows' steps and losses."""

    def __init__(self, path):
        self.path = Path(path)
        self._file = h5py.File(self.path, "r", libver="latest", swmr=True)   # OSError while the writer sets up
        try:
            if self._file.attrs.get("format") != LIVE_FORMAT:
                raise OSError(f"{str(self.path)!r} is not a live training log")
            self.planned_steps = int(self._file.attrs["planned_steps"])
        except BaseException:
            self._file.close()
            raise

    def read(self) -> tuple[np.ndarray, np.ndarray, int]:
        """``(steps, loss, status)`` of the rows complete now."""
        f = self._file
        f["status"].refresh()
        status = int(f["status"][()])
        f["rows"].refresh()
        rows = int(f["rows"][()])
        out = []
        for c in ("step", "loss"):
            ds = f[f"series/{c}"]
            ds.refresh()
            out.append(np.asarray(ds[:rows], dtype=np.float64))
        return out[0], out[1], status

    def close(self) -> None:
        self._file.close()


@contextlib.contextmanager
def live_log(log_path, columns, planned_steps: int, attrs=None, *, with_commit: bool = True):
    """A :class:`LiveLog` beside ``log_path`` for the block (None when there is no log path): closed as
    :data:`STOPPED` if the block raises, as :data:`FINISHED` otherwise (unless closed before), and removed with the
    log's commit (:func:`shockflow.storage.atomic.discard_with_group`: at the end of the enclosing group of files
    committed together, or at once); ``with_commit=False``: at the end of the block (the log is written by the caller,
    perhaps in another process: ``shockflow run`` trains beside its prediction)."""
    from shockflow.storage.atomic import discard_with_group

    if log_path is None:
        yield None
        return
    live = LiveLog(log_path, columns, planned_steps, attrs=attrs)

    def discard():
        if with_commit:
            discard_with_group(live.path)
        else:
            live.path.unlink(missing_ok=True)

    try:
        yield live
    except BaseException:
        with contextlib.suppress(Exception):
            live.close(STOPPED)
        discard()
        raise
    live.close(FINISHED)
    discard()
