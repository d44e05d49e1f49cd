"""``shockflow run``: a network case from training to predicted-versus-observed transitions (issue 6).

    train (shockflow.training)                   -> training log <out>/<name>-log.h5
    predict (shockflow.prediction.predict)       -> predicted steps, from the initial parameters
    observe (shockflow.prediction.transitions)   -> observed steps        <- only now is the loss looked at
    compare (shockflow.prediction.comparison)    -> matches, relative errors, median
    write <out>/<name>.h5 (atomically) and figures

:func:`~shockflow.prediction.predict.predict_case` is the prediction half; it never sees the loss
series.  The result file's main solution is the first chart's inviscid solution (so
``shockflow show`` draws it); every chart's problem and solutions are under ``/extraction``
(docs/result-file.md's layout plus that group).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from shockflow.cases.errors import CaseError
from shockflow.prediction.predict import WALL, PredictionStage, initial_gamma, predict_case, shock_records

__all__ = ["DEFAULT_CASE", "run_prediction_case", "RunOutcome"]

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

    def shock_rows(self) -> list[dict]:
        return [{"time": r.time, "location": r.location[0], "strength": r.strength, "chart": self.stage.extraction.charts[k].label}
                for k, r in shock_records(self.stage)]

    def as_dict(self) -> dict:
        c = self.comparison
        return {"case": self.case, "result_file": str(self.result_file), "log_file": str(self.log_file),
                "shocks": self.shock_rows(),
                "predicted": [p.as_dict() for p in self.stage.predicted],
                "observed": [{"step": t.midpoint, "onset": t.onset, "end": t.end, "drop": t.drop} for t in self.observed],
                "matches": [m.as_dict() for m in c.matches],
                "median_relative_error": c.median_relative_error, "seconds": self.seconds,
                "figures": [str(p) for p in self.figures]}

    def key_figures(self) -> dict:
        med = self.comparison.median_relative_error
        out = {"median_relative_error": math.nan if med is None else med, "matches": len(self.comparison.matches),
               "predicted_count": len(self.stage.predicted), "observed_count": len(self.observed),
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
        lines.append(f"observed transitions (midpoint steps): " +
                     (", ".join(f"{t.midpoint:.1f}" for t in self.observed) or "none"))
        lines.append(self.comparison.table())
        lines += [f"figure: {p}" for p in self.figures]
        return "\n".join(lines)


def _result(case, stage: PredictionStage, comparison, observed, *, seed, wall_time, log_path):
    from shockflow.cases.schema import to_plain
    from shockflow.logs.provenance import package_versions
    from shockflow.storage import Result

    charts, sols = stage.extraction.charts, stage.solutions
    first_chart, first = charts[0], sols[0]
    rows = shock_records(stage)
    shocks = {"time": np.array([r.time for _, r in rows]), "location": np.array([r.location for _, r in rows]).reshape(-1, 1),
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
               "boundary": "outflow", "lower": [first_chart.lower], "upper": [first_chart.upper],
               "geometry": stage.extraction.geometry, "geometry_kwargs": {k: np.asarray(v).tolist() for k, v in stage.extraction.geometry_kwargs.items()},
               "charts": [c.label for c in charts], "training_log": str(log_path),
               "shock_search": f"interior cells {cut}..{first_chart.x.size - cut}"}
    info = {"method": "chart_steepening", "formation_time": stage.shocks[0].gamma_star,
            "formation_time_from_data": rep.formation_time_from_data, "first_detection": rep.first_detection,
            "fit_points": rep.fit_points}
    pcols = ("step", "flow_step", "time", "gamma_star", "critical_lr", "location", "strength", "d0", "d_exit", "d_eff",
             "nu", "escape_time")
    predicted = {c: np.array([getattr(p, c) for p in stage.predicted], dtype=np.float64) for c in pcols}
    predicted["chart"] = np.array([p.chart for p in stage.predicted], dtype="S")
    predicted["method"] = np.array([p.method for p in stage.predicted], dtype="S")
    observed_cols = {c: np.array([getattr(t, c) for t in observed], dtype=np.float64)
                     for c in ("midpoint", "onset", "end", "steepest", "drop")}
    observed_cols = {"step": observed_cols.pop("midpoint"), **observed_cols}
    matches = {"predicted_step": np.array([m.predicted_step for m in comparison.matches]),
               "observed_step": np.array([m.observed_step for m in comparison.matches]),
               "relative_error": np.array([m.relative_error for m in comparison.matches])}
    return Result(
        case_name=case.name, case_kind=case.kind, case_text=case.text, settings=to_plain(case.settings),
        times=first.times, values=first.u, problem=problem, coordinates={"x": first_chart.x}, initial=first_chart.u0,
        steps=sum(s.steps for s in sols), seconds=sum(s.seconds for s in sols), shocks=shocks, shock_info=info,
        steepness=(rep.times, rep.steepness), tracks=tracks,
        transitions={"predicted": predicted, "observed": observed_cols, "matches": matches},
        case_path=str(case.path) if case.path is not None else "", overrides=case.overrides, seed=seed,
        versions=package_versions(), wall_time=wall_time)


def _write_extraction(f, stage: PredictionStage, comparison) -> None:
    """Every chart's PDE problem and solutions under ``/extraction/<chart>`` of the open result file ``f``."""
    import json

    ex = stage.extraction
    g = f.create_group("extraction")
    g.attrs["geometry"] = ex.geometry
    g.attrs["geometry_kwargs"] = json.dumps({k: np.asarray(v).tolist() for k, v in ex.geometry_kwargs.items()})
    g.attrs["log_temperature"] = ex.log_temperature
    g.attrs["charts"] = json.dumps([c.label for c in ex.charts])
    med = comparison.median_relative_error
    g.attrs["median_relative_error"] = math.nan if med is None else med
    for c, sol, sh in zip(ex.charts, stage.solutions, stage.shocks):
        h = g.create_group(c.label)
        for key in ("x", "u0", "mobility", "escape_x", "escape_rate", "trajectory_steps", "trajectory"):
            h.create_dataset(key, data=np.asarray(getattr(c, key)))
        for key in ("lower", "upper", "mirrored", "x0", "x_min", "loss_at_min", "sigma2", "temperature", "nu",
                    "coordinate"):
            h.attrs[key] = getattr(c, key)
        h.attrs["selector"] = json.dumps(np.asarray(c.selector).tolist() if c.selector is not None else None)
        h.attrs["conserved"] = json.dumps(c.conserved)
        h.attrs["gamma_star"] = sh.gamma_star
        h.attrs["gamma_star_initial_data"] = initial_gamma(c)
        h.attrs["shock_location"] = sh.location
        s = h.create_group("solution")
        s.create_dataset("times", data=sol.times)
        s.create_dataset("values", data=sol.u, compression="gzip", compression_opts=4, shuffle=True,
                         chunks=(1, sol.u.shape[1]))
        if sol.viscous_u is not None:
            s.create_dataset("viscous_values", data=sol.viscous_u, compression="gzip", compression_opts=4,
                             shuffle=True, chunks=(1, sol.u.shape[1]))
        rows = sol.report.shocks
        s.create_dataset("shock_time", data=np.array([r.time for r in rows], dtype=np.float64))
        s.create_dataset("shock_location", data=np.array([r.location[0] for r in rows], dtype=np.float64))
        s.create_dataset("shock_strength", data=np.array([r.strength for r in rows], dtype=np.float64))


