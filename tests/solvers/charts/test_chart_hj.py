"""solvers.charts.hamilton_jacobi: viscous HJ with a metric on 1-D/2-D charts (docs/theory.md §1)."""

import numpy as np
import pytest

from solvers.charts.hamilton_jacobi import (
    ChartDiscretisation,
    ChartHJSettings,
    godunov_quadratic_2d,
    godunov_quadratic_2d_reference,
    solve_chart_hj,
)
from solvers.grid import fill_ghosts
from solvers.errors import BlowUpError, SolverInputError
from solvers.grid import Grid
from solvers.hamilton_jacobi import solve_hj
from solvers.exact.hopf_cole import viscous_hj

S, Z, NU = 1.0, 2.0, 0.05


def _gram_pair(n_z, t):
    """The double well ½(s - z)² in the gram chart z (mobility 4z) and ½(s - r²)² in the flat chart r = sqrt(z)."""
    gz = Grid.line(n_z, 0.0, Z)
    uz = solve_chart_hj(gz, lambda z: 0.5 * (S - z) ** 2, [t], mobility=lambda z: 4.0 * z, nu=NU)
    return gz, uz.u[-1]


def test_gram_chart_and_flat_chart_agree_to_discretisation_accuracy():
    t = 0.3
    gr = Grid.line(400, 0.0, np.sqrt(Z))
    ref = solve_chart_hj(gr, lambda r: 0.5 * (S - r**2) ** 2, [t], mobility=lambda r: np.ones_like(r), nu=NU).u[-1]
    interior, whole = [], []
    for n in (100, 200):
        gz, uz = _gram_pair(n, t)
        err = uz - np.interp(np.sqrt(gz.centers()), gr.centers(), ref)
        interior.append(np.abs(err[gz.centers() >= 0.1]).max())
        whole.append(np.abs(err).sum() * gz.dx[0])
    # second order (ENO2) away from the degenerate end z = 0, still converging over the whole chart
    assert interior[1] < 2e-4
    assert np.log2(interior[0] / interior[1]) > 1.7
    assert whole[1] < 0.8 * whole[0]


def test_degenerate_mobility_does_not_shrink_the_step():
    grid = Grid.line(200, 0.0, Z)
    settings = ChartHJSettings(1, nu=NU)
    op = ChartDiscretisation.build(grid, settings, lambda z: 4.0 * z)
    # the density 1/(2 sqrt z) is infinite at z = 0, yet the viscous rate stays below that of the
    # bounded mobility max(4z) = 4Z: K = w A = 2 sqrt(z) vanishes on the degenerate face
    assert op.viscous_rate <= 2.0 * NU * 4.0 * Z / grid.dx[0] ** 2
    assert op.kface[0, 0].reshape(grid.padded_shape)[grid.ghost - 1] < 1e-4 * op.kface[0, 0].max()


def _quadratic_exact(A, Q, nu, x, y, t):
    """u0 = ½ xᵀQx: u = ½ xᵀ Q (I + tAQ)^{-1} x + ν log det(I + tAQ) for u_t + ½∇uᵀA∇u = ν div(A∇u)."""
    P = Q @ np.linalg.inv(np.eye(2) + t * A @ Q)
    c = nu * np.log(np.linalg.det(np.eye(2) + t * A @ Q))
    return 0.5 * (P[0, 0] * x * x + 2 * P[0, 1] * x * y + P[1, 1] * y * y) + c


