"""Progress and messages: a bar or a status line for every phase of a run, and the ``shockflow`` logger.

:func:`progress` (a counted phase: training steps, charts, solver segments) and :func:`status`
(a phase without a count: building, extracting, writing, drawing) show

- in a terminal or a notebook: a ``tqdm.auto`` bar (a widget in Jupyter, a redrawn line in a terminal);
- anywhere else (a pipe, ``nohup``, a CI log): plain lines, one when the phase starts, one at most
  every :data:`LOG_INTERVAL` seconds while it runs (``each=True``: one per step, with its label
  and duration, for phases of few long steps such as the charts of an extraction) and one when it
  ends with its duration, so a log shows what ran and for how long;
- nothing when disabled (``--quiet``; ``--json`` keeps them: they are on stderr, its object on stdout).

Library diagnostics go through ``logging.getLogger("shockflow")``; :func:`configure_logging`
(called by the command line) sends them to stderr.  :class:`ProgressBar` is the earlier
terminal-only bar, kept for callers of its API.
"""

from __future__ import annotations

import functools
import logging
import sys
import time
from contextlib import contextmanager
from typing import TextIO

__all__ = ["ProgressBar", "format_duration", "progress", "status", "step_callback", "configure_logging",
           "LOG_INTERVAL", "logger"]

#: seconds between two plain progress lines of one phase in a non-terminal
LOG_INTERVAL = 10.0

logger = logging.getLogger("shockflow")


def configure_logging(quiet: bool = False, stream: TextIO | None = None) -> None:
    """Send the ``shockflow`` logger's records to stderr (warnings only when ``quiet``), once."""
    logger.setLevel(logging.WARNING if quiet else logging.INFO)
    for h in list(logger.handlers):
        if getattr(h, "_shockflow", False):
            logger.removeHandler(h)
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(logging.Formatter("shockflow: %(message)s"))
    handler._shockflow = True
    logger.addHandler(handler)
    logger.propagate = False


def redrawn(stream: TextIO | None = None) -> bool:
    """Whether progress on ``stream`` (default: stderr) is a bar redrawn in place (a terminal, a notebook) rather than
    lines (a pipe, a log file): two processes' lines interleave readably, two bars would overwrite each other."""
    return _interactive(sys.stderr if stream is None else stream)


def _interactive(stream) -> bool:
    isatty = getattr(stream, "isatty", None)
    if isatty is not None and isatty():
        return True
    try:  # a Jupyter kernel: tqdm.auto draws a widget
        from IPython import get_ipython

        shell = get_ipython()
        return shell is not None and "IPKernelApp" in getattr(shell, "config", {})
    except Exception:
        return False


