"""One-sided derivative approximations for Hamilton–Jacobi schemes (docs/theory.md §1, §5).

A monotone HJ scheme needs, in every cell ``i`` and along every axis, two approximations of
``∂u/∂x``: the left-biased ``p⁻`` and the right-biased ``p⁺``.  The numerical Hamiltonian
(:mod:`solvers.hamilton_jacobi.hamiltonians`) decides which one is upwind.  With ``D⁻u_i = (u_i - u_{i-1})/dx``
and ``D⁺u_i = (u_{i+1} - u_i)/dx``:

``first_order``  ``p⁻ = D⁻u_i``, ``p⁺ = D⁺u_i``; one ghost cell.  With a monotone numerical
                 Hamiltonian and forward Euler under CFL ≤ 1 the scheme is monotone
                 (Crandall–Lions), first-order accurate.

``eno2``         Osher–Shu second-order ENO: with ``Q_j = (u_{j+1} - 2u_j + u_{j-1})/dx²``,
                 ``p⁻ = D⁻u_i + (dx/2) m(Q_{i-1}, Q_i)``, ``p⁺ = D⁺u_i - (dx/2) m(Q_i, Q_{i+1})``
                 where ``m(a, b)`` is the argument of smaller magnitude (the smoother stencil);
                 evaluated as ``(u_i - u_{i-1} + ½ m(dx²Q_{i-1}, dx²Q_i)) · (1/dx)``.
                 Exact for quadratics; two ghost cells.

``weno5``        Jiang–Peng fifth-order WENO on the five one-sided differences
                 ``v1..v5`` (for ``p⁻``: ``D⁻u_{i-2}, ..., D⁻u_{i+2}``; for ``p⁺`` mirrored:
                 ``D⁺u_{i+2}, ..., D⁺u_{i-2}``), smoothness indicators of Jiang–Shu and
                 ``ε = 10⁻⁶ max v_k² + 10⁻⁹⁹`` (Osher–Fedkiw's scaling); three ghost cells.

The compiled :func:`one_sided` works on a *flattened* padded field with the stride of the axis,
so a single kernel serves 1-, 2- and 3-D grids; it and the direct-index fast kernels
(:mod:`solvers.hamilton_jacobi.fast_kernels`) share the scalar stencils :func:`first_order_pair`,
:func:`eno2_pair` and :func:`weno5_pair` (same arithmetic, so bitwise the same derivatives).  :func:`one_sided_reference` is the NumPy
reference on an ``n``-D padded array that tests compare it with.
"""

from __future__ import annotations

import numba
import numpy as np

from solvers.errors import SolverInputError, require_choice

FIRST_ORDER, ENO2, WENO5 = 0, 1, 2

#: name -> kernel code
DERIVATIVES = {"first_order": FIRST_ORDER, "eno2": ENO2, "weno5": WENO5}

#: ghost cells each scheme reads on either side of a cell
GHOSTS_NEEDED = {"first_order": 1, "eno2": 2, "weno5": 3}

#: formal order of accuracy on smooth data
ORDER = {"first_order": 1, "eno2": 2, "weno5": 5}


def derivative_code(name: str, ghost: int | None = None) -> int:
    """Kernel code of derivative scheme ``name``; checks the grid has enough ghost cells."""
    require_choice("derivative", name, DERIVATIVES)
    if ghost is not None and ghost < GHOSTS_NEEDED[name]:
        raise SolverInputError(
            f"derivative: {name!r} needs {GHOSTS_NEEDED[name]} ghost cells per side, the grid has ghost = {ghost}"
        )
    return DERIVATIVES[name]


@numba.njit(cache=True)
def _smaller(a, b):
    return a if abs(a) <= abs(b) else b


@numba.njit(cache=True)
def _weno5(v1, v2, v3, v4, v5):
    """Jiang–Peng WENO5 combination of the one-sided differences ``v1..v5``."""
    phi1 = v1 / 3.0 - 7.0 * v2 / 6.0 + 11.0 * v3 / 6.0
    phi2 = -v2 / 6.0 + 5.0 * v3 / 6.0 + v4 / 3.0
    phi3 = v3 / 3.0 + 5.0 * v4 / 6.0 - v5 / 6.0
    s1 = 13.0 / 12.0 * (v1 - 2.0 * v2 + v3) ** 2 + 0.25 * (v1 - 4.0 * v2 + 3.0 * v3) ** 2
    s2 = 13.0 / 12.0 * (v2 - 2.0 * v3 + v4) ** 2 + 0.25 * (v2 - v4) ** 2
    s3 = 13.0 / 12.0 * (v3 - 2.0 * v4 + v5) ** 2 + 0.25 * (3.0 * v3 - 4.0 * v4 + v5) ** 2
    vmax = max(v1 * v1, v2 * v2, v3 * v3, v4 * v4, v5 * v5)
    eps = 1e-6 * vmax + 1e-99
    a1 = 0.1 / (s1 + eps) ** 2
    a2 = 0.6 / (s2 + eps) ** 2
    a3 = 0.3 / (s3 + eps) ** 2
    return (a1 * phi1 + a2 * phi2 + a3 * phi3) / (a1 + a2 + a3)


# The stencils multiply by ``1/dx`` (a loop invariant the compiler hoists) instead of dividing in every
# cell, and ENO2 compares the undivided second differences ``Δ²u = dx² Q`` (the same choice as comparing
# ``Q``): ``p⁻ = (Δ⁻u_i + ½ m(Δ²u_{i-1}, Δ²u_i)) / dx``.  Divisions dominated the cost of a cell.
@numba.njit(cache=True)
def first_order_pair(um1, u00, up1, dx):
    """First-order ``(p⁻, p⁺)`` from the values ``u_{i-1}, u_i, u_{i+1}``."""
    inv = 1.0 / dx
    return (u00 - um1) * inv, (up1 - u00) * inv


