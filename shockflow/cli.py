"""The ``shockflow`` command line.  It imports the library; the library never imports it.

Commands: ``run [CASE]`` (a network case end to end: train, extract the quotient PDE, predict the
transitions from its shocks, compare with the observed ones; a PDE case is solved; no CASE: the
built-in default), ``forecast CASE`` (the same prediction without training; ``--lr-scan``,
``--target-step``), ``monitor LOG --prediction FORECAST [--follow]`` (a log being written against a
forecast), ``compare LOG --prediction RESULT`` (a training log or a CSV/JSON loss curve
against saved predictions), ``geometries`` (the quotient geometries and their symmetries),
``solve CASE`` (PDE cases), ``train CASE`` (network cases), ``validate CASE``,
``cases`` (the built-in cases), ``show RESULT`` (summary table and figures of a result file),
``sweep CASE`` (a case over parameter axes, :mod:`shockflow.sweeps.command`), ``init KIND [NAME]``
(a commented template case file), ``demo`` and ``version``.  A CASE is a path to a TOML file or the name of a built-in case.
``--set KEY=VALUE`` (repeatable) overrides a key of the case before validation
(``--set domain.cells=200``).  Each command takes only the options that mean something to it
(``shockflow COMMAND --help``); results go to ``--out`` (default ``./shockflow-results/``, created).

Exit codes: 0 success; 2 bad input (a case file, a result file, an argument); 1 a failure
during the run (a solve that blows up, a training run that diverges); 130 interrupted; a reader of
stdout that goes away (``shockflow cases | head -1``) ends the command quietly with 0.  Every
exception ends in :func:`main` as one message (``--debug``: the traceback instead), and every
write is confined to ``--out`` (:func:`shockflow.storage.confine_writes`).
With ``--json`` the only thing on stdout is one JSON object (or list for ``cases``); the keys
``case``, ``result_file`` and ``shocks`` (objects with ``time``, ``location``, ``strength``) of
``solve``; ``case``, ``result_file``, ``shocks``, ``predicted`` and ``observed`` (objects with
``step``), ``matches`` (``predicted_step``, ``observed_step``, ``relative_error``) and
``median_relative_error`` (over all true transitions, a miss counting 1; null when there are none) and
``score`` (``recall``, ``precision``, ``median_relative_error_all``, ``median_relative_error_matched``,
``unmatched_predicted``, ``unmatched_observed``, ``truth``) of ``run`` (``compare`` prints the last five);
``name``, ``kind``, ``description`` of ``cases``; ``name``, ``symmetry`` of ``geometries``, are stable.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from shockflow import __version__

EXIT_OK, EXIT_FAILURE, EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_TERMINATED = 0, 1, 2, 130, 143


def _clean(value):
    """JSON-safe: non-finite floats become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def _print_json(obj) -> None:
    _STATE["printed"] = True
    print(json.dumps(_clean(obj), allow_nan=False))


#: the command running now: the errors it reported, and whether it printed its JSON object (a failed command that
#: did not: ``--json`` prints the last error as one, so that stdout holds one object whatever happened)
_STATE: dict = {"errors": [], "printed": False, "usage": None}


def _error(message: str) -> None:
    _STATE["errors"].append(message)
    print(f"shockflow: error: {message}", file=sys.stderr)


def _warn(message: str) -> None:
    """A warning on stderr: the command goes on (its result is what it says, but perhaps not what was meant)."""
    print(f"shockflow: warning: {message}", file=sys.stderr)


# -- commands --------------------------------------------------------------------------------------
def _demo(args: argparse.Namespace) -> int:
    from shockflow.runners.demo import DemoInputError, run_demo

    try:
        result = run_demo(cells=args.cells, amplitude=args.amplitude, offset=args.offset, t_end=args.t_end)
    except DemoInputError as exc:
        _error(str(exc))
        return EXIT_BAD_INPUT
    if args.json:
        print(json.dumps(result.as_dict()))
    elif not args.quiet:
        print(result.table())
    return EXIT_OK


def _version(args: argparse.Namespace) -> int:
    import h5py
    import numba
    import numpy
    import scipy

    versions = {"shockflow": __version__, "python": sys.version.split()[0], "numpy": numpy.__version__,
                "scipy": scipy.__version__, "numba": numba.__version__, "h5py": h5py.__version__}
    print(json.dumps(versions) if args.json else "\n".join(f"{k} {v}" for k, v in versions.items()))
    return EXIT_OK


def _load(args):
    """The case of a command, refused before anything runs if it would not fit the machine (cases/cost.py)."""
    from shockflow.cases import load_case
    from shockflow.cases.cost import require_affordable

    case = load_case(args.case, overrides=args.set or ())
    args.cost = require_affordable(case, allow_large=getattr(args, "allow_large", False))
    return case


def _run_options(args: argparse.Namespace):
    """How a command runs its case.  ``--json`` keeps the progress lines: they go to stderr, the JSON object alone to
    stdout; ``--quiet`` silences them."""
    from shockflow.cases import RunOptions

    return RunOptions(out=args.out, seed=args.seed, quiet=args.quiet, progress=not args.quiet,
                      figures=not args.no_figures, figure_format=args.figure_format, dpi=args.dpi)


def _run_case(args: argparse.Namespace, command: str) -> int:
    from shockflow.cases import get_kind

    case = _load(args)
    kind = get_kind(case.kind)
    if kind.command != command:
        _error(f"case {case.name!r} is a {case.kind} case: run it with `shockflow {kind.command}`, not `{command}`")
        return EXIT_BAD_INPUT
    try:
        Path(args.out).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _error(f"--out: cannot create the output directory {args.out!r} ({exc.strerror})")
        return EXIT_BAD_INPUT
    options = _run_options(args)
    outcome = kind.run(case, options)
    if args.json:
        _print_json(outcome.as_dict())
    elif not args.quiet:
        print(outcome.table())
    return EXIT_OK


def _solve(args: argparse.Namespace) -> int:
    return _run_case(args, "solve")


def _train(args: argparse.Namespace) -> int:
    return _run_case(args, "train")


