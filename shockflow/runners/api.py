"""The Python face of the runners: what ``shockflow run`` and ``shockflow solve`` do, as functions.

``shockflow.run``, ``shockflow.solve``, ``shockflow.train`` and ``shockflow.forecast`` (re-exported lazily from
:mod:`shockflow`) take a case — a built-in case name, a path to a TOML file, or a
:class:`~shockflow.cases.Case` from :func:`shockflow.load_case` — and return the outcome the
command line prints: ``as_dict()`` is its ``--json`` object, ``table()`` its text.  Results are
written to ``out`` (default ``./shockflow-results/``, created; a call that fails or is interrupted removes
the directories it created while they are empty, as the command line does).

Every argument is checked before any work (:mod:`shockflow.cases.arguments`): bad input raises
:class:`~shockflow.cases.CaseError` — a bad argument the :class:`~shockflow.cases.errors.ArgumentError`
naming it (an ``ArgumentTypeError``, a TypeError too, for one of the wrong type), a case file's problem
naming the file and the key —, an unusable ``out`` :class:`~shockflow.storage.outdir.OutDirError` and a bad
result file :class:`~shockflow.storage.ResultFileError`; ``docs/api.md`` has the contract and examples.
"""

from __future__ import annotations

import contextlib
import os

__all__ = ["run", "solve", "train", "forecast", "monitor", "compare", "ComparedLog", "DEFAULT_OUT"]

DEFAULT_OUT = "shockflow-results"

#: what a ``case`` argument is
CASE = "a built-in case name, a path to a case file (str or os.PathLike) or a Case from shockflow.load_case"
#: what a network of one's own is (``forecast(model, (X, y), optimiser)``)
NETWORK = ("a network: a shockflow model or an object implementing the network protocol "
           "(shockflow.models.protocol.NetworkProtocol: get_params, set_params, loss, grad)")


def _is_network(obj) -> bool:
    from shockflow.models.base import Model
    from shockflow.models.protocol import is_protocol_network

    return isinstance(obj, Model) or is_protocol_network(obj)


def _case(case, overrides, allow_large=False):
    """The :class:`~shockflow.cases.Case` of a ``case`` argument, loaded with ``overrides``, refused before anything
    runs if it would not fit the machine (memory, or a week of work: :func:`shockflow.cases.cost.require_affordable`,
    as the command line refuses it) unless ``allow_large``."""
    from shockflow.cases import Case, arguments, load_case
    from shockflow.cases.cost import require_affordable
    from shockflow.cases.errors import ArgumentError, ArgumentTypeError

    overrides = arguments.overrides(overrides)
    allow_large = arguments.flag(allow_large, "allow_large")
    if isinstance(case, Case):
        if overrides:
            raise ArgumentError.expected("overrides", "none with a Case already loaded (overrides apply to a case "
                                                      "being loaded: pass a name or a path, or load_case(..., "
                                                      "overrides))", overrides)
    elif not isinstance(case, (str, os.PathLike)) and _is_network(case):
        raise ArgumentTypeError.expected("case", CASE, case, hint="a network of your own is forecast with "
                                                                  "shockflow.forecast(model, (X, y), optimiser)")
    else:
        case = load_case(arguments.path(case, "case", CASE), overrides=overrides)
    require_affordable(case, allow_large=allow_large, override="allow_large=True")
    return case


def _options(out, seed, quiet, figures):
    """The :class:`~shockflow.cases.RunOptions` of a call, its arguments checked (nothing is created yet)."""
    from shockflow.cases import RunOptions, arguments

    arguments.path(out, "out", "a directory path (str or os.PathLike)")
    quiet = arguments.flag(quiet, "quiet")
    return RunOptions(out=os.fspath(out), seed=arguments.seed(seed, "seed"), quiet=quiet, progress=not quiet,
                      figures=arguments.flag(figures, "figures"))


@contextlib.contextmanager
def _writing_into(out):
    """The block of a call that writes into ``out``: ``out`` created first (an
    :class:`~shockflow.storage.outdir.OutDirError` naming ``out`` if it cannot be: a file, unwritable), and the
    directories created for it removed again, while empty, if the block fails or is interrupted."""
    from shockflow.storage.outdir import prepare_out, removed_on_failure

    with removed_on_failure(out):
        prepare_out(out, option="out")
        yield


