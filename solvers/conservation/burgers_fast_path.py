"""The fast path of :func:`solvers.conservation.solver.solve_conservation`, serial and multi-core, and its NumPy reference.

Burgers' flux, exact Godunov flux, constant ``a`` per axis, no source, in 1-D and 2-D, optionally with a constant
viscosity ``nu`` treated explicitly (docs/theory.md §1); forward Euler, or the stages of SSP-RK2/3 (a stage is an Euler
step blended with the step's initial state, ``blend``); first order, or MUSCL (``limiter``: the face states
``q_i + s_i/2`` and ``q_{i+1} - s_{i+1}/2`` with the limited slopes ``s`` of :mod:`solvers.conservation.reconstruction`).
In 1-D, with ``F_{i+1/2} = max(max(q_L, 0)^2, min(q_R, 0)^2)`` (twice the Godunov flux of u^2/2),

    inviscid:  out_i = q_i - c (F_{i+1/2} - F_{i-1/2}),                                c = a dt / (2 dx)
    viscous:   out_i = q_i - (G_{i+1/2} - G_{i-1/2}),   G_{i+1/2} = c F_{i+1/2} - d (q_{i+1} - q_i),   d = nu dt / dx^2

and in 2-D the same differences along both axes are subtracted in turn (axis 0 first).  Every kernel returns the
hyperbolic rate of the new state, ``a max|out| / dx`` (2-D: ``max|out| (a0/dx + a1/dy)``), so that the next stable
step is ``cfl / rate``, or NaN when a value of ``out`` is not finite.  The viscous kernels are the inviscid ones
compiled with a number for ``nu`` instead of ``None`` (Numba removes the branch that does not apply).

Why it is fast (figures in docs/benchmarks.md):

* **First order: one loop, nothing carried.**  Each cell computes both of its faces (2-D: all four) from its
  neighbours, its new value, and the maximum below in the same loop: a face is evaluated twice (once by each of its
  cells), but no value passes from one cell to the next, so the loop vectorises (LLVM interleaves four 8-wide
  vectors with four running maxima), reads the field once and needs no scratch.  Against the former blocks (face
  fluxes into an L1 row, then the update, then the maximum: three loops) it ran 1.8-1.9x faster in 1-D and about
  2x in 2-D, and against gcc's code for the same loop (``benchmarks/c/godunov_burgers.c``, ``fused``) 1.1-1.5x
  (docs/benchmarks.md).
* **MUSCL: blocks.**  The face fluxes and slopes of a block of ``BLOCK`` cells (2-D: of one row) go into scratch
  rows that stay in L1, then the block is updated.
* **The maximum as integers.**  For non-negative doubles the order of the bit patterns, read as int64, is the order
  of the values, and inf and NaN have the largest patterns (``>= 0x7FF0...``).  So ``max|out|`` is an integer
  maximum over ``bits(out) & 0x7FFF...`` (:func:`_bits`, a register move): it vectorises without fastmath (a
  floating-point max reduction needs ``nnan``, which would also delete the NaN test), it is exact, and one pass
  gives both the rate and the blow-up test.
* **Chunks.**  The interior is cut into ``chunks`` contiguous pieces (1-D: cells; 2-D: rows along axis 0); the serial
  kernels run one piece, the ``prange`` kernels one piece per iteration.  Each piece recomputes the face it shares
  with its lower neighbour, so no piece waits for another and the result is bitwise the same for any number of
  chunks.

The scratch (:func:`scratch_1d`, :func:`scratch_2d`) is allocated once by the caller: nothing is allocated per step.

:func:`advance` runs the step loop itself, compiled, from one output time to the next: the
step rule of :class:`solvers.time_stepping.Clock` (``dt = cfl / (rate + par_rate)`` as ``combine_bounds`` forms it,
shortened to land on the output time), the ghost fill and the step.  A Python loop would add about 10 µs per step,
more than the step itself below about 10^4 cells.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba
import numpy as np
from numba import prange, types
from numba.extending import overload

from solvers.float_bits import ABS_BITS, INF_BITS, bits as _bits
from solvers.grid import fill_ghosts_compiled
from solvers.conservation.reconstruction import MC, MINMOD, face_states_reference, minmod, monotonized_central, van_leer
from solvers.conservation.thread_policy import PARALLEL_THRESHOLD  # noqa: F401 (cells from which threads pay)

#: Cells per 1-D block (its flux and slope rows, 2 x 8 (BLOCK + 2) bytes, stay in L1).
BLOCK = 1024


class FastScratch(NamedTuple):
    """Per-chunk work space: face fluxes and MUSCL slopes (1-D ``(chunks, 2, BLOCK + 2)``, 2-D
    ``(chunks, 6, ny + 2)``) and the bit pattern of each chunk's ``max|out|`` (``(chunks,)`` int64)."""

    flux: np.ndarray
    peaks: np.ndarray


