"""solvers.charts.continuity: rho_t + div(rho v) = nu div(D grad rho) with sign-changing face velocities."""

import math

import numpy as np
import pytest
from scipy.special import erf

from solvers.grid import fill_ghosts
from solvers.charts.continuity import (
    _parse_boundary, advective_rate_1d, advective_rate_2d, advective_rate_reference, face_values, solve_continuity,
    stage_1d, stage_2d, stage_reference, stage_times,
)
from solvers.errors import BlowUpError, SolverInputError
from solvers.grid import Grid
from solvers.conservation.reconstruction import LIMITERS, MUSCL


def _orders(errors):
    e = np.asarray(errors)
    return np.log2(e[:-1] / e[1:])


# -- kernels against the NumPy reference -----------------------------------------------------------------------------
@pytest.mark.parametrize("boundary", ["periodic", "wall", ["outflow", ("dirichlet", 0.3)]])
@pytest.mark.parametrize("ndim", [1, 2])
def test_stage_kernels_match_numpy_reference(ndim, boundary):
    rng = np.random.default_rng(3)
    grid = Grid((-1.0,) * ndim, (1.0,) * ndim, (13, 11)[:ndim])
    spec = boundary if isinstance(boundary, str) or ndim == 1 else [boundary[0], ("dirichlet", 0.3)]
    if ndim == 1 and not isinstance(boundary, str):
        spec = [tuple(boundary)]
    bc, walls = _parse_boundary(spec, ndim)
    velocity = tuple(rng.normal(size=grid.cells[:k] + (grid.cells[k] + 1,) + grid.cells[k + 1:]) for k in range(ndim))
    diffusion = tuple(rng.uniform(0.0, 0.3, size=v.shape) for v in velocity)
    qp = grid.pad(rng.uniform(0.0, 2.0, grid.shape))
    fill_ghosts(qp, grid.ghost, bc)
    q0 = grid.pad(rng.uniform(0.0, 2.0, grid.shape))
    for recon, lim in [("first_order", "minmod")] + [("muscl", name) for name in LIMITERS]:
        code = MUSCL if recon == "muscl" else 0
        out = grid.zeros()
        if ndim == 1:
            low = stage_1d(qp, q0, out, 0.25, 0.75, 0.013, grid.ghost, grid.dx[0], velocity[0], diffusion[0], code, LIMITERS[lim])
        else:
            low = stage_2d(qp, q0, out, 0.25, 0.75, 0.013, grid.ghost, grid.dx[0], grid.dx[1], velocity[0], velocity[1],
                           diffusion[0], diffusion[1], code, LIMITERS[lim], np.zeros(grid.cells[1]), np.zeros(grid.cells[1]))
        ref = stage_reference(qp, q0, 0.25, 0.75, 0.013, grid, velocity, diffusion, recon, lim)
        np.testing.assert_allclose(out[grid.interior], ref, rtol=1e-13, atol=1e-14)
        assert low == pytest.approx(ref.min(), rel=1e-13)
    rate = advective_rate_1d(velocity[0], grid.dx[0]) if ndim == 1 else advective_rate_2d(*velocity, *grid.dx)
    assert rate == pytest.approx(advective_rate_reference(grid, velocity), rel=1e-14)


def test_stage_times_of_the_ssp_methods():
    np.testing.assert_allclose(stage_times("euler"), [0.0])
    np.testing.assert_allclose(stage_times("ssprk2"), [0.0, 1.0])
    np.testing.assert_allclose(stage_times("ssprk3"), [0.0, 1.0, 0.5])


# -- mass and positivity ---------------------------------------------------------------------------------------------
def _rough_data(grid, rng):
    rho = rng.uniform(0.0, 1.0, grid.shape) * (rng.uniform(size=grid.shape) < 0.5)  # half the cells empty
    return rho


