"""shockflow against its peers at the headline sizes only, in one run (a short form of ``run_all``'s studies).

    python benchmarks/bench_peers.py [--repeats 3] [--json]

* throughput, 2-D Burgers 1024² and 1-D Burgers 10⁶: shockflow (one thread), the fair C loop and PyClaw classic,
  per update and per solve (PyClaw's split 2-D step covers about twice shockflow's time);
* throughput, viscous 1-D 10⁶: py-pde, compiled once per grid outside the timed runs;
* accuracy against cost, viscous 1-D on 200 … 1600 cells: py-pde's time for its error against the cheapest
  shockflow run at least as accurate (compilation paid once on both sides).

Uses :mod:`benchmarks.throughput` and :mod:`benchmarks.accuracy` unchanged; tools that are not installed are
skipped with the reason.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

from benchmarks import accuracy, throughput  # noqa: E402
from benchmarks.tools import all_tools  # noqa: E402

THROUGHPUT = (("burgers_2d", [1024]), ("burgers_1d", [1_000_000]), ("viscous_1d", [1_000_000]))
TOOLS = ("shockflow", "c_blocked_fair", "c_fused_fair", "pyclaw", "pypde")
ACCURACY_SIZES = [200, 400, 800, 1600]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    log = lambda m: print(m, file=sys.stderr, flush=True)  # noqa: E731
    tools = {}
    for name, tool in all_tools().items():
        if name in TOOLS:
            reason = tool.unavailable()
            if reason:
                log(f"[skip] {name}: {reason}")
            else:
                tools[name] = tool
    print(f"load {os.getloadavg()}", flush=True)
    records = []
    for problem, sizes in THROUGHPUT:
        for r in throughput.measure_problem(problem, sizes, tools, steps_target=1e8, repeats=args.repeats, log=log):
            records.append(r)
            per_solve = r["shockflow_speedup_per_solve"]["median"]
            print(f"{problem} {r['cells']:,} {r['tool']:16s} {r['updates_per_s']['median']:.3g} updates/s; shockflow x"
                  f"{r['shockflow_speedup']['median']:.3g} per update, x{per_solve:.3g} per solve; steps {r['steps']}; "
                  f"diff vs shockflow {r['max_abs_diff_vs_shockflow']}; load {r['load_average']}", flush=True)
    if "pypde" in tools:
        acc = accuracy.measure_problem("viscous_1d", ACCURACY_SIZES, {"pypde": tools["pypde"]}, log=log)
        records += acc
        for p in accuracy.time_at_equal_error(acc, "viscous_1d", "pypde")["points"]:
            print(f"viscous_1d equal error: py-pde n={p['n']} L1 {p['l1_error']:.3e} in {p['tool_s']:.3g} s; shockflow "
                  f"{p['shockflow_s']:.3g} s ({p['shockflow_scheme']}): x{p['speedup']:.3g}", flush=True)
    print(f"load {os.getloadavg()}", flush=True)
    if args.json:
        print(json.dumps(records, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
