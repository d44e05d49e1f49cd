"""Triangulated surfaces in R³: vertices, triangles, their connectivity and geometry, validated.

A :class:`TriangleMesh` is a piecewise-flat surface: ``vertices`` of shape ``(n, 3)`` and
``triangles`` of shape ``(m, 3)`` (vertex indices).  The solvers on it (Laplace–Beltrami,
Hamilton–Jacobi, finite volumes; docs/theory.md §1: the quotient Q may be a curved surface such as the
sphere of a normalised layer) need an orientable 2-manifold, so construction checks, and names the
offender when a check fails:

* every index lies in ``[0, n)``, every vertex belongs to a triangle;
* no triangle is degenerate (a repeated vertex, or an area below ``1e-12`` times its longest edge
  squared);
* every edge belongs to one or two triangles (more: a *non-manifold edge*);
* two triangles sharing an edge traverse it in opposite directions (otherwise the triangles are
  *inconsistently oriented*);
* the triangles around every vertex form a single fan, linked across shared edges (otherwise the
  vertex is *non-manifold*, e.g. two cones touching at their tips);
* with ``require_closed=True`` (the default) no edge belongs to only one triangle (an *open
  boundary*).

Orientation convention: a triangle ``(a, b, c)`` has the normal ``(x_b - x_a) × (x_c - x_a)``
normalised; the generators in :mod:`solvers.surfaces.mesh_generation` orient closed surfaces outwards.

Connectivity (all read-only arrays):

``edges``            ``(E, 2)`` vertex pairs ``a < b``;
``edge_triangles``   ``(E, 2)`` the triangles on each side (``-1`` on an open boundary); the first
                     is the one that traverses the edge as ``a -> b``;
``triangle_edges``   ``(m, 3)`` edge index of the side opposite local vertex 0, 1, 2;
``star_ptr/star``    CSR lists of the triangles around each vertex (the vertex star);
``neighbour_ptr/neighbours``  CSR lists of the vertices joined to each vertex by an edge, and
                     ``neighbour_edges`` the edge joining them (same layout).

Geometry: ``areas``, ``normals`` (unit, per triangle), ``angles`` (interior angle at each
corner), ``edge_lengths``, ``vertex_normals`` (angle-weighted, unit), and the local mesh size
``triangle_size`` (the smallest altitude of a triangle) and ``vertex_size`` (the smallest altitude
over the vertex star); ``h`` is the longest edge.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from solvers.errors import SolverInputError

#: relative area below which a triangle is degenerate: area < DEGENERATE * (longest edge)²
DEGENERATE = 1e-12


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.flags.writeable = False
    return a


def _csr(keys: np.ndarray, values: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(keys, kind="stable")
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys, minlength=n), out=ptr[1:])
    return ptr, values[order]


def _check_vertex_fans(n, m, star_ptr, star, edges, edge_triangles) -> None:
    """Raise unless the star of every vertex is connected across the edges at that vertex."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    owner = np.repeat(np.arange(n), np.diff(star_ptr))
    key = owner * m + star  # sorted: vertex-major, triangles ascending within a vertex
    inner = edge_triangles[:, 1] >= 0
    L, R = edge_triangles[inner, 0], edge_triangles[inner, 1]
    src, dst = [], []
    for end in (edges[inner, 0], edges[inner, 1]):
        src.append(np.searchsorted(key, end * m + L))
        dst.append(np.searchsorted(key, end * m + R))
    src, dst = np.concatenate(src), np.concatenate(dst)
    graph = coo_matrix((np.ones(src.size), (src, dst)), shape=(key.size, key.size))
    _, labels = connected_components(graph, directed=False)
    fans = np.bincount(np.unique(owner * key.size + labels) // key.size, minlength=n)
    if (fans > 1).any():
        i = int(np.argmax(fans > 1))
        stars = star[star_ptr[i]:star_ptr[i + 1]]
        lab = labels[star_ptr[i]:star_ptr[i + 1]]
        groups = [sorted(int(k) for k in stars[lab == g]) for g in np.unique(lab)]
        raise SolverInputError(
            f"triangles: vertex {i} is non-manifold: its triangles form {fans[i]} separate fans {groups} that share "
            "only the vertex; split the vertex or remove a fan"
        )


@dataclass(frozen=True, eq=False)
class TriangleMesh:
    """A validated triangulated surface (see the module docstring for the checks and arrays)."""

    vertices: np.ndarray
    triangles: np.ndarray
    require_closed: bool = True

    edges: np.ndarray = field(init=False, repr=False)
    edge_triangles: np.ndarray = field(init=False, repr=False)
    triangle_edges: np.ndarray = field(init=False, repr=False)
    star_ptr: np.ndarray = field(init=False, repr=False)
    star: np.ndarray = field(init=False, repr=False)
    neighbour_ptr: np.ndarray = field(init=False, repr=False)
    neighbours: np.ndarray = field(init=False, repr=False)
    neighbour_edges: np.ndarray = field(init=False, repr=False)
    areas: np.ndarray = field(init=False, repr=False)
    normals: np.ndarray = field(init=False, repr=False)
    angles: np.ndarray = field(init=False, repr=False)
    edge_lengths: np.ndarray = field(init=False, repr=False)
    vertex_normals: np.ndarray = field(init=False, repr=False)
    triangle_size: np.ndarray = field(init=False, repr=False)
    vertex_size: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        x = np.asarray(self.vertices, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != 3 or x.shape[0] < 3:
            raise SolverInputError(f"vertices: expected an array of shape (n, 3) with n >= 3, found shape {x.shape}")
        bad = ~np.isfinite(x)
        if bad.any():
            i = int(np.argwhere(bad)[0, 0])
            raise SolverInputError(f"vertices: expected finite coordinates, found {x[i].tolist()} at vertex {i}")
        t_raw = np.asarray(self.triangles)
        if t_raw.ndim != 2 or t_raw.shape[1] != 3 or t_raw.shape[0] < 1:
            raise SolverInputError(f"triangles: expected an array of shape (m, 3) with m >= 1, found shape {t_raw.shape}")
        if not np.issubdtype(t_raw.dtype, np.integer):
            if not (np.issubdtype(t_raw.dtype, np.floating) and np.all(np.isfinite(t_raw)) and np.all(t_raw == np.round(t_raw))):
                raise SolverInputError(f"triangles: expected whole-number vertex indices, found dtype {t_raw.dtype}")
        t = t_raw.astype(np.int64)
        n, m = x.shape[0], t.shape[0]
        out = (t < 0) | (t >= n)
        if out.any():
            k, c = (int(v) for v in np.argwhere(out)[0])
            raise SolverInputError(
                f"triangles: triangle {k} {t[k].tolist()} refers to vertex {t[k, c]}, expected indices in [0, {n})"
            )
        repeated = (t[:, 0] == t[:, 1]) | (t[:, 1] == t[:, 2]) | (t[:, 0] == t[:, 2])
        if repeated.any():
            k = int(np.argmax(repeated))
            raise SolverInputError(f"triangles: triangle {k} {t[k].tolist()} is degenerate (a repeated vertex)")
        unused = np.bincount(t.ravel(), minlength=n) == 0
        if unused.any():
            i = int(np.argmax(unused))
            raise SolverInputError(f"vertices: vertex {i} belongs to no triangle; remove unused vertices")

        # -- geometry of the triangles --------------------------------------------------------
        p0, p1, p2 = x[t[:, 0]], x[t[:, 1]], x[t[:, 2]]
        cross = np.cross(p1 - p0, p2 - p0)
        twice_area = np.linalg.norm(cross, axis=1)
        side = np.stack(  # side opposite corner 0, 1, 2
            [np.linalg.norm(p2 - p1, axis=1), np.linalg.norm(p0 - p2, axis=1), np.linalg.norm(p1 - p0, axis=1)], axis=1
        )
        flat = 0.5 * twice_area <= DEGENERATE * side.max(axis=1) ** 2
        if flat.any():
            k = int(np.argmax(flat))
            raise SolverInputError(
                f"triangles: triangle {k} {t[k].tolist()} is degenerate (area {0.5 * twice_area[k]:.3g} for a longest "
                f"edge of {side[k].max():.3g}); its vertices are (nearly) collinear"
            )
        areas = 0.5 * twice_area
        normals = cross / twice_area[:, None]
        angles = np.empty((m, 3))
        for c in range(3):
            a = x[t[:, (c + 1) % 3]] - x[t[:, c]]
            b = x[t[:, (c + 2) % 3]] - x[t[:, c]]
            angles[:, c] = np.arctan2(np.linalg.norm(np.cross(a, b), axis=1), np.einsum("ij,ij->i", a, b))

        # -- edges: half-edge c of triangle k goes t[k, c+1] -> t[k, c+2] (opposite corner c) --
        tail = np.concatenate([t[:, 1], t[:, 2], t[:, 0]])
        head = np.concatenate([t[:, 2], t[:, 0], t[:, 1]])
        owner = np.tile(np.arange(m), 3)
        corner = np.repeat(np.arange(3), m)
        lo, hi = np.minimum(tail, head), np.maximum(tail, head)
        key = lo * n + hi
        unique, first, inverse, counts = np.unique(key, return_index=True, return_inverse=True, return_counts=True)
        if (counts > 2).any():
            e = int(np.argmax(counts > 2))
            tris = sorted(int(k) for k in owner[inverse == e])
            raise SolverInputError(
                f"triangles: edge ({lo[first[e]]}, {hi[first[e]]}) is non-manifold: it belongs to {counts[e]} "
                f"triangles {tris}, expected at most 2"
            )
        forward = (tail < head).astype(np.int64)
        nforward = np.bincount(inverse, weights=forward, minlength=unique.size)
        clash = (counts == 2) & (nforward != 1)
        if clash.any():
            e = int(np.argmax(clash))
            tris = sorted(int(k) for k in owner[inverse == e])
            raise SolverInputError(
                f"triangles: triangles {tris[0]} and {tris[1]} are inconsistently oriented: both traverse edge "
                f"({lo[first[e]]}, {hi[first[e]]}) in the same direction; reorder the vertices of one of them"
            )
        boundary = counts == 1
        if self.require_closed and boundary.any():
            e = int(np.argmax(boundary))
            raise SolverInputError(
                f"triangles: the surface is not closed: edge ({lo[first[e]]}, {hi[first[e]]}) belongs only to triangle "
                f"{int(owner[first[e]])} (an open boundary); a closed surface is required (or pass require_closed=False)"
            )
        E = unique.size
        edges = np.stack([unique // n, unique % n], axis=1)
        edge_triangles = np.full((E, 2), -1, dtype=np.int64)
        # the triangle traversing a -> b (a < b) goes first, the other second
        slot = np.where(forward == 1, 0, 1)
        edge_triangles[inverse, slot] = owner
        lonely = (edge_triangles[:, 0] < 0) & (edge_triangles[:, 1] >= 0)  # open boundary traversed b -> a
        edge_triangles[lonely] = edge_triangles[lonely][:, ::-1]
        triangle_edges = np.empty((m, 3), dtype=np.int64)
        triangle_edges[owner, corner] = inverse
        edge_lengths = np.linalg.norm(x[edges[:, 1]] - x[edges[:, 0]], axis=1)

        # -- stars ----------------------------------------------------------------------------
        star_ptr, star = _csr(t.ravel(), np.repeat(np.arange(m), 3), n)
        ends = np.concatenate([edges[:, 0], edges[:, 1]])
        others = np.concatenate([edges[:, 1], edges[:, 0]])
        neighbour_ptr, neighbours = _csr(ends, others, n)
        _check_vertex_fans(n, m, star_ptr, star, edges, edge_triangles)
        _, neighbour_edges = _csr(ends, np.tile(np.arange(E), 2), n)
        vn = np.zeros((n, 3))
        for c in range(3):
            np.add.at(vn, t[:, c], angles[:, c, None] * normals)
        vn /= np.linalg.norm(vn, axis=1)[:, None]
        triangle_size = twice_area / side.max(axis=1)  # the smallest altitude
        vertex_size = np.full(n, np.inf)
        for c in range(3):
            np.minimum.at(vertex_size, t[:, c], triangle_size)

        for name, value in (
            ("vertices", x),
            ("triangles", t),
            ("edges", edges),
            ("edge_triangles", edge_triangles),
            ("triangle_edges", triangle_edges),
            ("star_ptr", star_ptr),
            ("star", star),
            ("neighbour_ptr", neighbour_ptr),
            ("neighbours", neighbours),
            ("neighbour_edges", neighbour_edges),
            ("areas", areas),
            ("normals", normals),
            ("angles", angles),
            ("edge_lengths", edge_lengths),
            ("vertex_normals", vn),
            ("triangle_size", triangle_size),
            ("vertex_size", vertex_size),
        ):
            object.__setattr__(self, name, _frozen(value))
        object.__setattr__(self, "require_closed", bool(self.require_closed))

    # -- sizes ---------------------------------------------------------------------------------
    @property
    def n_vertices(self) -> int:
        return self.vertices.shape[0]

    @property
    def n_triangles(self) -> int:
        return self.triangles.shape[0]

    @property
    def n_edges(self) -> int:
        return self.edges.shape[0]

    @property
    def h(self) -> float:
        """The longest edge (the mesh size of a convergence study)."""
        return float(self.edge_lengths.max())

    @property
    def closed(self) -> bool:
        """True when every edge belongs to two triangles."""
        return bool((self.edge_triangles[:, 1] >= 0).all())

    @property
    def euler_characteristic(self) -> int:
        """``V - E + F`` (2 for a sphere, 0 for a torus)."""
        return self.n_vertices - self.n_edges + self.n_triangles

    @property
    def area(self) -> float:
        return float(self.areas.sum())

    def check_closed(self, who: str) -> None:
        """Raise, naming a boundary edge, unless the surface is closed (``who`` names the caller)."""
        open_edges = np.flatnonzero(self.edge_triangles[:, 1] < 0)
        if open_edges.size:
            e = int(open_edges[0])
            a, b = (int(v) for v in self.edges[e])
            raise SolverInputError(
                f"mesh: {who} needs a closed surface, but edge ({a}, {b}) belongs only to triangle "
                f"{int(self.edge_triangles[e, 0])} (an open boundary with {open_edges.size} edges)"
            )

    def star_of(self, vertex: int) -> np.ndarray:
        """The triangles around ``vertex``."""
        return self.star[self.star_ptr[vertex] : self.star_ptr[vertex + 1]]

    def neighbours_of(self, vertex: int) -> np.ndarray:
        """The vertices joined to ``vertex`` by an edge."""
        return self.neighbours[self.neighbour_ptr[vertex] : self.neighbour_ptr[vertex + 1]]

    def sample(self, func, *, name: str = "values") -> np.ndarray:
        """Values at the vertices: ``func(x, y, z)`` evaluated there, or an array of one value per vertex."""
        if callable(func):
            x, y, z = self.vertices.T
            v = np.asarray(func(x, y, z), dtype=np.float64)
            v = np.broadcast_to(v, (self.n_vertices,)).copy() if v.ndim == 0 else v
        else:
            v = np.asarray(func, dtype=np.float64)
        if v.shape != (self.n_vertices,):
            raise SolverInputError(f"{name}: expected one value per vertex, shape ({self.n_vertices},), found {v.shape}")
        bad = ~np.isfinite(v)
        if bad.any():
            i = int(np.argmax(bad))
            raise SolverInputError(f"{name}: expected finite values, found {float(v[i])!r} at vertex {i}")
        return v