def _run(args: argparse.Namespace) -> int:
    from shockflow.cases import get_kind
    from shockflow.runners.prediction import DEFAULT_CASE, run_prediction_case

    if args.case is None:
        args.case = DEFAULT_CASE
    case = _load(args)
    if case.kind != "network":
        return _run_case(args, get_kind(case.kind).command)
    try:
        Path(args.out).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _error(f"--out: cannot create the output directory {args.out!r} ({exc.strerror})")
        return EXIT_BAD_INPUT
    options = _run_options(args)
    outcome = run_prediction_case(case, options)
    if args.json:
        _print_json(outcome.as_dict())
    elif not args.quiet:
        print(outcome.table())
    return EXIT_OK


def _lr_scan(text: str) -> tuple[float, float, int]:
    """``LO:HI:N`` of ``forecast --lr-scan``: N learning rates, log-spaced from LO to HI."""
    from shockflow.runners.forecast import MAX_SCAN_RATES

    parts = text.split(":")
    try:
        lo, hi, n = float(parts[0]), float(parts[1]), int(parts[2])
        if len(parts) != 3 or not (0 < lo <= hi and math.isfinite(hi) and 1 <= n <= MAX_SCAN_RATES):
            raise ValueError
    except (ValueError, IndexError):
        raise argparse.ArgumentTypeError(f"expected LO:HI:N with 0 < LO <= HI and a whole N from 1 to "
                                         f"{MAX_SCAN_RATES} (a rate costs about a chart solve), found {text!r}") from None
    return lo, hi, n


#: the options of ``forecast`` by the names of the Python API's arguments (:func:`shockflow.forecast`)
_FORECAST_FLAGS = {"lr_scan": "--lr-scan", "target_step": "--target-step", "transition": "--transition"}


def _forecast(args: argparse.Namespace) -> int:
    from shockflow.cases.errors import ArgumentError
    from shockflow.runners.forecast import forecast_case

    case = _load(args)
    if case.kind != "network":
        _error(f"case {case.name!r} is a {case.kind} case: a forecast is made for a network case")
        return EXIT_BAD_INPUT
    options = _run_options(args)
    rates = None
    if args.lr_scan is not None:
        import numpy as np

        lo, hi, n = args.lr_scan
        rates = np.geomspace(lo, hi, n)
    try:
        outcome = forecast_case(case, options, scan_rates=rates, target_step=args.target_step,
                                transition=args.transition)
    except ArgumentError as exc:   # an option the forecast refused: named as the command line spells it
        flag = _FORECAST_FLAGS.get(exc.parameter)
        raise (exc if flag is None else exc.spelled(flag)) from None
    if args.json:
        _print_json(outcome.as_dict())
    elif not args.quiet:
        print(outcome.table())
    return EXIT_OK


def _monitor(args: argparse.Namespace) -> int:
    from shockflow.logs.live import live_logs_of
    from shockflow.prediction import ComparisonError
    from shockflow.runners.monitor import follow, monitor_log
    from shockflow.storage import ResultFileError

    from shockflow.storage.input_files import file_problem

    problem = file_problem(args.log)
    if problem not in (None, "no such file"):   # a directory, a device, a pipe (/dev/zero was "no such file")
        _error(f"LOG {args.log!r} {problem}, expected a log file")
        return EXIT_BAD_INPUT
    if not args.follow and problem is not None and not live_logs_of(args.log):   # --follow may wait for a log
        _error(f"LOG {args.log!r}: {problem} (with --follow, monitor waits for it to appear)")
        return EXIT_BAD_INPUT
    try:
        monitor = monitor_log(args.log, args.prediction, step_column=args.step_column, loss_column=args.loss_column,
                              max_ratio=args.max_ratio)
    except (ResultFileError, ComparisonError, FileNotFoundError) as exc:
        _error(str(exc) if "--prediction" in str(exc) else f"--prediction: {exc}")
        return EXIT_BAD_INPUT
    except ValueError as exc:
        _error(str(exc))
        return EXIT_BAD_INPUT

    def emit(event):
        if args.json:
            _print_json(event.as_dict())
        elif event.kind == "warning":
            if not args.quiet:
                print(f"shockflow: {event.line()}", file=sys.stderr)
        elif not args.quiet:
            print(event.line())
        sys.stdout.flush()

    try:
        if args.follow:
            try:
                follow(monitor, interval=args.interval, idle=args.idle, emit=emit)
            except KeyboardInterrupt:
                if args.json:     # the event stream ends with its end, as a follow that ends otherwise does
                    import time

                    from shockflow.runners.monitor import MonitorEvent

                    steps, _ = monitor.tail.series()
                    emit(MonitorEvent("end", time.time(), time.time(), monitor.tail.rows,
                                      float(steps[-1]) if steps.size else float("nan"),
                                      message="interrupted (Ctrl-C): stopped following"))
                elif not args.quiet:
                    print(monitor.table())
                raise
            if monitor.tail.modified() is None and monitor.tail.rows == 0:   # no log ever appeared: nothing to report
                _STATE["printed"] = True          # (its "end" event, with --json, is the object)
                _error(f"LOG {args.log!r}: no log appeared there while monitor waited (the writer's path?)")
                return EXIT_BAD_INPUT
        else:
            for event in monitor.update():
                emit(event)
    except ValueError as exc:   # a complete row that does not parse: the log is misread, not guessed
        if args.json and _STATE["printed"]:   # the event stream ends with the error, as one more JSON line
            print(json.dumps(_clean({"kind": "error", "message": str(exc), "exit_code": EXIT_BAD_INPUT}),
                             allow_nan=False))
            sys.stdout.flush()
        _error(str(exc))
        return EXIT_BAD_INPUT
    if not args.json and not args.quiet:
        print(monitor.table())
    if monitor.tail.diverged is not None:   # the run the log is of blew up: said with its step, exit 1
        step, value = monitor.tail.diverged
        _error(f"LOG {args.log!r}: the run diverged at step {step:g} (loss {value})")
        return EXIT_FAILURE
    return EXIT_OK


