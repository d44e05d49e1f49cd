"""Wall time of `shockflow run` (the built-in default case), cold and warm side by side, by phase.

    python benchmarks/bench_run.py [--case NAME] [--repeat N] [--json]

Cold: a fresh, empty NUMBA_CACHE_DIR, so every kernel compiles.  Warm: the same run again in a new
process with that cache filled; then ``shockflow run --no-figures``, warm.  Each run is a separate
interpreter, as a user would see it.  The round (cold, warm, warm without figures) is measured
``--repeat`` times (default 3), each with its own fresh cache; every round's warm/cold ratio and warm
whole-process times are printed, and the phase table is the round with the median ratio (one round
on a shared machine can be off by ±0.1 in the ratio).

Phases (measured inside the child process, ``--child``, by wrapping the library functions a run
calls; what is left is ``other``: loading the case, building the model and data, the saddle chain, the
parameter truth, matching the transitions, the progress output):

- ``imports``: importing the modules a run uses (:data:`RUN_MODULES`: ``shockflow.cli``, the runner, training,
  extraction, prediction, the transition detector, storage, h5py, SciPy's optimisers; and with figures
  :data:`FIGURE_MODULES`: the figure modules, not matplotlib: it is imported when the figures are drawn, and
  counted there), done first so the other phases do not include them;
- ``training``: :func:`shockflow.training.train` (including its HDF5 training log);
- ``extraction``: :func:`shockflow.prediction.extraction.extract` (the quotient charts);
- ``solves``: the chart Hamilton–Jacobi solves (``shockflow.prediction.predict._solve``: Numba,
  compiled here on a cold cache) and their shock reports (``_report``);
- ``detection``: the transitions found in the loss curve (``shockflow.runners.training.observed_transitions``:
  the detector's switch-on fits);
- ``figures``: the three figures (:meth:`shockflow.figures.worker.FigureWorker.draw`: matplotlib's import,
  and the drawing, by the run and a helper process when a core is idle); ``writes``: :func:`shockflow.storage.write_result`.

``process`` is the child's whole wall time seen from outside (interpreter start-up included), ``cpu``
its CPU time (user + system, its own child processes included: the figure helpers); the CPU columns
give each phase's CPU time in the run's own process (the helpers' drawing is not in its ``figures``).
On a loaded machine the wall time grows with the competition while the CPU time stays near what a
quiet machine's wall time would be.

The children run with Python's bytecode cache on (``PYTHONDONTWRITEBYTECODE`` is dropped from their
environment, :func:`_child_env`), as an installed package runs (pip writes the bytecode at install): with it
set (some shells and CI images set it) in a checkout that has no ``__pycache__`` yet, every module of the
project is compiled from source at every start, 0.58 s of a warm run's profile on the 2-vCPU VM of issue 23
(134 modules), a cost of the measurement, not of the program.  The cold run writes the bytecode; the warm runs
read it (with or without the variable: it stops writes only).
Also measured: ``shockflow --help`` (best of three, warm), and the *floor* (:func:`_floor_seconds`): the
third-party imports a run cannot do without (NumPy, h5py, ``scipy.optimize``, Numba) and Numba's first-call
set-up, with and without matplotlib's Figure and Agg, in a fresh interpreter (best of three).  Timings on a shared machine are
indicative: the one-minute load average is printed with them.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

PHASES = ("imports", "training", "extraction", "solves", "detection", "figures", "writes", "other")
#: what a run imports (the ``imports`` phase; most of them the run imports only where it uses them)
RUN_MODULES = ("shockflow.cli", "shockflow.runners.prediction", "shockflow.training", "shockflow.prediction",
               "shockflow.prediction.extraction", "shockflow.prediction.predict", "shockflow.prediction.transitions",
               "shockflow.storage", "h5py", "scipy.optimize")
FIGURE_MODULES = ("shockflow.figures", "shockflow.figures.landscape", "shockflow.figures.solution", "shockflow.figures.worker",
                  "shockflow.figures.training")


def child(case: str, out: str, figures: bool = True) -> dict:
    """Run the case once in this process, timing each phase."""
    start = time.perf_counter()
    import importlib

    for name in (*RUN_MODULES, *(FIGURE_MODULES if figures else ())):
        importlib.import_module(name)
    phases = dict.fromkeys(PHASES, 0.0)
    cpu = dict.fromkeys(PHASES, 0.0)
    phases["imports"] = time.perf_counter() - start
    cpu["imports"] = time.process_time()   # interpreter start-up included

    import shockflow.figures as figure_module
    import shockflow.figures.worker as figure_worker
    import shockflow.prediction.extraction as extraction
    import shockflow.prediction.predict as predict
    import shockflow.runners.training as runners_training
    import shockflow.storage as storage
    import shockflow.training as training

    def timed(owner, attr, phase):
        inner = getattr(owner, attr)

        def wrapper(*args, **kwargs):
            t0, c0 = time.perf_counter(), time.process_time()
            try:
                return inner(*args, **kwargs)
            finally:
                phases[phase] += time.perf_counter() - t0
                cpu[phase] += time.process_time() - c0

        setattr(owner, attr, wrapper)

    timed(training, "train", "training")
    timed(extraction, "extract", "extraction")
    timed(predict, "_solve", "solves")
    timed(predict, "_report", "solves")
    timed(runners_training, "observed_transitions", "detection")
    timed(figure_module, "draw_result", "figures")   # every figure of a run is drawn and saved through one of them
    timed(figure_worker.FigureWorker, "draw", "figures")
    timed(storage, "write_result", "writes")

    from shockflow.cli import main

    t0, c0 = time.perf_counter(), time.process_time()
    code = main(["run", case, "--quiet", "--out", out, *(() if figures else ("--no-figures",))])
    run_s, run_cpu = time.perf_counter() - t0, time.process_time() - c0
    if code != 0:
        raise SystemExit(f"shockflow run {case} exited with {code}")
    phases["other"] = run_s - sum(phases[p] for p in PHASES if p not in ("imports", "other"))
    cpu["other"] = run_cpu - sum(cpu[p] for p in PHASES if p not in ("imports", "other"))
    phases["total"] = time.perf_counter() - start
    return {**phases, **{f"cpu {p}": v for p, v in cpu.items()}}


def _cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _child_env(**extra) -> dict:
    """The children's environment: this one, with ``extra``, and the bytecode cache on (module docstring)."""
    env = dict(os.environ, **extra)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _spawn(case: str, out: str, cache: str, figures: bool = True) -> dict:
    env = _child_env(NUMBA_CACHE_DIR=cache)
    cpu, start = _cpu_of_children(), time.perf_counter()
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", "--case", case, "--out", out,
                           *(() if figures else ("--no-figures",))],
                          check=True, env=env, capture_output=True, text=True)
    phases = json.loads(done.stdout.strip().splitlines()[-1])
    phases["process"] = time.perf_counter() - start
    phases["cpu"] = _cpu_of_children() - cpu
    return phases


