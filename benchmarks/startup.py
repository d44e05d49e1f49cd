"""Start-up cost: import time, and JIT compilation cold (empty Numba cache) and warm (cache filled).

Each measurement is a fresh interpreter (``python -m benchmarks.startup --child``) with
``NUMBA_CACHE_DIR`` pointing at a new temporary directory: the first process compiles and writes
the cache (*cold*), a second process with the same directory loads it (*warm*).  In the child:
``import_s`` is the time to import ``solvers.conservation.solver`` and ``solvers.hamilton_jacobi.solver`` (NumPy,
SciPy and Numba included, as a user pays them); for each case the first call minus a second
identical call is the compilation (cold) or cache-loading (warm) overhead.

Cases: the Burgers fast path with forward Euler, the library defaults (first order, SSP-RK2: the fast path's
stages), MUSCL-MC (fast path), WENO5 (the general conservation kernel), and the HJ solver with its defaults
(ENO2, SSP-RK3; its fast kernel).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def child() -> dict:
    start = time.perf_counter()
    import numpy as np

    import solvers.conservation.solver as cons
    import solvers.hamilton_jacobi.solver as hj
    from solvers.grid import Grid

    out = {"import_s": round(time.perf_counter() - start, 4)}
    grid = Grid.line(2000)
    q0 = grid.sample(lambda x: 0.25 + 0.5 * np.sin(2 * np.pi * x))
    u0 = grid.sample(lambda x: -0.5 * np.cos(2 * np.pi * x) / (2 * np.pi))
    cases = {
        "fast_path": lambda: cons.solve_conservation(grid, q0, [0.05], integrator="euler"),
        "default_ssprk2": lambda: cons.solve_conservation(grid, q0, [0.05]),
        "muscl_ssprk2": lambda: cons.solve_conservation(grid, q0, [0.05], reconstruction="muscl", limiter="mc"),
        "weno5_general": lambda: cons.solve_conservation(grid, q0, [0.05], reconstruction="weno5", integrator="ssprk3"),
        "hj_default": lambda: hj.solve_hj(grid, u0, [0.05], boundary="periodic"),
    }
    for name, call in cases.items():
        t0 = time.perf_counter()
        call()
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        call()
        second = time.perf_counter() - t0
        out[f"{name}_first_s"] = round(first, 4)
        out[f"{name}_overhead_s"] = round(first - second, 4)
    return out


def measure(log=print) -> dict:
    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory(prefix="shockflow-numba-cache-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache,
                   PYTHONPATH=os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])))
        env.pop("PYTHONDONTWRITEBYTECODE", None)   # bytecode cached, as an installed package runs
        result = {"study": "startup"}
        for label in ("cold", "warm"):
            t0 = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "benchmarks.startup", "--child"], capture_output=True,
                                  text=True, cwd=root, env=env)
            total = time.perf_counter() - t0
            if proc.returncode != 0:
                result[label] = {"error": proc.stderr.strip()[-500:]}
                continue
            result[label] = {**json.loads(proc.stdout.strip().splitlines()[-1]), "process_s": round(total, 3),
                             "load_average": round(os.getloadavg()[0], 2)}
            log(f"  startup {label}: {result[label]}")
    return result


if __name__ == "__main__":
    if sys.argv[1:] == ["--child"]:
        print(json.dumps(child()))
    else:
        print(json.dumps(measure()))
