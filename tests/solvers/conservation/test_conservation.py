"""The finite-volume conservation-law solver against exact solutions (docs/theory.md §5)."""

import math

import numba
import numpy as np
import pytest

from solvers.conservation import solve_conservation
from solvers.errors import BlowUpError, SolverInputError
from solvers.exact.characteristics import burgers_smooth
from solvers.exact.hopf_cole import viscous_burgers
from solvers.exact.riemann import riemann
from solvers.exact.viscous_shock import viscous_shock
from solvers.conservation import ConvexFlux
from solvers.grid import Grid

A, C = 0.5, 0.2
T_STAR = 1.0 / (2.0 * np.pi * A)


def u0(x):
    return A * np.sin(2.0 * np.pi * x) + C


def du0(x):
    return 2.0 * np.pi * A * np.cos(2.0 * np.pi * x)


def l1(q, exact, grid):
    return float(np.abs(q - exact).sum() * grid.cell_volume)


def orders(errors):
    e = np.asarray(errors)
    return np.log2(e[:-1] / e[1:])


def sine_errors(cells, t=0.2, **kwargs):
    errors = []
    for n in cells:
        grid = Grid.line(n)
        sol = solve_conservation(grid, grid.cell_averages(u0), [t], **kwargs)
        exact = grid.cell_averages(lambda x: burgers_smooth(u0, du0, x, t, period=1.0))
        errors.append(l1(sol.final, exact, grid))
    return errors


# -- smooth solutions: orders of accuracy ------------------------------------------------------------------------------
@pytest.mark.parametrize("numerical_flux", ["godunov", "engquist_osher", "rusanov"])
@pytest.mark.parametrize("integrator", ["euler", "ssprk2"])
def test_first_order_schemes_converge_at_order_one(numerical_flux, integrator):
    # measured: orders 0.96-0.98 (200->400) and 0.98 (400->800); L1 error 4.8e-4 (euler), 8.8e-4 (ssprk2) at 800
    e = sine_errors([200, 400, 800], numerical_flux=numerical_flux, integrator=integrator)
    assert all(0.9 <= p <= 1.15 for p in orders(e)), orders(e)
    assert e[-1] < 1.2e-3


@pytest.mark.parametrize("limiter,integrator,least", [("mc", "ssprk2", 1.9), ("van_leer", "ssprk3", 1.9), ("minmod", "ssprk2", 1.8)])
def test_muscl_converges_at_order_two_before_the_shock(limiter, integrator, least):
    # measured (200->400->800): mc 1.96, 1.97; van Leer 2.03, 2.04; minmod 1.90, 1.92
    e = sine_errors([200, 400, 800], reconstruction="muscl", limiter=limiter, integrator=integrator)
    assert all(p >= least for p in orders(e)), orders(e)
    assert all(p <= 2.3 for p in orders(e)), orders(e)
    assert e[-1] < 1.2e-5


def test_weno5_is_high_order_before_the_shock():
    # WENO-Z + SSP-RK3: fifth order in space, third in time; at cfl 0.2 the space error still dominates.
    # measured (100->200->400): orders 4.74, 4.43; L1 error 1.1e-9 at 400 cells
    e = sine_errors([100, 200, 400], reconstruction="weno5", integrator="ssprk3", cfl=0.2)
    assert all(p >= 4.2 for p in orders(e)), orders(e)
    assert e[-1] < 2e-9
    # at cfl 0.45 the third-order time error takes over on fine grids (measured 2.96 for 200->400)
    e = sine_errors([200, 400], reconstruction="weno5", integrator="ssprk3", cfl=0.45)
    assert 2.8 <= orders(e)[0] <= 3.4, orders(e)


# -- Riemann problems -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("integrator", ["euler", "ssprk2"])
def test_shock_moves_at_the_rankine_hugoniot_speed(integrator):
    grid = Grid.line(400, -1.0, 1.0)
    x = grid.centers()
    q0 = np.where(x < -0.3, 1.0, 0.0)
    t = 0.4
    sol = solve_conservation(grid, q0, [t], boundary="outflow", integrator=integrator)
    q = sol.final
    i = int(np.argmax(q < 0.5))
    position = x[i - 1] + (x[i] - x[i - 1]) * (q[i - 1] - 0.5) / (q[i - 1] - q[i])
    expected = -0.3 + 0.5 * (1.0 + 0.0) * t
    assert abs(position - expected) < 1.0 * grid.dx[0]  # measured: 0.002 cells
    assert np.abs(q - riemann("burgers", 1.0, 0.0, x, t, x0=-0.3)).sum() * grid.dx[0] < 3 * grid.dx[0]