def _chunks(chunks) -> int:
    if isinstance(chunks, bool) or int(chunks) != chunks or int(chunks) < 1:
        raise ValueError(f"chunks: expected a whole number >= 1, found {chunks!r}")
    return int(chunks)


def scratch_1d(chunks: int = 1) -> FastScratch:
    """Scratch for the 1-D kernels with ``chunks`` pieces."""
    n = _chunks(chunks)
    return FastScratch(np.zeros((n, 2, BLOCK + 2)), np.zeros(n, dtype=np.int64))


def scratch_2d(ny: int, chunks: int = 1) -> FastScratch:
    """Scratch for the 2-D kernels with ``chunks`` pieces; ``ny`` interior cells along axis 1."""
    n = _chunks(chunks)
    return FastScratch(np.zeros((n, 6, int(ny) + 2)), np.zeros(n, dtype=np.int64))


@numba.njit(cache=True, inline="always")
def _godunov(left, right):
    """max(max(l, 0)^2, min(r, 0)^2): twice the exact Godunov flux of u^2/2."""
    lp = max(left, 0.0)
    rm = min(right, 0.0)
    return max(lp * lp, rm * rm)


@numba.njit(cache=True)
def _largest(peaks):
    """max|out| from the chunks' bit patterns; NaN if any value was not finite."""
    top = 0
    for p in range(peaks.shape[0]):
        top = max(top, peaks[p])
    if top >= INF_BITS:
        return np.nan
    values = peaks.view(np.float64)
    m = 0.0
    for p in range(values.shape[0]):
        m = max(m, values[p])
    return m


# -- one face, one cell ---------------------------------------------------------------------------------------------
@numba.njit(cache=True)
def _face(left, right, below, above, c, d, nu):
    """A face flux in the units of the update: ``F(left, right)`` (inviscid; scaled by ``c`` in :func:`_change`) or
    ``c F - d (above - below)`` with the cell values ``below``/``above`` on either side."""
    if nu is None:
        return _godunov(left, right)
    return c * _godunov(left, right) - d * (above - below)


@numba.njit(cache=True)
def _change(upper, lower, c, nu):
    """What a cell loses between its two faces: ``c (F_hi - F_lo)`` or ``G_hi - G_lo``."""
    if nu is None:
        return c * (upper - lower)
    return upper - lower


@numba.njit(cache=True)
def _slopes(limiter, below, here, above, out, count):
    """MUSCL slopes (times dx) of ``count`` cells from three aligned views of their neighbours (one loop per
    limiter, so that the choice is not made per cell)."""
    if limiter == MINMOD:
        for j in range(count):
            out[j] = minmod(here[j] - below[j], above[j] - here[j])
    elif limiter == MC:
        for j in range(count):
            out[j] = monotonized_central(here[j] - below[j], above[j] - here[j])
    else:
        for j in range(count):
            out[j] = van_leer(here[j] - below[j], above[j] - here[j])


# -- 1-D ----------------------------------------------------------------------------------------------------------------
@numba.njit(cache=True)
def _first_order_1d(q, out, lo, hi, g, c, d, nu, blend):
    """First-order update of cells [lo, hi) of the interior in one loop: each cell computes both of its faces
    (the face it shares with its upper neighbour is computed twice, once by each cell), so no value is carried from
    one cell to the next and the loop vectorises; the new value's |bits| maximum is taken in the same loop.  Returns
    the largest bit pattern of |out| there."""
    qs = q[g - 1 + lo:g + hi + 1]  # qs[k] is cell lo - 1 + k
    os = out[g + lo:g + hi]
    m = 0
    if blend is None:
        for k in range(hi - lo):
            v = qs[k + 1] - _change(_face(qs[k + 1], qs[k + 2], qs[k + 1], qs[k + 2], c, d, nu),
                                    _face(qs[k], qs[k + 1], qs[k], qs[k + 1], c, d, nu), c, nu)
            os[k] = v
            m = max(m, _bits(v) & ABS_BITS)
    else:
        q0s = blend[0][g + lo:g + hi]
        alpha = blend[1]
        beta = blend[2]
        for k in range(hi - lo):
            v = qs[k + 1] - _change(_face(qs[k + 1], qs[k + 2], qs[k + 1], qs[k + 2], c, d, nu),
                                    _face(qs[k], qs[k + 1], qs[k], qs[k + 1], c, d, nu), c, nu)
            v = alpha * q0s[k] + beta * v
            os[k] = v
            m = max(m, _bits(v) & ABS_BITS)
    return m