@pytest.mark.parametrize("num", ["godunov", "lax_friedrichs"])
def test_full_tensor_metric_converges_to_exact_quadratic_solution(num):
    A = np.array([[1.0, 0.6], [0.6, 0.8]])
    Q = np.array([[1.0, 0.3], [0.3, 2.0]])
    nu, t = 0.02, 0.2

    def mob(x, y):
        return (A[0, 0] + 0 * x, A[0, 1] + 0 * x, A[1, 1] + 0 * x)

    errors = []
    for n in (20, 40):
        g = Grid((-1, -1), (1, 1), (n, n))
        s = solve_chart_hj(g, lambda x, y: _quadratic_exact(A, Q, nu, x, y, 0.0), [t], mobility=mob, nu=nu,
                           derivative="first_order", numerical_hamiltonian=num, boundary="outflow")
        X, Y = g.mesh()
        inner = (np.abs(X) < 0.4) & (np.abs(Y) < 0.4)
        errors.append(np.abs(s.u[-1] - _quadratic_exact(A, Q, nu, X, Y, t))[inner].max())
    assert np.log2(errors[0] / errors[1]) > 0.85
    assert errors[1] < 0.02
    g = Grid((-1, -1), (1, 1), (20, 20))
    s = solve_chart_hj(g, lambda x, y: _quadratic_exact(A, Q, nu, x, y, 0.0), [t], mobility=mob, nu=nu,
                       derivative="eno2", numerical_hamiltonian=num, boundary="outflow")
    X, Y = g.mesh()
    inner = (np.abs(X) < 0.4) & (np.abs(Y) < 0.4)
    assert np.abs(s.u[-1] - _quadratic_exact(A, Q, nu, X, Y, t))[inner].max() < 1e-6  # ENO2 is exact on quadratics


def _brute_godunov(a, b, c, m0, q0, m1, q1, n=2001):
    """Nested ext by brute force: a dense p_1 grid inside, a bounded scalar search outside."""
    from scipy.optimize import minimize_scalar

    p1 = np.linspace(min(m1, q1), max(m1, q1), n)

    def inner(p0):
        H = 0.5 * (a * p0 * p0 + 2 * b * p0 * p1 + c * p1 * p1)
        return H.min() if m1 <= q1 else H.max()

    lo, hi = min(m0, q0), max(m0, q0)
    sign = 1.0 if m0 <= q0 else -1.0
    res = minimize_scalar(lambda p0: sign * inner(p0), bounds=(lo, hi), method="bounded", options={"xatol": 1e-10})
    return sign * min(sign * inner(lo), sign * inner(hi), res.fun)


def test_godunov_2d_equals_nested_ext_and_reference():
    rng = np.random.default_rng(3)
    for trial in range(150):
        L = rng.normal(size=(2, 2))
        A = L @ L.T if trial % 5 else np.diag([rng.uniform(0, 2), 0.0])  # include a degenerate metric
        m0, q0, m1, q1 = rng.normal(scale=2.0, size=4)
        compiled = godunov_quadratic_2d(A[0, 0], A[0, 1], A[1, 1], m0, q0, m1, q1)
        brute = _brute_godunov(A[0, 0], A[0, 1], A[1, 1], m0, q0, m1, q1)
        ref = godunov_quadratic_2d_reference(A[0, 0], A[0, 1], A[1, 1], m0, q0, m1, q1)
        assert compiled == pytest.approx(float(ref), abs=1e-12)
        assert compiled == pytest.approx(brute, abs=3e-5 * (1 + abs(brute)))  # p_1 grid error O(h²)
        # consistency and monotonicity (non-decreasing in p⁻, non-increasing in p⁺)
        assert godunov_quadratic_2d(A[0, 0], A[0, 1], A[1, 1], m0, m0, m1, m1) == pytest.approx(
            0.5 * np.array([m0, m1]) @ A @ np.array([m0, m1]), abs=1e-12)
        h = 1e-3
        assert godunov_quadratic_2d(A[0, 0], A[0, 1], A[1, 1], m0 + h, q0, m1, q1) >= compiled - 1e-12
        assert godunov_quadratic_2d(A[0, 0], A[0, 1], A[1, 1], m0, q0, m1, q1 + h) <= compiled + 1e-12


