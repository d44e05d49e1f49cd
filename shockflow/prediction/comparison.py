"""Predicted versus true transitions: one-to-one matching, recall, precision, the all-in median (issue 17).

**Truth.**  The true transitions of a run are, for shockflow's own runs, each chart's
half-learned step read from the parameter snapshots (:mod:`shockflow.prediction.truth`,
``truth = "parameters"``); for a foreign log, the transitions the loss-curve detector finds
(:func:`shockflow.prediction.transitions.find_transitions`, ``truth = "loss"``).

**Matching.**  Predicted steps ``p_i`` and true steps ``o_j`` are paired one-to-one by minimising
``Σ |ln(p_i/o_j)|`` (``scipy.optimize.linear_sum_assignment``), a pair being allowed only if
``|ln(p_i/o_j)| ≤ ln(max_ratio)`` (default 2): the window is symmetric in log, a prediction a factor 2
early counts exactly as one a factor 2 late.  Forbidden pairs cost far more than any allowed one, so
the matching first maximises the number of pairs and then minimises their total log distance.

**Score** (docs/theory.md §6 "Scoring"):

* ``recall`` = matched true transitions / all true transitions;
* ``precision`` = matched predictions / predictions within the run (a prediction beyond the
  training horizon, or ``inf`` = "no transition", is listed under ``beyond_run`` and is neither a
  hit nor a false alarm: the run cannot show it; it is never matched, even to a true transition
  within a factor 2 of it; ``shockflow run --json`` and the result file flag it per prediction as
  ``beyond_horizon``);
* ``median_relative_error_all`` = the median over ALL true transitions of ``min(|p − o|/o, 1)`` for a
  matched one and ``1`` for a miss; a miss always costs at least as much as any match, so moving
  a prediction further away never improves it, and a prediction that leaves transitions out
  cannot score 0;
* ``median_relative_error_matched`` = the median of ``|p − o|/o`` over the matched pairs only
  (reported for diagnosis, never on its own);
* ``unmatched_predicted`` / ``unmatched_observed``: the steps left without a partner.

``median_relative_error`` (the key of the JSON output and the result file since issue 6) is the
all-in figure.

**By chart.**  The matching pairs steps, not modes: with the parameter truth a prediction of one chart can be
paired with the true transition of another (two modes predicted in the wrong order, each near the other's step).
Where the charts of both are known, each :class:`Match` carries them, ``cross_chart_matches`` counts the pairs
whose charts differ, and ``median_relative_error_by_chart`` is the all-in median with every charted true
transition scored against its own chart's prediction (``min(|p − o|/o, 1)``; 1 where that chart predicts
nothing within the run or nothing within the window) and every uncharted one as the matching scores it.  It is
reported beside the matching's figures, never instead of them: on a run whose modes come in the predicted order it
is the all-in median.

**Drops no chart explains.**  The parameter truth has a transition only where a chart is; a run can also
drop where no chart looks (a committee's units specialising after the escape from the origin).  For
``shockflow run`` the true transitions are therefore the charts' half-learned steps *and* every loss-curve
detection farther than a factor ``max_ratio`` from each of them (:func:`with_uncharted_drops`; chart
``UNCHARTED``): a drop no chart's mode explains is a true transition, missed unless a prediction meets it.
A detection within the factor of a chart's step is that chart's (one drop the detector splits in two,
the sharp end of a deep chain's escape, is not a second transition).

:func:`compare_log` runs the comparison on any loss curve — a shockflow training log (HDF5) or a
foreign CSV/JSON file of step and loss (:func:`shockflow.logs.read_loss_curve`) — against the
predictions saved in a result file by ``shockflow run``.  Its truth is ``"parameters"`` for the log of the
result's own run (it has the parameter snapshots ``run`` read the truth from), else ``"loss"``; the
comparison's ``note`` says which and why, and the loss figures are reported beside the parameter ones.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

__all__ = ["Match", "Comparison", "match_transitions", "compare_log", "read_predictions", "read_loss_log",
           "ComparisonError", "DEFAULT_MAX_RATIO", "TRUTHS", "write_score", "read_score",
           "observed_steps", "with_uncharted_drops", "UNCHARTED"]

#: the matching window: a prediction within this factor of a true step (either side) can be its partner
DEFAULT_MAX_RATIO = 2.0
#: where the true transitions come from
TRUTHS = ("parameters", "loss")
#: the chart of a true transition that no chart explains: a loss drop far from every chart's half-learned step
UNCHARTED = "(uncharted)"


class ComparisonError(ValueError):
    """A log or a result file cannot be compared (no predictions, no transitions in the log)."""


@dataclass(frozen=True)
class Match:
    predicted_index: int
    observed_index: int
    predicted_step: float
    observed_step: float
    relative_error: float
    predicted_chart: str | None = None    # the chart of the prediction and of the true transition, where known
    true_chart: str | None = None

    def as_dict(self) -> dict:
        charts = {} if self.predicted_chart is None and self.true_chart is None else \
            {"predicted_chart": self.predicted_chart, "true_chart": self.true_chart}
        return {"predicted_step": self.predicted_step, "observed_step": self.observed_step,
                "relative_error": self.relative_error, **charts}


def _median(values) -> float | None:
    return float(np.median(values)) if len(values) else None


@dataclass(frozen=True)
class Comparison:
    """Predicted against true steps (module docstring).  ``observed`` are the true steps."""

    predicted: tuple[float, ...]
    observed: tuple[float, ...]
    matches: tuple[Match, ...]
    unmatched_predicted: tuple[int, ...] = field(default=())
    unmatched_observed: tuple[int, ...] = field(default=())
    truth: str = "loss"
    max_ratio: float = DEFAULT_MAX_RATIO
    horizon: float = math.inf
    beyond_run: tuple[int, ...] = field(default=())
    true_charts: tuple[str, ...] = field(default=())      # the chart of each true step (truth "parameters")
    predicted_charts: tuple[str, ...] = field(default=())  # the chart of each prediction, where known
    note: str = ""                                        # where the truth came from, or why not the parameters
    against_loss: "Comparison | None" = None              # the same predictions against the loss detections

    @property
    def recall(self) -> float | None:
        """Matched true transitions over all true transitions (None: the run shows none)."""
        return len(self.matches) / len(self.observed) if self.observed else None

    @property
    def precision(self) -> float | None:
        """Matched predictions over the predictions within the run (None: no prediction within it)."""
        within = len(self.predicted) - len(self.beyond_run)
        return len(self.matches) / within if within else None

    @property
    def median_relative_error_all(self) -> float | None:
        """Median over every true transition: min(relative error, 1) if matched, 1 if missed."""
        if not self.observed:
            return None
        errors = np.ones(len(self.observed))
        for m in self.matches:
            errors[m.observed_index] = min(m.relative_error, 1.0)
        return float(np.median(errors))

    @property
    def median_relative_error_matched(self) -> float | None:
        return _median([m.relative_error for m in self.matches])

    @property
    def median_relative_error(self) -> float | None:
        """The all-in figure (issue 17; before it, the median over matched pairs only)."""
        return self.median_relative_error_all

    @property
    def _charted(self) -> bool:
        return len(self.true_charts) == len(self.observed) and len(self.predicted_charts) == len(self.predicted) \
            and bool(self.observed)

    @property
    def cross_chart_matches(self) -> int | None:
        """Matched pairs whose prediction is of another chart than their true transition (None: charts not known)."""
        if not self._charted:
            return None
        return sum(1 for m in self.matches if self.true_charts[m.observed_index] != UNCHARTED
                   and self.predicted_charts[m.predicted_index] != self.true_charts[m.observed_index])

    @property
    def median_relative_error_by_chart(self) -> float | None:
        """The all-in median with each charted true transition scored against its own chart's prediction (module
        docstring, "By chart"; None: charts not known)."""
        if not self._charted:
            return None
        window = math.log(self.max_ratio) * (1 + 1e-12)
        own = {c: p for c, p in zip(self.predicted_charts, self.predicted) if p <= self.horizon}
        matched = {m.observed_index: m.relative_error for m in self.matches}
        errors = []
        for j, (chart, o) in enumerate(zip(self.true_charts, self.observed)):
            if chart == UNCHARTED:
                errors.append(min(matched.get(j, 1.0), 1.0))
                continue
            p = own.get(chart)
            near = p is not None and p > 0 and abs(math.log(p / o)) <= window
            errors.append(min(abs(p - o) / o, 1.0) if near else 1.0)
        return float(np.median(errors))

    def score(self) -> dict:
        """The ``score`` object of the JSON output and the result file."""
        return {"recall": self.recall, "precision": self.precision,
                "median_relative_error_all": self.median_relative_error_all,
                "median_relative_error_matched": self.median_relative_error_matched,
                "unmatched_predicted": [self.predicted[i] for i in self.unmatched_predicted if i not in self.beyond_run],
                "unmatched_observed": [self.observed[j] for j in self.unmatched_observed],
                "beyond_run": [self.predicted[i] for i in self.beyond_run],
                "truth": self.truth, "max_ratio": self.max_ratio, **({"truth_note": self.note} if self.note else {}),
                **({"median_relative_error_by_chart": self.median_relative_error_by_chart,
                    "cross_chart_matches": self.cross_chart_matches} if self._charted else {})}

    def table(self) -> str:
        charted = self._charted
        lines = [f"{'predicted step':>15}  {'true step':>14}  {'relative error':>14}" +
                 (f"  {'charts (predicted / true)'}" if charted else "")]
        for m in self.matches:
            lines.append(f"{m.predicted_step:15.1f}  {m.observed_step:14.1f}  {100 * m.relative_error:13.1f}%" +
                         (f"  {m.predicted_chart} / {m.true_chart}" +
                          ("  (another chart's)" if m.true_chart != UNCHARTED and m.predicted_chart != m.true_chart
                           else "") if charted else ""))
        for i in self.unmatched_predicted:
            note = "(beyond run)" if i in self.beyond_run else "(none)"
            lines.append(f"{self.predicted[i]:15.1f}  {note:>14}  {'':>14}")
        for j in self.unmatched_observed:
            lines.append(f"{'(none)':>15}  {self.observed[j]:14.1f}  {'miss = 100%':>14}")

        def pct(v):
            return "n/a" if v is None else f"{100 * v:.1f}%"

        lines.append(f"truth: {self.truth}; recall {pct(self.recall)}, precision {pct(self.precision)} "
                     f"(window: a factor {self.max_ratio:g} either side)")
        lines.append(f"median relative error, all true transitions (a miss = 100%): {pct(self.median_relative_error_all)}"
                     f"; matched pairs only: {pct(self.median_relative_error_matched)}")
        if charted and self.cross_chart_matches:
            lines.append(f"{self.cross_chart_matches} matched pair(s) pair a prediction with another chart's true "
                         f"transition; each chart against its own: median relative error (all) "
                         f"{pct(self.median_relative_error_by_chart)}")
        if self.note:
            lines.append(f"truth: {self.note}")
        if self.against_loss is not None:
            a = self.against_loss
            lines.append(f"against the loss detections instead: recall {pct(a.recall)}, precision {pct(a.precision)}, "
                         f"median relative error (all) {pct(a.median_relative_error_all)}")
        return "\n".join(lines)


def match_transitions(predicted: Sequence[float], observed: Sequence[float], *, max_ratio: float = DEFAULT_MAX_RATIO,
                      truth: str = "loss", horizon: float = math.inf, predicted_charts: Sequence[str] = (),
                      true_charts: Sequence[str] = ()) -> Comparison:
    """Pair predicted with true steps one-to-one and score them (module docstring).

    ``horizon``: the last step of the run; predictions beyond it (or ``inf``) are ``beyond_run``.
    ``predicted_charts``, ``true_charts``: the chart of each prediction and true step, where known (the figures
    "by chart", module docstring; the matching itself never reads them)."""
    from scipy.optimize import linear_sum_assignment

    if not (max_ratio > 1):
        raise ValueError(f"max_ratio: expected a factor > 1, found {max_ratio!r}")
    if truth not in TRUTHS:
        raise ValueError(f"truth: expected one of {list(TRUTHS)}, found {truth!r}")
    p = np.asarray(predicted, dtype=np.float64).reshape(-1)
    o = np.asarray(observed, dtype=np.float64).reshape(-1)
    for name, a in (("predicted", p), ("observed", o)):
        if np.any(~np.isfinite(a) & ~np.isposinf(a)) or np.any(a < 0):
            raise ValueError(f"{name}: expected steps >= 0 (inf: never), found {a.tolist()}")
    if np.any(~np.isfinite(o)):
        raise ValueError(f"observed: expected finite steps, found {o.tolist()}")
    matches = []
    used_p, used_o = set(), set()
    if p.size and o.size:
        with np.errstate(divide="ignore", invalid="ignore"):
            cost = np.abs(np.log(np.maximum(p[:, None], 1e-300) / np.maximum(o[None, :], 1e-300)))
        allowed = np.isfinite(cost) & (cost <= math.log(max_ratio) * (1 + 1e-12))
        allowed &= (p <= horizon)[:, None]   # a prediction beyond the run is reported as such, never matched
        big = 1e6 * (1.0 + float(np.max(np.where(allowed, cost, 0.0))))
        rows, cols = linear_sum_assignment(np.where(allowed, cost, big))
        for i, j in zip(rows, cols):
            if allowed[i, j]:
                matches.append(Match(int(i), int(j), float(p[i]), float(o[j]), float(abs(p[i] - o[j]) / o[j])))
                used_p.add(int(i))
                used_o.add(int(j))
    pc, tc = tuple(str(c) for c in predicted_charts), tuple(str(c) for c in true_charts)
    for name, charts, steps in (("predicted_charts", pc, p), ("true_charts", tc, o)):
        if charts and len(charts) != steps.size:
            raise ValueError(f"{name}: expected one chart per step ({steps.size}), found {len(charts)}")
    if pc and tc:
        from dataclasses import replace

        matches = [replace(m, predicted_chart=pc[m.predicted_index], true_chart=tc[m.observed_index]) for m in matches]
    matches.sort(key=lambda m: m.observed_step)
    beyond = tuple(i for i in range(p.size) if not (p[i] <= horizon))
    return Comparison(tuple(p.tolist()), tuple(o.tolist()), tuple(matches),
                      tuple(i for i in range(p.size) if i not in used_p),
                      tuple(j for j in range(o.size) if j not in used_o),
                      truth=truth, max_ratio=float(max_ratio), horizon=float(horizon), beyond_run=beyond,
                      true_charts=tc, predicted_charts=pc)


def with_uncharted_drops(truth, transitions, *, max_ratio: float = DEFAULT_MAX_RATIO):
    """The parameter truth ``truth`` (:class:`shockflow.prediction.truth.ParameterTruth`) with every loss-curve
    detection of ``transitions`` that lies farther than a factor ``max_ratio`` from each of its steps added as a
    true transition of chart :data:`UNCHARTED` (its step the detection's midpoint, its bracket the detection's
    onset and end; one per ``count`` of a merged detection, less one per true step inside that bracket: a
    detection whose span holds a charted transition is, for that one, its drop, its midpoint misplaced by the fit
    of a slow tail); module docstring."""
    from dataclasses import replace

    from shockflow.prediction.truth import TrueTransition

    charted = np.asarray(truth.steps, dtype=np.float64)
    window = math.log(max_ratio) * (1 + 1e-12)
    extra = []
    for t in transitions:
        mid = float(t.midpoint)
        if mid > 0 and not np.any((charted > 0) & (np.abs(np.log(np.maximum(charted, 1e-300) / mid)) <= window)):
            inside = int(np.count_nonzero((charted >= float(t.onset)) & (charted <= float(t.end))))
            extra += [TrueTransition(UNCHARTED, mid, math.nan, math.nan, (float(t.onset), float(t.end)))] * \
                max(getattr(t, "count", 1) - inside, 0)
    return replace(truth, transitions=tuple(truth.transitions) + tuple(extra)) if extra else truth


def observed_steps(transitions) -> list[float]:
    """The true steps of loss-curve detections: a merged transition (``count`` > 1, drops that could not
    be told apart) stands for ``count`` transitions at its midpoint, so each can be matched or missed."""
    return [t.midpoint for t in transitions for _ in range(getattr(t, "count", 1))]


def read_predictions(path) -> np.ndarray:
    """The predicted steps saved in a result file (``/transitions/predicted/step``)."""
    from shockflow.storage import ResultFileError, read_result

    r = read_result(path)
    steps = r.transitions.get("predicted", {}).get("step")
    if steps is None or np.asarray(steps).size == 0:
        raise ResultFileError(f"result file {str(path)!r}: holds no predicted transitions "
                              f"(it is a {r.case_kind!r} result; `shockflow run` of a network case writes them)")
    return np.asarray(steps, dtype=np.float64)


def read_loss_log(path, *, step_column: str | None = None, loss_column: str | None = None):
    """``(steps, loss)`` of a shockflow training log (.h5) or a CSV/JSON loss curve (column options:
    :func:`shockflow.logs.read_loss_curve`)."""
    from shockflow.logs import read_loss_curve, read_training_log
    from shockflow.logs.foreign import check_loss_series

    from shockflow.storage.input_files import file_problem

    path = Path(path)
    problem = file_problem(path)
    if problem == "no such file":
        raise FileNotFoundError(f"LOG: file {str(path)!r} does not exist")
    if problem is not None:   # a directory, a device, a pipe
        raise FileNotFoundError(f"LOG: {str(path)!r} {problem}, expected a log file")
    if path.suffix.lower() in (".h5", ".hdf5"):
        record = read_training_log(path)
        check_loss_series(record.series["step"], record.series["loss"], "its /series")   # a log another program wrote
    else:
        record = read_loss_curve(path, step_column=step_column, loss_column=loss_column)
    return np.asarray(record.series["step"], dtype=np.float64), np.asarray(record.series["loss"], dtype=np.float64)


def compare_log(log_path, result_path, *, max_ratio: float = DEFAULT_MAX_RATIO, step_column: str | None = None,
                loss_column: str | None = None):
    """``(Comparison, transitions)``: the saved predictions against the true transitions of the log — the
    parameter truth for the log of the result's run (:func:`_run_truth`), else the transitions the detector
    finds in it (truth ``"loss"``); the horizon is the log's last step.

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
        steps, loss = read_loss_log(log_path, step_column=step_column, loss_column=loss_column)
        transitions = find_transitions(steps, loss)
    except (ComparisonError, FileNotFoundError):
        raise
    except Exception as exc:
        said = str(exc) or type(exc).__name__
        reader = f"read_loss_curve: {str(log_path)!r}"     # the reader names the file too: say it once
        if said.startswith(reader):
            said = said[len(reader):].lstrip(",:; ")
        raise ComparisonError(f"LOG {str(log_path)!r}: {said}") from None
    truth, note = _run_truth(log_path, result_path)
    if not transitions and truth is None:
        raise ComparisonError(f"LOG {str(log_path)!r}: no transitions (plateau then sudden drop) found in its "
                              f"{steps.size} loss values; nothing to compare the {predicted.size} predictions with")
    horizon = float(steps[-1])
    loss = match_transitions(predicted, observed_steps(transitions), max_ratio=max_ratio, truth="loss", horizon=horizon)
    if truth is None:
        from dataclasses import replace

        return replace(loss, note=f"loss (the midpoints of the loss-curve detections): {note}"), transitions
    charts, true = zip(*truth) if truth else ((), ())
    primary = match_transitions(predicted, true, max_ratio=max_ratio, truth="parameters", horizon=horizon,
                                predicted_charts=_predicted_charts(result_path, predicted.size), true_charts=charts)
    from dataclasses import replace

    return replace(primary, note=note, against_loss=loss), transitions


