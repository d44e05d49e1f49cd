"""Hamilton–Jacobi kernels against their NumPy references; monotonicity; bad input."""

import math

import numba
import numpy as np
import pytest

from solvers.grid import BoundaryConditions, fill_ghosts
from solvers.errors import BlowUpError, SolverInputError
from solvers.grid import Grid
from solvers.hamilton_jacobi import HJDiscretisation, HJSettings, centred_gradient, solve_hj
from solvers.hamilton_jacobi.boundary import HJBoundary, fill_hj_ghosts, fill_hj_ghosts_reference
from solvers.hamilton_jacobi import CompiledHamiltonian
from solvers.hamilton_jacobi.derivatives import DERIVATIVES, one_sided, one_sided_reference


@numba.njit(cache=True)
def _tilted_quadratic(x, p):
    """A non-separable test Hamiltonian: ½(1 + 0.3 sin x_0)|p|² + 0.2 p_0."""
    s = 0.0
    for k in range(p.size):
        s += p[k] * p[k]
    return 0.5 * (1.0 + 0.3 * math.sin(x[0])) * s + 0.2 * p[0]


def _grid(ndim, n=(23, 17, 11)):
    return Grid(tuple([-1.0] * ndim), tuple([1.0 + 0.5 * k for k in range(ndim)]), n[:ndim])


def _random_padded(grid, bc, rng):
    """Smooth-plus-rough data (so ENO/WENO stencil choices and LF branches are all exercised)."""
    x = grid.mesh()
    u = sum(np.sin(2.0 * xi + k) for k, xi in enumerate(x)) + 0.3 * rng.standard_normal(grid.shape)
    return fill_ghosts(grid.pad(u), grid.ghost, bc)


@pytest.mark.parametrize("ndim", [1, 2])
@pytest.mark.parametrize("derivative", sorted(DERIVATIVES))
@pytest.mark.parametrize("numerical", ["godunov", "lax_friedrichs", "local_lax_friedrichs"])
@pytest.mark.parametrize("hamiltonian", ["quadratic", "eikonal"])
def test_stage_kernel_matches_numpy_reference(ndim, derivative, numerical, hamiltonian):
    rng = np.random.default_rng(7 + ndim)
    grid = _grid(ndim)
    boundary = ["periodic", ("symmetric", "outflow")][:ndim]
    settings = HJSettings(ndim, hamiltonian, numerical, derivative, "ssprk3", 0.5, 0.3, boundary)
    a = 0.5 + rng.random((ndim, *grid.shape))
    D = rng.random(grid.shape)
    density = 1.0 + rng.random(grid.shape)
    op = HJDiscretisation.build(grid, settings, a=a, D=D, density=density)
    q_prev = _random_padded(grid, settings.boundary.conditions, rng)
    q0 = _random_padded(grid, settings.boundary.conditions, rng)
    out = grid.zeros()
    speed = op.stage(q_prev, q0, out, 0.75, 0.25, 0.013)
    expected, expected_speed = op.stage_reference(q_prev, q0, 0.75, 0.25, 0.013)
    np.testing.assert_allclose(out[grid.interior], expected, rtol=1e-13, atol=1e-13)
    assert speed == pytest.approx(expected_speed, rel=1e-14)
    assert op.max_speed(q_prev) == pytest.approx(expected_speed, rel=1e-14)
    # the stage must actually depend on the Hamiltonian and the viscosity (not a copy of the input)
    assert np.abs(expected - (0.75 * q0 + 0.25 * q_prev)[grid.interior]).max() > 1e-3


@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_custom_hamiltonian_and_3d_stage_match_reference(ndim):
    rng = np.random.default_rng(3)
    grid = _grid(ndim, n=(13, 9, 7))
    ham = CompiledHamiltonian(_tilted_quadratic, speed_bound=6.0)
    for hamiltonian, numerical in ((ham, "lax_friedrichs"), ("quadratic", "godunov")):
        settings = HJSettings(ndim, hamiltonian, numerical, "eno2", "ssprk3", 0.5, 0.1, "periodic")
        op = HJDiscretisation.build(grid, settings, D=2.0)
        q = _random_padded(grid, settings.boundary.conditions, rng)
        out = grid.zeros()
        speed = op.stage(q, q, out, 0.0, 1.0, 0.01)
        expected, expected_speed = op.stage_reference(q, q, 0.0, 1.0, 0.01)
        np.testing.assert_allclose(out[grid.interior], expected, rtol=1e-13, atol=1e-13)
        assert speed == pytest.approx(expected_speed, rel=1e-14)