@pytest.mark.parametrize("boundary", ["periodic", "wall"])
@pytest.mark.parametrize("recon, cfl", [("first_order", 1.0), ("muscl", 0.5)])
def test_mass_conserved_and_density_stays_non_negative(recon, cfl, boundary):
    rng = np.random.default_rng(7)
    for grid, field in [
        (Grid.line(80, 0.0, 1.0), lambda x: 3.0 * np.sin(6 * np.pi * x) + 0.5),
        (Grid((0.0, 0.0), (1.0, 1.0), (32, 28)),
         lambda x, y: (np.sin(4 * np.pi * y) * np.cos(2 * np.pi * x) + 0.3, -np.cos(4 * np.pi * x) * np.sin(2 * np.pi * y))),
    ]:
        rho0 = _rough_data(grid, rng)
        velocity = face_values(grid, field)
        for integrator in ("euler", "ssprk2", "ssprk3"):
            sol = solve_continuity(grid, rho0, [0.05, 0.2], velocity, boundary=boundary, reconstruction=recon,
                                   limiter="mc", integrator=integrator, cfl=cfl, nu=1e-3 if integrator == "ssprk3" else 0.0)
            m0 = grid.integrate(rho0)
            np.testing.assert_allclose(sol.mass, m0, rtol=1e-13)
            assert sol.min_value >= -1e-15 * rho0.max(), (grid.ndim, integrator, sol.min_value)


def test_positivity_bound_is_sharp_muscl_beyond_half_goes_negative():
    """The same data at CFL 1 with MUSCL and forward Euler does produce negative values: the CFL-1/2 bound matters."""
    rng = np.random.default_rng(7)
    grid = Grid.line(80, 0.0, 1.0)
    velocity = face_values(grid, lambda x: 3.0 * np.sin(6 * np.pi * x) + 0.5)
    rho0 = _rough_data(grid, rng)
    bad = solve_continuity(grid, rho0, [0.2], velocity, reconstruction="muscl", limiter="mc", integrator="euler", cfl=1.0)
    good = solve_continuity(grid, rho0, [0.2], velocity, reconstruction="muscl", limiter="mc", integrator="euler", cfl=0.5)
    assert bad.min_value < -1e-3 and good.min_value >= 0.0


# -- translation: observed orders -------------------------------------------------------------------------------------
def _translation_errors(recon, limiter, cells, ndim=1):
    speed = (1.0, -0.5)[:ndim]
    t = 0.5

    def profile(*x):
        return 1.0 + 0.5 * np.prod([np.sin(2 * np.pi * xi) for xi in x], axis=0)

    errors = []
    for n in cells:
        grid = Grid((0.0,) * ndim, (1.0,) * ndim, (n,) * ndim)
        rho0 = grid.cell_averages(profile)
        sol = solve_continuity(grid, rho0, [t], face_values(grid, lambda *x: speed), boundary="periodic",
                               reconstruction=recon, limiter=limiter, integrator="ssprk2")
        exact = grid.cell_averages(lambda *x: profile(*[xi - s * t for xi, s in zip(x, speed)]))
        errors.append(np.abs(sol.final - exact).mean())
    return errors


def test_translation_first_order_and_muscl_orders():
    e1 = _translation_errors("first_order", "minmod", [64, 128, 256, 512])
    e2 = _translation_errors("muscl", "mc", [64, 128, 256, 512])
    o1, o2 = _orders(e1), _orders(e2)
    print("translation L1 errors first order", e1, "orders", o1)
    print("translation L1 errors MUSCL-mc", e2, "orders", o2)
    assert np.all(np.abs(o1 - 1.0) < 0.1)
    assert o2[-1] > 1.8 and np.all(o2 > 1.6)
    assert e2[-1] < e1[-1] / 50


def test_translation_2d_muscl_order():
    e = _translation_errors("muscl", "van_leer", [32, 64, 128], ndim=2)
    o = _orders(e)
    print("2-D translation L1 errors MUSCL-van Leer", e, "orders", o)
    assert o[-1] > 1.7


# -- Ornstein–Uhlenbeck: v = -k x with diffusion nu -------------------------------------------------------------------
K, NU, M0, S0 = 1.5, 0.05, 0.6, 0.15


def _ou_exact(t):
    mean = M0 * math.exp(-K * t)
    var = S0**2 * math.exp(-2 * K * t) + NU / K * (1.0 - math.exp(-2 * K * t))
    return mean, var


def _gaussian_cells(grid, mean, var):
    """Exact cell averages of N(mean, var) on a 1-D grid."""
    f = grid.faces(0)
    cdf = 0.5 * (1.0 + erf((f - mean) / math.sqrt(2.0 * var)))
    return np.diff(cdf) / grid.dx[0]


