"""Grids, ghost-cell boundary fills (Numba vs NumPy reference) and the time-step clock."""

import itertools

import numpy as np
import pytest

from solvers.grid import KINDS, BoundaryConditions, fill_ghosts, fill_ghosts_reference
from solvers.errors import SolverInputError
from solvers.grid import Grid
from solvers.time_stepping import Clock, advective_bound, combine_bounds, diffusive_bound, tableau

NON_PERIODIC = [k for k in KINDS if k != "periodic"]


def _side(kind, value):
    return (kind, value) if kind == "dirichlet" else kind


def _specs(ndim):
    """Every kind on every axis (the same on both sides), plus mixed lower/upper pairs."""
    specs = [[k] * ndim for k in KINDS]
    for lo, hi in itertools.product(NON_PERIODIC, repeat=2):
        specs.append([(_side(lo, 0.7), _side(hi, -1.3))] + ["periodic"] * (ndim - 1))
    if ndim > 1:
        specs.append(["periodic", (_side("dirichlet", 2.0), "reflecting")] + ["symmetric"] * (ndim - 2))
    return specs


@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_compiled_fill_matches_reference_for_every_kind(ndim):
    rng = np.random.default_rng(ndim)
    cells = {1: (9,), 2: (6, 7), 3: (4, 5, 3)}[ndim]
    for ghost in (1, 2, 3):
        grid = Grid((0.0,) * ndim, (1.0,) * ndim, cells, ghost=ghost)
        for spec in _specs(ndim):
            bc = BoundaryConditions.parse(spec, ndim)
            q = rng.normal(size=grid.padded_shape)
            a = fill_ghosts(q.copy(), ghost, bc)
            b = fill_ghosts_reference(q.copy(), ghost, bc)
            assert np.array_equal(a, b), spec
            assert np.array_equal(a[grid.interior], q[grid.interior])  # the interior is untouched


def test_fill_values_by_kind_1d():
    grid = Grid.line(4, ghost=2)
    q = grid.pad(np.array([1.0, 2.0, 3.0, 4.0]))
    ghosts = lambda spec: fill_ghosts(q.copy(), 2, BoundaryConditions.parse(spec, 1))[[0, 1, 6, 7]]  # noqa: E731
    assert ghosts("periodic").tolist() == [3.0, 4.0, 1.0, 2.0]
    assert ghosts("outflow").tolist() == [1.0, 1.0, 4.0, 4.0]
    assert ghosts("symmetric").tolist() == [2.0, 1.0, 4.0, 3.0]
    assert ghosts("reflecting").tolist() == [-2.0, -1.0, -4.0, -3.0]
    assert ghosts([(("dirichlet", 0.5), ("dirichlet", 5.0))]).tolist() == [-1.0, 0.0, 6.0, 7.0]


def test_fewer_cells_than_ghosts_mirror_the_nearest_cell():
    grid = Grid.line(2, ghost=3)
    q = grid.pad(np.array([1.0, 2.0]))
    bc = BoundaryConditions.parse("symmetric", 1)
    a = fill_ghosts(q.copy(), 3, bc)
    assert np.array_equal(a, fill_ghosts_reference(q.copy(), 3, bc))
    assert a.tolist() == [2.0, 2.0, 1.0, 1.0, 2.0, 2.0, 1.0, 1.0]  # ghost k mirrors cell min(k, n-1)


def test_boundary_bad_input():
    with pytest.raises(SolverInputError, match="boundary kind: unknown value 'wall'.*'dirichlet', 'outflow', 'periodic'"):
        BoundaryConditions.parse("wall", 1)
    with pytest.raises(SolverInputError, match="periodic must be set on both sides"):
        BoundaryConditions.parse([("periodic", "outflow")], 1)
    with pytest.raises(SolverInputError, match="expected one entry per axis \\(2\\), found 3"):
        BoundaryConditions.parse(["outflow"] * 3, 2)
    with pytest.raises(SolverInputError, match="boundary value: expected a finite number"):
        BoundaryConditions.parse(("dirichlet", float("nan")), 1)
    with pytest.raises(SolverInputError, match="conditions for 1 axes, field has 2"):
        fill_ghosts(np.zeros((6, 6)), 1, BoundaryConditions.parse("outflow", 1))
    with pytest.raises(SolverInputError, match="C-contiguous"):
        fill_ghosts(np.zeros((6, 8))[:, ::2], 1, BoundaryConditions.parse("outflow", 2))