@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_hj_ghost_fill_matches_reference_and_extrapolates_linear_data_exactly(ndim):
    rng = np.random.default_rng(5)
    grid = _grid(ndim, n=(9, 7, 6))
    spec = [("extrapolate", ("dirichlet", 0.5)), "periodic", ("symmetric", "extrapolate")][:ndim]
    boundary = HJBoundary.parse(spec, ndim)
    q = grid.pad(rng.standard_normal(grid.shape))
    compiled = fill_hj_ghosts(q.copy(), grid.ghost, boundary)
    reference = fill_hj_ghosts_reference(q.copy(), grid.ghost, boundary)
    g, n = grid.ghost, grid.cells
    for k in range(ndim):  # every cell a stencil reads: the ghost slabs of axis k over the interior of the others
        index = list(grid.interior)
        index[k] = slice(None)
        np.testing.assert_array_equal(compiled[tuple(index)], reference[tuple(index)])
    # linear data are continued exactly through an extrapolating side (and the Dirichlet side holds its face value)
    x = grid.padded_centers(0)
    line = grid.pad(np.broadcast_to((2.0 * grid.centers(0) - 1.0).reshape((-1,) + (1,) * (ndim - 1)), grid.shape))
    filled = fill_hj_ghosts(line, g, boundary)
    row = filled[(slice(None),) + tuple(slice(g, g + 1) for _ in range(ndim - 1))].ravel()
    np.testing.assert_allclose(row[:g], 2.0 * x[:g] - 1.0, atol=1e-13)
    np.testing.assert_allclose(0.5 * (row[g + n[0] - 1] + row[g + n[0]]), 0.5, atol=1e-13)


def test_step_kernel_is_the_composition_of_reference_stages_and_fills():
    rng = np.random.default_rng(9)
    grid = _grid(2)
    settings = HJSettings(2, "quadratic", "local_lax_friedrichs", "weno5", "ssprk3", 0.5, 0.2, ["extrapolate", "periodic"])
    op = HJDiscretisation.build(grid, settings, a=0.5 + rng.random((2, *grid.shape)), D=rng.random(grid.shape))
    q = fill_hj_ghosts(_random_padded(grid, settings.boundary.conditions, rng), grid.ghost, settings.boundary)
    rk = np.array([[0.0, 1.0], [0.75, 0.25], [1.0 / 3.0, 2.0 / 3.0]])
    buffers = [grid.zeros(), grid.zeros()]
    speed, where, failed = op.step(q, buffers, rk, 0.004)
    prev = q
    for alpha, beta in rk:
        out = grid.pad(op.stage_reference(prev, q, alpha, beta, 0.004)[0])
        prev = fill_hj_ghosts_reference(out, grid.ghost, settings.boundary)
    assert failed == -1
    np.testing.assert_allclose(buffers[where][grid.interior], prev[grid.interior], rtol=1e-13, atol=1e-13)
    assert speed == pytest.approx(op.rhs_reference(prev)[1], rel=1e-13)


@pytest.mark.parametrize("name", sorted(DERIVATIVES))
def test_one_sided_derivatives_match_reference_and_are_exact_where_expected(name):
    grid = Grid.line(40, 0.0, 1.0)
    x = grid.padded_centers()
    bc = BoundaryConditions.parse("outflow", 1)
    g = grid.ghost
    for degree, exact in ((1, True), (2, name != "first_order"), (3, False)):
        u = x**degree
        pm_ref, pp_ref = one_sided_reference(u, 0, grid.dx[0], name, g)
        pm = np.array([one_sided(u, i, 1, grid.dx[0], DERIVATIVES[name])[0] for i in range(g, g + 40)])
        pp = np.array([one_sided(u, i, 1, grid.dx[0], DERIVATIVES[name])[1] for i in range(g, g + 40)])
        np.testing.assert_allclose(pm, pm_ref, rtol=1e-14, atol=1e-12)
        np.testing.assert_allclose(pp, pp_ref, rtol=1e-14, atol=1e-12)
        if exact:  # polynomials a scheme's stencils reproduce
            du = degree * grid.centers() ** (degree - 1)
            np.testing.assert_allclose(pm, du, atol=1e-10)
            np.testing.assert_allclose(pp, du, atol=1e-10)
    del bc


