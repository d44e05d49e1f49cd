"""solvers.charts.burgers: p = ∂_x u on a 1-D chart with a metric, conservation form (docs/theory.md §1)."""

import numpy as np
import pytest

from solvers.charts.burgers import MUSCL, FIRST_ORDER, chart_burgers_rhs_reference, chart_burgers_stage, solve_chart_burgers
from solvers.errors import SolverInputError
from solvers.exact.hopf_cole import viscous_burgers
from solvers.grid import Grid


@pytest.mark.parametrize("recon, order", [("first_order", 0.9), ("muscl", 1.7)])
def test_flat_chart_is_viscous_burgers(recon, order):
    nu, t = 0.02, 0.12  # smooth viscous solution on the periodic cell

    def p0(x):
        return np.sin(2 * np.pi * x) + 0.3

    errors = []
    for n in (64, 128):
        g = Grid.line(n, 0.0, 1.0)
        sol = solve_chart_burgers(g, p0, [t], mobility=lambda x: np.ones_like(x), nu=nu, reconstruction=recon, boundary="periodic")
        exact = viscous_burgers(p0, g.centers(), t, nu, period=1.0)
        errors.append(np.abs(sol.p[-1] - exact).mean())
    assert np.log2(errors[0] / errors[1]) > order
    assert errors[1] < 0.02


def test_gram_chart_and_flat_chart_agree():
    """p_z in the chart z (a = 4z) equals p_r / (2r) from the flat chart r = sqrt z."""
    s, Z, nu, t = 1.0, 2.0, 0.05, 0.3
    gr = Grid.line(400, 0.0, np.sqrt(Z))
    pr = solve_chart_burgers(gr, lambda r: -2 * r * (s - r**2), [t], mobility=lambda r: np.ones_like(r), nu=nu).p[-1]
    errs = []
    for n in (100, 200):
        gz = Grid.line(n, 0.0, Z)
        pz = solve_chart_burgers(gz, lambda z: z - s, [t], mobility=lambda z: 4 * z, nu=nu).p[-1]
        z = gz.centers()
        ref = np.interp(np.sqrt(z), gr.centers(), pr) / (2 * np.sqrt(z))
        errs.append(np.abs(pz - ref)[z > 0.1].max())
    assert errs[1] < 5e-4
    assert np.log2(errs[0] / errs[1]) > 1.5  # MUSCL, second order away from the degenerate end


def test_inviscid_shock_on_a_chart_moves_at_the_rankine_hugoniot_speed():
    """a = 2 constant: p_t + (p²)_x = 0, a Riemann shock 1 | -0.5 moves at (a/2)(pL + pR) = 0.5."""
    g = Grid.line(400, -1.0, 1.0)
    sol = solve_chart_burgers(g, lambda x: np.where(x < 0, 1.0, -0.5), [0.6], mobility=lambda x: 2.0 + 0 * x,
                              boundary="outflow")
    x = g.centers()
    jump = x[np.argmin(np.diff(sol.p[-1]))]
    assert jump == pytest.approx(0.3, abs=2 * g.dx[0])


@pytest.mark.parametrize("recon", [FIRST_ORDER, MUSCL])
def test_stage_matches_reference(recon):
    rng = np.random.default_rng(recon)
    n, g = 23, 3
    q = rng.normal(size=n + 2 * g)
    a_face = rng.uniform(0, 2, size=n + 2 * g - 1)
    b_face = rng.normal(size=n + 2 * g - 1)
    theta = rng.normal(size=(n + 2 * g - 1, 4))
    out = np.zeros_like(q)
    dt, dx = 1e-3, 0.1
    rate = chart_burgers_stage(q, q, out, 0.0, 1.0, dt, g, dx, recon, a_face, b_face, theta, 0.3)
    rhs, rate_ref = chart_burgers_rhs_reference(q, g, dx, recon, a_face, b_face, theta, 0.3)
    np.testing.assert_allclose(out[g:-g], q[g:-g] + dt * rhs, rtol=1e-13, atol=1e-13)
    assert rate == pytest.approx(rate_ref, rel=1e-13)


def test_degenerate_end_keeps_its_laplace_beltrami_flux():
    """Gram chart a = 4z: the flux -ν(a p_z + ½ a_z p) through z = 0 is -2ν p(0), not zero (u(0) moves at 2ν u_z).

    p0 = cos(πz/2) on [0, 1] (p(1) = 0, reflecting wall): d/dt ∫p = F(0) - F(1) = -2ν - 4ν π/2.
    """
    nu = 0.1
    g = Grid.line(400, 0.0, 1.0)
    sol = solve_chart_burgers(g, lambda z: np.cos(np.pi * z / 2), [0.0, 2e-4], mobility=lambda z: 4 * z, nu=nu)
    mass = sol.p.sum(axis=1) * g.dx[0]
    rate = (mass[1] - mass[0]) / 2e-4
    assert rate == pytest.approx(-2 * nu - 2 * np.pi * nu, rel=0.01)  # dropping the z = 0 flux would be 24% off


def test_bad_input():
    g = Grid.line(10, -1.0, 1.0)
    with pytest.raises(SolverInputError, match=r"mobility: expected finite non-negative values, found -1.0 at x = -1"):
        solve_chart_burgers(g, lambda x: x, [0.1], mobility=lambda x: x)
    with pytest.raises(SolverInputError, match="reconstruction: unknown value 'weno'"):
        solve_chart_burgers(g, lambda x: x, [0.1], mobility=lambda x: 1 + 0 * x, reconstruction="weno")