def test_transonic_rarefaction_opens_without_an_expansion_shock():
    errors, jumps = [], []
    for n in (200, 400, 800):
        grid = Grid.line(n, -1.0, 1.0)
        q0 = np.where(grid.centers() < 0.0, -0.5, 1.0)
        sol = solve_conservation(grid, q0, [0.5], boundary="outflow", integrator="euler")
        exact = grid.cell_averages(lambda x: riemann("burgers", -0.5, 1.0, x, 0.5))
        errors.append(l1(sol.final, exact, grid))
        jumps.append(float(np.abs(np.diff(sol.final)).max()))
    # an expansion shock would keep a jump of 1.5 at x = 0; the fan has jumps of order dx/t.
    # measured: largest jumps 0.072, 0.038, 0.019 (halving with dx); L1 errors 0.016, 0.0097, 0.0057
    assert jumps[-1] < 0.03 and jumps[0] / jumps[-1] > 3.0
    assert errors[-1] < 0.008 and all(p > 0.6 for p in orders(errors))


def test_stationary_shock_stays_put():
    grid = Grid.line(100, -1.0, 1.0)
    q0 = np.where(grid.centers() < 0.0, 1.0, -1.0)
    sol = solve_conservation(grid, q0, [0.5, 2.0], boundary="outflow")
    assert np.abs(sol.snapshots - q0).max() <= 1e-14  # Godunov: the sharp discrete shock is exactly steady
    # Engquist–Osher's steady shock 1 | -1 at a face has two intermediate states, +-1/sqrt 2: it settles, stays put
    sol = solve_conservation(grid, q0, [0.5, 2.0], boundary="outflow", numerical_flux="engquist_osher")
    assert np.abs(sol.snapshots[1] - sol.snapshots[0]).max() <= 1e-7  # measured 7.9e-9
    assert np.abs(sol.final[49:51] - np.array([1.0, -1.0]) / np.sqrt(2.0)).max() < 1e-7
    assert np.abs(np.abs(np.delete(sol.final, [49, 50])) - 1.0).max() < 1e-7
    assert abs(sol.final.sum() - q0.sum()) <= 1e-12


# -- viscous Burgers ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("nu", [0.02, 0.01])
def test_travelling_viscous_shock(nu):
    t, bc = 0.5, [(("dirichlet", 1.0), ("dirichlet", 0.0))]
    results = {}
    for recon in ("first_order", "muscl"):
        errors = []
        for n in (200, 400, 800):
            grid = Grid.line(n, -1.0, 1.0)
            q0 = grid.cell_averages(lambda x: viscous_shock(1.0, 0.0, nu, x, 0.0, -0.25))
            sol = solve_conservation(grid, q0, [t], nu=nu, reconstruction=recon, limiter="mc", boundary=bc)
            exact = grid.cell_averages(lambda x: viscous_shock(1.0, 0.0, nu, x, t, -0.25))
            errors.append(l1(sol.final, exact, grid))
        results[recon] = orders(errors)
    # measured: first order 0.97-0.99; MUSCL 1.83-1.94 (nu=0.01), 1.88-1.94 (nu=0.02)
    assert all(0.9 <= p <= 1.15 for p in results["first_order"]), results
    assert results["muscl"][-1] >= 1.85 and results["muscl"][0] >= 1.75, results


@pytest.mark.parametrize("nu", [0.02, 0.01])
def test_viscous_burgers_against_hopf_cole(nu):
    t = 0.4  # past t* = 0.318: a viscous shock has formed
    errors = {"first_order": [], "muscl": []}
    for n in (200, 400, 800):
        grid = Grid.line(n)
        exact = grid.cell_averages(lambda x: viscous_burgers(u0, x, t, nu, period=1.0, tol=1e-11))
        for recon in errors:
            sol = solve_conservation(grid, grid.cell_averages(u0), [t], nu=nu, reconstruction=recon, limiter="mc")
            errors[recon].append(l1(sol.final, exact, grid))
    # measured: first order 0.98-0.99; MUSCL 1.93-1.98 (nu=0.01: 1.93, 1.97; nu=0.02: 1.96, 1.98)
    assert all(0.9 <= p <= 1.1 for p in orders(errors["first_order"])), errors
    assert all(1.85 <= p <= 2.2 for p in orders(errors["muscl"])), errors


