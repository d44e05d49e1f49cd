"""``shockflow run``: a network case from training to predicted-versus-observed transitions (issue 6).

    train (shockflow.training)                   -> training log <out>/<name>-log.h5
    predict (shockflow.prediction.predict)       -> predicted steps, from the initial parameters
    observe (shockflow.prediction.transitions)   -> observed steps        <- only now is the loss looked at
    truth (shockflow.prediction.truth)           -> each chart's half-learned step, from the parameter snapshots
    compare (shockflow.prediction.comparison)    -> matches, recall, precision, the all-in median (against the
                                                    parameter truth; the loss detections are scored separately)
    write <out>/<name>.h5 (atomically) and figures

:func:`~shockflow.prediction.predict.predict_case` is the prediction half; it never sees the loss
series.  Every chart's problem and solutions are stored once, under ``/extraction/<chart>``; the
result's main solution (``Result.times``/``values``) is the first chart's (docs/result-file.md).
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from shockflow.blas_threads import blas_threads
from shockflow.cases.errors import CaseError
from shockflow.forking import Beside
from shockflow.storage.atomic import committed_together
from shockflow.prediction.predict import WALL, PredictionStage, initial_gamma, predict_case, shock_records
from shockflow.prediction.trajectory import with_trajectory

__all__ = ["DEFAULT_CASE", "run_prediction_case", "RunOutcome", "predict_from_start", "prediction_result"]

#: the built-in case `shockflow run` runs without an argument
DEFAULT_CASE = "two-layer-staircase"


@dataclass(frozen=True, eq=False)
class RunOutcome:
    case: str
    result_file: Path
    log_file: Path
    stage: PredictionStage
    observed: tuple
    comparison: object
    seconds: float
    figures: tuple[Path, ...] = field(default=())
    truth: object = None             # ParameterTruth (None: no snapshots; the loss detections are the truth)
    loss_comparison: object = None   # the predictions against the loss detections (truth "loss")
    truth_note: str = ""             # why the parameter snapshots are not the truth ("": they are, or none exist)
    lr: float = math.nan             # the run's (peak) learning rate, against each chart's critical one

    def above_critical(self) -> list[str]:
        """The charts whose critical learning rate γ* (docs/theory.md §1: the proximal step single-valued below it)
        the run's learning rate exceeds."""
        return [p.chart for p in self.stage.predicted if self.lr > p.critical_lr]

    def _not_learned(self, chart: str) -> str:
        """A chart the truth calls not learned, with what it read: ``r3 (1e-06 -> 0.104 of 0.294, origin)``."""
        t = self.truth.targets.get(chart)
        if t is None:
            return chart
        return f"{chart} ({t['start']:.3g} -> {t['final']:.3g} of {t['target']:.3g}, {t['against']})"

    def shock_rows(self) -> list[dict]:
        return [{"time": r.time, "location": r.location[0], "strength": r.strength, "chart": self.stage.extraction.charts[k].label}
                for k, r in shock_records(self.stage)]

    def as_dict(self) -> dict:
        c = self.comparison
        return {"case": self.case, "result_file": str(self.result_file), "log_file": str(self.log_file),
                "shocks": self.shock_rows(),
                "predicted": [{**p.as_dict(), "beyond_horizon": bool(flag)}
                              for p, flag in zip(self.stage.predicted, beyond_horizon(self.stage, self.comparison))],
                "saddles": [s.as_dict() for s in self.stage.saddles],
                "abstained": [a.as_dict() for a in self.stage.abstained],
                "blocks": [b.as_dict() for b in self.stage.blocks],
                "observed": [{"step": t.midpoint, "onset": t.onset, "end": t.end, "drop": t.drop, "count": t.count}
                             for t in self.observed],
                "truth": [t.as_dict() for t in self.truth.transitions] if self.truth is not None else None,
                "truth_targets": self.truth.targets if self.truth is not None else None,
                **({"truth_note": self.truth_note} if self.truth_note else {}),
                "above_critical_lr": self.above_critical(),
                "matches": [m.as_dict() for m in c.matches],
                "median_relative_error": c.median_relative_error, "score": c.score(),
                "loss_score": self.loss_comparison.score() if self.loss_comparison is not None else None,
                "seconds": self.seconds,
                "figures": [str(p) for p in self.figures]}

    def key_figures(self) -> dict:
        med = self.comparison.median_relative_error
        c = self.comparison
        out = {"median_relative_error": math.nan if med is None else med, "matches": len(self.comparison.matches),
               "recall": math.nan if c.recall is None else c.recall,
               "precision": math.nan if c.precision is None else c.precision,
               "median_relative_error_matched": (math.nan if c.median_relative_error_matched is None
                                                 else c.median_relative_error_matched),
               "true_count": len(c.observed),
               "predicted_count": len(self.stage.predicted), "observed_count": len(self.observed),
               "abstained_count": len(self.stage.abstained),
               "seconds": self.seconds}
        for k, p in enumerate(self.stage.predicted, start=1):
            out[f"predicted_{k}"] = p.step
        for k, t in enumerate(self.observed, start=1):
            out[f"observed_{k}"] = float(t.midpoint)
        return out

    def table(self) -> str:
        lines = [f"case {self.case}: {self.seconds:.1f} s -> {self.result_file} (training log {self.log_file})"]
        lines.append(f"{'chart':>6}  {'gamma*':>10}  {'crit. lr':>9}  {'d0':>9}  {'d_exit':>8}  {'nu':>8}  "
                     f"{'predicted':>10}  {'t/eta':>10}")
        for p in self.stage.predicted:
            lines.append(f"{p.chart:>6}  {p.gamma_star:10.4g}  {p.critical_lr:9.3g}  {p.d0:9.3g}  {p.d_exit:8.3g}  "
                         f"{p.nu:8.2g}  {p.step:10.1f}  {p.flow_step:10.1f}")
        for a in self.stage.abstained:
            lines.append(f"{a.chart:>6}  abstains (predicts nothing): {a.reason}")
        above = self.above_critical()
        if above:
            crit = min(p.critical_lr for p in self.stage.predicted if p.chart in above)
            lines.append(f"the learning rate {self.lr:g} is above the critical learning rate γ* of "
                         f"{', '.join(above)} (from {crit:.4g}; docs/theory.md §1: the proximal step is no longer "
                         f"single-valued, a step can jump between basins): training may oscillate or diverge, and "
                         f"the predicted steps assume it does not (`shockflow forecast` names where the discrete "
                         f"escape overshoots)")
        if self.stage.saddles:
            lines.append("saddle chain (charts learned, the step it reaches them -> the loss there): " + "; ".join(
                f"{'+'.join(s.active) or 'origin'} at {s.step:.1f} -> {s.loss:.4g}" for s in self.stage.saddles))
        lines += [f"coupled modes: {b.describe()}" for b in self.stage.blocks]
        if self.truth is not None:
            lines.append("true transitions (half-learned steps from the parameter snapshots): " +
                         (", ".join(f"{t.chart} {t.step:.1f}" for t in self.truth.transitions) or "none") +
                         ("; not learned within the run (its strength from start to end, against the target it "
                          "was to pass half way to): " + ", ".join(self._not_learned(c) for c in self.truth.not_learned)
                          if self.truth.not_learned else ""))
        elif self.truth_note:
            lines.append(f"true transitions: {self.truth_note}")
        lines.append(f"loss-curve detections (midpoint steps): " +
                     (", ".join(f"{t.midpoint:.1f}" for t in self.observed) or "none"))
        lines.append(self.comparison.table())
        if self.loss_comparison is not None and self.loss_comparison is not self.comparison:
            lc = self.loss_comparison
            pct = (lambda v: "n/a" if v is None else f"{100 * v:.1f}%")
            lines.append(f"against the loss detections instead: recall {pct(lc.recall)}, precision "
                         f"{pct(lc.precision)}, median relative error (all) {pct(lc.median_relative_error_all)}")
        lines += [f"figure: {p}" for p in self.figures]
        return "\n".join(lines)


