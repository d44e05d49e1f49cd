"""How many threads the fast path uses when the caller does not say (``threads=None``): threads that never lose.

The threaded kernels meet at a barrier after every pass (every step; with temporal blocking every ``K`` steps).
When another process keeps a core busy, one of the threads is descheduled for a scheduler time slice (milliseconds)
while the other waits at the barrier: measured on 2 vCPUs beside one busy process, 2 threads ran 9-13x slower
than 1 (docs/benchmarks.md).  A second thread helps only when there is an idle core to run it on.  So the
default is decided, per solve and again at every output time, from

* the grid: fewer than ``PARALLEL_THRESHOLD`` cells run serially (the fork/join, about 10 µs per pass, costs
  more than a second thread saves);
* the cores this process may run on (``os.sched_getaffinity``) and Numba's pool (``numba.get_num_threads()``);
* the competing load *now*: the runnable tasks of the machine (Linux ``/proc/loadavg``, its 4th field; elsewhere
  the one-minute ``os.getloadavg()``) minus this process's own running threads (``/proc/self/task/*/stat``).

``choose_threads`` then gives ``1 + (idle cores)``, at most the pool: with 2 cores and one busy competitor it is 1
(the serial kernel, nothing to lose), on an idle machine 2.  Sampling costs about 0.1 ms and happens only above the
size threshold.  What it cannot see: a competitor that starts in the middle of one output interval (the next
interval decides again).  The decision is a pure function of its inputs (tested); the benchmark
``benchmarks/bench_threads.py`` measures it beside a busy process.
"""

from __future__ import annotations

import os
from pathlib import Path

#: Interior cells from which a second thread pays for its fork/join (about 10 µs per pass).
PARALLEL_THRESHOLD = 200_000


def usable_cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def parse_running(loadavg_text: str) -> int | None:
    """The runnable tasks in the text of ``/proc/loadavg`` (``"0.5 0.4 0.3 3/250 1234"`` -> 3); None if malformed."""
    fields = loadavg_text.split()
    if len(fields) < 4 or "/" not in fields[3]:
        return None
    running = fields[3].split("/", 1)[0]
    return int(running) if running.isdigit() else None


def own_running_threads(task_dir: str | os.PathLike = "/proc/self/task") -> int:
    """Threads of this process in state R (running or runnable); at least 1 (the caller)."""
    count = 0
    try:
        for task in Path(task_dir).iterdir():
            try:
                stat = (task / "stat").read_text()
            except OSError:
                continue
            state = stat.rsplit(")", 1)[-1].split()  # the command name may hold spaces: the state follows ")"
            if state and state[0] == "R":
                count += 1
    except OSError:
        return 1
    return max(1, count)


def competing_tasks() -> float:
    """Runnable tasks of other processes now (Linux), or the one-minute load average (elsewhere)."""
    try:
        running = parse_running(Path("/proc/loadavg").read_text())
    except OSError:
        running = None
    if running is None:
        return float(os.getloadavg()[0]) if hasattr(os, "getloadavg") else 0.0
    return float(max(0, running - own_running_threads()))


def choose_threads(cells: int, pool: int, cores: int, competing: float) -> int:
    """The thread count for a fast-path pass over ``cells`` cells: 1 below ``PARALLEL_THRESHOLD``, else one thread
    plus one per core left idle by ``competing`` runnable tasks of other processes, at most ``pool`` (Numba's
    threads) and ``cores`` (this process's cores)."""
    if cells < PARALLEL_THRESHOLD:
        return 1
    limit = max(1, min(int(pool), int(cores)))
    idle = int(cores - 1 - competing)  # cores beyond the caller's own left to a second thread
    return max(1, min(limit, 1 + idle))


def default_threads(cells: int, pool: int) -> int:
    """:func:`choose_threads` with this machine's cores and load now (the load is sampled above the size threshold only)."""
    if cells < PARALLEL_THRESHOLD or pool <= 1:
        return 1
    return choose_threads(cells, pool, usable_cores(), competing_tasks())
