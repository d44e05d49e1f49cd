"""Viscous Hamilton–Jacobi equations on uniform grids in 1, 2 and 3 dimensions (docs/theory.md §1, §5).

Solves

    u_t + H(x, ∇u) = ν (1/w(x)) Σ_k ∂_k ( w(x) D_k(x) ∂_k u ),        u(·, t0) = u0,

the viscous HJ equation of local entropy, ``∂_γ u + ½ g^{ij} ∂_i u ∂_j u = ν Δ_g u`` (docs/theory.md §1),
when ``H = ½ Σ a_k p_k²`` with ``a_k = g^{kk}`` and, for a diagonal metric, ``w = sqrt|g|`` and
``D_k = g^{kk}`` (then the right side is ``ν Δ_g u``, the Laplace–Beltrami operator).  In flat
space (``a = D = w = 1``) ν = 0 gives the Hopf–Lax formula, ν > 0 the Hopf–Cole solution.

Discretisation (method of lines, finite differences on the cell-centre values ``u_i``):

* ``H`` by a monotone numerical Hamiltonian ``Ĥ(x, p⁻, p⁺)`` (:mod:`solvers.hamilton_jacobi.hamiltonians`) of
  one-sided derivatives (:mod:`solvers.hamilton_jacobi.derivatives`: first order, ENO2, WENO5);
* the viscous term centred and conservative: the face coefficient ``K_{i+1/2} = ½(wD_i + wD_{i+1})``
  and ``(ν/w_i) Σ_k (K_{i+1/2}(u_{i+1} - u_i) - K_{i-1/2}(u_i - u_{i-1})) / dx_k²``;
* Shu–Osher SSP Runge–Kutta (:mod:`solvers.time_stepping`) with the step
  ``cfl / (Σ_k max|∂H/∂p_k| / dx_k + 2 ν max(K/w) Σ_k 1/dx_k²)`` — the hyperbolic and parabolic
  bounds combined harmonically.  With first-order derivatives, a monotone ``Ĥ``, forward Euler (or
  any SSP method) and ``cfl ≤ 1`` the scheme is monotone: it satisfies the comparison principle
  and creates no new extrema.

The hyperbolic bound is evaluated on the state at the start of every step (a separate pass after
the last stage: the fused stage kernel only sees its input).

Fast path: for a built-in Hamiltonian in 1-D, 2-D or 3-D (any derivative, numerical Hamiltonian,
integrator, boundary, coefficients and ν), :meth:`HJDiscretisation.step` runs a kernel of
:mod:`solvers.hamilton_jacobi.fast_kernels` specialised at compile time, with direct indexing and the next
step's speed bound computed inside the last stage; it gives bitwise the result of the general
kernel.  ``fast_path=False`` forces the general kernel; :attr:`HJSolution.kernel` says which ran.

One fused Numba kernel, :func:`stage_kernel`, evaluates a whole Runge–Kutta stage on the
flattened padded field for any dimension; :meth:`HJDiscretisation.stage_reference` is its NumPy
reference.  :func:`step_kernel` runs all stages of a step with their ghost fills in one compiled
call (the driver's per-call overhead would otherwise dominate on small 1-D grids).  :func:`solve_hj` is the driver; :func:`centred_gradient` gives ``p = ∇u`` for a Burgers
solve (docs/theory.md §1: ``p = ∇u`` obeys Burgers' equation).

Boundary conditions are ghost-cell fills (:mod:`solvers.hamilton_jacobi.boundary`: the kinds of
:mod:`solvers.grid.boundary` plus ``extrapolate``); ``symmetric`` (even mirror, homogeneous Neumann) is
the natural no-flux condition for a potential and the default.
"""

from __future__ import annotations

import math
import types
from dataclasses import dataclass
from typing import Callable

import numba
import numpy as np

from solvers.grid import BoundaryConditions
from solvers.errors import (
    BlowUpError,
    SolverInputError,
    first_nonfinite,
    require_cfl,
    require_finite,
    require_positive,
    require_times,
)
from solvers.hamilton_jacobi import fast_kernels as hj_fast_kernels
from solvers.grid import Grid
from solvers.hamilton_jacobi.boundary import HJBoundary, fill_ghosts_flat, fill_hj_ghosts
from solvers.hamilton_jacobi.hamiltonians import (
    CUSTOM,
    GODUNOV,
    LAX_FRIEDRICHS,
    CompiledHamiltonian,
    axis_speed,
    finish,
    godunov_axis,
    hamiltonian_axis,
    hamiltonian_code,
    no_hamiltonian,
    numerical_hamiltonian_code,
    numerical_hamiltonian_reference,
)
from solvers.hamilton_jacobi.derivatives import derivative_code, one_sided, one_sided_reference
from solvers.time_stepping import Clock, advective_bound, combine_bounds, diffusive_bound, tableau