def beyond_horizon(stage: PredictionStage, comparison) -> list[bool]:
    """Per prediction: past the run's last step (docs/theory.md §6, "Abstention"), reported and never matched."""
    return [not (p.step <= comparison.horizon) for p in stage.predicted]


def prediction_result(case, stage: PredictionStage, comparison, observed, *, seed, wall_time, log_path, start=""):
    """The result file's content of a network case's prediction; ``start``: the digest of the initial parameters
    (:func:`shockflow.logs.agreement.start_digest`), recorded as the problem's ``start`` for compare's and monitor's
    check of a log against it."""
    from shockflow.cases.schema import to_plain
    from shockflow.logs.provenance import package_versions
    from shockflow.storage import Result

    charts, sols = stage.extraction.charts, stage.solutions
    first_chart, first = charts[0], sols[0]
    rows = shock_records(stage)
    shocks = {"chart": np.array([charts[k].label for k, _ in rows], dtype=object),
              "time": np.array([r.time for _, r in rows]), "location": np.array([r.location for _, r in rows]).reshape(-1, 1),
              "strength": np.array([r.strength for _, r in rows]), "first_seen": np.array([r.first_seen for _, r in rows]),
              "final_location": np.array([r.final_location for _, r in rows]).reshape(-1, 1),
              "final_strength": np.array([r.final_strength for _, r in rows]), "speed": np.array([r.speed for _, r in rows])}
    rep = first.report
    tracks = {"track": np.array([k for k, (t, _) in enumerate(rep.tracks) for _ in t], dtype=np.int64),
              "time": np.concatenate([t for t, _ in rep.tracks]) if rep.tracks else np.zeros(0),
              "position": np.concatenate([x for _, x in rep.tracks]) if rep.tracks else np.zeros(0)}
    cut = max(int(WALL * first_chart.x.size), 2)
    problem = {"equation": "hamilton_jacobi", "quantity": "u", "method": "finite_difference", "domain": "interval",
               "nu": 0.0, "a": 1.0, "D": 1.0, "hamiltonian": "chart_quadratic", "initial": "quotient_loss",
               "solver": {"solver": "solvers.charts.hamilton_jacobi", "cfl": case.settings.prediction.cfl, "boundary": "outflow"},
               "boundary": "outflow", "lower": [float(c.lower) for c in charts], "upper": [float(c.upper) for c in charts],
               "geometry": stage.extraction.geometry, "geometry_kwargs": {k: np.asarray(v).tolist() for k, v in stage.extraction.geometry_kwargs.items()},
               "charts": [c.label for c in charts], "training_log": str(log_path),
               "shock_search": f"interior cells {cut}..{first_chart.x.size - cut}"}
    if start:
        problem["start"] = str(start)
    info = {"method": "chart_steepening", "formation_time": stage.shocks[0].gamma_star,
            "formation_time_from_data": rep.formation_time_from_data, "first_detection": rep.first_detection,
            "fit_points": rep.fit_points}
    pcols = ("step", "flow_step", "time", "gamma_star", "critical_lr", "location", "strength", "d0", "d_exit", "d_eff",
             "nu", "escape_time")
    predicted = {c: np.array([getattr(p, c) for p in stage.predicted], dtype=np.float64) for c in pcols}
    predicted["saddle"] = np.array([p.saddle for p in stage.predicted], dtype=np.int64)
    predicted = {"chart": np.array([p.chart for p in stage.predicted], dtype=object), **predicted}
    predicted["method"] = np.array([p.method for p in stage.predicted], dtype=object)
    predicted["beyond_horizon"] = np.array(beyond_horizon(stage, comparison), dtype=np.int8)  # 1: past the last step
    observed_cols = {c: np.array([getattr(t, c) for t in observed], dtype=np.float64)
                     for c in ("midpoint", "onset", "end", "steepest", "drop")}
    observed_cols = {"step": observed_cols.pop("midpoint"), **observed_cols,
                     "count": np.array([t.count for t in observed], dtype=np.int64)}
    matches = {"chart": np.array([stage.predicted[m.predicted_index].chart for m in comparison.matches], dtype=object),
               "predicted_step": np.array([m.predicted_step for m in comparison.matches]),
               "observed_step": np.array([m.observed_step for m in comparison.matches]),
               "relative_error": np.array([m.relative_error for m in comparison.matches])}
    return Result(
        case_name=case.name, case_kind=case.kind, case_text=case.text, settings=to_plain(case.settings),
        times=first.times, values=first.u, problem=problem, coordinates={"x": first_chart.x}, initial=first_chart.u0,
        steps=sum(s.steps for s in sols), seconds=sum(s.seconds for s in sols), shocks=shocks, shock_info=info,
        steepness=(rep.times, rep.steepness), tracks=tracks,
        transitions={"predicted": predicted, "observed": observed_cols, "matches": matches},
        extraction=_extraction(stage, comparison),
        case_path=str(case.path) if case.path is not None else "", overrides=case.overrides, seed=seed,
        versions=package_versions(), wall_time=wall_time)


