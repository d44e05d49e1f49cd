"""``shockflow sweep CASE --set KEY=VALUES ... [--zip K1,K2] [--scheduler ADDRESS]``.

Runs a case over parameter axes (syntax: :mod:`shockflow.cases.sweep_axes`) and writes one result
file per task, the failure records and the merged index into ``--out`` (default
``shockflow-results/<case name>-sweep``).  Rerunning the same command resumes: finished tasks are reused.

Exit codes (those of the ``shockflow`` command line): 0 every task finished; 1 some tasks
failed (they are listed, with their parameters and failure records); 2 bad input (a case file,
an axis, a zip group; a cluster without dask.distributed installed; nothing is run or written); 130 interrupted (143 on
SIGTERM; finished tasks are kept, rerun to resume: the KeyboardInterrupt goes up, and ``args.on_interrupt`` says so).
With ``--json`` stdout holds one JSON object: ``sweep``, ``out``, ``index``, ``tasks``, ``done``,
``reused``, ``failed``, ``missing``, ``seconds``, ``workers``, ``failures`` (a list of
``index``, ``key``, ``params``, ``error``, ``record``); with ``--dry-run`` it lists the tasks.

The ``shockflow`` command line adds it with ``add_parser(subparsers)``; it dispatches through
``args.run`` (= :func:`main`), like the other commands.
"""

from __future__ import annotations

import argparse
import json
import math
import sys

__all__ = ["add_parser", "main"]

EXIT_OK, EXIT_FAILURE, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130


