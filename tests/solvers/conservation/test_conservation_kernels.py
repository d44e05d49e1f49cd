"""Compiled conservation-law stage kernels against their NumPy reference (to round-off)."""

import numba
import numpy as np
import pytest

from solvers.conservation import kernels as ck
from solvers.grid import BoundaryConditions, fill_ghosts
from solvers.conservation.diffusion import ImplicitDiffusion, diffusion_rhs_reference, face_average
from solvers.conservation import BURGERS, ConvexFlux
from solvers.grid import Grid
from solvers.conservation import NUMERICAL_FLUXES
from solvers.conservation import LIMITERS, RECONSTRUCTIONS

QUARTIC = ConvexFlux.from_functions("quartic", lambda q: 0.25 * q**4, lambda q: q**3, 0.0)


@numba.njit
def logistic_source(q, c):
    return c * q * (1.0 - q)


def _setup(grid, rng, nu):
    bc = BoundaryConditions.parse("periodic", grid.ndim)
    q = grid.pad(rng.uniform(-1.0, 1.5, grid.shape))
    fill_ghosts(q, grid.ghost, bc)
    q0 = grid.pad(rng.uniform(-1.0, 1.0, grid.shape))
    a_cells = [grid.pad(rng.uniform(0.5, 2.0, grid.shape)) for _ in range(grid.ndim)]
    for a in a_cells:
        fill_ghosts(a, grid.ghost, bc)
    D = grid.pad(rng.uniform(0.0, 1.0, grid.shape))
    fill_ghosts(D, grid.ghost, bc)
    a_faces = [face_average(a_cells[k], k) for k in range(grid.ndim)]
    nud = [nu * face_average(D, k) for k in range(grid.ndim)]
    arate = grid.zeros()
    inner = np.zeros(grid.shape)
    for k in range(grid.ndim):
        af = np.moveaxis(a_faces[k], k, 0)
        full = np.maximum(af[:-1], af[1:])  # cell i: faces i-1/2 (entry i-1) and i+1/2 (entry i)
        sel = [slice(grid.ghost, grid.ghost + n) for n in grid.cells]
        sel[k] = slice(grid.ghost - 1, grid.ghost - 1 + grid.cells[k])
        inner += np.moveaxis(full, 0, k)[tuple(sel)] / grid.dx[k]
    arate[grid.interior] = inner
    sfield = grid.pad(rng.uniform(-1.0, 1.0, grid.shape))
    return q, q0, a_faces, nud, arate, sfield


def _run_kernel(kernels, grid, q, q0, a_faces, nud, arate, sfield, nf, rc, lc, src, alpha, beta, dt):
    out = grid.zeros()
    g = grid.ghost
    has_diff = nud[0].max() > 0
    if grid.ndim == 1:
        rate = kernels.stage_1d(q, q0, out, alpha, beta, dt, g, grid.dx[0], a_faces[0], nud[0], has_diff, nf, rc, lc,
                                src, sfield, arate)
    elif grid.ndim == 3:
        planes = [np.zeros(grid.padded_shape[1:]) for _ in range(2)]
        rows = [np.zeros(grid.padded_shape[2]) for _ in range(2)]
        rate = kernels.stage_3d(q, q0, out, alpha, beta, dt, g, *grid.dx, *a_faces, *nud, has_diff, nf, rc, lc, src,
                                sfield, arate, *planes, *rows)
    else:
        row, slope = np.zeros(grid.padded_shape[1]), np.zeros(grid.padded_shape[1])
        rate = kernels.stage_2d(q, q0, out, alpha, beta, dt, g, grid.dx[0], grid.dx[1], a_faces[0], a_faces[1],
                                nud[0], nud[1], has_diff, nf, rc, lc, src, sfield, arate, row, slope)
    return out[grid.interior], rate


@pytest.mark.parametrize("ndim", [1, 2, 3])
@pytest.mark.parametrize("numerical_flux", sorted(NUMERICAL_FLUXES))
@pytest.mark.parametrize("reconstruction,limiter",
                         [("first_order", "minmod"), ("weno5", "minmod")] + [("muscl", l) for l in sorted(LIMITERS)])
def test_stage_kernel_matches_reference(ndim, numerical_flux, reconstruction, limiter):
    rng = np.random.default_rng(7)
    grid = {1: Grid.line(37), 2: Grid((0.0, 0.0), (1.0, 2.0), (13, 11)), 3: Grid((0, 0, 0), (1, 2, 1.5), (7, 6, 5))}[ndim]
    q, q0, a_faces, nud, arate, sfield = _setup(grid, rng, nu=0.05)
    args = (NUMERICAL_FLUXES[numerical_flux], RECONSTRUCTIONS[reconstruction], LIMITERS[limiter], ck.LINEAR_SOURCE,
            0.25, 0.75, 1e-3)
    out, rate = _run_kernel(ck.kernels_for(BURGERS), grid, q, q0, a_faces, nud, arate, sfield, *args)
    ref, ref_rate = ck.stage_reference(q, q0, 0.25, 0.75, 1e-3, grid.ghost, grid.dx, a_faces, nud, numerical_flux,
                                       reconstruction, limiter, BURGERS, ck.LINEAR_SOURCE, sfield, arate)
    scale = np.abs(ref).max()
    assert np.abs(out - ref).max() <= 1e-13 * scale
    assert rate == pytest.approx(ref_rate, rel=1e-13)
    # the fused diffusion changes the result (the comparison would be blind to it otherwise)
    no_diff = ck.stage_reference(q, q0, 0.25, 0.75, 1e-3, grid.ghost, grid.dx, a_faces, None, numerical_flux,
                                 reconstruction, limiter, BURGERS, ck.LINEAR_SOURCE, sfield, arate)[0]
    assert np.abs(no_diff - ref).max() > 1e3 * 1e-13 * scale


