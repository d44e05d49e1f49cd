"""Wall time of `shockflow run` (the built-in default case): cold JIT and warm cache (issue 6).

    python benchmarks/bench_run.py [--out DIR]

Cold: a fresh, empty NUMBA_CACHE_DIR, so every kernel compiles.  Warm: the same command again with
that cache.  Each run is a separate process (imports included), as a user would see it.  Targets:
< 60 s cold, < 20 s warm on 2 cores.  Timings on a shared machine are only indicative.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time


def timed_run(out: str, cache: str) -> float:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "shockflow.cli", "run", "--out", out, "--quiet"], check=True, env=env)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=None, help="output directory (default: a temporary one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as tmp:
        out = args.out or tmp
        cold = timed_run(out, cache)
        warm = timed_run(out, cache)
    print(f"shockflow run (default case): cold {cold:.1f} s (target < 60), warm {warm:.1f} s (target < 20)")


if __name__ == "__main__":
    main()
