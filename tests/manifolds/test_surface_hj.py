"""Monotone vertex-star scheme for u_t + H(∇u) = ν Δu on surfaces: compiled stage against the NumPy
reference, comparison principle, viscous HJ on the sphere against Hopf–Cole, the eikonal front from
a point against the great-circle distance, observed first order under refinement, bad input."""

import numpy as np
import pytest

from solvers.errors import SolverInputError
from solvers.mesh_generation import icosphere, torus, user_mesh
from solvers.surface_hj import SurfaceHJ, SurfaceHJSettings, solve_surface_hj

NU = 0.1
X0 = np.array([0.3, -0.2, 1.0]) / np.linalg.norm([0.3, -0.2, 1.0])


def phi(x, y, z, t):
    """Heat solution on the unit sphere from band-limited data: harmonics of degree 1, 2, 3 decay
    like e^{-l(l+1)νt}; φ ≥ 2 - 0.8 - 0.5 - 0.3 > 0."""
    return (2 + 0.8 * np.exp(-2 * NU * t) * z + np.exp(-6 * NU * t) * x * y
            + 0.3 * np.exp(-12 * NU * t) * (x**3 - 3 * x * y**2))


def hopf_cole(x, y, z, t):
    """u = -2ν log φ solves u_t + ½|∇u|² = ν Δu (THEORY §1, Hopf–Cole)."""
    return -2 * NU * np.log(phi(x, y, z, t))


def great_circle(x, y, z):
    return np.arccos(np.clip(x * X0[0] + y * X0[1] + z * X0[2], -1.0, 1.0))


@pytest.mark.parametrize("hamiltonian", ["quadratic", "eikonal"])
@pytest.mark.parametrize("numerical", ["lax_friedrichs", "local_lax_friedrichs"])
def test_stage_kernel_matches_numpy_reference(hamiltonian, numerical):
    rng = np.random.default_rng(3)
    m = torus(2.0, 1.0, 30, 14)
    op = SurfaceHJ(m, SurfaceHJSettings(hamiltonian, numerical, nu=0.05))
    u = np.sin(m.vertices[:, 0]) + 0.1 * rng.standard_normal(m.n_vertices)
    q0 = rng.standard_normal(m.n_vertices)
    out = np.empty_like(u)
    rate = op.stage(u, q0, out, 0.25, 0.75, 2e-3)
    ref, ref_rate = op.stage_reference(u, q0, 0.25, 0.75, 2e-3)
    np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)
    assert rate == pytest.approx(ref_rate, rel=1e-12)
    assert op.max_rate(u) == pytest.approx(ref_rate, rel=1e-12)


def test_scheme_is_consistent_for_linear_functions():
    """For u = a·x on the unit sphere, -L(u) -> H(∇_Γ u) = ½(|a|² - (a·x)²) within O(h); κ ~ 1/h."""
    for n in (8, 16):
        m = icosphere(n)
        op = SurfaceHJ(m, SurfaceHJSettings(nu=0.0))
        a = np.array([0.2, -0.5, 0.7])
        rhs, _ = op.rhs_reference(m.vertices @ a)
        ax = m.vertices @ a  # the normal component: |∇_Γ u|² = |a|² - (a·x)²
        exact = -0.5 * (a @ a - ax**2)
        err = np.abs(rhs - exact).max()
        assert err < 0.5 * m.h, (n, err)
        assert 0.3 < (op.kappa * m.vertex_size).min() and (op.kappa * m.vertex_size).max() < 1.5


def test_comparison_principle_and_no_new_extrema():
    m = icosphere(6)
    x, y, z = m.vertices.T
    u0 = np.sin(3 * x) * np.cos(2 * z) + y
    v0 = u0 + 0.05 * (1 + np.cos(5 * y))  # v0 >= u0
    for integrator in ("euler", "ssprk3"):
        su = solve_surface_hj(m, u0, [0.2, 0.6], nu=0.02, integrator=integrator, cfl=1.0)
        sv = solve_surface_hj(m, v0, [0.2, 0.6], nu=0.02, integrator=integrator, cfl=1.0)
        assert (sv.values >= su.values - 1e-13).all()
        assert su.values.max() <= u0.max() + 1e-13 and su.values.min() >= u0.min() - 1e-13


def _hopf_cole_error(n):
    m = icosphere(n)
    sol = solve_surface_hj(m, lambda x, y, z: hopf_cole(x, y, z, 0.0), [0.5, 1.0], nu=NU)
    errs = [np.abs(sol.values[k] - hopf_cole(*m.vertices.T, t)).max() for k, t in enumerate(sol.times)]
    return m.h, errs


def test_viscous_hj_on_the_sphere_against_hopf_cole():
    (h1, e1), (h2, e2) = _hopf_cole_error(8), _hopf_cole_error(16)
    assert e2[-1] < 1.5e-3, e2  # u varies by ~0.5 over the sphere
    order = np.log(e1[-1] / e2[-1]) / np.log(h1 / h2)
    assert 0.75 < order < 1.3, (e1, e2, order)