@numba.njit(cache=True)
def _cells_1d(q, out, bits, lo, hi, g, dt, dx, a, nu, limiter, blend, rows):
    """Update cells [lo, hi) of the interior (``limiter`` None: first order, :func:`_first_order_1d`; a code of
    :data:`solvers.conservation.reconstruction.LIMITERS`: MUSCL, by blocks); returns the largest bit pattern of
    |out| there."""
    c = 0.5 * a * dt / dx
    d = 0.0 if nu is None else nu * dt / (dx * dx)
    if limiter is None:
        return _first_order_1d(q, out, lo, hi, g, c, d, nu, blend)
    flux = rows[0]
    slope = rows[1]
    m = 0
    for s in range(lo, hi, BLOCK):
        e = min(s + BLOCK, hi)
        length = e - s
        qs = q[g - 1 + s:g + e + 1]  # qs[k] is cell s - 1 + k: slicing first keeps every index non-negative
        os = out[g + s:g + e]
        ob = bits[g + s:g + e]
        _slopes(limiter, q[g - 2 + s:], qs, q[g + s:], slope, length + 2)  # slope[k] is that of cell s - 1 + k
        for k in range(length + 1):
            flux[k] = _face(qs[k] + 0.5 * slope[k], qs[k + 1] - 0.5 * slope[k + 1], qs[k], qs[k + 1], c, d, nu)
        for k in range(length):
            os[k] = qs[k + 1] - _change(flux[k + 1], flux[k], c, nu)
        if blend is not None:
            q0s = blend[0][g + s:g + e]
            alpha = blend[1]
            beta = blend[2]
            for k in range(length):
                os[k] = alpha * q0s[k] + beta * os[k]
        block_peak = 0  # a per-block maximum, as in 2-D per row
        for k in range(length):
            block_peak = max(block_peak, ob[k] & ABS_BITS)
        m = max(m, block_peak)
    return m


@numba.njit(cache=True)
def burgers_godunov_euler_1d(q, out, dt, g, dx, a, nu, limiter, blend, scratch):
    """One forward-Euler step of 1-D Burgers into ``out`` (one chunk); returns ``a max|out| / dx``.

    ``nu``: None or a viscosity.  ``limiter``: None (first order) or a limiter code (MUSCL).  ``blend``: None, or
    ``(q0, alpha, beta)`` for a Shu–Osher stage ``out = alpha q0 + beta (q + dt L(q))`` (:mod:`solvers.time_stepping`)."""
    n = q.shape[0] - 2 * g
    scratch.peaks[0] = _cells_1d(q, out, out.view(np.int64), 0, n, g, dt, dx, a, nu, limiter, blend, scratch.flux[0])
    return a * _largest(scratch.peaks[:1]) / dx


@numba.njit(cache=True, parallel=True)
def burgers_godunov_euler_1d_parallel(q, out, dt, g, dx, a, nu, limiter, blend, scratch):
    """The same step over ``scratch.flux.shape[0]`` chunks, one ``prange`` iteration each (bitwise the serial one)."""
    n = q.shape[0] - 2 * g
    chunks = scratch.flux.shape[0]
    bits = out.view(np.int64)
    flux, peaks = scratch  # (writing through scratch.peaks inside prange is lost: Numba 0.68)
    for p in prange(chunks):
        peaks[p] = _cells_1d(q, out, bits, (n * p) // chunks, (n * (p + 1)) // chunks, g, dt, dx, a, nu, limiter,
                             blend, flux[p])
    return a * _largest(peaks) / dx


# -- 2-D ----------------------------------------------------------------------------------------------------------------
@numba.njit(cache=True)  # not inline="always": Numba's IR inlining here kept the row loop from vectorising (5x slower)
def _first_order_cell_2d(row, prv, nxt, j, cx, cy, dx2, dy2, nu):
    """The first-order Euler value of cell ``row[j + 1]`` from its four faces (``prv``/``nxt``: the rows below and
    above, aligned with the cell)."""
    h = row[j + 1]
    return (h - _change(_face(h, nxt[j], h, nxt[j], cx, dx2, nu), _face(prv[j], h, prv[j], h, cx, dx2, nu), cx, nu)
            - _change(_face(h, row[j + 2], h, row[j + 2], cy, dy2, nu), _face(row[j], h, row[j], h, cy, dy2, nu), cy,
                      nu))


