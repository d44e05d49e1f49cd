"""What a sweep runs: a case over axes (:func:`case_sweep`) or a pure function over a grid
(:func:`function_sweep`).

A :class:`Sweep` is plain data — its tasks (:mod:`shockflow.sweeps.tasks`) and ``execute``, a
picklable callable ``execute(task, workdir) -> TaskOutput`` that a worker calls — so the
engine (:mod:`shockflow.sweeps.engine`) runs either kind the same way, serially or on Dask.

Case tasks run through the case kind's registered runner (``run(case, options)``, see
:mod:`shockflow.cases`) with ``RunOptions(out=<scratch>, seed=task.seed, quiet=True,
progress=False, figures=False)``; the runner's HDF5 result file (the ``result_file`` of its
``as_dict()``) becomes the task's result file.  Key figures are ``outcome.key_figures()`` when
the outcome defines it, else the top-level numbers of ``as_dict()``
(:func:`~shockflow.sweeps.records.scalar_figures`).

Function tasks call ``function(params) -> dict`` with the fixed and swept values and, unless
given, ``params[seed_key] = task.seed``; scalar entries of the dict are the key figures, numeric
array entries are stored under ``/values`` in the task file, nested dicts are flattened into
dotted keys (``fit.exponent``) and anything else is kept as JSON in the ``/sweep`` summary.  The function must be importable
on the workers (or pickled by value with ``cloudpickle.register_pickle_by_value``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from shockflow import __version__
from shockflow.cases.sweep_axes import Axis, SweepAxes, build_axes, split_sweep_table
from shockflow.sweeps.records import TaskOutput, scalar_figures
from shockflow.sweeps.tasks import SEED_KEY, Task, make_tasks

__all__ = ["Sweep", "case_sweep", "function_sweep", "run_case_task", "call_function_task"]


@dataclass(frozen=True, eq=False)
class Sweep:
    """``kind`` is ``"case"`` or ``"function"``; ``source`` the case text (without ``[sweep]``)
    or ``"function module:qualname"``; ``seed`` the sweep seed."""

    name: str
    kind: str
    source: str
    axes: SweepAxes
    seed: int
    tasks: tuple[Task, ...]
    execute: Callable[[Task, Path], TaskOutput]
    case_path: str = ""

    @property
    def param_keys(self) -> tuple[str, ...]:
        return self.axes.keys

    def manifest(self) -> dict:
        """JSON-able description written to ``<out>/sweep.json``."""
        return {"name": self.name, "kind": self.kind, "case_path": self.case_path, "source": self.source,
                "seed": self.seed, "version": __version__,
                "axes": [{"key": a.key, "values": list(a.values), "spec": a.spec} for a in self.axes.axes],
                "zip": [list(g) for g in self.axes.zips], "fixed": dict(self.axes.fixed),
                "tasks": [{"index": t.index, "key": t.key, "hash": t.hash, "seed": t.seed, "params": t.params_dict}
                          for t in self.tasks]}


# -- case sweeps -----------------------------------------------------------------------------------
def _case_file(source) -> Path:
    from shockflow.cases import CaseError, Problem
    from shockflow.cases.builtin import builtin_case_path, builtin_names

    from shockflow.storage.input_files import file_problem

    path = Path(source)
    if path.is_file():
        return path
    found = builtin_case_path(str(source))
    problem = file_problem(path)
    if found is None and problem not in ("no such file", None):   # a directory, a device, a pipe: it exists
        raise CaseError(str(source), [Problem("", f"{problem}; expected a case file (TOML) or the name of a "
                                                  "built-in case")])
    if found is None:
        names = ", ".join(builtin_names()) or "(none found)"
        raise CaseError(str(source), [Problem("", f"no such case file, and no built-in case of that name; "
                                                  f"built-in cases: {names}")])
    return found


def run_case_task(task: Task, workdir: Path, *, case_path: str) -> TaskOutput:
    """Validate the task's case and run it with its kind's runner, writing into ``workdir``."""
    from shockflow.cases import RunOptions, get_kind, parse_case

    case = parse_case(task.source, file=case_path, path=Path(case_path), overrides=task.overrides)
    kind = get_kind(case.kind)
    outcome = kind.run(case, RunOptions(out=str(workdir), seed=task.seed, quiet=True, progress=False, figures=False))
    summary = outcome.as_dict()
    figures = outcome.key_figures() if hasattr(outcome, "key_figures") else scalar_figures(summary)
    return TaskOutput(figures=dict(figures), result_file=_runner_file(summary, Path(workdir)), summary=summary)


def _runner_file(summary: dict, workdir: Path) -> Path | None:
    """The HDF5 file the runner wrote: its ``result_file`` (PDE) or ``log_file`` (network), else the
    only ``*.h5`` in ``workdir``; None when there is none."""
    import h5py

    candidates = [Path(v) for k in ("result_file", "log_file") if isinstance(v := summary.get(k), str)]
    if not candidates:
        found = sorted(p for p in workdir.glob("*.h5") if not p.name.startswith("."))
        candidates = found if len(found) == 1 else []
    for path in candidates:
        if path.is_file() and h5py.is_hdf5(path) and workdir.resolve() in path.resolve().parents:
            return path
    return None


#: a sweep of more tasks than this is refused before its task list is built
MAX_TASKS = 100_000


def _require_affordable_sweep(body: str, path, tasks) -> None:
    """Each task must fit the machine's memory and the whole sweep :data:`~shockflow.cases.cost.MAX_SECONDS`
    (:mod:`shockflow.cases.cost`); the error names the key and the task."""
    from shockflow.cases import CaseError, Problem, parse_case
    from shockflow.cases.cost import MAX_SECONDS, require_affordable

    total = 0.0
    for t in tasks:
        c = parse_case(body, file=str(path), path=path, overrides=t.overrides)
        try:
            total += require_affordable(c).seconds
        except CaseError as exc:
            where = ", ".join(f"{k}={v!r}" for k, v in t.params) or "all tasks"
            raise CaseError(str(path), [Problem(p.key, f"{p.message} (task {t.index}: {where})") for p in exc.problems]) from None
    if total > MAX_SECONDS:
        raise CaseError(str(path), [Problem("sweep", f"the {len(tasks)} tasks would take about {total / 86400:.3g} days "
                                                     f"together, more than {MAX_SECONDS / 86400:.3g}; use fewer values "
                                                     "(or pass --allow-large)")])


def case_sweep(case, sets=(), zips=(), *, seed: int | None = None, allow_large: bool = False) -> Sweep:
    """A sweep of the case ``case`` (a path or a built-in name).

    ``sets``: ``KEY=VALUES`` items (:mod:`shockflow.cases.sweep_axes`); ``zips``: ``KEY1,KEY2`` items;
    a ``[sweep]`` table in the file adds axes (``sets`` win on the same key).  ``seed`` (default:
    the table's, else the case's ``seed``, else 0) is the sweep seed.  Every task's case is
    validated here, so a bad value fails before anything runs (:class:`~shockflow.cases.CaseError`
    naming the task's parameters).
    """
    import tomllib

    from shockflow.cases import CaseError, Problem, parse_case
    from shockflow.cases.loading import read_case_file

    path = _case_file(case)
    text = read_case_file(path)
    body, table = split_sweep_table(text, file=str(path))
    axes = build_axes(sets, zips, table)
    if len(axes) > MAX_TASKS:  # refused before a task list is made (a product of axes grows without bound)
        biggest = max(axes.axes, key=lambda a: len(a.values))
        raise CaseError(str(path), [Problem(f"sweep.axes.{biggest.key}", f"the sweep has {len(axes)} tasks, more than "
                                            f"{MAX_TASKS}; {biggest.key} alone has {len(biggest.values)} values")])
    header_seed = tomllib.loads(body).get("seed")
    if seed is None:
        seed = table.seed if table is not None and table.seed is not None else header_seed
    sweep_seed = 0 if seed is None or not isinstance(seed, int) or isinstance(seed, bool) else int(seed)
    tasks = make_tasks(body, axes, sweep_seed, __version__, seed_key=SEED_KEY)
    failing, first, checked = [], None, 0
    for t in tasks:
        try:
            c = parse_case(body, file=str(path), path=path, overrides=t.overrides)
            first = first or c
        except CaseError as exc:
            failing.append((t, exc))
            checked += len(exc.problems) + bool(exc.missing)
        if checked >= 20:
            break
    if failing:
        raise CaseError(str(path), _task_problems(failing, more=checked >= 20))
    if not allow_large:
        _require_affordable_sweep(body, path, tasks)
    execute = functools.partial(run_case_task, case_path=str(path.resolve()))
    return Sweep(name=first.name, kind="case", source=body, axes=axes, seed=sweep_seed, tasks=tasks,
                 execute=execute, case_path=str(path.resolve()))


def _task_problems(failing, more: bool) -> list:
    """The problems of the tasks that failed validation, ``failing`` a list of (task, CaseError): a key's problems
    as the first task that has them gives them, naming that task, and the other tasks with a problem at the same key
    after it (a bad key of every task was one line per task, the same problem counted as many times).  ``more``: the
    check stopped before the last task."""
    from shockflow.cases import Problem

    first_at: dict[str, int] = {}   # key -> the index of the first failing task with a problem there
    others: dict[str, list[int]] = {}
    for t, exc in failing:
        keys = [p.key for p in exc.problems] + (["missing"] if exc.missing else [])
        for key in dict.fromkeys(keys):
            if key not in first_at:
                first_at[key], others[key] = t.index, []
            elif t.index != first_at[key]:
                others[key].append(t.index)
    problems = []
    for t, exc in failing:
        where = ", ".join(f"{k}={v!r}" for k, v in t.params) or "all tasks"
        items = [(p.key, p.message) for p in exc.problems]
        if exc.missing:
            items.append(("missing", f"missing required keys {', '.join(exc.missing)}"))
        for key, message in items:
            if first_at[key] != t.index:
                continue
            also = others[key]
            same = ""
            if also:
                listed = ", ".join(str(i) for i in also[:10]) + (", ..." if len(also) > 10 else "")
                same = f"; the same key in task{'s' if len(also) > 1 else ''} {listed}" + (" and maybe more" if more else "")
            problems.append(Problem("" if key == "missing" else key, f"{message} (task {t.index}: {where}{same})"))
    return problems


# -- function sweeps -------------------------------------------------------------------------------
def call_function_task(task: Task, workdir: Path, *, function: Callable[[dict], Mapping[str, Any]],
                       seed_key: str | None) -> TaskOutput:
    """Call ``function`` with the task's arguments (and seed); split scalars from arrays."""
    args = task.arguments
    if seed_key and seed_key not in args:
        args[seed_key] = task.seed
    value = function(args)
    if not isinstance(value, Mapping):
        raise TypeError(f"function sweep: {_name(function)} must return a dict of results, "
                        f"returned {type(value).__name__}")
    figures, arrays, other = {}, {}, {}
    _split("", value, figures, arrays, other)
    return TaskOutput(figures=figures, arrays=arrays, summary=other)


def _split(prefix: str, value: Mapping, figures: dict, arrays: dict, other: dict) -> None:
    """Scalars -> ``figures``, numeric arrays -> ``arrays``, anything else -> ``other`` (JSON);
    nested dicts are flattened into dotted keys."""
    for k, v in value.items():
        key = f"{prefix}{k}"
        if isinstance(v, np.generic):
            v = v.item()
        if isinstance(v, Mapping):
            _split(key + ".", v, figures, arrays, other)
        elif isinstance(v, (bool, int, float, str)) or v is None:
            figures[key] = float("nan") if v is None else v
        else:
            try:
                a = np.asarray(v)
            except (ValueError, TypeError):
                a = None
            if a is not None and a.dtype.kind in "biuf":
                arrays[key] = a
            else:
                other[key] = v


def _name(function) -> str:
    return f"{getattr(function, '__module__', '?')}:{getattr(function, '__qualname__', repr(function))}"


def function_sweep(function: Callable[[dict], Mapping[str, Any]], axes, *, fixed: Mapping[str, Any] | None = None,
                   seed: int = 0, seed_key: str | None = SEED_KEY, name: str | None = None,
                   zips=()) -> Sweep:
    """A sweep of the pure function ``function(params) -> dict`` over ``axes``.

    ``axes``: a :class:`SweepAxes`, or ``{key: values}`` (an outer product; ``zips`` lists key
    groups to zip); ``fixed``: values passed to every call.  The task hash covers the function's
    import name, the fixed and swept values and the seed (not the function's code: change
    ``name`` or the output directory when the function changes).
    """
    if not callable(function):
        raise TypeError(f"function_sweep: function must be callable, found {type(function).__name__}")
    if isinstance(axes, SweepAxes):
        grid = axes
        if fixed:
            grid = SweepAxes(axes=grid.axes, zips=grid.zips, fixed=tuple(grid.fixed) + tuple(fixed.items()))
    elif isinstance(axes, Mapping):
        grid = SweepAxes(axes=tuple(Axis(str(k), tuple(np.asarray(v).tolist()) if isinstance(v, np.ndarray)
                                         else tuple(v)) for k, v in axes.items()),
                         zips=tuple(tuple(z) for z in zips), fixed=tuple((fixed or {}).items()))
    else:
        raise TypeError(f"function_sweep: axes must be a SweepAxes or a dict of key -> values, "
                        f"found {type(axes).__name__}")
    source = f"function {_name(function)}"
    tasks = make_tasks(source, grid, seed, __version__, seed_key=seed_key)
    execute = functools.partial(call_function_task, function=function, seed_key=seed_key)
    return Sweep(name=name or getattr(function, "__name__", "function"), kind="function", source=source,
                 axes=grid, seed=int(seed), tasks=tasks, execute=execute)
