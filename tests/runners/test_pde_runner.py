"""The PDE runner: segmented solving equals one solver call; the 2-D Hessian shock report."""

from __future__ import annotations

import numpy as np
import pytest

from shockflow.cases import parse_case
from shockflow.runners.pde import build_problem, shock_report, solve_problem

SINE = """\
kind = "pde"
[equation]
kind = "burgers"
[domain]
kind = "interval"
cells = 128
[initial]
function = "sine"
offset = 0.25
[output]
t_end = 0.3
snapshots = 31
"""

BOX = """\
kind = "pde"
[equation]
kind = "hamilton_jacobi"
[domain]
kind = "box"
cells = [96, 96]
lower = [-1.5, -1.5]
upper = [1.5, 1.5]
[initial]
function = "gaussian"
amplitude = 0.32
width = 0.4
center = [0.1, -0.2]
[output]
t_end = 0.45
snapshots = 10
[shocks]
resolved_cells = 8.0
"""


def test_segmented_solve_equals_one_solver_call():
    from solvers.conservation import solve_conservation

    problem = build_problem(parse_case(SINE))
    seen = []
    segmented = solve_problem(problem, progress=lambda done, total: seen.append((done, total)))
    assert len(seen) == 20 and seen[-1] == (30, 30)  # the progress callback follows the segments
    whole = solve_conservation(problem.grid, problem.initial, problem.times[1:], reconstruction="muscl",
                               limiter="mc", integrator="ssprk2")
    assert segmented.steps == whole.steps
    np.testing.assert_allclose(segmented.values[1:], whole.snapshots, rtol=0, atol=1e-13)


def test_box_hj_first_shock_time_from_hessian_steepening():
    # u0 = A exp(-|x - c|^2 / (2 w^2)): the Hessian is smallest at the centre, -A/w^2 in every direction,
    # so characteristics first cross at t* = w^2/A = 0.5 there (docs/theory.md §1); the run stops at 0.45 < t*
    from solvers.exact.hopf_lax import hopf_lax

    case = parse_case(BOX)
    problem = build_problem(case)
    solution = solve_problem(problem)
    report = shock_report(problem, solution)
    assert report.method == "hessian" and report.fit_points >= 2
    assert report.formation_time_from_data == pytest.approx(0.5, rel=0.01)
    assert report.formation_time == pytest.approx(0.5, rel=0.02)
    # at t = 0.45 the converging region is w (1 - t/t*) = 0.04 wide, about one cell: narrower than
    # max_width_cells, so the detector fires there (as in 1-D, a front under 4 cells cannot be told from
    # a shock); the reported time is still the extrapolated t*, the place the centre of the Gaussian
    (row,) = report.shocks
    assert row.first_seen == pytest.approx(0.45) and row.time == pytest.approx(0.5, rel=0.02)
    assert np.hypot(row.location[0] - 0.1, row.location[1] + 0.2) < 2 * 3.0 / 96
    # u is smooth up to t*: compare with the 2-D Hopf-Lax formula
    # every third cell with |x|, |y| < 1: the walls (symmetric mirror) reach in at speed |p| <= 0.5
    inner = (slice(17, 80, 3), slice(17, 80, 3))
    X, Y = np.meshgrid(problem.grid.centers(0), problem.grid.centers(1), indexing="ij")
    exact = hopf_lax(lambda P, Q: 0.32 * np.exp(-((P - 0.1) ** 2 + (Q + 0.2) ** 2) / (2 * 0.4 ** 2)),
                     (X[inner], Y[inner]), 0.45, search=((-4.0, 4.0), (-4.0, 4.0)))
    assert np.max(np.abs(solution.values[-1][inner] - exact)) < 2e-3


def test_key_figures_of_a_solve_for_sweeps(tmp_path):
    import math

    from shockflow.cases import RunOptions
    from shockflow.runners.pde import run_pde_case

    outcome = run_pde_case(parse_case(SINE, file="sine.toml"), RunOptions(out=str(tmp_path), figures=False))
    figures = outcome.key_figures()
    assert figures["shock_count"] == 1
    assert figures["shock_time"] == pytest.approx(1 / (2 * math.pi), rel=0.02)
    assert figures["shock_location"] == pytest.approx(0.5 + 0.25 / (2 * math.pi), abs=2 / 128)
    assert all(isinstance(v, (int, float)) for v in figures.values())
