"""Ghost cells for a Hamilton–Jacobi potential: the kinds of :mod:`solvers.grid.boundary` plus linear
extrapolation (docs/theory.md §1, §5).

For a potential ``u`` (not a conserved quantity) the natural wall is ``symmetric`` (even mirror,
``∂u/∂n = 0``); ``outflow`` (zero gradient) acts the same on the first ghost.  Both are right where
characteristics leave the domain.  Where they *enter* (concave data, e.g. near a ridge of the loss)
the ghost cells decide what comes in, and a zero gradient injects ``p = 0``; ``extrapolate``
continues the boundary slope linearly instead (:class:`HJBoundary`).

:func:`fill_hj_ghosts` is the compiled fill (Numba, callable from kernels through
:func:`fill_ghosts_flat`), :func:`fill_hj_ghosts_reference` its NumPy reference.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from solvers.grid.boundary import BoundaryConditions, Side, fill_axis, fill_ghosts_reference
from solvers.errors import SolverInputError

EXTRAPOLATE = "extrapolate"


@dataclass(frozen=True)
class HJBoundary:
    """Ghost-cell conditions for a potential ``u``: the kinds of :mod:`solvers.grid.boundary` plus
    ``"extrapolate"``, linear extrapolation from the two cells next to the face,

        ghost_j = u_edge + j (u_edge - u_next),        j = 1, 2, ... cells beyond the face.

    ``symmetric`` (even mirror) imposes ``∂u/∂n = 0`` and ``outflow`` (zero gradient) has the same
    effect on the first ghost; both are right where characteristics leave the domain or the data
    are flat at the wall.  Where characteristics *enter* (e.g. concave data, ``u0 = -x²/2``) they
    inject a wrong gradient ``p = 0``; ``extrapolate`` continues the boundary slope instead, so the
    one-sided derivatives at the edge cell see the interior gradient (first-order accurate there):
    the scheme then solves the problem whose data continue linearly beyond the wall.  (The ghost
    value ``2u_edge - u_next`` has a negative weight, so the comparison principle is not guaranteed
    next to an extrapolating wall.)
    """

    conditions: BoundaryConditions  # "extrapolate" sides stored as "outflow"
    extrapolate: tuple[tuple[bool, bool], ...]

    @classmethod
    def parse(cls, spec, ndim: int) -> "HJBoundary":
        """Same specifications as :meth:`BoundaryConditions.parse`, with ``"extrapolate"`` allowed as a side."""
        if isinstance(spec, HJBoundary):
            if spec.conditions.ndim != ndim:
                raise SolverInputError(f"boundary: expected conditions for {ndim} axes, found {spec.conditions.ndim}")
            return spec
        if isinstance(spec, BoundaryConditions):
            return cls(BoundaryConditions.parse(spec, ndim), ((False, False),) * ndim)
        if _is_side(spec):
            axes = [spec] * ndim
        elif isinstance(spec, (tuple, list)):
            axes = list(spec)
        else:
            raise SolverInputError(f"boundary: expected a kind name, a per-axis list or (lower, upper) pairs, found {spec!r}")
        cleaned, flags = [], []
        for axis_spec in axes:
            if _is_side(axis_spec):
                lo = hi = axis_spec
            elif isinstance(axis_spec, (tuple, list)) and len(axis_spec) == 2:
                lo, hi = axis_spec
            else:  # malformed: let BoundaryConditions.parse name the problem
                cleaned.append(axis_spec)
                flags.append((False, False))
                continue
            flags.append((_is_extrapolate(lo), _is_extrapolate(hi)))
            cleaned.append(tuple("outflow" if _is_extrapolate(side) else side for side in (lo, hi)))
        try:
            conditions = BoundaryConditions.parse(cleaned, ndim)
        except SolverInputError as err:
            if "unknown value" not in str(err):
                raise
            raise SolverInputError(f"{err}, or {EXTRAPOLATE!r} (linear extrapolation) for the HJ solver") from None
        return cls(conditions, tuple(flags))

    @property
    def ndim(self) -> int:
        return self.conditions.ndim

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(kinds, values, extrapolate)`` of shape ``(ndim, 2)`` for the compiled fill."""
        kinds, values = self.conditions.arrays()
        return kinds, values, np.array(self.extrapolate, dtype=np.int64).reshape(self.ndim, 2)