def _compare(args: argparse.Namespace) -> int:
    from shockflow.prediction import ComparisonError, compare_log
    from shockflow.storage import ResultFileError

    try:
        comparison, transitions = compare_log(args.log, args.prediction, max_ratio=args.max_ratio,
                                              step_column=args.step_column, loss_column=args.loss_column)
    except ResultFileError as exc:  # the --prediction file (the log's errors are ComparisonError naming LOG)
        _error(str(exc) if "--prediction" in str(exc) else f"--prediction: {exc}")
        return EXIT_BAD_INPUT
    except FileNotFoundError as exc:
        _error(str(exc))
        return EXIT_BAD_INPUT
    except ComparisonError as exc:
        _error(str(exc))
        return EXIT_BAD_INPUT
    except ValueError as exc:  # unreadable log (wrong columns, not a log)
        _error(f"LOG {args.log!r}: {exc}")
        return EXIT_BAD_INPUT
    from shockflow.logs.agreement import check_log_against

    differences = check_log_against(args.log, args.prediction)
    if differences and not args.quiet:
        _warn(f"LOG {args.log!r} and --prediction {args.prediction!r} describe different runs: "
              f"{'; '.join(differences)}")
    if args.json:
        _print_json({"log": str(args.log), "result_file": str(args.prediction), "disagreements": differences,
                     "predicted": [{"step": p} for p in comparison.predicted],
                     "observed": [{"step": t.midpoint, "onset": t.onset, "end": t.end, "drop": t.drop,
                                   "count": t.count} for t in transitions],
                     "matches": [m.as_dict() for m in comparison.matches],
                     "median_relative_error": comparison.median_relative_error, "score": comparison.score(),
                     # the truth's charts where it is read from parameter snapshots; none where it is the loss's drops
                     "truth": [{"chart": c, "step": t} for c, t in zip(
                         list(comparison.true_charts) + [None] * (len(comparison.observed) - len(comparison.true_charts)),
                         comparison.observed)],
                     **({"loss_score": comparison.against_loss.score()} if comparison.against_loss else {})})
    elif not args.quiet:
        print(f"{args.log} against the predictions of {args.prediction}")
        print(comparison.table())
    return EXIT_OK


def _spectra(args: argparse.Namespace) -> int:
    from pathlib import Path

    from shockflow.spectra import analyse_spectra

    from shockflow.storage.input_files import file_problem

    source = Path(args.log)
    problem = file_problem(source)
    if problem is not None:
        _error(f"LOG {args.log!r}: {problem}")
        return EXIT_BAD_INPUT
    out = Path(args.out) if args.out else source.parent
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _error(f"--out {str(out)!r}: cannot create the directory ({exc.strerror})")
        return EXIT_BAD_INPUT
    stem = source.stem + (f"-{args.param}" if args.param else "")
    try:
        summary = analyse_spectra(source, param=args.param, teacher=args.teacher, ratio=args.ratio, level=args.level,
                                  output=out / f"{stem}-spectra.h5",
                                  figure=None if args.no_figures else out / f"{stem}-spectra.{args.figure_format}")
    except (ValueError, KeyError, OSError) as exc:  # wrong file, missing parameter, too small to fit a bulk
        text = str(exc)
        if args.teacher is not None and text.startswith("teacher:"):   # the --teacher file's, not the log's
            text = text.removeprefix("teacher:").strip().removeprefix(repr(str(args.teacher))).lstrip(": ")
            _error(f"--teacher {args.teacher!r}: {text}")
        else:
            _error(f"LOG {args.log!r}: {text}")
        return EXIT_BAD_INPUT
    if args.json:
        _print_json(summary)
    elif not args.quiet:
        from shockflow.spectra.monitor import spectra_table

        print(spectra_table(summary))
    return EXIT_OK


def _geometries(args: argparse.Namespace) -> int:
    from shockflow import geometry

    rows = [{"name": n, "symmetry": geometry.geometry_class(n).symmetry} for n in geometry.available()]
    if args.json:
        _print_json(rows)
    elif not args.quiet:
        width = max(len(r["name"]) for r in rows)
        print("\n".join(f"{r['name']:<{width}}  {r['symmetry']}" for r in rows))
    return EXIT_OK


def _validate(args: argparse.Namespace) -> int:
    from shockflow.cases import CaseError, get_kind
    from shockflow.cases.schema import to_plain

    try:
        case = _load(args)
        kind = get_kind(case.kind)
        if kind.verify is not None:
            kind.verify(case)
    except CaseError as exc:
        if args.json:
            _print_json({"case": str(args.case), "valid": False, "file": exc.file,
                         "errors": [str(p) for p in exc.problems], "missing": list(exc.missing)})
        _error(str(exc))
        return EXIT_BAD_INPUT
    if args.json:
        _print_json({"case": case.name, "valid": True, "kind": case.kind, "file": str(case.path),
                     "settings": to_plain(case.settings), "cost": args.cost.as_dict()})
    elif not args.quiet:
        print(f"{case.path}: valid {case.kind} case {case.name!r}")
    return EXIT_OK


def _cases(args: argparse.Namespace) -> int:
    from shockflow.cases.builtin import builtin_cases, cases_search_paths

    found = builtin_cases()
    if not found:
        _error("no built-in cases found; looked in " + ", ".join(str(p) for p in cases_search_paths())
               + " (set SHOCKFLOW_CASES to a directory of case files)")
        return EXIT_FAILURE
    if args.json:
        _print_json([c.as_dict() for c in found])
    elif not args.quiet:
        width = max((len(c.name) for c in found), default=4)
        for c in found:
            print(f"{c.name.ljust(width)}  {c.kind:<8} {c.description}")
    return EXIT_OK


def _init(args: argparse.Namespace) -> int:
    from shockflow.cases.loading import name_problem
    from shockflow.cases.templates import template_text
    from shockflow.storage.atomic import atomic_open

    name = args.name if args.name is not None else f"my-{args.kind}-case"
    name = name.removesuffix(".toml")
    if not name or any(c in name for c in "/\\") or name.startswith("."):
        _error(f"NAME: expected a plain file name without directories, found {args.name!r}")
        return EXIT_BAD_INPUT
    problem = name_problem(name)   # the case's name: what `validate` would refuse, refused here
    if problem is not None:
        _error(f"NAME: {problem}")
        return EXIT_BAD_INPUT
    target = Path(args.out) / f"{name}.toml"
    if Path(args.out).exists() and not Path(args.out).is_dir():
        _error(f"--out {args.out!r}: expected a directory, found a file")
        return EXIT_BAD_INPUT
    if target.exists() and not args.force:
        _error(f"{target}: already exists (use --force to overwrite it)")
        return EXIT_BAD_INPUT
    try:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        with atomic_open(target, "w", encoding="utf-8") as fh:
            fh.write(template_text(args.kind, name))
    except OSError as exc:
        _error(f"--out: cannot write {target} ({exc.strerror})")
        return EXIT_BAD_INPUT
    command = "solve" if args.kind == "pde" else "run"
    if args.json:
        _print_json({"case": name, "kind": args.kind, "file": str(target)})
    elif not args.quiet:
        import shlex

        quoted = shlex.quote(str(target))   # the commands as a shell takes them (an --out with a space)
        print(f"wrote {target}: a {args.kind} case; check it with `shockflow validate {quoted}`, "
              f"run it with `shockflow {command} {quoted}`")
    return EXIT_OK