# -- settings ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class HJSettings:
    """Everything that chooses the scheme, validated in one place."""

    ndim: int
    hamiltonian: str | CompiledHamiltonian = "quadratic"
    numerical_hamiltonian: str = "godunov"
    derivative: str = "eno2"
    integrator: str = "ssprk3"
    cfl: float = 0.5
    nu: float = 0.0
    boundary: HJBoundary | BoundaryConditions | str = "symmetric"
    max_steps: int = 1_000_000
    max_dt: float = math.inf
    fast_path: bool = True  # use the specialised kernel of solvers.hamilton_jacobi.fast_kernels where it applies

    def __post_init__(self):
        hamiltonian_code(self.hamiltonian)
        numerical_hamiltonian_code(self.numerical_hamiltonian, self.hamiltonian)
        derivative_code(self.derivative)
        tableau(self.integrator)
        object.__setattr__(self, "cfl", require_cfl(self.cfl))
        object.__setattr__(self, "nu", require_positive("nu", self.nu, allow_zero=True))
        if isinstance(self.hamiltonian, CompiledHamiltonian):
            self.hamiltonian.bounds(self.ndim)
        object.__setattr__(self, "boundary", HJBoundary.parse(self.boundary, self.ndim))
        if isinstance(self.max_steps, bool) or not float(self.max_steps).is_integer() or int(self.max_steps) < 1:
            raise SolverInputError(f"max_steps: expected a whole number >= 1, found {self.max_steps!r}")
        object.__setattr__(self, "max_steps", int(self.max_steps))
        if not (float(self.max_dt) > 0):
            raise SolverInputError(f"max_dt: expected a number > 0 (or inf), found {self.max_dt!r}")
        object.__setattr__(self, "max_dt", float(self.max_dt))
        if not isinstance(self.fast_path, (bool, np.bool_)):
            raise SolverInputError(f"fast_path: expected True or False, found {self.fast_path!r}")
        object.__setattr__(self, "fast_path", bool(self.fast_path))

    def fast_path_applies(self) -> bool:
        """The specialised kernel serves built-in Hamiltonians in 1-D, 2-D and 3-D (and is not switched off)."""
        return self.fast_path and self.ndim in (1, 2, 3) and not isinstance(self.hamiltonian, CompiledHamiltonian)


# -- the fused kernels -------------------------------------------------------------------------
# The loops are written out in the kernels: a call to a (non-inlined) helper taking arrays costs
# reference counting in every cell (measured: ~100 ns per cell against ~5 ns for the whole work).
#
# A user Hamiltonian is reached through the global name ``custom_hamiltonian``, not an argument:
# a function-typed argument makes Numba's on-disk cache miss in every new process (~5 s of
# compilation per solve).  The module-level kernels (built-in Hamiltonians) are cached;
# :func:`kernels_for` recompiles the same code with ``custom_hamiltonian`` bound to the user's
# function (once per function and process, not cacheable).
custom_hamiltonian = no_hamiltonian


@numba.njit(cache=True)
def speed_kernel(q, ndim, shape3, ghost, strides, dx, ham, deriv, coef, bound, alpha):
    """Largest ``|∂H/∂p_k|`` bound over the interior of the flattened padded field ``q``.

    Also writes the per-axis maxima to ``alpha`` (the global Lax–Friedrichs coefficients).
    Returns NaN if ``q`` has a non-finite interior value.
    """
    g0 = ghost if ndim == 3 else 0
    g1 = ghost if ndim >= 2 else 0
    for k in range(ndim):
        alpha[k] = bound[k] if ham == CUSTOM else 0.0
    finite = True
    for i0 in range(g0, shape3[0] - g0):
        for i1 in range(g1, shape3[1] - g1):
            for i2 in range(ghost, shape3[2] - ghost):
                idx = (i0 * shape3[1] + i1) * shape3[2] + i2
                if not math.isfinite(q[idx]):
                    finite = False
                if ham == CUSTOM:
                    continue
                for k in range(ndim):
                    m, p = one_sided(q, idx, strides[k], dx[k], deriv)
                    s = axis_speed(ham, coef[k, idx], m, p, 0.0)
                    if s > alpha[k]:
                        alpha[k] = s
    speed = 0.0
    for k in range(ndim):
        speed = max(speed, alpha[k])
    return speed if finite else math.nan