@pytest.mark.parametrize("ndim", [1, 2])
@pytest.mark.parametrize("num", ["godunov", "lax_friedrichs"])
@pytest.mark.parametrize("deriv", ["first_order", "eno2", "weno5"])
def test_stage_kernel_matches_numpy_reference(ndim, num, deriv):
    rng = np.random.default_rng(ndim * 10 + len(num) + len(deriv))
    if ndim == 1:
        grid = Grid.line(17, 0.0, 1.0)

        def mob(x):
            return 1.0 + 0.5 * np.sin(3 * x)
    else:
        grid = Grid((0.0, 0.0), (1.0, 2.0), (9, 11))

        def mob(x, y):
            return (1.0 + 0.3 * np.sin(x), 0.4 * np.cos(x + y), 1.2 + 0.2 * y)

    settings = ChartHJSettings(ndim, num, deriv, nu=0.07, boundary="periodic")
    op = ChartDiscretisation.build(grid, settings, mob)
    q = fill_ghosts(grid.pad(rng.normal(size=grid.shape)), grid.ghost, settings.boundary)
    out = grid.zeros()
    dt = 1e-3
    rate = op.stage(q, q, out, 0.0, 1.0, dt)
    rhs, rate_ref = op.rhs_reference(q)
    np.testing.assert_allclose(out[grid.interior], q[grid.interior] + dt * rhs, rtol=1e-12, atol=1e-12)
    assert rate == pytest.approx(rate_ref, rel=1e-12)
    assert op.hyperbolic_rate(q) == pytest.approx(rate_ref, rel=1e-12)


def test_diagonal_metric_agrees_with_the_grid_hj_solver():
    """For a diagonal positive mobility the same equation is solve_hj(a = D = diag A, density = w)."""

    def a0(x, y):
        return 1.0 + 0.5 * np.sin(x)

    def a1(x, y):
        return 1.0 + 0.3 * np.cos(y)

    def w(x, y):
        return 1.0 / np.sqrt(a0(x, y) * a1(x, y))

    def u0(x, y):
        return np.cos(x) * np.sin(y)

    diffs = []
    for n in (24, 48):
        g = Grid((0, 0), (2 * np.pi, 2 * np.pi), (n, n))
        chart = solve_chart_hj(g, u0, [0.3], mobility=lambda x, y: (a0(x, y), 0 * x, a1(x, y)), nu=0.1, boundary="periodic")
        aa = np.stack([g.sample(a0), g.sample(a1)])
        grid = solve_hj(g, u0, [0.3], a=aa, D=aa, density=g.sample(w), nu=0.1, boundary="periodic")
        diffs.append(np.abs(chart.u[-1] - grid.u[-1]).max())
    assert diffs[1] < 2e-3
    assert np.log2(diffs[0] / diffs[1]) > 1.5


def test_bad_mobility_and_density_name_the_point():
    grid = Grid.line(10, -1.0, 1.0)
    with pytest.raises(SolverInputError, match=r"not positive semi-definite at the cell centre x = \(-0\.9\)"):
        solve_chart_hj(grid, lambda x: x, [0.1], mobility=lambda x: x)
    g2 = Grid((0, 0), (1, 1), (4, 4))
    with pytest.raises(SolverInputError, match=r"not positive semi-definite .* x = \(0\.125, 0\.125\)"):
        solve_chart_hj(g2, lambda x, y: x, [0.1], mobility=lambda x, y: (1 + 0 * x, 2 + 0 * x, 1 + 0 * x))
    with pytest.raises(SolverInputError, match="mobility: on a 2-D chart expected"):
        solve_chart_hj(g2, lambda x, y: x, [0.1], mobility=lambda x, y: np.ones((3, 4, 4)))
    with pytest.raises(SolverInputError, match=r"mobility: A00 is nan at the cell centre x = \(-0\.9\)"):
        solve_chart_hj(grid, lambda x: x, [0.1], mobility=lambda x: np.sqrt(x + 0.85))
    with pytest.raises(SolverInputError, match="density: the cell average of w"):
        solve_chart_hj(grid, lambda x: x, [0.1], mobility=lambda x: 1 + 0 * x, density=lambda x: x, nu=0.1)
    with pytest.raises(SolverInputError, match="numerical_hamiltonian: unknown value 'roe'"):
        solve_chart_hj(grid, lambda x: x, [0.1], mobility=lambda x: 1 + 0 * x, numerical_hamiltonian="roe")