def _show(args: argparse.Namespace) -> int:
    from shockflow.runners.theories import is_theory_result
    from shockflow.storage import ResultFileError, read_result

    if is_theory_result(args.result):
        return _show_theory(args)
    from shockflow.storage.hdf5 import file_format

    if file_format(args.result) == "shockflow-training-log":   # (a network sweep's task file is one too)
        raise ResultFileError(f"{str(args.result)!r} is a shockflow training log, not a result file: `shockflow "
                              f"compare LOG --prediction RESULT` scores it, `shockflow monitor` follows it, `shockflow "
                              f"spectra LOG` reads its weight matrices")
    try:
        result = read_result(args.result)
    except ResultFileError:
        raise
    except Exception as exc:  # missing, or damaged in a way the reader did not anticipate: bad input, naming the file
        raise ResultFileError(f"result file {str(args.result)!r}: cannot read it "
                              f"({type(exc).__name__}: {exc.strerror if isinstance(exc, OSError) and exc.strerror else exc})") from None
    figures = []
    from shockflow.figures import can_draw

    if not args.no_figures and can_draw():
        from shockflow.figures import draw_result

        out = Path(args.out) if args.out is not None else Path(args.result).parent
        out.mkdir(parents=True, exist_ok=True)
        from shockflow.cases.loading import name_problem

        stem = result.case_name if name_problem(result.case_name) is None else Path(args.result).stem
        from shockflow.runners.forecast import read_forecast, staircase_figure

        forecast = read_forecast(args.result)
        if forecast:   # a forecast file: its staircase, as `forecast` drew it (not a run's figures over a run's)
            figures.append(str(staircase_figure(stem, forecast["predicted"], forecast["horizon"],
                                                forecast["initial_loss"], forecast.get("optimizer", ""),
                                                forecast.get("lr", float("nan")), out,
                                                figure_format=args.figure_format, dpi=args.dpi)))
        else:
            from shockflow.prediction.saddle_chain import read_chain

            figures += [str(p) for p in draw_result(result, out, stem=stem, format=args.figure_format, dpi=args.dpi,
                                                    chain=read_chain(args.result))]
    info = result.shock_info
    if args.json:
        _print_json({"case": result.case_name, "kind": result.case_kind, "result_file": str(args.result),
                     "shocks": result.shock_rows(), "formation_time": info.get("formation_time"),
                     "problem": result.problem, "steps": result.steps, "created": result.created,
                     "figures": figures})
        return EXIT_OK
    if args.quiet:
        return EXIT_OK
    p = result.problem
    print(f"{args.result}: {result.case_kind} case {result.case_name!r} (created {result.created}, seed "
          f"{result.seed if result.seed is not None else '-'})")
    print(f"  {p.get('equation')} on {p.get('domain')} ({p.get('method')}), nu = {p.get('nu')}, "
          f"{result.times.size} snapshots to t = {result.times[-1]:g}, {result.steps} steps in {result.seconds:.2f} s")
    if result.overrides:
        print("  overrides: " + " ".join(result.overrides))
    print(f"  first shock from steepening: t* = {info.get('formation_time')}, "
          f"from the initial data: {info.get('formation_time_from_data')}")
    rows = result.shock_rows()
    if rows:
        print(f"  {'time':>12}  {'location':>28}  {'strength':>10}")
        for r in rows:
            loc = r["location"]
            loc = ", ".join(f"{v:.5g}" for v in loc) if isinstance(loc, list) else f"{loc:.6g}"
            print(f"  {r['time']:12.6g}  {loc:>28}  {r['strength']:10.4g}")
    else:
        print("  no shocks")
    pred = result.transitions.get("predicted", {})
    if "step" in pred and len(pred["step"]):
        obs = result.transitions.get("observed", {}).get("step", [])
        print("  predicted transition steps: " + ", ".join(f"{v:.1f}" for v in pred["step"]))
        print("  observed transition steps:  " + (", ".join(f"{v:.1f}" for v in obs) or "none"))
        m = result.transitions.get("matches", {})
        errors = list(m.get("relative_error", []))
        for ps, os_, e in zip(m.get("predicted_step", []), m.get("observed_step", []), errors):
            print(f"    predicted {ps:10.1f}  observed {os_:10.1f}  relative error {100 * e:5.1f}%")
        import numpy as np

        print("  median relative error: " + (f"{100 * float(np.median(errors)):.1f}%" if errors else "n/a (nothing matched)"))
    for f in figures:
        print(f"  figure: {f}")
    return EXIT_OK


def _show_theory(args: argparse.Namespace) -> int:
    """``show`` on a theory result file (nqf, bbp, scaling): the run's table and figures, from the file."""
    from shockflow.figures import can_draw
    from shockflow.runners.theories import show_theory_result

    draw = not args.no_figures and can_draw()
    outcome, figures = show_theory_result(args.result, out=args.out, figures=draw, figure_format=args.figure_format,
                                          dpi=args.dpi)
    if args.json:
        _print_json({**outcome.as_dict(), "kind": _kind_of(outcome), "figures": [str(p) for p in figures]})
    elif not args.quiet:
        print(outcome.table())
        for f in figures:
            print(f"figure: {f}")
    return EXIT_OK


def _kind_of(outcome) -> str:
    return {"NQFOutcome": "nqf", "BBPOutcome": "bbp", "ScalingOutcome": "scaling"}[type(outcome).__name__]