def _runner(case, command):
    """The runner of ``case``'s kind; a :class:`CaseError` if ``command`` (the function called) does not run it."""
    from shockflow.cases import CaseError, Problem, get_kind

    kind = get_kind(case.kind)
    if command is not None and kind.command != command:
        raise CaseError(str(case.path or case.name), [Problem("kind", f"a {case.kind} case: run it with shockflow.run() "
                                                                      f"or shockflow.{kind.command}(), not {command}()")])
    return kind.run


def run(case=None, *, out=DEFAULT_OUT, seed=None, overrides=(), figures=True, quiet=True, allow_large=False):
    """``shockflow run``: a network case end to end (train; extract the quotient PDE; predict the
    transitions from its shocks without the loss curve; detect the observed ones; compare).  Any
    other kind is run by its own runner.  ``case=None``: the built-in default case."""
    from shockflow.runners.prediction import DEFAULT_CASE, run_prediction_case

    options = _options(out, seed, quiet, figures)
    case = _case(DEFAULT_CASE if case is None else case, overrides, allow_large)
    runner = run_prediction_case if case.kind == "network" else _runner(case, None)
    with _writing_into(out):
        return runner(case, options)


def solve(case, *, out=DEFAULT_OUT, seed=None, overrides=(), figures=True, quiet=True, allow_large=False):
    """``shockflow solve``: a PDE case; the outcome's ``report.shocks`` are the detected shocks."""
    return _run_command("solve", case, out, seed, overrides, figures, quiet, allow_large)


def train(case, *, out=DEFAULT_OUT, seed=None, overrides=(), figures=True, quiet=True, allow_large=False):
    """``shockflow train``: train the network of a network case and write its HDF5 log."""
    return _run_command("train", case, out, seed, overrides, figures, quiet, allow_large)


def _run_command(command, case, out, seed, overrides, figures, quiet, allow_large):
    """``shockflow <command>`` on a case of a kind it runs: every argument checked, then its runner writing into
    ``out``."""
    options = _options(out, seed, quiet, figures)
    case = _case(case, overrides, allow_large)
    runner = _runner(case, command)
    with _writing_into(out):
        return runner(case, options)


def _user_data(data):
    """``(X, y)`` of a network of one's own: a pair of arrays with one row per sample each, or a Dataset."""
    import numpy as np

    from shockflow.cases.errors import ArgumentError, ArgumentTypeError

    what = "(X, y): the samples and their targets as arrays, one row per sample each, or a shockflow.data.Dataset"
    if hasattr(data, "X") and hasattr(data, "y"):
        X, y = data.X, data.y
    elif isinstance(data, (tuple, list)) and len(data) == 2:
        X, y = data
    else:
        raise ArgumentTypeError.expected("data", what, data)
    X, y = np.asarray(X), np.asarray(y)
    for label, a in (("X", X), ("y", y)):
        if a.dtype == bool or not np.issubdtype(a.dtype, np.number):
            raise ArgumentTypeError("data", f"expected {label} of numbers, found an array of dtype {a.dtype}")
        if a.ndim == 0 or a.shape[0] == 0:
            raise ArgumentError("data", f"expected {label} with one row per sample, found shape {a.shape}")
        if not np.all(np.isfinite(a)):
            raise ArgumentError("data", f"expected finite numbers, found NaN or infinity in {label}")
    if X.shape[0] != y.shape[0]:
        raise ArgumentError("data", f"expected X and y with the same number of rows (one per sample), found X of "
                                    f"shape {X.shape} and y of shape {y.shape}")
    return X, y


