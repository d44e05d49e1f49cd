"""Boundary conditions as ghost-cell fills, composable per side of every axis.

Kinds (ghost cell ``g`` mirrors interior cell ``m`` across the boundary face):

``periodic``     ghost = the interior cell one period away (both sides of an axis must agree);
``outflow``      zero-gradient extrapolation: ghost = the nearest interior cell;
``dirichlet``    the face value is ``value``: ghost = 2 value - q[m] (linear through the face);
``reflecting``   a solid wall for a velocity-like field: ghost = -q[m] (odd mirror, q = 0 on the face);
``symmetric``    a mirror for a potential-like field (homogeneous Neumann): ghost = q[m] (even mirror).

For Burgers' equation ``reflecting`` is the wall condition; for a Hamilton–Jacobi potential
``u`` the no-flux condition is ``symmetric``.  A specification is either one kind for every
side (``"periodic"``), one per axis, or a ``(lower, upper)`` pair per axis, where a side is a
kind name or a ``(kind, value)`` pair: ``[("dirichlet", 1.0), "outflow"]``.

The fill is a Numba kernel, :func:`fill_axis`, that works on a padded field viewed as
``(before, n, after)`` so one loop serves 1-, 2- and 3-D fields; it can be called from other
compiled kernels.  :func:`fill_ghosts_reference` is the NumPy reference tests compare it with.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from solvers.errors import SolverInputError, require_choice

PERIODIC, OUTFLOW, DIRICHLET, REFLECTING, SYMMETRIC = 0, 1, 2, 3, 4
KINDS = {"periodic": PERIODIC, "outflow": OUTFLOW, "dirichlet": DIRICHLET, "reflecting": REFLECTING, "symmetric": SYMMETRIC}


@dataclass(frozen=True)
class Side:
    """One side of one axis: a kind and, for ``dirichlet``, the boundary value."""

    kind: str
    value: float = 0.0

    def __post_init__(self):
        require_choice("boundary kind", self.kind, KINDS)
        if not np.isfinite(self.value):
            raise SolverInputError(f"boundary value: expected a finite number, found {self.value!r}")

    @property
    def code(self) -> int:
        return KINDS[self.kind]


@dataclass(frozen=True)
class BoundaryConditions:
    """``sides[axis] = (lower, upper)`` for every axis of a grid."""

    sides: tuple[tuple[Side, Side], ...]

    def __post_init__(self):
        for axis, (lo, hi) in enumerate(self.sides):
            if (lo.kind == "periodic") != (hi.kind == "periodic"):
                raise SolverInputError(
                    f"boundary on axis {axis}: periodic must be set on both sides, found {lo.kind!r} and {hi.kind!r}"
                )

    @classmethod
    def parse(cls, spec, ndim: int) -> "BoundaryConditions":
        """Build from a kind name, a per-axis list, or per-axis ``(lower, upper)`` pairs."""
        if isinstance(spec, BoundaryConditions):
            if spec.ndim != ndim:
                raise SolverInputError(f"boundary: expected conditions for {ndim} axes, found {spec.ndim}")
            return spec
        if isinstance(spec, (str, Side)) or _is_side_pair(spec):
            spec = [spec] * ndim
        spec = list(spec)
        if len(spec) != ndim:
            raise SolverInputError(f"boundary: expected one entry per axis ({ndim}), found {len(spec)}")
        sides = []
        for axis_spec in spec:
            if isinstance(axis_spec, (str, Side)) or _is_side_pair(axis_spec):
                lo = hi = _side(axis_spec)
            else:
                pair = list(axis_spec)
                if len(pair) != 2:
                    raise SolverInputError(f"boundary: expected (lower, upper) for an axis, found {axis_spec!r}")
                lo, hi = _side(pair[0]), _side(pair[1])
            sides.append((lo, hi))
        return cls(tuple(sides))

    @property
    def ndim(self) -> int:
        return len(self.sides)

    @property
    def periodic(self) -> tuple[bool, ...]:
        return tuple(lo.kind == "periodic" for lo, _ in self.sides)

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``(kinds, values)`` of shape ``(ndim, 2)`` for the compiled kernels."""
        kinds = np.array([[lo.code, hi.code] for lo, hi in self.sides], dtype=np.int64)
        values = np.array([[lo.value, hi.value] for lo, hi in self.sides], dtype=np.float64)
        return kinds, values


def _is_side_pair(spec) -> bool:
    return (
        isinstance(spec, (tuple, list))
        and len(spec) == 2
        and isinstance(spec[0], str)
        and isinstance(spec[1], (int, float, np.integer, np.floating))
        and not isinstance(spec[1], bool)
    )