@numba.njit(cache=True)
def stage_kernel(
    q_prev, q0, out, rk_alpha, rk_beta, dt,
    ndim, shape3, ghost, strides, dx, lower,
    ham, num, deriv, coef, bound,
    nu, kface, inv_w,
    pm, pp, pbar, x, alpha,
):  # fmt: skip
    """One Shu–Osher stage ``out = rk_alpha q0 + rk_beta (q_prev + dt L(q_prev))`` on the interior.

    ``L(q) = -Ĥ(x, p⁻, p⁺) + (ν/w) Σ_k δ_k(K δ_k q)/dx_k²``.  All fields are flattened padded
    arrays; ``shape3`` is the padded shape left-filled with ones to three axes, ``strides[k]``
    the flat stride of physical axis ``k``.  ``pm, pp, pbar, x, alpha`` are scratch of length
    ``ndim`` (no allocation here).  Ghost cells of ``out`` are left for the boundary fill.
    Returns the largest ``|∂H/∂p|`` bound seen in ``q_prev`` (NaN if ``out`` is not finite).
    """
    if num == LAX_FRIEDRICHS:  # global coefficients: a first pass over the grid
        speed_kernel(q_prev, ndim, shape3, ghost, strides, dx, ham, deriv, coef, bound, alpha)
    g0 = ghost if ndim == 3 else 0
    g1 = ghost if ndim >= 2 else 0
    speed = 0.0
    finite = True
    for i0 in range(g0, shape3[0] - g0):
        for i1 in range(g1, shape3[1] - g1):
            for i2 in range(ghost, shape3[2] - ghost):
                idx = (i0 * shape3[1] + i1) * shape3[2] + i2
                for k in range(ndim):
                    m, p = one_sided(q_prev, idx, strides[k], dx[k], deriv)
                    pm[k] = m
                    pp[k] = p
                # numerical Hamiltonian (solvers.hamilton_jacobi.hamiltonians)
                if num == GODUNOV:
                    total = 0.0
                    for k in range(ndim):
                        c = coef[k, idx]
                        total += godunov_axis(ham, c, pm[k], pp[k])
                        speed = max(speed, axis_speed(ham, c, pm[k], pp[k], 0.0))
                    h = finish(ham, total)
                else:
                    if ham == CUSTOM:
                        for k in range(ndim):
                            a = 3 - ndim + k
                            pos = i0 if a == 0 else (i1 if a == 1 else i2)
                            x[k] = lower[k] + (pos - ghost + 0.5) * dx[k]
                            pbar[k] = 0.5 * (pm[k] + pp[k])
                        h = custom_hamiltonian(x, pbar)
                    else:
                        total = 0.0
                        for k in range(ndim):
                            total += hamiltonian_axis(ham, coef[k, idx], 0.5 * (pm[k] + pp[k]))
                        h = finish(ham, total)
                    for k in range(ndim):
                        local = axis_speed(ham, coef[k, idx], pm[k], pp[k], bound[k])
                        speed = max(speed, local)
                        h -= 0.5 * (alpha[k] if num == LAX_FRIEDRICHS else local) * (pp[k] - pm[k])
                rhs = -h
                if nu > 0.0:
                    visc = 0.0
                    qc = q_prev[idx]
                    for k in range(ndim):
                        st = strides[k]
                        visc += (kface[k, idx] * (q_prev[idx + st] - qc) - kface[k, idx - st] * (qc - q_prev[idx - st])) / (
                            dx[k] * dx[k]
                        )
                    rhs += nu * inv_w[idx] * visc
                value = rk_alpha * q0[idx] + rk_beta * (q_prev[idx] + dt * rhs)
                out[idx] = value
                if not math.isfinite(value):
                    finite = False
    return speed if finite else math.nan


