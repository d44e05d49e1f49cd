"""The grid HJ fast path (solvers.hamilton_jacobi.fast_kernels) against the general kernel, the NumPy reference and
Hopf–Lax; its blow-up report; where it is selected.

The fast kernels do the general kernel's arithmetic in the same order, so the comparison is bitwise
(``np.array_equal``), step counts included.
"""

import itertools
import math

import numba
import numpy as np
import pytest

from solvers.errors import BlowUpError, SolverInputError
from solvers.exact.hopf_lax import hopf_lax
from solvers.grid import Grid
from solvers.hamilton_jacobi import HJDiscretisation, HJSettings, solve_hj
from solvers.hamilton_jacobi import CompiledHamiltonian
from solvers.hamilton_jacobi.boundary import fill_hj_ghosts
from solvers.time_stepping import tableau

TWO_PI = 2.0 * np.pi
DERIVS = ("first_order", "eno2", "weno5")
NUMS = ("godunov", "lax_friedrichs", "local_lax_friedrichs")
INTEGRATORS = ("euler", "ssprk2", "ssprk3")
VARIANTS = ((0.0, False), (0.0, True), (0.05, False), (0.05, True))  # (nu, varying coefficients)
# Each compiled fast kernel costs 3-7 s on a cold Numba cache, so the default run uses one variant per
# (derivative, numerical Hamiltonian) pair — all four among the pairs — and the other tests reuse those
# kernels: VARIANT[derivative][numerical Hamiltonian] (indices into DERIVS, NUMS).
VARIANT = ((0, 1, 2), (0, 3, 1), (2, 3, 0))


def _grid(ndim, cells=(41, 19)):
    if ndim == 1:
        return Grid.line(cells[0], 0.0, TWO_PI)
    if ndim == 3:
        return Grid((0.0, -1.0, 0.0), (TWO_PI, 1.5, 1.0), (13, 9, 7))
    return Grid((0.0, -1.0), (TWO_PI, 1.5), cells)


def _data(grid):
    """Smooth data plus a kink and a little noise, so every ENO/WENO and Godunov branch is taken."""
    rng = np.random.default_rng(grid.ndim)
    x = grid.mesh()
    u = np.sin(x[0]) + 0.4 * np.abs(x[0] - 3.0) + 0.02 * rng.standard_normal(grid.shape)
    if grid.ndim >= 2:
        u = u + np.cos(2.0 * x[1]) + 0.3 * x[1] ** 2
    if grid.ndim == 3:
        u = u + 0.5 * x[2] ** 2 - 0.2 * np.abs(x[2] - 0.4)
    return u


def _coefficients(grid, varying):
    if not varying:
        return dict(a=1.3 if grid.ndim == 1 else (1.3 * np.ones((grid.ndim, *grid.shape))))
    x = grid.mesh()
    a = np.stack([1.0 + 0.4 * np.sin(x[0] + k) for k in range(grid.ndim)])
    return dict(a=a, D=1.0 + 0.5 * np.cos(x[0]), density=1.5 + 0.3 * np.sin(x[0]))


def _boundary(ndim):
    if ndim == 3:
        return ["periodic", ("symmetric", "extrapolate"), ("outflow", "symmetric")]
    return "periodic" if ndim == 1 else ["periodic", ("symmetric", "extrapolate")]


def _both(grid, u0, times, **kw):
    fast = solve_hj(grid, u0, times, **kw)
    general = solve_hj(grid, u0, times, fast_path=False, **kw)
    assert (fast.kernel, general.kernel) == ("fast", "general")
    return fast, general


def _cases(shift):
    """Every (derivative, numerical Hamiltonian, integrator) in 1-D and 2-D, with the (nu, coefficient) variant
    ``shift(index of derivative, of numerical Hamiltonian, of integrator)``."""
    return [
        (ndim, d, n, i, *VARIANTS[shift(a, b, c) % 4])
        for ndim in (1, 2)
        for (a, d), (b, n), (c, i) in itertools.product(enumerate(DERIVS), enumerate(NUMS), enumerate(INTEGRATORS))
    ]


def _check_bitwise(ndim, derivative, numerical, integrator, nu, varying):
    grid = _grid(ndim)
    fast, general = _both(grid, _data(grid), [0.1, 0.3], derivative=derivative, numerical_hamiltonian=numerical,
                          integrator=integrator, nu=nu, boundary=_boundary(ndim), **_coefficients(grid, varying))  # fmt: skip
    assert fast.steps == general.steps and fast.steps > 5
    assert np.array_equal(fast.u, general.u)
    assert np.abs(fast.u[-1] - fast.u[0]).max() > 1e-2  # the solution moved


@pytest.mark.parametrize("ndim, derivative, numerical, integrator, nu, varying", _cases(lambda a, b, c: VARIANT[a][b]))
def test_fast_kernel_is_bitwise_the_general_kernel(ndim, derivative, numerical, integrator, nu, varying):
    _check_bitwise(ndim, derivative, numerical, integrator, nu, varying)