def _workers(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, found {text!r}")
    return value


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 0, found {text!r}")
    return value


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Add the ``sweep`` command to an ``argparse`` subparsers object; returns its parser."""
    p = subparsers.add_parser(
        "sweep", help="run a case over parameter axes (Dask: local cluster or an existing scheduler)",
        description="Run a case over parameter axes; one result file per task, a merged index, resumable.",
        epilog="VALUES: v1,v2,... | linspace:a:b:n | logspace:a:b:n (end values, not exponents) | "
               "range:start:stop[:step]. A single value is a fixed override of every task.")
    p.add_argument("case", metavar="CASE", help="a case file (TOML, may hold a [sweep] table) or a built-in case name")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUES",
                   help="an axis (several values) or a fixed override (one value); repeatable; axes form a product")
    p.add_argument("--zip", action="append", default=[], metavar="KEY1,KEY2",
                   help="advance these axes together instead of in a product (equal lengths); repeatable")
    p.add_argument("--out", default=None, metavar="DIR", help="sweep directory (default: shockflow-results/<case name>-sweep)")
    p.add_argument("--seed", type=_seed, default=None,
                   help="sweep seed; each task's seed derives from it and the task's parameters "
                        "(default: the [sweep] table's, else the case's, else 0)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="a Dask scheduler address (tcp://host:8786) or scheduler file (.json); "
                        "'serial' runs in this process; default: a local cluster")
    p.add_argument("--workers", type=_workers, default=None,
                   help="worker processes of the local cluster (default: one per core)")
    p.add_argument("--dry-run", action="store_true", help="list the tasks and which are finished; run nothing")
    p.add_argument("--allow-large", action="store_true",
                   help="run tasks even if their estimated memory or time exceeds what the machine has")
    p.add_argument("--quiet", action="store_true", help="print nothing but errors")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="print the traceback of a failure")
    p.set_defaults(run=main)
    return p


def _clean(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def _failed(args: argparse.Namespace, message: str, code: int) -> int:
    """Say why the sweep did not run (stderr) and return ``code``; with ``--json`` stdout holds one object too,
    ``{"error", "exit_code"}``, as every command's does."""
    print(f"shockflow: error: {message}", file=sys.stderr)
    if getattr(args, "json", False):
        print(json.dumps({"error": message, "exit_code": code}))
    return code


def _dry_run(sweep, out, args) -> int:
    from pathlib import Path

    from shockflow.sweeps.records import read_task_record

    rows = []
    for t in sweep.tasks:
        record = read_task_record(Path(out) / "tasks" / t.filename)
        rows.append({"index": t.index, "key": t.key, "params": t.params_dict, "seed": t.seed,
                     "finished": record is not None and record.hash == t.hash})
    if args.json:
        print(json.dumps(_clean({"sweep": sweep.name, "out": str(out), "tasks": rows}), allow_nan=False))
    elif not args.quiet:
        print(f"sweep {sweep.name}: {len(rows)} tasks -> {out} ({sum(r['finished'] for r in rows)} finished)")
        for r in rows:
            params = ", ".join(f"{k}={v!r}" for k, v in r["params"].items())
            print(f"  {r['index']:4d} {r['key']}  {'finished' if r['finished'] else 'to run':8s}  {params}")
    return EXIT_OK


def scheduler_problem(scheduler) -> str | None:
    """Why ``scheduler`` is no scheduler a sweep can use, or None: ``serial``, ``local`` (or none), an existing
    scheduler file (``.json``), or an address ``[protocol://]host:port``."""
    import re
    from pathlib import Path

    from shockflow.sweeps.engine import SERIAL

    if scheduler in (None, "", "local", SERIAL):
        return None
    text = str(scheduler)
    if text.endswith(".json"):
        return None if Path(text).is_file() else f"no scheduler file {text!r}"
    if re.fullmatch(r"(?:[a-z][a-z0-9+.-]*://)?\[?[A-Za-z0-9_.:-]+\]?:\d{1,5}", text) is None:
        return (f"expected '{SERIAL}', 'local', a scheduler file (.json) or an address [tcp://]host:port, "
                f"found {text!r}")
    return None


def main(args: argparse.Namespace) -> int:
    """Run the ``sweep`` command for parsed ``args``; returns the exit code."""
    from shockflow.cases import CaseError
    from shockflow.cases.sweep_axes import SweepSpecError
    from shockflow.sweeps.engine import SERIAL, missing_distributed, run_sweep
    from shockflow.sweeps.sweep import case_sweep

    try:
        sweep = case_sweep(args.case, args.set or (), args.zip or (), seed=args.seed, allow_large=args.allow_large)
    except (CaseError, SweepSpecError, ValueError) as exc:
        return _failed(args, str(exc), EXIT_BAD_INPUT)
    out = args.out if args.out is not None else f"shockflow-results/{sweep.name}-sweep"
    if args.dry_run:
        return _dry_run(sweep, out, args)
    missing = None if args.scheduler == SERIAL else missing_distributed(serial=f"--scheduler {SERIAL}")
    if missing is not None:   # a setup to fix, not a failed run: refused before anything is written
        return _failed(args, str(missing), EXIT_BAD_INPUT)
    problem = scheduler_problem(args.scheduler)
    if problem is not None:   # before --out is made (a tester's text file as the address left one behind)
        return _failed(args, f"--scheduler: {problem}", EXIT_BAD_INPUT)
    # an interruption (Ctrl-C, SIGTERM) goes up to the command line's one report of it (exit 130 / 143), which says
    # this instead of listing files: a sweep keeps every task it finished
    args.on_interrupt = f"finished tasks are kept in {out}: rerun the same command to resume"
    try:
        summary = run_sweep(sweep, out, scheduler=args.scheduler, workers=args.workers,
                            progress=not args.quiet)   # with --json too: stdout holds the JSON, stderr the progress
    except OSError as exc:  # no scheduler at the address, an unwritable --out
        return _failed(args, f"the sweep could not run: {exc}", EXIT_FAILURE)
    if args.json:
        print(json.dumps(_clean(summary.as_dict()), allow_nan=False))
    elif not args.quiet:
        print(summary.table())
    elif summary.failed:
        print(summary.table(), file=sys.stderr)
    return EXIT_OK if summary.ok else EXIT_FAILURE