def _predicted_charts(path, count: int) -> tuple[str, ...]:
    """The chart of each prediction saved in a result file (``/transitions/predicted/chart``; none where absent)."""
    from shockflow.storage import read_result

    charts = read_result(path).transitions.get("predicted", {}).get("chart")
    if charts is None or len(charts) != count:
        return ()
    return tuple(c.decode() if isinstance(c, bytes) else str(c) for c in charts)


def _run_truth(log_path, result_path) -> tuple[list[tuple[str, float]] | None, str]:
    """The parameter truth for ``compare``: ``(charts and true steps, note)``, or ``(None, why not)``.

    A shockflow training log (.h5) with parameter snapshots is scored against the half-learned steps of its charts
    (:mod:`shockflow.prediction.truth`) as ``run`` scores it, if it is the log of the result's run: the truth
    ``run`` read from these snapshots is stored in the result (``/score``, truth "parameters"), and it is used
    when the log's loss series and snapshots are the ones that truth was read from (their digest, ``log_digest``,
    stored with it).  A CSV/JSON log, a log without snapshots, the log of another run (however close its settings:
    another teacher of the same name and size) or a result written before the digest keeps the loss detections,
    and the note says why."""
    from shockflow.logs import read_training_log

    if Path(log_path).suffix.lower() not in (".h5", ".hdf5"):
        return None, "a foreign log (CSV/JSON) has no parameter snapshots"
    record = read_training_log(log_path)
    snaps = getattr(record, "snapshots", None) or {}
    if "step" not in snaps or np.asarray(snaps["step"]).size < 2:
        return None, "the log has no parameter snapshots"
    try:
        stored = read_score(result_path)
    except ComparisonError:
        return None, ("the prediction file stores no parameter truth (no /score group: a forecast's file has none, "
                      "it was written before any training; a `run`'s result file has it)")
    if stored.get("truth") != "parameters" or "true_chart" not in stored:
        return None, "the result's run had no parameter truth"
    steps = np.asarray(snaps["step"])
    if "log_digest" not in stored:
        return None, "the result file does not identify its run's log (no /score log_digest: written before it)"
    if stored["log_digest"] != log_digest(record):
        return None, ("the log is not the one the result's run scored (its loss series or parameter snapshots "
                      "differ: another run, or the same case with other settings)")
    pairs = [(str(c), float(t)) for c, t in zip(stored["true_chart"], np.asarray(stored["true_step"]).reshape(-1))]
    return pairs, ("parameters (each chart's half-learned step from the log's parameter snapshots, "
                   f"{steps.size} logged; as `run` scored it)")