# -- parser ----------------------------------------------------------------------------------------
def _checked(parse, check: str):
    """An argparse type: the option's text parsed by ``parse`` and checked by ``shockflow.cases.arguments.<check>``,
    the check of the Python argument of that kind (imported once an option is given); argparse names the option in
    the error."""
    def convert(text: str):
        from shockflow.cases import arguments

        try:
            return arguments.from_text(text, parse, getattr(arguments, check))
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = check
    return convert


_positive_int = _checked(int, "positive_whole")
_positive_float = _checked(float, "positive_number")
_factor = _checked(float, "factor")   # a matching factor: > 1 (a factor of 1 would match only exact equality)
_seed = _checked(int, "seed")
_dpi = _checked(float, "figure_dpi")
_seconds = _checked(float, "wait_seconds")


DEFAULT_OUT = "shockflow-results"  # relative to the current directory; created when needed


def _common(out: str | None | bool = DEFAULT_OUT, seed: bool = True,
            json_help: str = "print one JSON object on stdout", beside: str | None = None) -> argparse.ArgumentParser:
    """The output options of a command: ``--quiet`` and ``--json`` always (``json_help`` says what it prints);
    ``--out`` unless ``out`` is False (None: no default, the command writes beside its input ``beside``, which the
    help names); ``--seed`` where a command draws random numbers."""
    common = argparse.ArgumentParser(add_help=False)
    if out is not False:
        default = (f" (default: the directory of {beside}, beside it)" if out is None and beside else
                   "" if not out else " (default: the current directory)" if out == "." else f" (default ./{out}/, created)")
        common.add_argument("--out", default=out, metavar="DIR", help="directory for result files and figures" + default)
    if seed:
        common.add_argument("--seed", type=_seed, default=None, help="random seed (default: the case's own)")
    common.add_argument("--quiet", action="store_true", help="print nothing but errors")
    common.add_argument("--json", action="store_true", help=json_help)
    _debug(common)
    return common


def _debug(p: argparse.ArgumentParser) -> None:
    """``--debug`` after the command as before it (``shockflow --debug CMD``): every command takes it, as every failure
    message says "rerun with --debug"; not given, it leaves the one before the command as it is."""
    p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="print the traceback of a failure")


def _figure_arguments(p: argparse.ArgumentParser, no_figures: str) -> None:
    """The options of a command that draws figures: ``--no-figures`` (``no_figures`` says what it does
    then), ``--figure-format``, ``--dpi``."""
    p.add_argument("--no-figures", action="store_true", help=no_figures)
    p.add_argument("--figure-format", choices=("png", "svg", "pdf"), default="png", help="figure files (default png)")
    p.add_argument("--dpi", type=_dpi, default=None, help="figure resolution (default 150; from 10 to 1200)")


def _case_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("case", metavar="CASE", help="a case file (TOML) or the name of a built-in case")
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="override a key of the case, e.g. --set domain.cells=200 (repeatable)")
    _allow_large(p)


def _allow_large(p: argparse.ArgumentParser) -> None:
    p.add_argument("--allow-large", action="store_true",
                   help="run a case even if its estimated memory or time exceeds what the machine has")