@numba.njit(cache=True)
def step_kernel(
    q, buffer0, buffer1, rk, dt, bc_kinds, bc_values, bc_extrapolate,
    ndim, shape3, ghost, strides, dx, lower,
    ham, num, deriv, coef, bound,
    nu, kface, inv_w,
    pm, pp, pbar, x, alpha,
):  # fmt: skip
    """One whole Runge–Kutta step from ``q``: every stage (:func:`stage_kernel`) and ghost fill.

    Stage ``s`` writes to ``buffer0`` (even ``s``) or ``buffer1`` (odd ``s``), so ``q`` (the
    step's initial state) is never overwritten.  Returns ``(speed, where, failed_stage)``: the
    ``|∂H/∂p|`` bound of the new state (for the next step), which buffer holds it (0 or 1), and
    the stage that produced a non-finite value (-1 if none; then ``where`` holds that stage).
    One compiled call per step: the Python driver's per-call dispatch would otherwise dominate
    on small grids.
    """
    prev = q
    where = 0
    for s in range(rk.shape[0]):
        where = s % 2
        out = buffer0 if where == 0 else buffer1
        speed = stage_kernel(
            prev, q, out, rk[s, 0], rk[s, 1], dt, ndim, shape3, ghost, strides, dx, lower,
            ham, num, deriv, coef, bound, nu, kface, inv_w, pm, pp, pbar, x, alpha,
        )  # fmt: skip
        if not math.isfinite(speed):
            return math.nan, where, s
        fill_ghosts_flat(out, ndim, shape3, ghost, bc_kinds, bc_values, bc_extrapolate)
        prev = out
    speed = speed_kernel(prev, ndim, shape3, ghost, strides, dx, ham, deriv, coef, bound, alpha)
    return speed, where, -1


_CUSTOM_KERNELS: dict = {}


def kernels_for(hamiltonian) -> tuple:
    """``(stage_kernel, speed_kernel, step_kernel)`` for a built-in name or a :class:`CompiledHamiltonian`.

    For a compiled Hamiltonian the three kernels are rebuilt from the same source with the global
    ``custom_hamiltonian`` bound to its function (so the code is written once).
    """
    if not isinstance(hamiltonian, CompiledHamiltonian):
        return stage_kernel, speed_kernel, step_kernel
    function = hamiltonian.function
    if function not in _CUSTOM_KERNELS:
        names = dict(globals())
        names["custom_hamiltonian"] = function

        def rebuild(kernel):
            py = kernel.py_func
            clone = types.FunctionType(py.__code__, names, py.__name__, py.__defaults__, py.__closure__)
            return numba.njit(clone)

        for kernel in (speed_kernel, stage_kernel, step_kernel):  # later ones call the earlier by name
            names[kernel.py_func.__name__] = rebuild(kernel)
        _CUSTOM_KERNELS[function] = (names["stage_kernel"], names["speed_kernel"], names["step_kernel"])
    return _CUSTOM_KERNELS[function]


# -- coefficients ------------------------------------------------------------------------------
def _coefficient(grid: Grid, name: str, value, default: float, *, positive: bool) -> np.ndarray:
    """A coefficient as an array ``(ndim, *grid.shape)`` of interior values, validated."""
    shape = grid.shape
    if value is None:
        values = np.full((grid.ndim, *shape), default)
    elif callable(value):
        sampled = grid.sample(value)
        values = np.broadcast_to(sampled, (grid.ndim, *shape)).copy()
    else:
        arr = np.asarray(value, dtype=np.float64)
        if arr.ndim == 0:
            values = np.full((grid.ndim, *shape), float(arr))
        elif arr.shape == shape:
            values = np.broadcast_to(arr, (grid.ndim, *shape)).copy()
        elif arr.shape == (grid.ndim, *shape):
            values = arr.copy()
        else:
            raise SolverInputError(
                f"{name}: expected a number, a callable of the coordinates, or an array of shape {shape} "
                f"(all axes) or {(grid.ndim, *shape)} (one per axis), found shape {arr.shape}"
            )
    values = require_finite(name, values)
    bad = values <= 0 if positive else values < 0
    if bad.any():
        index = tuple(int(i) for i in np.argwhere(bad)[0])
        expected = "> 0" if positive else ">= 0"
        raise SolverInputError(f"{name}: expected values {expected}, found {values[index]!r} at index {index}")
    return values


def _pad_coefficient(grid: Grid, interior: np.ndarray, bc: BoundaryConditions) -> np.ndarray:
    """Extend an interior coefficient to the ghost cells: periodic wrap or nearest value."""
    modes = ["wrap" if periodic else "edge" for periodic in bc.periodic]
    out = interior
    for axis, mode in enumerate(modes):
        width = [(0, 0)] * grid.ndim
        width[axis] = (grid.ghost, grid.ghost)
        out = np.pad(out, width, mode=mode)
    return np.ascontiguousarray(out)


