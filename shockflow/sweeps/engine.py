"""Running a sweep: serially, on a local Dask cluster, or on an existing Dask scheduler.

    summary = run_sweep(sweep, "out/amplitudes")                    # LocalCluster, one worker per core
    summary = run_sweep(sweep, out, scheduler="tcp://head:8786")    # an existing scheduler
    summary = run_sweep(sweep, out, scheduler="serial")             # in this process, no Dask
    summary = run_sweep(sweep, out, client=client)                  # a dask.distributed.Client you hold

Layout of ``out``::

    sweep.json               the sweep's manifest (case text, axes, seed, every task's key/hash/seed)
    tasks/<key>.h5           one result file per finished task (see :mod:`shockflow.sweeps.records`)
    tasks/<key>.failed.json  the failure record of a task that raised (traceback included)
    index.h5                 the merged index (:mod:`shockflow.sweeps.index`)

Each task is run by :func:`perform` on a worker: it writes only its own files, atomically, and
never raises — an exception becomes a failure record and a ``failed`` report, and the other
tasks go on.  Resuming is the default: before submitting, the tasks whose result file exists
with the task's hash are reused; failed and missing tasks run again.  An interrupted sweep
(Ctrl-C, a killed client) leaves finished files intact and no partial file.

The local cluster has one worker process per core (``workers``), ``threads_per_worker=1`` and
``NUMBA_NUM_THREADS = OMP_NUM_THREADS = MKL_NUM_THREADS = OPENBLAS_NUM_THREADS = 1`` in each
worker's environment (set before the worker imports anything), so the processes do not
oversubscribe the cores.  Workers of an existing scheduler are started by the user: give them
the same environment (docs/sweeps.md).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import time
import traceback
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from shockflow import __version__
from shockflow.storage import atomic_open
from shockflow.sweeps.records import read_failure, read_task_record, write_failure, write_task_file
from shockflow.sweeps.sweep import Sweep
from shockflow.sweeps.tasks import Task, canonical_json

__all__ = ["TaskReport", "SweepSummary", "WORKER_ENV", "MissingDistributed", "perform", "local_cluster", "run_sweep",
           "failure_record", "missing_distributed", "SERIAL"]

#: environment of every local worker: one thread per process for Numba and the BLAS libraries
WORKER_ENV = {"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
#: the ``scheduler`` value that runs every task in the calling process, in order
SERIAL = "serial"
STATUSES = ("done", "reused", "failed", "missing")


@dataclass(frozen=True)
class TaskReport:
    """The outcome of one task: ``status`` ``done`` (ran now), ``reused`` (finished before),
    ``failed`` (raised; ``error`` is the message, the traceback is in the failure record) or
    ``missing`` (not run: the sweep was interrupted)."""

    index: int
    key: str
    status: str
    params: dict
    seed: int
    hash: str
    figures: dict = field(default_factory=dict)
    seconds: float = float("nan")
    cpu_seconds: float = float("nan")
    error: str = ""
    worker: str = ""
    path: str = ""

    def as_dict(self) -> dict:
        return {"index": self.index, "key": self.key, "status": self.status, "params": self.params,
                "seed": self.seed, "figures": self.figures, "seconds": self.seconds, "error": self.error,
                "path": self.path}


def _report(task: Task, status: str, **kw) -> TaskReport:
    return TaskReport(index=task.index, key=task.key, status=status, params=task.params_dict, seed=task.seed,
                      hash=task.hash, **kw)


def _scratch_name(key: str) -> str:
    return f".work-{key}-{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


def perform(task: Task, execute, tasks_dir: str) -> TaskReport:
    """Run one task on this process and write its result file or failure record (never raises
    for an ``Exception`` of the task; raises FileNotFoundError when ``tasks_dir`` is not visible
    here, which the client records as the task's failure)."""
    tasks_dir = Path(tasks_dir)
    target = tasks_dir / task.filename
    worker = f"{socket.gethostname()}:{os.getpid()}"
    if not tasks_dir.is_dir():
        raise FileNotFoundError(f"sweep: the tasks directory {str(tasks_dir)!r} does not exist on worker {worker}; "
                                f"the sweep's output directory must be on a file system the workers share")
    record = read_task_record(target)
    if record is not None and record.hash == task.hash:
        return _report(task, "reused", figures=record.figures, seconds=record.seconds, worker=worker, path=str(target))
    workdir = tasks_dir / _scratch_name(task.key)
    workdir.mkdir(parents=True)
    start, cpu_start = time.perf_counter(), time.process_time()
    try:
        output = execute(task, workdir)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
        _keep_extras(task, output, workdir, tasks_dir)
        write_task_file(task, output, target, seconds=seconds, version=__version__)
        with contextlib.suppress(FileNotFoundError):
            (tasks_dir / task.failure_filename).unlink()
        return _report(task, "done", figures=dict(output.figures), seconds=seconds, cpu_seconds=cpu, worker=worker,
                       path=str(target))
    except Exception as exc:  # the task failed; the sweep goes on
        seconds = time.perf_counter() - start
        path = write_failure(task, tasks_dir / task.failure_filename, error=exc,
                             traceback_text=traceback.format_exc(), seconds=seconds)
        return _report(task, "failed", seconds=seconds, error=f"{type(exc).__name__}: {exc}", worker=worker,
                       path=str(path))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _keep_extras(task: Task, output, workdir: Path, tasks_dir: Path) -> None:
    """Move the runner's other files (figures, side files) to ``tasks/<key>.files/``."""
    adopted = Path(output.result_file).resolve() if output.result_file is not None else None
    extras = [p for p in workdir.iterdir() if not p.name.startswith(".") and p.resolve() != adopted]
    if not extras:
        return
    dest = tasks_dir / f"{task.key}.files"
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir()
    for p in extras:
        os.replace(p, dest / p.name)


@dataclass(frozen=True)
class SweepSummary:
    """Counts and reports of a sweep run (``reports`` in task order)."""

    name: str
    out: Path
    reports: tuple[TaskReport, ...]
    seconds: float
    index_path: Path | None
    workers: int

    def count(self, status: str) -> int:
        return sum(r.status == status for r in self.reports)

    @property
    def failed(self) -> tuple[TaskReport, ...]:
        return tuple(r for r in self.reports if r.status == "failed")

    @property
    def ok(self) -> bool:
        return all(r.status in ("done", "reused") for r in self.reports)

    def as_dict(self) -> dict:
        return {"sweep": self.name, "out": str(self.out), "index": str(self.index_path) if self.index_path else None,
                "tasks": len(self.reports), **{s: self.count(s) for s in STATUSES}, "seconds": self.seconds,
                "workers": self.workers,
                "failures": [{"index": r.index, "key": r.key, "params": r.params, "error": r.error,
                              "record": r.path} for r in self.failed]}

    def table(self) -> str:
        lines = [f"sweep {self.name}: {len(self.reports)} tasks -> {self.out} ({self.seconds:.1f} s, "
                 f"{self.workers} worker{'s' if self.workers != 1 else ''})",
                 "  " + ", ".join(f"{self.count(s)} {s}" for s in STATUSES)]
        for r in self.failed:
            params = ", ".join(f"{k}={v!r}" for k, v in r.params.items())
            lines.append(f"  FAILED task {r.index} ({params}): {r.error}  [{r.path}]")
        lines += self.results_table()
        if self.index_path is not None:
            lines.append(f"  index: {self.index_path}")
        return "\n".join(lines)

    def results_table(self, max_columns: int = 8) -> list[str]:
        """One line per finished task: its parameters and key figures (at most ``max_columns`` of
        them, in the runner's order; all are in the index file)."""
        done = [r for r in self.reports if r.status in ("done", "reused") and r.figures]
        if not done:
            return []
        params = list(dict.fromkeys(k for r in done for k in r.params))
        names = list(dict.fromkeys(k for r in done for k in r.figures))[:max_columns]

        def cell(v) -> str:
            if isinstance(v, float):
                return f"{v:.6g}"
            return str(v)

        header = ["task", *params, *names]
        rows = [[str(r.index), *(cell(r.params.get(k, "")) for k in params), *(cell(r.figures.get(k, "")) for k in names)]
                for r in done]
        width = [max(len(h), *(len(row[j]) for row in rows)) for j, h in enumerate(header)]
        fmt = "  " + "  ".join(f"{{:>{w}}}" for w in width)
        return [fmt.format(*header), *(fmt.format(*row) for row in rows)]


# -- clusters --------------------------------------------------------------------------------------
def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS reports it, else the count)."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def local_cluster(workers: int | None = None, **kwargs):
    """A ``dask.distributed.LocalCluster``: ``workers`` processes (default: :func:`usable_cores`), one
    thread each, :data:`WORKER_ENV` in each, no dashboard; ``kwargs`` go to LocalCluster."""
    import logging

    from distributed import LocalCluster

    n = usable_cores() if workers is None else int(workers)
    if n < 1:
        raise ValueError(f"workers: expected a whole number >= 1, found {workers!r}")
    options = {"n_workers": n, "threads_per_worker": 1, "processes": True, "env": dict(WORKER_ENV),
               "dashboard_address": None, "silence_logs": logging.ERROR}
    options.update(kwargs)
    import warnings

    with warnings.catch_warnings():
        # without a dashboard the scheduler still serves /health on the dashboard's port and warns,
        # with a traceback-like "Port 8787 is already in use", when another cluster holds it
        warnings.filterwarnings("ignore", message=r"Port \d+ is already in use", category=UserWarning)
        return LocalCluster(**options)