class _Parser(argparse.ArgumentParser):
    """argparse's parser, keeping the message of a usage error (exit 2) for ``--json`` (:func:`_command`); the
    subcommands' parsers are of the same class."""

    def error(self, message: str):
        _STATE["usage"] = f"{self.prog}: {message}"
        super().error(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="shockflow", description=__doc__.split("\n")[0])
    parser.add_argument("--version", action="version", version=f"shockflow {__version__}")
    parser.add_argument("--debug", action="store_true", help="print the traceback of a failure")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    common = _common()

    run = commands.add_parser("run", parents=[common],
                              help="run a case end to end: predicted vs observed transitions (default: the built-in default case)")
    run.add_argument("case", metavar="CASE", nargs="?", default=None,
                     help="a case file (TOML) or the name of a built-in case (default: the built-in default case)")
    run.add_argument("--set", action="append", metavar="KEY=VALUE",
                     help="override a key of the case, e.g. --set training.steps=500 (repeatable)")
    _allow_large(run)
    _figure_arguments(run, "write the result file only")
    run.set_defaults(run=_run)

    forecast = commands.add_parser("forecast", parents=[common],
                                   help="forecast the transitions of a network case without training it")
    _case_arguments(forecast)
    forecast.add_argument("--lr-scan", type=_lr_scan, default=None, metavar="LO:HI:N",
                          help="forecast at N learning rates log-spaced from LO to HI; flags the critical ones")
    forecast.add_argument("--target-step", type=_positive_float, default=None, metavar="STEP",
                          help="the smallest learning rate for which a transition happens by STEP")
    forecast.add_argument("--transition", type=_positive_int, default=None, metavar="K",
                          help="which forecast transition --target-step is about (default: the first); only with "
                               "--target-step")
    _figure_arguments(forecast, "write the forecast file only")
    forecast.set_defaults(run=_forecast)

    monitor = commands.add_parser("monitor", parents=[_common(out=False, seed=False, json_help=(
        "print one JSON object per event on stdout, as it happens (JSON lines: each transition detected; with "
        "--follow also its start and end)"))],
                                  help="follow a training log being written and check it against a forecast")
    monitor.add_argument("log", metavar="LOG", help="a training log (.h5) or a CSV/JSON-lines loss log being appended")
    monitor.add_argument("--prediction", required=True, metavar="FORECAST",
                         help="a forecast file of `shockflow forecast` (or a result file of `shockflow run`)")
    monitor.add_argument("--follow", action="store_true", help="keep reading until the run ends, the log stops "
                                                               "growing, or Ctrl-C (default: read once)")
    monitor.add_argument("--interval", type=_seconds, default=0.2, metavar="SECONDS",
                         help="the shortest time between two reads (default 0.2; the log's own update interval "
                              "once measured, if longer)")
    monitor.add_argument("--idle", type=_seconds, default=None, metavar="SECONDS",
                         help="end the follow after this long without new rows (default: ten update intervals, "
                              "at least 2 s; 30 s for a log not there yet; while a shockflow run trains into it, "
                              "never)")
    monitor.add_argument("--max-ratio", type=_factor, default=2.0,
                         help="a forecast and an observed transition match within this factor (default 2)")
    monitor.add_argument("--step-column", metavar="NAME", help="the step column of a CSV/JSON log ('row': row numbers)")
    monitor.add_argument("--loss-column", metavar="NAME", help="the loss column of a CSV/JSON log")
    monitor.set_defaults(run=_monitor)

    compare = commands.add_parser("compare", parents=[_common(out=False, seed=False)],
                                  help="match the transitions of a loss log (HDF5, CSV, JSON) with saved predictions")
    compare.add_argument("log", metavar="LOG", help="a training log (.h5) or a CSV/JSON file of step and loss")
    compare.add_argument("--prediction", required=True, metavar="RESULT", help="a result file written by `shockflow run`")
    compare.add_argument("--max-ratio", type=_factor, default=2.0,
                         help="match a prediction and an observation only within this factor, either side (default 2)")
    compare.add_argument("--step-column", metavar="NAME", help="the step column of a CSV/JSON log ('row': row numbers)")
    compare.add_argument("--loss-column", metavar="NAME", help="the loss column of a CSV/JSON log")
    compare.set_defaults(run=_compare)

    spectra = commands.add_parser("spectra", parents=[_common(None, seed=False, beside="LOG")],
                                  help="spectra of a weight matrix over a saved run: bulk fit, outliers, teacher overlap")
    spectra.add_argument("log", metavar="LOG", help="a training log (.h5), an HDF5 stack or an .npz of weight matrices")
    spectra.add_argument("--param", default=None, help="the weight matrix (parameter name) to analyse")
    spectra.add_argument("--teacher", default=None, metavar="NPY", help="teacher direction (.npy) for the overlap q²")
    spectra.add_argument("--ratio", type=_positive_float, default=None, help="aspect ratio N/M (default: fitted)")
    spectra.add_argument("--level", type=float, default=0.99, help="Tracy–Widom level of the outlier test")
    _figure_arguments(spectra, "do not draw the spectrum figure")
    spectra.set_defaults(run=_spectra)

    geometries = commands.add_parser("geometries", parents=[_common(out=False, seed=False)],
                                     help="list the quotient geometries")
    geometries.set_defaults(run=_geometries)

    solve = commands.add_parser("solve", parents=[common], help="solve a PDE case and report its shocks")
    _case_arguments(solve)
    _figure_arguments(solve, "write the result file only")
    solve.set_defaults(run=_solve)

    train = commands.add_parser("train", parents=[common], help="train the network of a network case (HDF5 log)")
    _case_arguments(train)
    _figure_arguments(train, "write the training log only")
    train.set_defaults(run=_train)

    validate = commands.add_parser("validate", parents=[_common(out=False, seed=False)],
                                   help="check a case file without running it")
    _case_arguments(validate)
    validate.set_defaults(run=_validate)

    cases = commands.add_parser("cases", parents=[_common(out=False, seed=False)], help="list the built-in cases")
    cases.set_defaults(run=_cases)

    from shockflow.cases.templates import TEMPLATE_KINDS

    init = commands.add_parser("init", parents=[_common(".", seed=False)],
                               help="write a commented template case file (pde or network) to start from")
    init.add_argument("kind", metavar="KIND", choices=TEMPLATE_KINDS, help="pde or network")
    init.add_argument("name", metavar="NAME", nargs="?", default=None,
                      help="the case name; the file is NAME.toml in --out (default my-KIND-case)")
    init.add_argument("--force", action="store_true", help="overwrite an existing file")
    init.set_defaults(run=_init)

    from shockflow.sweeps.command import add_parser as add_sweep_parser

    add_sweep_parser(commands)  # `shockflow sweep` (shockflow.sweeps.command)

    show = commands.add_parser("show", parents=[_common(None, seed=False, beside="RESULT")],
                               help="summary table and figures of a result file")
    show.add_argument("result", metavar="RESULT", help="a result file (.h5) written by solve or run")
    _figure_arguments(show, "print the table only")
    show.set_defaults(run=_show)

    demo = commands.add_parser(
        "demo", help="solve the built-in default case (Burgers from sine data past the first shock) "
                     "and compare every measured number with its exact value")
    demo.add_argument("--cells", type=_positive_int, default=2000, help="grid cells (default 2000)")
    demo.add_argument("--amplitude", type=_positive_float, default=1.0, help="A in u0 = A sin(2 pi x) + c (default 1)")
    demo.add_argument("--offset", type=float, default=0.25, help="c in u0 = A sin(2 pi x) + c (default 0.25)")
    demo.add_argument("--t-end", type=_positive_float, default=0.4, help="final time (default 0.4)")
    demo.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    demo.add_argument("--quiet", action="store_true", help="print nothing (exit status only)")
    _debug(demo)
    demo.set_defaults(run=_demo)

    version = commands.add_parser("version", help="print the versions of shockflow and its dependencies")
    version.add_argument("--json", action="store_true")
    _debug(version)
    version.set_defaults(run=_version)
    return parser


#: commands that write into --out (checked, created and confined before they compute anything)
_WRITING = ("run", "forecast", "solve", "train", "sweep", "show", "spectra")


def _write_root(args: argparse.Namespace) -> str | None:
    """The directory a command writes into: ``--out``, or beside its input for ``show`` / ``spectra``."""
    if args.command not in _WRITING or getattr(args, "dry_run", False):
        return None
    if args.command == "show" and args.no_figures:  # a table only: nothing is written
        return None
    if getattr(args, "out", None) is not None:
        return args.out
    source = getattr(args, "result", None) or getattr(args, "log", None)
    if source is not None:
        return str(Path(source).parent)
    return None  # sweep without --out: its default directory is named after the case (checked by the sweep)


def _failure(exc: BaseException) -> str:
    """One line for an unexpected failure: what, where (innermost frame inside the shockflow or solvers
    package, found by the packages' own directories, not by a name in the path) and why."""
    import traceback

    import shockflow
    import solvers

    packages = [Path(p.__file__).resolve().parent for p in (shockflow, solvers)]
    place = ""
    frames = traceback.extract_tb(exc.__traceback__)
    raised_in = getattr(exc, "raised_in", None)   # raised in a process beside (shockflow.forking.Beside): its frames
    if raised_in:
        frames = [traceback.FrameSummary(file, line, name) for file, line, name in raised_in]
    for frame in reversed(frames):
        file = Path(frame.filename).resolve()
        root = next((pkg for pkg in packages if file.is_relative_to(pkg)), None)
        if root is not None:
            place = f" in {root.name}/{file.relative_to(root).as_posix()}:{frame.lineno} ({frame.name})"
            break
    reason = str(exc) or type(exc).__name__
    return f"the run failed{place}: {type(exc).__name__}: {reason[:500]}"