@pytest.mark.parametrize("numerical", ["godunov", "lax_friedrichs", "local_lax_friedrichs"])
@pytest.mark.parametrize("integrator", ["euler", "ssprk3"])
def test_first_order_schemes_are_monotone_and_create_no_extrema(numerical, integrator):
    """Comparison principle u0 <= v0 => u <= v, and min u0 <= u <= max u0, on rough random data."""
    rng = np.random.default_rng(11)
    grid = Grid((0.0, 0.0), (1.0, 1.0), (24, 20))
    a = np.stack([0.5 + rng.random(grid.shape), 0.5 + rng.random(grid.shape)])
    u0 = rng.standard_normal(grid.shape)
    v0 = u0 + np.abs(rng.standard_normal(grid.shape)) * (rng.random(grid.shape) < 0.5)
    # both solves must take identical steps for the discrete comparison principle: cap dt below both CFL steps
    # (a monotone step needs dt (sum_k max|dH/dp_k|/dx_k + 2 nu sum_k 1/dx_k^2) <= 1; take a quarter of it)
    lipschitz = max(np.abs(np.diff(w, axis=k)).max() / grid.dx[k] for w in (u0, v0) for k in (0, 1))
    rate = float(np.max(a)) * lipschitz * sum(1 / h for h in grid.dx) + 2 * 0.01 * sum(1 / h**2 for h in grid.dx)
    max_dt = 0.25 / rate
    kw = dict(
        numerical_hamiltonian=numerical, derivative="first_order", integrator=integrator,
        a=a, nu=0.01, boundary="symmetric", max_dt=max_dt,
    )  # fmt: skip
    u = solve_hj(grid, u0, [0.01, 0.05], **kw)
    v = solve_hj(grid, v0, [0.01, 0.05], **kw)
    assert u.steps == v.steps > 5
    assert np.all(u.u <= v.u + 1e-13)
    assert np.all(u.u >= u0.min() - 1e-13) and np.all(u.u <= u0.max() + 1e-13)
    assert np.all(v.u >= v0.min() - 1e-13) and np.all(v.u <= v0.max() + 1e-13)
    # the data really evolved (the comparison is not vacuous)
    assert np.abs(u.u[-1] - u0).max() > 0.1


def test_eno2_is_not_monotone_so_the_comparison_check_can_fail():
    """The same random-data comparison flags ENO2 (not a monotone scheme): u0 <= v0 but u > v somewhere."""
    rng = np.random.default_rng(2)
    grid = Grid.line(64)
    u0 = rng.standard_normal(grid.shape)
    v0 = u0 + np.abs(rng.standard_normal(grid.shape)) * (rng.random(grid.shape) < 0.5)
    kw = dict(derivative="eno2", integrator="euler", max_dt=1e-5)
    u = solve_hj(grid, u0, [0.002], **kw)
    v = solve_hj(grid, v0, [0.002], **kw)
    assert u.steps == v.steps
    assert (u.u - v.u).max() > 0.1


def test_viscous_coefficient_scaling_is_equivalent():
    """nu * div(D grad u) with (nu, D) = (0.1, 3) equals (0.3, 1) to round-off; density w = const cancels."""
    grid = Grid.line(64, 0.0, 2 * np.pi)
    common = dict(boundary="periodic", derivative="eno2")
    s1 = solve_hj(grid, np.cos, [0.5], nu=0.1, D=3.0, density=5.0, **common)
    s2 = solve_hj(grid, np.cos, [0.5], nu=0.3, **common)
    np.testing.assert_allclose(s1.u, s2.u, rtol=0, atol=1e-13)
    s3 = solve_hj(grid, np.cos, [0.5], nu=0.1, **common)
    assert np.abs(s3.u - s2.u).max() > 1e-3


