"""``shockflow monitor LOG --prediction FORECAST``: a training run checked against its forecast while it runs.

Each time the log has grown (:class:`shockflow.logs.tail.LogTail`: complete rows only) the
transition detector (:func:`shockflow.prediction.transitions.find_transitions`) runs on every row
read so far; a transition it finds that was not reported before (no reported midpoint within a factor
:data:`SAME` of it) is reported at once, matched to the forecast (``match_transitions``, the scoring of
``compare``) and said early or late by how many steps.  One-shot (default): read the log once, report,
print the table.  ``follow``: keep reading until

- the run ends: the last logged step reaches the forecast's planned steps (the forecast file's
  ``/forecast`` horizon; for a ``run`` result file the settings' ``training.steps``), or a shockflow
  HDF5 log has appeared (it is written whole at the end of training), or the live file of a shockflow
  run being trained (:mod:`shockflow.logs.live`, followed until the log appears) says it finished or stopped;
- the log stops growing: nothing new for ``idle`` seconds (default: ten update intervals, at least 2 s; a log
  not there yet is waited for :data:`APPEAR_SECONDS`; a shockflow run training into it is waited for while its
  writer runs), ending with a message that says so;
- Ctrl-C.

**Polling.**  Never faster than the log's own update interval: the interval is the median of the
gaps between the file's successive modification times seen so far (at least ``interval``, the
floor, default 0.2 s, which also applies until two updates have been seen), on a fixed schedule (the
time the detector takes is not added to the wait).  The rows that show a transition are then read at
most one update interval after they were written; the report follows after the detector's run on
them (``time − read_at`` of the event: 0.1–0.7 s for 300–1200 rows on a loaded machine).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["Monitor", "MonitorEvent", "follow", "read_forecast_steps", "SAME"]

#: without ``idle``, how long a follow waits for a log that is not there yet (a monitor started before its run)
APPEAR_SECONDS = 30.0
#: a detection within this factor of a reported midpoint is the same transition (the detector refines
#: a midpoint as rows arrive)
SAME = 1.25
#: a reported transition whose midpoint has since moved by more than this fraction of it is reported again, revised
#: (a drop seen before its end is placed early: r2 of a run at 595.8 when first seen, 643.3 once its end was read)
REVISE = 0.02


@dataclass(frozen=True)
class MonitorEvent:
    """A transition seen for the first time (``kind="transition"``), one reported before whose midpoint the rows
    read since have moved by more than :data:`REVISE` (``"revised"``, with ``revises``: the step reported before), the
    log rewritten from its start (``"restarted"``: what was reported before is dropped), a log trained with other
    settings than the forecast's (``"warning"``), a row whose loss is not finite (``"diverged"``), the start (``"start"``, once the monitor is ready) or the end of the
    follow (``"end"``)."""

    kind: str
    time: float                  # wall-clock time (s since the epoch) of the report
    read_at: float               # ... of the read of the rows that show it (time − read_at: the detector's run)
    rows: int                    # complete rows read when it was reported
    last_step: float             # the last logged step then
    step: float = math.nan       # the transition's midpoint step
    onset: float = math.nan
    end: float = math.nan
    predicted_step: float | None = None
    chart: str | None = None
    offset: float | None = None  # observed − predicted steps (> 0: later than forecast)
    message: str = ""
    revises: float | None = None  # a "revised" event: the midpoint reported before

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in ("kind", "time", "read_at", "rows", "last_step", "step", "onset", "end",
                                               "predicted_step", "chart", "offset", "message", "revises")}

    def line(self) -> str:
        if self.kind not in ("transition", "revised"):
            return self.message
        head = f"transition at step {self.step:.1f} (seen at row {self.rows}, step {self.last_step:g})"
        if self.kind == "revised":
            head = (f"transition revised from step {self.revises:.1f} to {self.step:.1f} (row {self.rows}, step "
                    f"{self.last_step:g})")
        if self.predicted_step is None:
            return head + ": no forecast transition within the matching factor"
        rel = self.offset / self.predicted_step if self.predicted_step > 0 else math.nan
        when = "late" if self.offset > 0 else "early"
        return (head + f": forecast {self.predicted_step:.1f} (chart {self.chart}), {when} by "
                       f"{abs(self.offset):.1f} steps ({abs(rel):.1%})")


def read_forecast_steps(path) -> tuple[np.ndarray, list[str], float]:
    """``(predicted steps, charts, planned steps)`` of a forecast file or a ``run`` result file."""
    from shockflow.prediction.comparison import read_predictions
    from shockflow.runners.forecast import read_forecast
    from shockflow.storage import read_result

    steps = read_predictions(path)
    result = read_result(path)
    charts = [str(c) for c in result.transitions.get("predicted", {}).get("chart", [""] * steps.size)]
    horizon = read_forecast(path).get("horizon")
    if horizon is None:
        horizon = result.settings.get("training", {}).get("steps", math.inf)
    return steps, charts, float(horizon)


@dataclass
class Monitor:
    """The predicted-versus-observed state of one log (module docstring)."""

    tail: object                       # LogTail
    predicted: np.ndarray
    charts: list
    horizon: float = math.inf
    max_ratio: float = 2.0
    reported: list = field(default_factory=list)   # MonitorEvent of each reported transition
    transitions: tuple = ()                          # the detector's current transitions
    prediction: Path | None = None                   # the forecast file (its settings: shockflow.logs.agreement)
    disagreements: list | None = None                # the keys the log and the forecast differ on, once read
    notes: list = field(default_factory=list)        # the "diverged" event, once seen

    def update(self, now: float | None = None) -> list[MonitorEvent]:
        """Read what is new; the transitions seen for the first time (after a ``"restarted"`` event when the log was
        rewritten from its start: what was reported of the run before is dropped, not revised backwards)."""
        from shockflow.prediction import find_transitions, match_transitions

        read_at = time.time()
        restarts = self.tail.restarted
        grew = self.tail.read()
        events = []
        if self.tail.restarted != restarts:
            self.reported, self.transitions, self.notes = [], (), []
            self.disagreements = None          # a new run: its settings are checked again
            steps, _ = self.tail.series()
            events.append(MonitorEvent("restarted", time.time() if now is None else now, read_at, self.tail.rows,
                                       float(steps[-1]) if steps.size else math.nan,
                                       message=f"the log was restarted: {self.tail.path} was rewritten from its start "
                                               f"(a new run in its place); reading it again from its start, the "
                                               f"transitions reported before are dropped"))
        if self.tail.diverged is not None and not any(e.kind == "diverged" for e in self.notes):
            step, value = self.tail.diverged
            note = MonitorEvent("diverged", time.time() if now is None else now, read_at, self.tail.rows, step, step,
                                message=f"the run diverged at step {step:g} (loss {value}): the rows after it are not "
                                        f"read")
            self.notes.append(note)
            events.append(note)
        if not grew:
            return events
        events += self._check_agreement(read_at)
        steps, loss = self.tail.series()
        try:
            found = tuple(find_transitions(steps, loss))
        except ValueError:            # too few rows or too short a span for the detector yet
            return events
        self.transitions = found
        mids = [t.midpoint for t in found]
        comparison = match_transitions(self.predicted, mids, max_ratio=self.max_ratio, truth="loss",
                                       horizon=self.horizon)
        partner = {m.observed_step: m for m in comparison.matches}
        now = time.time() if now is None else now
        for t in found:
            m = partner.get(t.midpoint)
            chart = None
            if m is not None:
                chart = self.charts[m.predicted_index] if m.predicted_index < len(self.charts) else ""
            before = [i for i, e in enumerate(self.reported) if e.step > 0
                      and abs(math.log(t.midpoint / e.step)) < math.log(SAME)]
            if before and all(abs(t.midpoint - self.reported[i].step) <= REVISE * self.reported[i].step
                              for i in before):
                continue
            kind = "revised" if before else "transition"
            event = MonitorEvent(kind, now, read_at, self.tail.rows, float(steps[-1]), t.midpoint, t.onset, t.end,
                                 None if m is None else float(m.predicted_step), chart,
                                 None if m is None else float(t.midpoint - m.predicted_step),
                                 revises=self.reported[before[0]].step if before else None)
            if before:
                self.reported[before[0]] = event
            else:
                self.reported.append(event)
            events.append(event)
        return events

    def _check_agreement(self, read_at: float) -> list[MonitorEvent]:
        """Once, at the first rows read: a ``"warning"`` event where the log (a shockflow log, or its run's live
        file) was trained with other settings than the forecast assumed (:mod:`shockflow.logs.agreement`)."""
        if self.disagreements is not None or self.prediction is None:
            return []
        from shockflow.logs.agreement import check_log_against

        self.disagreements = check_log_against(self.tail.source, self.prediction)   # the run read now
        if not self.disagreements:
            return []
        steps, _ = self.tail.series()
        last = float(steps[-1]) if steps.size else math.nan
        return [MonitorEvent("warning", time.time(), read_at, self.tail.rows, last,
                             message=f"warning: the log and the forecast describe different runs: "
                                     f"{'; '.join(self.disagreements)}")]

    @property
    def ended(self) -> bool:
        steps, _ = self.tail.series()
        return bool(steps.size and steps[-1] >= self.horizon) or self.tail.status != "training"

    def table(self) -> str:
        from shockflow.prediction import match_transitions

        steps, _ = self.tail.series()
        last = float(steps[-1]) if steps.size else math.nan
        lines = [f"{self.tail.path}: {self.tail.rows} rows, last step {last:g} of {self.horizon:g} planned"
                 if steps.size else f"{self.tail.path}: no rows read ({self.horizon:g} steps planned)"]
        c = match_transitions(self.predicted, [t.midpoint for t in self.transitions], max_ratio=self.max_ratio,
                              truth="loss", horizon=last if steps.size else math.inf)
        seen = {m.predicted_index: m for m in c.matches}
        lines.append(f"{'chart':>8}  {'forecast':>10}  {'observed':>10}  {'offset':>9}")
        for i, p in enumerate(self.predicted):
            chart = self.charts[i] if i < len(self.charts) else ""
            m = seen.get(i)
            if m is not None:
                lines.append(f"{chart:>8}  {p:10.1f}  {m.observed_step:10.1f}  {m.observed_step - p:+9.1f}")
            else:
                status = "beyond the log" if p > last else "not seen"
                lines.append(f"{chart:>8}  {p:10.1f}  {status:>10}")
        extra = [t.midpoint for t in self.transitions if t.midpoint not in {m.observed_step for m in c.matches}]
        if extra:
            lines.append("observed without a forecast partner: " + ", ".join(f"{s:.1f}" for s in extra))
        return "\n".join(lines)


def follow(monitor: Monitor, *, interval: float = 0.2, idle: float | None = None, emit=print,
           clock=time.monotonic, sleep=time.sleep) -> MonitorEvent:
    """Follow the log until the run ends, it stops growing, or Ctrl-C (module docstring); ``emit`` gets each
    :class:`MonitorEvent` as it happens, the last one is the end (returned)."""
    floor = float(interval)
    stamps: list[int] = []
    emit(MonitorEvent("start", time.time(), time.time(), 0, math.nan,
                      message=f"following {monitor.tail.path} against {monitor.predicted.size} forecast transitions "
                              f"({monitor.horizon:g} planned steps)"))
    last_growth = clock()
    next_read = clock()
    while True:
        for event in monitor.update():
            emit(event)
        mtime = monitor.tail.modified()
        if monitor.tail.writing():       # a shockflow run training into the log now: rows however far apart
            last_growth = clock()
        if mtime is not None and (not stamps or mtime != stamps[-1]):
            stamps.append(mtime)
            last_growth = clock()
        gaps = np.diff(stamps) * 1e-9 if len(stamps) >= 3 else np.zeros(0)
        period = max(floor, float(np.median(gaps[1:] if gaps.size > 1 else gaps)) if gaps.size else floor)
        steps, _ = monitor.tail.series()
        last = float(steps[-1]) if steps.size else math.nan
        if monitor.ended:
            message = f"the run ended: step {last:g} of {monitor.horizon:g} planned"
            if monitor.tail.status == "diverged":
                message = (f"the run diverged at step {monitor.tail.diverged[0]:g} of {monitor.horizon:g} planned "
                           f"(loss {monitor.tail.diverged[1]}); stopped following {monitor.tail.path}")
            elif monitor.tail.status == "stopped":
                message = (f"the run stopped before its end, at step {last:g} of {monitor.horizon:g} planned (it "
                           f"diverged, failed or was interrupted: see its own output); no log was written")
            end = MonitorEvent("end", time.time(), time.time(), monitor.tail.rows, last, message=message)
            emit(end)
            return end
        wait = idle if idle is not None else max(10.0 * period, 2.0) if stamps else APPEAR_SECONDS
        if clock() - last_growth > wait:
            if not stamps:   # no modification time ever seen: the file never appeared
                message = (f"the log never appeared: no file {str(monitor.tail.path)!r} within {wait:.1f} s; "
                           f"stopped waiting for it")
            else:
                what = "no rows yet" if monitor.tail.rows == 0 else f"last step {last:g} of {monitor.horizon:g} planned"
                message = (f"the log stopped growing: nothing new for {wait:.1f} s ({what}); stopped following "
                           f"{monitor.tail.path}")
            end = MonitorEvent("end", time.time(), time.time(), monitor.tail.rows, last, message=message)
            emit(end)
            return end
        next_read = max(next_read + period, clock())   # a fixed rate: the detector's run is not added to the wait
        sleep(max(next_read - clock(), 0.0))


def _load_detector() -> None:
    """Import what the detector imports on its first call (SciPy's optimize module), so that the first
    transition is not reported late by the import."""
    import scipy.optimize  # noqa: F401

    import shockflow.prediction.transitions  # noqa: F401


def monitor_log(log, prediction, *, step_column=None, loss_column=None, max_ratio: float = 2.0) -> Monitor:
    """A :class:`Monitor` of ``log`` against the forecast (or ``run`` result) file ``prediction``."""
    from shockflow.logs.tail import LogTail

    _load_detector()
    steps, charts, horizon = read_forecast_steps(prediction)
    return Monitor(LogTail(Path(log), step_column=step_column, loss_column=loss_column), steps, charts, horizon,
                   max_ratio, prediction=Path(prediction))
