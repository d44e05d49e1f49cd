"""Temporal blocking of the Burgers fast path: K forward-Euler steps per pass over cache-sized tiles, 1-D and 2-D.

The one-step kernels of :mod:`solvers.conservation.burgers_fast_path` read the whole field and write it once per
step: 16 bytes per cell update, so from L3 or DRAM the step is bound by the memory bandwidth.  Here a tile of
``T`` cells (2-D: ``TX x TY``) is copied with a halo of ``K`` cells per side (the first-order stencil reaches one
cell per step, so ``K`` steps need ``K`` ghost cells: width ``K x stencil``) into two small buffers that stay in
L1/L2, advanced ``K`` times there, and its inner ``T`` cells written back: the field is read and written once per
``K`` steps.  Each step inside the tile is the one-step kernel's loop (:func:`_first_order_1d`,
:func:`_first_order_2d`) on the shrinking valid region (step ``s`` updates the cells whose stencil was valid after
step ``s - 1``), so every value computed is bitwise what the one-step kernel computes from the same state and step;
the halo cells are recomputed by the neighbouring tiles (2 K / T more work).  Tiles never exchange data, so the
threaded variant has one barrier per ``K`` steps instead of one per step.

**The time step, fixed for the K steps.**  ``dt = cfl / (rate + par_rate)`` from the rate of the block's *start*
state (the same rule as the one-step solve, :func:`solvers.conservation.burgers_fast_path._next_step`), held for
the ``K`` steps.  Why it stays stable: under that CFL bound (``cfl <= 1``) the first-order Godunov scheme, with or
without the explicit viscous term, is monotone, so ``max q`` does not increase and ``min q`` does not decrease from
step to step (docs/theory.md §5, the maximum principle); the hyperbolic rate ``a max|q| / dx`` of every later state of the block is at
most the start state's, and the step chosen for the start satisfies the CFL bound of every step of the block.
The safety margin is the one of the one-step solve: ``cfl`` (0.9 by default) below the bound 1, and nothing is
taken for granted beyond the maximum principle.  The last block before an output time takes
``k = ceil(remaining / dt) <= K`` equal steps of ``remaining / k`` (shorter than ``dt``, so as stable) and lands
exactly.

**The difference from the one-step solve.**  The one-step solve re-chooses ``dt`` after every step from the new,
smaller-or-equal rate; the blocked solve keeps the block's first ``dt``, so it takes steps at most as long and
at least as many.  Both are consistent first-order schemes of the same semi-discretisation, so they differ by
``O(dt)``: the difference shrinks with the time step (tested; it is not monotone from one ``dt`` to the next
because the block boundaries and the landing steps move: past the shock, L1 differences of 6e-5 (1-D, 800 cells,
K = 16) and 1.4e-4 (2-D, 64², K = 8) at ``cfl = 0.8`` fell to 1.5e-7 and 7.7e-6 at ``cfl = 0.1``),
is zero for ``K = 1`` (bitwise the one-step solve; tested), and the blocked solve's error against exact solutions
converges at the one-step scheme's order (tested).  Cell sums (the integral) are conserved to rounding as in the
one-step scheme (the flux form is unchanged; tested).

Periodic boundaries only (the halo of a tile at the edge is read across the period); first order, forward Euler,
constant ``a``, no source (the first-order fast path).  :func:`advance_blocked` runs the step loop compiled.
Scratch (:func:`blocked_scratch_1d`, :func:`blocked_scratch_2d`) is allocated once per solve; the time loop
allocates nothing.  NumPy reference: :func:`blocked_reference` (``k`` one-step references at a fixed step).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba
import numpy as np
from numba import prange, types
from numba.extending import overload

from solvers.conservation.burgers_fast_path import (ABS_BITS, BLEW_UP, BLOCK, LANDED, STEP_LIMIT, _cells_1d,
                                                    _first_order_1d, _first_order_2d, _largest, _next_step,
                                                    burgers_godunov_euler_reference)

#: Cells of a 1-D tile (its two buffers, 2 x 8 (TILE_1D + 2 K) bytes, stay in L2; best of 2048-16384 measured).
TILE_1D = 16384
#: Rows and columns of a 2-D tile (two buffers of (TX + 2K) (TY + 2K) doubles; best of 32x256 to 128x1024 measured).
TILE_2D = (128, 1024)
#: Steps per pass when ``time_blocking=True``.
DEFAULT_STEPS = 16


class BlockScratch(NamedTuple):
    """Per-chunk work space: the tile's two buffers (1-D ``(chunks, 2, T + 2K)``, 2-D ``(chunks, 2, TX + 2K,
    TY + 2K)``), the one-step kernel's rows (1-D ``(chunks, 2, BLOCK + 2)``, 2-D ``(chunks, 6, TY + 2K)``), the
    bit pattern of each chunk's ``max|out|`` and the tiling ``(tiles per axis..., cells per tile per axis...)``."""

    tiles: np.ndarray
    rows: np.ndarray
    peaks: np.ndarray
    layout: np.ndarray