#: what every warm run pays before any of its own work: the third-party imports and Numba's first-call set-up
#: (the typing and lowering registries, loaded at the first call of any compiled function, cached or not)
FLOOR_CODE = """
import json, time
t0 = time.perf_counter(); c0 = time.process_time()
import numpy, h5py, scipy.optimize, numba
from numba.core.registry import cpu_target
cpu_target.target_context.refresh(); cpu_target.typing_context.refresh()
out = {"run": (time.perf_counter() - t0, time.process_time() - c0)}
if FIGURES:
    import matplotlib.figure, matplotlib.backends.backend_agg
    out["figures"] = (time.perf_counter() - t0, time.process_time() - c0)
print(json.dumps(out))
"""


def _floor_seconds() -> dict:
    """The floor of a warm run (:data:`FLOOR_CODE`, best of three fresh interpreters, wall and CPU): what a
    run costs at the least with these libraries, whatever shockflow does."""
    best: dict = {}
    for _ in range(3):
        done = subprocess.run([sys.executable, "-c", "FIGURES = True\n" + FLOOR_CODE], check=True, capture_output=True,
                              text=True, env=_child_env())
        for key, (wall, cpu) in json.loads(done.stdout.strip().splitlines()[-1]).items():
            old = best.get(key, (float("inf"), float("inf")))
            best[key] = (min(old[0], wall), min(old[1], cpu))
    return best


