"""Accuracy against cost: L1 error against the exact solution versus wall time, per tool and scheme.

Every run starts from the exact data at t = 0 and ends at ``problem.t_accuracy`` (past the first
shock for the Burgers problems), on a sequence of grids doubling in size.  Schemes of different
order and type are then compared where it matters to a user: the wall time needed for a given
error.  :func:`time_at_equal_error` interpolates one curve at the errors of another.
"""

from __future__ import annotations

import numpy as np

from benchmarks.machine import timed
from benchmarks.problems import PROBLEMS, l1_error
from benchmarks.ratios import interpolate_loglog
from benchmarks.tools.shockflow_runs import NumPyReference, Shockflow, schemes_for  # noqa: F401


def entries_for(problem, tools: dict) -> list[tuple[str, str, object]]:
    """(tool name, scheme label, tool object) of every curve drawn for ``problem``."""
    entries = [("shockflow", scheme, Shockflow(scheme)) for scheme in schemes_for(problem.kind)]
    for name in ("c_plain", "pyclaw", "pypde"):
        if name in tools and tools[name].supports(problem):
            entries.append((name, "first_order_godunov" if name != "pypde" else "central_fd_euler", tools[name]))
    return entries


def measure_problem(problem_name: str, sizes, tools: dict, *, repeats: int = 1, log=print) -> list[dict]:
    """One record per (tool, scheme, size): L1 error and the best wall/CPU time of ``repeats`` runs
    (of up to 3 runs for solves shorter than a second in total)."""
    problem = PROBLEMS[problem_name]
    records = []
    entries = entries_for(problem, tools)
    exact = {}
    for tool_name, scheme, tool in entries:
        warm = problem.grid(sizes[0])
        tool.prepare(problem, warm, problem.exact(warm, 0.0), 0.0, problem.t_accuracy)()  # compile / load caches
        for n in sizes:
            grid = problem.grid(n)
            if n not in exact:
                exact[n] = (problem.exact(grid, 0.0), problem.exact(grid, problem.t_accuracy))
            q0, final = exact[n]
            run = tool.prepare(problem, grid, q0, 0.0, problem.t_accuracy)
            best, spent, runs = None, 0.0, 0
            while runs < max(1, repeats) or (runs < 3 and spent < 1.0):  # short runs: best of up to 3
                (u, steps), t = timed(run)
                best = t if best is None or t.wall < best.wall else best
                spent += t.wall
                runs += 1
            error = l1_error(grid, u, final)
            profile = getattr(tool, "last_profile", None) or {}
            records.append({
                "study": "accuracy", "problem": problem_name, "tool": tool_name, "scheme": scheme,
                "label": f"{tool.label} {scheme}", "kernel": getattr(tool, "kernel", "") or None,
                "n": n, "cells": int(np.prod(grid.cells)), "steps": int(steps), "t_end": problem.t_accuracy,
                "l1_error": float(f"{error:.5g}"), "wall_s": round(best.wall, 5), "cpu_s": round(best.cpu, 5),
                "load_average": best.load,
                # py-pde: its profiler's time stepping alone (the rest of its wall time is per-solve compilation)
                "stepping_s": round(float(profile["solver"]), 5) if "solver" in profile else None,
            })
            log(f"  {problem_name} {tool_name}[{scheme}] n={n}: L1 {error:.3e} in {best.wall:.3g} s ({steps} steps)")
    return records


def time_at_equal_error(records: list[dict], problem: str, tool: str, scheme: str | None = None) -> dict:
    """For each run of ``tool`` (and ``scheme``) on ``problem``: its time, the time shockflow needs for an L1 error
    at least as small, and their ratio (``speedup``; for py-pde also ``speedup_stepping_only``, its time stepping
    alone against shockflow's whole solve).

    shockflow's time is the least over its schemes of the time interpolated (log–log) on the scheme's curve at
    that error and the time of any run of the scheme that was already as accurate: a user who wants the error
    runs the cheapest grid that reaches it (a higher-order scheme's coarsest run may already beat the error)."""
    mine = [r for r in records if r["problem"] == problem and r["tool"] == tool and (scheme is None or r["scheme"] == scheme)]
    shock = [r for r in records if r["problem"] == problem and r["tool"] == "shockflow"]
    out = []
    for r in mine:
        best = None
        for s in {x["scheme"] for x in shock}:
            curve = [x for x in shock if x["scheme"] == s]
            t = interpolate_loglog([x["l1_error"] for x in curve], [x["wall_s"] for x in curve], r["l1_error"])
            accurate = [x["wall_s"] for x in curve if x["l1_error"] <= r["l1_error"]]
            if accurate and (t is None or min(accurate) < t):
                t = min(accurate)
            if t is not None and (best is None or t < best[1]):
                best = (s, t)
        if best is not None:
            out.append({"n": r["n"], "l1_error": r["l1_error"], "tool_s": r["wall_s"], "shockflow_scheme": best[0],
                        "shockflow_s": float(f"{best[1]:.4g}"), "speedup": float(f"{r['wall_s'] / best[1]:.4g}"),
                        "speedup_stepping_only": (float(f"{r['stepping_s'] / best[1]:.4g}")
                                                  if r.get("stepping_s") else None)})
    return {"problem": problem, "tool": tool, "points": out}
