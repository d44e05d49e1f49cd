"""Uniform Cartesian grids in one, two and three dimensions, with ghost cells.

A field on a grid is stored *padded*: ``grid.ghost`` ghost cells on each side of every axis,
so a field has shape ``grid.padded_shape`` and its physical cells are ``q[grid.interior]``.
Cell ``i`` along an axis (counting interior cells from 0) has centre
``lower + (i + 1/2) dx`` and occupies ``[lower + i dx, lower + (i + 1) dx]``.

Coefficients that vary in space (a flux coefficient ``a(x) > 0``, a diffusion coefficient
``D(x) >= 0``) are sampled at cell centres or faces with :meth:`Grid.sample`,
:meth:`Grid.sample_padded` and :meth:`Grid.sample_faces`.
Finite-volume initial data should be *cell averages*: :meth:`Grid.cell_averages` integrates
a function over every cell with Gauss–Legendre quadrature, exact for polynomials of degree
``2 * points - 1``, so that convergence studies measure the scheme and not the sampling.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from solvers.errors import SolverInputError


@dataclass(frozen=True)
class Grid:
    """A uniform Cartesian grid on the box ``[lower, upper]`` with ``cells`` cells per axis."""

    lower: tuple[float, ...]
    upper: tuple[float, ...]
    cells: tuple[int, ...]
    ghost: int = 3
    dx: tuple[float, ...] = field(init=False)

    def __post_init__(self):
        lower = tuple(float(v) for v in np.atleast_1d(self.lower))
        upper = tuple(float(v) for v in np.atleast_1d(self.upper))
        raw_cells = np.atleast_1d(self.cells)
        if not (1 <= len(raw_cells) <= 3):
            raise SolverInputError(f"cells: expected 1, 2 or 3 axes, found {len(raw_cells)}")
        cells = []
        for axis, n in enumerate(raw_cells):
            if isinstance(n, (bool, np.bool_)) or not float(n).is_integer() or int(n) < 1:
                raise SolverInputError(f"cells[{axis}]: expected a positive whole number of cells, found {n.item() if hasattr(n, 'item') else n!r}")
            cells.append(int(n))
        if not (len(lower) == len(upper) == len(cells)):
            raise SolverInputError(
                f"lower, upper, cells: expected one entry per axis, found {len(lower)}, {len(upper)} and {len(cells)}"
            )
        for axis, (lo, hi) in enumerate(zip(lower, upper)):
            if not (np.isfinite(lo) and np.isfinite(hi) and hi > lo):
                raise SolverInputError(f"axis {axis}: expected finite bounds with upper > lower, found [{lo}, {hi}]")
        if isinstance(self.ghost, bool) or int(self.ghost) != self.ghost or self.ghost < 1:
            raise SolverInputError(f"ghost: expected a whole number >= 1, found {self.ghost!r}")
        object.__setattr__(self, "lower", lower)
        object.__setattr__(self, "upper", upper)
        object.__setattr__(self, "cells", tuple(cells))
        object.__setattr__(self, "ghost", int(self.ghost))
        object.__setattr__(self, "dx", tuple((hi - lo) / n for lo, hi, n in zip(lower, upper, cells)))

    @classmethod
    def line(cls, cells: int, lower: float = 0.0, upper: float = 1.0, ghost: int = 3) -> "Grid":
        """A one-dimensional grid of ``cells`` cells on ``[lower, upper]``."""
        return cls((lower,), (upper,), (cells,), ghost)

    # -- shape -------------------------------------------------------------------------------
    @property
    def ndim(self) -> int:
        return len(self.cells)

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of the interior (physical cells)."""
        return self.cells

    @property
    def padded_shape(self) -> tuple[int, ...]:
        return tuple(n + 2 * self.ghost for n in self.cells)

    @property
    def interior(self) -> tuple[slice, ...]:
        """Index of the physical cells inside a padded array."""
        return tuple(slice(self.ghost, self.ghost + n) for n in self.cells)

    @property
    def cell_volume(self) -> float:
        return float(np.prod(self.dx))

    @property
    def length(self) -> tuple[float, ...]:
        return tuple(hi - lo for lo, hi in zip(self.lower, self.upper))

    # -- coordinates -------------------------------------------------------------------------
    def centers(self, axis: int = 0) -> np.ndarray:
        """Cell centres of the interior cells along ``axis``."""
        self._check_axis(axis)
        return self.lower[axis] + (np.arange(self.cells[axis]) + 0.5) * self.dx[axis]

    def padded_centers(self, axis: int = 0) -> np.ndarray:
        """Cell centres along ``axis`` including the ghost cells."""
        self._check_axis(axis)
        return self.lower[axis] + (np.arange(-self.ghost, self.cells[axis] + self.ghost) + 0.5) * self.dx[axis]

    def faces(self, axis: int = 0) -> np.ndarray:
        """The ``cells[axis] + 1`` face coordinates of the interior cells along ``axis``."""
        self._check_axis(axis)
        return self.lower[axis] + np.arange(self.cells[axis] + 1) * self.dx[axis]

    def mesh(self, padded: bool = False) -> tuple[np.ndarray, ...]:
        """Cell-centre coordinates as ``ndim`` arrays of the interior (or padded) shape, 'ij' indexing."""
        axes = [self.padded_centers(k) if padded else self.centers(k) for k in range(self.ndim)]
        return tuple(np.meshgrid(*axes, indexing="ij"))

    # -- fields ------------------------------------------------------------------------------
    def zeros(self) -> np.ndarray:
        """A padded field of zeros."""
        return np.zeros(self.padded_shape)

    def pad(self, values) -> np.ndarray:
        """A padded copy of an interior field (ghost cells zero until a boundary fill)."""
        values = np.asarray(values, dtype=np.float64)
        if values.shape != self.shape:
            raise SolverInputError(f"field: expected interior shape {self.shape}, found {values.shape}")
        q = self.zeros()
        q[self.interior] = values
        return q

    def sample(self, func: Callable[..., np.ndarray]) -> np.ndarray:
        """``func(*x)`` at the interior cell centres (``func`` is called on the mesh arrays)."""
        return self._evaluate(func, self.mesh())

    def sample_padded(self, func: Callable[..., np.ndarray]) -> np.ndarray:
        """``func(*x)`` at every cell centre including ghost cells: for coefficients such as a(x), D(x)."""
        return self._evaluate(func, self.mesh(padded=True))

    def sample_faces(self, func: Callable[..., np.ndarray], axis: int) -> np.ndarray:
        """``func(*x)`` at the faces normal to ``axis``, for the padded grid.

        The result has the padded shape with one entry fewer along ``axis``: entry ``i`` is the
        face between padded cells ``i`` and ``i + 1``.
        """
        self._check_axis(axis)
        axes = []
        for k in range(self.ndim):
            c = self.padded_centers(k)
            axes.append(c[:-1] + 0.5 * self.dx[k] if k == axis else c)
        return self._evaluate(func, tuple(np.meshgrid(*axes, indexing="ij")))

    def cell_averages(self, func: Callable[..., np.ndarray], points: int = 4) -> np.ndarray:
        """Average of ``func`` over every interior cell by tensor Gauss–Legendre quadrature."""
        nodes, weights = np.polynomial.legendre.leggauss(int(points))
        total = np.zeros(self.shape)
        for index in np.ndindex(*([len(nodes)] * self.ndim)):
            coords = []
            for k, i in enumerate(index):
                coords.append(self.centers(k) + 0.5 * self.dx[k] * nodes[i])
            w = np.prod([0.5 * weights[i] for i in index])
            total += w * self._evaluate(func, tuple(np.meshgrid(*coords, indexing="ij")))
        return total

    def integrate(self, q: np.ndarray) -> float:
        """Midpoint-rule integral of a padded or interior field over the physical domain."""
        q = np.asarray(q)
        if q.shape == self.padded_shape:
            q = q[self.interior]
        if q.shape != self.shape:
            raise SolverInputError(f"field: expected shape {self.shape} or {self.padded_shape}, found {q.shape}")
        return float(q.sum() * self.cell_volume)

    # -- internals ---------------------------------------------------------------------------
    def _check_axis(self, axis: int) -> None:
        if not 0 <= axis < self.ndim:
            raise SolverInputError(f"axis: expected 0..{self.ndim - 1}, found {axis}")

    @staticmethod
    def _evaluate(func, coords) -> np.ndarray:
        values = np.asarray(func(*coords), dtype=np.float64)
        return np.broadcast_to(values, coords[0].shape).copy()
