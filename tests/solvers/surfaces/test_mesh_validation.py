"""Triangle meshes: generated surfaces have the right topology and geometry; bad meshes are refused
with an error naming the offending triangle or edge."""

import numpy as np
import pytest

from solvers.errors import SolverInputError
from solvers.surfaces import TriangleMesh
from solvers.surfaces import icosphere, torus, user_mesh

TETRA_X = np.array([[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]], dtype=float)
TETRA_T = np.array([[0, 1, 2], [0, 2, 3], [0, 3, 1], [1, 3, 2]])  # consistently oriented


def test_icosphere_topology_and_geometry():
    for n in (1, 3, 5):
        m = icosphere(n, radius=2.0)
        assert m.n_vertices == 10 * n * n + 2 and m.n_triangles == 20 * n * n
        assert m.euler_characteristic == 2 and m.closed
        assert np.allclose(np.linalg.norm(m.vertices, axis=1), 2.0, atol=1e-14)
        centroids = m.vertices[m.triangles].mean(axis=1)
        assert (np.einsum("ij,ij->i", m.normals, centroids) > 0).all()  # outward
        assert m.angles.max() < np.pi / 2  # acute
    # the inscribed polyhedron's area approaches 4π r² from below, at second order in h
    errs = [4 * np.pi * 4 - icosphere(n, 2.0).area for n in (8, 16)]
    assert errs[0] > 0 and errs[1] > 0
    assert 3.6 < errs[0] / errs[1] < 4.4


def test_torus_topology_and_area():
    m = torus(2.0, 1.0, 96, 48)
    assert m.euler_characteristic == 0 and m.closed
    assert abs(m.area / (4 * np.pi**2 * 2.0) - 1) < 5e-3
    assert m.angles.max() < np.pi / 2
    with pytest.raises(SolverInputError, match="n_minor: expected an even"):
        torus(2.0, 1.0, 48, 23)
    with pytest.raises(SolverInputError, match="acute"):
        torus(2.0, 1.0, 12, 24)


def test_connectivity_is_consistent():
    m = torus(2.0, 1.0, 24, 12)
    for e, (a, b) in enumerate(m.edges):
        for k in m.edge_triangles[e]:
            assert a in m.triangles[k] and b in m.triangles[k]
        # the first triangle traverses a -> b
        t = list(m.triangles[m.edge_triangles[e, 0]])
        assert t[(t.index(a) + 1) % 3] == b
    for k, tri in enumerate(m.triangles):
        for c in range(3):
            assert set(m.edges[m.triangle_edges[k, c]]) == {tri[(c + 1) % 3], tri[(c + 2) % 3]}
    assert m.star_ptr[-1] == 3 * m.n_triangles
    for i in (0, 7, 100):
        assert all(i in m.triangles[k] for k in m.star_of(i))
        assert len(m.neighbours_of(i)) == len(m.star_of(i))  # closed manifold: the link is a cycle
        for j, e in zip(m.neighbours_of(i), m.neighbour_edges[m.neighbour_ptr[i]:m.neighbour_ptr[i + 1]]):
            assert set(m.edges[e]) == {i, j}
    assert np.all(m.vertex_size > 0) and np.all(m.vertex_size <= m.h)


def test_user_mesh_tetrahedron_and_open_mesh():
    m = user_mesh(TETRA_X, TETRA_T)
    assert m.euler_characteristic == 2
    opened = user_mesh(TETRA_X, TETRA_T[:3], require_closed=False)
    assert not opened.closed
    with pytest.raises(SolverInputError, match=r"needs a closed surface, but edge \(\d+, \d+\) belongs only to triangle"):
        opened.check_closed("the test")


def _raises(match, vertices, triangles, **kw):
    with pytest.raises(SolverInputError, match=match):
        TriangleMesh(vertices, triangles, **kw)


def test_open_boundary_names_the_edge_and_triangle():
    m = icosphere(2)
    tris = m.triangles[1:]
    a, b, c = m.triangles[0]
    with pytest.raises(SolverInputError) as info:
        TriangleMesh(m.vertices, tris)
    msg = str(info.value)
    assert "not closed" in msg and "open boundary" in msg
    edge = tuple(int(v) for v in msg.split("edge (")[1].split(")")[0].split(", "))
    assert set(edge) <= {a, b, c}


def test_inconsistent_orientation_names_both_triangles():
    m = icosphere(2)
    tris = m.triangles.copy()
    tris[5] = tris[5][[0, 2, 1]]
    with pytest.raises(SolverInputError, match=r"triangles (\d+ and 5|5 and \d+) are inconsistently oriented"):
        TriangleMesh(m.vertices, tris)


def test_non_manifold_edge():
    x = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1]], dtype=float)
    t = np.array([[0, 1, 2], [1, 0, 3], [0, 1, 4]])
    _raises(r"edge \(0, 1\) is non-manifold: it belongs to 3 triangles \[0, 1, 2\]", x, t, require_closed=False)


def test_non_manifold_vertex():
    """Two tetrahedra sharing one vertex (0): closed, every edge manifold, but vertex 0 has two fans."""
    x = np.vstack([TETRA_X, 2 * TETRA_X[0] - TETRA_X[1:]])  # the second is the point reflection through vertex 0
    t = np.vstack([TETRA_T, np.where(TETRA_T == 0, 0, TETRA_T + 3)])
    t[4:] = t[4:][:, [0, 2, 1]]  # the point reflection reverses orientation; keep it outward
    _raises(r"vertex 0 is non-manifold: its triangles form 2 separate fans \[\[0, 1, 2\], \[4, 5, 6\]\]", x, t)


def test_degenerate_triangles():
    x = np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0], [0, 1, 0]], dtype=float)
    _raises(r"triangle 1 \[0, 1, 2\] is degenerate \(area", x, np.array([[0, 1, 3], [0, 1, 2]]), require_closed=False)
    _raises(r"triangle 0 \[0, 0, 3\] is degenerate \(a repeated vertex\)", x, np.array([[0, 0, 3], [1, 2, 3]]),
            require_closed=False)


def test_bad_arrays():
    _raises(r"vertices: expected an array of shape \(n, 3\)", np.zeros((4, 2)), TETRA_T)
    bad = TETRA_X.copy()
    bad[2, 1] = np.nan
    _raises(r"vertices: expected finite coordinates, found .* at vertex 2", bad, TETRA_T)
    _raises(r"triangle 3 \[1, 3, 9\] refers to vertex 9, expected indices in \[0, 4\)", TETRA_X,
            np.array([[0, 1, 2], [0, 2, 3], [0, 3, 1], [1, 3, 9]]))
    _raises(r"triangles: expected whole-number vertex indices", TETRA_X, TETRA_T + 0.5)
    _raises(r"vertex 4 belongs to no triangle", np.vstack([TETRA_X, [[5, 5, 5]]]), TETRA_T)