@pytest.mark.slow
def test_viscous_hj_hopf_cole_order_on_finer_meshes():
    (h1, e1), (h2, e2) = _hopf_cole_error(16), _hopf_cole_error(32)
    order = np.log(e1[-1] / e2[-1]) / np.log(h1 / h2)
    assert 0.85 < order < 1.2, (e1, e2, order)


def _eikonal(n, t=1.0):
    m = icosphere(n)
    sol = solve_surface_hj(m, great_circle, [t], hamiltonian="eikonal")
    d = great_circle(*m.vertices.T)
    exact = np.maximum(d - t, 0.0)  # u(x,t) = min over the geodesic ball of radius t of d(·, x0)
    mass = np.zeros(m.n_vertices)
    np.add.at(mass, m.triangles, np.repeat(m.areas[:, None] / 3, 3, axis=1))
    err = sol.values[-1] - exact
    return m, d, sol.values[-1], err, float((mass * np.abs(err)).sum() / mass.sum())


def test_eikonal_front_from_a_point_against_great_circle_distance():
    _, _, _, _, l1_coarse = _eikonal(8)
    m, d, u, err, l1 = _eikonal(16)
    assert l1 < 0.06, l1
    order = np.log2(l1_coarse / l1)
    assert 0.8 < order < 1.3, (l1_coarse, l1, order)
    far = d > 1.0 + 0.5  # behind the front, away from the antipodal kink: u + t = d
    assert np.abs(err[far & (d < np.pi - 0.5)]).max() < 0.06
    assert u.min() >= -1e-12  # monotone: never below min u0 = 0
    # the front (u = 0 region) has the great-circle radius t: inside d < t - 0.3, u is small
    assert u[d < 0.7].max() < 0.12


def _hopf_lax(points, u0, samples, t):
    """u(x, t) = min_y [u0(y) + d(x, y)²/(2t)] (Hopf–Lax on the sphere, THEORY §1) by brute force over
    ``samples`` (error O(spacing²), far below the scheme's)."""
    values = u0(*samples.T)
    out = np.empty(len(points))
    for s in range(0, len(points), 512):
        d = np.arccos(np.clip(points[s:s + 512] @ samples.T, -1.0, 1.0))
        out[s:s + 512] = (values[None, :] + d**2 / (2 * t)).min(axis=1)
    return out


def test_inviscid_quadratic_hj_against_hopf_lax_through_shocks():
    """ν = 0, H = ½|p|²: first order in max norm after a shock of ∇u has formed on the equator.

    u0 has curvature -1 across the equator, so the shock forms at γ* = 1 (THEORY §1); at γ* itself the
    order drops (about 0.7: ∇u has a cusp), at t = 1.5 it is back to about 1."""
    def u0(x, y, z):
        return -0.5 * z**2 + 0.3 * x + 0.2 * x * y  # concave in z: the gradient steepens into shocks

    samples = icosphere(32).vertices
    errs = []
    for n in (8, 16):
        m = icosphere(n)
        sol = solve_surface_hj(m, u0, [1.5])
        errs.append((m.h, np.abs(sol.values[-1] - _hopf_lax(m.vertices, u0, samples, 1.5)).max()))
    (h1, e1), (h2, e2) = errs
    assert e2 < 0.035, errs
    order = np.log(e1 / e2) / np.log(h1 / h2)
    assert 0.8 < order < 1.3, (errs, order)


def test_bad_input():
    m = icosphere(3)
    with pytest.raises(SolverInputError, match=r"hamiltonian: unknown value 'quadratik' \(did you mean 'quadratic'\?\)"):
        solve_surface_hj(m, np.zeros(92), [1.0], hamiltonian="quadratik")
    with pytest.raises(SolverInputError, match="numerical_hamiltonian: unknown value 'godunov'; valid choices are"):
        solve_surface_hj(m, np.zeros(92), [1.0], numerical_hamiltonian="godunov")
    with pytest.raises(SolverInputError, match="nu: expected a finite number >= 0"):
        solve_surface_hj(m, np.zeros(92), [1.0], nu=-0.1)
    with pytest.raises(SolverInputError, match="cfl: expected a number in"):
        solve_surface_hj(m, np.zeros(92), [1.0], cfl=1.5)
    with pytest.raises(SolverInputError, match="times: expected strictly increasing"):
        solve_surface_hj(m, np.zeros(92), [1.0, 0.5])
    opened = user_mesh(m.vertices, m.triangles[1:], require_closed=False)
    with pytest.raises(SolverInputError, match="solve_surface_hj needs a closed surface, but edge"):
        solve_surface_hj(opened, np.zeros(92), [1.0])
    # a flat triangular bipyramid: the angles at the poles are ~119°, so the equatorial edges are not Delaunay
    ang = 2 * np.pi * np.arange(3) / 3
    x = np.vstack([np.stack([np.cos(ang), np.sin(ang), np.zeros(3)], axis=1), [[0, 0, 0.1], [0, 0, -0.1]]])
    tris = [[0, 1, 3], [1, 2, 3], [2, 0, 3], [1, 0, 4], [2, 1, 4], [0, 2, 4]]
    with pytest.raises(SolverInputError, match=r"positive cotangent weights, but edge \(0, 1\) has weight -"):
        solve_surface_hj(user_mesh(x, tris), np.zeros(5), [1.0])