def _ou_errors(recon, cells, t_end=0.6):
    errors = []
    for n in cells:
        grid = Grid.line(n, -2.0, 2.0)
        rho0 = _gaussian_cells(grid, *_ou_exact(0.0))
        sol = solve_continuity(grid, rho0, [t_end], face_values(grid, lambda x: -K * x), nu=NU,
                               reconstruction=recon, limiter="mc", integrator="ssprk2")
        errors.append(np.abs(sol.final - _gaussian_cells(grid, *_ou_exact(t_end))).sum() * grid.dx[0])
    return errors


def test_ornstein_uhlenbeck_time_dependent_gaussian_orders():
    e1 = _ou_errors("first_order", [100, 200, 400, 800])
    e2 = _ou_errors("muscl", [100, 200, 400, 800])
    o1, o2 = _orders(e1), _orders(e2)
    print("OU L1 errors first order", e1, "orders", o1)
    print("OU L1 errors MUSCL", e2, "orders", o2)
    # asymptotic orders (the coarsest grid has ~4 cells per initial standard deviation)
    assert abs(o1[-1] - 1.0) < 0.08 and o1[-1] > o1[0]
    assert o2[-1] > 1.85
    assert e2[-1] < 1e-4


def test_ornstein_uhlenbeck_reaches_the_stationary_gaussian():
    grid = Grid.line(200, -2.0, 2.0)
    rho0 = _gaussian_cells(grid, *_ou_exact(0.0))
    t_end = 8.0  # the variance transient e^{-2 k t} = 4e-11 is gone; the mean still decays like e^{-k t} = 6e-6
    sol = solve_continuity(grid, rho0, [t_end], face_values(grid, lambda x: -K * x), nu=NU,
                           reconstruction="muscl", limiter="mc")
    x = grid.centers(0)
    mass = sol.final.sum() * grid.dx[0]
    mean = (x * sol.final).sum() * grid.dx[0]
    var = ((x - mean) ** 2 * sol.final).sum() * grid.dx[0] - grid.dx[0] ** 2 / 12  # Sheppard's correction
    print("stationary OU: mean", mean, "variance", var, "exact", NU / K)
    assert mass == pytest.approx(1.0, rel=1e-12)
    assert mean == pytest.approx(_ou_exact(t_end)[0], rel=1e-2)
    assert var == pytest.approx(NU / K, rel=2e-3)
    stationary = _gaussian_cells(grid, 0.0, NU / K)
    l1 = np.abs(sol.final - stationary).sum() * grid.dx[0]
    print("stationary OU: L1 distance to N(0, nu/k)", l1)
    assert l1 < 2e-3


def test_ornstein_uhlenbeck_2d_anisotropic():
    """Product of two OU processes (k = 1.5 and 0.5) on a 2-D grid: mean and covariance against the exact ones."""
    k = np.array([1.5, 0.5])
    grid = Grid((-2.0, -2.0), (2.0, 2.0), (80, 80))
    m0, s0, t = np.array([0.5, -0.4]), 0.2, 0.8
    exact_mean = m0 * np.exp(-k * t)
    exact_var = s0**2 * np.exp(-2 * k * t) + NU / k * (1 - np.exp(-2 * k * t))
    rho0 = grid.cell_averages(lambda x, y: np.exp(-((x - m0[0]) ** 2 + (y - m0[1]) ** 2) / (2 * s0**2)) / (2 * np.pi * s0**2))
    sol = solve_continuity(grid, rho0, [t], face_values(grid, lambda x, y: (-k[0] * x, -k[1] * y)), nu=NU,
                           reconstruction="muscl", limiter="mc")
    X, Y = grid.mesh()
    w = sol.final * grid.cell_volume
    mean = np.array([(X * w).sum(), (Y * w).sum()])
    var = np.array([((X - mean[0]) ** 2 * w).sum(), ((Y - mean[1]) ** 2 * w).sum()]) - grid.dx[0] ** 2 / 12
    cov = ((X - mean[0]) * (Y - mean[1]) * w).sum()
    print("2-D OU mean", mean, exact_mean, "var", var, exact_var, "cov", cov)
    np.testing.assert_allclose(mean, exact_mean, atol=2e-3)
    np.testing.assert_allclose(var, exact_var, rtol=1e-2)
    assert abs(cov) < 1e-4


