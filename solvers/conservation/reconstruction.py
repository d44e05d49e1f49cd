"""Reconstruction of face states from cell averages, and slope limiters.

With cell averages q_i, the states on either side of face i+1/2 are

``first_order``   q_L = q_i,                       q_R = q_{i+1}
``muscl``         q_L = q_i + sigma_i / 2,         q_R = q_{i+1} - sigma_{i+1} / 2,
                  sigma_i = phi(q_i - q_{i-1}, q_{i+1} - q_i)   (limited slope times dx)
``weno5``         fifth-order WENO-Z (Borges, Carmona, Costa, Don 2008) from the five cells
                  i-2 .. i+2: q_L = sum_k w_k p_k with the three quadratic candidates
                  p_0 = (2q_{i-2} - 7q_{i-1} + 11q_i)/6, p_1 = (-q_{i-1} + 5q_i + 2q_{i+1})/6,
                  p_2 = (2q_i + 5q_{i+1} - q_{i+2})/6, linear weights d = (1, 6, 3)/10,
                  Jiang–Shu smoothness indicators beta_k and
                  w_k ∝ d_k (1 + tau_5 / (beta_k + eps)),  tau_5 = |beta_0 - beta_2|,  eps = 1e-40;
                  q_R at the cell's lower face by symmetry (stencil reversed).  Not TVD (ENO-like).

with the limiters (for backward difference a and forward difference b)

``minmod``     phi = minmod(a, b)                          = (sign a + sign b)/2 * min(|a|, |b|)
``mc``         phi = minmod(2a, (a + b)/2, 2b)              (monotonized central, van Leer 1977)
``van_leer``   phi = (a|b| + |a|b) / (|a| + |b|)            (zero when a b <= 0)

All three give TVD schemes (Harten) when the forward-Euler step satisfies CFL <= 1/2, hence
under SSP-RK2/3 with the same number.  MUSCL needs two ghost cells per side, WENO5 three; the
kernels always read the five-cell stencil, so the solver asks for three.

The kernels call :func:`cell_faces`, which returns a cell's (lower, upper) face values from its
five-cell stencil, so each cell is reconstructed once per stage.

The compiled functions are selected by integer code (``LIMITERS``, ``RECONSTRUCTIONS``); a
vectorised NumPy reference, :func:`face_states_reference`, reconstructs along any axis.
"""

from __future__ import annotations

import numba
import numpy as np

from solvers.errors import require_choice

FIRST_ORDER, MUSCL, WENO5 = 0, 1, 2
RECONSTRUCTIONS: dict[str, int] = {"first_order": FIRST_ORDER, "muscl": MUSCL, "weno5": WENO5}
#: Ghost cells a reconstruction needs on each side.
STENCIL_GHOSTS = {"first_order": 1, "muscl": 2, "weno5": 3}
WENO_EPS = 1e-40

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
def weno5_upper(a, b, c, d, e):
    """WENO-Z value at the upper face of the middle cell of the stencil (a, b, c, d, e) = q_{i-2..i+2}."""
    p0 = (2.0 * a - 7.0 * b + 11.0 * c) / 6.0
    p1 = (-b + 5.0 * c + 2.0 * d) / 6.0
    p2 = (2.0 * c + 5.0 * d - e) / 6.0
    t0 = a - 2.0 * b + c
    t1 = a - 4.0 * b + 3.0 * c
    b0 = 13.0 / 12.0 * t0 * t0 + 0.25 * t1 * t1
    t0 = b - 2.0 * c + d
    t1 = b - d
    b1 = 13.0 / 12.0 * t0 * t0 + 0.25 * t1 * t1
    t0 = c - 2.0 * d + e
    t1 = 3.0 * c - 4.0 * d + e
    b2 = 13.0 / 12.0 * t0 * t0 + 0.25 * t1 * t1
    tau = abs(b0 - b2)
    w0 = 0.1 * (1.0 + tau / (b0 + WENO_EPS))
    w1 = 0.6 * (1.0 + tau / (b1 + WENO_EPS))
    w2 = 0.3 * (1.0 + tau / (b2 + WENO_EPS))
    return (w0 * p0 + w1 * p1 + w2 * p2) / (w0 + w1 + w2)


@numba.njit(cache=True)
def cell_faces(recon, lim, qmm, qm, q, qp, qpp):
    """(lower, upper) face values of the cell ``q`` from its stencil ``qmm, qm, q, qp, qpp``."""
    if recon == FIRST_ORDER:
        return q, q
    elif recon == MUSCL:
        s = limited_slope(lim, q - qm, qp - q)
        return q - 0.5 * s, q + 0.5 * s
    return weno5_upper(qpp, qp, q, qm, qmm), weno5_upper(qmm, qm, q, qp, qpp)


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


def weno5_upper_reference(a, b, c, d, e):
    """NumPy reference of :func:`weno5_upper` on arrays."""
    p0 = (2.0 * a - 7.0 * b + 11.0 * c) / 6.0
    p1 = (-b + 5.0 * c + 2.0 * d) / 6.0
    p2 = (2.0 * c + 5.0 * d - e) / 6.0
    b0 = 13.0 / 12.0 * (a - 2.0 * b + c) ** 2 + 0.25 * (a - 4.0 * b + 3.0 * c) ** 2
    b1 = 13.0 / 12.0 * (b - 2.0 * c + d) ** 2 + 0.25 * (b - d) ** 2
    b2 = 13.0 / 12.0 * (c - 2.0 * d + e) ** 2 + 0.25 * (3.0 * c - 4.0 * d + e) ** 2
    tau = np.abs(b0 - b2)
    w = [dk * (1.0 + tau / (bk + WENO_EPS)) for dk, bk in ((0.1, b0), (0.6, b1), (0.3, b2))]
    return (w[0] * p0 + w[1] * p1 + w[2] * p2) / (w[0] + w[1] + w[2])


def face_states_reference(q: np.ndarray, axis: int, reconstruction: str, limiter: str = "minmod"):
    """``(qL, qR)`` at the faces between consecutive cells of the padded field ``q`` along ``axis``.

    The result is one shorter than ``q`` along ``axis``: entry ``m`` is the face between padded
    cells ``m`` and ``m + 1``.  Faces whose cells lack a full five-cell stencil are NaN.
    """
    require_choice("reconstruction", reconstruction, RECONSTRUCTIONS)
    qa = np.moveaxis(np.asarray(q, dtype=np.float64), axis, 0)
    lower = np.full_like(qa, np.nan)
    upper = np.full_like(qa, np.nan)
    s = [qa[k: qa.shape[0] - 4 + k] for k in range(5)]  # stencils of cells 2 .. P-3
    if reconstruction == "first_order":
        lo, hi = s[2], s[2]
    elif reconstruction == "muscl":
        slope = limited_slope_reference(limiter, s[2] - s[1], s[3] - s[2])
        lo, hi = s[2] - 0.5 * slope, s[2] + 0.5 * slope
    else:
        lo, hi = weno5_upper_reference(s[4], s[3], s[2], s[1], s[0]), weno5_upper_reference(*s)
    lower[2:-2] = lo
    upper[2:-2] = hi
    ql, qr = upper[:-1], lower[1:]
    return np.moveaxis(ql, 0, axis), np.moveaxis(qr, 0, axis)