def _help_seconds() -> float:
    best = float("inf")
    for _ in range(4):  # the first one warms the file cache
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "shockflow.cli", "--help"], check=True, capture_output=True,
                       env=_child_env())
        best = min(best, time.perf_counter() - start)
    return best


def _pair(case: str) -> dict:
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as out:
        load = os.getloadavg()[0]
        cold = _spawn(case, out, cache)
        warm = _spawn(case, out, cache)
        bare = _spawn(case, out, cache, figures=False)
        load = (load + os.getloadavg()[0]) / 2
    return {"cold": cold, "warm": warm, "bare": bare, "load": load, "ratio": warm["process"] / cold["process"]}


def measure(case: str = "two-layer-staircase", repeat: int = 3) -> dict:
    pairs = [_pair(case) for _ in range(max(1, repeat))]
    median = sorted(pairs, key=lambda p: p["ratio"])[len(pairs) // 2]
    return {"case": case, "cold": median["cold"], "warm": median["warm"], "bare": median["bare"], "load": median["load"],
            "ratios": [p["ratio"] for p in pairs], "loads": [p["load"] for p in pairs],
            "warm_s": [p["warm"]["process"] for p in pairs], "warm_cpu_s": [p["warm"]["cpu"] for p in pairs],
            "bare_s": [p["bare"]["process"] for p in pairs], "bare_cpu_s": [p["bare"]["cpu"] for p in pairs],
            "help_s": _help_seconds(), "floor": _floor_seconds(), "cpus": os.cpu_count()}


def table(m: dict) -> str:
    lines = [f"shockflow run {m['case']}: cold and warm JIT cache, seconds (load {m['load']:.1f} on {m['cpus']} cores)",
             f"{'phase':<12}{'cold':>9}{'warm':>9}{'warm, --no-figures':>20}{'CPU: warm':>11}{'--no-figures':>14}"]
    for p in (*PHASES, "total", "process", "cpu"):
        cpus = (f"{m['warm'][f'cpu {p}']:11.2f}{m['bare'][f'cpu {p}']:14.2f}" if f"cpu {p}" in m["warm"] else "")
        lines.append(f"{p:<12}{m['cold'][p]:9.2f}{m['warm'][p]:9.2f}{m['bare'][p]:20.2f}" + cpus)
    lines.append(f"warm / cold (process): {m['warm']['process'] / m['cold']['process']:.2f} (median of "
                 f"{len(m['ratios'])} pairs: {', '.join(f'{r:.2f}' for r in m['ratios'])}, at loads "
                 f"{', '.join(f'{x:.1f}' for x in m['loads'])}); shockflow --help: {m['help_s']:.2f} s")
    floor = m["floor"]
    lines.append(f"floor (numpy, h5py, scipy.optimize, numba and its first-call set-up; best of 3): "
                 f"{floor['run'][0]:.2f} s wall, {floor['run'][1]:.2f} s CPU; with matplotlib's figure and Agg: "
                 f"{floor['figures'][0]:.2f} s, {floor['figures'][1]:.2f} s CPU")
    for label, key in (("warm", "warm"), ("warm --no-figures", "bare")):
        lines.append(f"{label}, every round: process {', '.join(f'{x:.2f}' for x in m[key + '_s'])} s; "
                     f"cpu {', '.join(f'{x:.2f}' for x in m[key + '_cpu_s'])} s")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--case", default="two-layer-staircase", help="the case to run (default: the default case)")
    parser.add_argument("--repeat", type=int, default=3, help="cold/warm pairs measured (default 3)")
    parser.add_argument("--json", action="store_true", help="print the measurements as one JSON object")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--no-figures", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.case, args.out, figures=not args.no_figures)), flush=True)
        from shockflow.cli import _end_process

        _end_process(0)   # as the shockflow program ends: no interpreter teardown
        return
    m = measure(args.case, args.repeat)
    print(json.dumps(m) if args.json else table(m))


if __name__ == "__main__":
    main()