# -- the discretisation --------------------------------------------------------------------------
@dataclass(frozen=True)
class HJDiscretisation:
    """The unpacked arrays of one HJ problem on one grid, ready for the compiled kernels."""

    grid: Grid
    settings: HJSettings
    coef: np.ndarray  # (ndim, N) flat padded a_k (quadratic) or c_k (eikonal)
    kface: np.ndarray  # (ndim, N) flat padded face coefficient K_{i+1/2} along axis k
    inv_w: np.ndarray  # (N,) flat padded 1/w
    bound: np.ndarray  # (ndim,) speed bound of a custom H (zeros otherwise)
    codes: tuple[int, int, int]  # (hamiltonian, numerical hamiltonian, derivative)
    shape3: np.ndarray
    strides: np.ndarray
    dx: np.ndarray
    lower: np.ndarray
    diffusive_step: float  # stable step of the viscous term alone (inf if nu = 0)
    bc_kinds: np.ndarray  # (ndim, 2) boundary codes of solvers.grid.boundary
    bc_values: np.ndarray  # (ndim, 2) boundary values
    bc_extrapolate: np.ndarray  # (ndim, 2) 1 where the side extrapolates linearly
    kernel: str = "general"  # "fast" (solvers.hamilton_jacobi.fast_kernels) or "general" (step_kernel)
    coef_varies: bool = True  # a_k differs between cells on some axis (the fast kernel reads it per cell)

    @classmethod
    def build(cls, grid: Grid, settings: HJSettings, *, a=None, D=None, density=None) -> "HJDiscretisation":
        if not isinstance(grid, Grid):
            raise SolverInputError(f"grid: expected a solvers.grid.uniform.Grid, found {type(grid).__name__}")
        if settings.ndim != grid.ndim:
            raise SolverInputError(f"settings.ndim: expected {grid.ndim} (the grid's), found {settings.ndim}")
        ham = hamiltonian_code(settings.hamiltonian)
        num = numerical_hamiltonian_code(settings.numerical_hamiltonian, settings.hamiltonian)
        deriv = derivative_code(settings.derivative, grid.ghost)
        if ham == CUSTOM and a is not None:
            raise SolverInputError("a: a CompiledHamiltonian carries its own x-dependence; pass a=None")
        bc = settings.boundary.conditions
        coef_i = _coefficient(grid, "a", a, 1.0, positive=True)
        d_i = _coefficient(grid, "D", D, 1.0, positive=False)
        w_i = _coefficient(grid, "density", density, 1.0, positive=True)[0]
        n = int(np.prod(grid.padded_shape))
        coef = np.stack([_pad_coefficient(grid, c, bc).reshape(n) for c in coef_i])
        w = _pad_coefficient(grid, w_i, bc)
        kface = np.zeros((grid.ndim, *grid.padded_shape))
        for k in range(grid.ndim):
            wd = w * _pad_coefficient(grid, d_i[k], bc)
            lo = [slice(None)] * grid.ndim
            hi = [slice(None)] * grid.ndim
            lo[k] = slice(0, -1)
            hi[k] = slice(1, None)
            kface[k][tuple(lo)] = 0.5 * (wd[tuple(lo)] + wd[tuple(hi)])
        kface = kface.reshape(grid.ndim, n)
        inv_w = (1.0 / w).reshape(n)
        if settings.nu > 0:
            d_eff = float(np.max(kface)) * float(np.max(inv_w))
            diffusive_step = diffusive_bound(settings.nu * d_eff, grid.dx)
        else:
            diffusive_step = math.inf
        bound = settings.hamiltonian.bounds(grid.ndim) if ham == CUSTOM else np.zeros(grid.ndim)
        shape3 = np.array((1,) * (3 - grid.ndim) + grid.padded_shape, dtype=np.int64)
        strides = np.array([int(np.prod(grid.padded_shape[k + 1 :])) for k in range(grid.ndim)], dtype=np.int64)
        return cls(
            grid, settings, coef, kface, inv_w, bound, (ham, num, deriv), shape3, strides,
            np.array(grid.dx), np.array(grid.lower), diffusive_step, *settings.boundary.arrays(),
            "fast" if settings.fast_path_applies() else "general", bool(np.any(coef != coef[:, :1])),
        )  # fmt: skip

    @property
    def hfunc(self):
        """The user's compiled ``H(x, p)`` (a placeholder for built-in Hamiltonians)."""
        h = self.settings.hamiltonian
        return h.function if isinstance(h, CompiledHamiltonian) else no_hamiltonian

    @property
    def kernels(self) -> tuple:
        """``(stage_kernel, speed_kernel, step_kernel)`` for this problem's Hamiltonian."""
        return kernels_for(self.settings.hamiltonian)

    def scratch(self) -> tuple[np.ndarray, ...]:
        """Per-solve scratch for the kernels: ``pm, pp, pbar, x, alpha``."""
        return tuple(np.zeros(self.grid.ndim) for _ in range(5))

    # -- compiled --------------------------------------------------------------------------
    def stage(self, q_prev, q0, out, alpha, beta, dt, scratch=None) -> float:
        """Fused stage on padded fields (C-contiguous, ``grid.padded_shape``); returns the max speed."""
        pm, pp, pbar, x, lf = self.scratch() if scratch is None else scratch
        ham, num, deriv = self.codes
        return self.kernels[0](
            q_prev.reshape(-1), q0.reshape(-1), out.reshape(-1), float(alpha), float(beta), float(dt),
            self.grid.ndim, self.shape3, self.grid.ghost, self.strides, self.dx, self.lower,
            ham, num, deriv, self.coef, self.bound,
            self.settings.nu, self.kface, self.inv_w,
            pm, pp, pbar, x, lf,
        )  # fmt: skip

    def step(self, q, buffers, rk, dt, scratch=None) -> tuple[float, int, int]:
        """A whole step from the padded field ``q`` into ``buffers[0]`` / ``buffers[1]``; returns
        ``(speed, buffer index, failed stage or -1)``, ``speed`` the bound on ``|∂H/∂p|`` of the new state.

        Runs the fast kernel (:mod:`solvers.hamilton_jacobi.fast_kernels`) where :attr:`kernel` is ``"fast"``, else
        :func:`step_kernel`.  ``scratch[4]`` carries the per-axis speed bounds of ``q`` from step to step
        (as :meth:`max_speed` and both kernels leave it); without ``scratch`` they are computed here.
        """
        if scratch is None:
            scratch = self.scratch()
            self.max_speed(q, scratch)
        pm, pp, pbar, x, lf = scratch
        ham, num, deriv = self.codes
        if self.kernel == "fast":
            return self.fast_kernel(
                q, buffers[0], buffers[1], rk, float(dt), self.bc_kinds, self.bc_values, self.bc_extrapolate,
                self.shape3, self.grid.ghost, self.dx, self._padded(self.coef), self.settings.nu,
                self._padded(self.kface), self.inv_w.reshape(self.grid.padded_shape), lf,
            )  # fmt: skip
        return self.kernels[2](
            q.reshape(-1), buffers[0].reshape(-1), buffers[1].reshape(-1), rk, float(dt), self.bc_kinds, self.bc_values, self.bc_extrapolate,
            self.grid.ndim, self.shape3, self.grid.ghost, self.strides, self.dx, self.lower,
            ham, num, deriv, self.coef, self.bound,
            self.settings.nu, self.kface, self.inv_w,
            pm, pp, pbar, x, lf,
        )  # fmt: skip

    @property
    def fast_kernel(self):
        """The compiled kernel of :mod:`solvers.hamilton_jacobi.fast_kernels` for this scheme (``kernel == "fast"`` only)."""
        ham, num, deriv = self.codes
        return hj_fast_kernels.step_kernel(self.grid.ndim, deriv, num, ham, self.coef_varies, self.settings.nu > 0)

    def _padded(self, field: np.ndarray) -> np.ndarray:
        """A ``(ndim, N)`` flat field as ``(ndim, *padded_shape)`` (a view)."""
        return field.reshape(self.grid.ndim, *self.grid.padded_shape)

    def max_speed(self, q, scratch=None) -> float:
        """Largest bound on ``|∂H/∂p_k|`` over the interior of the padded field ``q`` (NaN if not finite)."""
        lf = self.scratch()[4] if scratch is None else scratch[4]
        ham, _, deriv = self.codes
        return self.kernels[1](
            q.reshape(-1), self.grid.ndim, self.shape3, self.grid.ghost, self.strides, self.dx,
            ham, deriv, self.coef, self.bound, lf,
        )  # fmt: skip

    def stable_step(self, speed: float) -> float:
        """Stable step (before the CFL factor) for the hyperbolic speed bound ``speed``."""
        return combine_bounds(advective_bound(speed, self.grid.dx), self.diffusive_step)

    # -- NumPy reference -------------------------------------------------------------------
    def rhs_reference(self, q: np.ndarray) -> tuple[np.ndarray, float]:
        """NumPy reference of ``L(q)`` on the interior of the padded field ``q`` and the max speed."""
        g, grid = self.grid.ghost, self.grid
        ham, num, _ = self.codes
        inner = grid.interior
        pm, pp = [], []
        for k in range(grid.ndim):
            m, p = one_sided_reference(q, k, grid.dx[k], self.settings.derivative, g)
            pm.append(m)
            pp.append(p)
        coef = [c.reshape(grid.padded_shape)[inner] for c in self.coef]
        x = list(grid.mesh()) if ham == CUSTOM else None
        h, speed = numerical_hamiltonian_reference(ham, num, coef, pm, pp, x=x, bound=self.bound, hfunc=self.hfunc)
        rhs = -h
        if self.settings.nu > 0:
            visc = np.zeros(grid.shape)
            for k in range(grid.ndim):
                kf = self.kface[k].reshape(grid.padded_shape)

                def shift(field, m, k=k):
                    index = list(inner)
                    index[k] = slice(g + m, g + m + grid.cells[k])
                    return field[tuple(index)]

                visc += (shift(kf, 0) * (shift(q, 1) - shift(q, 0)) - shift(kf, -1) * (shift(q, 0) - shift(q, -1))) / grid.dx[
                    k
                ] ** 2
            rhs = rhs + self.settings.nu * self.inv_w.reshape(grid.padded_shape)[inner] * visc
        return rhs, float(np.max(speed))

    def stage_reference(self, q_prev, q0, alpha, beta, dt) -> tuple[np.ndarray, float]:
        """NumPy reference of :meth:`stage`: the new interior values and the max speed."""
        rhs, speed = self.rhs_reference(q_prev)
        inner = self.grid.interior
        return alpha * q0[inner] + beta * (q_prev[inner] + dt * rhs), speed