class _Terminated(KeyboardInterrupt):
    """SIGTERM (a job scheduler, ``kill``, ``timeout``), raised like a Ctrl-C so that the same clean-up runs on the way
    up (temporaries removed, a process beside killed and reaped); exit 143."""


class _InterruptWatch:
    """Within the block, SIGINT and SIGTERM are recorded before they raise (KeyboardInterrupt, :class:`_Terminated`),
    so that an interruption swallowed by a library on its way up is still reported (exit 130, 143).  Outside the main
    thread: a no-op."""

    def __init__(self):
        self.seen = False
        self.terminated = False
        self._previous = {}

    def _handler(self, signum, frame):
        import signal

        self.seen = True
        if signum == signal.SIGTERM:
            self.terminated = True
            raise _Terminated
        raise KeyboardInterrupt

    def __enter__(self):
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.signal(sig, self._handler)
        return self

    def __exit__(self, *exc):
        import signal

        for sig, previous in self._previous.items():
            signal.signal(sig, previous)
        self._previous = {}
        return False


def _bad_input_errors() -> tuple[type, ...]:
    """The library's bad-input exceptions, imported only once something has failed (so that
    ``--help`` and ``cases`` do not pay for h5py and numpy)."""
    from shockflow.cases.errors import CaseError
    from shockflow.models.protocol import ProtocolError
    from shockflow.runners.forecast import ForecastOptionError
    from shockflow.storage import ResultFileError, WriteOutsideError
    from shockflow.storage.outdir import OutDirError

    return CaseError, ForecastOptionError, ResultFileError, OutDirError, WriteOutsideError, ProtocolError


def main(argv: list[str] | None = None) -> int:
    """Run the command ``argv`` and return its exit code.  Without ``argv`` (``sys.argv``: the ``shockflow``
    console script, ``python -m shockflow.cli``) this is the program, and it ends the process itself
    (:func:`_end_process`)."""
    code = _command(argv)
    if argv is None:
        _end_process(code)
    return code


def _end_process(code: int) -> None:
    """End the process with ``code`` as the interpreter would, less its teardown: the atexit handlers run
    (logging's flush, weakref finalizers, multiprocessing's), stdout and stderr are flushed, then ``os._exit``.
    Freeing every module and object one by one took 0.35–0.41 s of CPU after a warm ``shockflow run``
    (issue 23: a fifth of ``--no-figures``); the system frees the process at once.  Only when no other Python
    thread runs (the interpreter would wait for it) and no profiler or tracer is installed (``python -m cProfile
    -m shockflow.cli`` reports after the program returns)."""
    import atexit
    import os
    import threading

    if threading.active_count() > 1 or sys.getprofile() is not None or sys.gettrace() is not None:
        return
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: what the interpreter would report, nothing to save
            pass
    os._exit(code)


class _StdoutClosed(BrokenPipeError):
    """Whoever read stdout went away (``shockflow cases | head -1``): the end of the output, not a failure."""


class _WatchedStdout:
    """``sys.stdout`` during a command: a write to a pipe whose reader went away raises :class:`_StdoutClosed`,
    which only :func:`_command` catches; a BrokenPipeError anywhere else (the pipe of a process beside) stays a
    failure.  Everything else is the stream's own."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise _StdoutClosed from None

    def flush(self):
        try:
            return self._stream.flush()
        except BrokenPipeError:
            raise _StdoutClosed from None

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _silence(stream) -> None:
    """Point ``stream``'s file descriptor at the null device, so that what it still holds, flushed at exit, goes
    nowhere instead of failing again (the Python documentation's advice on SIGPIPE)."""
    import io
    import os

    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):   # not a file (a test's capture)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def _command(argv: list[str] | None) -> int:
    """:func:`_run_command` with stdout watched: a reader that goes away (``| head -1``) ends the command quietly,
    exit 0 (what it printed up to then is all that reader wanted)."""
    stdout = sys.stdout
    sys.stdout = _WatchedStdout(stdout)
    try:
        return _run_command(argv)
    except _StdoutClosed:
        _silence(stdout)
        return EXIT_OK
    finally:
        sys.stdout = stdout


def _valued_options(parser: argparse.ArgumentParser) -> set[str]:
    """The option strings of ``parser`` and its subcommands' parsers that take one value (``--lr-scan LO:HI:N``)."""
    found = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found |= _valued_options(sub)
        elif action.option_strings and action.nargs is None:
            found.update(action.option_strings)
    return found


def _glued_values(argv: list[str], valued: set[str]) -> list[str]:
    """``argv`` with an option's value that starts with '-' and a digit or a point glued to it (``--lr-scan -1:1:5``
    becomes ``--lr-scan=-1:1:5``): argparse takes ``-1:1:5`` for an option and says "expected one argument" instead
    of the option's own check.  No option starts so; argparse's own reading of ``-5`` and ``-0.5`` is the same."""
    import re

    out, i = [], 0
    while i < len(argv):
        token = argv[i]
        if token == "--":
            return out + argv[i:]
        if token in valued and i + 1 < len(argv) and re.match(r"-[\d.]", argv[i + 1]):
            out.append(f"{token}={argv[i + 1]}")
            i += 2
            continue
        out.append(token)
        i += 1
    return out