def test_centred_gradient_is_second_order():
    errors = []
    for n in (32, 64):
        grid = Grid((0.0, 0.0), (2 * np.pi, 2 * np.pi), (n, n + n // 4))
        u = grid.sample(lambda x, y: np.sin(x) * np.cos(2 * y))
        px, py = centred_gradient(grid, u, "periodic")
        x, y = grid.mesh()
        errors.append(max(np.abs(px - np.cos(x) * np.cos(2 * y)).max(), np.abs(py + 2 * np.sin(x) * np.sin(2 * y)).max()))
    assert 1.9 < np.log2(errors[0] / errors[1]) < 2.1


def test_solution_gradient_at_a_kink_is_the_burgers_shock_midpoint():
    """After the kink of u = Moreau envelope of cos(x - pi) (gamma* = 1), p = u_x jumps at x = pi from
    about +1 to -1 (a Burgers shock); in the cell centred on the shock the centred gradient is the
    midpoint (p_L + p_R)/2 = 0, and one cell away it is already half the jump."""
    grid = Grid.line(201, 0.0, 2 * np.pi)  # odd: a cell centre sits at pi
    sol = solve_hj(grid, lambda x: np.cos(x - np.pi), [2.0], boundary="periodic")
    (p,) = sol.gradient()
    i = int(np.argmin(np.abs(grid.centers() - np.pi)))
    assert p[i - 5] > 0.5 and p[i + 5] < -0.5
    assert abs(p[i]) < 1e-6 * p[i - 5]
    assert abs(p[i - 1]) > 0.3 * p[i - 5] and abs(p[i + 1]) > 0.3 * p[i - 5]


# -- bad input ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs, text",
    [
        (dict(hamiltonian="quadratik"), "hamiltonian: unknown value 'quadratik' (did you mean 'quadratic'?)"),
        (dict(numerical_hamiltonian="roe"), "numerical_hamiltonian: unknown value 'roe'"),
        (dict(derivative="eno3"), "derivative: unknown value 'eno3'"),
        (dict(integrator="rk4"), "integrator: unknown value 'rk4'"),
        (dict(cfl=1.5), "cfl: expected a number in (0, 1]"),
        (dict(cfl=0.0), "cfl: expected a number in (0, 1]"),
        (dict(nu=-0.1), "nu: expected a finite number >= 0"),
        (dict(a=-1.0), "a: expected values > 0"),
        (dict(a=np.ones(7)), "a: expected a number, a callable"),
        (dict(D=-1.0), "D: expected values >= 0"),
        (dict(density=0.0), "density: expected values > 0"),
        (dict(boundary="open"), "boundary kind: unknown value 'open'"),
        (dict(max_steps=0), "max_steps: expected a whole number >= 1"),
        (dict(max_steps=3), "max_steps: the solve needs more than 3 steps"),
        (dict(max_dt=-1.0), "max_dt: expected a number > 0"),
        (dict(times=[0.5, 0.2]), "times: expected strictly increasing"),
        (dict(u0=np.ones(5)), "u0: expected cell-centre values of shape (16,)"),
        (dict(u0=np.r_[np.ones(15), np.nan]), "u0: expected finite values, found"),
        (dict(a=np.r_[np.ones(15), np.inf]), "a: expected finite values"),
    ],
)
def test_bad_input_names_the_argument(kwargs, text):
    grid = Grid.line(16)
    args = dict(u0=np.sin(2 * np.pi * grid.centers()), times=[0.5])
    for key in ("u0", "times"):
        if key in kwargs:
            args[key] = kwargs.pop(key)
    with pytest.raises(SolverInputError) as err:
        solve_hj(grid, args["u0"], args["times"], **kwargs)
    assert text in str(err.value)


def test_bad_custom_hamiltonian_and_ghost_cells():
    with pytest.raises(SolverInputError, match="hamiltonian.function: expected a numba.njit-compiled function"):
        CompiledHamiltonian(lambda x, p: 0.0, 1.0)
    with pytest.raises(SolverInputError, match=r"hamiltonian.speed_bound: expected finite numbers > 0"):
        CompiledHamiltonian(_tilted_quadratic, -1.0)
    ham = CompiledHamiltonian(_tilted_quadratic, 2.0)
    with pytest.raises(SolverInputError, match="numerical_hamiltonian: 'godunov' is not available for a CompiledHamiltonian"):
        solve_hj(Grid.line(16), np.zeros(16), [0.1], hamiltonian=ham)
    with pytest.raises(SolverInputError, match="a: a CompiledHamiltonian carries its own x-dependence"):
        solve_hj(Grid.line(16), np.zeros(16), [0.1], hamiltonian=ham, numerical_hamiltonian="lax_friedrichs", a=2.0)
    with pytest.raises(SolverInputError, match="boundary kind: unknown value 'open'.*or 'extrapolate'"):
        solve_hj(Grid.line(16), np.zeros(16), [0.1], boundary=["open"])
    with pytest.raises(SolverInputError, match="derivative: 'weno5' needs 3 ghost cells per side, the grid has ghost = 2"):
        solve_hj(Grid.line(16, ghost=2), np.zeros(16), [0.1], derivative="weno5")
    with pytest.raises(SolverInputError, match="grid: expected a solvers.grid.uniform.Grid"):
        solve_hj(np.linspace(0, 1, 5), np.zeros(5), [0.1])


def test_blow_up_reports_step_time_and_cell():
    """A speed bound far below the true |dH/dp| makes Lax–Friedrichs unstable: it must stop with a location."""
    ham = CompiledHamiltonian(_tilted_quadratic, 1e-3)
    grid = Grid.line(32, 0.0, 2 * np.pi)
    with pytest.raises(BlowUpError) as err:
        solve_hj(grid, lambda x: 50.0 * np.sin(x), [1e6], hamiltonian=ham, numerical_hamiltonian="lax_friedrichs",
                 boundary="periodic", derivative="first_order", integrator="euler", max_steps=100_000)  # fmt: skip
    e = err.value
    assert e.step > 0 and e.time > 0 and len(e.cell) == 1 and not math.isfinite(e.value)
    assert f"at step {e.step}" in str(e) and f"in cell {e.cell}" in str(e)