def test_implicit_viscosity_agrees_with_explicit_and_steps_far_beyond_the_parabolic_limit():
    nu, t = 0.05, 0.4
    grid = Grid.line(400)
    exact = grid.cell_averages(lambda x: viscous_burgers(u0, x, t, nu, period=1.0, tol=1e-11))
    q0 = grid.cell_averages(u0)
    explicit = solve_conservation(grid, q0, [t], nu=nu, reconstruction="muscl", limiter="mc")
    implicit = solve_conservation(grid, q0, [t], nu=nu, reconstruction="muscl", limiter="mc", viscous="implicit")
    backward = solve_conservation(grid, q0, [t], nu=nu, reconstruction="muscl", limiter="mc", viscous="implicit",
                                  theta=1.0)
    dt_parabolic = grid.dx[0] ** 2 / (2 * nu)
    mean_dt = t / implicit.steps
    assert mean_dt > 30 * dt_parabolic  # measured: 202 steps, dt ~ 40x the explicit parabolic limit
    assert np.abs(implicit.final - explicit.final).max() < 2e-5  # measured 9.0e-6
    # Strang + Crank–Nicolson is second order: as accurate as the explicit solve (measured 2.77e-6 vs 2.63e-6)
    assert l1(implicit.final, exact, grid) < 1.2 * l1(explicit.final, exact, grid)
    assert l1(backward.final, exact, grid) < 2e-4  # first order in time, measured 1.1e-4
    assert implicit.final.max() <= q0.max() + 1e-12 and implicit.final.min() >= q0.min() - 1e-12
    # Strang splitting converges at second order in time: halving the step (grid fixed) quarters the splitting error
    fine = solve_conservation(grid, q0, [t], nu=nu, reconstruction="muscl", limiter="mc", viscous="implicit", cfl=0.225)
    assert np.abs(fine.final - explicit.final).max() < 0.5 * np.abs(implicit.final - explicit.final).max()


# -- conservation, maximum principle, TVD ------------------------------------------------------------------------------
def total_variation(q):
    return float(np.abs(np.diff(q, append=q[:1])).sum())


@pytest.mark.parametrize("kwargs", [
    dict(), dict(integrator="ssprk2", numerical_flux="engquist_osher"), dict(numerical_flux="rusanov", integrator="ssprk3"),
    dict(reconstruction="muscl", limiter="minmod"), dict(reconstruction="muscl", limiter="mc"),
    dict(reconstruction="muscl", limiter="van_leer", integrator="ssprk3"),
])
def test_periodic_solve_conserves_and_is_tvd(kwargs):
    grid = Grid.line(256)
    q0 = grid.cell_averages(u0)
    times = np.linspace(0.05, 1.0, 20)  # through shock formation (t* = 0.32) and interaction
    mass0 = grid.integrate(q0)
    # a cell-varying coefficient a(x): conservation holds to round-off (variation may grow: a(x) f(q) = const
    # steady states are not constant)
    a = lambda x: 1.0 + 0.3 * np.cos(2 * np.pi * x)  # noqa: E731
    varying = solve_conservation(grid, q0, times, a=a, **kwargs)
    masses = np.array([grid.integrate(s) for s in varying.snapshots])
    assert np.abs(masses - mass0).max() <= 1e-13 * abs(mass0) * 10  # sums of 256 terms: a few ulps
    # constant a: total variation never increases; monotone schemes create no new extrema
    sol = solve_conservation(grid, q0, times, a=1.3, **kwargs)
    tv = [total_variation(q0)] + [total_variation(s) for s in sol.snapshots]
    assert all(b <= a_ + 1e-12 for a_, b in zip(tv, tv[1:])), np.diff(tv).max()
    assert tv[-1] < 0.9 * tv[0]  # the shock really dissipates variation: the check is not vacuous
    if kwargs.get("reconstruction", "first_order") == "first_order":
        assert sol.snapshots.max() <= q0.max() + 1e-14 and sol.snapshots.min() >= q0.min() - 1e-14