@numba.njit(cache=True)
def _first_order_2d(q, out, lo, hi, g, cx, cy, dx2, dy2, nu, blend):
    """First-order update of interior rows [lo, hi) (axis 0), one loop per row: each cell computes its four faces
    from the rows below, at and above it (as in 1-D, no value is carried from one cell or row to the next, so the
    loop vectorises and the rows need no buffer), and the new value's |bits| maximum in the same loop.  Returns the
    largest bit pattern of |out| there."""
    ny = q.shape[1] - 2 * g
    m = 0
    for i in range(lo, hi):
        row = q[g + i, g - 1:g + ny + 1]  # row[j + 1] is cell (i, j)
        prv = q[g + i - 1, g:g + ny]
        nxt = q[g + i + 1, g:g + ny]
        o = out[g + i, g:g + ny]
        if blend is None:
            for j in range(ny):
                v = _first_order_cell_2d(row, prv, nxt, j, cx, cy, dx2, dy2, nu)
                o[j] = v
                m = max(m, _bits(v) & ABS_BITS)
        else:
            q0row = blend[0][g + i, g:g + ny]
            alpha = blend[1]
            beta = blend[2]
            for j in range(ny):
                v = alpha * q0row[j] + beta * _first_order_cell_2d(row, prv, nxt, j, cx, cy, dx2, dy2, nu)
                o[j] = v
                m = max(m, _bits(v) & ABS_BITS)
    return m


@numba.njit(cache=True)
def _rows_2d(q, out, bits, lo, hi, g, dt, dx, dy, a0, a1, nu, limiter, blend, rows):
    """Update interior rows [lo, hi) (axis 0): first order by :func:`_first_order_2d`; MUSCL row by row, where
    ``rows`` holds the lower and upper x-face fluxes of a row, its y-face fluxes, the x-slopes of the row and of
    the next one, and the y-slopes.  Returns the largest bit pattern of |out| there."""
    ny = q.shape[1] - 2 * g
    cx = 0.5 * a0 * dt / dx
    cy = 0.5 * a1 * dt / dy
    dx2 = 0.0 if nu is None else nu * dt / (dx * dx)
    dy2 = 0.0 if nu is None else nu * dt / (dy * dy)
    if limiter is None:
        return _first_order_2d(q, out, lo, hi, g, cx, cy, dx2, dy2, nu, blend)
    lower = rows[0]
    upper = rows[1]
    side = rows[2]
    sx_here = rows[3]
    sx_next = rows[4]
    sy = rows[5]
    below = q[g - 1 + lo, g:g + ny]
    first = q[g + lo, g:g + ny]
    _slopes(limiter, q[g - 2 + lo, g:], below, first, sx_next, ny)  # x-slopes of the row below (sx_next for now)
    _slopes(limiter, below, first, q[g + lo + 1, g:], sx_here, ny)  # and of the first row
    for j in range(ny):
        lower[j] = _face(below[j] + 0.5 * sx_next[j], first[j] - 0.5 * sx_here[j], below[j], first[j], cx, dx2, nu)
    m = 0
    for i in range(lo, hi):
        row = q[g + i, g - 1:g + ny + 1]  # row[j + 1] is cell (i, j)
        here = row[1:]
        nxt = q[g + i + 1, g:g + ny]
        o = out[g + i, g:g + ny]
        ob = bits[g + i, g:g + ny]
        _slopes(limiter, here, nxt, q[g + i + 2, g:], sx_next, ny)
        for j in range(ny):
            upper[j] = _face(here[j] + 0.5 * sx_here[j], nxt[j] - 0.5 * sx_next[j], here[j], nxt[j], cx, dx2, nu)
        _slopes(limiter, q[g + i, g - 2:], row, q[g + i, g:], sy, ny + 2)  # sy[j]: the y-slope of cell (i, j - 1)
        for j in range(ny + 1):
            side[j] = _face(row[j] + 0.5 * sy[j], row[j + 1] - 0.5 * sy[j + 1], row[j], row[j + 1], cy, dy2, nu)
        for j in range(ny):
            o[j] = here[j] - _change(upper[j], lower[j], cx, nu) - _change(side[j + 1], side[j], cy, nu)
        if blend is not None:
            q0row = blend[0][g + i, g:g + ny]
            alpha = blend[1]
            beta = blend[2]
            for j in range(ny):
                o[j] = alpha * q0row[j] + beta * o[j]
        row_peak = 0  # a per-row maximum: the reduction vectorises (carried across rows it did not)
        for j in range(ny):
            row_peak = max(row_peak, ob[j] & ABS_BITS)
        m = max(m, row_peak)
        lower, upper = upper, lower
        sx_here, sx_next = sx_next, sx_here
    return m


