"""Viscous Hamilton–Jacobi equations on a chart with a Riemannian metric (docs/theory.md §1).

Solves, on a 1-D or 2-D coordinate box (a chart of a quotient manifold),

    u_t + ½ A^{kl}(x) ∂_k u ∂_l u = ν (1/w(x)) ∂_k ( w(x) A^{kl}(x) ∂_l u ),        u(·, t0) = u0,

with ``A = g^{-1}`` the *mobility* (inverse metric, symmetric positive semi-definite, any
off-diagonal part) and ``w`` the volume density; ``w = |g|^{1/2} = det(A)^{-1/2}`` by default,
and then the right side is ``ν Δ_g u``, the Laplace–Beltrami operator in divergence form.

Discretisation (method of lines on cell-centre values ``u_i``, finite volumes for the viscous
term so it stays conservative in the Riemannian volume):

* Hamiltonian: one-sided derivatives ``p_k^±`` (:mod:`solvers.hamilton_jacobi.derivatives`: first order, ENO2,
  WENO5) and a monotone numerical Hamiltonian with the *local* metric ``A(x_i)`` of the cell:

  ``godunov``          ``Ĥ = ext_{p_0 ∈ I(p_0⁻, p_0⁺)} ext_{p_1 ∈ I(p_1⁻, p_1⁺)} H(p)`` (ext = min on
                       ``[p⁻, p⁺]`` if ``p⁻ ≤ p⁺``, else max on ``[p⁺, p⁻]``).  For the convex quadratic
                       ``H = ½ pᵀ A p`` the inner ext is a clamped minimiser ``p_1 = -A01 p_0 / A11``
                       (min) or an endpoint (max), which leaves a convex function of ``p_0``; its max
                       over an interval is at an endpoint and its min is attained at an endpoint, at a
                       stationary point of one of its quadratic pieces (``0``, ``-A01 p_1^± / A00``) or
                       where the two endpoint pieces cross (``-A11 (p_1⁻+p_1⁺) / (2 A01)``).  Evaluating
                       the inner ext at all these candidates (clamped to the interval) and taking the
                       min is therefore exact.  In 1-D: ``½ A00 max(max(p⁻,0)², min(p⁺,0)²)``.
  ``lax_friedrichs``   local Lax–Friedrichs: ``Ĥ = H(p̄) - Σ_k α_k (p_k⁺ - p_k⁻)/2`` with
                       ``α_k = max |(A p)_k|`` over the corners of the box spanned by ``p⁻, p⁺`` in the
                       cell (the exact bound of ``|∂H/∂p_k|`` there, since ``∂H/∂p`` is linear).

* Viscous term: ``(ν / W_i) Σ_k (F_{k,i+½} - F_{k,i-½}) / dx_k`` with the face flux
  ``F_k = K^{kk} δ_k u / dx_k + Σ_{l≠k} K^{kl} (centred ∂_l u averaged over the two cells)`` and
  ``K^{kl} = w A^{kl}`` sampled *at the face*; ``W_i`` is the cell average of ``w`` (Gauss–Legendre,
  so an integrable singularity of ``w`` at a face costs nothing).

* Time: Shu–Osher SSP-RK (:mod:`solvers.time_stepping`), step
  ``cfl / (max_i Σ_k α_k / dx_k + max_i (ν/W_i) [Σ_k (K^{kk}_+ + K^{kk}_-)/dx_k² + Σ_{k≠l}(|K^{kl}_+| + |K^{kl}_-|)/(dx_k dx_l)])``.
  With first-order derivatives, a monotone ``Ĥ``, a diagonal ``A`` and ``cfl ≤ 1`` the scheme is
  monotone; an off-diagonal viscous term is only L²-stable (as for every 9-point cross stencil).

**Degenerate metrics.**  The mobility may vanish (``A → 0``, ``w → ∞``) on a boundary or at a point
of the chart — the gram mobility ``4z`` at ``z = 0``, the rescaling mobility at ``q = 0`` with ``c = 0``.
Nothing is divided by ``A``: the hyperbolic speed ``|A p|`` and the face coefficient ``K = w A``
(``2 sqrt(z)`` for the gram chart) go to zero there, so the time step is not reduced and no flux
crosses the degenerate set.  ``w`` enters only as a cell average ``W_i`` (finite for an integrable
density) and ``K`` only at faces: where ``w A`` is not finite at a face (``0·∞``) it is replaced by
the mean of its values a distance ``1e-9 dx`` to either side (its limit), and an error naming the face
is raised if that is not finite either.  ``A`` must be finite and positive semi-definite at every
cell centre (an error names the first point where it is not).  A mobility that blows up (the poles
of a latitude–longitude sphere chart) is *not* handled here: use a triangulated mesh
(:mod:`solvers.surfaces.hamilton_jacobi`).

For a diagonal mobility that is strictly positive at cell centres the same equation is solved by
:func:`solvers.hamilton_jacobi.solver.solve_hj` with ``a = D = diag A`` and ``density = w`` (face
coefficients averaged from cell centres there); the tests compare the two.

One fused Numba kernel, :func:`chart_stage_kernel`, evaluates an SSP-RK stage for 1-D and 2-D
charts on the flattened padded field; :meth:`ChartDiscretisation.rhs_reference` is its NumPy
reference, and :func:`godunov_quadratic_2d` / :func:`godunov_quadratic_2d_reference` the pair for
the 2-D Godunov Hamiltonian.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numba
import numpy as np

from solvers.grid import BoundaryConditions, fill_ghosts, fill_ghosts_compiled
from solvers.errors import (
    BlowUpError,
    SolverInputError,
    first_nonfinite,
    require_cfl,
    require_choice,
    require_finite,
    require_positive,
    require_times,
)
from solvers.grid import Grid
from solvers.float_bits import ABS_BITS, INF_BITS, bits, from_bits
from solvers.hamilton_jacobi.derivatives import (ENO2, FIRST_ORDER, WENO5, derivative_code, eno2_pair, first_order_pair,
                                                one_sided, one_sided_reference, weno5_pair)
from solvers.time_stepping import Clock, step_limit_error, tableau

GODUNOV, LAX_FRIEDRICHS = 0, 1

#: numerical Hamiltonians of the chart solver, name -> kernel code
CHART_HAMILTONIANS = {"godunov": GODUNOV, "lax_friedrichs": LAX_FRIEDRICHS}


# -- settings ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class ChartHJSettings:
    """Scheme settings of a chart HJ solve, validated in one place."""

    ndim: int
    numerical_hamiltonian: str = "godunov"
    derivative: str = "eno2"
    integrator: str = "ssprk3"
    cfl: float = 0.5
    nu: float = 0.0
    boundary: BoundaryConditions | str = "symmetric"
    max_steps: int = 1_000_000
    max_dt: float = math.inf

    def __post_init__(self):
        if self.ndim not in (1, 2):
            raise SolverInputError(f"ndim: chart solvers work on 1-D or 2-D charts, found ndim = {self.ndim!r}")
        require_choice("numerical_hamiltonian", self.numerical_hamiltonian, CHART_HAMILTONIANS)
        derivative_code(self.derivative)
        tableau(self.integrator)
        object.__setattr__(self, "cfl", require_cfl(self.cfl))
        object.__setattr__(self, "nu", require_positive("nu", self.nu, allow_zero=True))
        object.__setattr__(self, "boundary", BoundaryConditions.parse(self.boundary, self.ndim))
        if isinstance(self.max_steps, bool) or not float(self.max_steps).is_integer() or int(self.max_steps) < 1:
            raise SolverInputError(f"max_steps: expected a whole number >= 1, found {self.max_steps!r}")
        object.__setattr__(self, "max_steps", int(self.max_steps))
        if not (float(self.max_dt) > 0):
            raise SolverInputError(f"max_dt: expected a number > 0 (or inf), found {self.max_dt!r}")
        object.__setattr__(self, "max_dt", float(self.max_dt))


# -- the 2-D Godunov Hamiltonian of ½ pᵀAp -----------------------------------------------------
@numba.njit(cache=True)
def _quad(a, b, c, p0, p1):
    return 0.5 * (a * p0 * p0 + 2.0 * b * p0 * p1 + c * p1 * p1)


@numba.njit(cache=True)
def _inner_ext(a, b, c, p0, m1, q1):
    """``ext`` over ``p_1 ∈ I(m1, q1)`` of ``½ pᵀAp`` at fixed ``p_0``."""
    if m1 <= q1:
        s = -b * p0 / c if c > 0.0 else 0.0
        s = min(max(s, m1), q1)
        return _quad(a, b, c, p0, s)
    return max(_quad(a, b, c, p0, m1), _quad(a, b, c, p0, q1))


@numba.njit(cache=True)
def _clamped_inner(a, b, c, t, m0, q0, m1, q1):
    return _inner_ext(a, b, c, min(max(t, m0), q0), m1, q1)


@numba.njit(cache=True)
def godunov_quadratic_2d(a, b, c, m0, q0, m1, q1):
    """Godunov Hamiltonian of ``H = ½(a p0² + 2b p0 p1 + c p1²)`` (PSD) for ``p_k ∈ I(m_k, q_k)``."""
    if m0 > q0:  # the inner ext is convex in p0: its max over [q0, m0] is at an endpoint
        return max(_inner_ext(a, b, c, m0, m1, q1), _inner_ext(a, b, c, q0, m1, q1))
    best = min(_inner_ext(a, b, c, m0, m1, q1), _inner_ext(a, b, c, q0, m1, q1))
    best = min(best, _clamped_inner(a, b, c, 0.0, m0, q0, m1, q1))
    if a > 0.0:
        best = min(best, _clamped_inner(a, b, c, -b * m1 / a, m0, q0, m1, q1))
        best = min(best, _clamped_inner(a, b, c, -b * q1 / a, m0, q0, m1, q1))
    if b != 0.0:
        best = min(best, _clamped_inner(a, b, c, -c * (m1 + q1) / (2.0 * b), m0, q0, m1, q1))
    return best


def godunov_quadratic_2d_reference(a, b, c, m0, q0, m1, q1) -> np.ndarray:
    """NumPy reference of :func:`godunov_quadratic_2d` on whole arrays (same candidate rule)."""
    a, b, c, m0, q0, m1, q1 = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (a, b, c, m0, q0, m1, q1)))

    def quad(p0, p1):
        return 0.5 * (a * p0 * p0 + 2.0 * b * p0 * p1 + c * p1 * p1)

    def inner(p0):
        with np.errstate(divide="ignore", invalid="ignore"):
            s = np.where(c > 0, -b * p0 / np.where(c > 0, c, 1.0), 0.0)
        s_min = np.clip(s, np.minimum(m1, q1), np.maximum(m1, q1))
        return np.where(m1 <= q1, quad(p0, s_min), np.maximum(quad(p0, m1), quad(p0, q1)))

    lo, hi = np.minimum(m0, q0), np.maximum(m0, q0)
    cands = [m0, q0, np.zeros_like(a)]
    with np.errstate(divide="ignore", invalid="ignore"):
        safe_a = np.where(a > 0, a, 1.0)
        safe_b = np.where(b != 0, b, 1.0)
        cands += [np.where(a > 0, -b * m1 / safe_a, m0), np.where(a > 0, -b * q1 / safe_a, m0)]
        cands += [np.where(b != 0, -c * (m1 + q1) / (2.0 * safe_b), m0)]
    h_min = np.min([inner(np.clip(t, lo, hi)) for t in cands], axis=0)
    h_max = np.maximum(inner(m0), inner(q0))
    return np.where(m0 > q0, h_max, h_min)


# -- the fused stage kernel ----------------------------------------------------------------------
@numba.njit(cache=True)
def chart_stage_kernel(
    q_prev, q0, out, rk_alpha, rk_beta, dt,
    ndim, shape3, ghost, strides, dx, num, deriv,
    mob, nu, kface, inv_w,
):  # fmt: skip
    """One Shu–Osher stage ``out = rk_alpha q0 + rk_beta (q_prev + dt L(q_prev))`` on the interior.

    ``mob`` is ``(3, N)``: ``A00, A01, A11`` at the padded cell centres (1-D: only ``A00`` used);
    ``kface[k, l]`` is ``K^{kl} = w A^{kl}`` on the face between flat cells ``idx`` and
    ``idx + strides[k]``; ``inv_w`` is ``1/W`` per cell.  Returns ``max_i Σ_k α_k/dx_k`` of
    ``q_prev`` (the hyperbolic rate), or NaN if ``out`` is not finite.
    """
    g1 = ghost if ndim == 2 else 0
    rate = 0.0
    finite = True
    for i1 in range(g1, shape3[1] - g1):
        for i2 in range(ghost, shape3[2] - ghost):
            idx = i1 * shape3[2] + i2
            a = mob[0, idx]
            if ndim == 1:
                m0, p0 = one_sided(q_prev, idx, strides[0], dx[0], deriv)
                alpha0 = a * max(abs(m0), abs(p0))
                if num == GODUNOV:
                    lo = max(m0, 0.0)
                    hi = min(p0, 0.0)
                    h = 0.5 * a * max(lo * lo, hi * hi)
                else:
                    pb = 0.5 * (m0 + p0)
                    h = 0.5 * a * pb * pb - 0.5 * alpha0 * (p0 - m0)
                local = alpha0 / dx[0]
            else:
                b = mob[1, idx]
                c = mob[2, idx]
                m0, p0 = one_sided(q_prev, idx, strides[0], dx[0], deriv)
                m1, p1 = one_sided(q_prev, idx, strides[1], dx[1], deriv)
                alpha0 = max(max(abs(a * m0 + b * m1), abs(a * m0 + b * p1)), max(abs(a * p0 + b * m1), abs(a * p0 + b * p1)))
                alpha1 = max(max(abs(b * m0 + c * m1), abs(b * m0 + c * p1)), max(abs(b * p0 + c * m1), abs(b * p0 + c * p1)))
                if num == GODUNOV:
                    h = godunov_quadratic_2d(a, b, c, m0, p0, m1, p1)
                else:
                    h = _quad(a, b, c, 0.5 * (m0 + p0), 0.5 * (m1 + p1))
                    h -= 0.5 * alpha0 * (p0 - m0) + 0.5 * alpha1 * (p1 - m1)
                local = alpha0 / dx[0] + alpha1 / dx[1]
            if local > rate:
                rate = local
            rhs = -h
            if nu > 0.0:
                qc = q_prev[idx]
                visc = 0.0
                for k in range(ndim):
                    sk = strides[k]
                    flux_hi = kface[k, k, idx] * (q_prev[idx + sk] - qc) / dx[k]
                    flux_lo = kface[k, k, idx - sk] * (qc - q_prev[idx - sk]) / dx[k]
                    if ndim == 2:
                        l = 1 - k
                        sl = strides[l]
                        # centred ∂_l u on the face: mean of the two cells' centred differences
                        d_hi = (q_prev[idx + sl] + q_prev[idx + sk + sl] - q_prev[idx - sl] - q_prev[idx + sk - sl]) / (
                            4.0 * dx[l]
                        )
                        d_lo = (q_prev[idx + sl] + q_prev[idx - sk + sl] - q_prev[idx - sl] - q_prev[idx - sk - sl]) / (
                            4.0 * dx[l]
                        )
                        flux_hi += kface[k, l, idx] * d_hi
                        flux_lo += kface[k, l, idx - sk] * d_lo
                    visc += (flux_hi - flux_lo) / dx[k]
                rhs += nu * inv_w[idx] * visc
            value = rk_alpha * q0[idx] + rk_beta * (q_prev[idx] + dt * rhs)
            out[idx] = value
            if not math.isfinite(value):
                finite = False
    return rate if finite else math.nan


@numba.njit(cache=True)
def chart_rate_kernel(q, ndim, shape3, ghost, strides, dx, deriv, mob):
    """Hyperbolic rate ``max_i Σ_k α_k / dx_k`` of the padded field ``q`` (NaN if not finite)."""
    g1 = ghost if ndim == 2 else 0
    rate = 0.0
    for i1 in range(g1, shape3[1] - g1):
        for i2 in range(ghost, shape3[2] - ghost):
            idx = i1 * shape3[2] + i2
            if not math.isfinite(q[idx]):
                return math.nan
            a = mob[0, idx]
            m0, p0 = one_sided(q, idx, strides[0], dx[0], deriv)
            if ndim == 1:
                local = a * max(abs(m0), abs(p0)) / dx[0]
            else:
                b = mob[1, idx]
                c = mob[2, idx]
                m1, p1 = one_sided(q, idx, strides[1], dx[1], deriv)
                alpha0 = max(max(abs(a * m0 + b * m1), abs(a * m0 + b * p1)), max(abs(a * p0 + b * m1), abs(a * p0 + b * p1)))
                alpha1 = max(max(abs(b * m0 + c * m1), abs(b * m0 + c * p1)), max(abs(b * p0 + c * m1), abs(b * p0 + c * p1)))
                local = alpha0 / dx[0] + alpha1 / dx[1]
            rate = max(rate, local)
    return rate


# -- 1-D kernels: the same arithmetic as chart_stage_kernel / chart_rate_kernel, without its 2-D branches --------
# Written over slices that start at the stencil's left end (``qs[k + w]`` is cell ``lo + k``, ``w`` the derivative's
# half width), so that every index is ``k`` plus a constant: Numba's negative-index wrap-around then folds away and
# the loop vectorises.  The rate and the finiteness test are integer maxima of bit patterns (solvers.float_bits):
# ``max_i α_i / dx = (max_i α_i) / dx`` exactly (rounding is monotone).  About 6x the indexed loop at 2000 cells.
@numba.njit(cache=True, inline="always")
def _width(deriv):
    """The stencil half width of a derivative code."""
    if deriv == FIRST_ORDER:
        return 1
    if deriv == ENO2:
        return 2
    return 3


@numba.njit(cache=True, inline="always")
def _pair_at(qs, k, dx, deriv):
    """``(p⁻, p⁺)`` at ``qs[k + _width(deriv)]`` (:func:`one_sided`'s stencils)."""
    if deriv == FIRST_ORDER:
        return first_order_pair(qs[k], qs[k + 1], qs[k + 2], dx)
    if deriv == ENO2:
        return eno2_pair(qs[k], qs[k + 1], qs[k + 2], qs[k + 3], qs[k + 4], dx)
    return weno5_pair(qs[k], qs[k + 1], qs[k + 2], qs[k + 3], qs[k + 4], qs[k + 5], qs[k + 6], dx)


@numba.njit(cache=True)
def _stage_1d(q_prev, q0, out, rk_alpha, rk_beta, dt, lo, hi, dx, num, deriv, mob0, nu, k00, inv_w):
    w = _width(deriv)
    qs = q_prev[lo - w:hi + w]
    q0s, outs, mobs = q0[lo:hi], out[lo:hi], mob0[lo:hi]
    ks, iws = k00[lo - 1:hi], inv_w[lo:hi]   # ks[k], ks[k + 1]: K on the lower and upper face of cell lo + k
    top = 0   # bits of the largest α
    big = 0   # bits of the largest |out|
    for k in range(hi - lo):
        a = mobs[k]
        m0, p0 = _pair_at(qs, k, dx, deriv)
        alpha0 = a * max(abs(m0), abs(p0))
        if num == GODUNOV:
            lo_p = max(m0, 0.0)
            hi_p = min(p0, 0.0)
            h = 0.5 * a * max(lo_p * lo_p, hi_p * hi_p)
        else:
            pb = 0.5 * (m0 + p0)
            h = 0.5 * a * pb * pb - 0.5 * alpha0 * (p0 - m0)
        top = max(top, bits(alpha0) & ABS_BITS if alpha0 == alpha0 else 0)   # NaN skipped, as `if local > rate` does
        qc = qs[k + w]
        rhs = -h
        if nu > 0.0:
            visc = 0.0
            flux_hi = ks[k + 1] * (qs[k + w + 1] - qc) / dx
            flux_lo = ks[k] * (qc - qs[k + w - 1]) / dx
            visc += (flux_hi - flux_lo) / dx
            rhs += nu * iws[k] * visc
        value = rk_alpha * q0s[k] + rk_beta * (qc + dt * rhs)
        outs[k] = value
        big = max(big, bits(value) & ABS_BITS)
    if big >= INF_BITS:
        return math.nan
    return from_bits(top) / dx


@numba.njit(cache=True)
def chart_stage_kernel_1d(q_prev, q0, out, rk_alpha, rk_beta, dt, ghost, dx, num, deriv, mob0, nu, k00, inv_w):
    """:func:`chart_stage_kernel` on a 1-D chart (bitwise the same): ``mob0`` is ``A00``, ``k00`` is ``K^{00}``
    per padded cell.  Each derivative is compiled as its own loop (its branches folded away)."""
    lo, hi = ghost, q_prev.size - ghost
    if deriv == ENO2:
        return _stage_1d(q_prev, q0, out, rk_alpha, rk_beta, dt, lo, hi, dx, num, ENO2, mob0, nu, k00, inv_w)
    if deriv == FIRST_ORDER:
        return _stage_1d(q_prev, q0, out, rk_alpha, rk_beta, dt, lo, hi, dx, num, FIRST_ORDER, mob0, nu, k00, inv_w)
    return _stage_1d(q_prev, q0, out, rk_alpha, rk_beta, dt, lo, hi, dx, num, WENO5, mob0, nu, k00, inv_w)


@numba.njit(cache=True)
def _rate_1d(q, lo, hi, dx, deriv, mob0):
    w = _width(deriv)
    qs, mobs = q[lo - w:hi + w], mob0[lo:hi]
    top = 0   # bits of the largest α
    big = 0   # bits of the largest |q|
    for k in range(hi - lo):
        m0, p0 = _pair_at(qs, k, dx, deriv)
        alpha0 = mobs[k] * max(abs(m0), abs(p0))
        top = max(top, bits(alpha0) & ABS_BITS if alpha0 == alpha0 else 0)   # NaN skipped, as max(rate, local) does
        big = max(big, bits(qs[k + w]) & ABS_BITS)
    if big >= INF_BITS:
        return math.nan
    return from_bits(top) / dx


@numba.njit(cache=True)
def chart_rate_kernel_1d(q, ghost, dx, deriv, mob0):
    """:func:`chart_rate_kernel` on a 1-D chart (bitwise the same), the derivative fixed per compiled copy."""
    lo, hi = ghost, q.size - ghost
    if deriv == ENO2:
        return _rate_1d(q, lo, hi, dx, ENO2, mob0)
    if deriv == FIRST_ORDER:
        return _rate_1d(q, lo, hi, dx, FIRST_ORDER, mob0)
    return _rate_1d(q, lo, hi, dx, WENO5, mob0)


# -- metric sampling ---------------------------------------------------------------------------
def _components(grid: Grid, mobility, coords) -> list[np.ndarray]:
    """``[A00]`` (1-D) or ``[A00, A01, A11]`` (2-D) evaluated at the coordinate arrays ``coords``."""
    with np.errstate(all="ignore"):
        values = mobility(*coords)
    if grid.ndim == 1:
        arr = np.asarray(values, dtype=np.float64)
        if arr.shape not in (coords[0].shape, (1, 1, *coords[0].shape), ()):
            raise SolverInputError(
                f"mobility: expected a callable returning g^xx of shape {coords[0].shape} on a 1-D chart, found shape {arr.shape}"
            )
        return [np.broadcast_to(arr.reshape(arr.shape[2:]) if arr.ndim == 3 else arr, coords[0].shape)]
    if isinstance(values, (tuple, list)) and len(values) == 3:
        parts = [np.broadcast_to(np.asarray(v, dtype=np.float64), coords[0].shape) for v in values]
        return parts
    arr = np.asarray(values, dtype=np.float64)
    if arr.shape[:2] == (2, 2):
        arr = np.broadcast_to(arr, (2, 2, *coords[0].shape))
        return [arr[0, 0], arr[0, 1], arr[1, 1]]
    raise SolverInputError(
        "mobility: on a 2-D chart expected a callable returning (A00, A01, A11) or an array (2, 2, ...), "
        f"found {type(values).__name__} of shape {np.shape(values)}"
    )


def _point_text(coords, index) -> str:
    return "(" + ", ".join(f"{c[index]:.6g}" for c in coords) + ")"


def check_mobility(grid: Grid, parts: list[np.ndarray], coords, where: str) -> None:
    """``A`` finite and positive semi-definite at every point; the error names the first bad point."""
    tol = 1e-12
    for name, part in zip(("A00", "A01", "A11"), parts):
        bad = ~np.isfinite(part)
        if bad.any():
            index = tuple(np.argwhere(bad)[0])
            raise SolverInputError(
                f"mobility: {name} is {float(part[index])!r} at the {where} x = {_point_text(coords, index)}; "
                "expected finite values inside the chart"
            )
    a = parts[0]
    if grid.ndim == 1:
        bad = a < 0
    else:
        b, c = parts[1], parts[2]
        scale = np.maximum(np.abs(a) + np.abs(c), 1e-300)
        bad = (a < -tol * scale) | (c < -tol * scale) | (a * c - b * b < -tol * scale**2)
    if bad.any():
        index = tuple(np.argwhere(bad)[0])
        found = ", ".join(f"{p[index]:.6g}" for p in parts)
        raise SolverInputError(
            f"mobility: not positive semi-definite at the {where} x = {_point_text(coords, index)} "
            f"(A = [{found}]); a metric must be positive definite inside the chart"
        )


def _default_density(grid: Grid, mobility) -> Callable:
    def density(*x):
        parts = _components(grid, mobility, x)
        det = parts[0] if grid.ndim == 1 else parts[0] * parts[2] - parts[1] ** 2
        with np.errstate(divide="ignore", invalid="ignore"):
            return 1.0 / np.sqrt(det)

    return density


def _face_coordinates(grid: Grid, axis: int, offset: float = 0.0):
    """Coordinates of the faces normal to ``axis`` bounding interior cells (n_axis + 1 of them)."""
    axes = []
    for k in range(grid.ndim):
        axes.append(grid.faces(k) + offset if k == axis else grid.centers(k))
    return tuple(np.meshgrid(*axes, indexing="ij"))


# -- the discretisation --------------------------------------------------------------------------
@dataclass(frozen=True)
class ChartDiscretisation:
    """The unpacked arrays of one chart HJ problem, ready for the compiled kernels."""

    grid: Grid
    settings: ChartHJSettings
    mob: np.ndarray  # (3, N) flat padded A00, A01, A11 at cell centres
    kface: np.ndarray  # (ndim, ndim, N) flat padded K^{kl} on faces normal to k
    inv_w: np.ndarray  # (N,) flat padded 1 / (cell average of w)
    codes: tuple[int, int]  # (numerical hamiltonian, derivative)
    shape3: np.ndarray
    strides: np.ndarray
    dx: np.ndarray
    viscous_rate: float  # max_i of the viscous rate bound (0 if nu = 0)

    @classmethod
    def build(cls, grid: Grid, settings: ChartHJSettings, mobility, density=None) -> "ChartDiscretisation":
        if not isinstance(grid, Grid):
            raise SolverInputError(f"grid: expected a solvers.grid.uniform.Grid, found {type(grid).__name__}")
        if settings.ndim != grid.ndim:
            raise SolverInputError(f"settings.ndim: expected {grid.ndim} (the grid's), found {settings.ndim}")
        if not callable(mobility):
            raise SolverInputError(f"mobility: expected a callable of the chart coordinates, found {type(mobility).__name__}")
        if density is not None and not callable(density):
            raise SolverInputError(f"density: expected a callable of the chart coordinates or None, found {type(density).__name__}")
        num = CHART_HAMILTONIANS[settings.numerical_hamiltonian]
        deriv = derivative_code(settings.derivative, grid.ghost)
        bc = settings.boundary
        ndim, n = grid.ndim, int(np.prod(grid.padded_shape))
        centres = grid.mesh()
        parts = _components(grid, mobility, centres)
        check_mobility(grid, parts, centres, "cell centre")
        mob = np.zeros((3, n))
        order = [0] if ndim == 1 else [0, 1, 2]
        for slot in order:
            mob[slot] = _pad(grid, np.ascontiguousarray(parts[slot], dtype=np.float64), bc).reshape(n)
        if settings.nu > 0:
            density = _default_density(grid, mobility) if density is None else density
            with np.errstate(all="ignore"):
                w_avg = grid.cell_averages(density)
            bad = ~(np.isfinite(w_avg) & (w_avg > 0))
            if bad.any():
                index = tuple(np.argwhere(bad)[0])
                raise SolverInputError(
                    f"density: the cell average of w is {float(w_avg[index])!r} in the cell centred at x = {_point_text(centres, index)}; "
                    "expected a finite positive (integrable) density"
                )
            inv_w = _pad(grid, 1.0 / w_avg, bc).reshape(n)
        else:  # w enters only the viscous term: an inviscid solve never evaluates it (nor its Gauss quadrature)
            inv_w = np.ones(n)
        kface = np.zeros((ndim, ndim, *grid.padded_shape))
        if settings.nu > 0:
            for k in range(ndim):
                kf = _face_flux_coefficients(grid, mobility, density, k)  # (ndim, *faces shape)
                index = [slice(grid.ghost, grid.ghost + c) for c in grid.cells]
                index[k] = slice(grid.ghost - 1, grid.ghost + grid.cells[k])
                for l in range(ndim):
                    kface[(k, l, *index)] = kf[l]
        kface = kface.reshape(ndim, ndim, n)
        viscous_rate = 0.0
        if settings.nu > 0:
            kf = kface.reshape(ndim, ndim, *grid.padded_shape)
            rate = np.zeros(grid.shape)
            for k in range(ndim):
                for l in range(ndim):
                    hi = kf[(k, l, *grid.interior)]
                    lo_index = list(grid.interior)
                    lo_index[k] = slice(grid.ghost - 1, grid.ghost - 1 + grid.cells[k])
                    lo = kf[(k, l, *lo_index)]
                    if k == l:
                        rate += (hi + lo) / grid.dx[k] ** 2
                    else:
                        rate += (np.abs(hi) + np.abs(lo)) / (grid.dx[k] * grid.dx[l])
            viscous_rate = float(settings.nu * np.max(rate / w_avg))
        shape3 = np.array((1,) * (3 - ndim) + grid.padded_shape, dtype=np.int64)
        strides = np.array([int(np.prod(grid.padded_shape[k + 1 :])) for k in range(ndim)], dtype=np.int64)
        return cls(grid, settings, mob, kface, inv_w, (num, deriv), shape3, strides, np.array(grid.dx), viscous_rate)

    # -- compiled --------------------------------------------------------------------------
    def stage(self, q_prev, q0, out, alpha, beta, dt) -> float:
        """Fused stage on padded fields; returns the hyperbolic rate of ``q_prev`` (NaN if ``out`` is not finite)."""
        num, deriv = self.codes
        return chart_stage_kernel(
            q_prev.reshape(-1), q0.reshape(-1), out.reshape(-1), float(alpha), float(beta), float(dt),
            self.grid.ndim, self.shape3, self.grid.ghost, self.strides, self.dx, num, deriv,
            self.mob, self.settings.nu, self.kface, self.inv_w,
        )  # fmt: skip

    def hyperbolic_rate(self, q) -> float:
        return chart_rate_kernel(
            q.reshape(-1), self.grid.ndim, self.shape3, self.grid.ghost, self.strides, self.dx, self.codes[1], self.mob
        )

    def stable_step(self, rate: float) -> float:
        """Stable step (before the CFL factor) for the hyperbolic rate ``rate`` plus the viscous rate."""
        total = rate + self.viscous_rate
        return math.inf if total == 0.0 else 1.0 / total

    # -- NumPy reference -------------------------------------------------------------------
    def rhs_reference(self, q: np.ndarray) -> tuple[np.ndarray, float]:
        """NumPy reference of ``L(q)`` on the interior of the padded field ``q`` and the hyperbolic rate."""
        grid, g = self.grid, self.grid.ghost
        ndim, inner = grid.ndim, grid.interior
        name = self.settings.derivative
        num = self.codes[0]
        mob = [m.reshape(grid.padded_shape)[inner] for m in self.mob]
        pm, pp = zip(*[one_sided_reference(q, k, grid.dx[k], name, g) for k in range(ndim)])
        a = mob[0]
        if ndim == 1:
            alpha = [a * np.maximum(np.abs(pm[0]), np.abs(pp[0]))]
            if num == GODUNOV:
                h = 0.5 * a * np.maximum(np.maximum(pm[0], 0.0) ** 2, np.minimum(pp[0], 0.0) ** 2)
            else:
                h = 0.5 * a * (0.5 * (pm[0] + pp[0])) ** 2 - 0.5 * alpha[0] * (pp[0] - pm[0])
        else:
            b, c = mob[1], mob[2]
            corners = [(x0, x1) for x0 in (pm[0], pp[0]) for x1 in (pm[1], pp[1])]
            alpha = [
                np.max([np.abs(a * x0 + b * x1) for x0, x1 in corners], axis=0),
                np.max([np.abs(b * x0 + c * x1) for x0, x1 in corners], axis=0),
            ]
            if num == GODUNOV:
                h = godunov_quadratic_2d_reference(a, b, c, pm[0], pp[0], pm[1], pp[1])
            else:
                p0, p1 = 0.5 * (pm[0] + pp[0]), 0.5 * (pm[1] + pp[1])
                h = 0.5 * (a * p0**2 + 2 * b * p0 * p1 + c * p1**2)
                h = h - 0.5 * alpha[0] * (pp[0] - pm[0]) - 0.5 * alpha[1] * (pp[1] - pm[1])
        rate = float(np.max(sum(al / grid.dx[k] for k, al in enumerate(alpha))))
        rhs = -h
        if self.settings.nu > 0:
            kf = self.kface.reshape(ndim, ndim, *grid.padded_shape)

            def shift(field, offsets):
                index = [slice(g + offsets[k], g + offsets[k] + grid.cells[k]) for k in range(ndim)]
                return field[tuple(index)]

            visc = np.zeros(grid.shape)
            for k in range(ndim):
                ek = [1 if j == k else 0 for j in range(ndim)]
                mk = [-v for v in ek]
                zero = [0] * ndim
                f_hi = shift(kf[k, k], zero) * (shift(q, ek) - shift(q, zero)) / grid.dx[k]
                f_lo = shift(kf[k, k], mk) * (shift(q, zero) - shift(q, mk)) / grid.dx[k]
                if ndim == 2:
                    l = 1 - k
                    el = [1 if j == l else 0 for j in range(ndim)]
                    ml = [-v for v in el]

                    def add(u, v):
                        return [x + y for x, y in zip(u, v)]

                    d_hi = (shift(q, el) + shift(q, add(ek, el)) - shift(q, ml) - shift(q, add(ek, ml))) / (4 * grid.dx[l])
                    d_lo = (shift(q, el) + shift(q, add(mk, el)) - shift(q, ml) - shift(q, add(mk, ml))) / (4 * grid.dx[l])
                    f_hi = f_hi + shift(kf[k, l], zero) * d_hi
                    f_lo = f_lo + shift(kf[k, l], mk) * d_lo
                visc += (f_hi - f_lo) / grid.dx[k]
            rhs = rhs + self.settings.nu * self.inv_w.reshape(grid.padded_shape)[inner] * visc
        return rhs, rate


def _pad(grid: Grid, interior: np.ndarray, bc: BoundaryConditions) -> np.ndarray:
    """Extend an interior coefficient to the ghost cells: periodic wrap or nearest value."""
    out = interior
    for axis, periodic in enumerate(bc.periodic):
        width = [(0, 0)] * grid.ndim
        width[axis] = (grid.ghost, grid.ghost)
        out = np.pad(out, width, mode="wrap" if periodic else "edge")
    return np.ascontiguousarray(out)


def _face_flux_coefficients(grid: Grid, mobility, density, axis: int) -> np.ndarray:
    """``K^{axis, l} = w A^{axis, l}`` on the faces normal to ``axis``; limits taken at ``0·∞`` faces."""
    coords = _face_coordinates(grid, axis)

    def evaluate(cs):
        parts = _components(grid, mobility, cs)
        row = [parts[0]] if grid.ndim == 1 else ([parts[0], parts[1]] if axis == 0 else [parts[1], parts[2]])
        with np.errstate(all="ignore"):
            w = np.asarray(density(*cs), dtype=np.float64)
            return np.stack([w * r for r in row])

    k = evaluate(coords)
    bad = ~np.isfinite(k)
    if bad.any():
        h = 1e-9 * grid.dx[axis]
        lo = evaluate(_face_coordinates(grid, axis, -h))
        hi = evaluate(_face_coordinates(grid, axis, h))
        # the mean of the two sides; one side where the other leaves the chart (not finite there)
        limit = np.where(np.isfinite(lo) & np.isfinite(hi), 0.5 * (lo + hi), np.where(np.isfinite(hi), hi, lo))
        k = np.where(bad, limit, k)
        still = ~np.isfinite(k)
        if still.any():
            index = tuple(np.argwhere(still)[0])
            raise SolverInputError(
                f"mobility/density: w A is {float(k[index])!r} on the face x = {_point_text(coords, index[1:])} "
                f"(normal to axis {axis}) and has no finite limit there"
            )
    return k


# -- result and driver ---------------------------------------------------------------------------
@dataclass(frozen=True)
class ChartHJSolution:
    """Snapshots ``u[n]`` (interior cell-centre values) at ``times[n]``, and how they were made."""

    grid: Grid
    times: np.ndarray
    u: np.ndarray
    steps: int
    settings: ChartHJSettings


def solve_chart_hj(
    grid: Grid,
    u0,
    times,
    *,
    mobility: Callable,
    density: Callable | None = None,
    nu: float = 0.0,
    numerical_hamiltonian: str = "godunov",
    derivative: str = "eno2",
    integrator: str = "ssprk3",
    cfl: float = 0.5,
    boundary="symmetric",
    t0: float = 0.0,
    max_steps: int = 1_000_000,
    max_dt: float = math.inf,
    loop: str = "compiled",
) -> ChartHJSolution:
    """Solve ``u_t + ½ A ∇u·∇u = ν (1/w) div(w A ∇u)`` on a 1-D or 2-D chart from ``u0`` to each of ``times``.

    ``mobility(*x)``: the inverse metric at coordinate arrays ``x`` — ``g^xx`` on a 1-D chart; on a
    2-D chart ``(A00, A01, A11)`` or an array ``(2, 2, ...)``.  ``density(*x)``: the volume density
    ``w`` (default ``det(A)^{-1/2} = |g|^{1/2}``, the Laplace–Beltrami operator); it enters only the viscous
    term, so an inviscid solve (``nu = 0``) neither evaluates nor checks it.  ``u0``: cell-centre
    values or a function of the coordinates.  Raises :class:`SolverInputError` on bad input (naming the
    point of a non-PSD mobility) and :class:`BlowUpError` if ``u`` stops being finite.  ``loop``:
    ``"compiled"`` runs the whole time loop in :func:`chart_time_loop`; ``"python"`` is the reference loop
    (one compiled stage per call), bitwise the same answer and the same errors.
    """
    if not isinstance(grid, Grid):
        raise SolverInputError(f"grid: expected a solvers.grid.uniform.Grid, found {type(grid).__name__}")
    settings = ChartHJSettings(grid.ndim, numerical_hamiltonian, derivative, integrator, cfl, nu, boundary, max_steps, max_dt)
    if callable(u0):
        with np.errstate(all="ignore"):
            u0 = grid.sample(u0)
    u0 = np.asarray(u0, dtype=np.float64)
    if u0.shape != grid.shape:
        raise SolverInputError(f"u0: expected cell-centre values of shape {grid.shape}, found {u0.shape}")
    u0 = require_finite("u0", u0)
    t0 = float(require_finite("t0", t0))
    times = require_times(t0, times)
    op = ChartDiscretisation.build(grid, settings, mobility, density)
    if loop not in CHART_LOOPS:
        raise SolverInputError(f"loop: expected one of {', '.join(CHART_LOOPS)}, found {loop!r}")
    run = _python_loop if loop == "python" else _compiled_loop
    u, steps = run(op, grid, settings, u0, t0, times)
    u.flags.writeable = False
    times = times.copy()
    times.flags.writeable = False
    return ChartHJSolution(grid, times, u, steps, settings)


#: the time loops of :func:`solve_chart_hj`: ``compiled`` (:func:`chart_time_loop`, the default) and
#: ``python`` (the reference it is compared against, bitwise)
CHART_LOOPS = ("compiled", "python")

#: status codes of :func:`chart_time_loop`
LOOP_DONE, LOOP_STAGE_BLEW_UP, LOOP_RATE_BLEW_UP, LOOP_STEP_LIMIT, LOOP_BAD_STEP = 0, 1, 2, 3, 4


def _python_loop(op: "ChartDiscretisation", grid: Grid, settings: ChartHJSettings, u0, t0, times):
    """The reference time loop: one compiled stage per call, the clock in Python (:class:`Clock`)."""
    kinds, values = settings.boundary.arrays()
    rk = tableau(settings.integrator)
    g = grid.ghost
    q = fill_ghosts(grid.pad(u0), g, settings.boundary)
    buffers = [grid.zeros(), grid.zeros()]
    clock = Clock(t0, times, settings.cfl, settings.max_steps)
    snapshots = [u0.copy() for _ in range(clock.initial_outputs)]
    rate = op.hyperbolic_rate(q)
    while not clock.done:
        dt_stable = min(op.stable_step(rate), settings.max_dt / settings.cfl)
        dt, lands = clock.next_step(dt_stable)
        prev = q
        for s, (alpha, beta) in enumerate(rk):
            out = buffers[s % 2]
            if not math.isfinite(op.stage(prev, q, out, alpha, beta, dt)):
                _raise_blowup(grid, out, clock.step + 1, clock.t + dt)
            fill_ghosts_compiled(out, g, kinds, values)
            prev = out
        old = q
        q = prev
        buffers = [b for b in (*buffers, old) if b is not q][:2]
        rate = op.hyperbolic_rate(q)
        if not math.isfinite(rate):
            _raise_blowup(grid, q, clock.step + 1, clock.t + dt)
        if clock.advance(dt, lands):
            snapshots.append(q[grid.interior].copy())
    return np.array(snapshots), clock.step


def _compiled_loop(op: "ChartDiscretisation", grid: Grid, settings: ChartHJSettings, u0, t0, times):
    """The whole time loop in :func:`chart_time_loop`; errors raised here with the reference's messages."""
    kinds, values = settings.boundary.arrays()
    clock = Clock(t0, times, settings.cfl, settings.max_steps)  # validates; its rules are applied compiled
    q = fill_ghosts(grid.pad(u0), grid.ghost, settings.boundary)
    work, spare = grid.zeros(), grid.zeros()
    snapshots = np.empty((len(clock.times), *grid.shape))
    snapshots[: clock.initial_outputs] = u0
    num, deriv = op.codes
    status, steps, t, dt, dt_stable, bad = chart_time_loop(
        q, work, spare, snapshots.reshape(len(clock.times), -1), clock.initial_outputs, clock.times, clock.t,
        clock.cfl, clock.max_steps, settings.max_dt, op.viscous_rate, tableau(settings.integrator),
        grid.ghost, kinds, values, grid.ndim, op.shape3, op.strides, op.dx, num, deriv, op.mob, settings.nu,
        op.kface, op.inv_w,
    )  # fmt: skip
    if status in (LOOP_STAGE_BLEW_UP, LOOP_RATE_BLEW_UP):
        _raise_blowup(grid, bad, steps + 1, t + dt)
    if status == LOOP_STEP_LIMIT:
        raise step_limit_error(clock.max_steps, clock.times[-1], t)
    if status == LOOP_BAD_STEP:
        raise SolverInputError(f"time step: expected a positive stable step, found {dt_stable!r}")
    return snapshots, steps


@numba.njit(cache=True)
def _write_interior(q, row, ndim, shape3, ghost):
    """``row[:] = q[interior]`` for the flat padded field ``q`` (C order)."""
    g1 = ghost if ndim == 2 else 0
    j = 0
    for i1 in range(g1, shape3[1] - g1):
        for i2 in range(ghost, shape3[2] - ghost):
            row[j] = q[i1 * shape3[2] + i2]
            j += 1


@numba.njit(cache=True)
def _rate(q, ndim, shape3, ghost, strides, dx, deriv, mob):
    """The hyperbolic rate by the kernel for the chart's dimension."""
    if ndim == 1:
        return chart_rate_kernel_1d(q, ghost, dx[0], deriv, mob[0])
    return chart_rate_kernel(q, ndim, shape3, ghost, strides, dx, deriv, mob)


@numba.njit(cache=True)
def chart_time_loop(
    q, work, spare, snapshots, first_output, times, t, cfl, max_steps, max_dt, viscous_rate, tab,
    ghost, kinds, values, ndim, shape3, strides, dx, num, deriv, mob, nu, kface, inv_w,
):  # fmt: skip
    """The time loop of :func:`solve_chart_hj` compiled whole: the reference's arithmetic step for step.

    ``q``, ``work``, ``spare``: padded fields (``q`` the initial state, ghosts filled); ``snapshots[n]``
    receives the interior of the state at ``times[n]`` for ``n >= first_output``; ``tab`` the Shu–Osher
    stages; the clock is :class:`solvers.time_stepping.Clock`'s (step ``cfl · min(1/(rate + viscous_rate),
    max_dt/cfl)`` shortened to land on each output time).  Allocation-free.  Returns ``(status, steps, t,
    dt, dt_stable, field)``: ``status`` one of ``LOOP_*``; for a blow-up, ``field`` holds the non-finite
    state (the stage output, or the new state whose rate was not finite) of step ``steps + 1`` of size
    ``dt`` from ``t``.
    """
    g = ghost
    rate = _rate(q.reshape(-1), ndim, shape3, g, strides, dx, deriv, mob)
    index = first_output
    steps = 0
    dt = 0.0
    n_stages = tab.shape[0]
    while index < times.size:
        total = rate + viscous_rate
        stable = math.inf if total == 0.0 else 1.0 / total
        dt_stable = min(stable, max_dt / cfl)
        if steps >= max_steps:
            return LOOP_STEP_LIMIT, steps, t, dt, dt_stable, q
        target = times[index]
        dt = cfl * dt_stable
        if not dt > 0:
            return LOOP_BAD_STEP, steps, t, dt, dt_stable, q
        remaining = target - t
        lands = dt >= remaining - 1e-12 * max(1.0, abs(target))
        if lands:
            dt = remaining
        prev = q
        for s in range(n_stages):
            out = work if s % 2 == 0 else spare
            if ndim == 1:
                stage_rate = chart_stage_kernel_1d(prev.reshape(-1), q.reshape(-1), out.reshape(-1), tab[s, 0], tab[s, 1],
                                                   dt, g, dx[0], num, deriv, mob[0], nu, kface[0, 0], inv_w)
            else:
                stage_rate = chart_stage_kernel(
                    prev.reshape(-1), q.reshape(-1), out.reshape(-1), tab[s, 0], tab[s, 1], dt,
                    ndim, shape3, g, strides, dx, num, deriv, mob, nu, kface, inv_w,
                )  # fmt: skip
            if not math.isfinite(stage_rate):
                return LOOP_STAGE_BLEW_UP, steps, t, dt, dt_stable, out
            fill_ghosts_compiled(out, g, kinds, values)
            prev = out
        # the reference's buffer roles: the new state is the last stage's output, the other stage
        # buffer and the old state are the next step's buffers (in that order)
        if n_stages % 2 == 1:
            q, work, spare = work, spare, q
        else:
            q, work, spare = spare, work, q
        rate = _rate(q.reshape(-1), ndim, shape3, g, strides, dx, deriv, mob)
        if not math.isfinite(rate):
            return LOOP_RATE_BLEW_UP, steps, t, dt, dt_stable, q
        steps += 1
        if lands:
            t = times[index]
            _write_interior(q.reshape(-1), snapshots[index], ndim, shape3, g)
            index += 1
        else:
            t += dt
    return LOOP_DONE, steps, t, dt, 0.0, q


def _raise_blowup(grid: Grid, q: np.ndarray, step: int, time: float):
    found = first_nonfinite(q[grid.interior])
    cell, value = found if found is not None else ((), math.nan)
    raise BlowUpError("u", step, time, cell, value)
