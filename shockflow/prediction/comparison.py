"""Predicted versus observed transitions: matching, relative errors, the median (issue 6).

**Matching.**  Predicted steps ``p_i`` and observed midpoint steps ``o_j`` (the half-learned points
of :func:`shockflow.prediction.transitions.find_transitions`) are paired one-to-one by minimising the total
``Σ |ln(p_i/o_j)|`` over pairs (``scipy.optimize.linear_sum_assignment``), where a pair is allowed
only if the two steps are within a factor ``max_ratio`` of each other (default 3): a prediction
off by more than that is reported as unmatched rather than paired with an unrelated drop.  The
logarithm makes the matching scale-free (a staircase's steps span decades).

**Errors.**  Each pair's relative error is ``|p − o| / o``; the case's figure of merit is the
median over the pairs (``None`` when nothing matched).

:func:`compare_log` runs the comparison on any loss curve — a shockflow training log (HDF5) or a
foreign CSV/JSON file of step and loss (:func:`shockflow.logs.read_loss_curve`) — against the
predictions saved in a result file by ``shockflow run``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

__all__ = ["Match", "Comparison", "match_transitions", "compare_log", "read_predictions", "read_loss_log",
           "ComparisonError"]


class ComparisonError(ValueError):
    """A log or a result file cannot be compared (no predictions, no transitions in the log)."""


@dataclass(frozen=True)
class Match:
    predicted_index: int
    observed_index: int
    predicted_step: float
    observed_step: float
    relative_error: float

    def as_dict(self) -> dict:
        return {"predicted_step": self.predicted_step, "observed_step": self.observed_step,
                "relative_error": self.relative_error}


@dataclass(frozen=True)
class Comparison:
    predicted: tuple[float, ...]
    observed: tuple[float, ...]
    matches: tuple[Match, ...]
    unmatched_predicted: tuple[int, ...] = field(default=())
    unmatched_observed: tuple[int, ...] = field(default=())

    @property
    def median_relative_error(self) -> float | None:
        if not self.matches:
            return None
        return float(np.median([m.relative_error for m in self.matches]))

    def table(self) -> str:
        lines = [f"{'predicted step':>15}  {'observed step':>14}  {'relative error':>14}"]
        for m in self.matches:
            lines.append(f"{m.predicted_step:15.1f}  {m.observed_step:14.1f}  {100 * m.relative_error:13.1f}%")
        for i in self.unmatched_predicted:
            lines.append(f"{self.predicted[i]:15.1f}  {'(none)':>14}  {'':>14}")
        for j in self.unmatched_observed:
            lines.append(f"{'(none)':>15}  {self.observed[j]:14.1f}  {'':>14}")
        med = self.median_relative_error
        lines.append("median relative error: " + ("n/a (nothing matched)" if med is None else f"{100 * med:.1f}%"))
        return "\n".join(lines)


def match_transitions(predicted: Sequence[float], observed: Sequence[float], *, max_ratio: float = 3.0) -> Comparison:
    """Pair predicted with observed steps one-to-one (module docstring)."""
    from scipy.optimize import linear_sum_assignment

    if not (max_ratio > 1):
        raise ValueError(f"max_ratio: expected a factor > 1, found {max_ratio!r}")
    p = np.asarray(predicted, dtype=np.float64).reshape(-1)
    o = np.asarray(observed, dtype=np.float64).reshape(-1)
    for name, a in (("predicted", p), ("observed", o)):
        if np.any(~np.isfinite(a) & ~np.isposinf(a)) or np.any(a < 0):
            raise ValueError(f"{name}: expected steps >= 0 (inf: never), found {a.tolist()}")
    matches = []
    used_p, used_o = set(), set()
    if p.size and o.size:
        with np.errstate(divide="ignore", invalid="ignore"):
            cost = np.abs(np.log(np.maximum(p[:, None], 1e-300) / np.maximum(o[None, :], 1e-300)))
        allowed = np.isfinite(cost) & (cost <= math.log(max_ratio))
        big = 1e6
        rows, cols = linear_sum_assignment(np.where(allowed, cost, big))
        for i, j in zip(rows, cols):
            if allowed[i, j]:
                matches.append(Match(int(i), int(j), float(p[i]), float(o[j]), float(abs(p[i] - o[j]) / o[j])))
                used_p.add(int(i))
                used_o.add(int(j))
    matches.sort(key=lambda m: m.observed_step)
    return Comparison(tuple(p.tolist()), tuple(o.tolist()), tuple(matches),
                      tuple(i for i in range(p.size) if i not in used_p),
                      tuple(j for j in range(o.size) if j not in used_o))


def read_predictions(path) -> np.ndarray:
    """The predicted steps saved in a result file (``/transitions/predicted/step``)."""
    from shockflow.storage import ResultFileError, read_result

    r = read_result(path)
    steps = r.transitions.get("predicted", {}).get("step")
    if steps is None or np.asarray(steps).size == 0:
        raise ResultFileError(f"result file {str(path)!r}: holds no predicted transitions "
                              f"(it is a {r.case_kind!r} result; `shockflow run` of a network case writes them)")
    return np.asarray(steps, dtype=np.float64)


def read_loss_log(path):
    """``(steps, loss)`` of a shockflow training log (.h5) or a CSV/JSON loss curve."""
    from shockflow.logs import read_loss_curve, read_training_log

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"LOG: file {str(path)!r} does not exist")
    record = read_training_log(path) if path.suffix.lower() in (".h5", ".hdf5") else read_loss_curve(path)
    return np.asarray(record.series["step"], dtype=np.float64), np.asarray(record.series["loss"], dtype=np.float64)


def compare_log(log_path, result_path, *, max_ratio: float = 3.0):
    """``(Comparison, transitions)``: the transitions of the log matched against the saved predictions.

    Raises :class:`ComparisonError` if the log shows no transitions."""
    from shockflow.prediction.transitions import find_transitions

    from shockflow.storage import ResultFileError

    try:
        predicted = read_predictions(result_path)
        if not np.all(np.isfinite(predicted)) or np.any(predicted < 0):
            raise ResultFileError(f"result file {str(result_path)!r}: /transitions/predicted/step: expected finite "
                                  f"steps >= 0, found {[float(v) for v in predicted[:5]]}")
    except (ComparisonError, ResultFileError, FileNotFoundError):
        raise
    except Exception as exc:  # any other reader failure (a damaged file): blame --prediction, not the log
        raise ComparisonError(f"--prediction {str(result_path)!r}: cannot read the predictions "
                              f"({type(exc).__name__}: {exc})") from None
    try:
        steps, loss = read_loss_log(log_path)
        transitions = find_transitions(steps, loss)
    except (ComparisonError, FileNotFoundError):
        raise
    except Exception as exc:
        raise ComparisonError(f"LOG {str(log_path)!r}: {str(exc) or type(exc).__name__}") from None
    if not transitions:
        raise ComparisonError(f"LOG {str(log_path)!r}: no transitions (plateau then sudden drop) found in its "
                              f"{steps.size} loss values; nothing to compare the {predicted.size} predictions with")
    return match_transitions(predicted, [t.midpoint for t in transitions], max_ratio=max_ratio), transitions
