"""Meshes of closed surfaces: the icosphere, the torus, and a user's vertex/triangle arrays.

``icosphere(n)`` divides every face of the regular icosahedron into ``n²`` triangles (a class-I
geodesic grid of frequency ``n``: any whole ``n >= 1``, not only powers of two) and projects the
vertices radially onto the sphere of radius ``radius``; it has ``10 n² + 2`` vertices and
``20 n²`` triangles, all acute (the cotangent weights of the Laplace–Beltrami operator are
positive, as the monotone HJ scheme needs).  Shared vertices are identified exactly, by their
integer barycentric weights on the icosahedron, not by a floating-point tolerance.

``torus(R, r, n_major, n_minor)`` samples ``x = ((R + r cos θ) cos φ, (R + r cos θ) sin φ, r sin θ)``
on a triangular lattice: ``n_minor`` (even) rings in θ, ``n_major`` vertices per ring, every
other ring shifted by half a step in φ, so the triangles are isosceles; they are acute when the
longest φ-step ``2π(R + r)/n_major`` is below twice the θ-step ``2πr/n_minor`` (checked).

All triangles are oriented with outward normals.
"""

from __future__ import annotations

import math

import numpy as np

from solvers.errors import SolverInputError
from solvers.surfaces.mesh import TriangleMesh


def _whole(name: str, value, minimum: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not float(value).is_integer() or int(value) < minimum:
        raise SolverInputError(f"{name}: expected a whole number >= {minimum}, found {value!r}")
    return int(value)


def _icosahedron() -> tuple[np.ndarray, np.ndarray]:
    g = (1.0 + math.sqrt(5.0)) / 2.0
    v = np.array(
        [[-1, g, 0], [1, g, 0], [-1, -g, 0], [1, -g, 0], [0, -1, g], [0, 1, g],
         [0, -1, -g], [0, 1, -g], [g, 0, -1], [g, 0, 1], [-g, 0, -1], [-g, 0, 1]],
        dtype=np.float64,
    )
    f = np.array(
        [[0, 11, 5], [0, 5, 1], [0, 1, 7], [0, 7, 10], [0, 10, 11], [1, 5, 9], [5, 11, 4], [11, 10, 2],
         [10, 7, 6], [7, 1, 8], [3, 9, 4], [3, 4, 2], [3, 2, 6], [3, 6, 8], [3, 8, 9], [4, 9, 5],
         [2, 4, 11], [6, 2, 10], [8, 6, 7], [9, 8, 1]],
        dtype=np.int64,
    )
    return v, f


def icosphere(n: int, radius: float = 1.0) -> TriangleMesh:
    """The frequency-``n`` geodesic icosphere of radius ``radius`` (``10n² + 2`` vertices)."""
    n = _whole("n", n, 1)
    radius = float(radius)
    if not (math.isfinite(radius) and radius > 0):
        raise SolverInputError(f"radius: expected a finite number > 0, found {radius!r}")
    base, faces = _icosahedron()
    index: dict[tuple, int] = {}
    points: list[np.ndarray] = []

    def vertex(face, i, j):
        # barycentric weights (n - i - j, i, j) / n on the face's corners; the key is exact
        w = {}
        for corner, weight in zip(face, (n - i - j, i, j)):
            if weight:
                w[int(corner)] = weight
        key = tuple(sorted(w.items()))
        k = index.get(key)
        if k is None:
            k = index[key] = len(points)
            points.append(sum(base[c] * (wt / n) for c, wt in w.items()))
        return k

    tris = []
    for face in faces:
        ids = {}
        for i in range(n + 1):
            for j in range(n + 1 - i):
                ids[i, j] = vertex(face, i, j)
        for i in range(n):
            for j in range(n - i):
                tris.append((ids[i, j], ids[i + 1, j], ids[i, j + 1]))
                if i + j < n - 1:
                    tris.append((ids[i + 1, j], ids[i + 1, j + 1], ids[i, j + 1]))
    x = np.array(points)
    x *= radius / np.linalg.norm(x, axis=1)[:, None]
    return _outward(x, np.array(tris, dtype=np.int64), lambda p: p)


def torus(R: float = 2.0, r: float = 1.0, n_major: int = 48, n_minor: int = 24) -> TriangleMesh:
    """A triangulated torus of major radius ``R`` and minor radius ``r`` (axis z)."""
    R, r = float(R), float(r)
    if not (math.isfinite(r) and r > 0 and math.isfinite(R) and R > r):
        raise SolverInputError(f"R, r: expected finite radii with R > r > 0, found R = {R!r}, r = {r!r}")
    n_major = _whole("n_major", n_major, 3)
    n_minor = _whole("n_minor", n_minor, 4)
    if n_minor % 2:
        raise SolverInputError(f"n_minor: expected an even number of rings (they alternate their shift), found {n_minor}")
    step_phi, step_theta = 2 * math.pi * (R + r) / n_major, 2 * math.pi * r / n_minor
    if step_phi >= 2 * step_theta:
        raise SolverInputError(
            f"n_major, n_minor: the outer φ-step {step_phi:.3g} must be below twice the θ-step {step_theta:.3g} for "
            f"acute triangles; raise n_major (to more than {math.ceil(n_minor * (R + r) / (2 * r))}) or lower n_minor"
        )
    i, j = np.meshgrid(np.arange(n_minor), np.arange(n_major), indexing="ij")
    theta = 2 * math.pi * i / n_minor
    phi = 2 * math.pi * (j + 0.5 * (i % 2)) / n_major
    rho = R + r * np.cos(theta)
    x = np.stack([rho * np.cos(phi), rho * np.sin(phi), r * np.sin(theta)], axis=-1).reshape(-1, 3)

    def vid(a, b):
        return (a % n_minor) * n_major + (b % n_major)

    tris = []
    for a in range(n_minor):
        for b in range(n_major):
            if a % 2 == 0:  # ring a unshifted, ring a+1 shifted by +1/2
                tris.append((vid(a, b), vid(a, b + 1), vid(a + 1, b)))
                tris.append((vid(a + 1, b), vid(a, b + 1), vid(a + 1, b + 1)))
            else:  # ring a shifted, ring a+1 unshifted
                tris.append((vid(a, b), vid(a, b + 1), vid(a + 1, b + 1)))
                tris.append((vid(a, b), vid(a + 1, b + 1), vid(a + 1, b)))

    def outward(p):
        rho = np.hypot(p[:, 0], p[:, 1])
        centre = np.stack([R * p[:, 0] / rho, R * p[:, 1] / rho, np.zeros(len(p))], axis=1)
        return p - centre

    return _outward(x, np.array(tris, dtype=np.int64), outward)


def user_mesh(vertices, triangles, *, require_closed: bool = True) -> TriangleMesh:
    """A mesh from a user's ``(n, 3)`` vertex and ``(m, 3)`` triangle arrays (validated, never reordered)."""
    return TriangleMesh(vertices, triangles, require_closed)


def _outward(x: np.ndarray, tris: np.ndarray, outward) -> TriangleMesh:
    """Orient each generated triangle so that its normal points along ``outward(centroid)``."""
    c = x[tris].mean(axis=1)
    normal = np.cross(x[tris[:, 1]] - x[tris[:, 0]], x[tris[:, 2]] - x[tris[:, 0]])
    flip = np.einsum("ij,ij->i", normal, outward(c)) < 0
    tris[flip] = tris[flip][:, [0, 2, 1]]
    return TriangleMesh(x, tris)