def test_two_dimensional_conservation_with_varying_coefficients():
    grid = Grid((0.0, 0.0), (1.0, 1.0), (48, 40))
    q0 = grid.cell_averages(lambda x, y: np.sin(2 * np.pi * x) * np.cos(2 * np.pi * y) + 0.3)
    a = (lambda x, y: 1.0 + 0.5 * np.sin(2 * np.pi * y), lambda x, y: 0.7 + 0.2 * np.cos(2 * np.pi * x))
    D = lambda x, y: 1.0 + 0.5 * np.sin(2 * np.pi * (x + y))  # noqa: E731
    sol = solve_conservation(grid, q0, [0.2, 0.5], a=a, D=D, nu=0.005, reconstruction="muscl", limiter="mc")
    mass0 = grid.integrate(q0)
    for s in sol.snapshots:
        assert abs(grid.integrate(s) - mass0) <= 1e-13 * abs(mass0) * 10
    first = solve_conservation(grid, q0, [0.5], a=a)
    assert first.final.max() <= q0.max() + 1e-14 and first.final.min() >= q0.min() - 1e-14


def test_two_dimensional_diagonal_burgers_reduces_to_one_dimension():
    """u0(x + y) with flux f(q)(1, 1): q(x, y, t) = w(x + y, 2t), w the 1-D Burgers solution."""
    t = 0.1
    errors = {"first_order": [], "muscl": []}
    for n in (32, 64, 128):
        grid = Grid((0.0, 0.0), (1.0, 1.0), (n, n))
        q0 = grid.cell_averages(lambda x, y: u0(x + y))
        exact = grid.cell_averages(lambda x, y: burgers_smooth(u0, du0, np.mod(x + y, 1.0), 2 * t, period=1.0))
        for recon in errors:
            sol = solve_conservation(grid, q0, [t], a=(1.0, 1.0), reconstruction=recon, limiter="mc")
            errors[recon].append(float(np.abs(sol.final - exact).mean()))
    # measured (mean abs error): first order 0.0174, 0.0098, 0.0053; MUSCL 2.1e-3, 5.5e-4, 1.45e-4
    assert all(p >= 0.8 for p in orders(errors["first_order"])), errors
    assert all(p >= 1.85 for p in orders(errors["muscl"])), errors
    assert errors["muscl"][-1] < 2e-4


def test_three_dimensional_diagonal_burgers_and_conservation():
    """u0(x + y + z) with flux f(q)(1, 1, 1): q = w(x + y + z, 3t); mass is conserved with varying a."""
    t = 0.05
    errors = []
    for n in (16, 32):
        grid = Grid((0.0,) * 3, (1.0,) * 3, (n,) * 3)
        q0 = grid.cell_averages(lambda x, y, z: u0(x + y + z), points=2)
        exact = grid.cell_averages(lambda x, y, z: burgers_smooth(u0, du0, np.mod(x + y + z, 1.0), 3 * t, period=1.0),
                                   points=2)
        sol = solve_conservation(grid, q0, [t], a=(1.0, 1.0, 1.0), reconstruction="muscl", limiter="mc")
        errors.append(float(np.abs(sol.final - exact).mean()))
    # measured (3-point quadrature): 6.8e-3, 1.8e-3 (order 1.92)
    assert orders(errors)[0] >= 1.8 and errors[-1] < 2.5e-3, errors
    grid = Grid((0.0,) * 3, (1.0,) * 3, (10, 9, 8))
    q0 = grid.cell_averages(lambda x, y, z: np.sin(2 * np.pi * x) * np.cos(2 * np.pi * (y - z)) + 0.1, points=2)
    a = (lambda x, y, z: 1 + 0.3 * np.sin(2 * np.pi * y), 1.0, lambda x, y, z: 0.5 + 0.2 * np.cos(2 * np.pi * x))
    sol = solve_conservation(grid, q0, [0.3], a=a, nu=0.01, D=lambda x, y, z: 1 + 0.5 * np.sin(2 * np.pi * z))
    assert abs(grid.integrate(sol.final) - grid.integrate(q0)) <= 1e-13 * 10 * abs(grid.integrate(q0))


@pytest.mark.parametrize("scheme", [{}, dict(reconstruction="muscl", limiter="mc"),
                                    dict(reconstruction="muscl", limiter="van_leer")])
