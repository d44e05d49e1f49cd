"""The travelling viscous shock of Burgers' equation (docs/theory.md §1 and §5).

For ``u_t + (u²/2)_x = ν u_xx`` with far-field states ``u_left > u_right`` the travelling wave

    u(x, t) = (u_L + u_R)/2 − ((u_L − u_R)/2) · tanh( (u_L − u_R) (x − s t − x0) / (4ν) ),
    s = (u_L + u_R)/2                    (the Rankine–Hugoniot speed),

is an exact solution.  Its maximum-slope thickness ``|u_L − u_R| / max|u_x|`` is
``8ν / (u_L − u_R)``: the shock width is of order ν/|Δu| as docs/theory.md §1 states.
``tanh`` saturates cleanly, so the formula is stable for any ν > 0 (no overflow at ν = 1e-6).
"""

from __future__ import annotations

import numpy as np

from solvers.errors import SolverInputError, require_finite, require_positive


def _check(u_left, u_right, nu) -> tuple[float, float, float]:
    uL = float(require_finite("u_left", u_left))
    uR = float(require_finite("u_right", u_right))
    nu = require_positive("nu", nu)
    if not uL > uR:
        raise SolverInputError(
            f"u_left, u_right: a viscous (Lax-admissible) Burgers shock needs u_left > u_right, "
            f"found u_left = {uL!r}, u_right = {uR!r}"
        )
    return uL, uR, nu


def viscous_shock_speed(u_left: float, u_right: float) -> float:
    """Rankine–Hugoniot speed ``(u_L + u_R)/2`` of the Burgers shock."""
    return 0.5 * (float(u_left) + float(u_right))


def viscous_shock_width(u_left: float, u_right: float, nu: float) -> float:
    """Maximum-slope thickness ``|u_L − u_R| / max|u_x| = 8ν/(u_L − u_R)`` of the profile."""
    uL, uR, nu = _check(u_left, u_right, nu)
    return 8.0 * nu / (uL - uR)


def viscous_shock(u_left: float, u_right: float, nu: float, x, t: float = 0.0, x0: float = 0.0) -> np.ndarray:
    """The exact travelling viscous Burgers shock at positions ``x`` (any shape) and time ``t``.

    ``x0`` is the position of the shock centre (where ``u = (u_L + u_R)/2``) at ``t = 0``.
    """
    uL, uR, nu = _check(u_left, u_right, nu)
    x = require_finite("x", x)
    t = float(require_finite("t", t))
    x0 = float(require_finite("x0", x0))
    s = 0.5 * (uL + uR)
    half = 0.5 * (uL - uR)
    return s - half * np.tanh(half * (x - s * t - x0) / (2.0 * nu))


def viscous_shock_derivatives(u_left: float, u_right: float, nu: float, x, t: float = 0.0, x0: float = 0.0):
    """Exact ``(u_t, u_x, u_xx)`` of :func:`viscous_shock` (for residual checks and indicators)."""
    uL, uR, nu = _check(u_left, u_right, nu)
    x = require_finite("x", x)
    s = 0.5 * (uL + uR)
    half = 0.5 * (uL - uR)
    k = half / (2.0 * nu)
    th = np.tanh(k * (x - s * float(t) - float(x0)))
    sech2 = 1.0 - th * th
    u_x = -half * k * sech2
    u_xx = 2.0 * half * k * k * th * sech2
    u_t = -s * u_x
    return u_t, u_x, u_xx