class MissingDistributed(RuntimeError):
    """A sweep on a cluster where dask.distributed is not installed: a setup the user fixes (install it, or run
    serially), refused before the sweep writes anything."""


def missing_distributed(serial: str = f"scheduler={SERIAL!r}") -> MissingDistributed | None:
    """The error a sweep on a cluster meets here, None if dask.distributed can be imported; ``serial`` is how the
    caller says "run serially" (``--scheduler serial`` on the command line)."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        return MissingDistributed(f"sweeps on a cluster run on dask.distributed, which is not installed: "
                                  f"pip install 'shockflow[sweep]' (or run in this process: {serial})")
    return None


def _distributed():
    """The dask.distributed module, or the error that says how to install it."""
    missing = missing_distributed()
    if missing is not None:
        raise missing
    import distributed

    return distributed


@contextlib.contextmanager
def _client(scheduler: str | None, workers: int | None):
    Client = _distributed().Client

    if scheduler in (None, "", "local"):
        with local_cluster(workers) as cluster, Client(cluster) as client:
            yield client
    elif str(scheduler).endswith(".json") and Path(scheduler).is_file():
        with Client(scheduler_file=str(scheduler)) as client:
            yield client
    else:
        with Client(str(scheduler)) as client:
            yield client


def _live_scratch(entry: Path) -> bool:
    """Whether a scratch directory may belong to a running task (another host, or a live pid)."""
    parts = entry.name.split("-")
    try:
        host, pid = "-".join(parts[3:-2]), int(parts[-2])
    except (ValueError, IndexError):
        return True
    if host != socket.gethostname():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _clean_stale(tasks_dir: Path) -> None:
    for entry in tasks_dir.glob(".work-*"):
        if entry.is_dir() and not _live_scratch(entry):
            shutil.rmtree(entry, ignore_errors=True)


def _write_manifest(sweep: Sweep, out: Path) -> None:
    import json

    with atomic_open(out / "sweep.json", "w", encoding="utf-8") as fh:
        json.dump(json.loads(canonical_json(sweep.manifest())), fh, indent=1)


# -- running ---------------------------------------------------------------------------------------
def run_sweep(sweep: Sweep, out, *, scheduler: str | None = None, workers: int | None = None, client=None,
              progress: bool = True, write_index: bool = True) -> SweepSummary:
    """Run the tasks of ``sweep`` that are not finished yet and write the index.

    ``scheduler``: None or ``"local"`` (a :func:`local_cluster` of ``workers`` processes),
    ``"serial"`` (this process), a scheduler address (``tcp://host:8786``) or a scheduler file
    (``*.json``); ``client``: an existing ``distributed.Client`` (overrides ``scheduler``).
    Returns a :class:`SweepSummary`; KeyboardInterrupt cancels the outstanding tasks, writes the
    index (unfinished tasks ``missing``) and propagates.
    """
    from shockflow.progress import progress as phase
    from shockflow.sweeps.index import write_index as write_index_file

    if not isinstance(sweep, Sweep):
        raise TypeError(f"run_sweep: sweep must be a Sweep (case_sweep / function_sweep), found {type(sweep).__name__}")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers: expected a whole number >= 1, found {workers!r}")
    if client is None and scheduler != SERIAL:
        _distributed()   # a cluster without dask.distributed: refused before anything is written
    out = Path(out)
    tasks_dir = out / "tasks"
    tasks_dir.mkdir(parents=True, exist_ok=True)
    _clean_stale(tasks_dir)
    _write_manifest(sweep, out)
    start = time.perf_counter()
    reports: dict[int, TaskReport] = {}
    pending = []
    for t in sweep.tasks:
        record = read_task_record(tasks_dir / t.filename)
        if record is not None and record.hash == t.hash:
            reports[t.index] = _report(t, "reused", figures=record.figures, seconds=record.seconds,
                                       path=str(record.path))
        else:
            pending.append(t)
    n_workers = 1
    failed = []

    def collect(report: TaskReport, bar) -> None:
        reports[report.index] = report
        if report.status == "failed":
            failed.append(report.index)
        params = ", ".join(f"{k}={v!r}" for k, v in report.params.items())
        took = f" in {report.seconds:.1f} s" if report.seconds == report.seconds else ""
        bar.set_postfix_str(f"task {report.index} {report.status}{took}" + (f" ({params})" if params else "")
                            + (f"; {len(failed)} failed so far" if failed else ""), refresh=False)
        bar.update(1)

    try:
        # one line per finished task in a log (a bar in a terminal): the tasks of a cluster overlap in time
        with phase(len(pending), f"sweep {sweep.name}", enabled=progress and bool(pending), unit="task", each=True,
                   overlapping=True) as bar:
            try:
                if not pending:
                    pass
                elif client is None and scheduler == SERIAL:
                    for t in pending:
                        collect(perform(t, sweep.execute, str(tasks_dir)), bar)
                elif client is not None:
                    n_workers = _run_on(client, sweep, pending, tasks_dir, lambda r: collect(r, bar))
                else:
                    with _client(scheduler, workers) as own:
                        n_workers = _run_on(own, sweep, pending, tasks_dir, lambda r: collect(r, bar))
            finally:   # the phase's last line sums up, rather than repeating the last task's
                bar.set_postfix_str(f"{len(failed)} failed" if failed else "", refresh=False)
    finally:
        _clean_stale(tasks_dir)   # the scratch directories of the workers an interruption stopped (the cluster is down)
        ordered = tuple(reports.get(t.index) or _report(t, "missing", error="not run (sweep interrupted)")
                        for t in sweep.tasks)
        index_path = write_index_file(out / "index.h5", sweep, ordered) if write_index else None
    return SweepSummary(name=sweep.name, out=out, reports=ordered, seconds=time.perf_counter() - start,
                        index_path=index_path, workers=n_workers)


def _run_on(client, sweep: Sweep, pending: list[Task], tasks_dir: Path, collect) -> int:
    from distributed import as_completed

    n_workers = max(len(client.scheduler_info().get("workers", {})), 1)
    keys = [f"shockflow-sweep-{t.key}-{t.hash[:16]}" for t in pending]
    futures = client.map(perform, pending, execute=sweep.execute, tasks_dir=str(tasks_dir), key=keys, retries=0)
    task_of = {f.key: t for f, t in zip(futures, pending)}
    try:
        for future, value in as_completed(futures, with_results=True, raise_errors=False):
            if isinstance(value, TaskReport):
                collect(value)
                continue
            # the worker died or the task was lost (KilledWorker, CancelledError): record it here
            t = task_of[future.key]
            error = value if isinstance(value, BaseException) else RuntimeError(f"unexpected task value {value!r}")
            text = "".join(traceback.format_exception(error)) if isinstance(value, BaseException) else str(error)
            path = write_failure(t, tasks_dir / t.failure_filename, error=error, traceback_text=text,
                                 seconds=float("nan"))
            collect(_report(t, "failed", error=f"{type(error).__name__}: {error}", path=str(path)))
    except BaseException:
        client.cancel(futures)
        raise
    return n_workers


def failure_record(summary: SweepSummary, index: int) -> dict | None:
    """The failure record (with traceback) of task ``index`` of a sweep run, if it failed."""
    report = summary.reports[index]
    return read_failure(Path(report.path)) if report.status == "failed" else None