def _side(spec) -> Side:
    if isinstance(spec, Side):
        return spec
    if isinstance(spec, str):
        return Side(spec)
    if _is_side_pair(spec):
        return Side(spec[0], float(spec[1]))
    raise SolverInputError(f"boundary side: expected a kind name or (kind, value), found {spec!r}")


@numba.njit(cache=True)
def fill_axis(q3, ghost, kind_lo, value_lo, kind_hi, value_hi):
    """Fill the ghost cells of ``q3`` (shape ``(before, n_padded, after)``) along its middle axis."""
    before, npad, after = q3.shape
    n = npad - 2 * ghost
    for a in range(before):
        for k in range(ghost):
            lo = ghost - 1 - k  # lower ghost cell, mirrors interior cell ghost + k
            ml = ghost + k
            hi = ghost + n + k  # upper ghost cell, mirrors interior cell ghost + n - 1 - k
            mh = ghost + n - 1 - k
            if ml >= ghost + n:  # fewer interior cells than ghosts: mirror the nearest valid cell
                ml = ghost + n - 1
            if mh < ghost:
                mh = ghost
            for b in range(after):
                if kind_lo == PERIODIC:
                    q3[a, lo, b] = q3[a, lo + n, b]
                elif kind_lo == OUTFLOW:
                    q3[a, lo, b] = q3[a, ghost, b]
                elif kind_lo == DIRICHLET:
                    q3[a, lo, b] = 2.0 * value_lo - q3[a, ml, b]
                elif kind_lo == REFLECTING:
                    q3[a, lo, b] = -q3[a, ml, b]
                else:
                    q3[a, lo, b] = q3[a, ml, b]
                if kind_hi == PERIODIC:
                    q3[a, hi, b] = q3[a, hi - n, b]
                elif kind_hi == OUTFLOW:
                    q3[a, hi, b] = q3[a, ghost + n - 1, b]
                elif kind_hi == DIRICHLET:
                    q3[a, hi, b] = 2.0 * value_hi - q3[a, mh, b]
                elif kind_hi == REFLECTING:
                    q3[a, hi, b] = -q3[a, mh, b]
                else:
                    q3[a, hi, b] = q3[a, mh, b]


@numba.njit(cache=True)
def fill_ghosts_compiled(q, ghost, kinds, values):
    """Fill every ghost cell of a C-contiguous padded field ``q`` (1-, 2- or 3-D), axis by axis.

    Axis ``k`` is filled over the full (padded) extent of the other axes, so corner ghost cells
    end up consistent with the conditions of the later axes.
    """
    shape = q.shape
    flat = q.reshape(q.size)
    for axis in range(len(shape)):
        before = 1
        for k in range(axis):
            before *= shape[k]
        after = 1
        for k in range(axis + 1, len(shape)):
            after *= shape[k]
        q3 = flat.reshape((before, shape[axis], after))
        fill_axis(q3, ghost, kinds[axis, 0], values[axis, 0], kinds[axis, 1], values[axis, 1])


def fill_ghosts(q: np.ndarray, ghost: int, bc: BoundaryConditions) -> np.ndarray:
    """Fill the ghost cells of the padded field ``q`` in place and return it."""
    if bc.ndim != q.ndim:
        raise SolverInputError(f"boundary: conditions for {bc.ndim} axes, field has {q.ndim}")
    if not q.flags.c_contiguous:
        raise SolverInputError("field: expected a C-contiguous array")
    kinds, values = bc.arrays()
    fill_ghosts_compiled(q, ghost, kinds, values)
    return q


def fill_ghosts_reference(q: np.ndarray, ghost: int, bc: BoundaryConditions) -> np.ndarray:
    """NumPy reference of :func:`fill_ghosts` (same results, slower); fills ``q`` in place."""
    for axis, (lo, hi) in enumerate(bc.sides):
        a = np.moveaxis(q, axis, 0)  # a view
        n = a.shape[0] - 2 * ghost
        for k in range(ghost):
            g_lo, g_hi = ghost - 1 - k, ghost + n + k
            m_lo, m_hi = min(ghost + k, ghost + n - 1), max(ghost + n - 1 - k, ghost)
            for g, m, edge, side, period in ((g_lo, m_lo, ghost, lo, n), (g_hi, m_hi, ghost + n - 1, hi, -n)):
                if side.kind == "periodic":
                    a[g] = a[g + period]
                elif side.kind == "outflow":
                    a[g] = a[edge]
                elif side.kind == "dirichlet":
                    a[g] = 2.0 * side.value - a[m]
                elif side.kind == "reflecting":
                    a[g] = -a[m]
                else:
                    a[g] = a[m]
    return q
