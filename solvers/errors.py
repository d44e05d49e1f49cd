"""The two ways a solve can fail, and the checks that raise them.

``SolverInputError`` is raised before any work is done, when an argument is wrong; its message
names the argument, what was expected and what was found.  ``BlowUpError`` is raised during a
solve when the state stops being finite (or a stability bound is violated); it carries the
step, the time and the cell where it happened, so a user can find the culprit.
"""

from __future__ import annotations

import difflib
import math

import numpy as np


class SolverInputError(ValueError):
    """An argument to a solver is invalid; raised before any work is done."""


class BlowUpError(FloatingPointError):
    """The solution stopped being finite (or left its stability bound) during a solve."""

    def __init__(self, what: str, step: int, time: float, cell: tuple[int, ...], value: float):
        self.what = what
        self.step = step
        self.time = time
        self.cell = cell
        self.value = value
        super().__init__(
            f"{what} became {value!r} at step {step} (t = {time:.6g}) in cell {cell}; "
            "reduce the CFL number or the time step, or check the initial data and coefficients"
        )


def require_choice(name: str, value: str, valid) -> str:
    """Return ``value`` if it is one of ``valid``; otherwise raise naming the valid choices."""
    valid = sorted(valid)
    if value not in valid:
        close = difflib.get_close_matches(str(value), valid, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise SolverInputError(f"{name}: unknown value {value!r}{hint}; valid choices are {', '.join(map(repr, valid))}")
    return value


def require_finite(name: str, array) -> np.ndarray:
    """Return ``array`` as float64 if every entry is finite; otherwise name the first bad entry."""
    a = np.asarray(array, dtype=np.float64)
    bad = ~np.isfinite(a)
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        raise SolverInputError(f"{name}: expected finite values, found {float(a[index])!r} at index {index}")
    return a


def require_positive(name: str, value, *, allow_zero: bool = False) -> float:
    """Return ``value`` as float if it is finite and > 0 (>= 0 with ``allow_zero``)."""
    v = float(value)
    ok = math.isfinite(v) and (v >= 0 if allow_zero else v > 0)
    if not ok:
        bound = ">= 0" if allow_zero else "> 0"
        raise SolverInputError(f"{name}: expected a finite number {bound}, found {value!r}")
    return v


def require_cfl(cfl) -> float:
    """The CFL number must lie in (0, 1]."""
    c = float(cfl)
    if not (math.isfinite(c) and 0.0 < c <= 1.0):
        raise SolverInputError(f"cfl: expected a number in (0, 1], found {cfl!r}")
    return c


def require_times(t0, times) -> np.ndarray:
    """Output times must be finite, strictly increasing and not before ``t0``."""
    t = require_finite("times", np.atleast_1d(np.asarray(times, dtype=np.float64)))
    if t.ndim != 1 or t.size == 0:
        raise SolverInputError(f"times: expected a non-empty 1-D sequence of output times, found shape {t.shape}")
    if t[0] < t0:
        raise SolverInputError(f"times: the first output time {float(t[0])!r} is before the start time {float(t0)!r}")
    steps = np.diff(t)
    if (steps <= 0).any():
        i = int(np.argmax(steps <= 0))
        raise SolverInputError(
            f"times: expected strictly increasing output times, found {float(t[i])!r} followed by {float(t[i + 1])!r} (index {i + 1})"
        )
    return t


def first_nonfinite(array: np.ndarray) -> tuple[tuple[int, ...], float] | None:
    """Index and value of the first non-finite entry of ``array``, or None if all are finite."""
    bad = ~np.isfinite(array)
    if not bad.any():
        return None
    index = tuple(int(i) for i in np.argwhere(bad)[0])
    return index, float(array[index])