def _write_score_attrs(g, comparison: Comparison) -> None:
    nan = math.nan
    sc = comparison.score()
    for key in ("recall", "precision", "median_relative_error_all", "median_relative_error_matched"):
        g.attrs[key] = nan if sc[key] is None else sc[key]
    if "median_relative_error_by_chart" in sc:
        g.attrs["median_relative_error_by_chart"] = sc["median_relative_error_by_chart"]
        g.attrs["cross_chart_matches"] = sc["cross_chart_matches"]
    g.attrs["truth"] = comparison.truth
    g.attrs["max_ratio"] = comparison.max_ratio
    g.attrs["horizon"] = comparison.horizon
    for key in ("unmatched_predicted", "unmatched_observed", "beyond_run"):
        g.create_dataset(key, data=np.asarray(sc[key], dtype=np.float64))
    g.create_dataset("true_step", data=np.asarray(comparison.observed, dtype=np.float64))


def log_digest(record) -> str:
    """A digest of a training log's loss series and parameter snapshots (hex): what identifies the log of a run,
    stored with the run's score (``/score`` attribute ``log_digest``) so that ``compare`` uses the stored parameter
    truth for that log only (:func:`_run_truth`)."""
    import hashlib

    h = hashlib.blake2b(digest_size=16)
    for group in (record.series, getattr(record, "snapshots", None) or {}):
        for key in sorted(group):
            value = np.ascontiguousarray(group[key])
            h.update(key.encode() + str(value.dtype).encode() + str(value.shape).encode())
            h.update(value.tobytes())
    return h.hexdigest()


