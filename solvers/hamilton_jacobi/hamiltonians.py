"""Hamiltonians ``H(x, p)`` and monotone numerical Hamiltonians ``Ĥ(x, p⁻, p⁺)`` (docs/theory.md §1, §5).

Built-in Hamiltonians (registry :data:`HAMILTONIANS`), with per-axis cell coefficients
``a_k(x) > 0`` (a diagonal inverse metric ``g^{kk}`` on a quotient chart, docs/theory.md §1):

``quadratic``  ``H = ½ Σ_k a_k(x) p_k²`` — the viscous HJ equation of local entropy,
               ``∂_γ u + ½ g^{ij} ∂_i u ∂_j u = ν Δ_g u``; ``|∂H/∂p_k| = a_k |p_k|``.
``eikonal``    ``H = sqrt(Σ_k (c_k(x) p_k)²)``, i.e. ``c(x)|p|`` when ``c_k = c`` on every axis;
               ``|∂H/∂p_k| ≤ c_k``.  (The coefficient array holds ``c_k``.)

A general Hamiltonian is a :class:`CompiledHamiltonian`: a Numba-compiled ``H(x, p)`` (``x``, ``p``
float64 arrays of length ``ndim``) and a bound ``|∂H/∂p_k| ≤ speed_bound[k]``.

Numerical Hamiltonians (registry :data:`NUMERICAL_HAMILTONIANS`) take the one-sided derivatives
``p_k⁻, p_k⁺`` of :mod:`solvers.hamilton_jacobi.derivatives`; all are monotone (non-decreasing in ``p_k⁻``,
non-increasing in ``p_k⁺``) and consistent (``Ĥ(p, p) = H(p)``):

``godunov``    ``Ĥ = ext_{p_1 ∈ I(p_1⁻, p_1⁺)} ... ext_{p_d} H(p)`` with ``ext = min`` on
               ``[p⁻, p⁺]`` when ``p⁻ ≤ p⁺`` and ``max`` on ``[p⁺, p⁻]`` otherwise.  For the
               convex ``½p²`` in one variable this is ``G(p⁻, p⁺) = ½ max(max(p⁻, 0)², min(p⁺, 0)²)``:
               * ``p⁻ ≤ p⁺`` (minimise ½p² over [p⁻, p⁺]): if ``p⁻ ≤ 0 ≤ p⁺`` the minimum is 0,
                 and indeed ``max(p⁻,0) = min(p⁺,0) = 0``; if ``0 < p⁻`` it is ``½p⁻²`` (formula:
                 ``max(p⁻², 0)``); if ``p⁺ < 0`` it is ``½p⁺²`` (formula: ``max(0, p⁺²)``).
               * ``p⁻ > p⁺`` (maximise over [p⁺, p⁻]): the maximum is ``½ max(p⁻², p⁺²)`` over the
                 endpoints; if ``p⁺ ≥ 0`` it is ``½p⁻²`` = formula; if ``p⁻ ≤ 0`` it is ``½p⁺²`` =
                 formula; if ``p⁺ < 0 < p⁻`` the formula gives ``½ max(p⁻², p⁺²)``.
               ``H = ½ Σ a_k p_k²`` is a sum of such terms (``a_k > 0`` a constant in the cell), so
               the nested ext separates: ``Ĥ = ½ Σ_k a_k G_k`` with ``G_k = max(max(p_k⁻,0)², min(p_k⁺,0)²)``.
               For the eikonal, ``H = φ(Σ c_k² p_k²)`` with ``φ = sqrt`` increasing, and ext commutes
               with an increasing function of a sum, so ``Ĥ = sqrt(Σ_k c_k² G_k)`` (Rouy–Tourin).
``lax_friedrichs``        ``Ĥ = H(x, p̄) - Σ_k α_k (p_k⁺ - p_k⁻)/2``, ``p̄ = (p⁻ + p⁺)/2``, with ``α_k``
               the maximum of ``|∂H/∂p_k|`` over the whole grid (computed from the current stage's
               derivatives; for a :class:`CompiledHamiltonian`, the user's ``speed_bound``).
``local_lax_friedrichs``  the same with ``α_k`` the maximum of ``|∂H/∂p_k|`` over the interval
               between ``p_k⁻`` and ``p_k⁺`` in the cell (Osher–Shu); built-in Hamiltonians only.

The compiled building blocks (:func:`godunov_axis`, :func:`hamiltonian_axis`, :func:`finish`,
:func:`axis_speed`) are composed per cell by the stage kernel of :mod:`solvers.hamilton_jacobi.solver`;
:func:`numerical_hamiltonian_reference` is the vectorised NumPy reference of the composition.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np

from solvers.errors import SolverInputError, require_choice

QUADRATIC, EIKONAL, CUSTOM = 0, 1, 2
GODUNOV, LAX_FRIEDRICHS, LOCAL_LAX_FRIEDRICHS = 0, 1, 2

#: built-in Hamiltonians, name -> kernel code
HAMILTONIANS = {"quadratic": QUADRATIC, "eikonal": EIKONAL}

#: numerical Hamiltonians, name -> kernel code
NUMERICAL_HAMILTONIANS = {"godunov": GODUNOV, "lax_friedrichs": LAX_FRIEDRICHS, "local_lax_friedrichs": LOCAL_LAX_FRIEDRICHS}

#: numerical Hamiltonians available for a user-supplied (possibly non-convex) Hamiltonian
CUSTOM_NUMERICAL_HAMILTONIANS = {"lax_friedrichs": LAX_FRIEDRICHS}


@numba.njit(cache=True)
def no_hamiltonian(x, p):
    """Placeholder passed to the kernels when a built-in Hamiltonian is used (never called)."""
    return 0.0


@dataclass(frozen=True)
class CompiledHamiltonian:
    """A user Hamiltonian ``H(x, p)``: a ``numba.njit`` function of two float64 arrays of length
    ``ndim`` (cell centre and gradient) returning a float, with ``|∂H/∂p_k| ≤ speed_bound[k]``
    for every ``x`` and every gradient the solution reaches.  The bound sets both the Lax–Friedrichs
    dissipation and the time step; a bound that is too small breaks monotonicity."""

    function: object
    speed_bound: tuple[float, ...] | float
    name: str = "custom"

    def __post_init__(self):
        if not isinstance(self.function, numba.core.registry.CPUDispatcher):
            raise SolverInputError(
                f"hamiltonian.function: expected a numba.njit-compiled function H(x, p), found {type(self.function).__name__}"
            )
        bound = np.atleast_1d(np.asarray(self.speed_bound, dtype=np.float64))
        if bound.ndim != 1 or not np.all(np.isfinite(bound)) or np.any(bound <= 0):
            raise SolverInputError(
                f"hamiltonian.speed_bound: expected finite numbers > 0 (one, or one per axis), found {self.speed_bound!r}"
            )
        object.__setattr__(self, "speed_bound", tuple(float(b) for b in bound))

    def bounds(self, ndim: int) -> np.ndarray:
        """The bound per axis, shape ``(ndim,)``."""
        b = np.asarray(self.speed_bound)
        if b.size == 1:
            return np.full(ndim, b[0])
        if b.size != ndim:
            raise SolverInputError(f"hamiltonian.speed_bound: expected 1 or {ndim} values, found {b.size}")
        return b.copy()


def hamiltonian_code(hamiltonian) -> int:
    """Kernel code of a Hamiltonian given by name or as a :class:`CompiledHamiltonian`."""
    if isinstance(hamiltonian, CompiledHamiltonian):
        return CUSTOM
    if not isinstance(hamiltonian, str):
        raise SolverInputError(
            f"hamiltonian: expected one of {', '.join(map(repr, sorted(HAMILTONIANS)))} or a CompiledHamiltonian, "
            f"found {type(hamiltonian).__name__}"
        )
    return HAMILTONIANS[require_choice("hamiltonian", hamiltonian, HAMILTONIANS)]


def numerical_hamiltonian_code(name: str, hamiltonian) -> int:
    """Kernel code of numerical Hamiltonian ``name``, checked against the Hamiltonian it discretises."""
    if isinstance(hamiltonian, CompiledHamiltonian):
        if name in NUMERICAL_HAMILTONIANS and name not in CUSTOM_NUMERICAL_HAMILTONIANS:
            raise SolverInputError(
                f"numerical_hamiltonian: {name!r} is not available for a CompiledHamiltonian (it needs the exact "
                f"structure of H); valid choices are {', '.join(map(repr, sorted(CUSTOM_NUMERICAL_HAMILTONIANS)))}"
            )
        return CUSTOM_NUMERICAL_HAMILTONIANS[require_choice("numerical_hamiltonian", name, CUSTOM_NUMERICAL_HAMILTONIANS)]
    return NUMERICAL_HAMILTONIANS[require_choice("numerical_hamiltonian", name, NUMERICAL_HAMILTONIANS)]


# -- compiled building blocks (scalars only: array arguments to non-inlined calls cost reference
#    counting in every cell, so the stage kernel composes these per axis) -----------------------
@numba.njit(cache=True)
def axis_speed(ham, c, pm, pp, bound):
    """Bound on ``|∂H/∂p_k|`` over the interval between ``pm`` and ``pp`` (coefficient ``c`` of the axis)."""
    if ham == QUADRATIC:
        return c * max(abs(pm), abs(pp))
    if ham == EIKONAL:
        return c
    return bound


@numba.njit(cache=True)
def godunov_axis(ham, c, pm, pp):
    """Axis ``k``'s term of the Godunov sum: ``a_k G_k`` (quadratic) or ``c_k² G_k`` (eikonal),
    ``G_k = max(max(p⁻, 0)², min(p⁺, 0)²)``."""
    a = max(pm, 0.0)
    b = min(pp, 0.0)
    g = max(a * a, b * b)
    return c * g if ham == QUADRATIC else c * c * g


@numba.njit(cache=True)
def hamiltonian_axis(ham, c, p):
    """Axis ``k``'s term of a built-in ``H``: ``a_k p_k²`` (quadratic) or ``(c_k p_k)²`` (eikonal)."""
    return c * p * p if ham == QUADRATIC else (c * p) ** 2


