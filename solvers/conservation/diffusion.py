"""The viscous term div(nu D(x) grad q) of a conservation law: face coefficients, explicit bound, implicit steps.

Discretisation (cell-centred, conservative; docs/theory.md §1): along axis k the diffusive flux
through the face between cells i and i+1 is ``-nu D_{k,i+1/2} (q_{i+1} - q_i) / dx_k`` with the
face diffusivity the arithmetic mean ``D_{k,i+1/2} = (D_i + D_{i+1}) / 2`` of the two cell values
(D is smooth: a metric factor on a quotient chart).  Boundary faces use the ghost cells, so the
conditions of :mod:`solvers.grid.boundary` act as: ``periodic`` wraps; ``outflow`` and ``symmetric``
give zero flux (homogeneous Neumann); ``dirichlet`` (ghost = 2v - q) fixes the face value v;
``reflecting`` (ghost = -q) fixes it to 0.

Explicitly the term is fused into the conservation kernels (:mod:`solvers.conservation.kernels`)
and limits the step to ``dt <= 1 / (2 sum_k max(nu D_k) / dx_k^2)`` (:func:`parabolic_rate`).
:class:`ImplicitDiffusion` assembles the same operator as a sparse matrix, ``L q + b`` (``b``
from Dirichlet values), and takes theta-method steps

    (I - theta dt L) q_new = (I + (1 - theta) dt L) q + dt b,

Crank–Nicolson (theta = 1/2, second order, A-stable) or backward Euler (theta = 1, first order,
L-stable), unconditionally stable.  The LU factorisation of ``I - theta dt L`` is cached per
step size (a small LRU), so a solver should offer few distinct step sizes (the conservation
driver rounds its stable step down to one of 8 values per octave).
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from solvers.grid import BoundaryConditions
from solvers.errors import SolverInputError
from solvers.grid import Grid


def face_average(cell_values: np.ndarray, axis: int) -> np.ndarray:
    """Arithmetic mean of neighbouring padded cell values along ``axis``, in an array of the padded shape.

    Entry ``i`` is the face between padded cells ``i`` and ``i + 1``; the last entry along the
    axis (no face) repeats the last cell value.
    """
    c = np.moveaxis(np.asarray(cell_values, dtype=np.float64), axis, 0)
    out = np.empty_like(c)
    out[:-1] = 0.5 * (c[:-1] + c[1:])
    out[-1] = c[-1]
    return np.ascontiguousarray(np.moveaxis(out, 0, axis))


def parabolic_rate(grid: Grid, nud_faces) -> float:
    """``2 sum_k max_faces(nu D_k) / dx_k^2``: the reciprocal of the explicit stable step (0 if no diffusion)."""
    g = grid.ghost
    rate = 0.0
    for k, (c, dx) in enumerate(zip(nud_faces, grid.dx)):
        sel = [slice(g, g + n) for n in grid.cells]
        sel[k] = slice(g - 1, g + grid.cells[k])
        rate += 2.0 * float(np.max(c[tuple(sel)])) / dx**2
    return rate


def diffusion_rhs_reference(qp: np.ndarray, grid: Grid, nud_faces) -> np.ndarray:
    """NumPy reference of div(nu D grad q) on the interior, from a padded field with filled ghosts."""
    g = grid.ghost
    rhs = np.zeros(grid.shape)
    for k, dx in enumerate(grid.dx):
        n = grid.cells[k]
        lo = [slice(g, g + m) for m in grid.cells]
        hi = list(lo)
        lo[k] = slice(g - 1, g + n)
        hi[k] = slice(g, g + n + 1)
        flux = -nud_faces[k][tuple(lo)] * (qp[tuple(hi)] - qp[tuple(lo)]) / dx
        flux = np.moveaxis(flux, k, 0)
        rhs -= np.moveaxis((flux[1:] - flux[:-1]) / dx, 0, k)
    return rhs


class ImplicitDiffusion:
    """Sparse diffusion operator ``L q + b`` on the interior cells and its theta-method steps."""

    def __init__(self, grid: Grid, nud_faces, bc: BoundaryConditions, theta: float = 0.5, cache_size: int = 16):
        theta = float(theta)
        if not 0.5 <= theta <= 1.0:
            raise SolverInputError(f"theta: expected a number in [0.5, 1] (1/2 Crank–Nicolson, 1 backward Euler), found {theta!r}")
        self.grid = grid
        self.theta = theta
        self.cache_size = int(cache_size)
        self._factors: OrderedDict[float, object] = OrderedDict()
        self.L, self.b = self._assemble(grid, nud_faces, bc)
        self._identity = sp.identity(self.L.shape[0], format="csc")

    @staticmethod
    def _assemble(grid: Grid, nud_faces, bc: BoundaryConditions):
        g = grid.ghost
        size = int(np.prod(grid.cells))
        index = np.arange(size).reshape(grid.cells)
        rows, cols, vals = [], [], []
        b = np.zeros(size)

        def couple(i, j, c):
            rows.extend([i, i, j, j])
            cols.extend([i, j, j, i])
            vals.extend([-c, c, -c, c])

        for k, dx in enumerate(grid.dx):
            n = grid.cells[k]
            inner = [slice(g, g + m) for m in grid.cells]

            def coeff(face):  # faces between padded cells face and face+1 along k, interior elsewhere
                sel = list(inner)
                sel[k] = face
                return nud_faces[k][tuple(sel)] / dx**2

            take = lambda s: np.take(index, s, axis=k)  # noqa: E731
            if n > 1:
                c = coeff(slice(g, g + n - 1))
                couple(take(np.arange(n - 1)).ravel(), take(np.arange(1, n)).ravel(), c.ravel())
            lo_side, hi_side = bc.sides[k]
            if lo_side.kind == "periodic":
                if n > 1:
                    c = coeff(slice(g + n - 1, g + n))
                    couple(take([n - 1]).ravel(), take([0]).ravel(), c.ravel())
                continue
            for side, cell, face in ((lo_side, 0, g - 1), (hi_side, n - 1, g + n - 1)):
                c = coeff(slice(face, face + 1)).ravel()
                cells = take([cell]).ravel()
                if side.kind in ("dirichlet", "reflecting"):  # ghost = 2 v - q: flux c (2 v - 2 q)
                    rows.append(cells)
                    cols.append(cells)
                    vals.append(-2.0 * c)
                    if side.kind == "dirichlet":
                        np.add.at(b, cells, 2.0 * c * side.value)
        rows = np.concatenate([np.atleast_1d(np.asarray(r)).ravel() for r in rows]) if rows else np.zeros(0, int)
        cols = np.concatenate([np.atleast_1d(np.asarray(r)).ravel() for r in cols]) if cols else np.zeros(0, int)
        vals = np.concatenate([np.atleast_1d(np.asarray(r, dtype=float)).ravel() for r in vals]) if vals else np.zeros(0)
        L = sp.coo_matrix((vals, (rows, cols)), shape=(size, size)).tocsc()
        return L, b

    def apply(self, q: np.ndarray) -> np.ndarray:
        """``L q + b`` for an interior field (the explicit operator, for tests)."""
        return (self.L @ q.ravel() + self.b).reshape(q.shape)

    def step(self, q: np.ndarray, dt: float) -> np.ndarray:
        """One theta-method step of size ``dt`` from the interior field ``q``; returns the new interior field."""
        dt = float(dt)
        lu = self._factors.get(dt)
        if lu is None:
            lu = spla.splu((self._identity - (self.theta * dt) * self.L).tocsc())
            self._factors[dt] = lu
            if len(self._factors) > self.cache_size:
                self._factors.popitem(last=False)
        else:
            self._factors.move_to_end(dt)
        x = q.ravel()
        rhs = x + ((1.0 - self.theta) * dt) * (self.L @ x) + dt * self.b
        return lu.solve(rhs).reshape(q.shape)