@pytest.mark.parametrize("integrator", ["euler", "ssprk2", "ssprk3"])
@pytest.mark.parametrize("nu", [0.0, 2e-3])
def test_two_dimensional_fast_path_agrees_with_general_kernel(nu, integrator, scheme):
    if scheme and integrator == "euler":
        # MUSCL with forward Euler amplifies round-off differences (measured at t = 0.6: 2e-12 MC, 4e-12 van Leer,
        # against 5e-15 with SSP-RK2); that pairing is compared one stage at a time in test_burgers_fast_path.py
        pytest.skip("MUSCL + Euler: compared stage by stage")
    grid = Grid((0.0, 0.0), (1.0, 1.0), (40, 40))
    q0 = grid.cell_averages(lambda x, y: u0(x) * np.cos(2 * np.pi * y))
    fast = solve_conservation(grid, q0, [0.1, 0.3], integrator=integrator, a=(1.0, 0.5), nu=nu, **scheme)
    general = solve_conservation(grid, q0, [0.1, 0.3], integrator=integrator, a=(1.0, 0.5), nu=nu, fast_path=False,
                                 **scheme)
    assert fast.kernel == "fast" and general.kernel == "general" and fast.steps == general.steps
    assert np.abs(fast.snapshots - general.snapshots).max() <= 1e-13


@pytest.mark.parametrize("scheme", [{}, dict(reconstruction="muscl", limiter="minmod"),
                                    dict(reconstruction="muscl", limiter="mc")])
@pytest.mark.parametrize("integrator", ["euler", "ssprk2", "ssprk3"])
@pytest.mark.parametrize("nu", [0.0, 2e-3])
def test_one_dimensional_fast_path_agrees_with_general_kernel(nu, integrator, scheme):
    if scheme and integrator == "euler":
        # MUSCL with forward Euler amplifies round-off differences (measured at t = 0.6: 2e-12 MC, 4e-12 van Leer,
        # against 5e-15 with SSP-RK2); that pairing is compared one stage at a time in test_burgers_fast_path.py
        pytest.skip("MUSCL + Euler: compared stage by stage")
    grid = Grid.line(300)
    q0 = grid.cell_averages(u0)
    fast = solve_conservation(grid, q0, [0.2, 0.6], integrator=integrator, a=1.5, nu=nu, **scheme)
    general = solve_conservation(grid, q0, [0.2, 0.6], integrator=integrator, a=1.5, nu=nu, fast_path=False, **scheme)
    assert fast.kernel == "fast" and general.kernel == "general" and fast.steps == general.steps
    assert np.abs(fast.snapshots - general.snapshots).max() <= 1e-13


@pytest.mark.parametrize("kwargs, kernel", [
    (dict(nu=0.01), "fast"),  # a constant viscosity, explicit
    (dict(nu=0.01, viscous="implicit"), "general"),
    (dict(nu=0.01, D=1.0), "general"),  # a D field is never assumed constant
    (dict(nu=0.01, a=lambda x: 1.0 + 0 * x), "general"),
    (dict(nu=0.01, reconstruction="muscl"), "fast"),
    (dict(reconstruction="weno5"), "general"),
    (dict(nu=0.01, integrator="ssprk3"), "fast"),
    (dict(numerical_flux="rusanov"), "general"),
])
def test_which_kernel_a_viscous_solve_runs(kwargs, kernel):
    grid = Grid.line(64)
    kwargs = dict(integrator="euler") | kwargs
    assert solve_conservation(grid, grid.cell_averages(u0), [0.01], **kwargs).kernel == kernel


@pytest.mark.parametrize("nu", [0.02, 0.01])
def test_viscous_fast_path_against_hopf_cole(nu):
    """The explicit viscous fast path (first order, forward Euler) converges at order one past the shock."""
    t = 0.4
    errors = []
    for n in (200, 400, 800):
        grid = Grid.line(n)
        exact = grid.cell_averages(lambda x: viscous_burgers(u0, x, t, nu, period=1.0, tol=1e-11))
        sol = solve_conservation(grid, grid.cell_averages(u0), [t], nu=nu, integrator="euler")
        assert sol.kernel == "fast"
        errors.append(l1(sol.final, exact, grid))
    assert all(0.9 <= p <= 1.1 for p in orders(errors)), errors


# -- sources, user fluxes ------------------------------------------------------------------------------------------
@numba.njit
def linear_user_source(q, c):
    return c * q


