"""The Python face of the runners: what ``shockflow run`` and ``shockflow solve`` do, as functions.

``shockflow.run``, ``shockflow.solve``, ``shockflow.train`` and ``shockflow.forecast`` (re-exported lazily from
:mod:`shockflow`) take a case — a built-in case name, a path to a TOML file, or a
:class:`~shockflow.cases.Case` from :func:`shockflow.load_case` — and return the outcome the
command line prints: ``as_dict()`` is its ``--json`` object, ``table()`` its text.  Results are
written to ``out`` (default ``./shockflow-results/``, created).  Bad input raises
:class:`~shockflow.cases.CaseError` (naming the file and the key); ``docs/api.md`` has examples.
"""

from __future__ import annotations

import numbers
import os
from pathlib import Path

__all__ = ["run", "solve", "train", "forecast", "monitor", "DEFAULT_OUT"]

DEFAULT_OUT = "shockflow-results"


def _case(case, overrides):
    from shockflow.cases import Case, CaseError, Problem, load_case

    if isinstance(case, Case):
        if overrides:
            raise CaseError(str(case.path or case.name), [Problem("", "overrides apply to a case being loaded: pass a "
                                                                      "name or a path, or load_case(..., overrides)")])
        return case
    if isinstance(overrides, (str, bytes)):   # one KEY=VALUE given bare: a list of one, not its characters
        overrides = (overrides,)
    return load_case(case, overrides=tuple(overrides))


def _options(out, seed, quiet, figures):
    from shockflow.cases import RunOptions

    if not isinstance(out, (str, os.PathLike)):
        raise TypeError(f"out: expected a directory path (str or os.PathLike), found {out!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0):
        raise ValueError(f"seed: expected None or a whole number >= 0, found {seed!r}")
    Path(out).mkdir(parents=True, exist_ok=True)
    return RunOptions(out=os.fspath(out), seed=seed, quiet=quiet, progress=not quiet, figures=figures)


def _kind_run(case, command, out, seed, quiet, figures):
    from shockflow.cases import CaseError, Problem, get_kind

    kind = get_kind(case.kind)
    if command is not None and kind.command != command:
        raise CaseError(str(case.path or case.name), [Problem("kind", f"a {case.kind} case: run it with shockflow.run() "
                                                                      f"or shockflow.{kind.command}(), not {command}()")])
    return kind.run(case, _options(out, seed, quiet, figures))


def run(case=None, *, out=DEFAULT_OUT, seed=None, overrides=(), figures=True, quiet=True):
    """``shockflow run``: a network case end to end (train; extract the quotient PDE; predict the
    transitions from its shocks without the loss curve; detect the observed ones; compare).  Any
    other kind is run by its own runner.  ``case=None``: the built-in default case."""
    from shockflow.runners.prediction import DEFAULT_CASE, run_prediction_case

    case = _case(DEFAULT_CASE if case is None else case, overrides)
    if case.kind != "network":
        return _kind_run(case, None, out, seed, quiet, figures)
    return run_prediction_case(case, _options(out, seed, quiet, figures))


def solve(case, *, out=DEFAULT_OUT, seed=None, overrides=(), figures=True, quiet=True):
    """``shockflow solve``: a PDE case; the outcome's ``report.shocks`` are the detected shocks."""
    return _kind_run(_case(case, overrides), "solve", out, seed, quiet, figures)


def train(case, *, out=DEFAULT_OUT, seed=None, overrides=(), figures=True, quiet=True):
    """``shockflow train``: train the network of a network case and write its HDF5 log."""
    return _kind_run(_case(case, overrides), "train", out, seed, quiet, figures)


def forecast(case=None, data=None, optimiser=None, *, out=DEFAULT_OUT, seed=None, overrides=(), figures=True,
             quiet=True, lr_scan=None, target_step=None, transition=1, name=None):
    """``shockflow forecast``: a network case's transitions predicted without training it (the prediction
    of :func:`run`, the same numbers); ``lr_scan``: learning rates to re-map the charts at (each flagged
    when critical); ``target_step``/``transition``: the smallest rate for that transition by that step.
    Returns a ``ForecastOutcome`` (``as_dict()`` is the ``--json`` object, ``forecast_file`` the HDF5 file
    that :func:`monitor` and ``shockflow compare`` take as the prediction).

    A user's own network: ``forecast(model, (X, y), {"optimizer": "gd", "lr": 0.05, "steps": 2000})`` — ``model``
    a shockflow model or any object implementing :class:`shockflow.models.protocol.NetworkProtocol`, the data
    as arrays (or a Dataset), the optimiser as the keys of a case's ``[training]`` table."""
    from shockflow.cases import CaseError, Problem
    from shockflow.runners.forecast import forecast_case, python_case
    from shockflow.runners.prediction import DEFAULT_CASE

    if lr_scan is not None:
        try:
            if isinstance(lr_scan, (str, bytes)):   # a string is a sequence too: of characters
                raise TypeError
            lr_scan = [float(r) for r in lr_scan]
        except (TypeError, ValueError):
            raise ValueError(f"lr_scan: expected a sequence of learning rates (numbers), found {lr_scan!r}") from None

    if data is not None:
        from shockflow.runners.training import adapt_network

        X, y = (data.X, data.y) if hasattr(data, "X") else data
        label = name or type(case).__name__
        network = adapt_network(case, X, y, label=label)
        return forecast_case(python_case(label, optimiser), _options(out, seed, quiet, figures),
                             scan_rates=lr_scan, target_step=target_step, transition=transition, network=network)
    case = _case(DEFAULT_CASE if case is None else case, overrides)
    if case.kind != "network":
        raise CaseError(str(case.path or case.name), [Problem("kind", f"a forecast is made for a network case, "
                                                                      f"found a {case.kind} case")])
    return forecast_case(case, _options(out, seed, quiet, figures), scan_rates=lr_scan, target_step=target_step,
                         transition=transition)


def monitor(log, prediction, *, step_column=None, loss_column=None, max_ratio=2.0):
    """``shockflow monitor`` without ``--follow``: read the log (complete rows only) and return the
    ``Monitor``: ``reported`` (each transition with its forecast partner and offset), ``table()``.
    Call ``update()`` again to take in rows appended since."""
    from shockflow.runners.monitor import monitor_log

    if not Path(log).is_file():   # the command line's --follow may wait for a log; this reads it once
        raise FileNotFoundError(f"log: {os.fspath(log)!r} is {'a directory' if Path(log).is_dir() else 'no file'}")
    m = monitor_log(log, prediction, step_column=step_column, loss_column=loss_column, max_ratio=max_ratio)
    m.update()
    return m
