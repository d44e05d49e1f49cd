"""Specialised whole-step kernels of the grid Hamilton–Jacobi solver in 1-D, 2-D and 3-D (docs/theory.md §1, §5).

The general kernel (:func:`solvers.hamilton_jacobi.solver.step_kernel`) serves every dimension and every
scheme through a flat index and integer codes tested in every cell, and finds the CFL speed of the
new state in a separate pass over the grid.  This module is the fast path for the common case — a
built-in Hamiltonian (``quadratic`` ``½ Σ a_k p_k²`` or ``eikonal``) on a 1-D, 2-D or 3-D grid — with
the same discretisation and the same arithmetic (bitwise the same result; a test checks it):

* the scheme is fixed at compile time: :func:`step_kernel` builds, once per process and
  ``(ndim, derivative, numerical Hamiltonian, Hamiltonian, varying coefficient, viscous)``, a
  kernel from one source (:func:`_build_1d` / :func:`_build_2d` / :func:`_build_3d`) whose closure holds the codes as
  integer constants, so Numba and LLVM fold every scheme branch away (a closure over plain
  integers is cached on disk: the integers are part of Numba's cache key);
* the loops index the padded arrays directly, ``q[i]`` / ``q[i, j]`` (no flat index, no scratch
  arrays), with *unsigned* indices: a signed index makes Numba test every access for a negative
  (wrap-around) index, which turns the loads into gathers (measured: 3x slower); the stencils of
  :mod:`solvers.hamilton_jacobi.derivatives` and the per-axis building blocks of :mod:`solvers.hamilton_jacobi.hamiltonians`
  are inlined;
* the hyperbolic speed bound ``max_k max_x |∂H/∂p_k|`` of the *new* state (the next step's CFL
  speed; for global Lax–Friedrichs, the next stage's ``α_k``) is computed inside the stage that
  produces it, lagged behind the update by the stencil radius ``r`` — by blocks of cells in 1-D,
  by rows in 2-D, while they are in cache — over the cells whose stencil is interior; the band of
  width ``r`` along the boundary follows after the ghost fill (in 3-D, one pass after the ghost fill).  The maximum does not depend on
  the order, so the value is exactly that of the separate pass.

Threads: these kernels are serial (no ``prange``, no barrier), so they follow the thread policy of the Burgers fast
path (:mod:`solvers.conservation.thread_policy`: a second thread only on an idle core) trivially: they never
run slower beside a busy process than the serial path, because they are the serial path.

NaN/inf: every stage checks that its output is finite and reports the stage, as the general
kernel does (the driver then raises :class:`~solvers.errors.BlowUpError` with the step and cell).
The NumPy reference of a stage is :meth:`solvers.hamilton_jacobi.solver.HJDiscretisation.stage_reference`.

Numba's disk cache keys a kernel on its own source file only: after editing the stencils or the
building blocks in another module, delete the stale ``hj_fast_kernels.*.nbi/nbc`` (and
``hamilton_jacobi.*``) files in ``solvers/__pycache__``.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numba
import numpy as np

from solvers.float_bits import bits as _bits, from_bits as _from_bits
from solvers.hamilton_jacobi.hamiltonians import GODUNOV, LAX_FRIEDRICHS, axis_speed, finish, godunov_axis, hamiltonian_axis
from solvers.hamilton_jacobi.boundary import fill_ghosts_flat
from solvers.hamilton_jacobi.derivatives import ENO2, FIRST_ORDER, GHOSTS_NEEDED, DERIVATIVES, eno2_pair, first_order_pair, weno5_pair

#: stencil radius of each derivative code
RADIUS = {DERIVATIVES[name]: r for name, r in GHOSTS_NEEDED.items()}

# Unsigned stencil offsets: an unsigned index is never wrapped around as a negative one, and ``uint64 ± 1``
# (an int literal) would be typed int64 again.
_U1, _U2, _U3 = np.uint64(1), np.uint64(2), np.uint64(3)

#: cells per block of the 1-D loop (the speed of a block is taken while it is in cache)
BLOCK = 512


# -- the speed maximum as an integer reduction --------------------------------------------------------------
# Without fast-math LLVM does not vectorise a floating-point maximum (NaN ordering), but it does vectorise
# an integer one, and for numbers >= +0 the IEEE-754 bit pattern read as an int64 orders exactly as the
# number (+inf included).  Speeds are >= +0 (``c |p|`` with ``c > 0``, or ``c``) or NaN; a NaN is skipped,
# as the general kernel's ``if s > alpha`` skips it, by mapping it to +0 (whose bits are 0).
@numba.njit(cache=True, inline="always")
def _speed_bits(s):
    """Order-preserving int64 key of a speed ``s >= +0``; NaN -> 0 (the key of +0, i.e. skipped)."""
    return _bits(s) if s == s else 0


# -- inlined building blocks (scalar arguments, or indices into an array: inlined by Numba, so no call
#    and no reference counting per cell) ----------------------------------------------------------------
@numba.njit(cache=True, inline="always")
def _pair_1d(kind, q, i, dx):
    """``(p⁻, p⁺)`` of the 1-D field ``q`` at ``i``."""
    if kind == FIRST_ORDER:
        return first_order_pair(q[i - _U1], q[i], q[i + _U1], dx)
    if kind == ENO2:
        return eno2_pair(q[i - _U2], q[i - _U1], q[i], q[i + _U1], q[i + _U2], dx)
    return weno5_pair(q[i - _U3], q[i - _U2], q[i - _U1], q[i], q[i + _U1], q[i + _U2], q[i + _U3], dx)


@numba.njit(cache=True, inline="always")
def _pair_axis0(kind, q, i, j, dx):
    """``(p⁻, p⁺)`` of the 2-D field ``q`` at ``(i, j)`` along axis 0."""
    if kind == FIRST_ORDER:
        return first_order_pair(q[i - _U1, j], q[i, j], q[i + _U1, j], dx)
    if kind == ENO2:
        return eno2_pair(q[i - _U2, j], q[i - _U1, j], q[i, j], q[i + _U1, j], q[i + _U2, j], dx)
    return weno5_pair(q[i - _U3, j], q[i - _U2, j], q[i - _U1, j], q[i, j], q[i + _U1, j], q[i + _U2, j], q[i + _U3, j], dx)


@numba.njit(cache=True, inline="always")
def _pair_axis1(kind, q, i, j, dx):
    """``(p⁻, p⁺)`` of the 2-D field ``q`` at ``(i, j)`` along axis 1."""
    if kind == FIRST_ORDER:
        return first_order_pair(q[i, j - _U1], q[i, j], q[i, j + _U1], dx)
    if kind == ENO2:
        return eno2_pair(q[i, j - _U2], q[i, j - _U1], q[i, j], q[i, j + _U1], q[i, j + _U2], dx)
    return weno5_pair(q[i, j - _U3], q[i, j - _U2], q[i, j - _U1], q[i, j], q[i, j + _U1], q[i, j + _U2], q[i, j + _U3], dx)


@numba.njit(cache=True, inline="always")
def _pair3_axis0(kind, q, i, j, k, dx):
    """``(p⁻, p⁺)`` of the 3-D field ``q`` at ``(i, j, k)`` along axis 0."""
    if kind == FIRST_ORDER:
        return first_order_pair(q[i - _U1, j, k], q[i, j, k], q[i + _U1, j, k], dx)
    if kind == ENO2:
        return eno2_pair(q[i - _U2, j, k], q[i - _U1, j, k], q[i, j, k], q[i + _U1, j, k], q[i + _U2, j, k], dx)
    return weno5_pair(q[i - _U3, j, k], q[i - _U2, j, k], q[i - _U1, j, k], q[i, j, k], q[i + _U1, j, k],
                      q[i + _U2, j, k], q[i + _U3, j, k], dx)  # fmt: skip


@numba.njit(cache=True, inline="always")
def _pair3_axis1(kind, q, i, j, k, dx):
    """``(p⁻, p⁺)`` of the 3-D field ``q`` at ``(i, j, k)`` along axis 1."""
    if kind == FIRST_ORDER:
        return first_order_pair(q[i, j - _U1, k], q[i, j, k], q[i, j + _U1, k], dx)
    if kind == ENO2:
        return eno2_pair(q[i, j - _U2, k], q[i, j - _U1, k], q[i, j, k], q[i, j + _U1, k], q[i, j + _U2, k], dx)
    return weno5_pair(q[i, j - _U3, k], q[i, j - _U2, k], q[i, j - _U1, k], q[i, j, k], q[i, j + _U1, k],
                      q[i, j + _U2, k], q[i, j + _U3, k], dx)  # fmt: skip


@numba.njit(cache=True, inline="always")
def _pair3_axis2(kind, q, i, j, k, dx):
    """``(p⁻, p⁺)`` of the 3-D field ``q`` at ``(i, j, k)`` along axis 2."""
    if kind == FIRST_ORDER:
        return first_order_pair(q[i, j, k - _U1], q[i, j, k], q[i, j, k + _U1], dx)
    if kind == ENO2:
        return eno2_pair(q[i, j, k - _U2], q[i, j, k - _U1], q[i, j, k], q[i, j, k + _U1], q[i, j, k + _U2], dx)
    return weno5_pair(q[i, j, k - _U3], q[i, j, k - _U2], q[i, j, k - _U1], q[i, j, k], q[i, j, k + _U1],
                      q[i, j, k + _U2], q[i, j, k + _U3], dx)  # fmt: skip


@numba.njit(cache=True, inline="always")
def _numerical_hamiltonian(num, ham, ndim, c0, m0, p0, alpha0, c1, m1, p1, alpha1):
    """``Ĥ`` of one cell from the per-axis coefficients and one-sided derivatives (axis 1 unused in 1-D);
    ``alpha_k`` are the global Lax–Friedrichs coefficients.  The same composition, in the same order,
    as :func:`solvers.hamilton_jacobi.solver.stage_kernel`."""
    total = 0.0
    if num == GODUNOV:
        total += godunov_axis(ham, c0, m0, p0)
        if ndim == 2:
            total += godunov_axis(ham, c1, m1, p1)
        return finish(ham, total)
    total += hamiltonian_axis(ham, c0, 0.5 * (m0 + p0))
    if ndim == 2:
        total += hamiltonian_axis(ham, c1, 0.5 * (m1 + p1))
    h = finish(ham, total)
    h -= 0.5 * (alpha0 if num == LAX_FRIEDRICHS else axis_speed(ham, c0, m0, p0, 0.0)) * (p0 - m0)
    if ndim == 2:
        h -= 0.5 * (alpha1 if num == LAX_FRIEDRICHS else axis_speed(ham, c1, m1, p1, 0.0)) * (p1 - m1)
    return h


@numba.njit(cache=True, inline="always")
def _numerical_hamiltonian_3d(num, ham, c0, m0, p0, alpha0, c1, m1, p1, alpha1, c2, m2, p2, alpha2):
    """``Ĥ`` of one cell of a 3-D grid: :func:`_numerical_hamiltonian` with a third axis, in the same order."""
    total = 0.0
    if num == GODUNOV:
        total += godunov_axis(ham, c0, m0, p0)
        total += godunov_axis(ham, c1, m1, p1)
        total += godunov_axis(ham, c2, m2, p2)
        return finish(ham, total)
    total += hamiltonian_axis(ham, c0, 0.5 * (m0 + p0))
    total += hamiltonian_axis(ham, c1, 0.5 * (m1 + p1))
    total += hamiltonian_axis(ham, c2, 0.5 * (m2 + p2))
    h = finish(ham, total)
    h -= 0.5 * (alpha0 if num == LAX_FRIEDRICHS else axis_speed(ham, c0, m0, p0, 0.0)) * (p0 - m0)
    h -= 0.5 * (alpha1 if num == LAX_FRIEDRICHS else axis_speed(ham, c1, m1, p1, 0.0)) * (p1 - m1)
    h -= 0.5 * (alpha2 if num == LAX_FRIEDRICHS else axis_speed(ham, c2, m2, p2, 0.0)) * (p2 - m2)
    return h


@numba.njit(cache=True, inline="always")
def _speed_1d(kind, ham, varying, q, lo, hi, dx, coef, c_const, alpha):
    """``max(alpha, max_{lo <= i < hi} |∂H/∂p|)`` of the 1-D field ``q`` (the value of :func:`speed_kernel`);
    ``alpha`` and the result are bit keys (:func:`_speed_bits`)."""
    for k in range(lo, hi):
        i = numba.uint64(k)
        m, p = _pair_1d(kind, q, i, dx)
        b = _speed_bits(axis_speed(ham, coef[0, i] if varying else c_const, m, p, 0.0))
        alpha = b if b > alpha else alpha
    return alpha


@numba.njit(cache=True, inline="always")
def _speed_2d(kind, ham, varying, q, rlo, rhi, clo, chi, dx0, dx1, coef, c0, c1, alpha0, alpha1):
    """Per-axis ``max(alpha_k, max |∂H/∂p_k|)`` over rows ``[rlo, rhi)`` and columns ``[clo, chi)``, as bit keys."""
    for r in range(rlo, rhi):
        i = numba.uint64(r)
        for c in range(clo, chi):
            j = numba.uint64(c)
            m, p = _pair_axis0(kind, q, i, j, dx0)
            b = _speed_bits(axis_speed(ham, coef[0, i, j] if varying else c0, m, p, 0.0))
            alpha0 = b if b > alpha0 else alpha0
            m, p = _pair_axis1(kind, q, i, j, dx1)
            b = _speed_bits(axis_speed(ham, coef[1, i, j] if varying else c1, m, p, 0.0))
            alpha1 = b if b > alpha1 else alpha1
    return alpha0, alpha1


@numba.njit(cache=True, inline="always")
def _speed_3d(kind, ham, varying, q, g, n0, n1, n2, dx0, dx1, dx2, coef, c0, c1, c2):
    """Per-axis ``max |∂H/∂p_k|`` over the interior of the 3-D field ``q`` (ghosts filled), as bit keys."""
    a0 = 0
    a1 = 0
    a2 = 0
    for r in range(g, g + n0):
        i = numba.uint64(r)
        for c in range(g, g + n1):
            j = numba.uint64(c)
            for d in range(g, g + n2):
                k = numba.uint64(d)
                m, p = _pair3_axis0(kind, q, i, j, k, dx0)
                b = _speed_bits(axis_speed(ham, coef[0, i, j, k] if varying else c0, m, p, 0.0))
                a0 = b if b > a0 else a0
                m, p = _pair3_axis1(kind, q, i, j, k, dx1)
                b = _speed_bits(axis_speed(ham, coef[1, i, j, k] if varying else c1, m, p, 0.0))
                a1 = b if b > a1 else a1
                m, p = _pair3_axis2(kind, q, i, j, k, dx2)
                b = _speed_bits(axis_speed(ham, coef[2, i, j, k] if varying else c2, m, p, 0.0))
                a2 = b if b > a2 else a2
    return a0, a1, a2


@numba.njit(cache=True)
def _stage_buffers(rk, s, buffer0, buffer1):
    """Stage ``s`` of the Shu–Osher scheme ``rk``: ``(where, out, ra, rb)``, the output buffer's index
    (alternating from 0), the buffer itself and the blend ``out = ra q + rb (prev + dt L(prev))``."""
    where = s % 2
    return where, (buffer0 if where == 0 else buffer1), rk[s, 0], rk[s, 1]


# -- the kernels, one source per dimension --------------------------------------------------------------
def _build_1d(DERIV, NUM, HAM, VARYING, VISCOUS):  # noqa: N803 (compile-time constants)
    R = RADIUS[DERIV]  # noqa: N806
    LF = NUM == LAX_FRIEDRICHS  # noqa: N806
    B = BLOCK  # noqa: N806

    @numba.njit(cache=True)
    def hj_step_1d(q, buffer0, buffer1, rk, dt, bc_kinds, bc_values, bc_extrapolate, shape3, g, dx, coef, nu, kface,
                   inv_w, alpha):  # fmt: skip
        """One Runge–Kutta step of the 1-D problem; ``alpha`` (length 1) holds the speed bound of ``q``
        on entry and that of the new state on return.  Returns ``(speed, buffer, failed stage or -1)``."""
        n = q.shape[0] - 2 * g
        c_const = coef[0, g]
        h = dx[0]
        prev = q
        where = 0
        stages = rk.shape[0]
        for s in range(stages):
            where, out, ra, rb = _stage_buffers(rk, s, buffer0, buffer1)
            track = LF or s == stages - 1  # the speed of this stage's output is needed
            a_in = alpha[0]
            a_out = 0  # bit key of the speed of the output (+0)
            finite = True
            for b0 in range(g, g + n, B):
                b1 = min(b0 + B, g + n)
                for k in range(b0, b1):
                    i = numba.uint64(k)  # unsigned: no negative-index wraparound, so the loop vectorises
                    m, p = _pair_1d(DERIV, prev, i, h)
                    c = coef[0, i] if VARYING else c_const
                    rhs = -_numerical_hamiltonian(NUM, HAM, 1, c, m, p, a_in, 0.0, 0.0, 0.0, 0.0)
                    if VISCOUS:
                        qc = prev[i]
                        visc = 0.0
                        visc += (kface[0, i] * (prev[i + _U1] - qc) - kface[0, i - _U1] * (qc - prev[i - _U1])) / (h * h)
                        rhs += nu * inv_w[i] * visc
                    value = ra * q[i] + rb * (prev[i] + dt * rhs)
                    out[i] = value
                    if not math.isfinite(value):
                        finite = False
                if track:  # cells whose stencil lies in this block or before, and not in the ghosts
                    a_out = _speed_1d(DERIV, HAM, VARYING, out, max(b0 - R, g + R), min(b1 - R, g + n - R), h, coef,
                                      c_const, a_out)  # fmt: skip
            if not finite:
                return math.nan, where, s
            fill_ghosts_flat(out, 1, shape3, g, bc_kinds, bc_values, bc_extrapolate)
            if track:  # the boundary bands, now that the ghosts are filled
                a_out = _speed_1d(DERIV, HAM, VARYING, out, g, min(g + R, g + n), h, coef, c_const, a_out)
                a_out = _speed_1d(DERIV, HAM, VARYING, out, max(g + n - R, g + R), g + n, h, coef, c_const, a_out)
                alpha[0] = _from_bits(a_out)
            prev = out
        return max(0.0, alpha[0]), where, -1

    return hj_step_1d


def _build_2d(DERIV, NUM, HAM, VARYING, VISCOUS):  # noqa: N803 (compile-time constants)
    R = RADIUS[DERIV]  # noqa: N806
    LF = NUM == LAX_FRIEDRICHS  # noqa: N806

    @numba.njit(cache=True)
    def hj_step_2d(q, buffer0, buffer1, rk, dt, bc_kinds, bc_values, bc_extrapolate, shape3, g, dx, coef, nu, kface,
                   inv_w, alpha):  # fmt: skip
        """One Runge–Kutta step of the 2-D problem; ``alpha`` (length 2) holds the per-axis speed bounds
        of ``q`` on entry and those of the new state on return.  Returns ``(speed, buffer, failed stage or -1)``."""
        n0 = q.shape[0] - 2 * g
        n1 = q.shape[1] - 2 * g
        k0 = coef[0, g, g]
        k1 = coef[1, g, g]
        h0 = dx[0]
        h1 = dx[1]
        flat = q.size
        prev = q
        where = 0
        stages = rk.shape[0]
        for s in range(stages):
            where, out, ra, rb = _stage_buffers(rk, s, buffer0, buffer1)
            track = LF or s == stages - 1
            a_in0 = alpha[0]
            a_in1 = alpha[1]
            a0 = 0  # bit keys of the per-axis speeds of the output (+0)
            a1 = 0
            finite = True
            for r in range(g, g + n0):
                i = numba.uint64(r)  # unsigned: no negative-index wraparound, so the loop vectorises
                for c in range(g, g + n1):
                    j = numba.uint64(c)
                    m0, p0 = _pair_axis0(DERIV, prev, i, j, h0)
                    m1, p1 = _pair_axis1(DERIV, prev, i, j, h1)
                    c0 = coef[0, i, j] if VARYING else k0
                    c1 = coef[1, i, j] if VARYING else k1
                    rhs = -_numerical_hamiltonian(NUM, HAM, 2, c0, m0, p0, a_in0, c1, m1, p1, a_in1)
                    if VISCOUS:
                        qc = prev[i, j]
                        visc = 0.0
                        visc += (kface[0, i, j] * (prev[i + _U1, j] - qc) - kface[0, i - _U1, j] * (qc - prev[i - _U1, j])) / (
                            h0 * h0
                        )
                        visc += (kface[1, i, j] * (prev[i, j + _U1] - qc) - kface[1, i, j - _U1] * (qc - prev[i, j - _U1])) / (
                            h1 * h1
                        )
                        rhs += nu * inv_w[i, j] * visc
                    value = ra * q[i, j] + rb * (prev[i, j] + dt * rhs)
                    out[i, j] = value
                    if not math.isfinite(value):
                        finite = False
                row = r - R  # its stencil is complete now; interior columns only
                if track and row >= g + R and row < g + n0 - R:
                    a0, a1 = _speed_2d(DERIV, HAM, VARYING, out, row, row + 1, g + R, g + n1 - R, h0, h1, coef, k0, k1,
                                       a0, a1)  # fmt: skip
            if not finite:
                return math.nan, where, s
            fill_ghosts_flat(out.reshape(flat), 2, shape3, g, bc_kinds, bc_values, bc_extrapolate)
            if track:  # the boundary band of width R, now that the ghosts are filled
                top = min(g + R, g + n0)
                bottom = max(g + n0 - R, top)
                left = min(g + R, g + n1)
                right = max(g + n1 - R, left)
                a0, a1 = _speed_2d(DERIV, HAM, VARYING, out, g, top, g, g + n1, h0, h1, coef, k0, k1, a0, a1)
                a0, a1 = _speed_2d(DERIV, HAM, VARYING, out, bottom, g + n0, g, g + n1, h0, h1, coef, k0, k1, a0, a1)
                a0, a1 = _speed_2d(DERIV, HAM, VARYING, out, top, bottom, g, left, h0, h1, coef, k0, k1, a0, a1)
                a0, a1 = _speed_2d(DERIV, HAM, VARYING, out, top, bottom, right, g + n1, h0, h1, coef, k0, k1, a0, a1)
                alpha[0] = _from_bits(a0)
                alpha[1] = _from_bits(a1)
            prev = out
        return max(max(0.0, alpha[0]), alpha[1]), where, -1

    return hj_step_2d


def _build_3d(DERIV, NUM, HAM, VARYING, VISCOUS):  # noqa: N803 (compile-time constants)
    LF = NUM == LAX_FRIEDRICHS  # noqa: N806

    @numba.njit(cache=True)
    def hj_step_3d(q, buffer0, buffer1, rk, dt, bc_kinds, bc_values, bc_extrapolate, shape3, g, dx, coef, nu, kface,
                   inv_w, alpha):  # fmt: skip
        """One Runge–Kutta step of the 3-D problem; ``alpha`` (length 3) holds the per-axis speed bounds
        of ``q`` on entry and those of the new state on return.  Returns ``(speed, buffer, failed stage or -1)``.
        The speed of a stage's output is a separate pass after its ghost fill (a 3-D stencil's rows are not
        in cache together as a 2-D row's are)."""
        n0 = q.shape[0] - 2 * g
        n1 = q.shape[1] - 2 * g
        n2 = q.shape[2] - 2 * g
        k0 = coef[0, g, g, g]
        k1 = coef[1, g, g, g]
        k2 = coef[2, g, g, g]
        h0 = dx[0]
        h1 = dx[1]
        h2 = dx[2]
        flat = q.size
        prev = q
        where = 0
        stages = rk.shape[0]
        for s in range(stages):
            where, out, ra, rb = _stage_buffers(rk, s, buffer0, buffer1)
            track = LF or s == stages - 1
            a_in0 = alpha[0]
            a_in1 = alpha[1]
            a_in2 = alpha[2]
            finite = True
            for r in range(g, g + n0):
                i = numba.uint64(r)  # unsigned: no negative-index wraparound, so the loop vectorises
                for c in range(g, g + n1):
                    j = numba.uint64(c)
                    for d in range(g, g + n2):
                        k = numba.uint64(d)
                        m0, p0 = _pair3_axis0(DERIV, prev, i, j, k, h0)
                        m1, p1 = _pair3_axis1(DERIV, prev, i, j, k, h1)
                        m2, p2 = _pair3_axis2(DERIV, prev, i, j, k, h2)
                        c0 = coef[0, i, j, k] if VARYING else k0
                        c1 = coef[1, i, j, k] if VARYING else k1
                        c2 = coef[2, i, j, k] if VARYING else k2
                        rhs = -_numerical_hamiltonian_3d(NUM, HAM, c0, m0, p0, a_in0, c1, m1, p1, a_in1,
                                                         c2, m2, p2, a_in2)  # fmt: skip
                        if VISCOUS:
                            qc = prev[i, j, k]
                            visc = 0.0
                            visc += (kface[0, i, j, k] * (prev[i + _U1, j, k] - qc)
                                     - kface[0, i - _U1, j, k] * (qc - prev[i - _U1, j, k])) / (h0 * h0)
                            visc += (kface[1, i, j, k] * (prev[i, j + _U1, k] - qc)
                                     - kface[1, i, j - _U1, k] * (qc - prev[i, j - _U1, k])) / (h1 * h1)
                            visc += (kface[2, i, j, k] * (prev[i, j, k + _U1] - qc)
                                     - kface[2, i, j, k - _U1] * (qc - prev[i, j, k - _U1])) / (h2 * h2)
                            rhs += nu * inv_w[i, j, k] * visc
                        value = ra * q[i, j, k] + rb * (prev[i, j, k] + dt * rhs)
                        out[i, j, k] = value
                        if not math.isfinite(value):
                            finite = False
            if not finite:
                return math.nan, where, s
            fill_ghosts_flat(out.reshape(flat), 3, shape3, g, bc_kinds, bc_values, bc_extrapolate)
            if track:
                a0, a1, a2 = _speed_3d(DERIV, HAM, VARYING, out, g, n0, n1, n2, h0, h1, h2, coef, k0, k1, k2)
                alpha[0] = _from_bits(a0)
                alpha[1] = _from_bits(a1)
                alpha[2] = _from_bits(a2)
            prev = out
        return max(max(max(0.0, alpha[0]), alpha[1]), alpha[2]), where, -1

    return hj_step_3d


@lru_cache(maxsize=None)
def step_kernel(ndim: int, derivative: int, numerical: int, hamiltonian: int, varying: bool, viscous: bool):
    """The compiled step kernel for one scheme (codes of :mod:`solvers.hamilton_jacobi.derivatives` and
    :mod:`solvers.hamilton_jacobi.hamiltonians`; ``varying``: the coefficient ``a_k`` varies in space; ``viscous``: ν > 0).

    Signature ``(q, buffer0, buffer1, rk, dt, bc_kinds, bc_values, bc_extrapolate, shape3, ghost, dx,
    coef, nu, kface, inv_w, alpha)`` with padded fields of the grid's shape and ``coef``, ``kface`` of
    shape ``(ndim, *padded_shape)``; see :meth:`solvers.hamilton_jacobi.solver.HJDiscretisation.step`.
    """
    build = {1: _build_1d, 2: _build_2d, 3: _build_3d}[ndim]
    return build(int(derivative), int(numerical), int(hamiltonian), bool(varying), bool(viscous))
