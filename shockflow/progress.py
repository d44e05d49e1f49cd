"""A small progress bar on stderr: fraction, rate, ETA; redraws throttled.

Decoupled from the stepping (py-pde's trackers): the training loop calls ``update(step)`` and
the bar decides whether to redraw. It is silent when ``enabled`` is False or when the stream
is not a terminal, so logs and test output stay clean.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["ProgressBar", "format_duration"]


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
