"""Finite volumes on surfaces: compiled stage against the NumPy reference, conservation to round-off,
Burgers along the rotation field against the characteristic solution before the shock (observed order
about 1), bad input."""

import numpy as np
import pytest

from solvers.errors import SolverInputError
from solvers.surfaces import icosphere, torus
from solvers.surfaces.finite_volumes import (
    SurfaceConservation,
    SurfaceFVSettings,
    cell_averages,
    point_flux,
    point_flux_reference,
    rotation,
    solve_surface_conservation,
)


def burgers_on_latitudes(x, y, z, t):
    """q_t + ∂_φ(q²/2) = 0 on every circle of latitude (V = e_z × x), q0 = y = ρ sin φ:
    q = ρ sin(φ - q t), the unique root for ρ t < 1 (before the first shock at t = 1 on the equator)."""
    rho, ph = np.hypot(x, y), np.arctan2(y, x)
    q = rho * np.sin(ph)
    for _ in range(60):
        q = q - (q - rho * np.sin(ph - q * t)) / (1 + rho * t * np.cos(ph - q * t))
    assert np.abs(q - rho * np.sin(ph - q * t)).max() < 1e-13
    return q


@pytest.mark.parametrize("flux", ["linear", "burgers"])
@pytest.mark.parametrize("numerical", ["godunov", "rusanov"])
def test_stage_kernel_matches_numpy_reference(flux, numerical):
    rng = np.random.default_rng(5)
    m = torus(2.0, 1.0, 24, 12)
    op = SurfaceConservation(m, rotation((0.2, 0.3, 1.0)), SurfaceFVSettings(flux, numerical))
    q, q0 = rng.standard_normal((2, m.n_triangles))
    out = np.empty_like(q)
    op.stage(q, q0, out, 0.25, 0.75, 1e-2)
    np.testing.assert_allclose(out, op.stage_reference(q, q0, 0.25, 0.75, 1e-2), rtol=1e-12, atol=1e-13)
    a, ql, qr = rng.standard_normal((3, 200))
    compiled = [point_flux(0 if flux == "linear" else 1, 0 if numerical == "godunov" else 1, *v) for v in zip(a, ql, qr)]
    np.testing.assert_allclose(compiled, point_flux_reference(flux, numerical, a, ql, qr), rtol=1e-14, atol=1e-15)


def test_numerical_fluxes_are_consistent_and_monotone():
    rng = np.random.default_rng(6)
    for flux, f in (("linear", lambda q: q), ("burgers", lambda q: 0.5 * q * q)):
        for num in ("godunov", "rusanov"):
            a, q, d = rng.standard_normal((3, 500))
            np.testing.assert_allclose(point_flux_reference(flux, num, a, q, q), a * f(q), rtol=1e-13, atol=1e-15)
            d = np.abs(d) * 0.1  # non-decreasing in q_L, non-increasing in q_R
            assert (point_flux_reference(flux, num, a, q + d, q) >= point_flux_reference(flux, num, a, q, q) - 1e-14).all()
            assert (point_flux_reference(flux, num, a, q, q + d) <= point_flux_reference(flux, num, a, q, q) + 1e-14).all()


def test_mass_is_conserved_to_round_off_through_shocks():
    m = icosphere(10)
    q0 = lambda x, y, z: 0.5 + y + 0.3 * z**2  # noqa: E731
    sol = solve_surface_conservation(m, q0, [1.0, 2.0, 4.0], velocity=rotation((0.1, 0.2, 1.0)))
    mass0 = m.areas @ cell_averages(m, q0)
    scale = m.areas @ np.abs(sol.values[-1])
    for v in sol.values:
        assert abs(m.areas @ v - mass0) < 1e-14 * scale * np.sqrt(sol.steps), (m.areas @ v - mass0)
    # a shock formed (t > 1): the largest jump across an edge is O(1), not O(h)
    L, R = m.edge_triangles.T
    assert np.abs(sol.values[-1][L] - sol.values[-1][R]).max() > 0.3
    # an arbitrary (not tangent, not divergence-free) field on a torus: still conservative
    mt = torus(2.0, 1.0, 30, 14)
    vel = lambda x, y, z: np.stack([np.sin(z) + 0.3, x * y / 4, np.cos(x)])  # noqa: E731
    st = solve_surface_conservation(mt, lambda x, y, z: 1 + np.sin(x + 2 * z), [0.5, 1.5], velocity=vel,
                                    flux="linear", numerical_flux="rusanov", integrator="ssprk2")
    m0 = mt.areas @ cell_averages(mt, lambda x, y, z: 1 + np.sin(x + 2 * z))
    assert np.abs(st.values @ mt.areas - m0).max() < 1e-14 * abs(m0) * np.sqrt(st.steps)


def _burgers_error(n, t=0.5):
    m = icosphere(n)
    sol = solve_surface_conservation(m, lambda x, y, z: y, [t], velocity=rotation())
    exact = cell_averages(m, lambda x, y, z: burgers_on_latitudes(x, y, z, t))
    return m.h, float(m.areas @ np.abs(sol.values[-1] - exact) / m.area)


def test_burgers_along_rotation_against_characteristics_first_order():
    (h1, e1), (h2, e2) = _burgers_error(8), _burgers_error(16)
    assert e2 < 8e-3, e2
    order = np.log(e1 / e2) / np.log(h1 / h2)
    assert 0.75 < order < 1.3, (e1, e2, order)


def test_bad_input():
    m = icosphere(3)
    with pytest.raises(SolverInputError, match="flux: unknown value 'burger' \\(did you mean 'burgers'\\?\\)"):
        solve_surface_conservation(m, lambda x, y, z: y, [1.0], velocity=rotation(), flux="burger")
    with pytest.raises(SolverInputError, match="numerical_flux: unknown value 'roe'"):
        solve_surface_conservation(m, lambda x, y, z: y, [1.0], velocity=rotation(), numerical_flux="roe")
    with pytest.raises(SolverInputError, match=r"q0: expected one value per triangle, shape \(180,\), found \(92,\)"):
        solve_surface_conservation(m, np.zeros(92), [1.0], velocity=rotation())
    with pytest.raises(SolverInputError, match=r"velocity: expected V\(x, y, z\) to return 3 components"):
        solve_surface_conservation(m, lambda x, y, z: y, [1.0], velocity=lambda x, y, z: x)
    with pytest.raises(SolverInputError, match="omega: expected a finite 3-vector"):
        rotation((0, 1))
    with pytest.raises(SolverInputError, match="transport speed vanishes"):
        solve_surface_conservation(m, lambda x, y, z: y, [1.0], velocity=rotation((0, 0, 0)))
    with pytest.raises(SolverInputError, match=r"q0: expected finite values, found nan in triangle 0"):
        solve_surface_conservation(m, lambda x, y, z: np.where(x == x, np.nan, 0), [1.0], velocity=rotation())