@numba.njit(cache=True)
def burgers_godunov_euler_2d(q, out, dt, g, dx, dy, a0, a1, nu, limiter, blend, scratch):
    """One forward-Euler step of 2-D Burgers into ``out`` (one chunk; ``nu``, ``limiter``, ``blend`` as in 1-D); returns
    ``max|out| (a0/dx + a1/dy)``."""
    nx = q.shape[0] - 2 * g
    scratch.peaks[0] = _rows_2d(q, out, out.view(np.int64), 0, nx, g, dt, dx, dy, a0, a1, nu, limiter, blend,
                                scratch.flux[0])
    return _largest(scratch.peaks[:1]) * (a0 / dx + a1 / dy)


@numba.njit(cache=True, parallel=True)
def burgers_godunov_euler_2d_parallel(q, out, dt, g, dx, dy, a0, a1, nu, limiter, blend, scratch):
    """The same step with the rows split over ``scratch.flux.shape[0]`` chunks (bitwise the serial one)."""
    nx = q.shape[0] - 2 * g
    chunks = scratch.flux.shape[0]
    bits = out.view(np.int64)
    flux, peaks = scratch
    for p in prange(chunks):
        peaks[p] = _rows_2d(q, out, bits, (nx * p) // chunks, (nx * (p + 1)) // chunks, g, dt, dx, dy, a0, a1, nu,
                            limiter, blend, flux[p])
    return _largest(peaks) * (a0 / dx + a1 / dy)


# -- compiled step loops ------------------------------------------------------------------------------------------------
#: Status codes of the step loops.
LANDED, BLEW_UP, STEP_LIMIT = 0, 1, 2


@numba.njit(cache=True)
def _next_step(t, target, cfl, rate, par_rate):
    """``Clock.next_step(combine_bounds(1/rate, 1/par_rate))`` with the same arithmetic: ``(dt, lands)``."""
    r = 0.0
    for term in (rate, par_rate):
        if term > 0.0:
            bound = 1.0 / term
            if math.isfinite(bound):
                r += 1.0 / bound
    dt = cfl * (math.inf if r == 0.0 else 1.0 / r)
    remaining = target - t
    if dt >= remaining - 1e-12 * max(1.0, abs(target)):
        return remaining, True
    return dt, False


def _stage(q_prev, out, dt, g, geometry, nu, limiter, blend, scratch, parallel):
    """One Euler stage of the fast path on ``q_prev`` (1-D or 2-D), for compiled callers only.

    ``geometry`` is ``(dx, a)`` in 1-D and ``(dx, dy, a0, a1)`` in 2-D; ``parallel`` None (serial kernel)
    or True (prange kernel, compiled only then: it is slow to compile).  The kernel is chosen when the
    caller is compiled (:func:`_stage_typed`), from the dimension of ``q_prev`` and the type of ``parallel``."""
    raise TypeError("_stage runs compiled only, inside advance()")


@overload(_stage, jit_options={"cache": True})
def _stage_typed(q_prev, out, dt, g, geometry, nu, limiter, blend, scratch, parallel):
    serial = isinstance(parallel, types.NoneType)
    if q_prev.ndim == 1:
        kernel = burgers_godunov_euler_1d if serial else burgers_godunov_euler_1d_parallel

        def stage_1d(q_prev, out, dt, g, geometry, nu, limiter, blend, scratch, parallel):
            dx, a = geometry
            return kernel(q_prev, out, dt, g, dx, a, nu, limiter, blend, scratch)

        return stage_1d
    kernel_2d = burgers_godunov_euler_2d if serial else burgers_godunov_euler_2d_parallel

    def stage_2d(q_prev, out, dt, g, geometry, nu, limiter, blend, scratch, parallel):
        dx, dy, a0, a1 = geometry
        return kernel_2d(q_prev, out, dt, g, dx, dy, a0, a1, nu, limiter, blend, scratch)

    return stage_2d