def test_an_inviscid_solve_never_evaluates_the_density():
    # w enters only the viscous term ν (1/w) div(w A ∇u): at ν = 0 the solution is bitwise the same for any w, and a
    # density that cannot be evaluated is not an error (at ν > 0 it is: the test above)
    grid = Grid.line(64, -1.0, 2.0)
    times = np.linspace(0.0, 0.4, 9)

    def u0(x):
        return np.cos(2 * x) + 0.1 * x

    def a(x):
        return 1.0 + 0.3 * np.sin(x)

    def never(*x):
        raise AssertionError("the density was evaluated")

    default = solve_chart_hj(grid, u0, times, mobility=a, boundary="outflow")
    for density in (never, lambda x: 2.0 + x ** 2):
        other = solve_chart_hj(grid, u0, times, mobility=a, density=density, boundary="outflow")
        np.testing.assert_array_equal(other.u, default.u)
        assert other.steps == default.steps
    viscous = [solve_chart_hj(grid, u0, times, mobility=a, density=w, nu=0.05, boundary="outflow").u
               for w in (None, lambda x: 2.0 + x ** 2)]
    assert np.max(np.abs(viscous[0] - viscous[1])) > 1e-6   # ... and the viscous solve reads it


@pytest.mark.parametrize("num", ["godunov", "lax_friedrichs"])
@pytest.mark.parametrize("deriv, order, bound", [("first_order", 0.85, 0.015), ("eno2", 1.5, 3e-3)])
def test_variable_full_tensor_metric_of_sheared_coordinates_matches_hopf_cole(num, deriv, order, bound):
    """Flat torus in sheared coordinates y = (x1, x2 + φ(x1)): A = [[1, -φ'], [-φ', 1 + φ'²]], det A = 1.

    The exact solution in y is separable (Hopf–Cole on each axis); in x the data and the metric are
    not, so this checks the off-diagonal Godunov Hamiltonian and the cross-diffusion together.
    """
    nu, t, eps = 0.05, 0.1, 0.25

    def phi(x1):
        return eps * np.sin(2 * np.pi * x1) / (2 * np.pi)

    def dphi(x1):
        return eps * np.cos(2 * np.pi * x1)

    def f(s):
        return 0.3 * np.cos(2 * np.pi * s)

    def g(s):
        return 0.2 * np.sin(2 * np.pi * s)

    def mob(x1, x2):
        d = dphi(x1)
        return (1.0 + 0 * x2, -d + 0 * x2, 1.0 + d * d + 0 * x2)

    errors = []
    for n in (24, 48):
        grid = Grid((0, 0), (1, 1), (n, n))
        sol = solve_chart_hj(grid, lambda x1, x2: f(x1) + g(x2 + phi(x1)), [t], mobility=mob, nu=nu,
                             boundary="periodic", derivative=deriv, numerical_hamiltonian=num)
        X1, X2 = grid.mesh()
        exact = viscous_hj(f, X1, t, nu, period=1.0) + viscous_hj(g, (X2 + phi(X1)) % 1.0, t, nu, period=1.0)
        errors.append(np.abs(sol.u[-1] - exact).max())
    assert errors[1] < bound  # measured: 0.0115 / 0.0131 (first order), 0.0022 (ENO2) at n = 48
    assert np.log2(errors[0] / errors[1]) > order