def _network_case(model, data, optimiser, overrides, name):
    """``(case, network)`` of a forecast of a network of one's own: the Python case of its ``[training]`` keys and
    the network adapted with its data (:func:`shockflow.runners.training.adapt_network`)."""
    from shockflow.cases import CaseError, Problem, arguments
    from shockflow.cases.errors import ArgumentError, ArgumentTypeError
    from shockflow.cases.loading import name_problem
    from shockflow.runners.forecast import python_case
    from shockflow.runners.training import adapt_network

    if arguments.overrides(overrides):
        raise ArgumentError.expected("overrides", "none with a network of your own (overrides apply to a case "
                                                  "being loaded; the training keys go in optimiser)", overrides)
    if not _is_network(model):
        raise ArgumentTypeError.expected("case", f"{CASE}, or {NETWORK}", model)
    if data is None:
        raise ArgumentTypeError.expected("data", "the network's data (X, y): forecast(model, (X, y), optimiser)", data)
    X, y = _user_data(data)
    label = type(model).__name__ if name is None else name
    if name_problem(label) is not None:
        raise ArgumentError("name", name_problem(label))
    case = python_case(label, optimiser)
    try:
        network = adapt_network(model, X, y, label=label)
    except (TypeError, ValueError) as exc:   # the protocol's methods answered what they should not
        raise CaseError(label, [Problem("model", str(exc).removeprefix("model: "))], source="network") from None
    if case.settings.training.initial is not None:   # optimiser["initial"]: the start, as a case file's
        from shockflow.runners.training import load_initial

        load_initial(case, network[0])
    return case, network


def forecast(case=None, data=None, optimiser=None, *, out=DEFAULT_OUT, seed=None, overrides=(), figures=True,
             quiet=True, lr_scan=None, target_step=None, transition=None, name=None, allow_large=False):
    """``shockflow forecast``: a network case's transitions predicted without training it (the prediction
    of :func:`run`, the same numbers); ``lr_scan``: learning rates to re-map the charts at (each flagged
    when critical); ``target_step``/``transition``: the smallest rate for that transition (default: the first)
    by that step.  Returns a ``ForecastOutcome`` (``as_dict()`` is the ``--json`` object, ``forecast_file`` the
    HDF5 file that :func:`monitor` and ``shockflow compare`` take as the prediction).

    A user's own network: ``forecast(model, (X, y), {"optimizer": "gd", "lr": 0.05, "steps": 2000})`` — ``model``
    a shockflow model or any object implementing :class:`shockflow.models.protocol.NetworkProtocol`, the data
    as arrays (or a Dataset), the optimiser as the keys of a case's ``[training]`` table; ``name`` names its
    files (default: the model's class name)."""
    from shockflow.cases import Case, CaseError, Problem
    from shockflow.cases.errors import ArgumentError
    from shockflow.runners.forecast import control_options, forecast_case
    from shockflow.runners.prediction import DEFAULT_CASE

    options = _options(out, seed, quiet, figures)
    rates, target_step, transition = control_options(lr_scan, target_step, transition)
    network = None
    if case is None or isinstance(case, (str, os.PathLike, Case)):
        for parameter, value in (("data", data), ("optimiser", optimiser), ("name", name)):
            if value is not None:
                raise ArgumentError.expected(parameter, "None with a case (a case has its own [data] and [training] "
                                                        "tables and its name)", value,
                                             hint="data, optimiser and name go with a network of your own: "
                                                  "forecast(model, (X, y), optimiser)")
        case = _case(DEFAULT_CASE if case is None else case, overrides, allow_large)
        if case.kind != "network":
            raise CaseError(str(case.path or case.name), [Problem("kind", f"a forecast is made for a network case, "
                                                                          f"found a {case.kind} case")])
    else:
        case, network = _network_case(case, data, optimiser, overrides, name)
    from shockflow.models.protocol import ProtocolError

    try:
        with _writing_into(out):
            return forecast_case(case, options, scan_rates=rates, target_step=target_step, transition=transition,
                                 network=network)
    except ProtocolError as exc:   # the network's methods answered what the protocol does not allow
        raise CaseError.at(case, "model", str(exc).removeprefix(f"model {case.name!r}: ")) from None