@pytest.mark.parametrize("ndim", [1, 2, 3])
def test_user_flux_and_source_kernels_match_reference(ndim):
    """A user flux (q^4/4) and a user source reach the same kernel source by recompilation."""
    rng = np.random.default_rng(3)
    grid = {1: Grid.line(29), 2: Grid((0.0, 0.0), (1.0, 1.0), (9, 12)), 3: Grid((0, 0, 0), (1, 1, 1), (5, 6, 4))}[ndim]
    q, q0, a_faces, nud, arate, sfield = _setup(grid, rng, nu=0.02)
    kernels = ck.kernels_for(QUARTIC, logistic_source)
    for name in NUMERICAL_FLUXES:
        args = (NUMERICAL_FLUXES[name], RECONSTRUCTIONS["weno5"], LIMITERS["mc"], ck.USER_SOURCE, 0.0, 1.0, 2e-3)
        out, rate = _run_kernel(kernels, grid, q, q0, a_faces, nud, arate, sfield, *args)
        ref, ref_rate = ck.stage_reference(q, q0, 0.0, 1.0, 2e-3, grid.ghost, grid.dx, a_faces, nud, name, "weno5",
                                           "mc", QUARTIC, ck.USER_SOURCE, sfield, arate, logistic_source)
        assert np.abs(out - ref).max() <= 1e-13 * np.abs(ref).max()
        assert rate == pytest.approx(ref_rate, rel=1e-13)
        burgers_out, _ = _run_kernel(ck.kernels_for(BURGERS), grid, q, q0, a_faces, nud, arate, sfield,
                                     *args[:3], ck.NO_SOURCE, *args[4:])
        assert np.abs(burgers_out - out).max() > 1e-3  # the flux really was substituted


def test_kernel_reports_nan_early():
    grid = Grid.line(20)
    q = grid.pad(np.linspace(-1, 1, 20))
    q[grid.ghost + 7] = np.nan
    fill_ghosts(q, grid.ghost, BoundaryConditions.parse("outflow", 1))
    out = grid.zeros()
    ones = np.ones(grid.padded_shape)
    assert np.isnan(ck.stage_1d(q, q, out, 0.0, 1.0, 1e-3, grid.ghost, grid.dx[0], ones, ones * 0, False, 0, 1, 0, 0,
                                ones * 0, ones))


@pytest.mark.parametrize("spec", [
    "periodic", "outflow", [("dirichlet", 0.7), "reflecting"], ["symmetric", [("dirichlet", -0.3), "outflow"]],
])
@pytest.mark.parametrize("ndim", [1, 2])
def test_implicit_diffusion_operator_matches_explicit_reference(spec, ndim):
    """L q + b of the sparse operator equals the ghost-cell explicit diffusion for every boundary kind."""
    if ndim == 1 and isinstance(spec, list):
        spec = spec[0] if not isinstance(spec[0], str) or spec[0] != "symmetric" else "symmetric"
    rng = np.random.default_rng(5)
    grid = Grid.line(15) if ndim == 1 else Grid((0.0, 0.0), (1.0, 1.5), (7, 9))
    bc = BoundaryConditions.parse(spec, ndim)
    D = grid.pad(rng.uniform(0.2, 1.0, grid.shape))
    # coefficients are padded periodically on periodic axes (as the driver does), by the edge value otherwise
    fill_ghosts(D, grid.ghost, BoundaryConditions.parse(["periodic" if p else "outflow" for p in bc.periodic], ndim))
    nud = [0.3 * face_average(D, k) for k in range(ndim)]
    q = grid.pad(rng.normal(size=grid.shape))
    fill_ghosts(q, grid.ghost, bc)
    op = ImplicitDiffusion(grid, nud, bc)
    explicit = diffusion_rhs_reference(q, grid, nud)
    assert np.abs(op.apply(q[grid.interior]) - explicit).max() <= 1e-12 * np.abs(explicit).max()


def test_max_abs_matches_its_numpy_reference():
    values = np.random.default_rng(5).normal(size=1001)
    assert ck.max_abs(values) == np.max(np.abs(values))
    assert ck.max_abs(np.zeros(0)) == 0.0
    values[7] = -np.inf  # the bit-pattern maximum: inf above every finite value, NaN above inf
    assert ck.max_abs(values) == np.inf
    values[500] = np.nan
    assert np.isnan(ck.max_abs(values))
    tiny = np.array([-5e-324, 0.0, -0.0, 2.2250738585072014e-308, -1.0000000000000002])  # subnormal, signed zeros
    assert ck.max_abs(tiny) == np.max(np.abs(tiny)) and ck.max_abs(-tiny[:3]) == 5e-324
