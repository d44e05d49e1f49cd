"""The figures of a run drawn by two processes at once (issue 23).

A run's three figures cost about as much as the rest of a warm run (matplotlib's import, then building and
rendering about thirty axes, all Python).  When the result is ready, :meth:`FigureWorker.draw` imports
matplotlib and warms its caches (fonts, text, mathtext) once, forks a helper, and the two processes take the
figures one at a time from a shared queue (a pipe of job numbers), largest first.  The fork comes after the run's
computing, not before it: this machine's two logical cores are hyperthreads of one core, and a helper that
imported matplotlib beside the run slowed the run's own phases by as much as it saved (measured at load 0.8:
figures 1.63 -> 0.82 s, the phases before them 1.68 -> 2.25 s).

Writes stay the run's: it reserves every figure's temporary file with :func:`~shockflow.storage.atomic_path`
(named with its own process id, so no other process takes them for a dead run's leftovers) and the helper only
fills them in; the run renames them, with the rest of its files when they are committed together.  Errors stay
clean: a figure that fails, in either process, is a :class:`FigureWorkerError` naming the figure and the reason
(the command line reports it as a failure of the run, exit 1); a helper that dies answers nothing and the error
says so.  On any exception (Ctrl-C included) the helper is killed and reaped before the temporaries are removed.
A helper is forked only on an idle core (:func:`shockflow.forking.idle_core`), with ``os.fork`` and no other Python thread
running (a notebook's kernel: forking a threaded process is unsafe); otherwise :meth:`FigureWorker.draw` draws in
the process, as :func:`~shockflow.figures.draw_result` does.
"""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path

from shockflow.figures.result import draw_result, figure_jobs
from shockflow.forking import can_fork, die_with_parent, idle_core, receive, send
from shockflow.storage import atomic_path

__all__ = ["FigureWorker", "FigureWorkerError"]


class FigureWorkerError(RuntimeError):
    """A figure could not be drawn in a helper process (the message names the figure and the reason)."""


def _can_fork() -> bool:
    """A fork is safe (:func:`shockflow.forking.can_fork`) and matplotlib is there."""
    import importlib.util

    return can_fork() and importlib.util.find_spec("matplotlib") is not None


class FigureWorker:
    """``FigureWorker().draw(result, out, ...)`` (see the module docstring); as a context manager it also reaps a
    helper left by an interrupted draw.  ``start``: None (default) forks a helper when a core is idle, True
    whenever it can fork, False never."""

    def __init__(self, start: bool | None = None):
        self.pid: int | None = None
        self._start = start

    def __enter__(self) -> FigureWorker:
        return self

    def __exit__(self, kind, value, tb) -> None:
        self._stop()

    def _stop(self) -> None:
        if self.pid is None:
            return
        pid, self.pid = self.pid, None
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)

    def draw(self, result, out, *, loss=None, format: str | None = None, dpi: float | None = None,
             stem: str | None = None, chain=()) -> tuple[Path, ...]:
        """The figures of :func:`~shockflow.figures.draw_result` (same arguments but ``progress``), drawn by this
        process and a helper (by this process alone when there is none); returns their paths."""
        jobs = figure_jobs(result, out, loss=loss, format=format, stem=stem, chain=chain)
        if len(jobs) < 2 or self._start is False or not _can_fork() or not (self._start or idle_core()):
            return draw_result(result, out, loss=loss, format=format, dpi=dpi, stem=stem, chain=chain)
        _warm()  # before the fork: both processes have matplotlib, its fonts and caches
        order = sorted(range(len(jobs)), key=lambda k: -_axes_estimate(jobs[k], result))
        with contextlib.ExitStack() as reserved:
            files = [str(reserved.enter_context(atomic_path(job.path))) for job in jobs]
            queue_r, queue_w = os.pipe()
            os.write(queue_w, bytes(order))
            os.close(queue_w)  # the queue ends when it is empty
            errors_r, errors_w = os.pipe()
            try:
                try:
                    parent, pid = os.getpid(), os.fork()
                except OSError:  # no process to be had (EAGAIN, ENOMEM): this process draws them all
                    pid = -1
                if pid == 0:  # the helper: never returns
                    _help(queue_r, errors_r, errors_w, jobs, files, dpi, parent)
                self.pid = pid if pid > 0 else None
                os.close(errors_w)
                errors = _take(queue_r, jobs, files, dpi)
                theirs = receive(errors_r) if pid > 0 else []
                if pid > 0:
                    os.waitpid(pid, 0)
                self.pid = None
            except BaseException:
                self._stop()  # nobody writes into the temporaries once they are removed
                raise
            finally:
                for fd in (queue_r, errors_r):
                    with contextlib.suppress(OSError):
                        os.close(fd)
            errors += ["the figure helper process ended without an answer"] if theirs is None else theirs
            if errors:
                raise FigureWorkerError("; ".join(errors))
        return tuple(job.path for job in jobs)


def _help(queue_r: int, errors_r: int, errors_w: int, jobs, files, dpi, parent: int) -> None:
    """The helper: take figures from the queue until it is empty, answer with the errors, leave."""
    code = 1
    try:
        os.close(errors_r)
        die_with_parent(parent)   # a Ctrl-C or SIGTERM ends it at once, and so does the run's end; the run cleans up
        send(errors_w, _take(queue_r, jobs, files, dpi))
        code = 0
    finally:
        os._exit(code)


def _warm() -> None:
    """Import matplotlib and draw a small log-scaled figure: the fonts, the text and mathtext caches a
    run's figures need are loaded once, before the fork."""
    import io

    from shockflow.figures.canvas import new_figure, write_figure

    fig = new_figure(2.0, 1.5, layout=None)
    ax = fig.subplots()
    ax.loglog([1.0, 1e3], [1.0, 1e-3], label="loss")
    ax.set_title("γ* = 0.25", fontsize=9)
    ax.legend(fontsize=7)
    write_figure(fig, io.BytesIO(), "png", 30)


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
        except Exception as exc:  # noqa: BLE001 - reported by FigureWorker.draw, which raises
            errors.append(f"drawing {job.path.name}: {type(exc).__name__}: {exc}")