def monitor(log, prediction, *, step_column=None, loss_column=None, max_ratio=2.0):
    """``shockflow monitor`` without ``--follow``: read the log (complete rows only) and return the
    ``Monitor``: ``reported`` (each transition with its forecast partner and offset), ``table()``.
    Call ``update()`` again to take in rows appended since.  A log that is missing or cannot be read is a
    :class:`~shockflow.cases.CaseError` naming it; a bad forecast file a
    :class:`~shockflow.storage.ResultFileError`."""
    from pathlib import Path

    from shockflow.cases import CaseError, Problem
    from shockflow.cases.errors import ArgumentError
    from shockflow.runners.monitor import monitor_log
    from shockflow.storage import ResultFileError

    max_ratio = _log_arguments(log, prediction, step_column, loss_column, max_ratio)
    if Path(log).is_dir():
        raise ArgumentError("log", f"expected a training log file, found the directory {os.fspath(log)!r}")
    from shockflow.logs.live import live_logs_of

    if not Path(log).is_file() and not live_logs_of(log):   # a run training there now is read from its live file
        raise ArgumentError("log", f"no such file {os.fspath(log)!r} (monitor reads a log once, as it is: "
                                   f"the command line's monitor --follow waits for one to appear)")
    try:
        m = monitor_log(log, prediction, step_column=step_column, loss_column=loss_column, max_ratio=max_ratio)
        m.update()
    except ResultFileError:
        raise
    except ValueError as exc:   # the log's format or a row of it (the message names the file and the row)
        raise CaseError(os.fspath(log), [Problem("", str(exc))], source="") from None
    return m


def compare(log, prediction, *, max_ratio=2.0, step_column=None, loss_column=None):
    """``shockflow compare``: the predictions of a forecast or ``run`` result file against a training log's true
    transitions (the parameter truth for the log of that result's run, else the loss curve's drops).  Returns a
    :class:`ComparedLog`: ``comparison`` (``score()``, ``table()``, ``matches``), ``observed`` (the loss curve's
    transitions) and ``disagreements`` (the keys on which a shockflow log was trained otherwise than the forecast
    assumed, :mod:`shockflow.logs.agreement`).  A log that is missing or cannot be compared is a
    :class:`~shockflow.cases.CaseError` naming it; a bad result file a :class:`~shockflow.storage.ResultFileError`."""
    from pathlib import Path

    from shockflow.cases import CaseError, Problem
    from shockflow.cases.errors import ArgumentError
    from shockflow.logs.agreement import check_log_against
    from shockflow.prediction import ComparisonError, compare_log
    from shockflow.storage import ResultFileError

    max_ratio = _log_arguments(log, prediction, step_column, loss_column, max_ratio)
    if not Path(log).is_file():
        raise ArgumentError("log", f"no such file {os.fspath(log)!r}")
    try:
        comparison, observed = compare_log(log, prediction, max_ratio=max_ratio, step_column=step_column,
                                           loss_column=loss_column)
    except ResultFileError:
        raise
    except (ComparisonError, ValueError) as exc:   # the log's format, or no transitions in it (the message names it)
        raise CaseError(os.fspath(log), [Problem("", str(exc))], source="") from None
    return ComparedLog(comparison, tuple(observed), tuple(check_log_against(log, prediction)))


def _log_arguments(log, prediction, step_column, loss_column, max_ratio) -> float:
    """The arguments :func:`monitor` and :func:`compare` share, checked (an ArgumentError naming the one that is
    wrong); returns ``max_ratio`` as a number."""
    from shockflow.cases import arguments
    from shockflow.cases.errors import ArgumentTypeError

    arguments.path(log, "log", "the path of a training log (str or os.PathLike): HDF5, CSV or JSON lines")
    arguments.path(prediction, "prediction", "the path of a forecast or result file (str or os.PathLike)")
    for parameter, value in (("step_column", step_column), ("loss_column", loss_column)):
        if value is not None and not isinstance(value, str):
            raise ArgumentTypeError.expected(parameter, "None or a column name (str)", value)
    return arguments.factor(max_ratio, "max_ratio")


class ComparedLog:
    """:func:`compare`'s answer: ``comparison`` (:class:`~shockflow.prediction.Comparison`), ``observed`` (the loss
    curve's transitions) and ``disagreements`` (what the log was trained with that the forecast did not assume)."""

    def __init__(self, comparison, observed, disagreements):
        self.comparison, self.observed, self.disagreements = comparison, observed, disagreements

    def score(self) -> dict:
        return self.comparison.score()

    def table(self) -> str:
        return self.comparison.table()

    def __repr__(self) -> str:
        score = self.comparison.score()
        return (f"ComparedLog(recall={score.get('recall')}, median_relative_error_all="
                f"{score.get('median_relative_error_all')}, disagreements={list(self.disagreements)})")
