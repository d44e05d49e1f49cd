"""Exact solutions of the benchmark problems against the library's general exact solvers."""

import math

import numpy as np
import pytest

from benchmarks.problems import A, C, PROBLEMS, burgers_cell_averages, burgers_point_values, hj_values
from solvers.exact import hopf_lax
from solvers.grid import Grid


@pytest.mark.parametrize("t", [0.2, 0.5, 0.9])
def test_burgers_cell_averages_match_hopf_lax(t):
    """Before and after the first shock (t* = 1/pi): differences of the Hopf-Lax potential at the faces."""
    grid = Grid.line(120)
    faces = np.linspace(0.0, 1.0, 121)
    phi0 = lambda y: A * (1 - np.cos(2 * np.pi * y)) / (2 * np.pi) + C * y  # noqa: E731
    expected = np.diff(hopf_lax(phi0, faces, t)) / grid.dx[0]
    assert np.max(np.abs(burgers_cell_averages(grid, t) - expected)) < 1e-11


def test_burgers_shock_sits_where_rankine_hugoniot_puts_it():
    """The zero-mean part is odd: the shock stays at xi = 1/2, i.e. at x = 1/2 + c t, with states +-w."""
    t = 0.6
    x_shock = 0.5 + C * t
    left, right = burgers_point_values(np.array([x_shock - 1e-9, x_shock + 1e-9]), t)
    assert left - C == pytest.approx(-(right - C), abs=1e-6)
    assert left - right > 0.5  # a real jump, entropy-admissible (left state above right)


def test_hj_values_match_periodic_hopf_lax():
    grid = Grid.line(64)
    x = (np.arange(64) + 0.5) / 64
    u0 = lambda y: -A * np.cos(2 * np.pi * y) / (2 * np.pi)  # noqa: E731
    assert np.max(np.abs(hj_values(grid, 0.5) - hopf_lax(u0, x, 0.5, period=1.0))) < 1e-11


def test_burgers_2d_data_are_cell_averages_of_the_sine():
    grid = Grid((0, 0), (1, 1), (16, 16))
    expected = grid.cell_averages(lambda x, y: C + A * np.sin(2 * np.pi * (x + y)))
    assert np.max(np.abs(PROBLEMS["burgers_2d"].exact(grid, 0.0) - expected)) < 1e-12


def test_first_order_godunov_converges_at_first_order_past_the_shock():
    """The exact solution is what the benchmark errors are measured against: shockflow's first-order
    scheme must converge to it at order ~1 (a wrong exact solution would stall the error)."""
    from solvers.conservation import solve_conservation

    errors = []
    for n in (200, 400, 800):
        grid = Grid.line(n)
        q = solve_conservation(grid, burgers_cell_averages(grid, 0.0), [0.5], integrator="euler").final
        errors.append(np.sum(np.abs(q - burgers_cell_averages(grid, 0.5))) / n)
    orders = [math.log2(a / b) for a, b in zip(errors, errors[1:])]
    assert all(0.8 < p < 1.3 for p in orders), orders
