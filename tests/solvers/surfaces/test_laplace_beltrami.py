"""P1 Laplace–Beltrami with lumped mass (basix tabulation): kernels against NumPy references, the
cotangent formula, spherical-harmonic decay rates of the heat equation, conservation, results
saved with their mesh."""

import numpy as np
import pytest

from solvers.errors import SolverInputError
from solvers.surfaces import icosphere, torus, user_mesh
from solvers.surfaces.fem import LaplaceBeltrami, P1Reference, p1_triangle_kernel, p1_triangle_reference, solve_surface_heat

# homogeneous harmonic polynomials of degree l: their restrictions to the unit sphere are spherical harmonics
HARMONICS = {1: lambda x, y, z: z, 2: lambda x, y, z: x * y, 3: lambda x, y, z: x**3 - 3 * x * y**2}


def test_triangle_kernel_matches_numpy_reference():
    m = torus(2.0, 1.0, 30, 14)
    for degree in (1, 2, 4):
        ref = P1Reference(degree)
        k = m.n_triangles
        out = [np.empty((k, 3, 3)), np.empty((k, 3)), np.empty((k, 3, 3)), np.empty(k)]
        p1_triangle_kernel(m.vertices, m.triangles, ref.weights, ref.phi, ref.dphi, *out)
        for a, b in zip(out, p1_triangle_reference(m.vertices, m.triangles, ref)):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(out[3], m.areas, rtol=1e-12)
        np.testing.assert_allclose(out[1], np.repeat(m.areas[:, None] / 3, 3, axis=1), rtol=1e-12)


def test_stiffness_is_the_cotangent_formula():
    m = torus(2.0, 1.0, 30, 14)
    op = LaplaceBeltrami(m)
    for c in range(3):  # K_ab = -cot(angle opposite ab)/2
        np.testing.assert_allclose(op.stiffness[:, (c + 1) % 3, (c + 2) % 3], -0.5 / np.tan(m.angles[:, c]), rtol=1e-10)
    # gradients of the basis: ∇φ_a · (x_b - x_a') = δ_ab - δ_a'b along the triangle
    t, g = m.triangles, op.gradients
    for a in range(3):
        for b in range(3):
            d = np.einsum("kd,kd->k", g[:, a], m.vertices[t[:, b]] - m.vertices[t[:, 0]])
            np.testing.assert_allclose(d, float(a == b) - float(a == 0), atol=1e-12)


def test_apply_matches_reference_and_annihilates_constants():
    rng = np.random.default_rng(1)
    for m in (torus(2.0, 1.0, 30, 14), icosphere(6)):
        op = LaplaceBeltrami(m)
        u = rng.standard_normal(m.n_vertices)
        np.testing.assert_allclose(op.apply(u), op.apply_reference(u), rtol=1e-12, atol=1e-10)
        assert np.abs(op.apply(np.full(m.n_vertices, 3.0))).max() < 1e-12
        v = rng.standard_normal(m.n_vertices)  # symmetric in the M inner product, negative semidefinite
        assert abs((op.mass * v * op.apply(u)).sum() - (op.mass * u * op.apply(v)).sum()) < 1e-10
        assert (op.mass * u * op.apply(u)).sum() < 0


def test_heat_decay_rates_of_spherical_harmonics_within_one_percent():
    """u_t = ν Δu, u0 = Y_l  ->  u = e^{-l(l+1)νt} Y_l.  Measured rate by projection on Y_l."""
    m = icosphere(16)  # 2562 vertices
    nu, t = 0.1, 0.5
    op = LaplaceBeltrami(m)
    x, y, z = m.vertices.T
    for l, Y in HARMONICS.items():
        y0 = Y(x, y, z)
        sol = solve_surface_heat(m, Y, [t / 2, t], nu=nu)
        for k, tk in enumerate(sol.times):
            rate = -np.log((op.mass * y0 * sol.values[k]).sum() / (op.mass * y0 * y0).sum()) / tk
            assert abs(rate / (l * (l + 1) * nu) - 1) < 0.01, (l, tk, rate)
        assert sol.times[-1] == t


def test_eigenvalue_error_is_second_order():
    errs = []
    for n in (8, 16):
        m = icosphere(n)
        op = LaplaceBeltrami(m)
        y = HARMONICS[3](*m.vertices.T)
        errs.append(abs(-(op.mass * y * op.apply(y)).sum() / (op.mass * y * y).sum() / 12 - 1))
    order = np.log2(errs[0] / errs[1])
    assert 1.8 < order < 2.2, (errs, order)


def test_heat_conserves_the_mean_and_is_monotone():
    m = torus(2.0, 1.0, 40, 18)
    op = LaplaceBeltrami(m)
    u0 = np.where(m.vertices[:, 0] > 1.0, 1.0, 0.0)
    sol = solve_surface_heat(m, u0, [0.1, 0.3], nu=0.5, integrator="euler", cfl=1.0)
    mass0 = (op.mass * u0).sum()
    for v in sol.values:
        assert abs((op.mass * v).sum() - mass0) < 1e-13 * max(1.0, mass0) * 10
        assert v.min() >= -1e-14 and v.max() <= 1 + 1e-14  # maximum principle
    assert sol.values[-1].max() < 1.0
    energy = [(op.mass * v * v).sum() for v in (u0, *sol.values)]  # the L2 norm decays
    assert energy[0] > energy[1] > energy[2]


def test_heat_bad_input():
    m = icosphere(3)
    with pytest.raises(SolverInputError, match=r"u0: expected one value per vertex, shape \(92,\), found \(91,\)"):
        solve_surface_heat(m, np.zeros(91), [1.0], nu=1.0)
    with pytest.raises(SolverInputError, match="nu: expected a finite number > 0"):
        solve_surface_heat(m, np.zeros(92), [1.0], nu=-1.0)
    with pytest.raises(SolverInputError, match="integrator: unknown value 'rk4'"):
        solve_surface_heat(m, np.zeros(92), [1.0], nu=1.0, integrator="rk4")
    opened = user_mesh(m.vertices, m.triangles[1:], require_closed=False)
    with pytest.raises(SolverInputError, match="solve_surface_heat needs a closed surface"):
        solve_surface_heat(opened, np.zeros(92), [1.0], nu=1.0)
    with pytest.raises(SolverInputError, match=r"u0: expected finite values, found nan at vertex 3"):
        solve_surface_heat(m, np.where(np.arange(92) == 3, np.nan, 0.0), [1.0], nu=1.0)