def _require_steps(steps) -> int:
    if isinstance(steps, bool) or int(steps) != steps or int(steps) < 1:
        raise ValueError(f"steps: expected a whole number >= 1, found {steps!r}")
    return int(steps)


def _tiling(n: int, tile: int) -> tuple[int, int]:
    """(number of tiles, cells of the largest) for ``n`` cells in tiles of at most ``tile``."""
    count = max(1, -(-n // tile))
    return count, -(-n // count)


def blocked_scratch_1d(n: int, steps: int, chunks: int = 1, tile: int = TILE_1D) -> BlockScratch:
    """Scratch for ``steps`` steps per pass over ``n`` cells in ``chunks`` pieces."""
    k = _require_steps(steps)
    if k > n:
        raise ValueError(f"steps: expected at most the {n} cells of the grid (the halo of a tile), found {k}")
    count, size = _tiling(int(n), int(tile))
    chunks = max(1, min(int(chunks), count))
    return BlockScratch(np.zeros((chunks, 2, size + 2 * k)), np.zeros((chunks, 2, BLOCK + 2)),
                        np.zeros(chunks, dtype=np.int64), np.array([count, size], dtype=np.int64))


def blocked_scratch_2d(shape, steps: int, chunks: int = 1, tile=TILE_2D) -> BlockScratch:
    """Scratch for ``steps`` steps per pass over a grid of ``shape`` interior cells in ``chunks`` pieces."""
    k = _require_steps(steps)
    nx, ny = (int(s) for s in shape)
    if k > min(nx, ny):
        raise ValueError(f"steps: expected at most the {min(nx, ny)} cells of the shorter axis, found {k}")
    cx, sx = _tiling(nx, int(tile[0]))
    cy, sy = _tiling(ny, int(tile[1]))
    chunks = max(1, min(int(chunks), cx * cy))
    return BlockScratch(np.zeros((chunks, 2, sx + 2 * k, sy + 2 * k)), np.zeros((chunks, 6, sy + 2 * k)),
                        np.zeros(chunks, dtype=np.int64), np.array([cx, cy, sx, sy], dtype=np.int64))


# -- 1-D ----------------------------------------------------------------------------------------------------------------
@numba.njit(cache=True)
def _substep_1d(src, dst, lo, hi, dt, dx, a, nu):
    """Buffer cells [lo, hi) of ``dst`` one step on from ``src``: the one-step kernel's first-order loop
    (:func:`_first_order_1d`, no blend; its maximum is not needed before the block's last step)."""
    c = 0.5 * a * dt / dx
    d = 0.0 if nu is None else nu * dt / (dx * dx)
    _first_order_1d(src, dst, lo, hi, 0, c, d, nu, None)


@numba.njit(cache=True)
def _load_periodic(line, start, into):
    """``into[r] = line[(start + r) mod len(line)]`` as contiguous copies, one per wrap of the period (one loop
    each, so they vectorise; ``start`` may be negative and ``into`` longer than ``line``)."""
    n = line.shape[0]
    count = into.shape[0]
    r = 0
    cell = start % n
    while r < count:
        run = min(count - r, n - cell)
        part = into[r:r + run]
        seg = line[cell:cell + run]
        for j in range(run):
            part[j] = seg[j]
        r += run
        cell = 0


@numba.njit(cache=True)
def _tile_1d(q, out, g, n, lo, hi, k, dt, dx, a, nu, tiles, tile_bits, rows):
    """Advance cells [lo, hi) of the interior ``k`` steps in the tile buffers; returns the bit pattern of
    ``max|out|`` over them."""
    length = hi - lo + 2 * k
    src, dst = tiles[0], tiles[1]
    src_bits, dst_bits = tile_bits[0], tile_bits[1]
    _load_periodic(q[g:g + n], lo - k, src[:length])  # the tile and its halo, read across the period
    for s in range(1, k):  # step s: buffer cells [s, length - s)
        _substep_1d(src, dst, s, length - s, dt, dx, a, nu)
        src, dst = dst, src
        src_bits, dst_bits = dst_bits, src_bits
    # the last step with the maximum (buffer cells [k, length - k) are interior cells k - 1 ... with one ghost cell)
    peak = _cells_1d(src, dst, dst_bits, k - 1, length - k - 1, 1, dt, dx, a, nu, None, None, rows)
    src, dst = dst, src
    inner = src[k:k + hi - lo]
    target = out[g + lo:g + hi]
    for i in range(hi - lo):
        target[i] = inner[i]
    return peak


@numba.njit(cache=True)
def _chunk_1d(q, out, g, n, first, last, count, k, dt, dx, a, nu, tiles, tile_bits, rows):
    peak = 0
    for t in range(first, last):
        lo = (n * t) // count
        hi = (n * (t + 1)) // count
        peak = max(peak, _tile_1d(q, out, g, n, lo, hi, k, dt, dx, a, nu, tiles, tile_bits, rows))
    return peak


@numba.njit(cache=True)
def blocked_pass_1d(q, out, dt, k, g, dx, a, nu, scratch):
    """``k`` Euler steps of 1-D periodic Burgers at the fixed step ``dt`` from ``q`` into ``out`` (one chunk);
    returns ``a max|out| / dx`` (NaN if a value is not finite).  ``q``'s ghost cells are not read."""
    n = q.shape[0] - 2 * g
    count = scratch.layout[0]
    scratch.peaks[0] = _chunk_1d(q, out, g, n, 0, count, count, k, dt, dx, a, nu, scratch.tiles[0],
                                 scratch.tiles[0].view(np.int64), scratch.rows[0])
    return a * _largest(scratch.peaks[:1]) / dx


@numba.njit(cache=True, parallel=True)
def blocked_pass_1d_parallel(q, out, dt, k, g, dx, a, nu, scratch):
    """The same pass with the tiles split over ``scratch.tiles.shape[0]`` chunks (bitwise the serial one)."""
    n = q.shape[0] - 2 * g
    tiles, rows, peaks, layout = scratch  # (writing through scratch.peaks inside prange is lost: Numba 0.68)
    count = layout[0]
    chunks = tiles.shape[0]
    for p in prange(chunks):
        peaks[p] = _chunk_1d(q, out, g, n, (count * p) // chunks, (count * (p + 1)) // chunks, count, k, dt, dx, a,
                             nu, tiles[p], tiles[p].view(np.int64), rows[p])
    return a * _largest(peaks) / dx


# -- 2-D ----------------------------------------------------------------------------------------------------------------
@numba.njit(cache=True)
def _substep_2d(src, dst, lo, hi, dt, dx, dy, a0, a1, nu):
    """Buffer rows [lo, hi) (columns [1, width - 1)) of ``dst`` one step on from ``src``: the one-step kernel's
    first-order loop (:func:`_first_order_2d` with one ghost column, no blend)."""
    cx = 0.5 * a0 * dt / dx
    cy = 0.5 * a1 * dt / dy
    dx2 = 0.0 if nu is None else nu * dt / (dx * dx)
    dy2 = 0.0 if nu is None else nu * dt / (dy * dy)
    _first_order_2d(src, dst, lo - 1, hi - 1, 1, cx, cy, dx2, dy2, nu, None)


@numba.njit(cache=True)
def _tile_2d(q, out, g, nx, ny, lo, hi, left, right, k, dt, dx, dy, a0, a1, nu, tiles, tile_bits, rows):
    """Advance rows [lo, hi) x columns [left, right) of the interior ``k`` steps in the tile buffers; returns the bit
    pattern of ``max|out|`` over them.  The buffers' full width is loaded (a narrower tile computes a few more
    columns); the columns valid after step ``s`` are ``[s, width - s)`` and the maximum is taken over the tile's."""
    height = hi - lo + 2 * k
    width = tiles.shape[2]
    src, dst = tiles[0], tiles[1]
    src_bits, dst_bits = tile_bits[0], tile_bits[1]
    for r in range(height):
        row = lo - k + r
        if row < 0:
            row += nx
        elif row >= nx:
            row -= nx
        _load_periodic(q[g + row, g:g + ny], left - k, src[r])
    for s in range(1, k + 1):  # step s: rows [s, height - s) of the buffer
        _substep_2d(src, dst, s, height - s, dt, dx, dy, a0, a1, nu)
        src, dst = dst, src
        src_bits, dst_bits = dst_bits, src_bits
    peak = 0
    for i in range(hi - lo):
        inner = src[k + i, k:k + right - left]
        bits = src_bits[k + i, k:k + right - left]
        target = out[g + lo + i, g + left:g + right]
        row_peak = 0
        for j in range(right - left):
            target[j] = inner[j]
            row_peak = max(row_peak, bits[j] & ABS_BITS)
        peak = max(peak, row_peak)
    return peak


@numba.njit(cache=True)
def _chunk_2d(q, out, g, nx, ny, first, last, layout, k, dt, dx, dy, a0, a1, nu, tiles, tile_bits, rows):
    cx, cy = layout[0], layout[1]
    peak = 0
    for t in range(first, last):
        tx, ty = t // cy, t % cy
        lo, hi = (nx * tx) // cx, (nx * (tx + 1)) // cx
        left, right = (ny * ty) // cy, (ny * (ty + 1)) // cy
        peak = max(peak, _tile_2d(q, out, g, nx, ny, lo, hi, left, right, k, dt, dx, dy, a0, a1, nu, tiles,
                                  tile_bits, rows))
    return peak


@numba.njit(cache=True)
def blocked_pass_2d(q, out, dt, k, g, dx, dy, a0, a1, nu, scratch):
    """``k`` Euler steps of 2-D periodic Burgers at the fixed step ``dt`` from ``q`` into ``out`` (one chunk);
    returns ``max|out| (a0/dx + a1/dy)``."""
    nx, ny = q.shape[0] - 2 * g, q.shape[1] - 2 * g
    layout = scratch.layout
    scratch.peaks[0] = _chunk_2d(q, out, g, nx, ny, 0, layout[0] * layout[1], layout, k, dt, dx, dy, a0, a1, nu,
                                 scratch.tiles[0], scratch.tiles[0].view(np.int64), scratch.rows[0])
    return _largest(scratch.peaks[:1]) * (a0 / dx + a1 / dy)


@numba.njit(cache=True, parallel=True)
def blocked_pass_2d_parallel(q, out, dt, k, g, dx, dy, a0, a1, nu, scratch):
    """The same pass with the tiles split over ``scratch.tiles.shape[0]`` chunks (bitwise the serial one)."""
    nx, ny = q.shape[0] - 2 * g, q.shape[1] - 2 * g
    tiles, rows, peaks, layout = scratch
    count = layout[0] * layout[1]
    chunks = tiles.shape[0]
    for p in prange(chunks):
        peaks[p] = _chunk_2d(q, out, g, nx, ny, (count * p) // chunks, (count * (p + 1)) // chunks, layout, k, dt,
                             dx, dy, a0, a1, nu, tiles[p], tiles[p].view(np.int64), rows[p])
    return _largest(peaks) * (a0 / dx + a1 / dy)


# -- the compiled step loop ---------------------------------------------------------------------------------------------
@numba.njit(cache=True)
def _block_steps(t, target, cfl, rate, par_rate, steps):
    """The block's ``(dt, k, lands)``: the one-step rule's ``dt`` from the start state's rates, held for ``steps``
    steps, or ``k = ceil(remaining / dt)`` equal steps landing on ``target`` (``k = 1``: exactly the one-step
    rule, so one step per block is bitwise the one-step solve)."""
    dt, lands = _next_step(t, target, cfl, rate, par_rate)
    if lands:
        return dt, 1, True
    remaining = target - t
    if steps * dt >= remaining - 1e-12 * max(1.0, abs(target)):
        k = min(steps, max(1, int(math.ceil(remaining / dt))))
        return remaining / k, k, True
    return dt, steps, False


def _pass(q, out, dt, k, g, geometry, nu, scratch, parallel):
    """One blocked pass (1-D or 2-D), for compiled callers only: the kernel is chosen when the caller is compiled
    (:func:`_pass_typed`), from the dimension of ``q`` and the type of ``parallel`` (None: serial; True: threaded,
    compiled only then)."""
    raise TypeError("_pass runs compiled only, inside advance_blocked()")


@overload(_pass, jit_options={"cache": True})
def _pass_typed(q, out, dt, k, g, geometry, nu, scratch, parallel):
    serial = isinstance(parallel, types.NoneType)
    if q.ndim == 1:
        kernel = blocked_pass_1d if serial else blocked_pass_1d_parallel

        def pass_1d(q, out, dt, k, g, geometry, nu, scratch, parallel):
            dx, a = geometry
            return kernel(q, out, dt, k, g, dx, a, nu, scratch)

        return pass_1d
    kernel_2d = blocked_pass_2d if serial else blocked_pass_2d_parallel

    def pass_2d(q, out, dt, k, g, geometry, nu, scratch, parallel):
        dx, dy, a0, a1 = geometry
        return kernel_2d(q, out, dt, k, g, dx, dy, a0, a1, nu, scratch)

    return pass_2d


@numba.njit(cache=True)
def advance_blocked(q, work, t, target, cfl, rate, par_rate, step, max_steps, steps, g, geometry, nu, scratch,
                     parallel):
    """Step ``q`` from ``t`` until it lands on ``target`` in blocks of ``steps`` Euler steps (see the module
    docstring); ``geometry`` is the tuple ``(dx, a)`` or ``(dx, dy, a0, a1)``.  Returns ``(q, work, t, dt, rate,
    step, status)`` as :func:`solvers.conservation.burgers_fast_path.advance` does (one stage; a non-finite value
    is in ``work``).  ``parallel``: None (serial passes) or True (threaded)."""
    dt = 0.0
    while True:
        if step >= max_steps:
            return q, work, t, dt, rate, step, STEP_LIMIT
        dt, k, lands = _block_steps(t, target, cfl, rate, par_rate, steps)
        new_rate = _pass(q, work, dt, k, g, geometry, nu, scratch, parallel)
        if not math.isfinite(new_rate):
            return q, work, t, dt, rate, step, BLEW_UP
        rate = new_rate
        q, work = work, q
        step += k
        if lands:
            return q, work, target, dt, rate, step, LANDED
        t += k * dt



# -- NumPy reference ----------------------------------------------------------------------------------------------------
def blocked_reference(q_interior: np.ndarray, dt: float, k: int, dx, a, nu=None) -> tuple[np.ndarray, float]:
    """NumPy reference of one blocked pass: ``k`` one-step references (:func:`burgers_godunov_euler_reference`) at
    the fixed step ``dt`` on periodic data; returns ``(out_interior, rate)``."""
    q = np.asarray(q_interior, dtype=float)
    rate = float("nan")
    for _ in range(int(k)):
        padded = np.pad(q, 1, mode="wrap")
        q, rate = burgers_godunov_euler_reference(padded, dt, 1, dx, a, nu=nu)
    return q, rate
