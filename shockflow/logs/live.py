"""The loss series of a training run while it runs: a live HDF5 file that ``shockflow monitor`` follows.

A shockflow training log (:mod:`shockflow.logs.hdf5`) is written whole, atomically, when training ends
(with ``run``, when the prediction and figures are done too).  While it trains, :func:`shockflow.training.train`
appends its logged rows to a second, *live* file beside the log:

    <out>/.<log name>.pid<pid>.live.tmp      HDF5 in single-writer/multiple-reader (SWMR) mode
        /                 attrs: format="shockflow-live-training-log", format_version=1, planned_steps, log,
                                 model_spec, data_spec, settings (JSON), seed: as the log will record them
        /series/<column>  (k,)   step (int64), loss, batch_loss, lr[, test_loss] (float64), growing
        /rows             ()     how many rows of the series are complete (written after them)
        /status           ()     0 training, 1 finished, 2 stopped (interrupted, failed, killed), 3 diverged
        /diverged         (2,)   the step and the non-finite loss where a run diverged (NaN otherwise)

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

__all__ = ["LiveLog", "live_log", "live_logs_of", "LiveReader", "LIVE_FORMAT", "FLUSH_SECONDS", "writer_alive",
           "writer_pid", "TRAINING", "FINISHED", "STOPPED", "DIVERGED"]

LIVE_FORMAT = "shockflow-live-training-log"
LIVE_FORMAT_VERSION = 1
#: the longest a logged row waits in memory before it is flushed to the live file
FLUSH_SECONDS = 0.25
TRAINING, FINISHED, STOPPED, DIVERGED = 0, 1, 2, 3
_SUFFIX = ".live.tmp"


def _live_name(log_path: Path) -> str:
    return f".{log_path.name}.pid{os.getpid()}{_SUFFIX}"


def writer_pid(path) -> int | None:
    """The process id in a live file's name (``.<log name>.pid<N>.live.tmp``), None for another name."""
    name = Path(path).name
    head, _, rest = name.rpartition(".pid")
    digits = rest[:-len(_SUFFIX)] if rest.endswith(_SUFFIX) else ""
    return int(digits) if head and digits.isdigit() else None


def writer_alive(path) -> bool:
    """Whether the process that writes the live file ``path`` still runs (a file left by a killed run: not)."""
    from shockflow.storage.atomic import pid_alive

    pid = writer_pid(path)
    return pid is not None and pid_alive(pid)


def live_logs_of(log_path) -> list[Path]:
    """The live files of the training runs writing ``log_path`` now, newest first (normally at most one); a file
    whose writing process has ended (a run killed before it could remove it) is none."""
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
        if name.startswith(prefix) and writer_alive(entry):   # (a name without a pid: writer_pid None, not alive)
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
            self._diverged = f.create_dataset("diverged", data=np.array([np.nan, np.nan]))   # (step, loss) there
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

    def close(self, status: int = FINISHED, diverged: tuple[float, float] | None = None) -> None:
        """Flush, set the run's status (``diverged``: the step and the non-finite loss of a run that blew up) and
        close; a second call does nothing."""
        if self._file is None:
            return
        try:
            self.flush()
            if diverged is not None:
                self._diverged[...] = np.asarray(diverged, dtype=np.float64)
                self._diverged.flush()
                status = DIVERGED
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
        """``(steps, loss, status)`` of the rows complete now; a file whose writer has ended while it still said
        :data:`TRAINING` (a run killed before it could say so) is :data:`STOPPED`."""
        f = self._file
        f["status"].refresh()
        status = int(f["status"][()])
        if status == TRAINING and not writer_alive(self.path):
            f["status"].refresh()
            status = int(f["status"][()]) or STOPPED
        f["rows"].refresh()
        rows = int(f["rows"][()])
        out = []
        for c in ("step", "loss"):
            ds = f[f"series/{c}"]
            ds.refresh()
            out.append(np.asarray(ds[:rows], dtype=np.float64))
        return out[0], out[1], status

    def diverged(self) -> tuple[float, float] | None:
        """The step and loss where the run diverged (status :data:`DIVERGED`), else None."""
        ds = self._file["diverged"]
        ds.refresh()
        step, value = (float(v) for v in ds[...])
        return None if np.isnan(step) else (step, value)

    def close(self) -> None:
        self._file.close()


@contextlib.contextmanager
def live_log(log_path, columns, planned_steps: int, attrs=None, *, with_commit: bool = True):
    """A :class:`LiveLog` beside ``log_path`` for the block (None when there is no log path): closed as
    :data:`STOPPED` (:data:`DIVERGED` with its step) if the block raises, else as :data:`FINISHED` once the log is
    committed (:func:`shockflow.storage.atomic.discard_with_group`: at the end of the enclosing group of files
    committed together, or at once; :data:`STOPPED` if the group fails: ``train`` refusing a curve too short for the
    detector, a full disk) and removed then; ``with_commit=False``: finished and removed at the end of the block (the
    log is written by the caller, perhaps in another process: ``shockflow run`` trains beside its prediction)."""
    from shockflow.storage.atomic import discard_with_group

    if log_path is None:
        yield None
        return
    live = LiveLog(log_path, columns, planned_steps, attrs=attrs)

    try:
        yield live
    except BaseException as exc:
        diverged = getattr(exc, "diverged_at", None)   # shockflow.training.TrainingDiverged: (step, loss)
        with contextlib.suppress(Exception):
            live.close(STOPPED, diverged)
        if with_commit:
            discard_with_group(live.path)
        else:
            live.path.unlink(missing_ok=True)
        raise
    if with_commit:   # finished once the log is committed: a command that fails after training (no log) stopped
        live.flush()
        discard_with_group(live.path, before=lambda committed: live.close(FINISHED if committed else STOPPED))
    else:
        live.close(FINISHED)
        live.path.unlink(missing_ok=True)
