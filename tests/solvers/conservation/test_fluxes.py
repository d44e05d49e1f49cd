"""Numerical fluxes and limiters: compiled vs NumPy reference, and against their definitions."""

import functools
import math

import numpy as np
import pytest

from solvers.conservation import numerical_fluxes as nfm
from solvers.errors import SolverInputError
from solvers.conservation import BURGERS, ConvexFlux, get_flux, recompile_with
from solvers.conservation.numerical_fluxes import NUMERICAL_FLUXES, numerical_flux_code, numerical_flux_reference
from solvers.conservation.reconstruction import LIMITERS, limited_slope, limited_slope_reference, limiter_code, reconstruction_code

QUARTIC = ConvexFlux.from_functions("quartic", lambda q: 0.25 * q**4, lambda q: q**3, 0.0)
SHIFTED = ConvexFlux.from_functions("shifted", lambda q: (q - 0.3) ** 2 + math.exp(q - 0.3) - (q - 0.3),
                                    lambda q: 2 * (q - 0.3) + math.exp(q - 0.3) - 1.0, 0.3)


@functools.lru_cache(maxsize=None)
def compiled_numerical_flux(flux):
    """The module's numerical_flux with ``flux`` substituted (as the kernels do for a user flux)."""
    if flux.builtin:
        return nfm.numerical_flux
    overrides = dict(flux_value=flux.f, flux_derivative=flux.df, SONIC=flux.sonic)
    for fn in nfm.COMPILED:
        overrides[fn.py_func.__name__] = recompile_with(fn, overrides)
    return overrides["numerical_flux"]


def states(n=400, seed=1):
    rng = np.random.default_rng(seed)
    ql = rng.uniform(-2, 2, n)
    qr = rng.uniform(-2, 2, n)
    ql[:20] = qr[:20]  # equal states
    ql[20:40], qr[20:40] = -np.abs(ql[20:40]), np.abs(qr[20:40])  # transonic rarefactions
    ql[40:60], qr[40:60] = np.abs(ql[40:60]), -np.abs(qr[40:60])  # transonic shocks
    return ql, qr


@pytest.mark.parametrize("flux", [BURGERS, QUARTIC, SHIFTED], ids=lambda f: f.name)
@pytest.mark.parametrize("name", sorted(NUMERICAL_FLUXES))
def test_compiled_flux_matches_reference(flux, name):
    F = compiled_numerical_flux(flux)
    ql, qr = states()
    compiled = np.array([F(NUMERICAL_FLUXES[name], a, b) for a, b in zip(ql, qr)])
    ref = numerical_flux_reference(name, flux, ql, qr)
    assert np.abs(compiled - ref).max() <= 1e-14 * np.abs(ref).max()


@pytest.mark.parametrize("flux", [BURGERS, QUARTIC, SHIFTED], ids=lambda f: f.name)
def test_godunov_is_the_min_or_max_of_f_between_the_states(flux):
    """Godunov: min of f on [qL, qR] if qL <= qR, max on [qR, qL] otherwise (checked on a fine sampling)."""
    ql, qr = states(200, seed=2)
    F = numerical_flux_reference("godunov", flux, ql, qr)
    for a, b, value in zip(ql, qr, F):
        s = np.linspace(min(a, b), max(a, b), 4001)
        s = np.append(s, np.clip(flux.sonic, min(a, b), max(a, b)))
        fs = flux.value(s)
        expected = fs.min() if a <= b else fs.max()
        assert value == pytest.approx(expected, rel=1e-12, abs=1e-13)


@pytest.mark.parametrize("flux", [BURGERS, QUARTIC], ids=lambda f: f.name)
def test_engquist_osher_is_the_upwind_integral(flux):
    """EO: F = (f(qL) + f(qR))/2 - (1/2) int_qL^qR |f'(q)| dq (Gauss–Legendre, exact for these polynomials)."""
    ql, qr = states(100, seed=3)
    F = numerical_flux_reference("engquist_osher", flux, ql, qr)
    nodes, weights = np.polynomial.legendre.leggauss(8)
    for a, b, value in zip(ql, qr, F):
        total = 0.0
        pieces = [a, b] if not (min(a, b) < flux.sonic < max(a, b)) else [a, flux.sonic, b]
        for lo, hi in zip(pieces[:-1], pieces[1:]):
            x = 0.5 * (hi + lo) + 0.5 * (hi - lo) * nodes
            total += 0.5 * (hi - lo) * np.sum(weights * np.abs(flux.derivative(x)))
        expected = 0.5 * (flux.value(a) + flux.value(b)) - 0.5 * total
        assert value == pytest.approx(float(expected), rel=1e-12, abs=1e-13)