@numba.njit(cache=True)
def finish(ham, total):
    """``H`` (or Godunov's ``Ĥ``) from the sum of the axis terms: ``½ Σ`` or ``sqrt(Σ)``."""
    return 0.5 * total if ham == QUADRATIC else math.sqrt(total)


# -- NumPy reference ---------------------------------------------------------------------------
def numerical_hamiltonian_reference(ham: int, num: int, coef, pm, pp, *, x=None, bound=None, hfunc=None):
    """NumPy reference of the numerical Hamiltonian (as composed in the stage kernel) on whole arrays.

    ``coef``, ``pm``, ``pp`` are lists (one entry per axis) of arrays of the interior shape; ``x``
    the list of cell-centre coordinate arrays (custom H only).  Returns ``(Ĥ, speed)`` arrays.
    """
    ndim = len(pm)
    if ham == QUADRATIC:
        speeds = [c * np.maximum(np.abs(m), np.abs(p)) for c, m, p in zip(coef, pm, pp)]
    elif ham == EIKONAL:
        speeds = [np.array(c, dtype=np.float64) for c in coef]
    else:
        speeds = [np.full(pm[0].shape, bound[k]) for k in range(ndim)]
    speed = np.max(np.stack(speeds), axis=0)
    if num == GODUNOV:
        g = [np.maximum(np.maximum(m, 0.0) ** 2, np.minimum(p, 0.0) ** 2) for m, p in zip(pm, pp)]
        if ham == QUADRATIC:
            return 0.5 * sum(c * gk for c, gk in zip(coef, g)), speed
        return np.sqrt(sum(c * c * gk for c, gk in zip(coef, g))), speed
    pbar = [0.5 * (m + p) for m, p in zip(pm, pp)]
    if ham == QUADRATIC:
        h = 0.5 * sum(c * q * q for c, q in zip(coef, pbar))
    elif ham == EIKONAL:
        h = np.sqrt(sum((c * q) ** 2 for c, q in zip(coef, pbar)))
    else:
        h = np.empty(pm[0].shape)
        for index in np.ndindex(*h.shape):
            h[index] = hfunc(np.array([xk[index] for xk in x]), np.array([q[index] for q in pbar]))
    for k in range(ndim):
        alpha = speeds[k].max() if num == LAX_FRIEDRICHS and ham != CUSTOM else speeds[k]
        h = h - 0.5 * alpha * (pp[k] - pm[k])
    return h, speed
