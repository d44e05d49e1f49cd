"""The figures of a run drawn in helper processes while the run computes (issue 23).

A run's three figures cost about as much as the rest of a warm run (matplotlib's import, then building
and rendering about thirty axes, all Python).  :class:`FigureWorker` forks a helper at the start of the
run, which imports matplotlib and warms its caches while the parent trains and predicts; when the result
is ready the parent hands it over (pickled through a pipe) and the helper draws the figures with a second
process forked from itself, the two taking the figures one at a time from a shared queue (a pipe of job
numbers), largest first, while the parent waits.

Writes stay the parent's: it reserves every figure's temporary file with
:func:`~shockflow.storage.atomic_path` (named with its own process id, so no other process takes them for
a dead run's leftovers) and the helpers only fill them in; the parent renames them, with the rest of the
run's files when they are committed together.  Errors stay clean: a helper that fails answers with the
figure and the reason, and the parent raises :class:`FigureWorkerError` naming both (the command line
reports it as a failure of the run, exit 1); a helper that dies answers nothing and the parent says so.
On any exception in the parent (Ctrl-C included) the helpers are stopped and reaped before the
temporaries are removed.  Without ``os.fork``, without an idle core (:func:`_idle_core`) or in a process with
other Python threads running (a notebook's kernel: forking a threaded process is unsafe) there is no helper and
:meth:`FigureWorker.draw` draws in the process, as :func:`~shockflow.figures.draw_result` does.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import struct
import threading
from pathlib import Path

from shockflow.figures.result import draw_result, figure_jobs
from shockflow.storage import atomic_path

__all__ = ["FigureWorker", "FigureWorkerError"]


class FigureWorkerError(RuntimeError):
    """A figure could not be drawn in a helper process (the message names the figure and the reason)."""


def _can_fork() -> bool:
    """``os.fork`` exists, no other Python thread runs (forking a threaded process is unsafe) and matplotlib is there."""
    import importlib.util

    return hasattr(os, "fork") and threading.active_count() == 1 and importlib.util.find_spec("matplotlib") is not None


def _idle_core() -> bool:
    """A helper pays only on a core nobody else uses (the rule of the solvers' threads,
    :mod:`solvers.conservation.thread_policy`): on a busy machine the kernel shares one session's time among its
    processes (autogroup scheduling), so a second process there adds its start-up and gains nothing."""
    from solvers.conservation.thread_policy import competing_tasks, usable_cores

    return usable_cores() - 1 - competing_tasks() >= 1


class FigureWorker:
    """``with FigureWorker() as worker: ... worker.draw(result, out, ...)`` (see the module docstring).
    ``start``: None (default) forks a helper when a core is idle, True whenever it can fork, False never."""

    def __init__(self, start: bool | None = None):
        self.pid: int | None = None
        self._jobs = self._answers = -1
        self._start = start

    def __enter__(self) -> FigureWorker:
        if self._start is not False and _can_fork() and (self._start or _idle_core()):
            jobs_r, jobs_w = os.pipe()
            answers_r, answers_w = os.pipe()
            pid = os.fork()
            if pid == 0:  # the helper: never returns
                os.close(jobs_w)
                os.close(answers_r)
                _serve(jobs_r, answers_w)
            os.close(jobs_r)
            os.close(answers_w)
            self.pid, self._jobs, self._answers = pid, jobs_w, answers_r
        return self

    def __exit__(self, kind, value, tb) -> None:
        self._stop(kill=kind is not None)

    def _stop(self, *, kill: bool) -> None:
        if self.pid is None:
            return
        pid, self.pid = self.pid, None
        with contextlib.suppress(OSError):
            os.close(self._jobs)  # no job: the helper leaves
        if kill:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)  # it stops its own helper first (_serve)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
        with contextlib.suppress(OSError):
            os.close(self._answers)

    def draw(self, result, out, *, loss=None, format: str | None = None, dpi: float | None = None,
             stem: str | None = None, chain=()) -> tuple[Path, ...]:
        """The figures of :func:`~shockflow.figures.draw_result` (same arguments but ``progress``), drawn by the
        helpers (in this process when there are none); returns their paths.  One call per worker."""
        if self.pid is None:
            return draw_result(result, out, loss=loss, format=format, dpi=dpi, stem=stem, chain=chain)
        jobs = figure_jobs(result, out, loss=loss, format=format, stem=stem, chain=chain)
        with contextlib.ExitStack() as reserved:
            temporaries = [reserved.enter_context(atomic_path(job.path)) for job in jobs]
            try:
                _send(self._jobs, {"result": result, "out": str(out), "loss": loss, "format": format, "dpi": dpi,
                                   "stem": stem, "chain": list(chain), "files": [str(t) for t in temporaries]})
                errors = _receive(self._answers)
            except BaseException:
                self._stop(kill=True)  # nobody writes into the temporaries once they are removed
                raise
            self._stop(kill=False)
            if errors is None:
                raise FigureWorkerError("the figure process ended without an answer; no figure was written")
            if errors:
                raise FigureWorkerError("; ".join(errors))
        return tuple(job.path for job in jobs)


# -- the helper's side --------------------------------------------------------------------------------------
def _serve(jobs_r: int, answers_w: int) -> None:
    """The helper: import and warm matplotlib, wait for the job, draw it with a second process, answer."""
    code, second = 1, [None]

    def stop(signum, frame):
        raise SystemExit(1)

    try:
        signal.signal(signal.SIGTERM, stop)
        _warm()
        spec = _receive(jobs_r)
        if spec is not None:
            _send(answers_w, _draw_shared(spec, second))
        code = 0
    except BaseException as exc:  # noqa: BLE001 - answered, never raised past the fork
        with contextlib.suppress(BaseException):
            _send(answers_w, [f"the figure process failed: {type(exc).__name__}: {exc}"])
    finally:
        if second[0] is not None:
            with contextlib.suppress(BaseException):
                os.kill(second[0], signal.SIGKILL)
                os.waitpid(second[0], 0)
        os._exit(code)


def _warm() -> None:
    """Import matplotlib and draw a small log-scaled figure: the fonts, the text and mathtext caches a
    run's figures need are loaded before the result arrives."""
    import io

    from shockflow.figures.canvas import new_figure, write_figure

    fig = new_figure(2.0, 1.5, layout=None)
    ax = fig.subplots()
    ax.loglog([1.0, 1e3], [1.0, 1e-3], label="loss")
    ax.set_title("γ* = 0.25", fontsize=9)
    ax.legend(fontsize=7)
    write_figure(fig, io.BytesIO(), "png", 30)