# -- the compiled time loop against the Python reference loop --------------------------------------
@pytest.mark.parametrize(
    "ndim, options",
    [
        (1, dict(boundary="outflow")),
        (1, dict(boundary="outflow", nu=0.02, integrator="ssprk2", derivative="weno5")),
        (1, dict(boundary="periodic", numerical_hamiltonian="lax_friedrichs", integrator="euler",
                 derivative="first_order", max_dt=1e-3)),
        (2, dict(boundary="periodic", nu=0.03)),
        (2, dict(boundary="outflow", numerical_hamiltonian="lax_friedrichs")),
    ],
)
def test_compiled_time_loop_is_bitwise_the_python_loop(ndim, options):
    if ndim == 1:
        grid = Grid((-1.0,), (1.0,), (97,), 3)
        u0, mob = (lambda x: np.cos(3 * x) + 0.3 * x), (lambda x: 1.0 + 0.5 * x**2)
    else:
        grid = Grid((-1.0, -1.0), (1.0, 1.0), (24, 30), 3)
        u0 = lambda x, y: np.cos(3 * x) * np.sin(2 * y)  # noqa: E731
        mob = lambda x, y: (1.0 + 0 * x, 0.3 + 0 * x, 1.0 + 0.2 * y**2)  # noqa: E731
    times = [0.0, 0.05, 0.13, 0.2]  # the first at t0: its snapshot is u0
    fast = solve_chart_hj(grid, u0, times, mobility=mob, **options)
    ref = solve_chart_hj(grid, u0, times, mobility=mob, loop="python", **options)
    assert fast.steps == ref.steps > 10
    assert fast.u.shape == ref.u.shape == (4, *grid.shape)
    np.testing.assert_array_equal(fast.u, ref.u)
    assert not fast.u.flags.writeable


def test_compiled_time_loop_errors_are_the_python_loops():
    grid = Grid((-1.0,), (1.0,), (41,), 3)
    messages = []
    for loop in ("compiled", "python"):
        with pytest.raises(BlowUpError) as blow:   # ½ a p² overflows in the first stage
            solve_chart_hj(grid, lambda x: 1e160 * np.cos(3 * x), [0.1], mobility=lambda x: 1 + 0 * x, loop=loop)
        with pytest.raises(SolverInputError, match="max_steps") as limit:
            solve_chart_hj(grid, np.cos, [1.0], mobility=lambda x: 1 + 0 * x, max_steps=3, loop=loop)
        messages.append((str(blow.value), blow.value.step, blow.value.cell, str(limit.value)))
    assert messages[0] == messages[1]
    assert messages[0][1] == 1
    with pytest.raises(SolverInputError, match="loop: expected one of compiled, python"):
        solve_chart_hj(grid, np.cos, [0.1], mobility=lambda x: 1 + 0 * x, loop="fortran")


@pytest.mark.parametrize("num", ["godunov", "lax_friedrichs"])
@pytest.mark.parametrize("deriv", ["first_order", "eno2", "weno5"])
@pytest.mark.parametrize("nu", [0.0, 0.07])
def test_1d_kernels_are_bitwise_the_general_kernels(num, deriv, nu):
    from solvers.charts.hamilton_jacobi import chart_rate_kernel_1d, chart_stage_kernel_1d

    rng = np.random.default_rng(len(num) + 3 * len(deriv))
    grid = Grid.line(33, 0.0, 1.0)
    settings = ChartHJSettings(1, num, deriv, nu=nu, boundary="outflow")
    op = ChartDiscretisation.build(grid, settings, lambda x: 1.0 + 0.5 * np.sin(3 * x))
    q = fill_ghosts(grid.pad(rng.normal(size=grid.shape)), grid.ghost, settings.boundary)
    q0 = fill_ghosts(grid.pad(rng.normal(size=grid.shape)), grid.ghost, settings.boundary)
    general, special = grid.zeros(), grid.zeros()
    rate = op.stage(q, q0, general, 0.75, 0.25, 1e-3)
    rate_1d = chart_stage_kernel_1d(q, q0, special, 0.75, 0.25, 1e-3, grid.ghost, float(grid.dx[0]), *op.codes,
                                    op.mob[0], nu, op.kface[0, 0], op.inv_w)
    np.testing.assert_array_equal(special, general)
    assert rate_1d == rate
    assert chart_rate_kernel_1d(q, grid.ghost, float(grid.dx[0]), op.codes[1], op.mob[0]) == op.hyperbolic_rate(q)
    q[grid.ghost + 5] = np.nan
    assert np.isnan(chart_rate_kernel_1d(q, grid.ghost, float(grid.dx[0]), op.codes[1], op.mob[0]))