def test_variable_diffusivity_fokker_planck_stationary_density():
    """v = -D U' with D(x) = 1 + sin(x)/2 (a callable) has the stationary density e^{-U}/Z for any D > 0.

    U = x²/(2 s²) + x⁴/4 on [-2.5, 2.5] with walls.  Started from the cell averages of e^{-U}/Z, the solution
    drifts towards the discrete steady state, which differs from them by O(h) (first order) and O(h²)
    (MUSCL); by t = 2 (relaxation rate >= 1) most of that difference has built up.
    """
    s2 = 0.5

    def D(x):
        return 1.0 + 0.5 * np.sin(x)

    def target(x):
        return np.exp(-(x**2 / (2 * s2) + x**4 / 4))

    errors = {"first_order": [], "muscl": []}
    for n in (32, 64, 128):
        grid = Grid.line(n, -2.5, 2.5)
        exact = grid.cell_averages(target)
        exact /= grid.integrate(exact)
        velocity = face_values(grid, lambda x: -D(x) * (x / s2 + x**3))
        for recon in errors:
            sol = solve_continuity(grid, exact, [2.0], velocity, nu=1.0, D=D, reconstruction=recon,
                                   limiter="mc")
            errors[recon].append(np.abs(sol.final - exact).sum() * grid.dx[0])
        if n == 32:  # D as face arrays gives the same solve as the callable
            same = solve_continuity(grid, exact, [2.0], velocity, nu=1.0, D=face_values(grid, lambda x: D(x)),
                                    reconstruction=recon, limiter="mc")
            np.testing.assert_array_equal(same.final, sol.final)
    o1, o2 = _orders(errors["first_order"]), _orders(errors["muscl"])
    print("variable-D stationary density: first order", errors["first_order"], o1, "MUSCL", errors["muscl"], o2)
    assert abs(o1[-1] - 1.0) < 0.1
    assert o2[-1] > 1.8


# -- sign-changing velocities: converging and diverging flows --------------------------------------------------------
@pytest.mark.parametrize("direction", [-1.0, 1.0])
def test_converging_and_diverging_flow_without_oscillations(direction):
    """v = ±x on a box of height 1 on [-1/2, 1/2]: the exact solution is the box on [-e^{±t}/2, e^{±t}/2] of height e^{∓t}.

    With forward Euler the scheme's weights are non-negative and sum to ``1 - dt (v_{i+1/2} - v_{i-1/2})/dx = 1 ∓ dt``,
    so ``0 <= rho <= (1 ∓ dt)^n <= e^{∓t}``: no overshoot, no undershoot; the L1 error must shrink under refinement.
    (SSP-RK2's factor per step is ``1 ∓ dt + dt²/2``, which may exceed ``e^{∓dt}``.)
    """
    t = 0.5
    scale = math.exp(direction * t)
    for recon in ("first_order", "muscl"):
        errors = []
        for n in (100, 200, 400):
            grid = Grid.line(n, -2.0, 2.0)
            f = grid.faces(0)

            def box(width, height):
                return height * np.clip(np.minimum(f[1:], width / 2) - np.maximum(f[:-1], -width / 2), 0.0, None) / grid.dx[0]

            sol = solve_continuity(grid, box(1.0, 1.0), [t], face_values(grid, lambda x: direction * x),
                                   reconstruction=recon, limiter="minmod", integrator="euler")
            exact = box(scale, 1.0 / scale)
            assert sol.min_value >= 0.0
            assert sol.final.max() <= (1.0 / scale) * (1 + 1e-12), (recon, n, sol.final.max())
            errors.append(np.abs(sol.final - exact).sum() * grid.dx[0])
            # one plateau: no interior local extremum other than the top of the box
            d = np.diff(sol.final)
            sign_changes = np.sum(np.diff(np.sign(d[np.abs(d) > 1e-12])) != 0)
            assert sign_changes <= 1, (recon, n, sign_changes)
        print("flow", "diverging" if direction > 0 else "converging", recon, "L1 errors", errors, "orders", _orders(errors))
        assert np.all(np.diff(errors) < 0)
        assert _orders(errors)[-1] > 0.4