def _run_command(argv: list[str] | None) -> int:
    parser = build_parser()
    _STATE.update(errors=[], printed=False, usage=None)
    argv = _glued_values(list(sys.argv[1:] if argv is None else argv), _valued_options(parser))
    try:
        args = parser.parse_args(argv)  # bad arguments: argparse prints usage and exits with status 2
    except SystemExit as exc:
        # with --json a script reading stdout gets its object here too (the usage and the message are on stderr)
        if exc.code == EXIT_BAD_INPUT and _STATE["usage"] and "--json" in argv:
            _print_json({"error": _STATE["usage"], "exit_code": EXIT_BAD_INPUT})
        raise
    if args.command is None:
        parser.print_help()
        return EXIT_BAD_INPUT
    code = _dispatch(args)
    if code != EXIT_OK and getattr(args, "json", False) and _STATE["errors"] and not _STATE["printed"]:
        # a script reading stdout gets an object there too: the error and the exit code (stderr has the message)
        _print_json({"error": _STATE["errors"][-1], "exit_code": code})
    return code


def _dispatch(args: argparse.Namespace) -> int:
    """The command of ``args``, inside the one error boundary: its exit code.  A command that fails or is
    interrupted leaves no directory it created and wrote nothing into (``--out`` and its missing parents)."""
    from shockflow.progress import configure_logging
    from shockflow.storage.outdir import missing_directories, remove_empty

    configure_logging(quiet=bool(getattr(args, "quiet", False)))   # to stderr: --json leaves stdout its object
    root = _write_root(args)
    created = missing_directories(root) if root is not None else []
    code = _guarded(args, root)
    if code != EXIT_OK:
        remove_empty(created)
    return code


def _guarded(args: argparse.Namespace, root: str | None) -> int:
    """:func:`_dispatch`'s command run in its output directory ``root`` (None: it writes none)."""
    debug = getattr(args, "debug", False)
    before = {}
    interrupts = _InterruptWatch()
    try:
        with interrupts, _QuietH5pyFinalisers():
            if root is None:
                code = args.run(args)
            else:
                from shockflow.storage import confine_writes, remove_stale_temporaries
                from shockflow.storage.outdir import prepare_out, snapshot

                prepare_out(root, option="--out" if getattr(args, "out", None) is not None else "the output directory")
                remove_stale_temporaries(root)  # what killed runs left behind
                before = snapshot(root)
                with confine_writes(root):
                    code = args.run(args)
        if interrupts.seen:  # a Ctrl-C that a library swallowed (h5py closing a file): never exit 0 after it
            raise _Terminated if interrupts.terminated else KeyboardInterrupt
        return code
    except KeyboardInterrupt as exc:
        if debug:
            raise
        return _interrupted(root, before, terminated=isinstance(exc, _Terminated) or interrupts.terminated,
                            note=getattr(args, "on_interrupt", None))
    except _StdoutClosed:   # not the command's failure: the reader of its output went away (_command)
        raise
    except MemoryError:
        if debug:
            raise
        if interrupts.seen:
            return _interrupted(root, before, note=getattr(args, "on_interrupt", None))
        _error("the run failed: out of memory; reduce the sizes of the case (`shockflow validate` shows its cost)")
        return EXIT_FAILURE
    except Exception as exc:  # noqa: BLE001 - the one error boundary: no traceback reaches a user
        if debug:
            raise
        if _disk_full(exc):
            where = f" in {root}" if root is not None else ""
            _error(f"the run failed: no space left on the device{where} while writing its files; nothing of this "
                   f"command was written (its finished files are committed together, the unfinished ones removed): "
                   f"free space there or choose another --out")
            return EXIT_FAILURE
        if isinstance(exc, _bad_input_errors()):
            _error(str(exc))
            return EXIT_BAD_INPUT
        if interrupts.seen:  # a failure in the wake of a swallowed Ctrl-C: the interruption is the cause
            return _interrupted(root, before, note=getattr(args, "on_interrupt", None))
        _error(_failure(exc) + " (rerun with --debug for the traceback)")
        return EXIT_FAILURE


def _disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` (or an exception it was raised from) is the file system's "no space left" (or a quota): an
    ``OSError`` with that errno, or HDF5's, which gives its errno in the message only."""
    import errno

    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and (exc.errno in (errno.ENOSPC, errno.EDQUOT) or
                                         f"errno = {errno.ENOSPC}," in str(exc) or "No space left on device" in str(exc)):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


class _QuietH5pyFinalisers:
    """Within the block, the errors h5py's objects raise while they are freed (``ObjectID._dealloc``: on a full disk
    every dataset's close fails again as it is dropped, and Cython prints each with its traceback through
    ``sys.excepthook`` and then "Exception ignored in" through ``sys.unraisablehook``: a tester counted 148
    tracebacks on stderr) are counted, not printed: the command's own error says what happened.  Everything else
    goes to the hooks that were there."""

    def __enter__(self):
        self._previous = (sys.excepthook, sys.unraisablehook)
        self.dropped = 0
        sys.excepthook, sys.unraisablehook = self._excepthook, self._unraisablehook
        return self

    def _excepthook(self, kind, value, tb):
        import traceback

        if tb is not None and any("h5py" in frame.filename and frame.name.endswith("dealloc")
                                  for frame in traceback.extract_tb(tb)):
            self.dropped += 1
            return
        self._previous[0](kind, value, tb)

    def _unraisablehook(self, unraisable):
        if "h5py" in repr(getattr(unraisable, "object", None)):
            self.dropped += 1
            return
        self._previous[1](unraisable)

    def __exit__(self, kind, value, tb):
        if kind is not None:   # the h5py objects a failed write left are freed here, under the hooks (30-60 ms)
            import gc

            gc.collect()
        sys.excepthook, sys.unraisablehook = self._previous


def _interrupted(root, before, terminated: bool = False, note: str | None = None) -> int:
    """Exit 130 (Ctrl-C) or 143 (SIGTERM), saying which files the interrupted command had finished (a run's are
    committed together; the unfinished ones' temporaries are removed on the way up), or ``note``: what a command
    that keeps its finished work says instead (``args.on_interrupt``: a sweep's tasks), one message either way."""
    from shockflow.storage.outdir import written_since

    what = "terminated (SIGTERM)" if terminated else "interrupted"
    done = written_since(root, before) if root is not None and note is None else []
    if note is not None:
        _error(f"{what}; {note}")
    elif done:
        _error(f"{what}; files finished before the interruption: {', '.join(done)} (in {root}); "
               "the unfinished ones were not written")
    else:
        _error(f"{what}; no file was written")
    return EXIT_TERMINATED if terminated else EXIT_INTERRUPTED

if __name__ == "__main__":
    sys.exit(main())