class _Lines:
    """The plain-line rendering of a phase (see the module docstring)."""

    def __init__(self, total, desc: str, stream: TextIO, each: bool = False, overlapping: bool = False):
        self.total, self.desc, self.stream, self.each, self.overlapping = total, desc, stream, each, overlapping
        self.n = 0
        self.postfix = ""
        self._start = self._last = self._step = time.perf_counter()
        self._write(f"{desc}: started" + (f" (0/{total})" if total else ""))

    def _write(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()

    def update(self, k: int = 1) -> None:
        self.n += k
        now = time.perf_counter()
        if self.each and k > 0:
            count = f"{self.n}/{self.total}" if self.total else f"{self.n}"
            took = "" if self.overlapping else f" in {now - self._step:.1f} s"   # overlapping: the postfix says
            self._write(f"{self.desc}: {count}" + (f" {self.postfix}" if self.postfix else "")
                        + f"{took} ({format_duration(now - self._start)} elapsed)")
            self._step = self._last = now
        elif now - self._last >= LOG_INTERVAL:
            self._last = now
            count = f"{self.n}/{self.total} after" if self.total else "still running after"   # a status has no total
            self._write(f"{self.desc}: {count} {format_duration(now - self._start)}"
                        + (f" {self.postfix}" if self.postfix else ""))

    def set_postfix_str(self, text: str, refresh: bool = True) -> None:
        self.postfix = text

    def close(self, failed: bool = False) -> None:
        seconds = time.perf_counter() - self._start
        count = f" {self.n}/{self.total}" if self.total else ""
        word = ("stopped at" if count else "stopped") if failed else "done"
        self._write(f"{self.desc}: {word}{count} after {seconds:.1f} s" + (f" ({self.postfix})" if self.postfix else ""))


class _Silent:
    n = 0

    def update(self, k: int = 1) -> None:
        self.n += k

    def set_postfix_str(self, text: str, refresh: bool = True) -> None:
        pass

    def close(self, failed: bool = False) -> None:
        pass


@functools.lru_cache(maxsize=1)
def _bar_class():
    """``tqdm.auto``'s bar without its monitor thread (``monitor_interval = 0``): every phase updates its bar
    itself, and a thread left behind by the first bar would make the process threaded for good (the figure
    helper and the training beside a run fork only an unthreaded process: :func:`shockflow.forking.can_fork`).
    Where ipywidgets is not installed, tqdm's text bar: ``tqdm.auto`` would try the notebook's widget, print a
    ``TqdmWarning`` ("IProgress not found") into the notebook and fall back to that text bar anyway."""
    import importlib.util

    if importlib.util.find_spec("ipywidgets") is None:
        from tqdm.std import tqdm
    else:
        from tqdm.auto import tqdm

    return type("ShockflowBar", (tqdm,), {"monitor_interval": 0})


@contextmanager
def progress(total: int | None, desc: str, *, enabled: bool = True, stream: TextIO | None = None, unit: str = "it",
             each: bool = False, overlapping: bool = False):
    """A counted phase: ``with progress(n, "train") as bar: bar.update(); bar.set_postfix_str("loss ...")``.

    ``total`` may be None (not known yet: :func:`step_callback` sets it); ``each``: in a log, one
    line per step (its postfix and duration) instead of one every :data:`LOG_INTERVAL` seconds;
    ``overlapping``: the steps run at the same time (a sweep's tasks on a cluster), so a step's line gives no
    time since the previous one (its postfix says how long the step itself took)."""
    stream = stream if stream is not None else sys.stderr
    if not enabled:
        bar = _Silent()
    elif _interactive(stream):
        bar = _bar_class()(total=total, desc=desc, file=stream, unit=unit, leave=True, dynamic_ncols=True)
    else:
        bar = _Lines(None if unit == "phase" else total, desc, stream, each=each, overlapping=overlapping)
    try:
        yield bar
    except BaseException:
        bar.close(failed=True) if not hasattr(bar, "disable") else bar.close()
        raise
    bar.close()


@contextmanager
def status(desc: str, *, enabled: bool = True, stream: TextIO | None = None):
    """A phase without a count (``with status("write result"): ...``): a line when it starts and
    one with its duration when it ends (a one-step bar in a terminal or notebook)."""
    with progress(1, desc, enabled=enabled, stream=stream, unit="phase") as bar:
        yield bar
        bar.update(1)


def step_callback(bar):
    """``on_step(label, done, total)`` for a library hook (an extraction's ``on_chart``): sets the
    bar's total, shows ``label`` and advances the bar to ``done``."""

    def on_step(label: str, done: int, total: int) -> None:
        if getattr(bar, "total", None) != total:
            if hasattr(bar, "reset") and bar.n == 0:  # tqdm: reset(total) also sets a notebook widget's length
                start = bar.start_t
                bar.reset(total=total)
                bar.start_t = start                  # elapsed keeps counting from the phase's start
            else:
                bar.total = total
                if hasattr(bar, "refresh"):
                    bar.refresh()
        bar.set_postfix_str(f"chart {label}", refresh=False)
        bar.update(done - bar.n)

    return on_step


def format_duration(seconds: float) -> str:
    """Seconds as ``h:mm:ss`` or ``m:ss`` (``--:--`` when unknown)."""
    if seconds != seconds or seconds == float("inf") or seconds < 0:
        return "--:--"
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class ProgressBar:
    """``ProgressBar(total, label="train")``; ``update(done, info="loss 1.2e-3")``; ``close()``.

    Redraws at most every ``min_interval`` seconds (and always on the last step).
    """

    def __init__(self, total: int, label: str = "", *, enabled: bool = True,
                 stream: TextIO | None = None, min_interval: float = 0.2, width: int = 24):
        if total <= 0:
            raise ValueError(f"ProgressBar: total must be > 0, got {total}")
        self.total = int(total)
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = bool(enabled) and bool(isatty and isatty())
        self.min_interval = float(min_interval)
        self.width = int(width)
        self._start = time.perf_counter()
        self._last_draw = -float("inf")
        self._drawn = False

    def update(self, done: int, info: str = "") -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if done < self.total and now - self._last_draw < self.min_interval:
            return
        self._last_draw = now
        elapsed = now - self._start
        rate = done / elapsed if elapsed > 0 else float("nan")
        eta = (self.total - done) / rate if rate and rate == rate and rate > 0 else float("nan")
        frac = min(max(done / self.total, 0.0), 1.0)
        filled = int(round(frac * self.width))
        bar = "#" * filled + "-" * (self.width - filled)
        text = (f"\r{self.label} [{bar}] {done}/{self.total} {rate:,.1f} it/s "
                f"ETA {format_duration(eta)} {info}")
        self.stream.write(text.ljust(100)[:160])
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self.enabled and self._drawn:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn = False