# -- grids ----------------------------------------------------------------------------------------------------------
def test_grid_geometry_and_cell_averages():
    grid = Grid((0.0, -1.0), (2.0, 1.0), (4, 8), ghost=2)
    assert grid.dx == (0.5, 0.25) and grid.padded_shape == (8, 12) and grid.cell_volume == 0.125
    assert np.allclose(grid.centers(0), [0.25, 0.75, 1.25, 1.75])
    assert np.allclose(grid.padded_centers(1)[:2], [-1.375, -1.125])
    # Gauss–Legendre with 4 points is exact for degree 7: average of x^7 over cell [0, 0.5] is 0.5^7 / 8
    avg = grid.cell_averages(lambda x, y: x**7 + 0 * y)
    assert avg[0, 0] == pytest.approx(0.5**7 / 8, rel=1e-13)
    assert grid.integrate(avg) == pytest.approx(2.0**8 / 8 * 2.0, rel=1e-13)


def test_grid_bad_input():
    with pytest.raises(SolverInputError, match=r"cells\[0\]: expected a positive whole number of cells, found (np.int64\()?0"):
        Grid((0.0,), (1.0,), (0,))
    with pytest.raises(SolverInputError, match="axis 0: expected finite bounds with upper > lower"):
        Grid((1.0,), (0.0,), (4,))
    with pytest.raises(SolverInputError, match="cells: expected 1, 2 or 3 axes, found 4"):
        Grid((0,) * 4, (1,) * 4, (2,) * 4)
    with pytest.raises(SolverInputError, match="field: expected interior shape \\(4,\\), found \\(5,\\)"):
        Grid.line(4).pad(np.zeros(5))


# -- time stepping --------------------------------------------------------------------------------------------------
def test_clock_lands_exactly_on_output_times():
    times = np.array([0.1, 0.25, 0.7, 1.0])
    clock = Clock(0.0, times, cfl=0.9)
    reached, steps = [], 0
    while not clock.done:
        dt, lands = clock.next_step(0.0123)
        assert 0 < dt <= 0.9 * 0.0123 + 1e-15
        if clock.advance(dt, lands):
            reached.append(clock.t)
        steps += 1
    assert reached == times.tolist()  # bit-exact landing
    assert steps == clock.step
    # every interval is covered by ceil(interval / (cfl dt)) steps (no sliver steps)
    expected = sum(int(np.ceil(round(d / (0.9 * 0.0123), 9))) for d in np.diff(np.concatenate([[0.0], times])))
    assert steps == expected


def test_clock_initial_outputs_and_bad_input():
    clock = Clock(0.0, [0.0, 1.0], cfl=0.5)
    assert clock.initial_outputs == 1
    with pytest.raises(SolverInputError, match="cfl: expected a number in \\(0, 1\\], found 1.2"):
        Clock(0.0, [1.0], cfl=1.2)
    with pytest.raises(SolverInputError, match="times: expected strictly increasing output times"):
        Clock(0.0, [0.5, 0.5], cfl=0.5)
    with pytest.raises(SolverInputError, match=r"times: the first output time (np.float64\()?-1.0\)? is before the start time 0.0"):
        Clock(0.0, [-1.0], cfl=0.5)
    clock = Clock(0.0, [1.0], cfl=0.5, max_steps=2)
    for _ in range(2):
        clock.advance(*clock.next_step(0.1))
    with pytest.raises(SolverInputError, match="max_steps: the solve needs more than 2 steps"):
        clock.next_step(0.1)


def test_step_bounds_and_tableaux():
    assert advective_bound(2.0, [0.1, 0.2]) == pytest.approx(1.0 / (20.0 + 10.0))
    assert diffusive_bound(0.5, [0.1]) == pytest.approx(0.01)
    assert combine_bounds(0.1, np.inf, 0.1) == pytest.approx(0.05)
    assert combine_bounds(np.inf) == np.inf
    with pytest.raises(SolverInputError, match="stable time step bound"):
        combine_bounds(-1.0)
    # Shu–Osher coefficients: each stage is a convex combination and the scheme is consistent (sum of beta
    # products reproduces dt L for a linear L to first order): check SSP-RK3 on y' = y exactly to third order
    for name, order in (("euler", 1), ("ssprk2", 2), ("ssprk3", 3)):
        tab = tableau(name)
        assert np.all(tab >= 0) and np.allclose(tab.sum(axis=1)[1:], 1.0)
        errs = []
        for h in (0.1, 0.05):
            y0, y = 1.0, 1.0
            for alpha, beta in tab:
                y = alpha * y0 + beta * (y + h * y)
            errs.append(abs(y - np.exp(h)))
        assert np.log2(errs[0] / errs[1]) == pytest.approx(order + 1, abs=0.15)