# Slow run: each (derivative, numerical Hamiltonian) pair with the three variants the default run leaves out.
@pytest.mark.slow
@pytest.mark.parametrize("ndim, derivative, numerical, integrator, nu, varying",
                         _cases(lambda a, b, c: VARIANT[a][b] + 1 + c))
def test_fast_kernel_is_bitwise_the_general_kernel_in_more_variants(ndim, derivative, numerical, integrator, nu, varying):
    _check_bitwise(ndim, derivative, numerical, integrator, nu, varying)


# 3-D: each derivative with a different numerical Hamiltonian, integrator and (ν, coefficient) variant, the
# variant the block charts of three coupled modes use (ENO2, Godunov, SSP-RK3, inviscid, varying a_k) first
@pytest.mark.parametrize("derivative, numerical, integrator, nu, varying", [
    ("eno2", "godunov", "ssprk3", 0.0, True),
    pytest.param("first_order", "lax_friedrichs", "euler", 0.05, False, marks=pytest.mark.slow),   # each compile
    pytest.param("weno5", "local_lax_friedrichs", "ssprk2", 0.05, True, marks=pytest.mark.slow),   # costs 3-7 s
])
def test_fast_kernel_3d_is_bitwise_the_general_kernel(derivative, numerical, integrator, nu, varying):
    _check_bitwise(3, derivative, numerical, integrator, nu, varying)


@pytest.mark.parametrize("ndim, numerical", [(1, "local_lax_friedrichs"), (2, "godunov")])
def test_fast_kernel_eikonal_is_bitwise_the_general_kernel(ndim, numerical):
    grid = _grid(ndim)
    fast, general = _both(grid, _data(grid), [0.1], hamiltonian="eikonal", derivative="eno2",
                          numerical_hamiltonian=numerical, integrator="ssprk2", boundary=_boundary(ndim),
                          **_coefficients(grid, True))  # fmt: skip
    assert fast.steps == general.steps and np.array_equal(fast.u, general.u)


@pytest.mark.parametrize("cells", [(3, 2), (5, 4), (6, 7)])
@pytest.mark.parametrize("boundary", ["symmetric", "extrapolate", "periodic"])
def test_speed_bands_on_grids_smaller_than_two_stencils(cells, boundary):
    """The lagged speed pass and the boundary bands must cover every cell exactly when the grid is
    narrower than the stencil (WENO5: radius 3), in 1-D and 2-D."""
    for ndim in (1, 2):
        grid = Grid.line(cells[0], 0.0, 1.0) if ndim == 1 else Grid((0.0, 0.0), (1.0, 1.2), cells)
        x = grid.mesh()
        u0 = np.sin(3.0 * x[0]) + (np.cos(2.0 * x[1]) if ndim == 2 else 0.0)
        fast, general = _both(grid, u0, [0.2], derivative="weno5", integrator="ssprk3", boundary=boundary, nu=0.05)
        assert fast.steps == general.steps and np.array_equal(fast.u, general.u)


@pytest.mark.parametrize("ndim", [1, 2])
@pytest.mark.parametrize("derivative, numerical", [("first_order", "godunov"), ("eno2", "lax_friedrichs"),
                                                   ("weno5", "local_lax_friedrichs"), ("weno5", "lax_friedrichs")])  # fmt: skip
def test_fast_step_matches_numpy_reference(ndim, derivative, numerical):
    """Three SSP-RK3 steps of the fast kernel against the NumPy reference stages, and the speed bound it
    returns (and leaves in the scratch per axis) against the compiled separate pass, exactly."""
    grid = _grid(ndim)
    nu, varying = VARIANTS[VARIANT[DERIVS.index(derivative)][NUMS.index(numerical)]]
    settings = HJSettings(ndim, "quadratic", numerical, derivative, "ssprk3", 0.5, nu, _boundary(ndim))
    op = HJDiscretisation.build(grid, settings, **_coefficients(grid, varying))
    assert op.kernel == "fast"
    rk = np.ascontiguousarray(tableau("ssprk3"))
    q = fill_hj_ghosts(grid.pad(_data(grid)), grid.ghost, settings.boundary)
    ref = q.copy()
    scratch = op.scratch()
    op.max_speed(q, scratch)
    buffers = [grid.zeros(), grid.zeros()]
    dt = 0.4 * op.stable_step(op.max_speed(q))
    for _ in range(3):
        speed, where, failed = op.step(q, buffers, rk, dt, scratch)
        assert failed == -1
        q, buffers[where] = buffers[where], q
        prev = ref
        for alpha, beta in rk:
            out, _ = op.stage_reference(prev, ref, alpha, beta, dt)
            prev = fill_hj_ghosts(grid.pad(out), grid.ghost, settings.boundary)
        ref = prev
        np.testing.assert_allclose(q[grid.interior], ref[grid.interior], rtol=1e-13, atol=1e-13)
        check = op.scratch()
        assert speed == op.max_speed(q, check) and np.array_equal(scratch[4], check[4])
        _, reference_speed = op.rhs_reference(q)
        assert speed == pytest.approx(reference_speed, rel=1e-13)
    assert np.abs(q - fill_hj_ghosts(grid.pad(_data(grid)), grid.ghost, settings.boundary)).max() > 1e-3