def _extraction(stage: PredictionStage, comparison) -> dict:
    """Every chart's PDE problem and solutions, for ``/extraction/<chart>`` of the result file."""
    import json

    ex = stage.extraction
    med = comparison.median_relative_error
    abstained = {a.chart: a.reason for a in stage.abstained}
    out = {"attrs": {"geometry": ex.geometry,
                     "geometry_kwargs": {k: np.asarray(v).tolist() for k, v in ex.geometry_kwargs.items()},
                     "log_temperature": ex.log_temperature,
                     "median_relative_error": math.nan if med is None else med},
           "charts": {}}
    for c, sol, sh in zip(ex.charts, stage.solutions, stage.shocks):
        chart = {key: np.asarray(getattr(c, key)) for key in ("x", "u0", "mobility", "escape_x", "escape_rate",
                                                               "trajectory_steps", "trajectory")}
        chart["times"], chart["values"] = np.asarray(sol.times), np.asarray(sol.u)
        if sol.viscous_u is not None:
            chart["viscous_values"] = np.asarray(sol.viscous_u)
        attrs = {key: getattr(c, key) for key in ("lower", "upper", "mirrored", "x0", "x_min", "loss_at_min",
                                                   "sigma2", "temperature", "nu", "coordinate")}
        attrs["selector"] = json.dumps(np.asarray(c.selector).tolist() if c.selector is not None else None)
        attrs["conserved"] = json.dumps(c.conserved)
        attrs.update(gamma_star=sh.gamma_star, gamma_star_initial_data=initial_gamma(c), shock_location=sh.location,
                     abstained=abstained.get(c.label, ""))   # why the chart predicts nothing ("": it predicts)
        chart["attrs"] = attrs
        out["charts"][c.label] = chart
    return out


