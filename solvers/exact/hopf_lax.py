"""Inviscid Hamilton–Jacobi by the Hopf–Lax formula: value and proximal points (docs/theory.md §1).

For ``u_t + (a/2)|∇u|² = 0`` (a > 0 constant; a = 1 is H = ½|p|²) with data u0,

    u(x, t) = min_y [ u0(y) + |x − y|² / (2 a t) ]        (the Moreau envelope of u0 at scale a t),

so a only rescales time.  The minimiser y*(x) is the *proximal point*; where two minimisers
tie, the gradient ∇u jumps: a shock of the Burgers field p = ∇u (docs/theory.md §1).

Method (exact minimisation, not a PDE solve):

1. *Search window.*  Every minimiser satisfies ``|x − y|² / (2 a t) ≤ u0(x) − u0(y)``, so for data
   with a bounded slope a window ``[min x − W, max x + W]`` with ``W ≈ a t max|u0'| + margin`` holds
   them; the window is doubled while any minimiser sits on its edge (data like −κ y²/2 whose
   minimiser runs off with t) and an error is raised when it keeps running off: then the
   infimum is −∞ (for −κ y²/2 exactly when t ≥ 1/(aκ): the blow-up of docs/theory.md §1).
2. *Candidates.*  E(x, y) is evaluated on a uniform candidate grid (``candidates`` nodes per
   axis); the best node and, in 1-D, the best competing discrete local minimum (outside the
   first one's immediate neighbourhood) are kept.
3. *Refinement.*  1-D: golden-section search on the bracket of two neighbouring candidate
   cells around each kept node (value to round-off; the point, which golden section finds only to
   ~sqrt(ε), is polished by one central-difference Newton step to ~1e-10), then the smaller of the two refined
   minima is taken — so a near-tie between two basins is decided by the refined values, not by
   the candidate grid.  2-D: damped Newton steps on E with central-difference gradient and
   Hessian of u0, accepted only if they decrease E and stay in the candidate cell's box.

The result is exact to round-off wherever the basin of the global minimiser is resolved by
the candidate grid (its width is ≳ two candidate spacings).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from solvers.errors import SolverInputError, require_finite, require_positive
from solvers.exact.characteristics import _cell, _wrapped

_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


@dataclass(frozen=True)
class HopfLax:
    """Hopf–Lax value and proximal points at the requested points.

    ``value`` has the shape of x; ``argmin`` is y*(x) (1-D: shape of x; 2-D: shape of x + (2,)).
    1-D only: ``other_argmin`` is the best competing local minimiser (NaN if there is none)
    and ``gap = E(other) − E(argmin) ≥ 0`` (∞ if none); a gap → 0 marks a shock (two minimisers).
    """

    value: np.ndarray
    argmin: np.ndarray
    other_argmin: np.ndarray | None = None
    gap: np.ndarray | None = None


def _golden(E: Callable, a: np.ndarray, b: np.ndarray, iterations: int = 80) -> np.ndarray:
    """Vectorised golden-section minimisation of E on [a, b] (E unimodal there)."""
    c = b - _GOLDEN * (b - a)
    d = a + _GOLDEN * (b - a)
    fc, fd = E(c), E(d)
    for _ in range(iterations):
        left = fc < fd
        b = np.where(left, d, b)
        a = np.where(left, a, c)
        c_new = np.where(left, b - _GOLDEN * (b - a), d)
        d_new = np.where(left, c, a + _GOLDEN * (b - a))
        fresh = np.where(left, c_new, d_new)
        f_fresh = E(fresh)
        fc, fd = np.where(left, f_fresh, fd), np.where(left, fc, f_fresh)
        c, d = c_new, d_new
        if np.all(b - a <= 4 * np.finfo(float).eps * (1 + np.abs(a) + np.abs(b))):
            break
    y = np.where(fc < fd, c, d)
    return y


def _window_1d(g: Callable, x: np.ndarray, tau: float, cell) -> float:
    a, b = (float(x.min()) - 1.0, float(x.max()) + 1.0) if cell is None else (cell[0], cell[0] + cell[1])
    s = np.linspace(a, b, 2049)
    v = g(s)
    slope = float(np.max(np.abs(np.diff(v) / np.diff(s))))
    if cell is not None:  # bounded data: |x − y|² ≤ 2τ osc(u0)
        return math.sqrt(2.0 * tau * float(np.ptp(v))) * 1.05 + 1e-12
    return tau * slope * 1.5 + 0.1 * math.sqrt(tau) + 1e-12


def _solve_1d(u0, x, t, a, period, search, candidates) -> HopfLax:
    cell = _cell(period)
    g = _wrapped(u0, cell)
    tau = a * t
    xf = x.ravel()
    if tau == 0.0:
        return HopfLax(g(x), x.copy(), np.full(x.shape, np.nan), np.full(x.shape, np.inf))
    width = None if search is not None else _window_1d(g, xf, tau, cell)
    for attempt in range(40):
        if search is not None:
            lo, hi = map(float, search)
            if not hi > lo:
                raise SolverInputError(f"search: expected (lower, upper) with upper > lower, found {search!r}")
        else:
            lo, hi = float(xf.min()) - width, float(xf.max()) + width
        y = np.linspace(lo, hi, candidates)
        gy = g(y)
        best = np.empty(xf.size, dtype=np.int64)
        second = np.empty(xf.size, dtype=np.int64)
        chunk = max(1, int(2_000_000 // candidates))
        idx = np.arange(candidates)
        for s in range(0, xf.size, chunk):
            E = gy[None, :] + (xf[s:s + chunk, None] - y[None, :]) ** 2 / (2.0 * tau)
            j1 = np.argmin(E, axis=1)
            local = np.ones_like(E, dtype=bool)
            local[:, 1:] &= E[:, 1:] <= E[:, :-1]
            local[:, :-1] &= E[:, :-1] <= E[:, 1:]
            local &= np.abs(idx[None, :] - j1[:, None]) > 1
            masked = np.where(local, E, np.inf)
            j2 = np.argmin(masked, axis=1)
            j2 = np.where(np.isfinite(masked[np.arange(len(j2)), j2]), j2, -1)
            best[s:s + chunk], second[s:s + chunk] = j1, j2
        on_edge = (best == 0) | (best == candidates - 1)
        if not on_edge.any():
            break
        if search is not None:
            i = int(np.argmax(on_edge))
            raise SolverInputError(
                f"search: the minimiser for x = {xf[i]!r} lies on the edge of the search window [{lo}, {hi}]; widen it"
            )
        if attempt >= 30:
            i = int(np.argmax(on_edge))
            raise SolverInputError(
                f"t: min_y [u0(y) + |x - y|^2/(2 a t)] is not attained for x = {xf[i]!r} at t = {t!r} (the minimiser runs "
                "off to infinity: u0 decreases at least quadratically and t is at or past the blow-up time)"
            )
        width *= 2.0

    def E_at(yv, xv):
        return g(yv) + (xv - yv) ** 2 / (2.0 * tau)

    def refine(j, xv):
        lo_b = y[np.clip(j - 1, 0, candidates - 1)]
        hi_b = y[np.clip(j + 1, 0, candidates - 1)]
        ys = _golden(lambda v: E_at(v, xv), lo_b, hi_b)
        # golden section locates y* only to ~sqrt(eps); one Newton step on central differences
        # (step δ = 1e-5: truncation and round-off both ~1e-11) polishes it to ~1e-10
        d = 1e-5 * (1.0 + np.abs(ys))
        ep, e0, em = E_at(ys + d, xv), E_at(ys, xv), E_at(ys - d, xv)
        curv = ep - 2 * e0 + em
        with np.errstate(divide="ignore", invalid="ignore"):
            newton = ys - 0.5 * d * (ep - em) / curv
        ok = (curv > 0) & (np.abs(newton - ys) < d)
        ys = np.where(ok, newton, ys)
        return ys, E_at(ys, xv)

    y1, e1 = refine(best, xf)
    has2 = second >= 0
    y2 = np.full(xf.size, np.nan)
    e2 = np.full(xf.size, np.inf)
    if has2.any():
        y2[has2], e2[has2] = refine(second[has2], xf[has2])
    swap = e2 < e1
    ya, yb = np.where(swap, y2, y1), np.where(swap, y1, y2)
    ea, eb = np.where(swap, e2, e1), np.where(swap, e1, e2)
    return HopfLax(ea.reshape(x.shape), ya.reshape(x.shape), yb.reshape(x.shape), (eb - ea).reshape(x.shape))


def _solve_2d(u0, X, Y, t, a, search, candidates) -> HopfLax:
    tau = a * t
    shape = X.shape
    xf, yf = X.ravel(), Y.ravel()
    f = lambda p, q: np.asarray(u0(p, q), dtype=np.float64)
    if tau == 0.0:
        return HopfLax(f(X, Y), np.stack([X, Y], axis=-1))
    if search is None:
        s = [np.linspace(float(c.min()) - 1.0, float(c.max()) + 1.0, 257) for c in (xf, yf)]
        P, Q = np.meshgrid(*s, indexing="ij")
        v = f(P, Q)
        gx, gy = np.gradient(v, s[0], s[1])
        width = tau * float(np.max(np.hypot(gx, gy))) * 1.5 + 0.1 * math.sqrt(tau) + 1e-12
    for attempt in range(40):
        if search is not None:
            (x0, x1), (y0, y1) = search
        else:
            x0, x1 = float(xf.min()) - width, float(xf.max()) + width
            y0, y1 = float(yf.min()) - width, float(yf.max()) + width
        cx, cy = np.linspace(x0, x1, candidates), np.linspace(y0, y1, candidates)
        CX, CY = (c.ravel() for c in np.meshgrid(cx, cy, indexing="ij"))
        U = f(CX, CY)
        best = np.empty(xf.size, dtype=np.int64)
        chunk = max(1, int(4_000_000 // CX.size))
        for s0 in range(0, xf.size, chunk):
            E = U[None, :] + ((xf[s0:s0 + chunk, None] - CX[None, :]) ** 2 + (yf[s0:s0 + chunk, None] - CY[None, :]) ** 2) / (2 * tau)
            best[s0:s0 + chunk] = np.argmin(E, axis=1)
        i, j = np.unravel_index(best, (candidates, candidates))
        on_edge = (i == 0) | (i == candidates - 1) | (j == 0) | (j == candidates - 1)
        if not on_edge.any():
            break
        if search is not None or attempt >= 30:
            k = int(np.argmax(on_edge))
            raise SolverInputError(
                f"search, t: the minimiser for x = ({xf[k]!r}, {yf[k]!r}) lies on the edge of the search box; widen "
                "search, or the infimum is not attained (t at or past the blow-up time)"
            )
        width *= 2.0
    hx, hy = cx[1] - cx[0], cy[1] - cy[0]
    px, py = cx[i], cy[j]
    boxx, boxy = (px - hx, px + hx), (py - hy, py + hy)
    E = lambda p, q: f(p, q) + ((xf - p) ** 2 + (yf - q) ** 2) / (2 * tau)
    e = E(px, py)
    for _ in range(12):
        d = 1e-4 * (1.0 + np.maximum(np.abs(px), np.abs(py)))
        f0 = f(px, py)
        fxp, fxm, fyp, fym = f(px + d, py), f(px - d, py), f(px, py + d), f(px, py - d)
        g1 = (fxp - fxm) / (2 * d) + (px - xf) / tau
        g2 = (fyp - fym) / (2 * d) + (py - yf) / tau
        h11 = (fxp - 2 * f0 + fxm) / d**2 + 1 / tau
        h22 = (fyp - 2 * f0 + fym) / d**2 + 1 / tau
        h12 = (f(px + d, py + d) - f(px + d, py - d) - f(px - d, py + d) + f(px - d, py - d)) / (4 * d * d)
        det = h11 * h22 - h12**2
        ok = (det > 0) & (h11 > 0)
        sx = np.where(ok, -(h22 * g1 - h12 * g2) / np.where(ok, det, 1), -g1 * tau)
        sy = np.where(ok, -(h11 * g2 - h12 * g1) / np.where(ok, det, 1), -g2 * tau)
        step = np.ones_like(px)
        improved = np.zeros(px.shape, dtype=bool)
        for _ in range(30):
            nx = np.clip(px + step * sx, *boxx)
            ny = np.clip(py + step * sy, *boxy)
            en = E(nx, ny)
            acc = (en <= e) & ~improved
            px, py, e = np.where(acc, nx, px), np.where(acc, ny, py), np.where(acc, en, e)
            improved |= acc
            if improved.all():
                break
            step = np.where(improved, step, step / 2)
    return HopfLax(e.reshape(shape), np.stack([px.reshape(shape), py.reshape(shape)], axis=-1))


def hopf_lax_solution(u0: Callable, x, t: float, *, a: float = 1.0, period=None, search=None,
                      candidates: int | None = None) -> HopfLax:
    """Value, proximal point and (1-D) competing minimiser of ``min_y [u0(y) + |x − y|²/(2 a t)]``.

    1-D: ``u0(y)`` vectorised, ``x`` any shape, optional ``period`` (a length L or a cell
    (a, b); u0 evaluated on its cell only) and ``search = (lower, upper)``.
    2-D: ``x = (X, Y)`` a pair of equal-shape arrays, ``u0(P, Q)`` vectorised, optional
    ``search = ((x0, x1), (y0, y1))``.  ``candidates``: candidate nodes per axis (default 4001 in
    1-D, 161 in 2-D).
    """
    if not callable(u0):
        raise SolverInputError(f"u0: expected a vectorised callable, found {type(u0).__name__}")
    t = float(require_finite("t", t))
    if t < 0:
        raise SolverInputError(f"t: expected a time >= 0, found {t!r}")
    a = require_positive("a", a)
    if isinstance(x, (tuple, list)):
        if len(x) != 2:
            raise SolverInputError(f"x: expected an array (1-D) or a pair (X, Y) (2-D), found a sequence of {len(x)}")
        X, Y = require_finite("x[0]", x[0]), require_finite("x[1]", x[1])
        if X.shape != Y.shape:
            raise SolverInputError(f"x: expected X and Y of equal shape, found {X.shape} and {Y.shape}")
        if period is not None:
            raise SolverInputError("period: 2-D Hopf–Lax takes periodic data through a periodic callable u0, not period")
        n = 161 if candidates is None else int(candidates)
        if n < 5:
            raise SolverInputError(f"candidates: expected at least 5, found {candidates!r}")
        return _solve_2d(u0, X, Y, t, a, search, n)
    x = require_finite("x", x)
    n = 4001 if candidates is None else int(candidates)
    if n < 5:
        raise SolverInputError(f"candidates: expected at least 5, found {candidates!r}")
    return _solve_1d(u0, x, t, a, period, search, n)


def hopf_lax(u0: Callable, x, t: float, **kwargs) -> np.ndarray:
    """``u(x, t) = min_y [u0(y) + |x − y|²/(2 a t)]`` (1-D or 2-D); see :func:`hopf_lax_solution`."""
    return hopf_lax_solution(u0, x, t, **kwargs).value
