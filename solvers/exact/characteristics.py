"""Smooth Burgers solutions by characteristics, and the first shock time (docs/theory.md §1, §5).

Burgers ``u_t + u u_x = 0`` with smooth data ``u0`` is constant along the characteristics
``x = y + t u0(y)``, so before the first shock

    u(x, t) = u0(y),     y + t u0(y) = x,          u_x(x, t) = u0'(y) / (1 + t u0'(y)).

The foot ``y`` solves ``F(y) = y + t u0(y) − x = 0``; while ``1 + t u0' > 0`` everywhere
(``t < t*``) F is strictly increasing, so the root is unique.  It is found per point by a
*bracketed Newton* iteration: a bracket ``[lo, hi]`` with ``F(lo) < 0 < F(hi)`` is grown by
doubling around the guess ``x − t u0(x)``, then Newton steps are taken when they stay inside
the bracket and bisection steps otherwise, until ``|F|`` is at round-off level.

The characteristics first cross at

    t* = −1 / min_y u0'(y)                 (velocity data, Burgers; ∞ if u0' ≥ 0)
    γ* = −1 / inf_y λ_min(∇² u0(y))        (potential data, Hamilton–Jacobi with H = ½|p|²)

(docs/theory.md §1; sine data ``A sin(2πx) + c`` gives ``t* = 1/(2πA)``).  :func:`first_shock_time`
accepts the data as a callable or as samples; how derivatives are obtained is stated there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from solvers.errors import SolverInputError, require_choice, require_finite, require_positive

_EPS = np.finfo(np.float64).eps


def _cell(period):
    """``period`` as ``(lower, length)``: a float L means the cell [0, L), a pair (a, b) the cell [a, b)."""
    if period is None:
        return None
    p = np.atleast_1d(np.asarray(period, dtype=np.float64))
    if p.size == 1:
        return 0.0, require_positive("period", p[0])
    if p.size == 2 and np.all(np.isfinite(p)) and p[1] > p[0]:
        return float(p[0]), float(p[1] - p[0])
    raise SolverInputError(f"period: expected a length L > 0 or a cell (lower, upper) with upper > lower, found {period!r}")


def _wrapped(func: Callable, cell):
    if cell is None:
        return lambda y: np.asarray(func(y), dtype=np.float64)
    a, L = cell
    return lambda y: np.asarray(func(a + np.mod(y - a, L)), dtype=np.float64)


def _check_callable(name: str, func) -> None:
    if not callable(func):
        raise SolverInputError(f"{name}: expected a callable of a NumPy array, found {type(func).__name__}")


def characteristic_foot(u0: Callable, x, t: float, du0: Callable | None = None, period=None) -> np.ndarray:
    """Foot ``y`` of the characteristic through ``(x, t)``: the root of ``y + t u0(y) = x``.

    ``u0`` (and ``du0`` = u0', optional: a central difference is used otherwise) are
    vectorised callables; with ``period`` they are evaluated on the periodic cell only.
    Raises if the characteristic map is not increasing (checked at the roots and on 4097
    samples between the extreme feet), i.e. if ``t`` is at or past the first shock time.
    """
    _check_callable("u0", u0)
    if du0 is not None:
        _check_callable("du0", du0)
    x = require_finite("x", x)
    t = float(require_finite("t", t))
    if t < 0:
        raise SolverInputError(f"t: expected a time >= 0, found {t!r}")
    cell = _cell(period)
    g = _wrapped(u0, cell)
    if du0 is not None:
        dg = _wrapped(du0, cell)
    else:
        def dg(y):
            h = _EPS ** (1 / 3) * (1.0 + np.abs(y))
            return (g(y + h) - g(y - h)) / (2 * h)
    if t == 0.0 or x.size == 0:
        return x.copy()
    flat = x.ravel()
    F = lambda y: y + t * g(y) - flat
    y = flat - t * g(flat)
    step = np.maximum(t * np.abs(g(flat)), 1e-3 * (1.0 + np.abs(flat)))
    lo, hi = y - step, y + step
    for _ in range(200):
        bad_lo, bad_hi = F(lo) > 0, F(hi) < 0
        if not (bad_lo.any() or bad_hi.any()):
            break
        step = np.where(bad_lo | bad_hi, 2 * step, step)
        lo = np.where(bad_lo, lo - step, lo)
        hi = np.where(bad_hi, hi + step, hi)
    else:
        raise SolverInputError("u0: could not bracket the characteristic foot; is u0 bounded and finite?")
    y = np.clip(y, lo, hi)
    tol = 4 * _EPS * (np.abs(flat) + t * np.abs(g(y)) + 1.0)
    for _ in range(200):
        r = F(y)
        done = np.abs(r) <= tol
        if done.all():
            break
        lo = np.where(r < 0, y, lo)
        hi = np.where(r > 0, y, hi)
        slope = 1.0 + t * dg(y)
        with np.errstate(divide="ignore", invalid="ignore"):
            newton = y - r / slope
        inside = np.isfinite(newton) & (newton > lo) & (newton < hi)
        y_new = np.where(inside, newton, 0.5 * (lo + hi))
        stuck = (hi - lo) <= 2 * _EPS * (np.abs(lo) + np.abs(hi))
        y = np.where(done | stuck, y, y_new)
        if (done | stuck).all():
            break
    # The map y -> y + t u0(y) must be increasing on the range of feet (else characteristics from
    # that range have crossed and the root found is one branch of a multivalued solution).
    lo_y, hi_y = float(y.min()), float(y.max())
    if cell is not None and hi_y - lo_y >= cell[1]:
        lo_y, hi_y = cell[0], cell[0] + cell[1]
    ys = np.concatenate([y, np.linspace(lo_y, hi_y, 4097)])
    jac = 1.0 + t * dg(ys)
    if np.any(jac <= 0):
        i = int(np.argmax(jac <= 0))
        raise SolverInputError(
            f"t: {t!r} is at or past the first shock time: the characteristic map y -> y + t u0(y) is not "
            f"invertible at y = {ys[i]!r} (1 + t u0'(y) = {jac[i]!r}); use first_shock_time"
        )
    return y.reshape(x.shape)


def burgers_smooth(u0: Callable, du0: Callable | None, x, t: float, period=None) -> np.ndarray:
    """Smooth solution ``u(x, t) = u0(y)``, ``y + t u0(y) = x`` of inviscid Burgers, valid for ``t < t*``."""
    y = characteristic_foot(u0, x, t, du0, period)
    return _wrapped(u0, _cell(period))(y)


def burgers_smooth_slope(u0: Callable, du0: Callable, x, t: float, period=None) -> np.ndarray:
    """``u_x(x, t) = u0'(y) / (1 + t u0'(y))`` of the smooth Burgers solution (needs ``du0``)."""
    _check_callable("du0", du0)
    y = characteristic_foot(u0, x, t, du0, period)
    d = _wrapped(du0, _cell(period))(y)
    return d / (1.0 + float(t) * d)


# --------------------------------------------------------------------------------------------
# first shock time
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ShockOnset:
    """Where and when characteristics first cross.

    ``time`` is t* (∞ if they never cross), ``foot`` the initial point y* attaining the
    infimum, ``position`` the place ``y* + t* v(y*)`` (v = u0 for velocity data, ∇u0 for
    potential data) where the shock appears, ``curvature`` = min u0' (velocity) or
    inf λ_min(∇²u0) (potential).
    """

    time: float
    foot: tuple[float, ...]
    position: tuple[float, ...]
    curvature: float


def _fd1(values: np.ndarray, h: float, axis: int, periodic: bool) -> np.ndarray:
    """Fourth-order first derivative of samples (one-sided fourth-order stencils at the ends)."""
    v = np.moveaxis(values, axis, 0)
    n = v.shape[0]
    if periodic:
        d = (np.roll(v, 2, 0) - 8 * np.roll(v, 1, 0) + 8 * np.roll(v, -1, 0) - np.roll(v, -2, 0)) / (12 * h)
        return np.moveaxis(d, 0, axis)
    if n < 5:
        raise SolverInputError(f"u0: expected at least 5 samples along axis {axis} to estimate derivatives, found {n}")
    d = np.empty_like(v)
    d[2:-2] = (v[:-4] - 8 * v[1:-3] + 8 * v[3:-1] - v[4:]) / (12 * h)
    c0 = np.array([-25, 48, -36, 16, -3]) / 12.0
    c1 = np.array([-3, -10, 18, -6, 1]) / 12.0
    d[0] = np.tensordot(c0, v[:5], axes=1) / h
    d[1] = np.tensordot(c1, v[:5], axes=1) / h
    d[-1] = -np.tensordot(c0, v[-5:][::-1], axes=1) / h
    d[-2] = -np.tensordot(c1, v[-5:][::-1], axes=1) / h
    return np.moveaxis(d, 0, axis)


def _spectral_derivative(values: np.ndarray, length: float, axis: int) -> np.ndarray:
    n = values.shape[axis]
    k = 2j * np.pi * np.fft.fftfreq(n, d=length / n)
    if n % 2 == 0:
        k[n // 2] = 0.0  # the Nyquist mode has no odd derivative
    shape = [1] * values.ndim
    shape[axis] = n
    return np.real(np.fft.ifft(np.fft.fft(values, axis=axis) * k.reshape(shape), axis=axis))


def _uniform_spacing(name: str, c: np.ndarray) -> float:
    if c.ndim != 1 or c.size < 3:
        raise SolverInputError(f"{name}: expected a 1-D array of at least 3 coordinates, found shape {c.shape}")
    h = np.diff(c)
    if not (np.all(h > 0) and np.allclose(h, h[0], rtol=1e-9, atol=0)):
        raise SolverInputError(f"{name}: expected uniformly spaced, increasing coordinates")
    return float(h[0])


def _parabolic_min(v: np.ndarray, i: int, periodic: bool) -> tuple[float, float]:
    """Minimum value and sub-sample offset (in samples) of the parabola through v[i-1], v[i], v[i+1]."""
    n = v.size
    if not periodic and (i == 0 or i == n - 1):
        return float(v[i]), 0.0
    a, b, c = v[(i - 1) % n], v[i], v[(i + 1) % n]
    curv = a - 2 * b + c
    if curv <= 0:
        return float(b), 0.0
    off = 0.5 * (a - c) / curv
    return float(b - 0.25 * (a - c) * off), float(off)


def _lambda_min(hxx, hxy, hyy):
    return 0.5 * (hxx + hyy) - np.sqrt(0.25 * (hxx - hyy) ** 2 + hxy**2)


def first_shock(u0, x=None, *, data: str = "velocity", derivative: Callable | None = None, domain=None,
                period=None, samples: int = 4097) -> ShockOnset:
    """First crossing of characteristics for Burgers (``data="velocity"``) or HJ (``data="potential"``).

    ``u0`` is either

    * a vectorised callable (1-D: ``u0(x)``; 2-D: ``u0(X, Y)``, potential data only), sampled on
      ``x`` (array, or a pair of 1-D arrays in 2-D) or on ``samples`` points of ``domain``
      (``(a, b)``, or ``((a, b), (c, d))``) or of the ``period`` cell.  The needed derivative
      (u0' for velocity, u0'' for potential) is ``derivative`` if given, otherwise central
      differences of the callable (fourth-order five-point stencils; u0': step ε^{1/5}, error
      ~1e-12; u0'': step ε^{1/6}, error ~1e-10).  In 1-D the sampled minimum is then
      polished by a bounded Brent search between the neighbouring samples, so t* is exact
      to ~1e-10 relative whatever ``samples`` is, once the minimum is bracketed by the samples.
    * sampled values on uniformly spaced coordinates ``x`` (1-D array, or a pair in 2-D).
      Derivatives are spectral (FFT) when ``period`` is given (samples cover one period,
      endpoint excluded) and fourth-order finite differences otherwise (one-sided
      fourth-order at the ends), so the error is O(h⁴) (spectral for periodic data); the
      minimum over samples is refined by a parabola through the three samples around it
      (error O(h³) in the minimum value instead of O(h²)).

    In 2-D ``period`` is one length or a pair of lengths (Lx, Ly) of the sampled cell.

    ``data="slope"``: ``u0`` already *is* the quantity whose minimum m gives t* = −1/m (u0' for
    Burgers, u0'' or λ_min(∇²u0) for HJ), as samples (any shape; with 1-D uniform ``x`` the
    minimum is refined by a parabola) or as a 1-D callable (sampled and Brent-polished as above).
    ``foot`` is then the place of the minimum and ``position`` is not known (NaN).
    """
    require_choice("data", data, ("velocity", "potential", "slope"))
    if data == "slope":
        return _first_shock_from_slope(u0, x, domain, period, samples)
    two_d = isinstance(x, (tuple, list)) or (domain is not None and np.ndim(domain) == 2) or np.ndim(u0) == 2
    cell = None if two_d else _cell(period)
    order = 1 if data == "velocity" else 2
    if callable(u0):
        if two_d:
            return _first_shock_callable_2d(u0, x, derivative, domain, period, samples)
        if x is None:
            if domain is None and cell is None:
                raise SolverInputError("x, domain, period: give sample points x, a domain (a, b) or a period cell for a callable u0")
            a, b = (cell[0], cell[0] + cell[1]) if domain is None else (float(domain[0]), float(domain[1]))
            if not b > a:
                raise SolverInputError(f"domain: expected (a, b) with b > a, found {domain!r}")
            xs = np.linspace(a, b, int(samples), endpoint=cell is None or domain is not None)
        else:
            xs = np.sort(require_finite("x", x).ravel())
        if derivative is not None:
            _check_callable("derivative", derivative)
            d = lambda y: np.asarray(derivative(y), dtype=np.float64)
        elif order == 1:
            def d(y):
                y = np.asarray(y, dtype=np.float64)
                h = _EPS ** (1 / 5) * (1.0 + np.abs(y))
                f = lambda s: np.asarray(u0(y + s * h), dtype=np.float64)
                return (f(-2) - 8 * f(-1) + 8 * f(1) - f(2)) / (12 * h)
        else:
            def d(y):
                y = np.asarray(y, dtype=np.float64)
                h = _EPS ** (1 / 6) * (1.0 + np.abs(y))
                f = lambda s: np.asarray(u0(y + s * h), dtype=np.float64)
                return (-f(2) + 16 * f(1) - 30 * f(0) + 16 * f(-1) - f(-2)) / (12 * h * h)
        vals = require_finite("u0 derivative samples", d(xs))
        i = int(np.argmin(vals))
        lo, hi = xs[max(i - 1, 0)], xs[min(i + 1, xs.size - 1)]
        best_y, best = float(xs[i]), float(vals[i])
        if hi > lo:
            from scipy.optimize import minimize_scalar   # here, not at import: the shock detector imports this package

            res = minimize_scalar(lambda y: float(d(np.array([y]))[0]), bounds=(lo, hi), method="bounded",
                                  options={"xatol": 1e-12 * (1 + abs(lo) + abs(hi))})
            if res.fun < best:
                best_y, best = float(res.x), float(res.fun)
        v0 = float(np.asarray(u0(np.array([best_y])))[0]) if order == 1 else float(
            (np.asarray(u0(np.array([best_y + 1e-6]))) - np.asarray(u0(np.array([best_y - 1e-6]))))[0] / 2e-6)
        return _onset(best, (best_y,), (v0,))
    values = require_finite("u0", u0)
    if values.ndim == 1:
        if x is None:
            raise SolverInputError("x: sampled u0 needs its coordinates x")
        xs = require_finite("x", x)
        if xs.shape != values.shape:
            raise SolverInputError(f"x: expected the shape of u0 {values.shape}, found {xs.shape}")
        h = _uniform_spacing("x", xs)
        periodic = cell is not None
        deriv = (lambda v: _spectral_derivative(v, cell[1], 0)) if periodic else (lambda v: _fd1(v, h, 0, False))
        d = deriv(values)
        v_vel = d if order == 2 else values
        if order == 2:
            d = deriv(d)
        i = int(np.argmin(d))
        best, off = _parabolic_min(d, i, periodic)
        return _onset(best, (float(xs[i] + off * h),), (float(v_vel[i]),))
    if values.ndim == 2:
        if data != "potential":
            raise SolverInputError("data: 2-D samples are supported for potential data (HJ, γ* = −1/inf λ_min(∇²u0))")
        if not (isinstance(x, (tuple, list)) and len(x) == 2):
            raise SolverInputError("x: 2-D samples need a pair (x, y) of 1-D coordinate arrays (indexing 'ij')")
        xs, ys = (require_finite("x[0]", x[0]), require_finite("x[1]", x[1]))
        if values.shape != (xs.size, ys.size):
            raise SolverInputError(f"u0: expected shape {(xs.size, ys.size)} from x, found {values.shape}")
        hx, hy = _uniform_spacing("x[0]", xs), _uniform_spacing("x[1]", ys)
        if period is not None:
            lengths = np.broadcast_to(np.asarray(period, dtype=np.float64), (2,))
            D = [lambda v, ax=ax: _spectral_derivative(v, lengths[ax], ax) for ax in (0, 1)]
        else:
            D = [lambda v: _fd1(v, hx, 0, False), lambda v: _fd1(v, hy, 1, False)]
        gx, gy = D[0](values), D[1](values)
        lam = _lambda_min(D[0](gx), 0.5 * (D[1](gx) + D[0](gy)), D[1](gy))
        i, j = np.unravel_index(int(np.argmin(lam)), lam.shape)
        best = float(lam[i, j])
        bx, ox = _parabolic_min(lam[:, j], i, period is not None)
        by, oy = _parabolic_min(lam[i, :], j, period is not None)
        best = best - (lam[i, j] - bx) - (lam[i, j] - by)
        return _onset(best, (float(xs[i] + ox * hx), float(ys[j] + oy * hy)), (float(gx[i, j]), float(gy[i, j])))
    raise SolverInputError(f"u0: expected a callable or 1-D/2-D samples, found an array of shape {values.shape}")


def _first_shock_from_slope(values, x, domain, period, samples) -> ShockOnset:
    if callable(values):
        cell = _cell(period)
        if x is not None:
            xs = np.sort(require_finite("x", x).ravel())
        elif domain is not None or cell is not None:
            a, b = (cell[0], cell[0] + cell[1]) if domain is None else (float(domain[0]), float(domain[1]))
            xs = np.linspace(a, b, int(samples))
        else:
            raise SolverInputError("x, domain, period: give sample points x, a domain (a, b) or a period cell for a callable")
        d = lambda y: np.asarray(values(y), dtype=np.float64)
        v = require_finite("u0 (slope samples)", d(xs))
        i = int(np.argmin(v))
        best_y, best = float(xs[i]), float(v[i])
        lo, hi = xs[max(i - 1, 0)], xs[min(i + 1, xs.size - 1)]
        if hi > lo:
            from scipy.optimize import minimize_scalar   # here, not at import: the shock detector imports this package

            res = minimize_scalar(lambda y: float(d(np.array([y]))[0]), bounds=(lo, hi), method="bounded",
                                  options={"xatol": 1e-12 * (1 + abs(lo) + abs(hi))})
            if res.fun < best:
                best_y, best = float(res.x), float(res.fun)
        return _onset_without_position(best, (best_y,))
    v = require_finite("u0 (slope samples)", values)
    if x is not None and v.ndim == 1 and not isinstance(x, (tuple, list)):
        xs = require_finite("x", x)
        if xs.shape != v.shape:
            raise SolverInputError(f"x: expected the shape of the samples {v.shape}, found {xs.shape}")
        h = _uniform_spacing("x", xs)
        i = int(np.argmin(v))
        best, off = _parabolic_min(v, i, period is not None)
        return _onset_without_position(best, (float(xs[i] + off * h),))
    i = np.unravel_index(int(np.argmin(v)), v.shape)
    return _onset_without_position(float(v[i]), tuple(float(k) for k in i))


def _onset_without_position(curvature: float, foot) -> ShockOnset:
    t = -1.0 / curvature if curvature < 0 else math.inf
    return ShockOnset(t, tuple(foot), tuple(math.nan for _ in foot), curvature)


def _first_shock_callable_2d(u0, x, hessian_min, domain, period, samples) -> ShockOnset:
    if x is not None:
        xs, ys = (require_finite("x[0]", x[0]).ravel(), require_finite("x[1]", x[1]).ravel())
    else:
        if domain is None:
            raise SolverInputError("x, domain: give coordinates (x, y) or a domain ((a, b), (c, d)) for a 2-D callable u0")
        n = int(math.sqrt(samples)) + 1
        xs, ys = np.linspace(*map(float, domain[0]), n), np.linspace(*map(float, domain[1]), n)
    X, Y = np.meshgrid(xs, ys, indexing="ij")
    if hessian_min is not None:
        lam = np.asarray(hessian_min(X, Y), dtype=np.float64)
    else:
        h = _EPS ** (1 / 4) * (1.0 + np.maximum(np.abs(X), np.abs(Y)))
        f = lambda a, b: np.asarray(u0(X + a * h, Y + b * h), dtype=np.float64)
        f00 = f(0, 0)
        hxx = (f(1, 0) - 2 * f00 + f(-1, 0)) / h**2
        hyy = (f(0, 1) - 2 * f00 + f(0, -1)) / h**2
        hxy = (f(1, 1) - f(1, -1) - f(-1, 1) + f(-1, -1)) / (4 * h * h)
        lam = _lambda_min(hxx, hxy, hyy)
    lam = require_finite("u0 Hessian samples", lam)
    i, j = np.unravel_index(int(np.argmin(lam)), lam.shape)
    h = 1e-6
    gx = float((np.asarray(u0(np.array([X[i, j] + h]), np.array([Y[i, j]]))) - np.asarray(u0(np.array([X[i, j] - h]), np.array([Y[i, j]]))))[0] / (2 * h))
    gy = float((np.asarray(u0(np.array([X[i, j]]), np.array([Y[i, j] + h]))) - np.asarray(u0(np.array([X[i, j]]), np.array([Y[i, j] - h]))))[0] / (2 * h))
    return _onset(float(lam[i, j]), (float(X[i, j]), float(Y[i, j])), (gx, gy))


def _onset(curvature: float, foot, velocity) -> ShockOnset:
    if not curvature < 0:
        return ShockOnset(math.inf, tuple(foot), tuple(math.nan for _ in foot), curvature)
    t = -1.0 / curvature
    return ShockOnset(t, tuple(foot), tuple(f + t * v for f, v in zip(foot, velocity)), curvature)


def first_shock_time(u0, x=None, **kwargs) -> float:
    """``t* = −1/min u0'`` (velocity data) or ``γ* = −1/inf λ_min(∇²u0)`` (``data="potential"``).

    Returns ``math.inf`` when characteristics never cross.  Same arguments as :func:`first_shock`.
    """
    return first_shock(u0, x, **kwargs).time
