"""Exact solution of the Riemann problem for a scalar conservation law with a convex flux.

    q_t + f(q)_x = 0,      q(x, 0) = q_L for x < x0,  q_R for x > x0,      f'' > 0.

* ``q_L > q_R``: a single shock moving with the Rankine–Hugoniot speed
  ``s = (f(q_L) − f(q_R)) / (q_L − q_R)`` (Lax-admissible because f' is increasing).
* ``q_L < q_R``: a centred rarefaction, ``q = (f')^{-1}(ξ)`` for ``f'(q_L) < ξ = (x − x0)/t < f'(q_R)``.
  For Burgers ``(f')^{-1}(ξ) = ξ``; for a general convex flux the root of ``f'(q) = ξ`` in
  ``[q_L, q_R]`` is found by vectorised bisection to round-off (f' is monotone there, so the
  bracket never fails).  A fan containing the sonic point ``q_min`` (f'(q_min) = 0) is
  handled by the same formula.

``flux`` is the string ``"burgers"`` (f = q²/2) or any object with scalar callables ``f`` and
``df`` (NumPy ufunc-like or Numba-compiled scalar functions; they are vectorised here if
they do not accept arrays) and, optionally, ``q_min``.  docs/theory.md §5.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from solvers.errors import SolverInputError, require_finite


@dataclass(frozen=True)
class _Flux:
    """Vectorised ``f`` and ``f'`` of a convex flux (internal adaptor for duck-typed fluxes)."""

    f: Callable[[np.ndarray], np.ndarray]
    df: Callable[[np.ndarray], np.ndarray]
    inverse_df: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray] | None
    name: str


def _vectorise(func, what: str):
    """Return ``func`` if it maps arrays elementwise, else an ``np.vectorize`` wrapper."""
    probe = np.array([0.25, -0.5])
    try:
        out = np.asarray(func(probe), dtype=np.float64)
        if out.shape == probe.shape:
            return lambda q: np.asarray(func(np.asarray(q, dtype=np.float64)), dtype=np.float64)
    except Exception:  # scalar-only callable (e.g. a Numba scalar function): vectorise below
        pass
    try:
        float(func(0.25))
    except Exception as exc:
        raise SolverInputError(f"flux.{what}: expected a callable of one float, calling it with 0.25 raised {exc!r}") from exc
    vec = np.vectorize(lambda v: float(func(float(v))), otypes=[np.float64])
    return lambda q: vec(np.asarray(q, dtype=np.float64))


def as_flux(flux) -> _Flux:
    """Adapt ``"burgers"`` or an object with ``f`` and ``df`` to vectorised callables."""
    if isinstance(flux, str):
        if flux != "burgers":
            raise SolverInputError(
                f"flux: unknown flux name {flux!r}; valid names are 'burgers', or pass an object with attributes f and df"
            )
        return _Flux(lambda q: 0.5 * np.asarray(q) ** 2, lambda q: np.asarray(q, dtype=np.float64), lambda xi, a, b: xi, "burgers")
    missing = [name for name in ("f", "df") if not callable(getattr(flux, name, None))]
    if missing:
        raise SolverInputError(
            f"flux: expected 'burgers' or an object with callable attributes f and df, found {type(flux).__name__} "
            f"without {', '.join(missing)}"
        )
    return _Flux(_vectorise(flux.f, "f"), _vectorise(flux.df, "df"), None, getattr(flux, "name", type(flux).__name__))


def rankine_hugoniot_speed(flux, q_left, q_right):
    """``(f(q_L) − f(q_R)) / (q_L − q_R)``, and ``f'(q)`` where the states coincide (arrays allowed)."""
    F = as_flux(flux) if not isinstance(flux, _Flux) else flux
    qL = np.asarray(q_left, dtype=np.float64)
    qR = np.asarray(q_right, dtype=np.float64)
    dq = qL - qR
    same = np.abs(dq) <= 1e-14 * np.maximum(1.0, np.maximum(np.abs(qL), np.abs(qR)))
    safe = np.where(same, 1.0, dq)
    s = np.where(same, F.df(0.5 * (qL + qR)), (F.f(qL) - F.f(qR)) / safe)
    return float(s) if s.ndim == 0 else s


def _inverse_df(F: _Flux, xi: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Root of ``f'(q) = ξ`` in ``[lo, hi]`` with f' increasing: bisection to round-off."""
    if F.inverse_df is not None:
        return F.inverse_df(xi, lo, hi)
    a = np.array(lo, dtype=np.float64)
    b = np.array(hi, dtype=np.float64)
    for _ in range(200):
        m = 0.5 * (a + b)
        if not np.any((m > a) & (m < b)):
            break
        below = F.df(m) < xi
        a = np.where(below, m, a)
        b = np.where(below, b, m)
    return 0.5 * (a + b)


def riemann(flux, q_left: float, q_right: float, x, t: float, x0: float = 0.0) -> np.ndarray:
    """Exact entropy solution of the Riemann problem at positions ``x`` (any shape), time ``t >= 0``.

    At a shock position the value is ``q_R`` for ``x > x0 + s t`` and ``q_L`` otherwise.
    At ``t = 0`` the initial step is returned.
    """
    F = as_flux(flux)
    qL = float(require_finite("q_left", q_left))
    qR = float(require_finite("q_right", q_right))
    x = require_finite("x", x)
    t = float(require_finite("t", t))
    x0 = float(require_finite("x0", x0))
    if t < 0:
        raise SolverInputError(f"t: expected a time >= 0, found {t!r}")
    if t == 0.0 or qL == qR:
        return np.where(x <= x0, qL, qR).astype(np.float64)
    if qL > qR:
        s = rankine_hugoniot_speed(F, qL, qR)
        return np.where(x <= x0 + s * t, qL, qR).astype(np.float64)
    xi = (x - x0) / t
    aL, aR = float(F.df(np.array(qL))), float(F.df(np.array(qR)))
    if not aL <= aR:
        raise SolverInputError(
            f"flux: expected a convex flux (f' increasing), found f'({qL}) = {aL} > f'({qR}) = {aR}"
        )
    q = np.where(xi <= aL, qL, qR).astype(np.float64)
    fan = (xi > aL) & (xi < aR)
    if fan.any():
        xf = xi[fan]
        q[fan] = _inverse_df(F, xf, np.full_like(xf, qL), np.full_like(xf, qR))
    return q