def write_score(f, comparison: Comparison, loss_comparison: Comparison | None = None, truth=None,
                snapshot_schedule: dict | None = None, record=None) -> None:
    """The ``/score`` group of an open result file ``f`` (written inside ``write_result``'s atomic write).

    ``/score`` attributes ``recall``, ``precision``, ``median_relative_error_all``,
    ``median_relative_error_matched`` (NaN: undefined), ``truth``, ``max_ratio``, ``horizon``; datasets
    ``true_step``, ``unmatched_predicted``, ``unmatched_observed``, ``beyond_run``; with a parameter truth
    also ``true_chart`` and ``true_bracket`` (the snapshot steps around each crossing), attributes
    ``not_learned`` (JSON list of charts), ``targets`` (JSON: per chart the strength's start, end and the target
    "learned within the run" was read against, :class:`~shockflow.prediction.truth.ParameterTruth`) and
    ``snapshots`` (JSON: the snapshot schedule used); with the training
    ``record`` the truth was read from, ``log_digest`` (:func:`log_digest`); ``/score/loss`` holds the same figures
    against the loss-curve detections."""
    import json

    g = f.create_group("score")
    _write_score_attrs(g, comparison)
    if record is not None:
        g.attrs["log_digest"] = log_digest(record)
    if truth is not None:
        g.create_dataset("true_chart", data=np.array([t.chart for t in truth.transitions], dtype="S"))
        g.create_dataset("true_bracket", data=np.array([t.bracket for t in truth.transitions],
                                                       dtype=np.float64).reshape(-1, 2))
        g.attrs["not_learned"] = json.dumps(list(truth.not_learned))
        g.attrs["targets"] = json.dumps(truth.targets)
        g.attrs["snapshots"] = json.dumps({**(snapshot_schedule or {}), "logged": truth.snapshots})
    if loss_comparison is not None and loss_comparison is not comparison:
        _write_score_attrs(g.create_group("loss"), loss_comparison)


def read_score(path) -> dict:
    """The ``/score`` group of a result file as a dict (``loss``: the same against the loss detections)."""
    import h5py

    def one(g):
        out = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in g.attrs.items()}
        for k, d in g.items():
            if isinstance(d, h5py.Dataset):
                a = d[()]
                out[k] = [x.decode() for x in a] if a.dtype.kind == "S" else np.asarray(a)
        return out

    with h5py.File(path, "r") as f:
        if "score" not in f:
            raise ComparisonError(f"result file {str(path)!r}: has no /score group (written by `shockflow run` "
                                  f"since issue 17)")
        out = one(f["score"])
        if "loss" in f["score"]:
            out["loss"] = one(f["score"]["loss"])
    return out
