"""The benchmark problems and their exact solutions (docs/theory.md §1).

All problems are periodic on the unit interval / square, from sine data

    u0(x) = c + A sin(2π x),    A = 0.5, c = 0.25        (first shock at t* = 1/(2πA) ≈ 0.318),

so every tool solves exactly the same problem and errors are measured against exact values:

* ``burgers_1d`` — ``u_t + (u²/2)_x = 0``.  Exact *cell averages* from the Hopf–Lax potential:
  after the Galilean shift ``u(x, t) = c + w(x − ct, t)`` the zero-mean odd solution ``w`` keeps its
  shock at ξ = 1/2 (mod 1), and for ξ ∈ [0, 1/2) the surviving characteristic foot is the root
  ``y ∈ [0, y_p]`` of ``y + tA sin(2πy) = ξ`` on the increasing branch (``y_p`` where
  ``1 + 2πAt cos(2πy_p) = 0``, or 1/2 before t*), found by bisection to round-off.  The potential
  ``φ(ξ) = −A cos(2πy)/(2π) + (ξ − y)²/(2t)`` (the Hopf–Lax value, continuous across the shock) gives
  the cell average ``c + (φ(ξ_{i+1/2}) − φ(ξ_{i−1/2}))/dx`` exactly (a test checks it against
  :func:`solvers.exact.hopf_lax`).  Cheap (vectorised bisection) at 10⁶ cells.
* ``burgers_2d`` — ``u_t + (u²/2)_x + (u²/2)_y = 0`` from ``u0 = c + A sin(2π(x + y))``: ``u = V(x + y, 2t)``
  with V the 1-D solution; cell averages by 4-point Gauss–Legendre in x of the exact y-averages.
* ``viscous_1d`` — ``u_t + (u²/2)_x = ν u_xx`` (ν = 0.002, shock width ~ 4ν): cell averages from
  the Hopf–Cole potential (:func:`solvers.exact.viscous_hj` of the zero-mean potential, Galilean shift).
* ``hj_1d`` / ``hj_2d`` — ``φ_t + ½|∇φ|² = 0`` from the potential of the 1-D data,
  ``φ0 = −A cos(2πx)/(2π)`` (2-D: the sum of that in x and in y; separable, so the exact
  solution is the sum of two 1-D Hopf–Lax values); point values at cell centres (the HJ solver
  is a finite-difference scheme on centres).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from solvers.grid import Grid

A = 0.5
C = 0.25
NU = 0.002
SHOCK_TIME = 1.0 / (2.0 * math.pi * A)


@dataclass(frozen=True)
class Problem:
    """A benchmark problem: its equation (``kind``), dimension and the times used by the studies.

    ``t_accuracy``: the end time of the accuracy study (from t = 0).  ``t_start``: the start of
    the throughput runs (exact data, past the shock where there is one).
    """

    name: str
    kind: str  # "burgers", "viscous_burgers", "hj"
    ndim: int
    t_accuracy: float
    t_start: float
    nu: float = 0.0

    def grid(self, n: int) -> Grid:
        """The periodic grid with ``n`` cells per axis."""
        return Grid.line(n) if self.ndim == 1 else Grid((0.0,) * self.ndim, (1.0,) * self.ndim, (n,) * self.ndim)

    def exact(self, grid: Grid, t: float) -> np.ndarray:
        """Exact cell averages (Burgers) or centre values (HJ) at time ``t`` on ``grid``."""
        if self.kind == "burgers" and self.ndim == 1:
            return burgers_cell_averages(grid, t)
        if self.kind == "burgers" and self.ndim == 2:
            return burgers_2d_cell_averages(grid, t)
        if self.kind == "viscous_burgers":
            return viscous_cell_averages(grid, t, self.nu)
        if self.kind == "hj":
            return hj_values(grid, t)
        raise ValueError(f"kind: expected 'burgers', 'viscous_burgers' or 'hj', found {self.kind!r}")

    def max_speed(self) -> float:
        """Bound of the characteristic speed (|u| or |∇φ| per axis): c + A for every problem."""
        return C + A if self.kind != "hj" else A


PROBLEMS = {
    "burgers_1d": Problem("burgers_1d", "burgers", 1, t_accuracy=0.5, t_start=0.4),
    "burgers_2d": Problem("burgers_2d", "burgers", 2, t_accuracy=0.25, t_start=0.2),
    "viscous_1d": Problem("viscous_1d", "viscous_burgers", 1, t_accuracy=0.5, t_start=0.4, nu=NU),
    "hj_1d": Problem("hj_1d", "hj", 1, t_accuracy=0.5, t_start=0.4),
    "hj_2d": Problem("hj_2d", "hj", 2, t_accuracy=0.5, t_start=0.4),
}


# -- exact solutions --------------------------------------------------------------------------------------------------
def _foot(xi: np.ndarray, t: float) -> np.ndarray:
    """The surviving characteristic foot y of the zero-mean solution at ξ (any real; odd and 1-periodic)."""
    xi = np.asarray(xi, dtype=np.float64)
    s = xi - np.round(xi)  # in [-1/2, 1/2]
    target = np.abs(s)
    k = 2.0 * math.pi * A * t
    y_hi = math.acos(-1.0 / k) / (2.0 * math.pi) if k > 1.0 else 0.5
    lo = np.zeros_like(target)
    hi = np.full_like(target, y_hi)
    for _ in range(64):  # bisection to round-off (the map is increasing on [0, y_hi])
        mid = 0.5 * (lo + hi)
        below = mid + t * A * np.sin(2.0 * math.pi * mid) < target
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    y = 0.5 * (lo + hi)
    return np.sign(s) * y + (xi - s)  # back to the period of ξ


def burgers_potential(x, t: float) -> np.ndarray:
    """Hopf–Lax potential φ(x, t) of the zero-mean solution w (so that w = φ_x), at ξ = x (no shift)."""
    x = np.asarray(x, dtype=np.float64)
    if t == 0.0:
        return -A * np.cos(2.0 * math.pi * x) / (2.0 * math.pi)
    y = _foot(x, t)
    return -A * np.cos(2.0 * math.pi * y) / (2.0 * math.pi) + (x - y) ** 2 / (2.0 * t)


def burgers_point_values(x, t: float) -> np.ndarray:
    """u(x, t) of the 1-D problem (at the shock: the right state)."""
    xi = np.asarray(x, dtype=np.float64) - C * t
    if t == 0.0:
        return C + A * np.sin(2.0 * math.pi * xi)
    return C + A * np.sin(2.0 * math.pi * _foot(xi, t))


def burgers_cell_averages(grid: Grid, t: float) -> np.ndarray:
    """Exact cell averages of the 1-D problem on ``grid`` (one axis) at ``t``."""
    lo, dx, n = grid.lower[0], grid.dx[0], grid.cells[0]
    faces = lo + dx * np.arange(n + 1) - C * t
    phi = burgers_potential(faces, t)
    return C + np.diff(phi) / dx


def burgers_2d_cell_averages(grid: Grid, t: float) -> np.ndarray:
    """Exact cell averages of the 2-D problem: ``u = V(x + y, 2t)``; Gauss–Legendre (4 points) in x."""
    (x0, y0), (dx, dy), (nx, ny) = grid.lower, grid.dx, grid.cells
    nodes, weights = np.polynomial.legendre.leggauss(4)
    y_faces = y0 + dy * np.arange(ny + 1)
    out = np.zeros((nx, ny))
    for node, weight in zip(nodes, weights):
        x = x0 + dx * (np.arange(nx) + 0.5 + 0.5 * node)
        s = x[:, None] + y_faces[None, :] - C * 2.0 * t
        phi = burgers_potential(s, 2.0 * t)
        out += 0.5 * weight * (C + np.diff(phi, axis=1) / dy)
    return out


def viscous_cell_averages(grid: Grid, t: float, nu: float) -> np.ndarray:
    """Exact cell averages of viscous Burgers (Hopf–Cole potential of the zero-mean data, Galilean shift)."""
    from solvers.exact import viscous_hj

    lo, dx, n = grid.lower[0], grid.dx[0], grid.cells[0]
    faces = lo + dx * np.arange(n + 1) - C * t
    psi0 = lambda y: -A * np.cos(2.0 * math.pi * y) / (2.0 * math.pi)  # noqa: E731
    phi = psi0(faces) if t == 0.0 else viscous_hj(psi0, faces, t, nu, period=1.0, tol=1e-12)
    return C + np.diff(phi) / dx


def hj_values(grid: Grid, t: float) -> np.ndarray:
    """Exact centre values of ``φ_t + ½|∇φ|² = 0`` from ``Σ_k −A cos(2πx_k)/(2π)`` (separable)."""
    values = [burgers_potential(grid.lower[k] + grid.dx[k] * (np.arange(grid.cells[k]) + 0.5), t)
              for k in range(grid.ndim)]
    if grid.ndim == 1:
        return values[0]
    return values[0][:, None] + values[1][None, :]


def initial_data(problem: Problem, grid: Grid, t: float = 0.0) -> np.ndarray:
    """The data every tool starts from: exact cell averages (centre values for HJ) at ``t``."""
    return problem.exact(grid, t)


def l1_error(grid: Grid, numerical: np.ndarray, exact: np.ndarray) -> float:
    """Discrete L1 norm of the error, ``Σ |u_i − e_i| Π dx_k`` (the unit box has measure 1)."""
    return float(np.sum(np.abs(np.asarray(numerical) - exact)) * math.prod(grid.dx))
