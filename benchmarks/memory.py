"""Peak resident memory of a large 1-D solve against the size of the arrays it must hold.

Each measurement runs in a fresh process (``python -m benchmarks.memory --child TOOL CELLS STEPS``)
so that the peak belongs to that solve alone.  The child imports and compiles on a small grid first
and records its resident memory then (the *baseline*: interpreter, NumPy, Numba, compiled code),
resets the kernel's peak mark (``/proc/self/clear_refs``), runs the solve and reads the peak
(``VmHWM``; ``ru_maxrss`` is not used because Linux carries the parent's peak at fork into it).
The excess of the peak over the baseline is what the solve itself used.

The arrays a solve must hold beyond the caller's data (which is created before the baseline): the
two padded working fields of a one-stage scheme (current and next) and the returned snapshot —
3 × 8 bytes per cell for a solve that returns its answer as a new array (``required_bytes``).  The
C reference, which advances a padded copy of the data in place, needs the 2 working fields.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import numpy as np

TOOLS = ("shockflow", "c_plain")


def _status_bytes(field: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def _reset_peak() -> bool:
    """Reset the kernel's peak-RSS mark (VmHWM) to the current RSS (Linux >= 4.0); False if not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def child(tool: str, cells: int, steps: int) -> dict:
    from solvers.conservation import solve_conservation
    from solvers.grid import Grid

    def data(grid):
        return 0.25 + 0.5 * np.sin(2 * np.pi * (np.arange(grid.cells[0]) + 0.5) / grid.cells[0])

    small = Grid.line(1000)
    t_end = steps * 0.9 / (0.75 * cells)
    if tool == "shockflow":
        solve_conservation(small, data(small), [1e-3], integrator="euler")
    elif tool == "c_plain":
        from benchmarks.c_reference import CBurgers, compile_reference

        lib, message = compile_reference("strict")
        if lib is None:
            return {"tool": tool, "skipped": message}
        solver = CBurgers(lib)
        q = small.pad(data(small))
        solver.solve(q, small.ghost, small.dx, 0.0, 1e-3)
    else:
        raise ValueError(f"tool: expected one of {TOOLS}, found {tool!r}")
    grid = Grid.line(cells)
    q0 = data(grid)  # the caller's data: part of the baseline, not of the solve
    baseline = _status_bytes("VmRSS")
    reset = _reset_peak()  # so that the peak below is the solve's, not the imports', the compiler's or the data's
    if tool == "shockflow":
        sol = solve_conservation(grid, q0, [t_end], integrator="euler")
        steps_taken, final = sol.steps, sol.final
    else:
        q = grid.pad(q0)
        steps_taken = solver.solve(q, grid.ghost, grid.dx, 0.0, t_end)
        final = q[grid.interior]
    # VmHWM belongs to this process image; ru_maxrss would also count the parent's peak at fork time.
    peak = _status_bytes("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    padded = (cells + 2 * grid.ghost) * 8
    required = 2 * padded + (cells * 8 if tool == "shockflow" else 0)
    return {"tool": tool, "cells": cells, "steps": int(steps_taken), "baseline_rss_bytes": baseline,
            "peak_rss_bytes": peak, "solve_bytes": peak - baseline, "required_bytes": required,
            "ratio_to_required": round((peak - baseline) / required, 3), "peak_reset_after_baseline": reset,
            "checksum": float(np.sum(final))}


def measure(cells: int = 10_000_000, steps: int = 10, log=print) -> list[dict]:
    """Run each tool's child process and collect its record."""
    records = []
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])))
    for tool in TOOLS:
        proc = subprocess.run([sys.executable, "-m", "benchmarks.memory", "--child", tool, str(cells), str(steps)],
                              capture_output=True, text=True, cwd=root, env=env)
        if proc.returncode != 0:
            records.append({"study": "memory", "tool": tool, "error": proc.stderr.strip()[-500:]})
            log(f"  memory {tool}: failed: {proc.stderr.strip()[-300:]}")
            continue
        rec = {"study": "memory", **json.loads(proc.stdout.strip().splitlines()[-1])}
        records.append(rec)
        if "skipped" in rec:
            log(f"  memory {tool}: {rec['skipped']}")
        else:
            log(f"  memory {tool}: peak {rec['peak_rss_bytes'] / 2**20:.0f} MiB, baseline {rec['baseline_rss_bytes'] / 2**20:.0f} MiB, "
                f"solve {rec['solve_bytes'] / 2**20:.0f} MiB vs required {rec['required_bytes'] / 2**20:.0f} MiB "
                f"(x{rec['ratio_to_required']})")
    return records


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        print(json.dumps(child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))))
    else:
        for r in measure():
            print(json.dumps(r))