# -- result ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class HJSolution:
    """Snapshots ``u[n]`` (interior cell-centre values) at ``times[n]``, and how they were made."""

    grid: Grid
    times: np.ndarray
    u: np.ndarray
    steps: int
    settings: HJSettings
    kernel: str = "general"  # which step kernel ran: "fast" (solvers.hamilton_jacobi.fast_kernels) or "general"

    def gradient(self, index: int = -1) -> tuple[np.ndarray, ...]:
        """``p = ∇u`` of snapshot ``index`` by centred differences (see :func:`centred_gradient`)."""
        return centred_gradient(self.grid, self.u[index], self.settings.boundary)


def centred_gradient(grid: Grid, u, boundary="symmetric") -> tuple[np.ndarray, ...]:
    """``∂u/∂x_k ≈ (u_{i+1} - u_{i-1}) / (2 dx_k)`` on the interior, ghost cells from ``boundary``.

    Second order where ``u`` is smooth; at a kink of ``u`` (a shock of ``p``) it gives the mean of
    the one-sided slopes, i.e. the Burgers shock's midpoint value.
    """
    u = require_finite("u", u)
    if u.shape != grid.shape:
        raise SolverInputError(f"u: expected interior shape {grid.shape}, found {u.shape}")
    q = fill_hj_ghosts(grid.pad(u), grid.ghost, HJBoundary.parse(boundary, grid.ndim))
    g = grid.ghost
    out = []
    for k in range(grid.ndim):
        hi = list(grid.interior)
        lo = list(grid.interior)
        hi[k] = slice(g + 1, g + 1 + grid.cells[k])
        lo[k] = slice(g - 1, g - 1 + grid.cells[k])
        out.append((q[tuple(hi)] - q[tuple(lo)]) / (2.0 * grid.dx[k]))
    return tuple(out)


