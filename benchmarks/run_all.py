"""Run the whole benchmark suite and write JSON, PNG figures and a Markdown table (one command).

    python benchmarks/run_all.py --out benchmarks/results/            # full run (see docs/benchmarks.md)
    python benchmarks/run_all.py --out /tmp/bench --quick             # small sizes: checks that everything works

Writes ``results.jsonl`` (one JSON record per measurement, also echoed to stdout), ``machine.json``,
``results.md`` and the figures into ``--out``; with ``--readme README.md`` the text between the
README's ``<!-- benchmarks:start -->`` / ``<!-- benchmarks:end -->`` markers is replaced by the table.
Studies: throughput (all tools, interleaved repeats), accuracy (L1 error vs wall time), scaling
(prange, 1..cores threads), memory (peak RSS, fresh process), startup (cold/warm JIT).
Timings are only meaningful on a quiet machine: every record carries the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("NUMBA_NUM_THREADS", str(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                                             else os.cpu_count()))

STUDIES = ("throughput", "accuracy", "scaling", "memory", "startup")
THROUGHPUT_SIZES = {
    "full": {"burgers_1d": [10_000, 100_000, 1_000_000], "burgers_2d": [256, 512, 1024],
             "viscous_1d": [10_000, 100_000, 1_000_000], "hj_1d": [10_000, 100_000, 1_000_000], "hj_2d": [256, 512, 1024]},
    "quick": {"burgers_1d": [1_000, 10_000], "burgers_2d": [32, 64], "viscous_1d": [1_000, 4_000],
              "hj_1d": [1_000, 10_000], "hj_2d": [32, 64]},
}
#: Updates shockflow performs per timed run (small grids take more steps, up to 5000).
STEPS_TARGET = {"full": {"burgers": 1e8, "viscous_burgers": 1e8, "hj": 5e7},
                "quick": {"burgers": 2e6, "viscous_burgers": 1e6, "hj": 1e6}}
ACCURACY_SIZES = {
    "full": {"burgers_1d": [200 * 2 ** k for k in range(7)], "burgers_2d": [32, 64, 128, 256],
             "viscous_1d": [200 * 2 ** k for k in range(6)], "hj_1d": [100 * 2 ** k for k in range(8)],
             "hj_2d": [32, 64, 128, 256]},
    "quick": {"burgers_1d": [200, 400, 800], "burgers_2d": [16, 32], "viscous_1d": [200, 400, 800],
              "hj_1d": [100, 200, 400], "hj_2d": [16, 32]},
}
SCALING = {"full": ({"burgers_1d": [1_000_000, 4_000_000], "burgers_2d": [1024, 2048]}, 200),
           "quick": ({"burgers_1d": [200_000], "burgers_2d": [512]}, 5)}
MEMORY_CELLS = {"full": 10_000_000, "quick": 1_000_000}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results"), help="output directory")
    parser.add_argument("--quick", action="store_true", help="small sizes and few steps (checks, not measurements)")
    parser.add_argument("--repeats", type=int, default=None, help="interleaved repeats (default 5, quick 2)")
    parser.add_argument("--studies", default=",".join(STUDIES), help=f"comma-separated subset of {','.join(STUDIES)}")
    parser.add_argument("--problems", default=None, help="comma-separated subset of the problems")
    parser.add_argument("--readme", type=Path, default=None, help="README whose benchmark section to replace")
    args = parser.parse_args(argv)
    studies = [s.strip() for s in args.studies.split(",") if s.strip()]
    unknown = sorted(set(studies) - set(STUDIES))
    if unknown:
        parser.error(f"--studies: unknown {unknown}; valid: {', '.join(STUDIES)}")
    mode = "quick" if args.quick else "full"
    repeats = args.repeats or (2 if args.quick else 5)
    if repeats < 1:
        parser.error(f"--repeats: expected a whole number >= 1, found {repeats}")

    from benchmarks import accuracy, memory, scaling, startup, throughput
    from benchmarks.machine import describe
    from benchmarks.problems import PROBLEMS
    from benchmarks.report import update_readme, write_report
    from benchmarks.tools import all_tools

    problems = list(PROBLEMS) if args.problems is None else [p.strip() for p in args.problems.split(",")]
    bad = sorted(set(problems) - set(PROBLEMS))
    if bad:
        parser.error(f"--problems: unknown {bad}; valid: {', '.join(PROBLEMS)}")
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    machine = describe()
    tools = {}
    for name, tool in all_tools().items():
        reason = tool.unavailable()
        if reason:
            print(f"[skip] {name}: {reason}", file=sys.stderr)
        else:
            tools[name] = tool
            extra = getattr(tool, "message", "")
            print(f"[tool] {name}: {tool.label}" + (f" — {extra}" if extra else ""), file=sys.stderr)
    machine["tools"] = {name: getattr(t, "message", "") or t.label for name, t in tools.items()}
    if "pyclaw" in tools:
        from benchmarks.tools.pyclaw_classic import _fortran_available

        machine["pyclaw_kernels"] = {f"{d}d": "Fortran" if _fortran_available(d) else "Python" for d in (1, 2)}
    records: list[dict] = []
    jsonl = args.out / "results.jsonl"
    tmp_jsonl = jsonl.with_suffix(".jsonl.tmp")
    with open(tmp_jsonl, "w") as fh:
        def emit(recs):
            for r in recs:
                r.setdefault("mode", mode)
                records.append(r)
                line = json.dumps(r)
                fh.write(line + "\n")
                fh.flush()
                print(line, flush=True)

        def log(msg):
            print(msg, file=sys.stderr, flush=True)

        if "throughput" in studies:
            for p in problems:
                log(f"[throughput] {p}")
                emit(throughput.measure_problem(p, THROUGHPUT_SIZES[mode][p], tools,
                                                steps_target=STEPS_TARGET[mode][PROBLEMS[p].kind], repeats=repeats, log=log))
        if "accuracy" in studies:
            for p in problems:
                log(f"[accuracy] {p}")
                emit(accuracy.measure_problem(p, ACCURACY_SIZES[mode][p], tools, log=log))
        if "scaling" in studies:
            sizes, steps = SCALING[mode]
            for p, ns in sizes.items():
                if p in problems:
                    log(f"[scaling] {p}")
                    emit(scaling.measure(p, ns, steps=steps, repeats=repeats, log=log))
            log("[scaling] do the logical cores share a physical core?")
            emit([scaling.core_sharing()])
        if "memory" in studies:
            log("[memory]")
            emit(memory.measure(MEMORY_CELLS[mode], log=log))
        if "startup" in studies:
            log("[startup]")
            emit([startup.measure(log=log)])
    tmp_jsonl.replace(jsonl)
    machine["elapsed_s"] = round(time.perf_counter() - started, 1)
    machine["mode"] = mode
    machine["load_average_at_end"] = list(os.getloadavg())
    (args.out / "machine.json").write_text(json.dumps(machine, indent=2))
    note = ""
    if mode == "quick":
        note = "Quick run (small sizes, few steps): a check that every piece works, not a measurement."
    if max(machine["load_average_at_start"][0], machine["load_average_at_end"][0]) > (machine["usable_cores"] or 1):
        note += (" Measured under load (load average above the core count): timings and ratios are unreliable;"
                 " rerun on a quiet machine.")
    md = write_report(records, machine, args.out, under_load_note=note.strip())
    print(f"[done] {len(records)} records, {md}, {machine['elapsed_s']} s", file=sys.stderr)
    if args.readme is not None:
        if update_readme(args.readme, md):
            print(f"[readme] updated {args.readme}", file=sys.stderr)
        else:
            print(f"[readme] {args.readme} has no benchmark markers; add '<!-- benchmarks:start -->' and "
                  "'<!-- benchmarks:end -->' where the table should go", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
