"""Values on a triangulated surface, drawn in 3-D (matplotlib's object API, no pyplot state)."""

from __future__ import annotations

import numpy as np

from shockflow.figures.canvas import field_colours, new_figure
from solvers.errors import SolverInputError
from solvers.surfaces import TriangleMesh

__all__ = ["plot_on_sphere"]


def plot_on_sphere(mesh: TriangleMesh, values, *, title: str | None = None, cmap: str | None = None,
                   elevation: float = 25.0, azimuth: float = -60.0, ax=None):
    """Draw ``values`` (one per vertex or one per triangle) on ``mesh`` and return the Figure.

    Vertex values are averaged over each triangle for its colour (a map centred on zero when they
    take both signs, sequential otherwise; ``cmap`` overrides).  Works for any surface; the axes are
    scaled equally so a sphere looks round.  ``ax``: a 3-D axes to draw into.
    """
    import matplotlib
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    v = np.asarray(values, dtype=np.float64)
    if v.shape == (mesh.n_vertices,):
        face = v[mesh.triangles].mean(axis=1)
    elif v.shape == (mesh.n_triangles,):
        face = v
    else:
        raise SolverInputError(
            f"values: expected one value per vertex ({mesh.n_vertices},) or per triangle ({mesh.n_triangles},), "
            f"found shape {v.shape}"
        )
    auto, norm = field_colours(face)
    colormap = matplotlib.colormaps[cmap or auto]
    if ax is None:
        fig = new_figure(6, 5)
        ax = fig.add_subplot(projection="3d")
    fig = ax.figure
    poly = Poly3DCollection(mesh.vertices[mesh.triangles], facecolors=colormap(norm(face)), edgecolor="none",
                           linewidth=0, antialiased=False)
    ax.add_collection3d(poly)
    lo_x, hi_x = mesh.vertices.min(axis=0), mesh.vertices.max(axis=0)
    centre, half = (lo_x + hi_x) / 2, (hi_x - lo_x).max() / 2
    for setter, c in zip((ax.set_xlim, ax.set_ylim, ax.set_zlim), centre):
        setter(c - half, c + half)
    ax.set_box_aspect((1, 1, 1))
    ax.view_init(elevation, azimuth)
    ax.set_axis_off()
    fig.colorbar(matplotlib.cm.ScalarMappable(norm=norm, cmap=colormap), ax=ax, shrink=0.7)
    if title:
        ax.set_title(title)
    return fig