# -- driver ------------------------------------------------------------------------------------
def solve_hj(
    grid: Grid,
    u0: np.ndarray | Callable[..., np.ndarray],
    times,
    *,
    hamiltonian: str | CompiledHamiltonian = "quadratic",
    numerical_hamiltonian: str = "godunov",
    derivative: str = "eno2",
    integrator: str = "ssprk3",
    cfl: float = 0.5,
    nu: float = 0.0,
    a=None,
    D=None,
    density=None,
    boundary="symmetric",
    t0: float = 0.0,
    max_steps: int = 1_000_000,
    max_dt: float = math.inf,
    fast_path: bool = True,
) -> HJSolution:
    """Solve ``u_t + H(x, ∇u) = ν (1/w) div(w D ∇u)`` from ``u0`` at ``t0`` to each of ``times``.

    ``u0``: cell-centre values (array of ``grid.shape``) or a function of the coordinates.
    ``hamiltonian``: ``"quadratic"`` (``½ Σ a_k p_k²``), ``"eikonal"`` (``|(a_k p_k)_k|``, i.e. ``c|p|``
    with ``a = c``) or a :class:`~solvers.hamilton_jacobi.hamiltonians.CompiledHamiltonian`.
    ``boundary``: a kind of :mod:`solvers.grid.boundary` (``symmetric`` = homogeneous Neumann, the default;
    ``periodic``, ``outflow``, ``dirichlet``, ``reflecting``) or ``extrapolate`` (linear, for walls
    that characteristics enter), for all sides, per axis or per side (:class:`~solvers.hamilton_jacobi.boundary.HJBoundary`).
    ``a``, ``D``, ``density``: coefficients ``a_k(x) > 0``, ``D_k(x) >= 0``, ``w(x) > 0``, each a number,
    a function of the coordinates, an array of ``grid.shape`` (all axes) or ``(ndim, *grid.shape)``
    (``density``: one field); default 1.  ``max_dt`` caps the step (after the CFL factor).
    ``fast_path``: use the specialised kernel (built-in Hamiltonians, 1-D to 3-D; bitwise the same
    result) where it applies; ``False`` forces the general kernel.  ``HJSolution.kernel`` says which ran.
    Raises :class:`SolverInputError` on bad input and :class:`BlowUpError` if ``u`` stops being finite.
    """
    if not isinstance(grid, Grid):
        raise SolverInputError(f"grid: expected a solvers.grid.uniform.Grid, found {type(grid).__name__}")
    settings = HJSettings(
        grid.ndim, hamiltonian, numerical_hamiltonian, derivative, integrator, cfl, nu, boundary, max_steps, max_dt,
        fast_path,
    )
    if callable(u0):
        u0 = grid.sample(u0)
    u0 = np.asarray(u0, dtype=np.float64)
    if u0.shape != grid.shape:
        raise SolverInputError(f"u0: expected cell-centre values of shape {grid.shape}, found {u0.shape}")
    u0 = require_finite("u0", u0)
    t0 = float(require_finite("t0", t0))
    times = require_times(t0, times)
    op = HJDiscretisation.build(grid, settings, a=a, D=D, density=density)
    rk = np.ascontiguousarray(tableau(settings.integrator))

    q = fill_hj_ghosts(grid.pad(u0), grid.ghost, settings.boundary)
    buffers = [grid.zeros(), grid.zeros()]  # stage outputs; q (the step's start) is never overwritten
    scratch = op.scratch()
    clock = Clock(t0, times, settings.cfl, settings.max_steps)
    snapshots = [u0.copy() for _ in range(clock.initial_outputs)]
    speed = op.max_speed(q, scratch)
    while not clock.done:
        dt_stable = min(op.stable_step(speed), settings.max_dt / settings.cfl)
        dt, lands = clock.next_step(dt_stable)
        speed, where, failed = op.step(q, buffers, rk, dt, scratch)
        new = buffers[where]
        if failed >= 0 or not math.isfinite(speed):
            _raise_blowup(grid, new, clock.step + 1, clock.t + dt, speed)
        buffers[where] = q
        q = new
        if clock.advance(dt, lands):
            snapshots.append(q[grid.interior].copy())
    u = np.array(snapshots)
    u.flags.writeable = False
    times = times.copy()
    times.flags.writeable = False
    return HJSolution(grid, times, u, clock.step, settings, op.kernel)


def _raise_blowup(grid: Grid, q: np.ndarray, step: int, time: float, speed: float):
    found = first_nonfinite(q[grid.interior])
    if found is None:  # finite values whose gradients overflow the speed bound
        raise BlowUpError("the bound on |dH/dp|", step, time, (), speed)
    raise BlowUpError("u", step, time, *found)