@numba.njit(cache=True)
def eno2_pair(um2, um1, u00, up1, up2, dx):
    """ENO2 ``(p⁻, p⁺)`` from the values ``u_{i-2} .. u_{i+2}``."""
    inv = 1.0 / dx
    qm = u00 - 2.0 * um1 + um2
    q0 = up1 - 2.0 * u00 + um1
    qp = up2 - 2.0 * up1 + u00
    pm = ((u00 - um1) + 0.5 * _smaller(qm, q0)) * inv
    pp = ((up1 - u00) - 0.5 * _smaller(q0, qp)) * inv
    return pm, pp


@numba.njit(cache=True)
def weno5_pair(um3, um2, um1, u00, up1, up2, up3, dx):
    """WENO5 ``(p⁻, p⁺)`` from the values ``u_{i-3} .. u_{i+3}``."""
    inv = 1.0 / dx
    d0 = (um2 - um3) * inv  # d[k] = D⁻u_{i-2+k}
    d1 = (um1 - um2) * inv
    d2 = (u00 - um1) * inv
    d3 = (up1 - u00) * inv
    d4 = (up2 - up1) * inv
    d5 = (up3 - up2) * inv
    return _weno5(d0, d1, d2, d3, d4), _weno5(d5, d4, d3, d2, d1)


# The scalar stencils above are shared by the flat-index kernel (:func:`one_sided`) and the
# direct-index fast kernels (:mod:`solvers.hamilton_jacobi.fast_kernels`), so both do the same arithmetic.
@numba.njit(cache=True)
def one_sided(u, i, s, dx, kind):
    """``(p⁻, p⁺)`` at flat index ``i`` of the flattened padded field ``u`` along the axis of stride ``s``."""
    if kind == FIRST_ORDER:
        return first_order_pair(u[i - s], u[i], u[i + s], dx)
    if kind == ENO2:
        return eno2_pair(u[i - 2 * s], u[i - s], u[i], u[i + s], u[i + 2 * s], dx)
    return weno5_pair(u[i - 3 * s], u[i - 2 * s], u[i - s], u[i], u[i + s], u[i + 2 * s], u[i + 3 * s], dx)


# -- NumPy reference ---------------------------------------------------------------------------
def _shifted(u: np.ndarray, axis: int, shift: int, ghost: int) -> np.ndarray:
    """Interior block of ``u`` shifted by ``shift`` cells along ``axis``."""
    index = []
    for k, n in enumerate(u.shape):
        lo = ghost + (shift if k == axis else 0)
        index.append(slice(lo, lo + n - 2 * ghost))
    return u[tuple(index)]


def one_sided_reference(u: np.ndarray, axis: int, dx: float, name: str, ghost: int) -> tuple[np.ndarray, np.ndarray]:
    """NumPy reference of :func:`one_sided`: ``(p⁻, p⁺)`` on the interior of the padded field ``u``."""
    derivative_code(name, ghost)
    v = {m: _shifted(u, axis, m, ghost) for m in range(-3, 4) if abs(m) <= GHOSTS_NEEDED[name]}
    inv = 1.0 / dx
    if name == "first_order":
        return (v[0] - v[-1]) * inv, (v[1] - v[0]) * inv
    if name == "eno2":
        q = {m: v[m + 1] - 2.0 * v[m] + v[m - 1] for m in (-1, 0, 1)}  # dx² Q_{i+m}
        smaller = lambda a, b: np.where(np.abs(a) <= np.abs(b), a, b)  # noqa: E731
        pm = ((v[0] - v[-1]) + 0.5 * smaller(q[-1], q[0])) * inv
        pp = ((v[1] - v[0]) - 0.5 * smaller(q[0], q[1])) * inv
        return pm, pp
    d = {m: (v[m] - v[m - 1]) * inv for m in range(-2, 4)}  # D⁻u_{i+m}

    def weno(v1, v2, v3, v4, v5):
        phi = (
            v1 / 3.0 - 7.0 * v2 / 6.0 + 11.0 * v3 / 6.0,
            -v2 / 6.0 + 5.0 * v3 / 6.0 + v4 / 3.0,
            v3 / 3.0 + 5.0 * v4 / 6.0 - v5 / 6.0,
        )
        s = (
            13.0 / 12.0 * (v1 - 2.0 * v2 + v3) ** 2 + 0.25 * (v1 - 4.0 * v2 + 3.0 * v3) ** 2,
            13.0 / 12.0 * (v2 - 2.0 * v3 + v4) ** 2 + 0.25 * (v2 - v4) ** 2,
            13.0 / 12.0 * (v3 - 2.0 * v4 + v5) ** 2 + 0.25 * (3.0 * v3 - 4.0 * v4 + v5) ** 2,
        )
        eps = 1e-6 * np.max(np.stack([v1, v2, v3, v4, v5]) ** 2, axis=0) + 1e-99
        w = [c / (sk + eps) ** 2 for c, sk in zip((0.1, 0.6, 0.3), s)]
        return (w[0] * phi[0] + w[1] * phi[1] + w[2] * phi[2]) / (w[0] + w[1] + w[2])

    return weno(d[-2], d[-1], d[0], d[1], d[2]), weno(d[3], d[2], d[1], d[0], d[-1])
