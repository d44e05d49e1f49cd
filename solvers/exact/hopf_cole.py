"""Viscous Burgers and viscous Hamilton–Jacobi from any initial data by Hopf–Cole (docs/theory.md §1).

Viscous HJ  ``φ_t + ½ φ_x² = ν φ_xx``,  ``φ(·,0) = Φ0``:  the substitution ``φ = −2ν log ψ`` gives the
heat equation ``ψ_t = ν ψ_xx``, hence

    φ(x, t) = −2ν log ∫ G(x − y, νt) exp(−Φ0(y)/(2ν)) dy,     G(z, s) = exp(−z²/(4s)) / sqrt(4πs)
            = m(x) − 2ν log ∫ exp(−(E(x, y) − m(x))/(2ν)) dy / sqrt(4πνt),
    E(x, y) = Φ0(y) + (x − y)²/(2t),   m(x) = min_y E(x, y)   (the Hopf–Lax value, log-sum-exp shift).

Viscous Burgers ``u_t + u u_x = ν u_xx`` is ``u = φ_x`` with ``Φ0' = u0``; differentiating under the
integral and integrating by parts,

    u(x, t) = ∫ u0(y) w(x, y) dy / ∫ w(x, y) dy,       w = exp(−(E(x, y) − m(x))/(2ν)),

a weighted average of the data: no cancellation, no division by t, bounded by the range of u0
(the maximum principle holds exactly).  Because the shift m(x) makes the largest weight 1,
nothing overflows or underflows harmfully for any ν > 0 (tested at ν = 1e-3 and below).

Domain.  Data on the line are used as given.  Periodic data (``period``) are the same formula
on the line with ``u0`` evaluated on its cell: the integral over the line of periodic data is
the sum over periodic images of the heat kernel.  For Burgers the potential
``Φ0(y) = ∫^y u0`` is built by cumulative five-point Gauss–Legendre quadrature on the
quadrature grid (error ~h¹⁰), so data with a nonzero cell mean c need no special treatment:
Φ0 then grows like c·y, the solution stays periodic and moves with the Galilean shift built in.

Two dimensions (:func:`viscous_hj_2d`): separable data ``a(x) + b(y)`` reduce to two 1-D solves;
general data use the 2-D integral on a tensor grid with the same error control.

Error control.  The integral is a trapezoid sum on a uniform grid y_j spanning
``[min x − W, max x + W]``.  W is doubled until, for every x, the integrand at both ends is
below e^{-40} of its peak; the spacing h starts at ``min(sqrt(2νt)/2, (2W)/64)`` and is halved
until the results with h and 2h (every other node, free) differ by at most ``tol`` (absolute,
max over x; for Burgers the estimate also includes the effect of the error of the potential
Φ0, measured as the change of its Gauss–Legendre antiderivative between intervals h and 2h) — for these analytic integrands the trapezoid rule converges geometrically, so the
returned (step-h) result is well inside ``tol``.  The number of nodes is capped (``max_nodes``)
with a clear error rather than a silent inaccuracy.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from solvers.errors import SolverInputError, require_finite, require_positive
from solvers.exact.characteristics import _cell, _wrapped

_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(5)
_TAIL = 40.0  # the integrand at the window edges is below exp(-_TAIL) of its peak


def _check(u0, x, t, nu, tol):
    if not callable(u0):
        raise SolverInputError(f"u0: expected a vectorised callable of y, found {type(u0).__name__}")
    x = require_finite("x", x)
    t = float(require_finite("t", t))
    if t < 0:
        raise SolverInputError(f"t: expected a time >= 0, found {t!r}")
    nu = require_positive("nu", nu)
    tol = require_positive("tol", tol)
    return x, t, nu, tol


def _antiderivative_on_grid(g: Callable, y: np.ndarray) -> np.ndarray:
    """∫_{y_0}^{y_j} g, cumulative five-point Gauss–Legendre on each grid interval."""
    a, b = y[:-1], y[1:]
    half = 0.5 * (b - a)
    nodes = 0.5 * (a + b)[:, None] + half[:, None] * _GL_NODES[None, :]
    pieces = half * (g(nodes.ravel()).reshape(nodes.shape) @ _GL_WEIGHTS)
    return np.concatenate([[0.0], np.cumsum(pieces)])


def _hopf_cole(x: np.ndarray, t: float, nu: float, grid_data: Callable, speed: float, tol: float,
               max_nodes: int, want_mean: bool) -> np.ndarray:
    """Log-partition φ(x) (or weighted mean of g) of E = Φ(y) + (x − y)²/(2t) on an adaptive grid.

    ``grid_data(y)`` returns ``(Φ(y), g(y) or None, error estimate of Φ)`` on a uniform grid; ``speed`` bounds |Φ'| on
    the region of interest (initial window guess only).
    """
    xf = x.ravel()
    x_lo, x_hi = float(xf.min()), float(xf.max())
    width = t * speed + 12.0 * math.sqrt(2.0 * nu * t) + 1e-12
    h = min(math.sqrt(2.0 * nu * t) / 2.0, (x_hi - x_lo + 2 * width) / 64.0)
    norm = math.log(math.sqrt(4.0 * math.pi * nu * t))
    out = np.empty(xf.size)
    for _ in range(60):
        lo, hi = x_lo - width, x_hi + width
        n = 2 * int(math.ceil((hi - lo) / (2 * h))) + 1
        if n > max_nodes:
            raise SolverInputError(
                f"max_nodes: the quadrature needs more than {max_nodes} nodes (spacing {h:.3g} on [{lo:.4g}, {hi:.4g}]) to "
                f"reach tol; raise max_nodes or tol, or shorten the x-range"
            )
        y = np.linspace(lo, hi, n)
        hh = y[1] - y[0]
        phi, g, phi_error = grid_data(y)
        chunk = max(1, int(2_000_000 // n))
        # an error δ in Φ changes φ by at most δ and the weighted mean by at most (δ/2ν)·osc(g)
        err = phi_error * ((float(np.ptp(g)) / (2.0 * nu)) if want_mean else 1.0)
        edges_ok = True
        for s in range(0, xf.size, chunk):
            xc = xf[s:s + chunk, None]
            E = phi[None, :] + (xc - y[None, :]) ** 2 / (2.0 * t)
            m = E.min(axis=1)
            edge = np.minimum(E[:, 0], E[:, -1]) - m
            if np.any(edge < 2.0 * nu * _TAIL):
                edges_ok = False
                break
            w = np.exp(-(E - m[:, None]) / (2.0 * nu))
            Z1, Z2 = w.sum(axis=1) * hh, w[:, ::2].sum(axis=1) * (2 * hh)
            if want_mean:
                v1 = (w @ g) * hh / Z1
                v2 = (w[:, ::2] @ g[::2]) * (2 * hh) / Z2
            else:
                v1 = m - 2.0 * nu * (np.log(Z1) - norm)
                v2 = m - 2.0 * nu * (np.log(Z2) - norm)
            err = max(err, float(np.max(np.abs(v1 - v2))))
            out[s:s + chunk] = v1
        if not edges_ok:
            width *= 2.0
            continue
        if err <= tol:
            if not np.all(np.isfinite(out)):
                i = int(np.argmax(~np.isfinite(out)))
                raise FloatingPointError(f"Hopf–Cole quadrature produced {out[i]!r} at x = {xf[i]!r}")
            return out.reshape(x.shape)
        h /= 2.0
    raise SolverInputError("u0: the Hopf–Cole quadrature did not converge; is u0 finite with bounded slope?")


def _slope_bound(func: Callable, x: np.ndarray, cell) -> float:
    a, b = (float(x.min()) - 1.0, float(x.max()) + 1.0) if cell is None else (cell[0], cell[0] + cell[1])
    s = np.linspace(a, b, 2049)
    return float(np.max(np.abs(np.asarray(func(s), dtype=np.float64))))


def viscous_hj(u0: Callable, x, t: float, nu: float, period=None, *, tol: float = 1e-10,
               max_nodes: int = 4_000_000) -> np.ndarray:
    """Exact ``φ(x, t)`` of ``φ_t + ½ φ_x² = ν φ_xx``, ``φ(·, 0) = u0`` (a potential), by Hopf–Cole.

    ``u0`` is a vectorised callable; with ``period`` (a length L for the cell [0, L), or a cell
    (a, b)) it is periodic and evaluated on its cell only.  ``x`` may have any shape.
    """
    x, t, nu, tol = _check(u0, x, t, nu, tol)
    cell = _cell(period)
    g = _wrapped(u0, cell)
    if t == 0.0:
        return g(x)
    # |Φ0'| bound for the initial window from a difference quotient of samples
    a, b = (float(x.min()) - 1.0, float(x.max()) + 1.0) if cell is None else (cell[0], cell[0] + cell[1])
    s = np.linspace(a, b, 2049)
    speed = float(np.max(np.abs(np.diff(g(s)) / np.diff(s))))
    return _hopf_cole(x, t, nu, lambda y: (g(y), None, 0.0), speed, tol, int(max_nodes), False)


def viscous_burgers(u0: Callable, x, t: float, nu: float, period=None, *, tol: float = 1e-10,
                    max_nodes: int = 4_000_000) -> np.ndarray:
    """Exact ``u(x, t)`` of ``u_t + u u_x = ν u_xx``, ``u(·, 0) = u0``, by Hopf–Cole.

    ``u0`` is a vectorised callable (on the line, or periodic with ``period`` = L or (a, b));
    any cell mean is allowed.  ``x`` may have any shape.
    """
    x, t, nu, tol = _check(u0, x, t, nu, tol)
    cell = _cell(period)
    g = _wrapped(u0, cell)
    if t == 0.0:
        return g(x)
    speed = _slope_bound(g, x, cell)

    def grid_data(y):
        phi = _antiderivative_on_grid(g, y)
        coarse = _antiderivative_on_grid(g, y[::2])  # same nodes, intervals twice as long
        return phi, g(y), float(np.max(np.abs(phi[::2] - coarse)))

    return _hopf_cole(x, t, nu, grid_data, speed, tol, int(max_nodes), True)


def viscous_hj_2d(u0, x, y, t: float, nu: float, period=None, *, tol: float = 1e-10,
                  max_nodes: int = 4_000_000) -> np.ndarray:
    """Exact ``φ`` of ``φ_t + ½|∇φ|² = ν Δφ`` in 2-D on the mesh ``x ⊗ y`` (shape ``(x.size, y.size)``).

    * Separable data, ``u0 = (a, b)`` with ``u0(x, y) = a(x) + b(y)``: exp(−u0/(2ν)) and the heat
      kernel factorise, so ``φ = φ_a(x, t) + φ_b(y, t)`` (two 1-D solves, any size).
    * General data, ``u0`` a vectorised callable ``u0(P, Q)``: the 2-D Hopf–Cole integral
      ``φ = m − 2ν log ∫∫ exp(−(E − m)/(2ν)) dy / (4πνt)``, ``E = u0(y) + |x − y|²/(2t)``, by the
      trapezoid rule on a tensor grid with the same error control as in 1-D (box doubled until
      the integrand on its boundary is below e^{-40} of its peak; spacing halved until the
      spacing-h and spacing-2h sums agree to ``tol``).  Cost ∝ (points) × (nodes): meant for
      validation on modest meshes (e.g. 64 × 64).
    ``period`` is None, one length for both axes, or a pair (per axis, each a length or a cell);
    u0 is then evaluated on its cell only.
    """
    px, py = (period, period) if (period is None or np.ndim(period) == 0) else tuple(period)
    xs, ys = np.ravel(require_finite("x", x)), np.ravel(require_finite("y", y))
    if isinstance(u0, (tuple, list)):
        if len(u0) != 2 or not all(callable(f) for f in u0):
            raise SolverInputError(f"u0: expected a callable u0(P, Q) or a pair (a, b) of callables, found {u0!r}")
        fx = viscous_hj(u0[0], xs, t, nu, px, tol=tol, max_nodes=max_nodes)
        fy = viscous_hj(u0[1], ys, t, nu, py, tol=tol, max_nodes=max_nodes)
        return fx[:, None] + fy[None, :]
    _, t, nu, tol = _check(u0, xs, t, nu, tol)
    cx, cy = _cell(px), _cell(py)

    def g(P, Q):
        if cx is not None:
            P = cx[0] + np.mod(P - cx[0], cx[1])
        if cy is not None:
            Q = cy[0] + np.mod(Q - cy[0], cy[1])
        return np.asarray(u0(P, Q), dtype=np.float64)

    X, Y = np.meshgrid(xs, ys, indexing="ij")
    if t == 0.0:
        return g(X, Y)
    sx = np.linspace(xs.min() - 1.0, xs.max() + 1.0, 257) if cx is None else np.linspace(cx[0], cx[0] + cx[1], 257)
    sy = np.linspace(ys.min() - 1.0, ys.max() + 1.0, 257) if cy is None else np.linspace(cy[0], cy[0] + cy[1], 257)
    gx, gy = np.gradient(g(*np.meshgrid(sx, sy, indexing="ij")), sx, sy)
    width = t * float(np.max(np.hypot(gx, gy))) + 12.0 * math.sqrt(2.0 * nu * t) + 1e-12
    h = min(math.sqrt(2.0 * nu * t) / 2.0, (float(max(np.ptp(xs), np.ptp(ys))) + 2 * width) / 64.0)
    norm = math.log(4.0 * math.pi * nu * t)
    xf, yf = X.ravel(), Y.ravel()
    out = np.empty(xf.size)
    for _ in range(60):
        n1 = 2 * int(math.ceil((np.ptp(xs) + 2 * width) / (2 * h))) + 1
        n2 = 2 * int(math.ceil((np.ptp(ys) + 2 * width) / (2 * h))) + 1
        if n1 * n2 > max_nodes:
            raise SolverInputError(
                f"max_nodes: the 2-D quadrature needs more than {max_nodes} nodes ({n1} x {n2}, spacing {h:.3g}) to reach "
                "tol; raise max_nodes or tol, or use fewer/closer points"
            )
        q1 = np.linspace(xs.min() - width, xs.max() + width, n1)
        q2 = np.linspace(ys.min() - width, ys.max() + width, n2)
        h1, h2 = q1[1] - q1[0], q2[1] - q2[0]
        U = g(*np.meshgrid(q1, q2, indexing="ij"))
        chunk = max(1, int(4_000_000 // (n1 * n2)))
        err, edges_ok = 0.0, True
        for s0 in range(0, xf.size, chunk):
            a1 = (xf[s0:s0 + chunk, None] - q1[None, :]) ** 2 / (2.0 * t)
            a2 = (yf[s0:s0 + chunk, None] - q2[None, :]) ** 2 / (2.0 * t)
            E = U[None, :, :] + a1[:, :, None] + a2[:, None, :]
            m = E.min(axis=(1, 2))
            edge = np.minimum(np.minimum(E[:, 0, :].min(1), E[:, -1, :].min(1)),
                              np.minimum(E[:, :, 0].min(1), E[:, :, -1].min(1))) - m
            if np.any(edge < 2.0 * nu * _TAIL):
                edges_ok = False
                break
            w = np.exp(-(E - m[:, None, None]) / (2.0 * nu))
            v1 = m - 2.0 * nu * (np.log(w.sum(axis=(1, 2)) * h1 * h2) - norm)
            v2 = m - 2.0 * nu * (np.log(w[:, ::2, ::2].sum(axis=(1, 2)) * 4 * h1 * h2) - norm)
            err = max(err, float(np.max(np.abs(v1 - v2))))
            out[s0:s0 + chunk] = v1
        if not edges_ok:
            width *= 2.0
            continue
        if err <= tol:
            return out.reshape(X.shape)
        h /= 2.0
    raise SolverInputError("u0: the 2-D Hopf–Cole quadrature did not converge; is u0 finite with bounded slope?")
