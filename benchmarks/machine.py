"""The machine and software a measurement was taken on, and the clocks used (wall, process CPU, load)."""

from __future__ import annotations

import os
import platform
import sys
import time
from dataclasses import dataclass


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo (Linux), else platform.processor()."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def package_version(name: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:  # noqa: BLE001 - not installed or no metadata
        return None


def describe() -> dict:
    """CPU model, logical cores, OS, Python and the versions of the packages the benchmarks use."""
    return {
        "cpu": cpu_model(),
        "logical_cores": os.cpu_count(),
        "usable_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "os": platform.platform(),
        "python": sys.version.split()[0],
        "packages": {name: package_version(name) for name in ("numpy", "numba", "scipy", "clawpack", "py-pde", "shockflow")},
        "numba_threads": os.environ.get("NUMBA_NUM_THREADS"),
        "load_average_at_start": list(os.getloadavg()),
    }


def load_average() -> float:
    """The one-minute load average (competing runnable processes; ~0 on a quiet machine)."""
    return round(os.getloadavg()[0], 2)


@dataclass(frozen=True)
class Timing:
    wall: float
    cpu: float
    load: float


def timed(run) -> tuple[object, Timing]:
    """Call ``run()`` and return its result with the wall time, the process CPU time and the load average."""
    load = load_average()
    start, start_cpu = time.perf_counter(), time.process_time()
    result = run()
    return result, Timing(time.perf_counter() - start, time.process_time() - start_cpu, load)