@numba.njit(cache=True)
def advance(q, work, spare, tab, t, target, cfl, rate, par_rate, step, max_steps, g, kinds, values, geometry, nu,
            limiter, scratch, parallel):  # fmt: skip
    """Step the padded state ``q`` (1-D or 2-D) from ``t`` until it lands on ``target``, with the Shu–Osher
    stages ``tab`` (:data:`solvers.time_stepping.INTEGRATORS`; the first stage is a plain Euler step).

    ``geometry`` is ``(dx, a)`` in 1-D and ``(dx, dy, a0, a1)`` in 2-D; ``nu`` and ``limiter`` as in
    :func:`burgers_godunov_euler_1d`; ``parallel`` None (serial kernels) or True (prange kernels).  ``work``
    and ``spare`` are the stage buffers (one stage: ``spare`` may be ``work``); ``rate`` is the hyperbolic
    rate of ``q``, ``par_rate`` the parabolic one (0 without viscosity), ``step`` the steps taken so far.
    Returns ``(q, work, spare, t, dt, rate, step, stage, status)`` with the three buffers in their new roles
    (``q`` holds the state); ``status`` is LANDED, BLEW_UP (stage ``stage`` of the step of size ``dt`` produced a
    non-finite value, in ``work`` for even stages and ``spare`` for odd ones) or STEP_LIMIT (``max_steps`` reached
    before ``target``).
    """
    dt = 0.0
    while True:
        if step >= max_steps:
            return q, work, spare, t, dt, rate, step, -1, STEP_LIMIT
        dt, lands = _next_step(t, target, cfl, rate, par_rate)
        prev = q
        for s in range(tab.shape[0]):
            out = work if s % 2 == 0 else spare
            fill_ghosts_compiled(prev, g, kinds, values)
            if s == 0:
                new_rate = _stage(prev, out, dt, g, geometry, nu, limiter, None, scratch, parallel)
            else:
                new_rate = _stage(prev, out, dt, g, geometry, nu, limiter, (q, tab[s, 0], tab[s, 1]), scratch, parallel)
            if not math.isfinite(new_rate):
                return q, work, spare, t, dt, rate, step, s, BLEW_UP
            prev = out
        rate = new_rate
        if tab.shape[0] % 2 == 1:
            q, work = work, q
        else:
            q, spare = spare, q
        step += 1
        if lands:
            return q, work, spare, target, dt, rate, step, -1, LANDED
        t += dt


# -- NumPy reference ----------------------------------------------------------------------------------------------------
def burgers_godunov_euler_reference(q: np.ndarray, dt: float, g: int, dx, a, nu=None, blend=None,
                                    limiter=None) -> tuple[np.ndarray, float]:
    """NumPy reference of every kernel here (ghost cells of ``q`` already filled): ``(out_interior, rate)``;
    ``limiter`` a name of :data:`solvers.conservation.reconstruction.LIMITERS` for MUSCL, None for first order."""
    dx = tuple(np.atleast_1d(dx).astype(float))
    a = tuple(np.broadcast_to(np.asarray(a, dtype=float), (q.ndim,)))
    interior = tuple(slice(g, s - g) for s in q.shape)
    out = q[interior].copy()
    for k in range(q.ndim):
        sel = list(interior)
        sel[k] = slice(g - 1, q.shape[k] - g)  # cells -1 .. n-1 along k: also the faces -1/2 .. n-1/2
        left = q[tuple(sel)]
        faces = tuple(sel)
        sel[k] = slice(g, q.shape[k] - g + 1)  # cells 0 .. n
        right = q[tuple(sel)]
        if limiter is None:
            ql, qr = left, right
        else:
            ql, qr = (states[faces] for states in face_states_reference(q, k, "muscl", limiter))
        f = np.maximum(np.maximum(ql, 0.0) ** 2, np.minimum(qr, 0.0) ** 2)
        c = 0.5 * a[k] * dt / dx[k]
        if nu is None:
            f = np.moveaxis(f, k, 0)
            out -= np.moveaxis(c * (f[1:] - f[:-1]), 0, k)
        else:
            h = np.moveaxis(c * f - nu * dt / dx[k] ** 2 * (right - left), k, 0)
            out -= np.moveaxis(h[1:] - h[:-1], 0, k)
    if blend is not None:
        q0, alpha, beta = blend
        out = alpha * q0[interior] + beta * out
    rate = float(np.max(np.abs(out))) * sum(ak / dk for ak, dk in zip(a, dx))
    return out, rate