def _is_side(spec) -> bool:
    """A single side: a kind name, a Side, or a (kind, value) pair."""
    if isinstance(spec, (str, Side)):
        return True
    return (
        isinstance(spec, (tuple, list)) and len(spec) == 2 and isinstance(spec[0], str)
        and isinstance(spec[1], (int, float, np.integer, np.floating)) and not isinstance(spec[1], bool)
    )  # fmt: skip


def _is_extrapolate(side) -> bool:
    return isinstance(side, str) and side == EXTRAPOLATE


@numba.njit(cache=True)
def _extrapolate_axis(q3, ghost, lower, upper):
    before, npad, after = q3.shape
    n = npad - 2 * ghost
    for a in range(before):
        for b in range(after):
            if lower:
                edge = q3[a, ghost, b]
                slope = edge - q3[a, ghost + 1, b] if n > 1 else 0.0
                for j in range(ghost):
                    q3[a, ghost - 1 - j, b] = edge + (j + 1) * slope
            if upper:
                edge = q3[a, ghost + n - 1, b]
                slope = edge - q3[a, ghost + n - 2, b] if n > 1 else 0.0
                for j in range(ghost):
                    q3[a, ghost + n + j, b] = edge + (j + 1) * slope


@numba.njit(cache=True)
def fill_ghosts_flat(q, ndim, shape3, ghost, kinds, values, extrapolate):
    """Ghost fill of a flattened padded field, axis by axis (as :func:`solvers.grid.boundary.fill_ghosts_compiled`),
    with linear extrapolation on the sides flagged in ``extrapolate``."""
    for k in range(ndim):
        v = 3 - ndim + k
        before = 1
        for m in range(v):
            before *= shape3[m]
        after = 1
        for m in range(v + 1, 3):
            after *= shape3[m]
        q3 = q.reshape((before, shape3[v], after))
        fill_axis(q3, ghost, kinds[k, 0], values[k, 0], kinds[k, 1], values[k, 1])
        if extrapolate[k, 0] or extrapolate[k, 1]:
            _extrapolate_axis(q3, ghost, extrapolate[k, 0] != 0, extrapolate[k, 1] != 0)


def fill_hj_ghosts(q: np.ndarray, ghost: int, boundary: HJBoundary) -> np.ndarray:
    """Fill the ghost cells of the padded field ``q`` in place (compiled) and return it."""
    if not q.flags.c_contiguous:
        raise SolverInputError("field: expected a C-contiguous array")
    shape3 = np.array((1,) * (3 - q.ndim) + q.shape, dtype=np.int64)
    fill_ghosts_flat(q.reshape(-1), q.ndim, shape3, ghost, *boundary.arrays())
    return q


def fill_hj_ghosts_reference(q: np.ndarray, ghost: int, boundary: HJBoundary) -> np.ndarray:
    """NumPy reference of :func:`fill_hj_ghosts`.  Agrees with it on every cell the HJ stencils read
    (interior rows of each axis); corner ghost cells, which no stencil reads, may differ."""
    fill_ghosts_reference(q, ghost, boundary.conditions)
    for axis, (lower, upper) in enumerate(boundary.extrapolate):
        a = np.moveaxis(q, axis, 0)
        n = a.shape[0] - 2 * ghost
        if lower:
            slope = a[ghost] - a[ghost + 1] if n > 1 else 0.0
            for j in range(ghost):
                a[ghost - 1 - j] = a[ghost] + (j + 1) * slope
        if upper:
            slope = a[ghost + n - 1] - a[ghost + n - 2] if n > 1 else 0.0
            for j in range(ghost):
                a[ghost + n + j] = a[ghost + n - 1] + (j + 1) * slope
    return q