def run_prediction_case(case, options) -> RunOutcome:
    """Train, extract, solve, predict, observe, compare, write (module docstring)."""
    from shockflow.prediction import match_transitions
    from shockflow.runners.training import build_model_and_data
    from shockflow.storage import write_result
    from shockflow.training import train
    from shockflow.prediction import find_transitions

    if case.settings.training.optimizer == "adam":   # refused before any training (THEORY §6, "Optimisers")
        raise CaseError.at(case, "training.optimizer", "the prediction (shockflow run) has no validated escape model "
                                                       "for 'adam'; use gd, sgd, momentum or nesterov, or `shockflow "
                                                       "train` to only train")
    start = time.perf_counter()
    seed = options.seed if options.seed is not None else (case.seed or 0)
    model, spec, data, _ = build_model_and_data(case, seed)
    initial = model.copy()
    settings = case.settings.training.train_settings(seed)
    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    log_path = out / f"{case.name}-log.h5"
    show = options.progress and not options.quiet
    trained = model
    if case.settings.geometry is not None and case.settings.geometry.name == "sphere":
        # the sphere geometry's network normalises its weight: train that network (THEORY §1)
        from shockflow import geometry
        from shockflow.geometry.sphere import WeightNormalised

        try:
            trained = WeightNormalised(geometry.build("sphere", model=model, **case.settings.geometry.kwargs()), model)
        except (geometry.GeometryError, TypeError) as exc:
            raise CaseError.at(case, "geometry", str(exc)) from None
    try:
        record = train(trained, data, settings, log_path=log_path, quiet=not show)
    except (TypeError, ValueError) as exc:
        raise CaseError.at(case, "training", str(exc)) from None
    T = float(record.noise["temperature"][0]) if record.noise else float("nan")
    # -- the prediction: initial parameters, data, optimiser settings, snapshots; no loss series
    stage = predict_case(case, initial, data, settings, dict(record.snapshots), log_temperature=T, progress=show)
    # -- only now the loss curve
    steps, loss = record.series["step"], record.series["loss"]
    observed = tuple(find_transitions(steps, loss))
    comparison = match_transitions([p.step for p in stage.predicted], [t.midpoint for t in observed],
                                   max_ratio=case.settings.prediction.max_ratio)
    result = _result(case, stage, comparison, observed, seed=seed, wall_time=time.perf_counter() - start,
                     log_path=log_path)
    path = out / f"{case.name}.h5"
    write_result(result, path, extend=lambda f: _write_extraction(f, stage, comparison))
    figures = ()
    from shockflow.figures import can_draw

    if options.figures and can_draw():
        from shockflow.figures import loss_figure, solution_figure

        figs = [loss_figure(steps, loss, out / f"{case.name}-loss.png", predicted=[p.step for p in stage.predicted],
                            observed=[t.midpoint for t in observed],
                            title=f"{case.name}: predicted (dashed) vs observed (solid) transitions")]
        # the first chart's solution with its own shocks only (the table holds every chart's)
        from dataclasses import replace

        own = np.array([k == 0 for k, _ in shock_records(stage)], dtype=bool)
        first_only = {key: np.asarray(v)[own] for key, v in result.shocks.items()}
        figs.append(solution_figure(replace(result, shocks=first_only), out / f"{case.name}.png"))
        from shockflow.figures.landscape import landscape_figure

        figs.append(landscape_figure(stage.extraction, out / f"{case.name}-landscape.png",
                                     ridges=[sh.location if math.isfinite(sh.gamma_star) else math.nan
                                             for sh in stage.shocks]))
        figures = tuple(figs)
    return RunOutcome(case.name, path, log_path, stage, observed, comparison, time.perf_counter() - start, figures)
