"""Adapters that run a benchmark problem on each tool, behind one signature.

A tool is an object with ``name``, ``label`` (for tables), ``unavailable()`` (None, or the reason it
cannot run here), ``supports(problem)`` and ``prepare(problem, grid, q0, t0, t_end)`` returning a
*runner*: a call without arguments that performs the whole solve from fresh copies of the data
and returns ``(final interior field, steps taken)``.  Preparation (building grids, coefficient
arrays, compiling) is outside the runner; everything a user pays per solve is inside it.

Every Burgers tool uses forward Euler at CFL 0.9 with the step recomputed from the newest state,
so with the same data the tools take (nearly) the same steps; shockflow's fast path and the C
loop take bitwise the same steps and give bitwise the same answer.
"""

from __future__ import annotations

from benchmarks.tools.c_loop import CLoop
from benchmarks.tools.pyclaw_classic import PyClawClassic
from benchmarks.tools.pypde_burgers import PyPDEBurgers
from benchmarks.tools.shockflow_runs import NumPyReference, Shockflow, ShockflowBlocked, ShockflowParallel


def all_tools() -> dict:
    """Every tool of the suite by name (availability is checked by the caller)."""
    tools = [
        Shockflow(), ShockflowBlocked(), ShockflowParallel(), NumPyReference(),
        CLoop("plain", "strict"), CLoop("blocked", "strict"), CLoop("fused", "strict"), CLoop("plain", "fair"),
        CLoop("blocked", "fair"), CLoop("fused", "fair"),
        PyClawClassic(), PyPDEBurgers(),
    ]
    return {t.name: t for t in tools}