# -- velocity from a callback (per step / per stage) -----------------------------------------------------------------
def test_time_dependent_velocity_per_stage_keeps_second_order():
    """u(t) = 1 + cos(2 pi t)/2, uniform: per-stage updates keep SSP-RK2's order, per-step updates are first order."""
    def profile(x):
        return 1.0 + 0.5 * np.sin(2 * np.pi * x)

    t = 0.4
    shift = t + math.sin(2 * math.pi * t) / (4 * math.pi)
    errors = {"step": [], "stage": []}
    for n in (64, 128, 256, 512):
        grid = Grid.line(n, 0.0, 1.0)
        ones = np.ones(n + 1)
        calls = []

        def velocity(time, rho):
            calls.append(time)
            assert not rho.flags.writeable and rho.shape == grid.shape
            return (ones * (1.0 + 0.5 * math.cos(2 * math.pi * time)),)

        exact = grid.cell_averages(lambda x: profile(x - shift))
        for mode in errors:
            calls.clear()
            sol = solve_continuity(grid, grid.cell_averages(profile), [t], velocity, boundary="periodic",
                                   reconstruction="muscl", limiter="mc", integrator="ssprk2", velocity_update=mode)
            assert len(calls) == sol.steps * (2 if mode == "stage" else 1)
            errors[mode].append(np.abs(sol.final - exact).mean())
    o_step, o_stage = _orders(errors["step"]), _orders(errors["stage"])
    print("time-dependent velocity: per step", errors["step"], o_step, "per stage", errors["stage"], o_stage)
    assert abs(o_step[-1] - 1.0) < 0.15
    assert o_stage[-1] > 1.8


def test_density_dependent_velocity_callback_moves_the_mean():
    """v = -(x - c) with c the current mean: the mean relaxes like dc/dt = -(c - c) = 0 -> stays; v = -x + <x>/2
    gives d<x>/dt = -<x>/2, an exponential decay the solve must reproduce."""
    grid = Grid.line(400, -3.0, 3.0)
    x, xf = grid.centers(0), grid.faces(0)

    def velocity(t, rho):
        mean = (x * rho).sum() / rho.sum()
        return (-xf + 0.5 * mean,)

    rho0 = _gaussian_cells(grid, 0.8, 0.1)
    sol = solve_continuity(grid, rho0, [0.5, 1.0], velocity, reconstruction="muscl", limiter="mc", velocity_update="stage")
    means = (sol.snapshots * x).sum(axis=1) / sol.snapshots.sum(axis=1)
    np.testing.assert_allclose(means, 0.8 * np.exp(-0.5 * np.array([0.5, 1.0])), rtol=2e-3)


# -- bad input ---------------------------------------------------------------------------------------------------------
def test_bad_input_is_named():
    grid = Grid.line(10, -1.0, 1.0)
    rho0 = np.ones(10)
    v = face_values(grid, lambda x: -x)
    with pytest.raises(SolverInputError, match=r"velocity\[0\]: expected values on the faces normal to axis 0, shape \(11,\), found \(10,\)"):
        solve_continuity(grid, rho0, [0.1], (np.zeros(10),))
    with pytest.raises(SolverInputError, match="periodic, so its first and last faces are the same face"):
        solve_continuity(grid, rho0, [0.1], v, boundary="periodic")
    with pytest.raises(SolverInputError, match="'reflecting' .* use 'wall'"):
        solve_continuity(grid, rho0, [0.1], v, boundary="reflecting")
    with pytest.raises(SolverInputError, match=r"D\[0\]: expected a diffusivity >= 0 on every face, found -1.0"):
        solve_continuity(grid, rho0, [0.1], v, nu=0.1, D=-1.0)
    with pytest.raises(SolverInputError, match="reconstruction: unknown value 'weno5'"):
        solve_continuity(grid, rho0, [0.1], v, reconstruction="weno5")
    with pytest.raises(SolverInputError, match="velocity_update: unknown value 'steps' \\(did you mean 'step'\\?\\)"):
        solve_continuity(grid, rho0, [0.1], lambda t, r: v, velocity_update="steps")
    with pytest.raises(SolverInputError, match="continuity solver takes 1-D or 2-D grids, found 3 axes"):
        solve_continuity(Grid((0,) * 3, (1,) * 3, (4,) * 3), np.ones((4, 4, 4)), [0.1], v)

    def blows_up(t, rho):
        return (np.full(11, np.nan) if t > 0.05 else -grid.faces(0),)

    with pytest.raises(BlowUpError, match=r"velocity\[0\] \(face\) became nan at step \d+"):
        solve_continuity(grid, rho0, [0.5], blows_up)