@pytest.mark.parametrize("flux", [BURGERS, QUARTIC, SHIFTED], ids=lambda f: f.name)
@pytest.mark.parametrize("name", sorted(NUMERICAL_FLUXES))
def test_fluxes_are_consistent_and_monotone(flux, name):
    q = np.linspace(-2, 2, 81)
    assert np.abs(numerical_flux_reference(name, flux, q, q) - flux.value(q)).max() <= 1e-14 * 4
    ql, qr = np.meshgrid(q, q, indexing="ij")
    F = numerical_flux_reference(name, flux, ql, qr)
    assert (np.diff(F, axis=0) >= -1e-13).all()  # non-decreasing in qL
    assert (np.diff(F, axis=1) <= 1e-13).all()  # non-increasing in qR


def test_godunov_is_exact_at_the_sonic_point():
    """A transonic rarefaction (qL < qs < qR) gets f(qs); Rusanov adds dissipation there."""
    assert nfm.numerical_flux(nfm.GODUNOV, -1.0, 2.0) == 0.0
    assert nfm.numerical_flux(nfm.ENGQUIST_OSHER, -1.0, 2.0) == 0.0
    assert nfm.numerical_flux(nfm.RUSANOV, -1.0, 2.0) == pytest.approx(0.5 * (0.5 + 2.0) - 0.5 * 2.0 * 3.0)


@pytest.mark.parametrize("limiter", sorted(LIMITERS))
def test_limiters_match_reference_and_lie_in_the_tvd_region(limiter):
    rng = np.random.default_rng(4)
    a = rng.normal(size=500)
    b = rng.normal(size=500)
    a[:50] = 0.0
    b[50:100] = -a[50:100]
    compiled = np.array([limited_slope(LIMITERS[limiter], x, y) for x, y in zip(a, b)])
    ref = limited_slope_reference(limiter, a, b)
    assert np.abs(compiled - ref).max() <= 1e-15
    # TVD region (Sweby): with r = a/b, 0 <= phi <= min(2r, 2) where phi = slope / b; zero at extrema
    same = a * b > 0
    assert (compiled[~same] == 0.0).all()
    phi = compiled[same] / b[same]
    r = a[same] / b[same]
    assert (phi >= 0).all() and (phi <= np.minimum(2 * r, 2) + 1e-14).all()
    # symmetric: phi(a, b) = phi(b, a)
    swapped = np.array([limited_slope(LIMITERS[limiter], y, x) for x, y in zip(a, b)])
    assert np.abs(swapped - compiled).max() <= 1e-15


def test_limiter_values():
    assert limited_slope(LIMITERS["minmod"], 1.0, 3.0) == 1.0
    assert limited_slope(LIMITERS["mc"], 1.0, 3.0) == 2.0  # min(2, 2, 6)
    assert limited_slope(LIMITERS["mc"], 1.0, 1.5) == 1.25  # the central slope
    assert limited_slope(LIMITERS["van_leer"], 1.0, 3.0) == 1.5


def test_unknown_names_list_the_valid_ones():
    with pytest.raises(SolverInputError, match="numerical_flux: unknown value 'hll'.*'engquist_osher', 'godunov', 'rusanov'"):
        numerical_flux_code("hll")
    with pytest.raises(SolverInputError, match="limiter: unknown value 'minmodd' \\(did you mean 'minmod'\\?\\)"):
        limiter_code("minmodd")
    with pytest.raises(SolverInputError, match="reconstruction: unknown value 'eno'"):
        reconstruction_code("eno")
    with pytest.raises(SolverInputError, match="numerical_flux: unknown value 'roe'"):
        numerical_flux_reference("roe", BURGERS, [0.0], [1.0])
    with pytest.raises(SolverInputError, match="flux: unknown flux 'quartic'; valid built-in fluxes are 'burgers'"):
        get_flux("quartic")


def test_convex_flux_validation():
    with pytest.raises(SolverInputError, match="flux sonic: expected a finite minimiser"):
        ConvexFlux.from_functions("exp", lambda q: math.exp(q), lambda q: math.exp(q), -math.inf)
    with pytest.raises(SolverInputError, match="flux f: expected a numba.njit-compiled"):
        ConvexFlux("raw", lambda q: q, BURGERS.df, 0.0)
    with pytest.raises(SolverInputError, match="flux f: expected a Python function .* found ufunc"):
        ConvexFlux.from_functions("ufunc", np.exp, np.exp, -30.0)
    with pytest.raises(SolverInputError, match="expected a convex flux"):
        ConvexFlux.from_functions("cubic", lambda q: q**3, lambda q: 3 * q * q, 0.0)
    with pytest.raises(SolverInputError, match="flux: expected a flux name or a ConvexFlux"):
        get_flux(3)
