"""Multi-core (Numba ``prange``) variants of the first-order Godunov Burgers fast path, and their NumPy reference.

Same scheme and same arithmetic per cell as :func:`solvers.conservation_kernels.burgers_godunov_euler_1d`
/ ``_2d`` (THEORY.md §1):

    out_i = q_i - (a dt / (2 dx)) (F_{i+1/2} - F_{i-1/2}),   F_{i+1/2} = max(max(q_i, 0)^2, min(q_{i+1}, 0)^2),

returning the hyperbolic rate ``a max|out| / dx`` (2-D: ``max|out| (a0/dx + a1/dy)``), or NaN when a
value is not finite.  The interior is cut into ``chunks`` contiguous pieces (1-D: cells; 2-D: rows
along axis 0), one ``prange`` iteration each; every piece recomputes the one face flux it shares
with its lower neighbour, so no piece waits for another and the result is *bitwise identical* to
the serial kernel for any number of chunks (the maximum does not round).

Inside a piece the 1-D kernel works on blocks of ``BLOCK`` cells: the ``BLOCK + 1`` face fluxes go
into a per-chunk scratch row that stays in L1, then the update, then ``max|out|`` in a separate
pass; without the flux carried from cell to cell and the reduction in the update loop, both loops
vectorise.  The scratch (``chunks x (BLOCK + 1)`` in 1-D, ``chunks x ny`` in 2-D) is allocated once by
the caller (:func:`scratch_1d`, :func:`scratch_2d`), so nothing is allocated per step.

Threads: ``chunks`` is the parallelism the caller asks for; Numba runs at most
``numba.get_num_threads()`` of them at once.  A single chunk is the serial blocked kernel.

Wiring into :func:`solvers.conservation.solve_conservation` (not done here): on the fast path,
when the interior has at least ``PARALLEL_THRESHOLD`` cells and ``numba.get_num_threads() > 1``,
call ``burgers_godunov_euler_1d_parallel(q, out, dt, g, dx, a, scratch)`` with
``scratch = scratch_1d(numba.get_num_threads())`` allocated before the step loop (2-D likewise).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange

#: Cells per 1-D block (the flux scratch of a block, 8 (BLOCK + 1) bytes, stays in L1).
BLOCK = 1024
#: Interior cells from which the threaded kernels pay for their fork/join (about 10 µs per step).
PARALLEL_THRESHOLD = 200_000


def scratch_1d(chunks: int) -> np.ndarray:
    """Flux scratch for :func:`burgers_godunov_euler_1d_parallel` with ``chunks`` pieces."""
    if int(chunks) < 1:
        raise ValueError(f"chunks: expected a whole number >= 1, found {chunks!r}")
    return np.zeros((int(chunks), BLOCK + 1))


def scratch_2d(chunks: int, ny: int) -> np.ndarray:
    """Row-flux scratch for :func:`burgers_godunov_euler_2d_parallel` (``ny`` interior cells along axis 1)."""
    if int(chunks) < 1:
        raise ValueError(f"chunks: expected a whole number >= 1, found {chunks!r}")
    return np.zeros((int(chunks), int(ny)))


@numba.njit(cache=True)
def _flux(l, r):
    lp = max(l, 0.0)
    rm = min(r, 0.0)
    return max(lp * lp, rm * rm)


@numba.njit(cache=True, parallel=True)
def burgers_godunov_euler_1d_parallel(q, out, dt, g, dx, a, scratch):
    """One forward-Euler Godunov step of 1-D Burgers over ``scratch.shape[0]`` chunks; returns ``a max|out| / dx``."""
    n = q.shape[0] - 2 * g
    chunks = scratch.shape[0]
    c = 0.5 * a * dt / dx
    maxima = np.zeros(chunks)
    for p in prange(chunks):
        lo = (n * p) // chunks
        hi = (n * (p + 1)) // chunks
        flux = scratch[p]
        m = 0.0
        for s in range(lo, hi, BLOCK):
            e = min(s + BLOCK, hi)
            qs = q[g - 1 + s:g + e + 1]  # cell s - 1 ... e: qs[k] is cell s - 1 + k
            os = out[g + s:g + e]
            length = e - s
            for k in range(length + 1):
                flux[k] = _flux(qs[k], qs[k + 1])
            for k in range(length):
                os[k] = qs[k + 1] - c * (flux[k + 1] - flux[k])
            bm = 0.0
            for k in range(length):
                bm = max(bm, abs(os[k]))
            if bm > m:
                m = bm
            bad = False
            for k in range(length):
                bad |= os[k] != os[k]
            if bad:
                m = np.nan
                break
        maxima[p] = m
    m = 0.0
    for p in range(chunks):
        if not (maxima[p] <= m):
            m = maxima[p]
            if m != m:
                return m
    return a * m / dx


@numba.njit(cache=True, parallel=True)
def burgers_godunov_euler_2d_parallel(q, out, dt, g, dx, dy, a0, a1, scratch):
    """One forward-Euler Godunov step of 2-D Burgers, rows of axis 0 split over ``scratch.shape[0]`` chunks.

    ``scratch[p]`` is chunk ``p``'s row of lower x-face fluxes; returns ``max|out| (a0/dx + a1/dy)``.
    """
    nx = q.shape[0] - 2 * g
    ny = q.shape[1] - 2 * g
    chunks = scratch.shape[0]
    cx = 0.5 * a0 * dt / dx
    cy = 0.5 * a1 * dt / dy
    maxima = np.zeros(chunks)
    for p in prange(chunks):
        lo = (nx * p) // chunks
        hi = (nx * (p + 1)) // chunks
        row_flux = scratch[p]
        below = q[g - 1 + lo, g:g + ny]
        first = q[g + lo, g:g + ny]
        for j in range(ny):
            row_flux[j] = _flux(below[j], first[j])
        m = 0.0
        for i in range(lo, hi):
            qrow = q[g + i, g - 1:]  # cell (i, j) is qrow[j + 1]
            qnext = q[g + i + 1, g:]
            orow = out[g + i, g:]
            k_lo = _flux(qrow[0], qrow[1])
            qij = qrow[1]
            for j in range(ny):
                qe = qrow[j + 2]
                lp = max(qij, 0.0)
                rm = min(qnext[j], 0.0)
                h = max(lp * lp, rm * rm)
                rm = min(qe, 0.0)
                k = max(lp * lp, rm * rm)
                v = qij - cx * (h - row_flux[j]) - cy * (k - k_lo)
                orow[j] = v
                row_flux[j] = h
                k_lo = k
                qij = qe
                av = abs(v)
                if not (av <= m):
                    m = av
                    if av != av:
                        break
            if m != m:
                break
        maxima[p] = m
    m = 0.0
    for p in range(chunks):
        if not (maxima[p] <= m):
            m = maxima[p]
            if m != m:
                return m
    return m * (a0 / dx + a1 / dy)


# -- NumPy reference ----------------------------------------------------------------------------------------------------
def burgers_godunov_euler_reference(q: np.ndarray, dt: float, g: int, dx, a) -> tuple[np.ndarray, float]:
    """NumPy reference of both kernels (ghost cells of ``q`` already filled): ``(out_interior, rate)``."""
    dx = tuple(np.atleast_1d(dx).astype(float))
    a = tuple(np.broadcast_to(np.asarray(a, dtype=float), (q.ndim,)))
    interior = tuple(slice(g, s - g) for s in q.shape)
    out = q[interior].copy()
    for k in range(q.ndim):
        sel = list(interior)
        sel[k] = slice(g - 1, q.shape[k] - g)  # cells -1 .. n-1 along k
        left = q[tuple(sel)]
        sel[k] = slice(g, q.shape[k] - g + 1)  # cells 0 .. n
        right = q[tuple(sel)]
        f = np.maximum(np.maximum(left, 0.0) ** 2, np.minimum(right, 0.0) ** 2)
        f = np.moveaxis(f, k, 0)
        out -= np.moveaxis(0.5 * a[k] * dt / dx[k] * (f[1:] - f[:-1]), 0, k)
    rate = float(np.max(np.abs(out))) * sum(ak / dk for ak, dk in zip(a, dx))
    return out, rate