def predict_from_start(case, initial, data, settings, *, log_temperature=float("nan"), progress=False,
                       checkpoint=None):
    """THE prediction of ``shockflow run`` and ``shockflow forecast``: the network at its initial parameters,
    the data and the optimiser settings in, a :class:`PredictionStage` out.  No training log enters it (the
    chart box is the hull of x0 and the landscape minimum), so a forecast made before training and the
    prediction of a run are the same numbers; ``log_temperature`` is a reference figure only; ``checkpoint``: called
    between the prediction's phases (:func:`shockflow.prediction.predict.predict_case`)."""
    return predict_case(case, initial, data, settings, None, log_temperature=log_temperature, progress=progress,
                        checkpoint=checkpoint)


#: the least expected training time (seconds) for which ``shockflow run`` trains in a second process by default.
#: Two processes slow each other down (fork, copy-on-write page faults, one BLAS thread each): measured in one
#: process on the 2-vCPU VM of issue 23, load 0.5, warm, median of five, the default case (0.13 s of training)
#: 0.54 s alone and 0.62 s with the training beside; ``mlp-tanh-teacher`` (2.2 s) 5.15 s alone, 4.1-4.4 s beside.
BESIDE_FROM_SECONDS = 0.5


#: the most samples :func:`expected_training_seconds` times a gradient on (a larger batch is scaled from them)
TIMED_ROWS = 8192
#: its repetitions at one size: the fastest of at most this many ...
TIMED_REPEATS = 5
#: ... within about this many seconds (a large model is timed once: its first call's set-up is a small part of it)
TIMED_BUDGET = 0.05


