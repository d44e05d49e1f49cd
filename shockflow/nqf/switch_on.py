"""Switch-on times of logistic modes (docs/theory.md §2) and the escape-time reading of docs/theory.md §1.

A mode z(t) = ζ z0 / (C z0 + (ζ − C z0) e^{−aζt}) (a = 1, ζ = r_k, C = C_kk for orthogonal features;
a = 2, ζ = γ_k, C = 4c for isotropic samples) reaches the fraction ρ of z(∞) = ζ/C at

    t*(ρ) = (1/(aζ)) ln[ (ζ − C z0) ρ / (C z0 (1 − ρ)) ]
          = (1/(aζ)) ln(1/ε) − (1/(aζ)) ln[ C c/(ζ − C c ε) · (1 − ρ)/ρ ],     z0 = c ε,

whose leading term (1/(aζ)) ln(1/ε) is the same for every ρ: the plateaus are a singular limit.

docs/theory.md §1 [model] reads the same event as escape from a ridge of the quotient loss: in the flat
coordinate r = √z of one mode, L̄(r) = (1/m) Σ_μ (λ_μ r² − y_μ)² (other modes off; mse), the ridge
r = 0 has L̄''(0) < 0, γ* = −1/L̄''(0), and t ≈ γ* ln(d_exit/d_0) with d_0 = √z0 and d_exit the
bottom of the well. :func:`escape_time_prediction` evaluates that from the loss itself (finite
differences of L̄, numerical minimum), so it can be compared with the exact t*.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize_scalar

__all__ = ["switch_on_time", "switch_on_time_eps", "leading_switch_on_time", "measured_switch_on",
           "flat_mode_loss", "EscapePrediction", "escape_time_prediction", "escape_time"]


def _check_rho(rho):
    rho = np.asarray(rho, float)
    if np.any((rho <= 0) | (rho >= 1)):
        raise ValueError(f"rho: expected a fraction in (0, 1), found {rho}")
    return rho


def switch_on_time(zeta, C, z0, rho=0.5, a: float = 1.0):
    """Exact t*(ρ) = (1/(aζ)) ln[(ζ − C z0) ρ / (C z0 (1 − ρ))]; needs ζ > C z0 > 0 (a growing mode)."""
    zeta, C, z0 = (np.asarray(v, float) for v in (zeta, C, z0))
    rho = _check_rho(rho)
    if np.any(zeta <= C * z0) or np.any(C <= 0) or np.any(z0 <= 0):
        raise ValueError("zeta: a switch-on needs ζ > C z0 > 0 (the mode must grow from z0 towards ζ/C)")
    return np.log((zeta - C * z0) * rho / (C * z0 * (1 - rho))) / (a * zeta)


def switch_on_time_eps(zeta, C, c, eps, rho=0.5, a: float = 1.0):
    """docs/theory.md §2 form: (1/(aζ)) ln(1/ε) − (1/(aζ)) ln[C c/(ζ − C c ε) · (1 − ρ)/ρ] with z0 = c ε."""
    zeta, C, c, eps = (np.asarray(v, float) for v in (zeta, C, c, eps))
    rho = _check_rho(rho)
    return (np.log(1.0 / eps) - np.log(C * c / (zeta - C * c * eps) * (1 - rho) / rho)) / (a * zeta)


def leading_switch_on_time(zeta, eps, a: float = 1.0):
    """(1/(aζ)) ln(1/ε)."""
    return np.log(1.0 / np.asarray(eps, float)) / (a * np.asarray(zeta, float))


def measured_switch_on(t, z, z_inf, rho=0.5) -> np.ndarray:
    """First time each column of z (len(t), p) reaches ρ z_inf, interpolated linearly in ln z (NaN if never)."""
    t = np.asarray(t, float)
    z = np.asarray(z, float).reshape(len(t), -1)
    target = float(_check_rho(rho)) * np.broadcast_to(np.asarray(z_inf, float), (z.shape[1],))
    out = np.full(z.shape[1], np.nan)
    for k in range(z.shape[1]):
        above = np.nonzero(z[:, k] >= target[k])[0]
        if above.size == 0:
            continue
        i = above[0]
        if i == 0:
            out[k] = t[0]
            continue
        l0, l1, lt = np.log(z[i - 1, k]), np.log(z[i, k]), np.log(target[k])
        out[k] = t[i - 1] + (t[i] - t[i - 1]) * (lt - l0) / (l1 - l0)
    return out


def flat_mode_loss(lam, y, loss: str = "mse"):
    """L̄(r) = (1/m) Σ_μ (λ_μ r² − y_μ)² (``mse``; × ½ for ``half_mse``) for one mode, the others off."""
    lam, y = np.asarray(lam, float), np.asarray(y, float)
    factor = {"mse": 1.0, "half_mse": 0.5}[loss]

    def L(r):
        r = np.asarray(r, float)
        return factor * np.mean((np.multiply.outer(r * r, lam) - y) ** 2, axis=-1)

    return L


@dataclass(frozen=True)
class EscapePrediction:
    """docs/theory.md §1 [model] escape reading: γ* = −1/L̄''(0), d_exit = argmin L̄, t = γ* ln(d_exit/d_0)."""

    gamma_star: float
    curvature: float
    d0: float
    d_exit: float
    time: float


def escape_time(gamma_star: float, d0: float, d_exit: float) -> float:
    """t ≈ γ* ln(d_exit/d_0) (docs/theory.md §1, gradient-flow time)."""
    if not (d0 > 0 and d_exit > d0):
        raise ValueError(f"d0: expected 0 < d0 < d_exit, found d0 = {d0}, d_exit = {d_exit}")
    return float(gamma_star * np.log(d_exit / d0))


def escape_time_prediction(lam, y, z0: float, loss: str = "mse", h: float = 1e-3) -> EscapePrediction:
    """The escape reading for one mode from its flat-coordinate loss (no closed form used)."""
    L = flat_mode_loss(lam, y, loss)
    curv = float((L(h) - 2 * L(0.0) + L(-h)) / h ** 2)
    if not curv < 0:
        raise ValueError(f"lam: the ridge at r = 0 is not unstable (L''(0) = {curv:.3g} >= 0): the mode does not "
                         "switch on")
    # bracket the well bottom
    hi = 1.0
    while L(2 * hi) < L(hi):
        hi *= 2
    res = minimize_scalar(lambda r: float(L(r)), bounds=(0.0, 2 * hi), method="bounded",
                          options={"xatol": 1e-12 * hi})
    d0 = float(np.sqrt(z0))
    gs = -1.0 / curv
    return EscapePrediction(gs, curv, d0, float(res.x), escape_time(gs, d0, float(res.x)))
