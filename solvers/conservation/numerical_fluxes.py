"""Numerical fluxes F(q_L, q_R) for a convex scalar flux f (docs/theory.md §1, §5).

With q_s the sonic point (minimiser of f):

``godunov``         F = max( f(max(q_L, q_s)), f(min(q_R, q_s)) )
                    the exact Godunov flux of a convex f: the minimum of f over [q_L, q_R] when
                    q_L <= q_R, the maximum over [q_R, q_L] otherwise.  Exact at sonic points,
                    so a transonic rarefaction opens without an entropy fix.
``engquist_osher``  F = f(max(q_L, q_s)) + f(min(q_R, q_s)) - f(q_s)
``rusanov``         F = (f(q_L) + f(q_R))/2 - max(|f'(q_L)|, |f'(q_R)|) (q_R - q_L)/2   (local Lax–Friedrichs;
                    for convex f the largest |f'| on [q_L, q_R] is at an end point)

All three are monotone and consistent (F(q, q) = f(q)).  A spatially varying coefficient
a(x) > 0 enters as ``a_face * F(q_L, q_R)``: for a constant a > 0 each of the three fluxes of
``a f`` equals ``a`` times the flux of ``f`` (a > 0 keeps f convex with the same sonic point),
and the solver takes ``a_face`` as the mean of the two neighbouring cell values (see
:mod:`solvers.conservation.solver`).

The compiled functions call the physical flux through the module-level names ``flux_value``,
``flux_derivative`` and ``SONIC`` (bound to Burgers' flux, so the built-in path is cached); see
:mod:`solvers.conservation.flux_functions` for how a user flux is substituted.  Each has a vectorised NumPy
reference in :func:`numerical_flux_reference`.
"""

from __future__ import annotations

import numba
import numpy as np

from solvers.errors import require_choice
from solvers.conservation.flux_functions import BURGERS, ConvexFlux
from solvers.conservation.flux_functions import burgers_derivative as flux_derivative
from solvers.conservation.flux_functions import burgers_value as flux_value

SONIC = 0.0  # sonic point of the flux bound to flux_value (Burgers)

GODUNOV, ENGQUIST_OSHER, RUSANOV = 0, 1, 2
#: Numerical fluxes by name -> the code the compiled kernels take.
NUMERICAL_FLUXES: dict[str, int] = {"godunov": GODUNOV, "engquist_osher": ENGQUIST_OSHER, "rusanov": RUSANOV}


@numba.njit(cache=True)
def godunov(ql, qr):
    """Exact Godunov flux of the convex flux bound to ``flux_value``."""
    return max(flux_value(max(ql, SONIC)), flux_value(min(qr, SONIC)))


@numba.njit(cache=True)
def engquist_osher(ql, qr):
    """Engquist–Osher flux of a convex flux."""
    return flux_value(max(ql, SONIC)) + flux_value(min(qr, SONIC)) - flux_value(SONIC)


@numba.njit(cache=True)
def rusanov(ql, qr):
    """Local Lax–Friedrichs (Rusanov) flux."""
    speed = max(abs(flux_derivative(ql)), abs(flux_derivative(qr)))
    return 0.5 * (flux_value(ql) + flux_value(qr)) - 0.5 * speed * (qr - ql)


@numba.njit(cache=True)
def numerical_flux(code, ql, qr):
    """The numerical flux with the given code (``NUMERICAL_FLUXES``) at one face."""
    if code == GODUNOV:
        return godunov(ql, qr)
    elif code == ENGQUIST_OSHER:
        return engquist_osher(ql, qr)
    return rusanov(ql, qr)


#: The compiled functions of this module in dependency order (for flux substitution).
COMPILED = (godunov, engquist_osher, rusanov, numerical_flux)


def numerical_flux_code(name: str) -> int:
    """The kernel code of a numerical flux name; unknown names raise listing the valid ones."""
    return NUMERICAL_FLUXES[require_choice("numerical_flux", name, NUMERICAL_FLUXES)]


def numerical_flux_reference(name: str, flux: ConvexFlux, ql, qr) -> np.ndarray:
    """NumPy reference of the numerical flux ``name`` of ``flux`` at arrays of face states."""
    require_choice("numerical_flux", name, NUMERICAL_FLUXES)
    flux = flux or BURGERS
    ql = np.asarray(ql, dtype=np.float64)
    qr = np.asarray(qr, dtype=np.float64)
    qs = flux.sonic
    if name == "godunov":
        return np.maximum(flux.value(np.maximum(ql, qs)), flux.value(np.minimum(qr, qs)))
    if name == "engquist_osher":
        return flux.value(np.maximum(ql, qs)) + flux.value(np.minimum(qr, qs)) - flux.value(np.array(qs))
    speed = np.maximum(np.abs(flux.derivative(ql)), np.abs(flux.derivative(qr)))
    return 0.5 * (flux.value(ql) + flux.value(qr)) - 0.5 * speed * (qr - ql)
