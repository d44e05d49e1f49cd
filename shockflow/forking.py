"""Work done by a forked process beside this one: when it pays, and how answers cross (issue 23).

Two users: the figures of a run (:mod:`shockflow.figures.worker`: two processes share the drawing) and the
training of ``shockflow run`` (:class:`Beside`: the network trains in a second process while this one makes the
prediction, which never needs the training: docs/prediction.md).

A second process pays only on a core nobody else uses (:func:`idle_core`, the rule of the solvers' threads,
:mod:`solvers.conservation.thread_policy`): on a busy machine the kernel shares one session's time among its
processes, so a fork there adds its start-up and gains nothing.  Forking needs ``os.fork`` and no other Python
thread running (:func:`can_fork`: forking a threaded process, a notebook's kernel, is unsafe).  Answers cross as
messages on a pipe (:func:`send`, :func:`receive`: a length, then a pickle).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import struct
import sys
import threading
import traceback

__all__ = ["Beside", "can_fork", "die_with_parent", "idle_core", "send", "receive"]


def can_fork() -> bool:
    """``os.fork`` exists and no other Python thread runs."""
    return hasattr(os, "fork") and threading.active_count() == 1


def idle_core() -> bool:
    """A core that neither this process nor any other uses now."""
    from solvers.conservation.thread_policy import competing_tasks, usable_cores

    return usable_cores() - 1 - competing_tasks() >= 1


class Beside:
    """``function(*args, **kwargs)`` computed in a forked process while the caller goes on; :meth:`result` is its
    value, or raises its exception here.  Use it as a context manager: leaving the block early (an exception,
    Ctrl-C) kills and reaps the process.

    ``start``: None (default) forks when a core is idle (:func:`idle_core`), True whenever it can fork, False
    never.  Without a fork the function runs at once, in this process, inside the constructor: the caller's order
    is then the serial one (its exception raised there).  ``function`` must be deterministic and write nothing:
    where the process cannot answer (it died, or its exception does not survive pickling), :meth:`result` calls
    ``function`` here again, which gives the same value or raises the real exception.

    ``threads``: the BLAS threads the process may use (``SHOCKFLOW_BLAS_THREADS`` in it, unless the user chose
    the count: :mod:`shockflow.blas_threads`); its default 1 leaves the other core to the caller.
    ``before_fork``: called just before the fork only (set-up both processes need, done once: for example
    :func:`solvers.compiled_code.prepare_compiled_code`)."""

    def __init__(self, function, *args, start: bool | None = None, threads: int = 1, before_fork=None, **kwargs):
        self._call = (function, args, kwargs)
        self.pid: int | None = None
        self._answer_r: int | None = None
        self._done = False
        self._value = None
        self.forked = False   # True: the function runs in a second process (False: it ran here, in the constructor)
        self._status = None   # the process's wait status, once check() has reaped it
        if start is False or not can_fork() or not (start or idle_core()):
            self._value, self._done = function(*args, **kwargs), True
            return
        if before_fork is not None:
            before_fork()
        read, write = os.pipe()
        for stream in (sys.stdout, sys.stderr):   # nothing buffered is written twice
            with contextlib.suppress(Exception):
                stream.flush()
        parent = os.getpid()
        try:
            pid = os.fork()
        except OSError:   # no process to be had (EAGAIN, ENOMEM): compute here
            os.close(read), os.close(write)
            self._value, self._done = function(*args, **kwargs), True
            return
        if pid == 0:   # the process beside: never returns
            os.close(read)
            _answer(write, function, args, kwargs, threads, parent)
        os.close(write)
        self.pid, self._answer_r, self.forked = pid, read, True

    def check(self) -> None:
        """Without waiting: where the process beside has ended, take its answer now (its exception is raised here, so
        that a training that fails early stops the caller's work early); else nothing.  The caller calls it between
        its own phases."""
        if self._done or self.pid is None:
            return
        try:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            pid, status = self.pid, None
        if pid != 0:
            self._status = status
            self.result()

    def result(self):
        """The function's value (waits for the process beside); its exception is raised here."""
        if self._done:
            return self._value
        try:
            message = receive(self._answer_r)
        except BaseException:   # interrupted while waiting (a signal to this process only): the process beside ends too
            self._reap(kill=True)
            raise
        status = self._reap()
        if message is not None and message[0] == "value":
            self._value, self._done = message[1], True
            return self._value
        if message is not None and message[0] == "raised":
            exc, frames = message[1], message[2]
            exc.raised_in = frames   # its traceback's (file, line, function), outermost first: the command line
            where = f"{frames[-1][0]}:{frames[-1][1]} in {frames[-1][2]}" if frames else "its call"   # names the place
            exc.add_note(f"(raised in the process beside, {where})")
            raise exc
        function, args, kwargs = self._call   # no answer: the same work here, said
        from shockflow.progress import logger

        why = ("its exception does not cross between processes" if message is not None else
               f"it ended by signal {os.WTERMSIG(status)}" if status is not None and os.WIFSIGNALED(status) else
               "it ended without an answer")
        logger.warning("the process beside did not answer (%s): its work is done again here", why)
        self._value, self._done = function(*args, **kwargs), True
        return self._value

    def _reap(self, kill: bool = False) -> int | None:
        """Close the pipe, kill the process if asked, wait for it; its wait status (None: none to wait for)."""
        if self._answer_r is not None:
            with contextlib.suppress(OSError):
                os.close(self._answer_r)
            self._answer_r = None
        if self.pid is None:
            return None
        pid, self.pid = self.pid, None
        if self._status is not None:   # reaped by check()
            return self._status
        if kill:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        try:
            return os.waitpid(pid, 0)[1]
        except ChildProcessError:
            return None

    def __enter__(self) -> Beside:
        return self

    def __exit__(self, kind, value, tb) -> None:
        self._reap(kill=True)


def die_with_parent(parent: int) -> None:
    """In a forked process: end it when ``parent`` ends, however (Linux: ``PR_SET_PDEATHSIG``; a parent killed by
    SIGTERM or SIGKILL cannot kill its children itself), and at once if it has already; the parent's signal
    handlers are replaced by the defaults (a Ctrl-C or a SIGTERM ends it; the parent cleans up)."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)   # PR_SET_PDEATHSIG = 1
    if os.getppid() != parent:   # the parent ended before the request took effect
        os._exit(1)


def _answer(fd: int, function, args, kwargs, threads: int, parent: int) -> None:
    """The process beside: compute, answer, leave (``os._exit``: no handler of the parent's runs twice)."""
    code = 1
    try:
        die_with_parent(parent)
        from shockflow.blas_threads import USER_VARIABLES

        if not any(os.environ.get(v, "").strip() for v in ("SHOCKFLOW_BLAS_THREADS", *USER_VARIABLES)):
            os.environ["SHOCKFLOW_BLAS_THREADS"] = str(threads)
        try:
            message = ("value", function(*args, **kwargs))
        except Exception as exc:   # noqa: BLE001 - raised again by the caller
            frames = [(f.filename, int(f.lineno or 0), f.name) for f in traceback.extract_tb(exc.__traceback__)]
            message = ("raised", exc, frames)
            try:
                pickle.loads(pickle.dumps(exc, protocol=pickle.HIGHEST_PROTOCOL))
            except Exception:   # noqa: BLE001 - it does not cross: the caller computes again
                message = ("unpicklable",)
        send(fd, message)
        code = 0
    finally:
        os._exit(code)


# -- messages: a length, then a pickle ---------------------------------------------------------------------
def send(fd: int, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(struct.pack("<Q", len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def receive(fd: int):
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
