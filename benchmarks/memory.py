"""Peak resident memory of a large 1-D solve against the size of the arrays it must hold.

Each measurement runs in a fresh process (``python -m benchmarks.memory --child TOOL CELLS STEPS``)
so that the peak (``ru_maxrss``) belongs to that solve alone.  The child imports and compiles on a
small grid first and records its resident memory then (the *baseline*: interpreter, NumPy, Numba,
compiled code); the excess of the peak over the baseline is what the solve itself used.

The arrays a solve must hold: the caller's data ``q0``, the two padded working fields of a
one-stage scheme (current and next) and the returned snapshot — 4 × 8 bytes per cell for a
solve that returns its answer as a new array (``required_bytes``).  The C reference, which
advances the caller's padded field in place, needs 2 fields plus its copy of the data.
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


def _rss_bytes() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


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
    baseline = _rss_bytes()
    grid = Grid.line(cells)
    q0 = data(grid)
    if tool == "shockflow":
        sol = solve_conservation(grid, q0, [t_end], integrator="euler")
        steps_taken, final = sol.steps, sol.final
    else:
        q = grid.pad(q0)
        steps_taken = solver.solve(q, grid.ghost, grid.dx, 0.0, t_end)
        final = q[grid.interior]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kilobytes on Linux
    padded = (cells + 2 * grid.ghost) * 8
    required = cells * 8 + 2 * padded + (cells * 8 if tool == "shockflow" else 0)
    return {"tool": tool, "cells": cells, "steps": int(steps_taken), "baseline_rss_bytes": baseline,
            "peak_rss_bytes": peak, "solve_bytes": peak - baseline, "required_bytes": required,
            "ratio_to_required": round((peak - baseline) / required, 3), "checksum": float(np.sum(final))}


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