def _draw_shared(spec: dict, second: list) -> list[str]:
    """Draw every job of ``spec`` into its file, this process and one forked from it taking jobs from one queue;
    returns the errors (empty: all drawn)."""
    jobs = figure_jobs(spec["result"], spec["out"], loss=spec["loss"], format=spec["format"], stem=spec["stem"],
                       chain=spec["chain"])
    files = spec["files"]
    order = sorted(range(len(jobs)), key=lambda k: -_axes_estimate(jobs[k], spec["result"]))
    queue_r, queue_w = os.pipe()
    os.write(queue_w, bytes(order))
    os.close(queue_w)  # the queue ends when it is empty
    errors_r, errors_w = os.pipe()
    pid = os.fork() if len(jobs) > 1 else -1
    if pid == 0:
        os.close(errors_r)
        code = 1
        try:
            _send(errors_w, _take(queue_r, jobs, files, spec["dpi"]))
            code = 0
        finally:
            os._exit(code)
    second[0] = pid if pid > 0 else None
    os.close(errors_w)
    errors = _take(queue_r, jobs, files, spec["dpi"])
    if pid > 0:
        theirs = _receive(errors_r)
        os.waitpid(pid, 0)
        second[0] = None
        errors += ["the second figure process ended without an answer"] if theirs is None else theirs
    os.close(errors_r)
    os.close(queue_r)
    return errors


def _axes_estimate(job, result) -> int:
    """Largest first: the chart figure has two axes per chart, the landscape one, the loss figure two."""
    charts = len(result.charts) if result.charts else 1
    return {"chart figure": 2 * charts, "landscape figure": charts}.get(job.label, 2)


def _take(queue_r: int, jobs, files, dpi) -> list[str]:
    from shockflow.figures.canvas import write_figure

    errors = []
    while True:
        taken = os.read(queue_r, 1)
        if not taken:
            return errors
        job = jobs[taken[0]]
        try:
            write_figure(job.draw(), files[taken[0]], job.format, dpi)
        except Exception as exc:  # noqa: BLE001 - reported to the parent, which raises
            errors.append(f"drawing {job.path.name}: {type(exc).__name__}: {exc}")


# -- messages: a length, then a pickle ---------------------------------------------------------------------
def _send(fd: int, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(struct.pack("<Q", len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def _receive(fd: int):
    """The next message, or None at the end of the pipe (the other side closed it or died)."""
    head = _read_exactly(fd, 8)
    if head is None:
        return None
    body = _read_exactly(fd, struct.unpack("<Q", head)[0])
    return None if body is None else pickle.loads(body)


def _read_exactly(fd: int, n: int) -> bytes | None:
    parts, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)