def expected_training_seconds(model, data, settings) -> float:
    """The training's time as ``settings.steps`` gradients of one batch, timed here (the fastest of up to
    :data:`TIMED_REPEATS` within :data:`TIMED_BUDGET`: a first call pays its arrays' page faults, 101 µs against
    45 µs for the default model).  A batch of more than :data:`TIMED_ROWS` samples is timed on that many and on half
    as many, and the cost extrapolated linearly in the samples (a fixed part per step, the Python of a small model,
    and a part per sample); a model that fails on the data: 0, so that the training meets the failure here."""
    batch = settings.batch_size or data.n
    rows = min(batch, TIMED_ROWS)

    def timed(k: int) -> float:
        X, y = data.X[:k], data.y[:k]
        best, spent = float("inf"), 0.0
        for _ in range(TIMED_REPEATS):
            start = time.perf_counter()
            model.loss_and_grad(X, y)
            took = time.perf_counter() - start
            best, spent = min(best, took), spent + took
            if spent > TIMED_BUDGET:
                break
        return best

    try:
        full = timed(rows)
        if batch > rows:
            half = timed(rows // 2)
            per_row = max(full - half, 0.0) / (rows - rows // 2)
            full += per_row * (batch - rows)
    except Exception:   # noqa: BLE001 - the training reports it, with its place
        return 0.0
    return full * settings.steps


def trained_and_observed(case, model, data, settings, *, quiet: bool = True, live_path=None):
    """The training of ``shockflow run`` (no log file: the run writes it; its rows in a live file beside
    ``live_path`` while it trains, :mod:`shockflow.logs.live`) and the transitions its loss curve shows:
    ``(TrainingRecord, observed transitions)``.  A refused setting is a :class:`CaseError` at ``training``."""
    from shockflow.runners.training import observed_transitions
    from shockflow.training import train

    try:
        record = train(model, data, settings, log_path=None, live_path=live_path, quiet=quiet)
    except (TypeError, ValueError) as exc:
        raise CaseError.at(case, "training", str(exc)) from None
    # -- only now the loss curve
    return record, observed_transitions(case, record.series["step"], record.series["loss"])


@committed_together
@blas_threads()
def run_prediction_case(case, options) -> RunOutcome:
    """Train, extract, solve, predict, observe, compare, write (module docstring)."""
    from shockflow.logs import write_training_log
    from shockflow.logs.hdf5 import FORMAT as LOG_FORMAT
    from shockflow.prediction import match_transitions
    from shockflow.progress import redrawn, status
    from shockflow.runners.training import build_model_and_data, refuse_unmodelled, verify_geometry
    from shockflow.storage import write_result
    from shockflow.storage.outdir import refuse_other_kind
    from shockflow.storage.results import FORMAT as RESULT_FORMAT
    from solvers.compiled_code import prepare_compiled_code
    from shockflow.prediction.truth import parameter_truth, snapshots_resolve
    from shockflow.prediction.comparison import observed_steps, with_uncharted_drops, write_score

    refuse_unmodelled(case)   # before any training
    start = time.perf_counter()
    seed = options.seed if options.seed is not None else (case.seed or 0)
    model, spec, data, _ = build_model_and_data(case, seed)
    verify_geometry(case, model, data)   # every refusal of the charts before any training
    initial = model.copy()
    settings = case.settings.training.train_settings(seed)
    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    log_path = out / f"{case.name}-log.h5"
    refuse_other_kind(out / f"{case.name}.h5", RESULT_FORMAT, "run", case)   # before any training: a `train` log,
    # another case's result stay
    refuse_other_kind(log_path, LOG_FORMAT, "run")
    show = options.progress and not options.quiet
    trained = model
    if case.settings.geometry is not None and case.settings.geometry.name == "sphere":
        # the sphere geometry's network normalises its weight: train that network (docs/theory.md §1)
        from shockflow import geometry
        from shockflow.geometry.sphere import WeightNormalised

        try:
            trained = WeightNormalised(geometry.build("sphere", model=model, **case.settings.geometry.kwargs()), model)
        except (geometry.GeometryError, TypeError) as exc:
            raise CaseError.at(case, "geometry", str(exc)) from None
    # the training and its loss curve's transitions, beside the prediction when a core is idle (the prediction
    # needs neither: shockflow.forking.Beside); its log is written here, with the run's other files
    beside = options.train_beside
    if beside is None and expected_training_seconds(trained, data, settings) < BESIDE_FROM_SECONDS:
        beside = False
    try:
        with Beside(trained_and_observed, case, trained, data, settings, quiet=not show, live_path=log_path,
                    start=beside, before_fork=prepare_compiled_code) as training:
            # -- the prediction: initial parameters, data, optimiser settings; no loss series, no snapshots
            # beside the training's bar, the prediction's progress only as lines (a pipe, a log): two bars would clash
            stage = predict_from_start(case, initial, data, settings,
                                       progress=show and not (training.forked and redrawn()),
                                       checkpoint=training.check)   # a training that fails early stops the prediction
            # where every chart is learned: the parameter truth's targets, from the landscape alone (while training)
            learned = {}
            if stage.landscape is not None:
                with status("where every chart is learned (the truth's targets)",
                            enabled=show and not (training.forked and redrawn())):
                    learned = stage.landscape.learned_strengths()
            record, observed = training.result()
    except BaseException:
        from shockflow.storage.atomic import remove_stale_temporaries

        remove_stale_temporaries(out)   # the live log of a training beside, killed with the run (reaped by now)
        raise
    write_training_log(record, log_path)
    T = float(record.noise["temperature"][0]) if record.noise else float("nan")
    stage = dataclasses.replace(stage, extraction=dataclasses.replace(stage.extraction, log_temperature=T))
    # the run's quotient trajectory on each chart (for the parameter truth and the figures only)
    stage = with_trajectory(stage, initial, dict(record.snapshots), chart_key=case.settings.extraction.chart_key,
                            X=data.X, y=data.y)
    steps, loss = record.series["step"], record.series["loss"]
    predicted_steps = [p.step for p in stage.predicted]
    max_ratio = case.settings.prediction.max_ratio
    loss_comparison = match_transitions(predicted_steps, observed_steps(observed), max_ratio=max_ratio,
                                        truth="loss", horizon=float(settings.steps))
    # -- the truth from the parameter snapshots (the prediction is done; it never saw them as truth)
    resolved = snapshots_resolve(np.asarray(record.snapshots.get("step", ())), max_ratio)
    truth = parameter_truth(stage.extraction, learned) if resolved else None
    if truth is not None:   # a loss drop far from every chart's step is a true transition too (no chart saw it)
        truth = with_uncharted_drops(truth, observed, max_ratio=max_ratio)
    comparison = loss_comparison if truth is None else match_transitions(
        predicted_steps, truth.steps, max_ratio=max_ratio, truth="parameters", horizon=float(settings.steps),
        predicted_charts=[p.chart for p in stage.predicted], true_charts=[t.chart for t in truth.transitions])
    result = prediction_result(case, stage, comparison, observed, seed=seed, wall_time=time.perf_counter() - start,
                               log_path=log_path, start=record.start)

    path = out / f"{case.name}.h5"
    def extend(f):
        write_score(f, comparison, loss_comparison, truth, snapshot_schedule={"n_snapshots": settings.n_snapshots,
                                                                             "schedule": "log_spaced"}, record=record)
        import json

        f["score"].attrs["abstained"] = json.dumps([a.as_dict() for a in stage.abstained])  # charts without a prediction
        if stage.blocks:
            from shockflow.prediction.coupled import write_blocks

            write_blocks(f, stage.blocks)
        if stage.saddles:
            from shockflow.prediction.saddle_chain import write_chain

            write_chain(f, stage.saddles, [c.label for c in stage.extraction.charts])

    with status(f"write {path}", enabled=show):
        write_result(result, path, extend=extend)
    figures = ()
    if options.figures:   # --no-figures imports no figure module
        from shockflow.figures import can_draw
        from shockflow.figures.worker import FigureWorker   # two processes when a core is idle

        if can_draw():
            with status("figures", enabled=show):
                figures = FigureWorker().draw(result, out, loss=(steps, loss), format=options.figure_format,
                                              dpi=options.dpi, chain=stage.saddles)
    return RunOutcome(case.name, path, log_path, stage, observed, comparison, time.perf_counter() - start, figures,
                      truth=truth, loss_comparison=loss_comparison, lr=float(settings.lr),
                      truth_note="" if resolved else f"the parameter snapshots (n_snapshots = {settings.n_snapshots}) "
                                                     f"are more than a factor {max_ratio:g} apart, too sparse to place "
                                                     f"a half-learned step; the truth is the loss detections")