@pytest.mark.parametrize("integrator,order", [("euler", 1), ("ssprk2", 2), ("ssprk3", 3)])
def test_relaxation_source_decays_exponentially(integrator, order):
    k, t = 2.0, 1.0
    grid = Grid.line(50)
    q0 = np.full(grid.shape, 2.0)
    exact = 2.0 * np.exp(-k * t)
    for source in ("linear", linear_user_source):  # built in (cached kernel) and user compiled (recompiled kernel)
        errors = []
        for cfl in (0.4, 0.2):
            sol = solve_conservation(grid, q0, [t], source=source, source_field=-k, integrator=integrator, cfl=cfl)
            assert np.ptp(sol.final) == 0.0  # constant data stay constant
            errors.append(abs(sol.final[0] - exact) / exact)
        # the step is ~ cfl dx/|q|: halving the CFL number halves every step, so the error drops by 2^order
        # measured orders 0.99/0.99, 2.00/1.99, 2.99/2.98 (built in / user); errors 0.012, 5.9e-5, 2.6e-7 at cfl 0.2
        assert orders(errors)[0] == pytest.approx(order, abs=0.1), errors
        assert errors[-1] < {1: 0.015, 2: 1e-4, 3: 5e-7}[order]


def test_user_convex_flux_rarefaction_and_shock():
    """A user flux f = e^q (monotone, sonic point below the data) matches the exact Riemann solution."""
    flux = ConvexFlux.from_functions("exp", lambda q: math.exp(q), lambda q: math.exp(q), sonic=-30.0)
    errors = []
    for n in (200, 400, 800):
        grid = Grid.line(n, -1.0, 1.0)
        q0 = np.where(grid.centers() < 0.0, 0.0, 0.5)  # f' increases to the right: a rarefaction
        sol = solve_conservation(grid, q0, [0.3], flux=flux, boundary="outflow", reconstruction="muscl", limiter="mc")
        exact = grid.cell_averages(lambda x: riemann(flux, 0.0, 0.5, x, 0.3))
        errors.append(l1(sol.final, exact, grid))
    assert errors[-1] < 3e-3 and all(p > 0.6 for p in orders(errors)), errors
    grid = Grid.line(400, -1.0, 1.0)
    q0 = np.where(grid.centers() < 0.0, 0.5, 0.0)  # a shock at speed (e^0.5 - 1)/0.5
    sol = solve_conservation(grid, q0, [0.3], flux=flux, boundary="outflow")
    speed = (np.exp(0.5) - 1.0) / 0.5
    mass_moved = (sol.final.sum() - q0.sum()) * grid.dx[0]
    assert abs(mass_moved / 0.5 - speed * 0.3) < 1e-10  # conservation gives the exact front position
    assert abs(grid.centers()[np.argmax(sol.final < 0.25)] - speed * 0.3) < 2 * grid.dx[0]


# -- shock formation ----------------------------------------------------------------------------------------------
def test_gradient_steepens_at_the_predicted_shock_time():
    grid = Grid.line(1600)
    times = T_STAR * np.linspace(0.8, 1.2, 81)
    sol = solve_conservation(grid, grid.cell_averages(u0), times, reconstruction="muscl", limiter="mc")
    # local criterion: the steepest cell-to-cell jump exceeds a quarter of the amplitude (O(1) jump in one cell)
    jumps = np.array([np.abs(np.diff(s, append=s[:1])).max() for s in sol.snapshots])
    onset = times[int(np.argmax(jumps > 0.25 * A))]
    assert abs(onset / T_STAR - 1.0) < 0.03, onset / T_STAR