def _errors_1d(cells, t, **kw):
    errors = []
    for n in cells:
        grid = Grid.line(n, 0.0, TWO_PI)
        sol = solve_hj(grid, np.cos, [t], boundary="periodic", **kw)
        assert sol.kernel == "fast"
        errors.append(np.abs(sol.u[-1] - hopf_lax(np.cos, grid.centers(), t, period=TWO_PI)).max())
    return np.array(errors)


def test_fast_path_converges_to_hopf_lax_at_the_design_orders():
    """u_t + ½u_x² = 0, u0 = cos x, periodic, t = 0.5 (smooth): order 1 (first order, Euler) and 2 (ENO2)."""
    cells = (100, 200, 400, 800)
    first = _errors_1d(cells, 0.5, derivative="first_order", integrator="euler", cfl=0.9)
    eno2 = _errors_1d(cells, 0.5, derivative="eno2", integrator="ssprk2")
    first_orders = np.log2(first[:-1] / first[1:])
    eno2_orders = np.log2(eno2[:-1] / eno2[1:])
    assert np.all((first_orders > 0.9) & (first_orders < 1.1)), first
    assert np.all((eno2_orders > 1.8) & (eno2_orders < 2.3)), eno2
    # sizes (measured): first order about 0.49/N, ENO2 about 9/N² (6.2e-4 and 1.4e-5 at N = 800)
    assert first[-1] < 1e-3 and eno2[-1] < 0.05 * first[-1]


def test_fast_path_2d_converges_to_separable_hopf_lax():
    """u0 = cos x + cos y, H = ½|p|²: the solution is the sum of the 1-D Hopf–Lax solutions; ENO2 order 2."""
    errors = []
    for n in (32, 64, 128):
        grid = Grid((0.0, 0.0), (TWO_PI, TWO_PI), (n, n))
        sol = solve_hj(grid, lambda x, y: np.cos(x) + np.cos(y), [0.5], boundary="periodic", derivative="eno2",
                       integrator="ssprk2")  # fmt: skip
        assert sol.kernel == "fast"
        line = hopf_lax(np.cos, grid.centers(), 0.5, period=TWO_PI)
        errors.append(np.abs(sol.u[-1] - (line[:, None] + line[None, :])).max())
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all((orders > 1.8) & (orders < 2.3)), errors


@pytest.mark.parametrize("ndim", [1, 2, pytest.param(3, marks=pytest.mark.slow)])
def test_blow_up_on_the_fast_path_reports_step_and_cell_as_the_general_kernel(ndim):
    """Data of size 1e300: ½|p|² overflows in the first stage; both kernels stop with the same report."""
    grid = _grid(ndim, (16, 12))
    u0 = 1e300 * np.sin(grid.mesh()[0])
    errors = {}
    for fast_path in (True, False):
        with pytest.raises(BlowUpError) as err:
            solve_hj(grid, u0, [1.0], derivative="eno2", integrator="ssprk2", boundary=_boundary(ndim),
                     fast_path=fast_path)  # fmt: skip
        errors[fast_path] = err.value
    e = errors[True]
    assert e.what == "u" and e.step == 1 and len(e.cell) == ndim and not math.isfinite(e.value)
    assert f"at step {e.step}" in str(e) and f"in cell {e.cell}" in str(e)
    g = errors[False]
    assert (e.step, e.time, e.cell) == (g.step, g.time, g.cell)


@numba.njit(cache=True)
def _half_square(x, p):
    s = 0.0
    for k in range(p.size):
        s += p[k] * p[k]
    return 0.5 * s


def test_fast_path_is_selected_only_where_it_applies():
    line, square = _grid(1), _grid(2)
    cube = Grid((0.0, 0.0, 0.0), (1.0, 1.0, 1.0), (6, 5, 4))
    kw = dict(derivative="first_order", integrator="euler", boundary="periodic")
    assert solve_hj(line, np.sin(line.centers()), [0.01], **kw).kernel == "fast"
    assert solve_hj(square, _data(square), [0.01], **kw).kernel == "fast"
    assert solve_hj(line, np.sin(line.centers()), [0.01], fast_path=False, **kw).kernel == "general"
    assert solve_hj(cube, np.zeros(cube.shape), [0.01], **kw).kernel == "fast"
    assert solve_hj(cube, np.zeros(cube.shape), [0.01], fast_path=False, **kw).kernel == "general"
    # a user Hamiltonian: decided at build time (solving would compile its uncacheable kernels, ~5 s)
    custom = CompiledHamiltonian(_half_square, 2.0)
    assert HJDiscretisation.build(line, HJSettings(1, custom, "lax_friedrichs")).kernel == "general"
    assert HJDiscretisation.build(line, HJSettings(1, "eikonal", "lax_friedrichs")).kernel == "fast"
    assert HJDiscretisation.build(line, HJSettings(1, fast_path=False)).kernel == "general"
    with pytest.raises(SolverInputError, match="fast_path: expected True or False, found 'yes'"):
        solve_hj(line, np.sin(line.centers()), [0.01], fast_path="yes")
