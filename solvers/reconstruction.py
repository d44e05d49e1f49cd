"""Reconstruction of face states from cell averages, and slope limiters.

With cell averages q_i, the states on either side of face i+1/2 are

``first_order``   q_L = q_i,                       q_R = q_{i+1}
``muscl``         q_L = q_i + sigma_i / 2,         q_R = q_{i+1} - sigma_{i+1} / 2,
                  sigma_i = phi(q_i - q_{i-1}, q_{i+1} - q_i)   (limited slope times dx)

with the limiters (for backward difference a and forward difference b)

``minmod``     phi = minmod(a, b)                          = (sign a + sign b)/2 * min(|a|, |b|)
``mc``         phi = minmod(2a, (a + b)/2, 2b)              (monotonized central, van Leer 1977)
``van_leer``   phi = (a|b| + |a|b) / (|a| + |b|)            (zero when a b <= 0)

All three give TVD schemes (Harten) when the forward-Euler step satisfies CFL <= 1/2, hence
under SSP-RK2/3 with the same number.  MUSCL needs two ghost cells per side.

The compiled functions are selected by integer code (``LIMITERS``, ``RECONSTRUCTIONS``); a
vectorised NumPy reference, :func:`face_states_reference`, reconstructs along any axis.
"""

from __future__ import annotations

import numba
import numpy as np

from solvers.errors import require_choice

FIRST_ORDER, MUSCL = 0, 1
RECONSTRUCTIONS: dict[str, int] = {"first_order": FIRST_ORDER, "muscl": MUSCL}
#: Ghost cells a reconstruction needs on each side.
STENCIL_GHOSTS = {"first_order": 1, "muscl": 2}

MINMOD, MC, VAN_LEER = 0, 1, 2
LIMITERS: dict[str, int] = {"minmod": MINMOD, "mc": MC, "van_leer": VAN_LEER}


@numba.njit(cache=True)
def minmod(a, b):
    """minmod(a, b): the smaller in magnitude if a and b agree in sign, else 0."""
    if a * b <= 0.0:
        return 0.0
    return a if abs(a) < abs(b) else b


@numba.njit(cache=True)
def monotonized_central(a, b):
    """minmod(2a, (a+b)/2, 2b)."""
    if a * b <= 0.0:
        return 0.0
    c = 0.5 * (a + b)
    m = min(2.0 * abs(a), 2.0 * abs(b), abs(c))
    return m if c > 0.0 else -m


@numba.njit(cache=True)
def van_leer(a, b):
    """van Leer's harmonic limiter 2ab/(a+b) for ab > 0, else 0."""
    if a * b <= 0.0:
        return 0.0
    return 2.0 * a * b / (a + b)


@numba.njit(cache=True)
def limited_slope(code, a, b):
    """The limited slope (times dx) of the limiter with the given code."""
    if code == MINMOD:
        return minmod(a, b)
    elif code == MC:
        return monotonized_central(a, b)
    return van_leer(a, b)


@numba.njit(cache=True)
def cell_slope(recon, limiter, qm, q, qp):
    """Limited slope (times dx) of a cell from its neighbours; 0 for first order."""
    if recon == FIRST_ORDER:
        return 0.0
    return limited_slope(limiter, q - qm, qp - q)


def reconstruction_code(name: str) -> int:
    return RECONSTRUCTIONS[require_choice("reconstruction", name, RECONSTRUCTIONS)]


def limiter_code(name: str) -> int:
    return LIMITERS[require_choice("limiter", name, LIMITERS)]


def limited_slope_reference(limiter: str, a, b) -> np.ndarray:
    """NumPy reference of the limiters."""
    require_choice("limiter", limiter, LIMITERS)
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    same = a * b > 0
    if limiter == "minmod":
        s = np.where(np.abs(a) < np.abs(b), a, b)
    elif limiter == "mc":
        c = 0.5 * (a + b)
        s = np.sign(c) * np.minimum(np.minimum(2 * np.abs(a), 2 * np.abs(b)), np.abs(c))
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            s = 2 * a * b / (a + b)
    return np.where(same, s, 0.0)


def face_states_reference(q: np.ndarray, axis: int, reconstruction: str, limiter: str = "minmod"):
    """``(qL, qR)`` at the faces between consecutive cells of the padded field ``q`` along ``axis``.

    Entry ``i`` along ``axis`` refers to the face between padded cells ``i + 1`` and ``i + 2``
    (faces that have a full MUSCL stencil: the result is 3 shorter than ``q`` along ``axis``).
    """
    require_choice("reconstruction", reconstruction, RECONSTRUCTIONS)
    qa = np.moveaxis(q, axis, 0)
    centre = qa[1:-1]
    if reconstruction == "first_order":
        slope = np.zeros_like(centre)
    else:
        slope = limited_slope_reference(limiter, qa[1:-1] - qa[:-2], qa[2:] - qa[1:-1])
    ql = centre[:-1] + 0.5 * slope[:-1]
    qr = centre[1:] - 0.5 * slope[1:]
    return np.moveaxis(ql, 0, axis), np.moveaxis(qr, 0, axis)