# -- bad input, blow-up ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs,match", [
    (dict(q0=np.array([np.nan] + [0.0] * 9)), "q0: expected finite"),
    (dict(q0=np.zeros(9)), r"q0: expected the grid shape \(10,\)"),
    (dict(a=np.ones(7)), r"a: expected .* grid shape \(10,\)"),
    (dict(a=np.linspace(-1, 1, 10)), r"a: expected values > 0"),
    (dict(D=-np.ones(10)), r"D: expected values >= 0"),
    (dict(D=np.ones((10, 2))), r"D: expected .* grid shape"),
    (dict(cfl=1.5), r"cfl: expected a number in \(0, 1\]"),
    (dict(cfl=0.0), r"cfl: expected a number in \(0, 1\]"),
    (dict(times=[0.2, 0.1]), "times: expected strictly increasing"),
    (dict(numerical_flux="roe"), "numerical_flux: unknown value 'roe'.*'engquist_osher', 'godunov', 'rusanov'"),
    (dict(reconstruction="weno"), "reconstruction: unknown value 'weno'.*'first_order', 'muscl', 'weno5'"),
    (dict(limiter="superbee"), "limiter: unknown value 'superbee'.*'mc', 'minmod', 'van_leer'"),
    (dict(integrator="rk4"), "integrator: unknown value 'rk4'.*'euler', 'ssprk2', 'ssprk3'"),
    (dict(flux="kdv"), "flux: unknown flux 'kdv'; valid built-in fluxes are 'burgers'"),
    (dict(viscous="semi"), "viscous: unknown value 'semi'"),
    (dict(nu=-0.1), "nu: expected a finite number >= 0"),
    (dict(source="decay"), "source: unknown value 'decay'"),
    (dict(source=lambda q, c: q), "source: expected None, 'linear', 'field' or a numba.njit-compiled"),
    (dict(max_steps=3), "max_steps: the solve needs more than 3 steps"),
])
def test_bad_input_is_named(kwargs, match):
    grid = Grid.line(10)
    args = dict(q0=np.sin(2 * np.pi * grid.centers()), times=[0.5])
    args.update(kwargs)
    q0, times = args.pop("q0"), args.pop("times")
    with pytest.raises(SolverInputError, match=match):
        solve_conservation(grid, q0, times, **args)


def test_bad_flux_and_grid():
    with pytest.raises(SolverInputError, match="expected a convex flux"):
        ConvexFlux.from_functions("concave", lambda q: -q * q, lambda q: -2 * q, 0.0)
    with pytest.raises(SolverInputError, match="sonic = 1.0 is not the minimiser"):
        ConvexFlux.from_functions("shifted", lambda q: q * q, lambda q: 2 * q, 1.0)
    with pytest.raises(SolverInputError, match="grid.ghost: expected at least 3"):
        solve_conservation(Grid((0.0,), (1.0,), (8,), ghost=2), np.zeros(8), [0.1])
    with pytest.raises(SolverInputError, match="grid: expected a solvers.grid.uniform.Grid"):
        solve_conservation((0.0, 1.0, 8), np.zeros(8), [0.1])
    with pytest.raises(SolverInputError, match=r"a: expected one coefficient per axis \(2\), found a tuple of 3"):
        solve_conservation(Grid((0, 0), (1, 1), (4, 4)), np.zeros((4, 4)), [0.1], a=(1.0, 1.0, 1.0))


@numba.njit
def explosive_source(q, c):
    return c * q * q * q


def test_blow_up_reports_step_time_and_cell():
    grid = Grid.line(20)
    q0 = np.ones(20)
    q0[13] = 1.5
    with pytest.raises(BlowUpError) as info:
        solve_conservation(grid, q0, [1.0], source=explosive_source, source_field=1e8, integrator="euler")
    err = info.value
    assert err.step >= 1 and 0 < err.time < 1.0 and err.cell == (13,)
    assert "step" in str(err) and "cell (13,)" in str(err)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", [(300_000,), (560, 560)])  # above the parallel threshold
def test_fast_path_allocates_only_two_working_fields_and_the_snapshots(shape, threads):
    """Peak traced allocation of a fast-path solve against q, one work field and the returned snapshot."""
    import tracemalloc

    if threads > numba.config.NUMBA_NUM_THREADS:
        pytest.skip("Numba has a single thread here")
    grid = Grid.line(shape[0]) if len(shape) == 1 else Grid((0, 0), (1, 1), shape)
    x = grid.mesh()
    q0 = 0.25 + 0.5 * np.sin(2 * np.pi * x[0]) * (1.0 if grid.ndim == 1 else np.cos(2 * np.pi * x[1]))
    solve_conservation(grid, q0, [1e-6], integrator="euler", threads=threads)  # compiles outside the trace
    required = (2 * math.prod(grid.padded_shape) + math.prod(grid.shape)) * 8
    tracemalloc.start()
    try:
        sol = solve_conservation(grid, q0, [1e-5, 2e-5], integrator="euler", threads=threads)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sol.kernel == ("fast-parallel" if threads == 2 else "fast") and sol.steps > 1
    required += math.prod(grid.shape) * 8  # the second snapshot
    assert peak <= 1.02 * required, f"peak {peak / required:.3f}x the required arrays"
